"""Figures: metric-correlation heatmap and precision–recall scatter, readable on their own."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from genmetrics.io import atomic_path  # noqa: E402


def _save(fig, path: str | Path) -> None:
    with atomic_path(path, suffix=".tmp.png") as tmp:
        fig.savefig(tmp, dpi=130, bbox_inches="tight")
    plt.close(fig)


def correlation_heatmap(
    table: pd.DataFrame,
    path: str | Path,
    method: str,
    cluster: bool = True,
    min_points: int | None = None,
    bold_from: int = 10,
) -> None:
    """One heatmap panel per scope of :func:`genmetrics.analysis.correlation.correlation_table`
    (each dataset, then ``pooled``) for ``method``: lower triangle, −1 blue … +1 red (RdBu,
    colour-blind safe), each cell annotated with r and, smaller, its bootstrap interval.

    Only the table's ``in_figure`` pairs (the headline scores) are drawn when there are any;
    scores with no defined correlation in any drawn panel (fewer than ``min_points`` sources
    with both scores, or constant) are listed under the figure instead. r is in bold when its
    interval excludes 0 and it rests on at least ``bold_from`` sources (with fewer, the
    bootstrap itself is unreliable: a perfect ±1 stays ±1 in every resample). ``cluster``:
    metrics ordered by hierarchical clustering on 1 − |r| (mean over the drawn panels), else
    in the table's order. A scope with fewer than ``min_points`` sources says so in words
    instead of drawing a matrix.
    """
    import textwrap
    import warnings

    from genmetrics.analysis.correlation import (
        MIN_POINTS,
        POOLED,
        cluster_order,
        correlation_matrix,
    )

    min_points = MIN_POINTS if min_points is None else min_points
    label = method.capitalize()
    t = table[table["method"] == method]
    if t["in_figure"].astype(bool).any():
        t = t[t["in_figure"].astype(bool)]
    scopes = list(dict.fromkeys(t["scope"]))
    points = {s: int(t.loc[t["scope"] == s, "n_points"].iloc[0]) for s in scopes}
    drawn = [s for s in scopes if points[s] >= min_points]
    names = list(dict.fromkeys([*t["metric_a"], *t["metric_b"]]))
    hidden: list[str] = []
    if drawn:
        stack = np.stack(
            [
                correlation_matrix(t, s, method).reindex(index=names, columns=names).to_numpy()
                for s in drawn
            ]
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # pairs undefined everywhere
            mean_abs = np.nanmean(np.abs(stack), axis=0)
        defined = np.isfinite(stack).any(axis=(0, 2))
        hidden = [m for m, ok in zip(names, defined, strict=True) if not ok]
        names = [m for m, ok in zip(names, defined, strict=True) if ok]
        mean_abs = pd.DataFrame(mean_abs[np.ix_(defined, defined)], index=names, columns=names)
        if cluster:
            names = cluster_order(mean_abs)
    k = len(names)
    n_total = sum(points[s] for s in scopes if s != POOLED)
    side = max(4.5, 1.8 + 0.8 * max(k - 1, 1))
    ncols = max(1, int(np.ceil(np.sqrt(len(scopes)))))  # panels in a near-square grid
    nrows = max(1, -(-len(scopes) // ncols))
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(side * ncols + 1.4, side * nrows + 1.2),
        squeeze=False,
        layout="constrained",
    )
    cmap = plt.get_cmap("RdBu_r")
    norm = matplotlib.colors.Normalize(vmin=-1, vmax=1)
    for ax in axes.flat[len(scopes) :]:
        ax.set_axis_off()
    if not scopes:
        axes[0, 0].text(0.5, 0.5, "no scores to correlate", ha="center", va="center")
        axes[0, 0].set_axis_off()
    for ax, scope in zip(axes.flat, scopes, strict=False):
        n = points[scope]
        what = f"{n} scored sources" if n != 1 else "1 scored source"
        if scope == POOLED:
            title = f"All datasets pooled: {what}\n(each score z-scored within its dataset)"
        else:
            title = f"Dataset {scope}: {what}"
        ax.set_title(title, fontsize=11)
        if n < min_points or k < 2:
            reason = (
                f"{what}: too few for a correlation (need ≥ {min_points})"
                if n < min_points
                else "no pair of scores with a defined correlation"
            )
            ax.text(0.5, 0.5, reason, ha="center", va="center", fontsize=11)
            ax.set_axis_off()
            continue
        r, low, high, cnt = (
            correlation_matrix(t, scope, method, c)
            .reindex(index=names, columns=names)
            .to_numpy(dtype=float)
            for c in ("r", "low", "high", "n")
        )
        rgba = np.ones((k, k, 4))
        for i in range(1, k):
            for j in range(i):
                v = r[i, j]
                if not np.isfinite(v):
                    rgba[i, j] = (0.88, 0.88, 0.88, 1.0)
                    few = np.isfinite(cnt[i, j]) and cnt[i, j] < min_points
                    note = f"n={int(cnt[i, j])}" if few else "constant"
                    ax.text(j, i, note, ha="center", va="center", fontsize=6.5, color="0.35")
                    continue
                rgba[i, j] = cmap(norm(v))
                colour = "white" if abs(v) > 0.6 else "black"
                lo, hi = low[i, j], high[i, j]
                sure = np.isfinite(lo) and (lo > 0 or hi < 0) and cnt[i, j] >= bold_from
                ax.text(
                    j,
                    i - 0.14,
                    f"{v:.2f}",
                    ha="center",
                    va="center",
                    fontsize=8.5,
                    color=colour,
                    fontweight="bold" if sure else "normal",
                )
                ci = f"[{lo:.1f}, {hi:.1f}]" if np.isfinite(lo) else "no interval"
                ax.text(j, i + 0.24, ci, ha="center", va="center", fontsize=6.2, color=colour)
        ax.imshow(rgba, interpolation="nearest")
        ax.set_xlim(-0.5, k - 1.5)
        ax.set_ylim(k - 0.5, 0.5)
        ax.set_xticks(range(k - 1), names[:-1], rotation=45, ha="right", fontsize=9)
        ax.set_yticks(range(1, k), names[1:], fontsize=9)
        ax.spines[:].set_visible(False)
    if drawn and k >= 2:
        fig.colorbar(
            matplotlib.cm.ScalarMappable(norm=norm, cmap=cmap),
            ax=axes.ravel().tolist(),
            shrink=0.5,
            label=f"{label} correlation (−1: opposite, 0: unrelated, +1: together)",
        )
    fig.suptitle(
        f"How metric scores move together across {n_total} scored sources "
        f"(model × seed points): {label} correlation\n"
        "each cell: correlation and, below, its 95% bootstrap interval; bold: interval "
        f"excludes 0 with ≥ {bold_from} sources; grey: fewer than {min_points} sources "
        "or a constant score",
        fontsize=12,
    )
    if hidden:
        note = (
            f"Not shown (fewer than {min_points} sources with both scores, or constant, "
            f"in every panel): {', '.join(hidden)}"
        )
        fig.supxlabel(textwrap.fill(note, 40 + int(14 * side * ncols)), fontsize=9)
    _save(fig, path)


def pr_scatter(df: pd.DataFrame, path: str | Path) -> None:
    """Precision (quality) vs recall (coverage) per model; seeds as dots, mean as a marker."""
    d = df[(df["metric"] == "precision_recall") & df["name"].isin(["precision", "recall"])]
    fig, ax = plt.subplots(figsize=(6.2, 5.2))
    if d.empty:
        ax.text(0.5, 0.5, "no precision_recall scores configured", ha="center", va="center")
    else:
        wide = d.pivot_table(
            index=["dataset", "model", "seed", "entry"], columns="name", values="value"
        ).reset_index()
        groups = list(wide.groupby(["dataset", "model", "entry"]))
        cmap = plt.get_cmap("tab10")
        for i, ((ds, model, entry), g) in enumerate(groups):
            c = cmap(i % 10)
            label = model if wide["dataset"].nunique() == 1 else f"{ds}: {model}"
            if wide["entry"].nunique() > 1:
                label += f" ({entry})"
            ax.scatter(g["recall"], g["precision"], color=c, alpha=0.35, s=18)
            ax.scatter(
                g["recall"].mean(),
                g["precision"].mean(),
                color=c,
                s=90,
                marker="D",
                edgecolor="black",
                label=label,
            )
        ax.legend(fontsize=8, loc="lower left")
    ax.plot([0, 1], [0, 1], color="grey", lw=0.6, ls=":")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("recall: share of human texts the model covers (diversity)")
    ax.set_ylabel("precision: share of model texts that look human (quality)")
    ax.set_title("kNN precision vs recall against human text")
    ax.grid(alpha=0.3)
    _save(fig, path)


def pr_curves(records: list[dict], path: str | Path) -> None:
    """PR-curves (Sajjadi et al. 2018): β (recall) against α (precision) over the λ grid, one
    curve per model; F8/F1/8 in the legend."""
    fig, ax = plt.subplots(figsize=(6.2, 5.2))
    cmap = plt.get_cmap("tab10")
    if not records:
        ax.text(0.5, 0.5, "no prd scores configured", ha="center", va="center")
    for i, rec in enumerate(records):
        ex = rec.get("extras") or {}
        if "alpha" not in ex:
            continue
        v = rec["values"]
        ax.plot(
            ex["beta"],
            ex["alpha"],
            color=cmap(i % 10),
            lw=1.6,
            label=f"{rec['source']}  F8={v['f8']:.2f}  F1/8={v['f1_8']:.2f}",
        )
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("recall β(λ): how much of the human distribution the model covers")
    ax.set_ylabel("precision α(λ): how much of the model's mass lies on human text")
    ax.set_title("Precision–recall curves against human text (PRD)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="lower left")
    _save(fig, path)


def sweep_figure(df: pd.DataFrame, path: str | Path) -> None:
    """Precision and recall as functions of N (left) and k (right), one line per source."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4))
    cmap = plt.get_cmap("tab10")
    for ax, axis in zip(axes, ("n", "k"), strict=True):
        d = df[df["sweep"] == axis]
        for i, (src, g) in enumerate(d.groupby("source")):
            g = g.groupby(axis)[["precision", "recall"]].mean().reset_index()
            ax.plot(
                g[axis],
                g["precision"],
                color=cmap(i % 10),
                marker="o",
                ms=3,
                label=f"{src} precision",
            )
            ax.plot(
                g[axis],
                g["recall"],
                color=cmap(i % 10),
                marker="s",
                ms=3,
                ls="--",
                label=f"{src} recall",
            )
        ax.set_xlabel("number of texts per side N" if axis == "n" else "neighbours k")
        if axis == "n":
            ax.set_xscale("log")
        ax.set_ylim(0, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("kNN precision (solid) / recall (dashed)")
    axes[0].set_title("P/R as N grows (k fixed)")
    axes[1].set_title("P/R as k grows (all texts)")
    axes[1].legend(fontsize=7, loc="lower right")
    _save(fig, path)


def length_figure(corr: pd.DataFrame, path: str | Path, n_sources: int) -> None:
    """Spearman correlation of each score with mean text length across sources."""
    corr = corr.sort_values("spearman")
    fig, ax = plt.subplots(figsize=(6.5, 0.6 + 0.28 * max(len(corr), 1)))
    ax.barh(
        corr.index.astype(str),
        corr["spearman"],
        color=np.where(corr["spearman"] > 0, "#c0504d", "#4f81bd"),
    )
    ax.axvline(0, color="black", lw=0.6)
    ax.set_xlim(-1.05, 1.05)
    ax.set_xlabel("Spearman correlation with mean length in words (across sources)")
    ax.set_title(f"Which scores follow text length? ({n_sources} sources; Shaib et al. 2024)")
    _save(fig, path)


def _smooth(y: np.ndarray, width: int = 25) -> np.ndarray:
    """Centred moving average (edges reflected), for readable spectra."""
    pad = width // 2
    padded = np.pad(y, pad, mode="reflect")
    return np.convolve(padded, np.ones(width) / width, mode="valid")


def surprisal_spectra(records: list[dict], path: str | Path) -> None:
    """FACE surprisal spectra (Yang et al. 2023; Liu et al. 2025): per dataset, the mean
    aligned spectrum of the human texts and of each model, smoothed, with a 95% band for the
    mean (± 1.96 SD / √n); log-scaled when every value is positive (``value=norm``)."""
    by_ds: dict[str, list[dict]] = {}
    for rec in records:
        if "spectrum" in (rec.get("extras") or {}):
            by_ds.setdefault(rec["dataset"], []).append(rec)
    n_panels = max(1, len(by_ds))
    ncols = min(2, n_panels)
    nrows = -(-n_panels // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(6.4 * ncols, 4.6 * nrows), squeeze=False, layout="constrained"
    )
    for ax in axes.flat[n_panels:]:
        ax.set_visible(False)
    if not by_ds:
        axes[0, 0].text(0.5, 0.5, "no face scores configured", ha="center", va="center")
    cmap = plt.get_cmap("tab10")
    p: dict = {}
    entry = "face"
    for ax, (ds, recs) in zip(axes.flat, sorted(by_ds.items()), strict=False):
        recs = sorted(recs, key=lambda r: r["source"])
        first = recs[0]
        sp = first["extras"]["spectrum"]
        freq = np.asarray(sp["freq"])
        n_ref = first["n"].get("reference", 1) - first["n"].get("dropped_reference", 0)
        curves = [("human (reference)", sp["reference_mean"], sp["reference_sd"], n_ref, "k")]
        for i, rec in enumerate(recs):
            s = rec["extras"]["spectrum"]
            n_c = rec["n"].get("candidate", 1) - rec["n"].get("dropped_candidate", 0)
            label = f"{rec['source']}  SO={rec['values']['so']:.3f}"
            curves.append((label, s["candidate_mean"], s["candidate_sd"], n_c, cmap(i % 10)))
        positive = all(min(c[1]) > 0 for c in curves)
        for label, mean, sd, n, color in curves:
            mean, half = np.asarray(mean), 1.96 * np.asarray(sd) / np.sqrt(max(n, 1))
            ax.plot(freq, mean, color=color, lw=0.5, alpha=0.3)
            ax.plot(freq, _smooth(mean), color=color, lw=1.6, label=label)
            ax.fill_between(
                freq, _smooth(mean - half), _smooth(mean + half), color=color, alpha=0.15
            )
        if positive:
            ax.set_yscale("log")
        p, entry = first.get("params", {}), first.get("entry", "face")
        ax.set_title(f"dataset: {ds}", fontsize=10)
        ax.set_xlabel("frequency (cycles per token)")
        ax.set_ylabel("|X(f)|: amplitude" if p.get("value") == "norm" else "Re X(f)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(
        "Spectra of per-token surprisal (FACE, Yang et al. 2023): closer to the human curve = "
        "more human-like fluctuation; bands: 95% CI of the mean\n"
        f"score entry {entry}: value={p.get('value')}, zscore={p.get('zscore')}, "
        f"align={p.get('align')}, method={p.get('method')}, window={p.get('window')}",
        fontsize=10,
    )
    _save(fig, path)


def valid_cell_figure(table: pd.DataFrame, path: str | Path) -> None:
    """FACE-2's scaling check as a figure (Liu et al. 2025, Table 2), from the scaling table
    (:func:`genmetrics.analysis.scaling.run_scaling`): per metric, the share of
    (family × dataset) cells where it orders models by size; a dot per evaluator LM, a bar for
    their mean with its 95% paired-bootstrap interval, the random baseline dashed."""
    from genmetrics.analysis.scaling import summarise_evaluators

    summary = summarise_evaluators(table).sort_values("mean", na_position="first")
    ci = {
        m: (lo, hi)
        for m, lo, hi in zip(table["metric"], table["mean_low"], table["mean_high"], strict=True)
        if np.isfinite(lo)
    }
    known = table["baseline"].dropna()
    baseline = float(known.iloc[0]) if len(known) else 0.0
    n = len(summary)
    fig, ax = plt.subplots(figsize=(8.0, 1.2 + 0.32 * max(n, 1)))
    if n == 0:
        ax.text(0.5, 0.5, "no metric has a complete (family, dataset) cell", ha="center")
    y = np.arange(n)
    ax.barh(y, summary["mean"].fillna(0), color="#9ecae1", label="mean over evaluators")
    cmap = plt.get_cmap("tab10")
    evaluators = [e for e in table["evaluator"].dropna().unique()]
    for k, ev in enumerate(evaluators):
        sub = table[table["evaluator"] == ev].set_index("metric")["ratio"]
        ax.plot(
            [sub.get(m, np.nan) for m in summary["metric"]],
            y,
            "o",
            color=cmap(k % 10),
            ms=4,
            label=f"evaluator/featurizer: {ev}",
        )
    no_eval = table[table["evaluator"].isna()].set_index("metric")["ratio"]
    if len(no_eval):
        ax.plot(
            [no_eval.get(m, np.nan) for m in summary["metric"]],
            y,
            "o",
            color="k",
            ms=4,
            label="text metric (no LM)",
        )
    for i, m in enumerate(summary["metric"]):
        lo_hi = ci.get(m)
        if lo_hi is None:
            rows = table[table["metric"] == m]
            if len(rows) == 1 and np.isfinite(rows["low"].iloc[0]):
                lo_hi = (rows["low"].iloc[0], rows["high"].iloc[0])
        if lo_hi is not None:
            ax.plot(lo_hi, [i, i], color="k", lw=1.2)
    ax.axvline(baseline, ls="--", color="grey", label=f"random ({baseline:.2f})")
    ax.set_yticks(y)
    ax.set_yticklabels(summary["metric"], fontsize=7)
    ax.set_xlim(0, 1.02)
    ax.set_xlabel("valid-cell ratio: share of (family × dataset) cells ordered larger ≻ smaller")
    cells = int(table["cells"].max()) if len(table) else 0
    ax.set_title(f"Does the metric rank bigger models higher? ({cells} cells; FACE-2 check)")
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    _save(fig, path)


#: proposal kinds of the OmniInput toy, in the figure's order, with colour-blind-safe colours
_OMNI_STYLE = {
    "exact": ("#000000", "exact (enumeration)"),
    "uniform": ("#0072B2", "Wang-Landau, uniform proposal"),
    "gradient": ("#D55E00", "Wang-Landau, gradient proposal (GWL)"),
    "monte_carlo": ("#009E73", "uniform Monte Carlo"),
}


def omniinput_toy_figure(
    exact: str | Path, results: dict[str, str | Path], validation: str | Path, path: str | Path
) -> None:
    """The OmniInput toy (Liu et al., §3.2): (a) ρ(z), the number of inputs per output bin,
    estimated vs exact on a log scale; (b) r(z), the share of valid inputs per bin, exact vs
    from each run's annotated samples; (c) the PR curves. Equal evaluation budgets."""
    from genmetrics.io import read_json
    from genmetrics.omniinput.curves import precision_recall_curve
    from genmetrics.omniinput.jobs import read_exact
    from genmetrics.omniinput.sampler import read_result
    from genmetrics.omniinput.toy import digit_sum_rule
    from genmetrics.omniinput.validation import estimated_r

    bins, ln_rho, r, extra = read_exact(exact)
    val = read_json(validation)
    m = val["toy"]["modulus"]
    centers = bins.centers
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.4), constrained_layout=True)
    ax = axes[0]
    ax.semilogy(centers, np.exp(ln_rho), "-", color="k", lw=2.5, label=_OMNI_STYLE["exact"][1])
    curves = {"exact": precision_recall_curve(ln_rho, r, bins)}
    r_hats = {}
    for kind, p in results.items():
        res = read_result(p)
        color, label = _OMNI_STYLE[kind]
        e = val["proposals"][kind]
        ax.semilogy(
            centers,
            np.exp(res.ln_rho),
            "o",
            ms=3.5,
            color=color,
            label=f"{label}: max |ln ρ̂ − ln ρ| {e['max_abs_log_rho_error']:.2f}",
        )
        r_hat = estimated_r(res.samples, lambda x: digit_sum_rule(x, m), bins.n)
        r_hats[kind] = r_hat
        reached = np.isfinite(res.ln_rho)
        curves[kind] = precision_recall_curve(
            res.ln_rho, np.where(reached, np.nan_to_num(r_hat), np.nan), bins
        )
    ax.set_xlabel("z: mean NLL of the input (nats per digit)")
    ax.set_ylabel("ρ(z): inputs in the bin (log scale)")
    ax.set_title(f"(a) Output distribution over all {int(extra['space_size']):,} inputs")
    ax.legend(fontsize=7)
    ax = axes[1]
    ax.plot(centers, r, "-", color="k", lw=2.5, label="exact share of valid inputs")
    for kind, r_hat in r_hats.items():
        color, label = _OMNI_STYLE[kind]
        ax.plot(centers, r_hat, "o", ms=3.5, color=color, label=f"{label} (annotated samples)")
    ax.set_xlabel("z: mean NLL of the input (nats per digit)")
    ax.set_ylabel(f"r(z): share with digit sum divisible by {m}")
    ax.set_title("(b) Annotation per bin")
    ax.set_ylim(-0.03, 1.03)
    ax.legend(fontsize=7)
    ax = axes[2]
    for kind, c in curves.items():
        color, label = _OMNI_STYLE[kind]
        extra_label = ""
        if kind != "exact":
            extra_label = f": L∞ error {val['proposals'][kind]['pr_curve_linf_error']:.3f}"
        ax.plot(
            c["recall"],
            c["precision"],
            "-" if kind == "exact" else "--",
            color=color,
            lw=2.5 if kind == "exact" else 1.5,
            label=label + extra_label,
        )
    ax.set_xlabel("recall: share of all valid inputs selected (z ≤ λ)")
    ax.set_ylabel("precision: share of selected inputs that are valid")
    ax.set_title("(c) Precision-recall over the input space")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=7)
    spec = val["toy"]
    fig.suptitle(
        f"OmniInput toy (Liu et al.): tiny GPT-2 on {spec['length']}-digit sequences with digit "
        f"sum divisible by {m}; {bins.n} bins; equal model-evaluation budgets",
        fontsize=11,
    )
    _save(fig, path)


