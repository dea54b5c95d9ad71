"""Bars of a value per model with standard errors over seeds (Le Bronnec et al. (2024),
Fig. B.2: MAUVE), and lines of precision and recall against the number of in-context
examples (their Fig. 8). Drawing only: the tables come from
:mod:`genmetrics.analysis.seed_means`."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from genmetrics.analysis.headline import SATURATION_TOLERANCE, saturated_bound
from genmetrics.analysis.seed_means import T_OVER_SEEDS
from genmetrics.analysis.statistics import t_interval
from genmetrics.analysis.units import OVER_SEEDS
from genmetrics.figures._save import save as _save
from genmetrics.figures._style import OKABE_ITO, panel_grid, size_range


def _reference_text(ref: str) -> str:
    return "the human texts" if ref in ("", "references") else f"{ref}'s texts"


def _whiskers(p: pd.DataFrame) -> np.ndarray:
    """(2, n) lower and upper whisker lengths: the table's 95% t interval over seeds (none,
    0, with one seed), :func:`genmetrics.analysis.statistics.t_interval` where the table has
    no interval columns."""
    mean = p["mean"].to_numpy(dtype=float)
    if {"ci_low", "ci_high"} <= set(p.columns):
        low, high = p["ci_low"].to_numpy(dtype=float), p["ci_high"].to_numpy(dtype=float)
    else:
        low, high = t_interval(mean, p["std"], p["n_seeds"])
    return np.nan_to_num(np.vstack([mean - low, high - mean]), nan=0.0)


def _whisker_text(p: pd.DataFrame) -> str:
    """What the panel's whiskers are, from the table's ``interval`` column (t over seeds, or
    the bootstrap over prompts and seeds: :mod:`genmetrics.analysis.seed_means`)."""
    over = set(p["interval"].dropna()) if "interval" in p.columns else set()
    boot = over - {T_OVER_SEEDS}
    if not boot:
        return "whiskers: 95% t interval of the mean (mean ± t·SE)"
    text = "whiskers: 95% bootstrap interval over prompts"
    if OVER_SEEDS in boot:
        text += " and seeds" + (" (prompts alone for 1 seed)" if len(boot) > 1 else "")
    return text + ("; t interval where none" if T_OVER_SEEDS in over else "")


def panel_sizes(scores: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(dataset, entry) → ``"n = 32 texts per seed, 32 references"`` from the tidy scores'
    ``n_candidate``/``n_reference`` (ranges where they differ)."""
    out = {}
    if not {"n_candidate", "n_reference"} <= set(scores.columns):
        return out
    for (ds, entry), g in scores.groupby(["dataset", "entry"], sort=False):
        c, r = size_range(g["n_candidate"]), size_range(g["n_reference"])
        out[ds, entry] = f"n = {c} texts per seed" + (f", {r} references" if r != "?" else "")
    return out


