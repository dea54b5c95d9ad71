"""One dataset's model × model matrix of significant paired differences (figures.paired)."""

from genmetrics.figures.paired import paired_matrix_figure
from genmetrics.io import read_csv
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    paired_matrix_figure(read_csv(sm.input[0]), sm.wildcards.dataset, sm.output[0])
