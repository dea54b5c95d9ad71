"""How stable is each ranking of models across featurizers?

Distribution metrics read a featurizer's embeddings, and the order of models can flip between
encoders. For every group of entries that differ only in their featurizer
(:func:`genmetrics.plan.robustness.featurizer_groups`), every dataset and every headline value
of the metric, the models are ranked under each featurizer by the mean over their generation
seeds of the value, in its better direction (rank 1 = best; ties share the average rank), and
every pair of featurizers (A, B) gets:

* Kendall's τ-b between the two rankings over the n models scored under both,
  τ-b = Σ_{i<j} sign(a_i − a_j)·sign(b_i − b_j) / √(pairs untied in A · pairs untied in B)
  (:func:`genmetrics.analysis.statistics.cross_correlation`), and its two-sided p-value
  (``scipy.stats.kendalltau``: exact without ties). Below :data:`MIN_MODELS` models τ is
  "too few"; with fewer than :data:`~genmetrics.analysis.statistics.MIN_CORRELATION_POINTS`
  models even τ = 1 is within chance (p = 1/3 for 3 models), which the p-value shows;
* its percentile interval from the scores' own bootstrap: when every score record carries
  ``interval.replicates`` (B values per headline value, resampling prompts, written by the
  score job), replicate b of each model is the mean of replicate b over its seeds — drawn
  with replacement when it has several (a hierarchical bootstrap: seeds, then the prompts
  each score job resampled; the seed draws come from ``numpy.random.default_rng`` of the
  records' ``seed``, as the score tables draw them, so every model with as many seeds and
  both featurizers, which scored the same texts, draw the same seeds in replicate b) —, the
  models are ranked with their replicate-b values under A and under B, and
  τ_b is taken; the (1 − level)/2 and (1 + level)/2 quantiles of the B τ_b are the interval
  (level: the records'). When the records carry no replicates (older records, or the
  bootstrap switched off) there is no interval, and the table says why; an interval of zero
  width (every replicate gives the same τ, e.g. [1, 1]) is *degenerate*
  (:func:`~genmetrics.analysis.statistics.degenerate_interval`) and reported as such;
* whether the top model is the same (the models tied at rank 1 under A are those under B).

The human references are not ranked: they are the reference of a distribution metric, and a
reference-free score of them (Vendi) is no model's.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from genmetrics import GenmetricsError
from genmetrics.analysis.statistics import (
    MIN_CORRELATION_POINTS,
    cross_correlation,
    degenerate_interval,
    percentile_interval,
    seed_bootstrap,
    snap,
)
from genmetrics.paths import REFERENCES

#: fewest models a τ is given for: with two, τ is the sign of one pair
MIN_MODELS = 3
NO_REPLICATES = "no interval: the scores carry no bootstrap replicates"

COLUMNS = [
    "dataset",
    "metric",
    "value",
    "direction",
    "featurizer_a",
    "featurizer_b",
    "entry_a",
    "entry_b",
    "n_models",
    "tau",
    "p_value",
    "tau_low",
    "tau_high",
    "level",
    "resamples",
    "interval",
    "method",
    "same_top",
    "top_a",
    "top_b",
    "ranking_a",
    "ranking_b",
]
RANK_COLUMNS = ["dataset", "metric", "value", "featurizer", "entry", "model", "n_seeds", "mean"]
RANK_COLUMNS += ["rank"]


@dataclass(frozen=True)
class Scores:
    """One entry's value on one dataset: per model the mean over seeds (NaN: a score without
    the value) and, per model and seed, the replicates, or why there are none."""

    means: dict[str, float]
    seeds: dict[str, int]
    replicates: dict[str, dict[int, np.ndarray]] | None  # model -> seed -> (B,)
    why: str | None  # no replicates: the reason
    level: float | None = None
    method: str | None = None
    unit: str | None = None
    seed: int = 0  # the records' seed: of the draws over prompts, and here over seeds


def _model_seed(record: Mapping[str, Any]) -> tuple[str, int]:
    """``smollm2-pure/seed1`` → ``("smollm2-pure", 1)``; a source without a seed: seed 0."""
    source = str(record.get("source", ""))
    model, sep, seed = source.rpartition("/seed")
    if not sep or not seed.isdigit():
        return source, 0
    return model, int(seed)


def _float(v: Any) -> float:
    return np.nan if v is None else float(v)


def entry_scores(records: Iterable[Mapping[str, Any]], value: str) -> Scores:
    """The models' means over seeds of ``value`` in ``records`` (one entry, one dataset), with
    each seed's replicates of ``record["interval"]`` when every record has them for ``value``
    (the same count and level), else the reason there are none."""
    per: dict[str, list[float]] = {}
    reps: dict[str, dict[int, np.ndarray]] = {}
    why = None
    facts: set[tuple] = set()
    draw_seeds: set[int] = set()
    for r in records:
        model, seed = _model_seed(r)
        if model == REFERENCES:
            continue
        where = f"{r.get('entry')} on {r.get('dataset')}, {r.get('source')}"
        if value not in (r.get("values") or {}):
            raise GenmetricsError(f"featurizer robustness: the score of {where} has no {value!r}")
        per.setdefault(model, []).append(_float(r["values"][value]))
        iv = r.get("interval") or {}
        got = (iv.get("replicates") or {}).get(value) if iv.get("method") else None
        if got is None:
            why = why or (
                NO_REPLICATES + (f" ({where}: {iv['reason']})" if iv.get("reason") else "")
            )
            continue
        reps.setdefault(model, {})[seed] = np.array([_float(v) for v in got])
        facts.add((len(got), iv.get("level"), str(iv.get("method")), iv.get("unit")))
        draw_seeds.add(int(iv.get("seed") or 0))
    means = {m: float(np.mean(v)) for m, v in sorted(per.items())}
    seeds = {m: len(v) for m, v in sorted(per.items())}
    counts, levels = sorted({f[0] for f in facts}), {f[1] for f in facts}
    if why is None and len(counts) > 1:
        why = f"no interval: the scores' bootstrap replicate counts differ {counts}"
    if why is None and len(levels) > 1:
        why = "no interval: the scores' interval levels differ"
    if why is not None or not facts:
        return Scores(means, seeds, None, why or NO_REPLICATES)
    method = ", ".join(sorted({f[2] for f in facts}))
    unit = ", ".join(sorted({str(f[3]) for f in facts if f[3]})) or None
    return Scores(means, seeds, reps, None, levels.pop(), method, unit, min(draw_seeds))


def kendall_tau(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """τ-b between ``a`` and ``b`` along the last axis (models), batched over leading axes;
    NaN where a side is constant."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return cross_correlation("kendall", a[..., None], b[..., None], axis=-2)[..., 0, 0]


