"""Scaling analysis (FACE-2 valid-cell ratio): the table (CSV) and its markdown summary."""

from genmetrics.analysis.scaling_job import run_scaling
from genmetrics.io import write_text
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    out = run_scaling(sm.params.settings, progress=True)
    write_text(sm.output.table, out["table"].to_csv(index=False))
    write_text(sm.output.markdown, out["markdown"] + "\n")
    log.info("valid-cell ratios:\n%s", out["markdown"])
