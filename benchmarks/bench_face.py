"""Benchmark: FACE spectra + distances, ours (batched) vs a per-pair loop as FACEScore runs.

    .venv/bin/python benchmarks/bench_face.py [--n 10000] [--length 500] [--ref-pairs 1000]

Inputs: ``--n`` human and ``--n`` model surprisal sequences of ``--length`` tokens, gamma
distributed (``numpy.random.default_rng(0)``; positive, mean ≈ 3 nats), paired i-th with i-th.

- Ours: ``genmetrics.metrics.compute("face", model, human, params=..., links=[[i], ...])``
  (spectra grouped by length: one batched FFT and one interpolation matrix per length; all 7
  distances vectorised in blocks of rows), and its core, ``_spectra.aligned_spectra`` +
  ``batch_distances``.
- Reference (timed): :func:`official_style`, the per-pair loop of FACEScore as its code is
  written (``fft_utils.FFTProcessor._fft`` per sequence with ``scipy.fft``, then
  ``metrics.cal_metrics``: two ``interp1d`` objects per pair and the metric functions of
  ``metrics.py``, including its EMD's Python accumulation loop), with this project's stated
  departures (index re-gridding, |spectrum| for EMD/KL/JS, SAM's clipped cosine) so that the
  values are comparable. Also timed: the lean numpy oracle of the tests,
  ``tests/face_oracle.py`` (imported by inserting ``tests/`` into ``sys.path``), which checks
  the values. Both are slow, so they run on the first ``--ref-pairs`` pairs (extrapolated
  linearly to ``--n``); ours is timed on the same pairs for the ratio.

Ours runs its blocks of pairs in threads on the CPUs the process may use (2 here); the
official code is one Python loop. Variants: ``value=norm`` and ``value=real``, both with
``zscore=true``. Goals (exit 1 if missed): on the ``--ref-pairs`` pairs, the mean of each
distance from the oracle and from the official-style loop equals ours within 1e-9
(absolute), and ours is at least 10× faster than the official-style loop, there and at
``--n`` pairs (the reference extrapolated).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np
from scipy.fft import fft, fftfreq, fftshift
from scipy.interpolate import interp1d
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy, spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from bench_distribution import best_of  # noqa: E402  (this folder is on sys.path)
from face_oracle import facescore_reference  # noqa: E402

from genmetrics.devices import available_cpus  # noqa: E402
from genmetrics.metrics import compute  # noqa: E402
from genmetrics.metrics._spectra import (  # noqa: E402
    DISTANCES,
    aligned_spectra,
    batch_distances,
)

TOL = 1e-9
GOAL_SPEEDUP = 10.0


def _official_fft(x, value):
    """FACEScore ``FFTProcessor._preprocess`` (zscore) + ``_fft``, one sequence."""
    d = np.asarray(x)
    d = (d - np.mean(d)) / (np.std(d) + 1e-6)
    n = d.shape[-1]
    freq_x = fftshift(fftfreq(n))
    res = fftshift(fft(d))
    sp = res.real if value == "real" else np.abs(res)
    return freq_x[len(freq_x) // 2 :], sp[len(sp) // 2 :]


def _official_emd(s1, s2):
    p1, p2 = [s1[0]], [s2[0]]
    for v in s1[1:]:
        p1.append(p1[-1] + v)
    for v in s2[1:]:
        p2.append(p2[-1] + v)
    p1, p2 = np.array(p1), np.array(p2)
    p1 /= p1[-1]
    p2 /= p2[-1]
    return np.abs(p1 - p2).sum() / s1.shape[0]


def official_style(human, model, value):
    """FACEScore's ``score_nlls`` → ``cal_metrics`` loop, pair by pair (see the docstring)."""
    h = [_official_fft(x, value) for x in human]
    g = [_official_fft(x, value) for x in model]
    out = []
    for (_, sp1), (_, sp2) in zip(h, g, strict=True):
        x = np.linspace(0, 0.5, 1000)
        sp1 = interp1d(np.linspace(0, 0.5, len(sp1)), sp1, fill_value="extrapolate")(x)
        sp2 = interp1d(np.linspace(0, 0.5, len(sp2)), sp2, fill_value="extrapolate")(x)
        both = np.abs(np.concatenate([sp1[None], sp2[None]], axis=0))
        a1, a2 = np.abs(sp1), np.abs(sp2)
        cos = np.dot(sp1 / np.linalg.norm(sp1), sp2 / np.linalg.norm(sp2))
        out.append(
            {
                "so": both.min(axis=0).sum() / both.max(axis=0).sum(),
                "corr": np.corrcoef(sp1, sp2)[0, 1],
                "spear": spearmanr(sp1, sp2)[0],
                "sam": np.arccos(np.clip(cos, -1, 1)) / np.pi,
                "emd": _official_emd(a1, a2),
                "kl": entropy(a2, np.where(a1 == 0, 1e-10, a1)),
                "js": jensenshannon(a1, a2),
            }
        )
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--length", type=int, default=500)
    ap.add_argument("--ref-pairs", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    rng = np.random.default_rng(0)
    human = list(rng.gamma(1.5, 2.0, size=(args.n, args.length)))  # mean 3.0 nats
    model = list(rng.gamma(2.0, 1.4, size=(args.n, args.length)))  # mean 2.8 nats
    links = [[i] for i in range(args.n)]
    m = min(args.ref_pairs, args.n)
    print(
        f"FACE: {args.n} human + {args.n} model surprisal sequences of {args.length} tokens "
        f"(gamma, mean {np.mean(human):.2f} / {np.mean(model):.2f} nats), paired i-th with "
        f"i-th; references = FACEScore-style per-pair loop and tests/face_oracle.py on the first "
        f"{m} pairs"
    )

    rows, ok = [], True
    full = {}
    for value in ("norm", "real"):
        params = {"value": value, "zscore": True}

        def ours_sub(params=params):
            return compute("face", model[:m], human[:m], params=params, links=links[:m])

        ours_sub()  # warm-up (imports)
        t_ours, res = best_of(ours_sub, args.repeat)

        t0 = time.perf_counter()
        oracle = [facescore_reference(human[i], model[i], value, True) for i in range(m)]
        t_oracle = time.perf_counter() - t0
        t0 = time.perf_counter()
        ref = official_style(human[:m], model[:m], value)
        t_ref = time.perf_counter() - t0

        diff = per_pair = 0.0
        for other in (oracle, ref):
            mean = {k: float(np.mean([r[k] for r in other])) for k in DISTANCES}
            diff = max(diff, *(abs(mean[k] - res.values[k]) for k in DISTANCES))
            per_pair = max(
                per_pair,
                *(
                    float(
                        np.max(
                            np.abs(np.array([r[k] for r in other]) - res.extras["per_candidate"][k])
                        )
                    )
                    for k in DISTANCES
                ),
            )
        ratio = t_ref / t_ours
        good = diff <= TOL and ratio >= GOAL_SPEEDUP
        ok &= good
        rows.append(
            (f"{value}+zscore", m, t_ours, t_ref, ratio, t_oracle / t_ours, diff, per_pair, good)
        )

        def ours_full(params=params):
            return compute("face", model, human, params=params, links=links)

        def core_full(value=value):
            a = aligned_spectra(human, value=value, zscore=True)
            b = aligned_spectra(model, value=value, zscore=True)
            return batch_distances(a, b)

        t_full, res_full = best_of(ours_full, args.repeat)
        t_core, _ = best_of(core_full, args.repeat)
        full[value] = (t_full, t_core, t_ref * args.n / m, res_full.values)
        ok &= t_ref * args.n / m / t_full >= GOAL_SPEEDUP  # the goal at --n pairs too

    print()
    print(
        f"{'variant':<12} {'pairs':>6} {'ours s':>9} {'official s':>11} {'ratio':>7} "
        f"{'vs oracle':>10} {'max|Δ mean|':>12} {'max|Δ pair|':>12}  goal"
    )
    for v, n, to, tr, r, ro, d, dp, good in rows:
        print(
            f"{v:<12} {n:>6} {to:>9.4f} {tr:>11.3f} {r:>6.1f}× {ro:>9.1f}× {d:>12.2g} "
            f"{dp:>12.2g}  {'ok' if good else 'FAIL'}"
        )
    print()
    for value, (t_full, t_core, t_ref_x, vals) in full.items():
        print(
            f"{value}+zscore, all {args.n} pairs: ours compute() {t_full:.2f} s "
            f"(aligned_spectra + batch_distances {t_core:.2f} s); reference ~{t_ref_x:.0f} s "
            f"extrapolated linearly from {m} pairs → ratio ≈ {t_ref_x / t_full:.0f}×; "
            + ", ".join(f"{k} {vals[k]:.4f}" for k in DISTANCES)
        )

    tracemalloc.start()
    compute("face", model, human, params={"value": "norm", "zscore": True}, links=links)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(
        f"peak memory of ours, {args.n} pairs (norm): {peak / 2**20:.0f} MiB traced "
        f"(tracemalloc, numpy buffers included); process max RSS {rss:.0f} MiB"
    )
    print(
        f"goals (mean of each distance within {TOL:g} of the oracle, ≥ {GOAL_SPEEDUP:g}× on "
        f"{m} and at {args.n} pairs, against the official-style loop; ours on "
        f"{available_cpus()} CPU thread(s)): {'met' if ok else 'FAILED'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
