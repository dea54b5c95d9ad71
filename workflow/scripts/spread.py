"""Spread of a distribution metric over generation seeds and reference resamples (Table B.4)."""

import os

# one BLAS/OpenMP thread pool of the size Snakemake gave this job, set before numpy/torch load
os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = str(snakemake.threads)  # noqa: F821

import numpy as np
from threadpoolctl import threadpool_limits

from genmetrics.analysis.distribution import resample, spread
from genmetrics.io import load_embeddings, write_json
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log, threadpool_limits(sm.threads):
    s = sm.params.spread
    _, ref = load_embeddings(sm.input.reference)
    cands = [load_embeddings(p)[1] for p in sm.input.candidates]
    n = int(round(s.get("fraction", 0.8) * len(ref)))
    refs = resample(ref, n, int(s.get("reference_resamples", 5)), seed=int(s.get("seed", 0)))
    rows = spread(sm.params.metric, refs, cands, sm.params.params)
    write_json(
        sm.output[0],
        {
            "metric": sm.params.metric,
            "variant": sm.wildcards.metric,
            "dataset": sm.wildcards.dataset,
            "model": sm.wildcards.model,
            "reference_size": n,
            "reference_pool": len(ref),
            "seeds": len(cands),
            "settings": s,
            "rows": rows,
        },
    )
    log.info(
        "spread: %s",
        [(r["vary"], r["value"], round(r["std"], 4)) for r in rows if np.isfinite(r["std"])],
    )
