"""PTB part-of-speech tags of one source's texts (NLTK averaged perceptron, offline data)."""

from genmetrics.features.pos import tag_texts
from genmetrics.io import read_texts, write_jsonl
from genmetrics.metrics.kinds import LINK_FIELDS
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    rows = read_texts(sm.input.texts)
    tags = tag_texts([r["text"] for r in rows])
    # the rows' prompt links (generations) go with their tags: a POS score's interval
    # resamples prompts, as a text score's does
    links = [{k: r[k] for k in LINK_FIELDS if k in r} for r in rows]
    out = ({"id": r["id"], **ln, "tags": t} for r, ln, t in zip(rows, links, tags, strict=True))
    write_jsonl(sm.output[0], out)
    log.info("tagged %d texts", len(rows))
