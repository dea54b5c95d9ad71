"""OmniInput (Liu et al.): the toy's check against the exact truth, the runs' PR curves."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from genmetrics.figures._save import save as _save
from genmetrics.figures._style import plt
from genmetrics.omniinput.validation import ToyComparison

#: proposal kinds of the OmniInput toy, in the figure's order, with colour-blind-safe colours
_OMNI_STYLE = {
    "exact": ("#000000", "exact (enumeration)"),
    "uniform": ("#0072B2", "Wang-Landau, uniform proposal"),
    "gradient": ("#D55E00", "Wang-Landau, gradient proposal (GWL)"),
    "monte_carlo": ("#009E73", "uniform Monte Carlo"),
}


def omniinput_toy_figure(data: ToyComparison, path: str | Path) -> None:
    """The OmniInput toy (Liu et al., §3.2) from
    :func:`genmetrics.omniinput.validation.toy_comparison`: (a) ρ(z), the number of inputs
    per output bin, estimated vs exact on a log scale; (b) r(z), the share of valid inputs
    per bin, exact vs from each run's annotated samples; (c) the PR curves. Equal evaluation
    budgets."""
    m = data.spec["modulus"]
    centers = data.centers
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4), constrained_layout=True)
    ax = axes[0]
    ax.semilogy(centers, np.exp(data.ln_rho), "-", color="k", lw=2.5, label=_OMNI_STYLE["exact"][1])
    for kind, run in data.runs.items():
        color, label = _OMNI_STYLE[kind]
        ax.semilogy(
            centers,
            np.exp(run.ln_rho),
            "o",
            ms=3.5,
            color=color,
            label=f"{label}: max |ln ρ̂ − ln ρ| {run.max_abs_log_rho_error:.2f}",
        )
    ax.set_xlabel("z: mean NLL of the input (nats per digit)")
    ax.set_ylabel("ρ(z): inputs in the bin (log scale)")
    ax.set_title(f"(a) Output distribution over all {data.space_size:,} inputs")
    ax.legend(fontsize=7)
    ax = axes[1]
    ax.plot(
        centers, data.r, "-", color="k", lw=2.5, label="exact share of valid inputs", clip_on=False
    )
    for kind, run in data.runs.items():
        color, label = _OMNI_STYLE[kind]
        ax.plot(
            centers,
            run.r_hat,
            "o",
            ms=3.5,
            color=color,
            label=f"{label} (annotated samples)",
            clip_on=False,
        )
    ax.set_xlabel("z: mean NLL of the input (nats per digit)")
    ax.set_ylabel(f"r(z): share with digit sum divisible by {m}")
    ax.set_title("(b) Annotation per bin")
    ax.set_ylim(0, 1)  # shares: the axis ends at 0 and 1 (points there not clipped)
    ax.legend(fontsize=7)
    ax = axes[2]
    curves = {"exact": (data.curve, None)}
    curves.update({k: (run.curve, run.pr_curve_linf_error) for k, run in data.runs.items()})
    for kind, (c, error) in curves.items():
        color, label = _OMNI_STYLE[kind]
        extra_label = "" if error is None else f": L∞ error {error:.3f}"
        ax.plot(
            c["recall"],
            c["precision"],
            "-" if kind == "exact" else "--",
            color=color,
            lw=2.5 if kind == "exact" else 1.5,
            label=label + extra_label,
            clip_on=False,
        )
    ax.set_xlabel("recall: share of all valid inputs selected (z ≤ λ)")
    ax.set_ylabel("precision: share of selected inputs that are valid")
    ax.set_title("(c) Precision-recall over the input space")
    ax.set_xlim(0, 1)  # proportions: axes within [0, 1]
    ax.set_ylim(0, 1)
    ax.legend(fontsize=7)
    spec = data.spec
    fig.suptitle(
        f"OmniInput toy (Liu et al.): tiny GPT-2 on {spec['length']}-digit sequences with digit "
        f"sum divisible by {m}; {data.n_bins} bins; equal model-evaluation budgets",
        fontsize=11,
    )
    _save(fig, path)


def omniinput_runs_figure(records: dict[str, dict], path: str | Path) -> None:
    """OmniInput precision-recall curves per language model (Liu et al.): precision = share
    of the inputs with output z ≤ λ that the annotator accepts, recall = share of all accepted
    inputs with z ≤ λ; both weighted by the Wang-Landau estimate of how many inputs each bin
    holds. Right: precision against the threshold λ. One legend for both panels, under
    them (in columns as runs grow), so that it covers no curve."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), layout="constrained")
    cmap = plt.get_cmap("tab10" if len(records) <= 10 else "tab20")
    k_colours = cmap.N
    for k, (run, rec) in enumerate(sorted(records.items())):
        c = rec["extras"]["curve"]
        lam = np.asarray(c["lambda"], float)
        p = np.array([np.nan if v is None else v for v in c["precision"]], float)
        rc = np.array([np.nan if v is None else v for v in c["recall"]], float)
        label = f"{run} (AUPR {rec['values']['aupr']:.3f})"
        sampler = rec.get("extras", {}).get("sampler", {})
        if sampler and not sampler.get("converged", True):
            label += (
                f"; not converged: {sampler['model_evaluations']:,} evaluations, "
                f"{sampler['stages']} ln f halvings"
            )
        colour = cmap(k % k_colours)
        axes[0].plot(rc, p, "-o", ms=3, color=colour, label=label, clip_on=False)
        axes[1].plot(lam, p, "-o", ms=3, color=colour, clip_on=False)
    axes[0].set_xlabel("recall (share of accepted inputs selected)")
    axes[0].set_ylabel("precision (share of selected inputs accepted)")
    axes[0].set_title("PR curve over the whole input space")
    axes[0].set_xlim(0, 1)  # proportions: axes within [0, 1], points at 0 or 1 not clipped
    axes[1].set_xlabel("λ: threshold on z, mean NLL (nats per token)")
    axes[1].set_ylabel("precision at z ≤ λ")
    axes[1].set_title("Precision by threshold")
    for ax in axes:
        ax.set_ylim(0, 1)
    if records:
        fig.legend(
            loc="outside lower center",
            ncol=1 if len(records) <= 3 else 2,
            fontsize=8,
            title=f"run (area under the PR curve); {len(records)} runs",
            title_fontsize=8,
        )
    fig.suptitle("OmniInput (Liu et al.): models judged over every input of a fixed length")
    _save(fig, path)