def value_bars(
    table: pd.DataFrame,
    path: str | Path,
    value: str = "mauve",
    features: Mapping[str, str] | None = None,
    sizes: Mapping[tuple[str, str], str] | None = None,
) -> None:
    """One panel per (dataset, entry, reference): a bar per model at its mean ``value`` over
    seeds, with the table's 95% interval as whiskers (the bootstrap over prompts and seeds
    where it has one, else the t interval over seeds; none for a single seed without a
    bootstrap, which the bar says), the number of seeds under each bar, and the value printed
    beside it. MAUVE's axis stops at 1 (its range); a whisker beyond is cut there. Each
    panel's title (wrapped to its width, so that two panels' titles never meet) names the
    dataset, the entry, its featurizer (``features``: entry → "featurizer X") and n
    (``sizes``: :func:`panel_sizes`); a panel whose models all lie within 0.01 of a bound of
    the value's range is marked saturated
    (:func:`genmetrics.analysis.headline.saturated_bound`); what the bars and whiskers are
    is said once, in the figure's title. Models keep one Okabe–Ito colour across panels."""
    import textwrap

    features, sizes = dict(features or {}), dict(sizes or {})
    t = table[table["name"] == value]
    panels = list(dict.fromkeys(zip(t["dataset"], t["entry"], t["reference"], strict=True)))
    models = list(dict.fromkeys(t["model"]))
    colour = {m: OKABE_ITO[i % len(OKABE_ITO)] for i, m in enumerate(models)}
    width = 0.9 * max(4, len(models)) + 2.0
    fig, axes = panel_grid(len(panels), width, 4.6, f"no {value}")
    chars = int(width * 11)  # characters of a 10-point title that fit a panel
    for ax, (ds, entry, ref) in zip(axes.flat, panels, strict=False):
        p = t[(t["dataset"] == ds) & (t["entry"] == entry) & (t["reference"] == ref)]
        x = np.arange(len(p))
        err = _whiskers(p)
        ax.bar(
            x,
            p["mean"],
            yerr=err,
            capsize=4,
            color=[colour[m] for m in p["model"]],
            edgecolor="black",
            linewidth=0.6,
        )
        whiskered = (
            np.isfinite(p["ci_low"].to_numpy(dtype=float))
            if "ci_low" in p.columns
            else p["n_seeds"].to_numpy() >= 2
        )
        for xi, (mean, n) in enumerate(zip(p["mean"], p["n_seeds"], strict=True)):
            # the value inside the bar's top (the axis of a proportion ends at 1)
            ax.text(xi - 0.36, mean - 0.01, f"{mean:.3f}", ha="left", va="top", fontsize=8)
            seeds = f"n = {int(n)} seeds" if n != 1 else "1 seed"
            seeds += "" if n != 1 or whiskered[xi] else ":\nno interval"
            ax.text(xi, 0, seeds, ha="center", va="bottom", fontsize=7, color="white")
        ax.set_xticks(x, list(p["model"]), rotation=20, ha="right")
        top = float(np.nanmax(p["mean"] + err[1])) if len(p) else 1.0
        ax.set_ylim(0, 1.0 if value == "mauve" else top * 1.25)
        ax.set_ylabel(f"{value} (higher: closer to the reference)")
        lines = [
            f"{ds}: {entry} ({features.get(entry, 'featurizer not given')}) against "
            f"{_reference_text(ref)}",
            sizes.get((ds, entry), ""),
        ]
        bound = saturated_bound(p["mean"], "0–1") if value == "mauve" else None
        if bound is not None:
            lines.append(
                f"SATURATED: every model within {SATURATION_TOLERANCE:g} of {bound:g}: "
                "this panel cannot tell them apart"
            )
        title = "\n".join(textwrap.fill(t, chars) for t in lines if t)
        ax.set_title(title, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    if panels:
        whiskers = sorted({_whisker_text(t[t["dataset"] == d]) for d, _, _ in panels})
        fig.suptitle(
            f"{value} per model; bars: mean over seeds; " + "; ".join(whiskers), fontsize=10
        )
    _save(fig, path)


def few_shot_lines(
    table: pd.DataFrame, path: str | Path, parsed: pd.DataFrame | None = None
) -> None:
    """Per (dataset, entry, reference) two panels, precision and recall against the number of
    in-context examples n, one line per model (mean over seeds, whiskers: the table's 95%
    interval, the bootstrap over prompts and seeds where it has one, else the t interval over
    seeds, none with one seed; the legend gives the seeds per point); with
    ``parsed`` (:func:`genmetrics.analysis.seed_means.parsed_table`) one more panel per
    dataset: the share of outputs the parser cut back to one biography, mean over seeds."""
    panels = list(
        dict.fromkeys(zip(table["dataset"], table["entry"], table["reference"], strict=True))
    )
    names = [n for n in ("precision", "recall") if n in set(table["name"])] or ["precision"]
    models = list(dict.fromkeys([*table["model"], *([] if parsed is None else parsed["model"])]))
    colour = {m: OKABE_ITO[i % len(OKABE_ITO)] for i, m in enumerate(models)}
    parsed_sets = [] if parsed is None else list(dict.fromkeys(parsed["dataset"]))
    n_panels = len(panels) * len(names) + len(parsed_sets)
    fig, axes = panel_grid(n_panels, 5.2, 4.2, "no few-shot scores")
    cells = [(p, n) for p in panels for n in names]
    for ax, ds in zip(list(axes.flat)[len(cells) :], parsed_sets, strict=False):
        d = parsed[parsed["dataset"] == ds]
        for m, q in d.groupby("model", sort=False):
            share = q.groupby("n")["parsed_share"].mean()
            ax.plot(
                share.index,
                share.to_numpy(),
                marker="o",
                color=colour.get(m, "black"),
                label=m,
                clip_on=False,
            )
        ax.set_xticks(sorted(set(d["n"])))
        ax.set_xlabel("in-context examples n")
        ax.set_ylabel("share of outputs parsed as one biography")
        ax.set_ylim(0, 1)  # a proportion: its axis ends at 1 (markers at 1 not clipped)
        ax.set_title(f"{ds}: outputs the parser could read (unparsed ones are kept)", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    for ax, ((ds, entry, ref), name) in zip(axes.flat, cells, strict=False):
        p = table[
            (table["dataset"] == ds)
            & (table["entry"] == entry)
            & (table["reference"] == ref)
            & (table["name"] == name)
        ]
        for m, q in p.groupby("model", sort=False):
            seeds = sorted({int(k) for k in q["n_seeds"]})
            count = str(seeds[0]) if len(seeds) == 1 else f"{seeds[0]}–{seeds[-1]}"
            ax.errorbar(
                q["n"],
                q["mean"],
                yerr=_whiskers(q),
                marker="o",
                capsize=3,
                color=colour[m],
                label=f"{m} ({count} seed{'s' * (seeds != [1])})",
                clip_on=False,
            )
        ax.set_xticks(sorted(set(p["n"])))
        ax.set_xlabel("in-context examples n")
        ax.set_ylabel(f"{name} ({'quality' if name == 'precision' else 'diversity'})")
        ax.set_ylim(0, 1)  # a proportion: its axis ends at 1 (markers at 1 not clipped)
        whiskers = _whisker_text(p).replace("(mean ± t·SE)", "(none with 1 seed)")
        lines = [f"{ds}: {name} against n ({entry}, vs {_reference_text(ref)})"]
        lines.append(f"mean over seeds; {whiskers}")
        # wrapped to the panel's width: side-by-side titles do not meet
        ax.set_title("\n".join(textwrap.fill(t, 52) for t in lines), fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    _save(fig, path)
