"""Fail right after cleaning if a metric entry needs more texts than the dataset kept. The
requirements come from the config (not params: a new k must not rerun generation, which
depends on this file); later runs check them before the DAG (Plan.check_cleaned_sizes)."""

from pathlib import Path

from genmetrics.data.clean import check_sizes
from genmetrics.io import read_json, write_json
from genmetrics.plan import load_plan
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
repo = Path(sm.scriptdir).parents[1]
with log_to(sm.log[0]) as log:
    plan = load_plan(
        sm.config,
        repo / "workflow" / "schemas" / "config.schema.yaml",
        tokens_per_word_table=repo / "resources" / "tokens_per_word.tsv",
    )
    requirements = plan.size_requirements(sm.wildcards.dataset)
    n = read_json(sm.input[0])["output"]
    check_sizes(n, requirements, sm.wildcards.dataset)
    write_json(sm.output[0], {"texts": n, "requirements": requirements})
    log.info("%d texts: enough for every entry", n)