def ranks(means: Mapping[str, float], direction: str) -> dict[str, float]:
    """Rank of each model, 1 = best in ``direction`` (``higher``/``lower``); ties share the
    average rank."""
    from scipy import stats

    names = list(means)
    x = np.array([means[m] for m in names], dtype=float)
    signed = -x if direction == "higher" else x
    return dict(zip(names, stats.rankdata(snap(signed), method="average"), strict=True))


def ranking_text(rank: Mapping[str, float]) -> str:
    """``"a > b = c"``: the models best first, ``=`` between tied ranks."""
    order = sorted(rank, key=lambda m: (rank[m], m))
    out = order[:1]
    for prev, m in itertools.pairwise(order):
        out += ["=" if rank[m] == rank[prev] else ">", m]
    return " ".join(out)


def _replicate_means(
    a: Scores, b: Scores, models: Sequence[str], seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """(B, n) replicate values of the models under A and under B: for a model with S > 1
    seeds (scored under both), replicate b averages the replicates b of S seeds drawn with
    replacement by :func:`~genmetrics.analysis.statistics.seed_bootstrap` (the draw of
    hierarchical seed bootstrap of the score tables: the same for every model with S seeds,
    and under both featurizers, which scored the same texts); with one seed, that seed's
    replicates."""
    assert a.replicates is not None and b.replicates is not None
    n_boot = len(next(iter(a.replicates[models[0]].values())))
    xb, yb = np.empty((n_boot, len(models))), np.empty((n_boot, len(models)))
    for j, m in enumerate(models):
        seeds = sorted(set(a.replicates[m]) & set(b.replicates[m]))
        ra = np.stack([a.replicates[m][s] for s in seeds])  # (S, B)
        rb = np.stack([b.replicates[m][s] for s in seeds])
        xb[:, j] = seed_bootstrap(ra, 0.95, seed)[0]  # same seed: the same draw of seeds
        yb[:, j] = seed_bootstrap(rb, 0.95, seed)[0]
    return xb, yb


def compare(
    a: Scores,
    b: Scores,
    direction: str,
    names: tuple[str, str] = ("A", "B"),
    level: float = 0.95,
) -> dict[str, Any]:
    """The table's numbers for one pair of featurizers (``names``): over the models with a
    value under both, τ-b, its p-value, the percentile interval of the replicates' τ_b (or
    why none), the top models and the two rankings. ``level``: when the records state none."""
    from scipy import stats

    models = sorted(m for m in set(a.means) & set(b.means) if np.isfinite(a.means[m] + b.means[m]))
    n = len(models)
    rank_a = ranks({m: a.means[m] for m in models}, direction)
    rank_b = ranks({m: b.means[m] for m in models}, direction)
    top_a = sorted(m for m in models if rank_a[m] == min(rank_a.values()))
    top_b = sorted(m for m in models if rank_b[m] == min(rank_b.values()))
    out: dict[str, Any] = {
        "n_models": n,
        "tau": np.nan,
        "p_value": np.nan,
        "tau_low": np.nan,
        "tau_high": np.nan,
        "level": np.nan,
        "resamples": 0,
        "method": None,
        "same_top": (top_a == top_b) if n >= 2 else None,
        "top_a": ", ".join(top_a),
        "top_b": ", ".join(top_b),
        "ranking_a": ranking_text(rank_a),
        "ranking_b": ranking_text(rank_b),
    }
    if n < MIN_MODELS:
        out["interval"] = f"too few: {n} model{'s' * (n != 1)} (τ needs at least {MIN_MODELS})"
        return out
    x = np.array([a.means[m] for m in models])
    y = np.array([b.means[m] for m in models])
    tau = float(kendall_tau(x, y))
    out["tau"] = tau
    if not np.isfinite(tau):
        side = names[0] if np.ptp(snap(x)) == 0 else names[1]
        out["interval"] = f"no τ: every model has the same value under {side}"
        return out
    out["p_value"] = float(stats.kendalltau(snap(x), snap(y)).pvalue)
    if a.replicates is None or b.replicates is None:
        out["interval"] = a.why if a.replicates is None else b.why
        return out
    levels = {a.level if a.level is not None else level, b.level if b.level is not None else level}
    counts = {len(r) for s in (a, b) for per in s.replicates.values() for r in per.values()}
    if len(levels) > 1 or len(counts) > 1:
        out["interval"] = "no interval: the two featurizers' replicates differ in level or count"
        return out
    level = levels.pop()
    unmatched = [m for m in models if not set(a.replicates[m]) & set(b.replicates[m])]
    if unmatched:
        out["interval"] = f"no interval: {unmatched[0]} has no seed scored under both featurizers"
        return out
    xb, yb = _replicate_means(a, b, models, min(a.seed, b.seed))
    taus = kendall_tau(xb, yb)
    finite = int(np.isfinite(taus).sum())
    out["resamples"] = finite
    out["level"] = level
    if finite == 0:
        out["interval"] = "no interval: in every replicate one featurizer ties every model"
        return out
    low, high = percentile_interval(taus, level)
    out["tau_low"], out["tau_high"] = float(low), float(high)
    out["method"] = (
        a.method if a.method == b.method else f"{names[0]}: {a.method}; {names[1]}: {b.method}"
    )
    what = f"{level:.0%} percentile interval of τ_b over {finite} replicates of the scores'"
    what += f" resampling of their {a.unit or 'item'}s (seeds drawn too where a model has several)"
    if finite < len(taus):
        what += f"; {len(taus) - finite} replicate(s) with a constant side left out"
    if degenerate_interval(low, high):
        out["interval"] = f"degenerate: every replicate gives τ = {low:.2f} ({what})"
    else:
        out["interval"] = what
    return out


def robustness_table(
    records: Iterable[Mapping[str, Any]], groups: Sequence[Mapping[str, Any]]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The table (:data:`COLUMNS`, one row per group, dataset, headline value and pair of
    featurizers) and the ranks behind it (:data:`RANK_COLUMNS`, one row per model under each
    featurizer), from the score records of the groups' entries (:mod:`genmetrics.plan.robustness`
    settings)."""
    by: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for r in records:
        by.setdefault((str(r.get("dataset")), str(r.get("entry"))), []).append(r)
    rows, rank_rows = [], []
    for g in groups:
        feats, entries = list(g["featurizers"]), g["entries"]
        for ds in g["datasets"]:
            for value, direction in g["values"]:
                scores = {}
                for f in feats:
                    recs = by.get((ds, entries[f]), [])
                    if not recs:
                        raise GenmetricsError(
                            f"featurizer robustness: no score of entry {entries[f]!r} on {ds!r}"
                        )
                    scores[f] = entry_scores(recs, value)
                    finite = {m: v for m, v in scores[f].means.items() if np.isfinite(v)}
                    for m, r in ranks(finite, direction).items():
                        rank_rows.append(
                            [ds, g["metric"], value, f, entries[f], m, scores[f].seeds[m]]
                            + [scores[f].means[m], float(r)]
                        )
                for fa, fb in itertools.combinations(feats, 2):
                    row = {
                        "dataset": ds,
                        "metric": g["metric"],
                        "value": value,
                        "direction": direction,
                        "featurizer_a": fa,
                        "featurizer_b": fb,
                        "entry_a": entries[fa],
                        "entry_b": entries[fb],
                    }
                    row.update(compare(scores[fa], scores[fb], direction, (fa, fb)))
                    rows.append(row)
    return (
        pd.DataFrame(rows, columns=COLUMNS),
        pd.DataFrame(rank_rows, columns=RANK_COLUMNS),
    )


# ---------------------------------------------------------------- Markdown


def _fmt(v: Any, digits: int = 2) -> str:
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "–"
    return f"{float(v):.{digits}f}"


def _row(cells: Sequence[Any]) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def interval_cell(row: Mapping[str, Any]) -> str:
    """The interval as the table prints it: ``[low, high]``, or the words of why not."""
    low, high = row["tau_low"], row["tau_high"]
    if np.isfinite(low) and not degenerate_interval(low, high):
        return f"[{low:.2f}, {high:.2f}]"
    text = str(row["interval"])
    return text.split(" (")[0] if text.startswith("degenerate") else text


def robustness_markdown(table: pd.DataFrame, ranks_: pd.DataFrame) -> str:
    """The table in Markdown, then per dataset and value each model's mean and rank under
    every featurizer."""
    lines = [
        "# How stable is each ranking of models across featurizers?",
        "",
        "For each metric computed under two featurizers (entries with the same metric, params, "
        "reference and datasets), the models are ranked by the mean over their seeds of the "
        "headline value, best first; τ-b is Kendall's rank agreement of the two rankings (1: the "
        "same order, −1: reversed), p its two-sided p-value (with fewer than "
        f"{MIN_CORRELATION_POINTS} models even τ = 1 can be chance). The interval is the "
        "percentile interval of τ_b over the scores' bootstrap replicates (each replicate "
        "ranks the models with their replicate values under both featurizers, a model's seeds "
        "drawn with replacement where it has several); *degenerate*: "
        "every replicate gave the same τ, which is no interval. Same top: the best model is "
        "the same under both.",
        "",
        _row(
            ["dataset", "metric", "value", "A", "B", "models", "τ-b", "p", "interval"]
            + ["same top", "ranking under A", "ranking under B"]
        ),
        _row(["---"] * 5 + ["---:"] * 4 + ["---"] * 3),
    ]
    if table.empty:
        lines.append(_row(["–"] * 12))
    for r in table.to_dict("records"):
        same = "–" if r["same_top"] is None else ("yes" if r["same_top"] else "no")
        lines.append(
            _row(
                [r["dataset"], r["metric"], r["value"], r["featurizer_a"], r["featurizer_b"]]
                + [r["n_models"], _fmt(r["tau"]), _fmt(r["p_value"]), interval_cell(r), same]
                + [r["ranking_a"], r["ranking_b"]]
            )
        )
    lines.append("")
    for (ds, metric, value), sub in ranks_.groupby(["dataset", "metric", "value"], sort=False):
        feats = list(dict.fromkeys(sub["featurizer"]))
        what = metric if value == metric else f"{metric} / {value}"
        lines += [f"## {ds}: {what} per model (mean over seeds, rank; 1 = best)", ""]
        lines += [_row(["model", "seeds", *feats]), _row(["---", "---:"] + ["---:"] * len(feats))]
        for model, m in sub.groupby("model", sort=True):
            cells = {
                r["featurizer"]: f"{r['mean']:.4g} ({r['rank']:g})" for r in m.to_dict("records")
            }
            lines.append(
                _row([model, int(m["n_seeds"].max())] + [cells.get(f, "–") for f in feats])
            )
        lines.append("")
    return "\n".join(lines)
