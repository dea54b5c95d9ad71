"""Instruction sets compared with each other (Shaib et al. (2024), Tables 9, 12, 13): the
table whole and downsampled-then-cut, its Markdown, and the side-by-side table."""

from genmetrics.io import read_jsonl, write_csv, write_text
from genmetrics.runlog import log_to
from genmetrics.studies.shaib_diversity.instruction_sets import (
    instruction_markdown,
    instruction_table,
    paper_table,
)

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    s = sm.params.settings
    sets = {
        name: read_jsonl(path, required=("id", "text"))
        for name, path in zip(s["sets"], sm.input.texts, strict=True)
    }
    table = instruction_table(
        sets,
        s["columns"],
        seed=s["seed"],
        cuts=s["cuts"],
        size=s["size"],
        language=s["language"],
    )
    # the paper's cells of the sets named in paper_rows (none: an empty table)
    paper = paper_table(table, s["paper_rows"], s["columns"], s["cuts"])
    write_csv(sm.output.table, table)
    write_csv(sm.output.paper, paper)
    write_text(sm.output.markdown, instruction_markdown(table, s["columns"], paper))
    log.info("%d sets, %d rows, %d paper cells", len(sets), len(table), len(paper))
