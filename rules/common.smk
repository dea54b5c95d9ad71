# Wiring: the run plan (genmetrics.plan) built once from the config; result paths from the one
# table genmetrics.paths.ResultPaths, under the config's results_dir (RESULTS = PLAN.results).
# Rules name their output patterns (RESULTS.<name>) and fixed inputs directly; inputs that
# depend on the config, and params, are the plan's queries taken per job: per_job(PLAN.<query>). Nothing here runs a job or resolves a default.
import os
import time
from pathlib import Path

# GENMETRICS_TIMING=1: the time of this file and of the per-job functions (plan/timing.py)
_start = time.perf_counter()

from snakemake.logging import logger

from genmetrics import GenmetricsError
from genmetrics.config import check_config_file
from genmetrics.plan import load_plan, names_pattern
from genmetrics.plan import timing
from genmetrics.plan.rerun_reasons import install as name_changed_params
from genmetrics.provenance import script_digest

if timing.ENABLED:
    timing.add("import", time.perf_counter() - _start)
    _start = time.perf_counter()

# "Params have changed": only the changed keys, old → new (the text only; what reruns is Snakemake's)
name_changed_params()
# $GENMETRICS_REPO in config paths: the checkout, also when run with --directory elsewhere
os.environ.setdefault("GENMETRICS_REPO", str(Path(workflow.basedir).resolve()))
try:
    # duplicate keys, 010 read as 8: each config file read strictly before Snakemake's merge
    for path in workflow.configfiles:
        check_config_file(path)
    PLAN = load_plan(
        config,
        workflow.source_path("../workflow/schemas/config.schema.yaml"),
        tokens_per_word_table=Path(
            workflow.basedir, "resources", "tokens_per_word.tsv"
        ),
    )
    PLAN.check_cleaned_sizes()  # a k too large for data cleaned by an earlier run
except GenmetricsError as e:
    raise WorkflowError(f"invalid config: {e}") from None
for note in PLAN.notes:  # what the environment changed in the config, said once per run
    logger.info(f"genmetrics: {note}")
# Every job (and fetch_asset) downloads into the config's cache: jobs inherit this variable.
os.environ.update(GENMETRICS_CACHE=str(Path(PLAN.cache).resolve()))
TARGETS = PLAN.targets
# every output pattern, under the config's results_dir
RESULTS = PLAN.results
if timing.ENABLED:
    timing.add("load_plan", time.perf_counter() - _start)


onstart:
    # temporary files of writes killed earlier (a job, a pre-empted node)
    logger.info(
        f"genmetrics: removed {PLAN.sweep_temp_files()} stale temporary file(s)"
    )


def script_code(name):
    """Params value: the code digest of workflow/scripts/<name> and the genmetrics modules it
    imports (genmetrics.provenance.script_digest): a code change reruns the rule's jobs.
    """
    return script_digest(Path(workflow.basedir, "workflow", "scripts", name))


def per_job(query):
    """Input/params function: the plan's ``query`` called with the job's wildcards it names."""
    return timing.timed("per_job", PLAN.per_job(query))


wildcard_constraints:
    **PLAN.wildcard_constraints(),
