"""Collect spread analyses into results/spread.csv: mean and std per vary mode and value, on the
headline table's terms (value names, scale, text sizes): analysis.distribution.spread_table."""

from genmetrics.analysis.distribution import spread_table
from genmetrics.io import read_json, write_csv
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    table = spread_table(read_json(p) for p in sm.input)
    write_csv(sm.output[0], table)
