"""Scaling figure (FACE-2 valid-cell ratio) from the scaling table."""

import pandas as pd

from genmetrics.figures.scaling import valid_cell_figure
from genmetrics.runlog import log_to
from genmetrics.studies.face2_scaling.valid_cells import valid_cells

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    valid_cell_figure(valid_cells(pd.read_csv(sm.input[0])), sm.output[0])
