"""kNN precision/recall as functions of N and of k for one source (seed 000 Fig. 6/B.1)."""

import os

# one BLAS/OpenMP thread pool of the size Snakemake gave this job, set before numpy/torch load
os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = str(snakemake.threads)  # noqa: F821

import pandas as pd
from threadpoolctl import threadpool_limits

from genmetrics.analysis.distribution import sweep_k, sweep_n
from genmetrics.io import atomic_path, load_embeddings
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log, threadpool_limits(sm.threads):
    s = sm.params.settings
    p = {k: v for k, v in s["params"].items() if k in ("pca", "strict", "seed")}
    _, ref = load_embeddings(sm.input.reference)
    _, cand = load_embeddings(sm.input.candidate)
    rows_n = sweep_n(
        ref, cand, s.get("ns"), k=s["params"].get("k", 4), repeats=s.get("repeats", 1), **p
    )
    rows_k = sweep_k(ref, cand, s.get("ks", list(range(1, 31))), **p)
    df = pd.concat([pd.DataFrame(rows_n).assign(sweep="n"), pd.DataFrame(rows_k).assign(sweep="k")])
    df.insert(0, "source", sm.wildcards.source)
    with atomic_path(sm.output[0]) as tmp:
        df.to_csv(tmp, index=False)
    log.info("%d sweep rows", len(df))
