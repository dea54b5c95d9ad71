"""The diversity study's tables from the tidy scores (Shaib et al. (2024), Tables 2-7)."""

import pandas as pd

from genmetrics.analysis.aggregate import read_scores
from genmetrics.io import write_csv, write_text
from genmetrics.runlog import log_to
from genmetrics.studies.shaib_diversity.tables import (
    STABILITY_COLUMNS,
    diversity_markdown,
    diversity_table,
    length_correlations,
    stability,
)

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    columns = sm.params.settings["columns"]
    stab = sm.params.settings["stability"]
    table = diversity_table(read_scores(sm.input[0]), columns)
    length = length_correlations(table, columns)
    stable, pairs = pd.DataFrame(columns=STABILITY_COLUMNS), []
    if stab:
        stable, pairs = stability(table, columns, stab["datasets"], stab["match"])
    for path, df, index in (
        (sm.output.table, table, True),
        (sm.output.length, length, False),
        (sm.output.stability, stable, False),
    ):
        write_csv(path, df, index=index)
    markdown = diversity_markdown(
        table,
        columns,
        length,
        stable if stab else None,
        pairs,
        stab["datasets"] if stab else (),
    )
    write_text(sm.output.markdown, markdown)
