"""Compute one metric entry for one (dataset, source) and write the score JSON."""

import os

# one BLAS/OpenMP thread pool of the size Snakemake gave this job, set before numpy/torch load
os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = str(snakemake.threads)  # noqa: F821

import tempfile
from pathlib import Path

from threadpoolctl import threadpool_limits

from genmetrics.analysis.length import truncate_to_shortest
from genmetrics.io import read_jsonl, write_json, write_jsonl
from genmetrics.runlog import log_to
from genmetrics.scoring import score_files


def shortest_texts(group, candidate, reference, tmp):
    """Cut every text to the shortest text for the same prompt among all sources (the human
    reference counts as a source; its prompt id is its own id)."""
    sources = {}
    for path in group:
        rows = read_jsonl(path, required=("id", "text"))
        sources[path] = [{**r, "prompt_id": str(r.get("prompt_id", r["id"]))} for r in rows]
    cut = truncate_to_shortest(sources)
    out = []
    for i, path in enumerate((candidate, reference)):
        if path is None:
            out.append(None)
            continue
        target = Path(tmp) / f"{i}.jsonl"
        write_jsonl(target, cut[path])
        out.append(str(target))
    return out


sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log, threadpool_limits(sm.threads), tempfile.TemporaryDirectory() as tmp:
    cand, ref = sm.input.candidate, sm.input.get("reference")
    if sm.params.length_control == "shortest":
        cand, ref = shortest_texts(sm.input.group, cand, ref, tmp)
    rec = score_files(sm.params.metric, cand, ref, sm.params.params)
    rec = {
        "metric": rec["metric"],
        "variant": sm.wildcards.metric,
        "dataset": sm.wildcards.dataset,
        "source": sm.wildcards.source,
        "reference": sm.params.reference,
        "length_control": sm.params.length_control,
        **rec,
    }
    write_json(sm.output[0], rec)
    log.info("%s", rec["values"])
