"""Scaling analysis (FACE-2 valid-cell ratio): the table (CSV), its markdown summary, every
judged cell, FACE-2's Table 1 layout (CSV and markdown), its Table 2 (markdown) and the
paper's numbers beside ours (CSV)."""

from genmetrics.io import write_csv, write_text
from genmetrics.runlog import log_to
from genmetrics.studies.face2_scaling.job import run_scaling

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    out = run_scaling(sm.params.settings, progress=True)
    write_csv(sm.output.table, out["table"])
    write_text(sm.output.markdown, out["markdown"] + "\n")
    write_csv(sm.output.cells, out["cells"])
    write_csv(sm.output.table1, out["table1"])
    write_text(sm.output.table1_markdown, out["table1_markdown"] + "\n")
    write_text(sm.output.table2_markdown, out["table2_markdown"] + "\n")
    write_csv(sm.output.paper, out["paper"])
    log.info("valid-cell ratios:\n%s", out["markdown"])
    log.info("FACE-2 Table 1 layout:\n%s", out["table1_markdown"])
    log.info("FACE-2 Table 2 layout:\n%s", out["table2_markdown"])
