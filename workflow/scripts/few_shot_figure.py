"""Precision and recall against the number of in-context examples (Le Bronnec et al. (2024),
Fig. 8), from the scores of a few-shot dataset's variants, and the share of outputs the
biography parser read, from their generation statistics."""

from pathlib import Path

import pandas as pd

from genmetrics.analysis.aggregate import read_scores
from genmetrics.analysis.seed_means import few_shot_table, parsed_table
from genmetrics.figures.bars import few_shot_lines
from genmetrics.io import read_json, write_csv
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    variants = dict(sm.params.variants)
    summary = pd.read_csv(sm.input.summary)  # intervals over prompts and seeds
    table = few_shot_table(read_scores(sm.input.scores), variants, summary=summary)
    stats = {}
    for p in sm.input.stats:  # results/generations/{dataset}/{model}/seed{seed}.stats.json
        path = Path(p)
        seed = int(path.name.removeprefix("seed").removesuffix(".stats.json"))
        stats[path.parts[-3], path.parts[-2], seed] = read_json(p)
    parsed = parsed_table(stats, variants)
    write_csv(sm.output.table, table)
    write_csv(sm.output.parsed, parsed)
    few_shot_lines(table, sm.output.figure, parsed)
    log.info("few-shot P/R: %d means; parsed shares of %d generations", len(table), len(parsed))
