"""MAUVE: genmetrics against mauve-text on the same features, in one process and as whole processes.

    .venv/bin/python benchmarks/bench_mauve.py [--n 2000] [--dim 768] [--repeat 3]
        [--mode both|inprocess|process] [--params pca_solver=auto ...] [--stages]

Inputs: ``--n`` rows per side (default 2,000) of bench_distribution's 768-d Gaussian mixture
(power-law spectrum: L2 + PCA 0.9 keeps about 320 dimensions), P = mixture(seed 1),
Q = mixture(seed 2, shift 0.1, other weights); ``num_buckets`` auto = n/10 clusters.

* in-process: ``mauve.compute_mauve(p_features=P, q_features=Q)`` and
  ``genmetrics.metrics.compute("mauve", Q, P)``, interleaved, best of ``--repeat``;
* process: each as a fresh ``python`` process (imports included: mauve-text imports torch
  and transformers, genmetrics its registry) that loads the same .npy files, computes and
  prints its values, interleaved, best of ``--repeat`` wall times (both packages with their
  bytecode written: ``bench_distribution.compile_genmetrics``).

Prints both times (whole processes: wall and user + system CPU seconds, which move less with
the machine's load), the ratio (reference time / our time: > 1 means we are faster), the
largest |Δ| over mauve, frontier_integral, mauve_star, frontier_integral_star, the k-means
and device our record states, and the load average beside each number. ``--stages`` times
our L2 + PCA and k-means separately (the profile's two large parts). ``--agreement`` compares
values only: 4 mixture pairs × k-means seeds 25 and 1, mauve-text against ours.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_distribution import compile_genmetrics, mixture  # noqa: E402

NAMES = ("mauve", "frontier_integral", "mauve_star", "frontier_integral_star")

REF_SCRIPT = """
import json, sys, numpy as np
import mauve
p = np.load(sys.argv[1]); q = np.load(sys.argv[2])
r = mauve.compute_mauve(p_features=p, q_features=q)
print(json.dumps({k: float(getattr(r, k)) for k in NAMES}))
""".replace("NAMES", repr(NAMES))

OURS_SCRIPT = """
import json, sys, numpy as np
from genmetrics.metrics import compute
p = np.load(sys.argv[1]); q = np.load(sys.argv[2])
params = json.loads(sys.argv[3])
r = compute("mauve", q, p, params)
print(json.dumps({**r.values, "kmeans": r.extras["kmeans"], "device": r.extras["device"]}))
"""


def load() -> str:
    return f"load {os.getloadavg()[0]:.1f}"


def parse_params(items: list[str]) -> dict:
    import yaml

    out = {}
    for item in items:
        key, _, value = item.partition("=")
        out[key] = yaml.safe_load(value)
    return out


def inprocess(p: np.ndarray, q: np.ndarray, repeat: int, params: dict) -> None:
    import mauve as mauve_text

    from genmetrics.metrics import compute

    def ref():
        with contextlib.redirect_stderr(io.StringIO()):
            return mauve_text.compute_mauve(p_features=p, q_features=q)

    def ours():
        return compute("mauve", q, p, params)

    t_ref, t_ours = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        r = ref()
        t_ref.append(time.perf_counter() - t)
        t = time.perf_counter()
        o = ours()
        t_ours.append(time.perf_counter() - t)
    diff = max(abs(float(getattr(r, k)) - o.values[k]) for k in NAMES)
    print(f"[in-process] best of {repeat}, {load()}")
    print(f"  mauve-text : {min(t_ref):7.2f}s  mauve={r.mauve:.6f}  (all: {_fmt(t_ref)})")
    print(
        f"  genmetrics : {min(t_ours):7.2f}s  mauve={o.values['mauve']:.6f}  (all: {_fmt(t_ours)})"
        f"  kmeans={o.extras['kmeans']} device={o.extras['device']}"
    )
    print(
        f"  ratio x{min(t_ref) / min(t_ours):.2f}   max |Δ| over {len(NAMES)} values = {diff:.2e}"
    )


def process(p_path: str, q_path: str, repeat: int, params: dict) -> None:
    compile_genmetrics()
    env = dict(os.environ)
    env["PYTHONPATH"] = str(HERE.parent / "src") + os.pathsep + env.get("PYTHONPATH", "")
    ref_cmd = [sys.executable, "-c", REF_SCRIPT, p_path, q_path]
    ours_cmd = [sys.executable, "-c", OURS_SCRIPT, p_path, q_path, json.dumps(params)]

    def run(cmd):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return wall, cpu, json.loads(out.stdout.strip().splitlines()[-1])

    t_ref, t_ours, c_ref, c_ours = [], [], [], []
    for _ in range(repeat):
        a, ca, r = run(ref_cmd)
        b, cb, o = run(ours_cmd)
        t_ref.append(a)
        t_ours.append(b)
        c_ref.append(ca)
        c_ours.append(cb)
    diff = max(abs(r[k] - o[k]) for k in NAMES)
    print(f"[whole processes, imports included] best of {repeat}, {load()}")
    print(
        f"  mauve-text : {min(t_ref):7.2f}s wall, {min(c_ref):6.2f}s CPU  mauve={r['mauve']:.6f}"
        f"  (walls: {_fmt(t_ref)})"
    )
    print(
        f"  genmetrics : {min(t_ours):7.2f}s wall, {min(c_ours):6.2f}s CPU  mauve={o['mauve']:.6f}"
        f"  (walls: {_fmt(t_ours)})  kmeans={o['kmeans']} device={o['device']}"
    )
    print(
        f"  ratio x{min(t_ref) / min(t_ours):.2f} wall, x{min(c_ref) / min(c_ours):.2f} CPU"
        f"   max |Δ| over {len(NAMES)} values = {diff:.2e}"
    )


def stages(p: np.ndarray, q: np.ndarray, params: dict) -> None:
    from genmetrics.metrics._quantize import kmeans_labels, l2_pca, resolve_buckets
    from genmetrics.metrics.mauve import kmeans_backend

    solver = params.get("pca_solver", "covariance_eigh")
    t = time.perf_counter()
    p_red, q_red = l2_pca(p, q, 0.9, seed=25, solver=solver)
    t_pca = time.perf_counter() - t
    backend, device = kmeans_backend(params.get("kmeans", "auto"))
    k = resolve_buckets("auto", len(p), len(q))
    t = time.perf_counter()
    kmeans_labels(np.vstack([q_red, p_red]), k, seed=25, backend=backend, device=device)
    t_km = time.perf_counter() - t
    print(
        f"[stages, ours] L2+PCA ({solver}) {t_pca:.2f}s -> {p_red.shape[1]} dims; "
        f"k-means ({backend}, {device}, {k} clusters) {t_km:.2f}s; {load()}"
    )


#: the agreement check's pairs: (P seed, Q seed, Q shift, Q weights seed)
PAIRS = ((1, 2, 0.1, 1), (3, 4, 0.0, 0), (5, 6, 0.3, 2), (7, 8, 0.05, 3))


def agreement(n: int, dim: int, params: dict) -> None:
    """MAUVE of mauve-text and ours (``params``) on 4 mixture pairs × k-means seeds 25 and 1."""
    import mauve as mauve_text

    from genmetrics.metrics import compute

    worst = 0.0
    for ps, qs, shift, ws in PAIRS:
        p = mixture(n, d=dim, seed=ps)
        q = mixture(n, d=dim, seed=qs, shift=shift, weights_seed=ws)
        for seed in (25, 1):
            r = mauve_text.compute_mauve(p_features=p, q_features=q, seed=seed)
            o = compute("mauve", q, p, {**params, "seed": seed})
            diff = max(abs(float(getattr(r, k)) - o.values[k]) for k in NAMES)
            same = np.array_equal(r.p_hist, o.extras["p_hist"]) and np.array_equal(
                r.q_hist, o.extras["q_hist"]
            )
            worst = max(worst, diff)
            print(
                f"  pair {ps},{qs} shift {shift} seed {seed}: mauve-text {r.mauve:.6f} "
                f"ours {o.values['mauve']:.6f}  max |Δ| {diff:.1e}  same histograms {same}"
            )
    print(f"[agreement] largest |Δ| over {len(PAIRS) * 2} runs × {len(NAMES)} values: {worst:.1e}")


def _fmt(times: list[float]) -> str:
    return " ".join(f"{t:.2f}" for t in times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--n", type=int, default=2000, help="rows per side (default 2000)")
    ap.add_argument("--dim", type=int, default=768, help="feature dimension (default 768)")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each, interleaved (best kept)")
    ap.add_argument("--mode", choices=("both", "inprocess", "process"), default="both")
    ap.add_argument(
        "--params",
        nargs="*",
        default=[],
        help="our mauve params, key=value (e.g. pca_solver=auto kmeans=torch)",
    )
    ap.add_argument("--stages", action="store_true", help="time our PCA and k-means apart")
    ap.add_argument(
        "--agreement",
        action="store_true",
        help="values only: 4 mixture pairs x 2 seeds, mauve-text vs ours (no timing)",
    )
    args = ap.parse_args()
    params = parse_params(args.params)
    if args.agreement:
        agreement(args.n, args.dim, params)
        return
    p = mixture(args.n, d=args.dim, seed=1)
    q = mixture(args.n, d=args.dim, seed=2, shift=0.1, weights_seed=1)
    print(
        f"MAUVE, {args.n} per side, {args.dim}-d mixture, {round(args.n / 10)} buckets, "
        f"{os.cpu_count()} CPUs, params {params or 'defaults'}"
    )
    if args.stages:
        stages(p, q, params)
    if args.mode in ("both", "inprocess"):
        inprocess(p, q, args.repeat, params)
    if args.mode in ("both", "process"):
        with tempfile.TemporaryDirectory() as tmp:
            p_path, q_path = str(Path(tmp) / "p.npy"), str(Path(tmp) / "q.npy")
            np.save(p_path, p)
            np.save(q_path, q)
            process(p_path, q_path, args.repeat, params)


if __name__ == "__main__":
    main()
