"""Benchmark the distribution metrics against their reference packages on identical features.

    .venv/bin/python benchmarks/bench_distribution.py [--n 4000] [--n-approx 50000] [--skip-approx]

1. precision_recall (exact) vs ``prdc.compute_prdc`` on the same PCA-reduced matrices
   (768-d Gaussian mixture → L2 + PCA 0.9 ≈ 300 dims), N per side = --n;
2. mauve vs ``mauve.compute_mauve(p_features=..., q_features=...)`` (both faiss) on the raw
   768-d features (both include L2 + PCA + k-means);
3. approximate precision_recall (faiss IVF and pynndescent backends) at N = --n-approx per
   side, 300-d, first call (pynndescent: numba JIT included) and second call, plus the exact
   path on the same data when --check-approx is given.

Timings are the best of --repeat runs, reference and ours interleaved. Prints ratios
(reference time / our time; > 1 means we are faster) and the largest value difference.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import time

import numpy as np


def compile_genmetrics() -> None:
    """Write genmetrics' bytecode (``__pycache__``) before whole processes are timed, as
    ``pip install`` did for the reference packages: the runs then time importing our code,
    not compiling it. Where ``PYTHONDONTWRITEBYTECODE`` is set (this project's VMs set it) an
    editable checkout has no bytecode and would compile its modules in every process
    (0.05 s of a P/R run's 0.7 s); a user's installed or once-imported package has it."""
    import compileall

    import genmetrics

    compileall.compile_dir(os.path.dirname(genmetrics.__file__), quiet=1)


def mixture(n: int, *, d: int = 768, shift: float = 0.0, seed: int = 0, weights_seed: int = 0):
    """Gaussian mixture with a power-law spectrum (L2 + PCA 0.9 keeps ≈ 300 of 768 dims)."""
    rng = np.random.default_rng(1234)
    spec = np.arange(1, d + 1) ** -0.4
    centers = rng.normal(size=(40, d)) * spec
    w = np.random.default_rng(weights_seed).dirichlet(np.ones(40) * 2)
    r = np.random.default_rng(seed)
    lab = r.choice(40, size=n, p=w)
    return centers[lab] + r.normal(size=(n, d)) * spec * (1.0 + shift)


def best_of(fn, repeat: int):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def bench_pr(n: int, repeat: int) -> None:
    import prdc

    from genmetrics.metrics.precision_recall import prdc_exact, prepare_features

    p_raw = mixture(n, seed=1)
    q_raw = mixture(n, seed=2, shift=0.1, weights_seed=1)
    t = time.perf_counter()
    p, q = prepare_features(p_raw, q_raw, pca=0.9, seed=0)
    t_pca = time.perf_counter() - t
    print(f"[P/R] N={n} per side, PCA dims={p.shape[1]} (L2+PCA took {t_pca:.2f}s, shared)")

    def ref():
        with contextlib.redirect_stdout(io.StringIO()):
            return prdc.compute_prdc(real_features=p, fake_features=q, nearest_k=4)

    def ours():
        return prdc_exact(p, q, [4])[4]

    t_ref, t_ours = [], []
    for _ in range(repeat):
        a, r = best_of(ref, 1)
        b, o = best_of(ours, 1)
        t_ref.append(a)
        t_ours.append(b)
    diff = max(abs(float(r[k]) - o[k]) for k in o)
    print(
        f"  prdc.compute_prdc : {min(t_ref):.3f}s   values {dict((k, round(float(v), 5)) for k, v in r.items())}"
    )
    print(
        f"  genmetrics exact  : {min(t_ours):.3f}s   values {dict((k, round(v, 5)) for k, v in o.items())}"
    )
    print(f"  speed-up x{min(t_ref) / min(t_ours):.1f}   max |diff| = {diff:.2e}")
    a = p @ p.T  # floor: one float32 distance product
    t_floor, _ = best_of(lambda: p @ p.T, repeat)
    del a
    print(f"  (one float32 N x N GEMM: {t_floor:.3f}s)")


def bench_mauve(n: int, repeat: int) -> None:
    import mauve as mauve_text

    from genmetrics.metrics import compute

    p_raw = mixture(n, seed=1)
    q_raw = mixture(n, seed=2, shift=0.1, weights_seed=1)
    print(f"[MAUVE] N={n} per side, 768-d raw features, faiss k-means, {round(n / 10)} buckets")

    def ref():
        return mauve_text.compute_mauve(p_features=p_raw, q_features=q_raw)

    def ours():
        return compute("mauve", q_raw, p_raw)

    t_ref, t_ours = [], []
    for _ in range(repeat):
        a, r = best_of(ref, 1)
        b, o = best_of(ours, 1)
        t_ref.append(a)
        t_ours.append(b)
    diffs = {k: abs(getattr(r, k) - o.values[k]) for k in o.values}
    print(
        f"  mauve-text : {min(t_ref):.2f}s   mauve={r.mauve:.6f} FI={r.frontier_integral:.6f} "
        f"mauve*={r.mauve_star:.6f} FI*={r.frontier_integral_star:.6f}"
    )
    print(
        f"  genmetrics : {min(t_ours):.2f}s   "
        + " ".join(f"{k}={v:.6f}" for k, v in o.values.items())
    )
    print(f"  speed-up x{min(t_ref) / min(t_ours):.2f}   max |diff| = {max(diffs.values()):.2e}")


def bench_approx(n: int, check_exact: bool, backends: list[str]) -> None:
    from genmetrics.metrics.precision_recall import prdc_approx, prdc_exact

    rng_p = np.random.default_rng(5)
    d = 300
    spec = np.arange(1, d + 1) ** -0.4
    centers = np.random.default_rng(7).normal(size=(40, d)) * spec
    p = (centers[rng_p.integers(0, 40, n)] + rng_p.normal(size=(n, d)) * spec).astype(np.float32)
    q = (centers[rng_p.integers(0, 30, n)] + rng_p.normal(size=(n, d)) * spec * 1.1).astype(
        np.float32
    )
    print(f"[approx P/R] N={n} per side, d={d}, {os.cpu_count()} CPUs visible")
    results = {}
    for backend in backends:
        t = time.perf_counter()
        a = prdc_approx(p, q, [4], backend=backend)[4]
        t_cold = time.perf_counter() - t
        t = time.perf_counter()
        prdc_approx(p, q, [4], seed=1, backend=backend)
        t_warm = time.perf_counter() - t
        results[backend] = a
        print(
            f"  {backend:12s} first call {t_cold:.1f}s (numba JIT included for pynndescent), "
            f"second call {t_warm:.1f}s"
        )
        print(f"  {'':12s} values {dict((k, round(v, 4)) for k, v in a.items())}")
    if check_exact:
        t = time.perf_counter()
        e = prdc_exact(p, q, [4])[4]
        t_exact = time.perf_counter() - t
        print(
            f"  {'exact':12s} {t_exact:.1f}s values {dict((k, round(v, 4)) for k, v in e.items())}"
        )
        for backend, a in results.items():
            diff = {k: round(abs(a[k] - e[k]), 4) for k in e}
            print(f"  |{backend} - exact| = {diff}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--n-approx", type=int, default=50000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-pr", action="store_true")
    ap.add_argument("--skip-mauve", action="store_true")
    ap.add_argument("--skip-approx", action="store_true")
    ap.add_argument(
        "--check-approx", action="store_true", help="also run the exact path at n-approx"
    )
    ap.add_argument("--backends", default="faiss,pynndescent", help="approximate backends to time")
    args = ap.parse_args()
    if not args.skip_pr:
        bench_pr(args.n, args.repeat)
    if not args.skip_mauve:
        bench_mauve(args.n, max(1, args.repeat - 1))
    if not args.skip_approx:
        bench_approx(args.n_approx, args.check_approx, args.backends.split(","))


if __name__ == "__main__":
    main()
