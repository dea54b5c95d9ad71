"""Most repeated exact n-grams and POS patterns of every source of one dataset (Shaib et al.
(2024), Tables 1 and 10): a CSV and its Markdown layout."""

from genmetrics.analysis.patterns import patterns_files
from genmetrics.io import write_csv, write_text
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    settings = sm.params.settings
    table, markdown = patterns_files(
        sm.wildcards.dataset,
        settings["sources"],
        list(sm.input.texts),
        list(sm.input.pos) if "pos" in sm.input.keys() else None,
        settings["options"],
    )
    write_csv(sm.output.table, table)
    write_text(sm.output.markdown, markdown)
    log.info("%d rows for %d sources", len(table), len(settings["sources"]))
