"""PR-curve figure from every prd score."""

from genmetrics.figures.precision_recall import pr_curves
from genmetrics.io import read_json
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    pr_curves([read_json(p) for p in sm.input], sm.output[0])
