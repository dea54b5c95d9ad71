"""Prompts: the first k words of each reference, or rows of a prompt file."""

from genmetrics import GenmetricsError
from genmetrics.io import read_jsonl, write_jsonl
from genmetrics.prompts import make_prompts, prompts_from_file
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    opts = sm.params.options
    if opts.get("file"):
        rows = prompts_from_file(read_jsonl(sm.input.file[0]), sm.input.file[0])
    elif opts.get("mode") == "instruction":  # each text is an instruction (creative writing)
        refs = read_jsonl(sm.input.references, required=("id", "text"))
        rows = [{"id": r["id"], "prompt": r["text"]} for r in refs]
    else:
        refs = read_jsonl(sm.input.references, required=("id", "text"))
        rows = make_prompts(refs, opts.get("words", 10))
    if not rows:
        raise GenmetricsError(f"datasets.{sm.wildcards.dataset}.prompts: no prompts")
    log.info("wrote %d prompts", write_jsonl(sm.output[0], rows))
