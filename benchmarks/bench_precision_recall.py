"""Exact k-NN precision/recall/density/coverage: genmetrics against ``prdc.compute_prdc``.

    .venv/bin/python benchmarks/bench_precision_recall.py [--n 8000] [--k 4] [--repeat 3]
        [--processes 2] [--threads N] [--skip-inprocess] [--skip-processes]

Inputs: the 768-d Gaussian mixture of benchmarks/bench_distribution.py (``mixture``), P with
seed 1, Q with seed 2 (shift 0.1, other weights), then pr-4-llm's L2 + PCA 0.9 (about 300-360
dimensions, float32) — the same PCA-reduced matrices for both packages. Sizes: ``--n`` points
per side (default 8,000, the row of issue 28), ``--k`` neighbours (default 4).

Two measurements, ours and prdc interleaved, best of the repeats:

1. in-process: ``prdc_exact(p, q, [k])`` against ``prdc.compute_prdc(p, q, k)`` on arrays in
   memory (``--repeat`` rounds);
2. whole processes (``--processes`` rounds): ``python -c`` that imports the package, loads the
   two .npy files and computes — what a user's job pays, imports included (both packages
   with their bytecode written: ``bench_distribution.compile_genmetrics``). Ours runs the public
   ``compute("precision_recall", q, p, {"pca": False, "k": k})`` (its engine choice, its
   device: ``GENMETRICS_ARRAY_DEVICE``).

Prints both times, the ratio prdc / ours (> 1: we are faster), the largest |difference| of the
four values, the load average (``os.getloadavg``) next to each round, and one float32 N×N GEMM
of the inputs (timed in every in-process round) for scale: the floor of an exact evaluation is 2
GEMMs (half of P×P, half of Q×Q, all of P×Q), and ``ours = x GEMM-equivalents`` says how close
the engine is to it.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_distribution import (  # noqa: E402  (the same inputs as that benchmark)
    compile_genmetrics,
    mixture,
)

KEYS = ("precision", "recall", "density", "coverage")

OURS = """
import json, sys, time
t0 = time.perf_counter()
import numpy as np
from genmetrics.metrics import compute
p, q = np.load(sys.argv[1]), np.load(sys.argv[2])
res = compute("precision_recall", q, p, {{"pca": False, "k": {k}}})
print(json.dumps({{"values": res.values, "knn": res.extras["knn"]}}))
"""

REF = """
import contextlib, io, json, sys
import numpy as np
import prdc
p, q = np.load(sys.argv[1]), np.load(sys.argv[2])
with contextlib.redirect_stdout(io.StringIO()):
    out = prdc.compute_prdc(real_features=p, fake_features=q, nearest_k={k})
print(json.dumps({{"values": {{k: float(v) for k, v in out.items()}}}}))
"""


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def inputs(n: int) -> tuple[np.ndarray, np.ndarray]:
    from genmetrics.metrics.precision_recall import prepare_features

    p_raw = mixture(n, seed=1)
    q_raw = mixture(n, seed=2, shift=0.1, weights_seed=1)
    return prepare_features(p_raw, q_raw, pca=0.9, seed=0)


def gemm(p: np.ndarray, q: np.ndarray) -> float:
    """Seconds of one float32 P·Qᵀ GEMM (N × N, the BLAS's own threads), best of 2."""
    out = np.empty((len(p), len(q)), np.float32)
    best = float("inf")
    for _ in range(2):
        t = time.perf_counter()
        np.matmul(p, q.T, out=out)
        best = min(best, time.perf_counter() - t)
    return best


def in_process(p, q, k: int, repeat: int, threads: int | None) -> None:
    import prdc

    from genmetrics.metrics.precision_recall import prdc_exact

    def ref():
        with contextlib.redirect_stdout(io.StringIO()):
            out = prdc.compute_prdc(real_features=p, fake_features=q, nearest_k=k)
        return {key: float(out[key]) for key in KEYS}

    t_ref, t_ours, t_gemm = [], [], []
    for i in range(repeat):
        t = time.perf_counter()
        r = ref()
        t_ref.append(time.perf_counter() - t)
        t = time.perf_counter()
        o = prdc_exact(p, q, [k], n_threads=threads)[k]
        t_ours.append(time.perf_counter() - t)
        t_gemm.append(gemm(p, q))
        print(
            f"  round {i + 1}: prdc {t_ref[-1]:.3f}s  ours {t_ours[-1]:.3f}s  "
            f"GEMM {t_gemm[-1]:.3f}s  ({load()})"
        )
    diff = max(abs(r[key] - o[key]) for key in KEYS)
    print(f"  in-process  prdc {min(t_ref):.3f}s  genmetrics {min(t_ours):.3f}s  ", end="")
    print(f"ratio x{min(t_ref) / min(t_ours):.1f}  max |diff| {diff:.1e}")
    # the floor: half of P×P, half of Q×Q and all of P×Q = 2 N×N GEMMs at the BLAS's speed
    print(
        f"  ours = {min(t_ours) / min(t_gemm):.2f} GEMM-equivalents (floor 2: "
        f"{2 * min(t_gemm):.3f}s, prdc/floor x{min(t_ref) / (2 * min(t_gemm)):.1f})"
    )
    print(f"  values: {o}")


def processes(p, q, k: int, rounds: int) -> None:
    compile_genmetrics()
    with tempfile.TemporaryDirectory() as tmp:
        fp, fq = os.path.join(tmp, "p.npy"), os.path.join(tmp, "q.npy")
        np.save(fp, p)
        np.save(fq, q)
        t_ref, t_ours, vals = [], [], {}
        for i in range(rounds):
            for name, code, times in (("prdc", REF, t_ref), ("ours", OURS, t_ours)):
                t = time.perf_counter()
                out = subprocess.run(
                    [sys.executable, "-c", code.format(k=k), fp, fq],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                times.append(time.perf_counter() - t)
                vals[name] = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"  round {i + 1}: prdc {t_ref[-1]:.2f}s  ours {t_ours[-1]:.2f}s  ({load()})")
    diff = max(abs(vals["prdc"]["values"][key] - vals["ours"]["values"][key]) for key in KEYS)
    print(f"  processes   prdc {min(t_ref):.2f}s  genmetrics {min(t_ours):.2f}s  ", end="")
    print(f"ratio x{min(t_ref) / min(t_ours):.1f}  max |diff| {diff:.1e}")
    print(f"  our record: {vals['ours']['knn']}")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--n", type=int, default=8000, help="points per side (default 8000)")
    ap.add_argument("--k", type=int, default=4, help="neighbours (default 4)")
    ap.add_argument("--repeat", type=int, default=3, help="in-process rounds (default 3)")
    ap.add_argument("--processes", type=int, default=2, help="whole-process rounds (default 2)")
    ap.add_argument("--threads", type=int, default=None, help="our worker threads (default: cores)")
    ap.add_argument("--skip-inprocess", action="store_true")
    ap.add_argument("--skip-processes", action="store_true")
    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # progress when redirected
    t = time.perf_counter()
    p, q = inputs(args.n)
    print(
        f"N={args.n} per side, d={p.shape[1]} after L2 + PCA 0.9 ({time.perf_counter() - t:.1f}s),"
    )
    print(f"  {len(os.sched_getaffinity(0))} CPUs, {load()}")
    print(f"  one float32 N x N GEMM: {gemm(p, q):.3f}s")
    if not args.skip_inprocess:
        in_process(p, q, args.k, args.repeat, args.threads)
    if not args.skip_processes:
        processes(p, q, args.k, args.processes)


if __name__ == "__main__":
    main()
