"""OmniInput toy: accuracy and tail reach of each estimator as the evaluation budget grows.

Uses the toy the workflow built (``make omniinput-toy``: ``results/omniinput/toy/model`` and
``exact.npz``) and runs uniform Wang–Landau, gradient Wang–Landau and uniform Monte Carlo at the
same budgets of model evaluations, seed 0, with the config's sampler defaults. Prints, per
budget and estimator, max and mean |ln ρ̂ − ln ρ| over the bins it reached, the PR-curve L∞
error, how many of the populated bins it reached, and the exact counts of the bins it missed.

    .venv/bin/python benchmarks/bench_omniinput_budgets.py [--budgets 10000 30000 100000]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from genmetrics.devices import available_cpus
from genmetrics.omniinput.digits import DigitLM
from genmetrics.omniinput.sampler import wang_landau
from genmetrics.omniinput.validation import monte_carlo, read_exact, validation_entry

TOY = Path("results/omniinput/toy")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--budgets", type=int, nargs="+", default=[10_000, 30_000, 100_000])
    ap.add_argument("--walkers", type=int, default=64)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not (TOY / "exact.npz").exists():
        raise SystemExit(f"{TOY}/exact.npz is missing: run `make omniinput-toy` first")
    torch.set_num_threads(available_cpus())
    lm = DigitLM.load(TOY / "model")
    bins, ln_rho, r, extra = read_exact(TOY / "exact.npz")
    print(
        f"toy: {int(extra['space_size']):,} inputs, {bins.n} bins over [{bins.lo:.3f}, "
        f"{bins.hi:.3f}], {int((ln_rho > -1e300).sum())} populated; walkers={args.walkers}, "
        f"seed={args.seed}"
    )
    head = f"{'budget':>8} {'estimator':<12} {'max err':>8} {'mean err':>8} {'PR Linf':>8} "
    print(head + f"{'reached':>8} {'seconds':>8}  missed bins (exact counts)")
    for budget in args.budgets:
        for kind in ("uniform", "gradient", "monte_carlo"):
            t0 = time.perf_counter()
            if kind == "monte_carlo":
                res = monte_carlo(lm, 10, lm.length, bins, budget, seed=args.seed)
            else:
                res = wang_landau(
                    lm,
                    lm.vocab_size,
                    lm.length,
                    bins,
                    walkers=args.walkers,
                    proposal=kind,
                    grad_f=lm.grad,
                    check_every=100,
                    ln_f_final=1e-8,
                    max_evaluations=budget,
                    seed=args.seed,
                )
            secs = time.perf_counter() - t0
            e = validation_entry(res, ln_rho, r, lm.rule)
            missed = [m["exact_count"] for m in e["bins_missed"]]
            print(
                f"{budget:>8,} {kind:<12} {e['max_abs_log_rho_error']:>8.3f} "
                f"{e['mean_abs_log_rho_error']:>8.3f} {e['pr_curve_linf_error']:>8.4f} "
                f"{e['bins_reached']:>4}/{e['bins_populated_exact']:<3} {secs:>8.1f}  "
                f"{missed if missed else '-'}"
            )


if __name__ == "__main__":
    main()