def omniinput_runs_figure(records: dict[str, dict], path: str | Path) -> None:
    """OmniInput precision-recall curves per language model (Liu et al.): precision = share
    of the inputs with output z ≤ λ that the annotator accepts, recall = share of all accepted
    inputs with z ≤ λ; both weighted by the Wang-Landau estimate of how many inputs each bin
    holds. Right: precision against the threshold λ."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), constrained_layout=True)
    cmap = plt.get_cmap("tab10")
    for k, (run, rec) in enumerate(sorted(records.items())):
        c = rec["extras"]["curve"]
        lam = np.asarray(c["lambda"], float)
        p = np.array([np.nan if v is None else v for v in c["precision"]], float)
        rc = np.array([np.nan if v is None else v for v in c["recall"]], float)
        label = f"{run} (AUPR {rec['values']['aupr']:.3f})"
        sampler = rec.get("extras", {}).get("sampler", {})
        if sampler and not sampler.get("converged", True):
            label += (
                f"\nnot converged: {sampler['model_evaluations']:,} evaluations, "
                f"{sampler['stages']} ln f halvings"
            )
        axes[0].plot(rc, p, "-o", ms=3, color=cmap(k % 10), label=label)
        axes[1].plot(lam, p, "-o", ms=3, color=cmap(k % 10), label=run)
    axes[0].set_xlabel("recall (share of accepted inputs selected)")
    axes[0].set_ylabel("precision (share of selected inputs accepted)")
    axes[0].set_title("PR curve over the whole input space")
    axes[0].set_xlim(-0.02, 1.02)
    axes[1].set_xlabel("λ: threshold on z, mean NLL (nats per token)")
    axes[1].set_ylabel("precision at z ≤ λ")
    axes[1].set_title("Precision by threshold")
    for ax in axes:
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize=8)
    fig.suptitle("OmniInput (Liu et al.): models judged over every input of a fixed length")
    _save(fig, path)
