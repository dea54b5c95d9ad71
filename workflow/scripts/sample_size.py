"""Texts per side each headline value needs for a target width (genmetrics.analysis.sample_size)."""

from genmetrics.analysis.aggregate import read_scores
from genmetrics.analysis.sample_size import sample_sizes
from genmetrics.io import write_csv
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    write_csv(sm.output[0], sample_sizes(read_scores(sm.input[0])))
