"""The diversity study beside its paper (Shaib et al. (2024), Tables 2-7): the side-by-side
table and its Markdown."""

import pandas as pd

from genmetrics.analysis.aggregate import read_scores
from genmetrics.io import write_csv, write_text
from genmetrics.runlog import log_to
from genmetrics.studies.shaib_diversity.side_by_side import (
    reference_ranks,
    side_by_side_markdown,
    summary_side_by_side,
)

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    s = sm.params.settings
    paper = {**s["paper"], "table": sm.input.paper[0]}  # the checkout's paper table
    table = pd.read_csv(sm.input.table, index_col=["dataset", "model"])
    out = summary_side_by_side(
        read_scores(sm.input.scores),
        pd.read_csv(sm.input.stability),
        pd.read_csv(sm.input.length),
        paper,
        s["columns"],
    )
    ranks = reference_ranks(table, paper, s["columns"])
    write_csv(sm.output.table, out)
    write_text(sm.output.markdown, side_by_side_markdown(out, ranks))
    log.info("%d paper cells beside ours", len(out))
