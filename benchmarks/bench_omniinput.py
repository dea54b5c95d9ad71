"""Benchmark: OmniInput Wang–Landau sampler throughput, batched walkers vs one walker at a time.

    .venv/bin/python benchmarks/bench_omniinput.py [--walkers 1 8 64] [--evaluations 4096]
        [--repeats 3] [--train-steps 300] [--threads N]

What is measured: model evaluations per second of
``genmetrics.omniinput.sampler.wang_landau`` on the digit toy
(``genmetrics.omniinput.digits``: a tiny GPT-2 over V^L = 10^6 digit sequences), for each
proposal (``uniform``, ``gradient``) and each number of walkers (``--walkers``), all on the same
model, bins, seed and evaluation budget (``--evaluations``, default 4096 = 64 · 64, so every
configuration spends exactly the budget: the walkers' starts plus whole steps). One
evaluation is one sequence through the model (``f``) or through ``grad_f`` (forward +
backward), as ``WLResult.model_evaluations`` counts them.

* The model is trained once with a short schedule (``--train-steps``, default 300 instead of
  the toy's 1500): the benchmark measures sampler throughput, not model quality.
* Bins: ``Bins(lo, hi, 32)`` over the outputs of 4096 uniform random inputs (seed 0), widened
  by 5 % of their range on each side. ``ln_f_final`` = 1e-12, so every run stops at the budget.
* Each configuration first runs once untimed on a small budget (PyTorch's first call on a new
  shape is slower than steady state), then ``--repeats`` timed runs (``time.perf_counter``
  around ``wang_landau``); reported is the median. The repeats must agree exactly (evaluations,
  steps, acceptances, ln ρ̂): the script asserts it. ``model %`` is the share of the run spent
  inside ``f``/``grad_f`` (timed by a thin wrapper); the rest is the sampler's own numpy and
  Python work per step.
* The raw model alone: ``lm(x)`` and ``lm.grad(x)`` on one batch of 64 sequences vs 64 calls
  on one sequence each (median of ``--repeats`` · 5 timings), which shows where the speed-up
  of batched walkers comes from: a forward pass of a batch costs little more than a forward
  pass of one sequence, and a fixed per-call overhead is paid once per step, not per walker.

Evaluations per second does not depend on the budget (the runs are in steady state), so a
smaller ``--evaluations`` only makes the timings noisier. Threads: ``torch.set_num_threads``
with the CPUs this process may use (``--threads``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from genmetrics.devices import available_cpus
from genmetrics.omniinput.density import Bins
from genmetrics.omniinput.digits import DigitLM, DigitToySpec
from genmetrics.omniinput.sampler import wang_landau

N_BINS = 32
LN_F_FINAL = 1e-12
SEED = 0
RAW_BATCH = 64


class Timed:
    """Wraps an output function and adds the seconds spent inside it to ``seconds``."""

    def __init__(self, fn: Callable[[np.ndarray], Any]) -> None:
        self.fn, self.seconds = fn, 0.0

    def __call__(self, tokens: np.ndarray) -> Any:
        t = time.perf_counter()
        out = self.fn(tokens)
        self.seconds += time.perf_counter() - t
        return out


def median_time(fn: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def run_sampler(
    lm: DigitLM, bins: Bins, proposal: str, walkers: int, budget: int, check_every: int
) -> tuple[Any, float, float]:
    """One timed ``wang_landau`` run: (result, wall seconds, seconds inside the model)."""
    f, g = Timed(lm), Timed(lm.grad)
    t = time.perf_counter()
    res = wang_landau(
        f,
        lm.vocab_size,
        lm.length,
        bins,
        walkers=walkers,
        proposal=proposal,
        grad_f=g,
        max_evaluations=budget,
        seed=SEED,
        ln_f_final=LN_F_FINAL,
        check_every=check_every,
    )
    return res, time.perf_counter() - t, f.seconds + g.seconds


def bench_sampler(
    lm: DigitLM, bins: Bins, proposal: str, walkers: int, args: argparse.Namespace
) -> dict[str, Any]:
    run_sampler(lm, bins, proposal, walkers, 4 * walkers + 2, args.check_every)  # warm-up
    runs = [
        run_sampler(lm, bins, proposal, walkers, args.evaluations, args.check_every)
        for _ in range(args.repeats)
    ]
    first = runs[0][0]
    for res, _, _ in runs[1:]:  # same seed → the same walk, evaluation for evaluation
        same = (
            res.model_evaluations == first.model_evaluations
            and res.iterations == first.iterations
            and res.acceptance_rate == first.acceptance_rate
            and np.array_equal(res.ln_rho, first.ln_rho)
        )
        assert same, f"{proposal}, walkers={walkers}: repeats of the same seed differ"
    seconds = statistics.median(r[1] for r in runs)
    model_share = statistics.median(r[2] / r[1] for r in runs)
    return {
        "proposal": proposal,
        "walkers": walkers,
        "evaluations": first.model_evaluations,
        "steps": first.iterations,
        "seconds": seconds,
        "eval_per_s": first.model_evaluations / seconds,
        "model_share": model_share,
        "bins_reached": first.bins_reached,
        "acceptance": first.acceptance_rate,
        "stopped": first.stopped,
    }


def bench_raw(lm: DigitLM, repeats: int) -> list[dict[str, Any]]:
    x = np.random.default_rng(SEED + 1).integers(
        0, lm.vocab_size, size=(RAW_BATCH, lm.length), dtype=np.int64
    )
    rows = [x[i : i + 1] for i in range(RAW_BATCH)]
    out = []
    for name, fn in (("lm(x)", lm), ("lm.grad(x)", lm.grad)):
        fn(x)  # warm-up, both shapes
        fn(rows[0])
        batched = median_time(lambda fn=fn: fn(x), repeats * 5)
        single = median_time(lambda fn=fn: [fn(r) for r in rows], repeats * 5)
        out.append(
            {
                "call": name,
                "batched_s": batched,
                "single_s": single,
                "batched_per_s": RAW_BATCH / batched,
                "single_per_s": RAW_BATCH / single,
            }
        )
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--walkers", type=int, nargs="+", default=[1, 8, 64], help="walker counts")
    ap.add_argument(
        "--evaluations", type=int, default=4096, help="model evaluations per run (the budget)"
    )
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per configuration")
    ap.add_argument("--train-steps", type=int, default=300, help="training steps of the toy")
    ap.add_argument("--check-every", type=int, default=100, help="wang_landau check_every")
    ap.add_argument("--threads", type=int, default=available_cpus(), help="torch threads")
    args = ap.parse_args()
    if args.repeats < 1 or args.evaluations < 1 or args.train_steps < 1:
        ap.error("--repeats, --evaluations and --train-steps must be >= 1")
    if any(w < 1 for w in args.walkers):
        ap.error("--walkers must be >= 1")
    torch.set_num_threads(args.threads)
    t_start = time.perf_counter()

    def phase(name: str) -> None:  # on stderr, so a slow run shows where it is
        print(f"[{time.perf_counter() - t_start:7.1f} s] {name}", file=sys.stderr, flush=True)

    phase(f"train the digit toy ({args.train_steps} steps)")
    spec = DigitToySpec(steps=args.train_steps, seed=SEED)
    t = time.perf_counter()
    lm, log = DigitLM.train(spec)
    train_s = time.perf_counter() - t
    probe = np.random.default_rng(SEED).integers(
        0, lm.vocab_size, size=(4096, lm.length), dtype=np.int64
    )
    z = lm(probe)
    pad = 0.05 * float(z.max() - z.min())
    bins = Bins(float(z.min()) - pad, float(z.max()) + pad, N_BINS)

    print(
        f"digit toy: V={lm.vocab_size}, L={lm.length} ({spec.space_size:,} inputs), "
        f"{spec.layers} layers, d_model={spec.d_model}; trained {spec.steps} steps in "
        f"{train_s:.1f} s, final loss {log['final_loss']:.3f} nats/digit (a short schedule: "
        "this measures sampler throughput, not model quality)"
    )
    print(
        f"bins: {N_BINS} over [{bins.lo:.3f}, {bins.hi:.3f}] (outputs of 4096 random inputs "
        f"± 5 %); ln_f_final={LN_F_FINAL:g}, check_every={args.check_every}, seed={SEED}, "
        f"torch threads={args.threads}"
    )
    print(
        f"budget: {args.evaluations} model evaluations per run for every configuration; "
        f"median of {args.repeats} timed runs after one warm-up. Evaluations/s is "
        "budget-independent (steady state)."
    )

    rows = []
    for proposal in ("uniform", "gradient"):
        for w in args.walkers:
            phase(f"wang_landau proposal={proposal} walkers={w}")
            rows.append(bench_sampler(lm, bins, proposal, w, args))
    phase("raw model")
    raw = bench_raw(lm, args.repeats)

    print()
    print("Wang-Landau sampler (evaluations include the walkers' starts)")
    head = (
        f"{'proposal':<9} {'walkers':>7} {'evals':>6} {'steps':>6} {'seconds':>8} "
        f"{'evals/s':>9} {'speed-up':>8} {'model %':>7} {'bins':>5} {'accept':>6}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        base = next(
            (
                b
                for b in rows
                if b["proposal"] == r["proposal"] and b["walkers"] == min(args.walkers)
            ),
            r,
        )
        print(
            f"{r['proposal']:<9} {r['walkers']:>7} {r['evaluations']:>6} {r['steps']:>6} "
            f"{r['seconds']:>8.3f} {r['eval_per_s']:>9.0f} "
            f"{r['eval_per_s'] / base['eval_per_s']:>7.1f}x {100 * r['model_share']:>6.1f}% "
            f"{r['bins_reached']:>5} {r['acceptance']:>6.3f}"
        )
    print(f"speed-up: evaluations/s relative to walkers={min(args.walkers)}, same proposal")

    print()
    print(f"raw model: one batch of {RAW_BATCH} sequences vs {RAW_BATCH} calls of one sequence")
    head = (
        f"{'call':<11} {'batch s':>9} {'single s':>9} {'batch seq/s':>12} "
        f"{'single seq/s':>12} {'ratio':>7}"
    )
    print(head)
    print("-" * len(head))
    for r in raw:
        print(
            f"{r['call']:<11} {r['batched_s']:>9.4f} {r['single_s']:>9.4f} "
            f"{r['batched_per_s']:>12.0f} {r['single_per_s']:>12.0f} "
            f"{r['batched_per_s'] / r['single_per_s']:>6.1f}x"
        )
    for r in raw:
        print(
            f"{r['call']}: {1e3 * r['single_s'] / RAW_BATCH:.2f} ms per one-sequence call, "
            f"{1e3 * r['batched_s']:.2f} ms for a batch of {RAW_BATCH} "
            f"({1e3 * r['batched_s'] / RAW_BATCH:.3f} ms per sequence)"
        )
    phase(f"done in {time.perf_counter() - t_start:.1f} s")


if __name__ == "__main__":
    main()
