"""The rank agreement of models across featurizers: table, Markdown and slope chart."""

from genmetrics.analysis.featurizer_robustness import robustness_markdown, robustness_table
from genmetrics.figures.featurizer_robustness import robustness_figure
from genmetrics.io import read_json, write_csv, write_text
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    records = [read_json(p) for p in sm.input]
    table, ranks = robustness_table(records, sm.params.settings["groups"])
    write_csv(sm.output.table, table)
    write_text(sm.output.markdown, robustness_markdown(table, ranks))
    robustness_figure(table, ranks, sm.output.figure)
