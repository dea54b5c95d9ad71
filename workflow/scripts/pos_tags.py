"""PTB part-of-speech tags of one source's texts (NLTK averaged perceptron, offline data)."""

from genmetrics.features.pos import tag_texts
from genmetrics.io import read_texts, write_jsonl
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    rows = read_texts(sm.input.texts)
    tags = tag_texts([r["text"] for r in rows])
    write_jsonl(sm.output[0], ({"id": r["id"], "tags": t} for r, t in zip(rows, tags, strict=True)))
    log.info("tagged %d texts", len(rows))
