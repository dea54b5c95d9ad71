"""MAUVE's faiss k-means on many cores: restarts side by side (one thread each, ours) against
faiss' own threads (``faiss.Kmeans(...).train``, as mauve-text calls it), by CPU count.

    python benchmarks/bench_kmeans_threads.py [--cpus 2 4 8 16] [--n 2000 5000 10000]

Each (CPUs, n) runs in a child pinned to the first CPUs (``taskset``); inputs: bench_mauve's
mixtures (n per side), L2 + PCA 0.9, k = 2n / 20 (MAUVE's auto buckets), niter 500, nredo 5,
seed 27. Prints both times, the ratio (faiss threads / side by side: > 1 means side by side
is faster) and whether the labels are equal.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def child(n: int) -> dict:
    if os.environ.get("WITH_TORCH"):
        import torch  # noqa: F401  (as in a MAUVE job that also imports torch)
    import faiss
    from bench_distribution import mixture

    from genmetrics.metrics._quantize import faiss_kmeans_labels, l2_pca

    p, q = l2_pca(mixture(n, seed=1), mixture(n, seed=2, shift=0.1, weights_seed=1), 0.9)
    x = np.ascontiguousarray(np.vstack([q, p]), dtype=np.float32)
    k = len(x) // 20
    t0 = time.perf_counter()
    ours = faiss_kmeans_labels(x, k, 27, 5, 500)
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    km = faiss.Kmeans(x.shape[1], k, niter=500, nredo=5, seed=27, verbose=False)
    km.train(x)
    ref = km.index.search(x, 1)[1].reshape(-1)
    t_ref = time.perf_counter() - t0
    return {
        "n": n,
        "k": k,
        "cpus": len(os.sched_getaffinity(0)),
        "side_by_side_s": round(t_ours, 2),
        "faiss_threads_s": round(t_ref, 2),
        "ratio": round(t_ref / t_ours, 2),
        "labels_equal": bool(np.array_equal(ours, ref)),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cpus", type=int, nargs="+", default=[2, 4, 8, 16])
    ap.add_argument("--n", type=int, nargs="+", default=[2000, 5000, 10000])
    ap.add_argument("--child", type=int, default=None)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.child)), flush=True)
        return 0
    for cpus in args.cpus:
        if cpus > (os.cpu_count() or 1):
            continue
        for n in args.n:
            cmd = ["taskset", "-c", f"0-{cpus - 1}", sys.executable, __file__, "--child", str(n)]
            out = subprocess.run(cmd, capture_output=True, text=True, check=False)
            line = [s for s in out.stdout.splitlines() if s.startswith("{")]
            print(line[-1] if line else out.stderr[-800:], flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
