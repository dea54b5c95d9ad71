"""Do our metrics agree with people? Scores on judged texts and their correlation with human
criteria, with bootstrap intervals.

Scoring goes through the metric registry (:func:`genmetrics.metrics.compute`), the same code
that scores a model in the workflow:

* :func:`score_texts` — one value per text and metric value: a paired metric with a
  reference (``rouge``, ``bertscore``) is run once on all (text, reference) pairs and its
  per-pair values (``extras["per_pair"]``) are used; any other text metric is run on each
  text alone (``bleu`` on one pair = sentence BLEU; ``rep_n`` on one text).

Correlation levels (Deutsch, Dror & Roth 2021, "A Statistical Analysis of Summarization
Evaluation Metrics using Resampling Methods"; Bhandari et al. 2020 report the first two):

* ``system`` — a system's score is the mean over items of its texts' scores, for the metric
  and the human criterion; the correlation runs across systems. Bootstrap: systems *and*
  items resampled with replacement ("boot-both"), means recomputed on the resampled items.
* ``item`` (summary level) — per item, the correlation across the systems' texts of that
  item, averaged over the items where it is defined (both sides vary). Bootstrap: items.
* ``pooled`` — one correlation over every (item, system) text (Maynez et al. 2020).
  Bootstrap: items, with all their systems.

Methods: Pearson, Spearman (Pearson of average ranks) and Kendall τ-b = Σ_{i<j} s^x_ij s^y_ij
/ sqrt(Σ (s^x_ij)² Σ (s^y_ij)²) with s_ij = sign(v_i − v_j), all as scipy.stats computes
them; for the rank methods values are first rounded to 12 significant digits, so that means
equal up to floating-point rounding tie. Percentile intervals; a replicate where a correlation is undefined (a constant side)
is left out of that cell and ``n_boot_used`` says how many remained. Every random draw comes
from ``numpy.random.default_rng(seed)``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from genmetrics import GenmetricsError
from genmetrics.analysis.agreement import agreement, metric_judgments
from genmetrics.analysis.judgments import JudgedTexts, PairwiseJudgments
from genmetrics.metrics import compute, get
from genmetrics.metrics.registry import HIGHER

LEVELS = ("system", "item", "pooled")
METHODS = ("kendall", "spearman", "pearson")


# ---------------------------------------------------------------------------- scoring


def entry_values(metric: str, values: Sequence[str] | None = None) -> list[str]:
    """The values of ``metric`` an entry reports: ``values`` (checked) or all it declares."""
    declared = list(get(metric).values)
    if values is None:
        return declared
    unknown = [v for v in values if v not in declared]
    if unknown:
        raise GenmetricsError(f"metric {metric!r} has no value(s) {unknown}; it has {declared}")
    return list(values)


def applies(metric: str, has_reference: bool) -> str | None:
    """None if ``metric`` can score judged texts one by one, else why not."""
    m = get(metric)
    if m.input != "texts":
        return f"needs {m.input}, not texts"
    if m.reference == "required" and not m.paired:
        return "compares two sets of texts, not a text with its reference"
    if m.reference == "required" and not has_reference:
        return "needs a reference text, and this set has none"
    if m.reference == "prompts":
        return "needs prompts"
    return None


def score_texts(
    texts: Sequence[str],
    references: Sequence[str] | None,
    entries: Mapping[str, Mapping[str, Any]],
) -> pd.DataFrame:
    """One row per text, one column ``<entry>.<value>`` per value of every entry.

    ``entries[name] = {"metric": ..., "params": {...}, "values": [...] or None}``. A paired
    metric with a reference is computed once over all pairs and its
    ``extras["per_pair"][value]`` (one number per pair) are used when it returns them; every
    other metric (and a paired one without them, e.g. corpus ``bleu``) is computed on each
    text alone (with its reference when it takes one). A text on which the metric is
    undefined (it raises GenmetricsError, e.g. ``rep_n`` on a two-word text) gets NaN, and
    ``df.attrs["undefined"][entry]`` counts such texts and keeps the first message.
    """
    from tqdm.auto import tqdm

    texts = list(texts)
    refs = None if references is None else list(references)
    if refs is not None and len(refs) != len(texts):
        raise GenmetricsError(f"score_texts: {len(texts)} texts vs {len(refs)} references")
    out: dict[str, np.ndarray] = {}
    undefined: dict[str, tuple[int, str]] = {}
    for name, e in entries.items():
        metric, params = e["metric"], e.get("params") or {}
        why = applies(metric, refs is not None)
        if why:
            raise GenmetricsError(f"agreement.metrics.{name}: {metric} {why}")
        values = entry_values(metric, e.get("values"))
        m = get(metric)
        takes_ref = m.reference == "required"
        per = None
        if m.paired and takes_ref:  # one run over all pairs, when the metric keeps per-pair values
            per = compute(metric, texts, refs, params).extras.get("per_pair")
        if isinstance(per, Mapping) and all(v in per for v in values):
            for v in values:
                arr = np.asarray(per[v], dtype=float)
                if arr.shape != (len(texts),):
                    raise RuntimeError(f"metric {metric!r}: per_pair[{v!r}] has shape {arr.shape}")
                out[f"{name}.{v}"] = arr
            continue
        cols = {v: np.full(len(texts), np.nan) for v in values}
        for i, t in enumerate(tqdm(texts, desc=f"{name} per text", leave=False)):
            try:
                res = compute(metric, [t], [refs[i]] if takes_ref else None, params)
            except GenmetricsError as err:  # e.g. rep_n on a 2-word text: no value, counted
                n, first = undefined.get(name, (0, f"text {i}: {err}"))
                undefined[name] = (n + 1, first)
                continue
            for v in values:
                cols[v][i] = res.values[v]
        out.update({f"{name}.{v}": a for v, a in cols.items()})
    df = pd.DataFrame(out)
    df.attrs["undefined"] = {k: {"texts": n, "first": msg} for k, (n, msg) in undefined.items()}
    return df


def directions(entries: Mapping[str, Mapping[str, Any]]) -> dict[str, bool]:
    """``<entry>.<value>`` → True when higher is better (the metric contract's direction)."""
    out = {}
    for name, e in entries.items():
        declared = get(e["metric"]).values
        for v in entry_values(e["metric"], e.get("values")):
            out[f"{name}.{v}"] = declared[v] == HIGHER
    return out


# ---------------------------------------------------------------------------- correlation


def _blocks(table: pd.DataFrame, cols: Sequence[str]) -> tuple[np.ndarray, list, list, int]:
    """[item, system, col] array over the items that have every system (and no NaN)."""
    systems = sorted(table["system"].unique())
    complete = table.dropna(subset=list(cols))
    counts = complete.groupby("item")["system"].nunique()
    keep = sorted(counts.index[counts == len(systems)])
    dropped = int(table["item"].nunique() - len(keep))
    sub = complete[complete["item"].isin(keep)].set_index(["item", "system"])
    idx = pd.MultiIndex.from_product([keep, systems])
    arr = sub.reindex(idx)[list(cols)].to_numpy(float).reshape(len(keep), len(systems), len(cols))
    return arr, keep, systems, dropped


def _snap(x: np.ndarray) -> np.ndarray:
    """``x`` rounded to 12 significant digits, so that values equal up to floating-point
    rounding (two systems' means of the same ratings summed in another order) tie in ranks
    and signs, as exact equal values would."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(x == 0, 1.0, 10.0 ** np.floor(np.log10(np.abs(x))))
    scale = np.where(np.isfinite(scale), scale, 1.0)
    return np.round(x / scale, 11) * scale


def _ranks(x: np.ndarray, axis: int) -> np.ndarray:
    return stats.rankdata(_snap(x), axis=axis, method="average")


def _pearson(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    """Pearson r between every column of x (…, n, K) and of y (…, n, C) along ``axis`` n:
    shape (…, K, C); NaN where a side is constant."""
    x = np.moveaxis(x, axis, -2)
    y = np.moveaxis(y, axis, -2)
    xc = x - x.mean(axis=-2, keepdims=True)
    yc = y - y.mean(axis=-2, keepdims=True)
    num = np.einsum("...nk,...nc->...kc", xc, yc)
    sx = np.sqrt((xc**2).sum(axis=-2))
    sy = np.sqrt((yc**2).sum(axis=-2))
    # a side is constant when its spread is rounding noise of its own scale
    flat_x = sx <= 1e-12 * np.abs(x).max(axis=-2) * np.sqrt(x.shape[-2])
    flat_y = sy <= 1e-12 * np.abs(y).max(axis=-2) * np.sqrt(y.shape[-2])
    with np.errstate(invalid="ignore", divide="ignore"):
        r = num / (sx[..., :, None] * sy[..., None, :])
    r[flat_x[..., :, None] | flat_y[..., None, :] | ~np.isfinite(r)] = np.nan
    return np.clip(r, -1.0, 1.0)


def _kendall(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    """Kendall τ-b, shapes as :func:`_pearson` (O(n²) pairs: for small n)."""
    x = _snap(np.moveaxis(x, axis, -2))
    y = _snap(np.moveaxis(y, axis, -2))
    sx = np.sign(x[..., :, None, :] - x[..., None, :, :])  # (…, n, n, K)
    sy = np.sign(y[..., :, None, :] - y[..., None, :, :])
    num = np.einsum("...ijk,...ijc->...kc", sx, sy)
    den = np.sqrt(
        np.einsum("...ijk->...k", sx**2)[..., :, None]
        * np.einsum("...ijc->...c", sy**2)[..., None, :]
    )
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def _corr(method: str, x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    if method == "pearson":
        return _pearson(x, y, axis)
    if method == "spearman":
        return _pearson(_ranks(x, axis), _ranks(y, axis), axis)
    if method == "kendall":
        return _kendall(x, y, axis)
    raise GenmetricsError(f"correlation method {method!r} is not one of {METHODS}")


def _kendall_pooled(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """τ-b over many points (n ≫ 100) with scipy, (n, K) × (n, C) → (K, C)."""
    out = np.full((x.shape[1], y.shape[1]), np.nan)
    x, y = _snap(x), _snap(y)
    for k in range(x.shape[1]):
        for c in range(y.shape[1]):
            if np.ptp(x[:, k]) > 0 and np.ptp(y[:, c]) > 0:
                out[k, c] = stats.kendalltau(x[:, k], y[:, c]).statistic
    return out


def _nan_mean(per: np.ndarray) -> np.ndarray:
    """Mean over axis 0 ignoring NaN; NaN where every entry is NaN."""
    cnt = (~np.isnan(per)).sum(axis=0)
    total = np.where(np.isnan(per), 0.0, per).sum(axis=0)
    return np.where(cnt > 0, total / np.maximum(cnt, 1), np.nan)


def _level_stat(method: str, level: str, m: np.ndarray, h: np.ndarray) -> np.ndarray:
    """The system-level or pooled correlation for blocks m (items, systems, K), h (…, C) →
    (K, C); the item level (a mean of per-item correlations) is resampled in
    :func:`correlations` from the per-item values directly."""
    if level == "system":
        return _corr(method, m.mean(axis=0), h.mean(axis=0), axis=0)
    if level == "pooled":
        x = m.reshape(-1, m.shape[-1])
        y = h.reshape(-1, h.shape[-1])
        if method == "kendall":
            return _kendall_pooled(x, y)
        return _corr(method, x, y, axis=0)
    raise GenmetricsError(f"correlation level {level!r} is not one of {LEVELS}")


def correlations(
    table: pd.DataFrame,
    metrics: Sequence[str],
    criteria: Sequence[str],
    *,
    levels: Sequence[str] = LEVELS,
    methods: Sequence[str] = METHODS,
    n_boot: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
) -> pd.DataFrame:
    """Correlation of every metric column with every human criterion, per level and method.

    ``table`` has ``item``, ``system`` and the named columns. Only items scored for every
    system on every column enter (``n_items_dropped`` counts the others). Returns one row per
    (metric, criterion, level, method): ``value``, ``ci_low``, ``ci_high``, ``n_systems``,
    ``n_items``, ``n_items_defined`` (item level: items where the correlation is defined),
    ``n_boot``, ``n_boot_used``, ``seed``.
    """
    for lv in levels:
        if lv not in LEVELS:
            raise GenmetricsError(f"correlation level {lv!r} is not one of {LEVELS}")
    for me in methods:
        if me not in METHODS:
            raise GenmetricsError(f"correlation method {me!r} is not one of {METHODS}")
    if n_boot < 1 or not 0 < ci < 1:
        raise GenmetricsError(f"correlations: need n_boot >= 1 and 0 < ci < 1 ({n_boot}, {ci})")
    missing = [c for c in (*metrics, *criteria) if c not in table.columns]
    if missing:
        raise GenmetricsError(f"correlations: no column(s) {missing}")
    arr, items, systems, dropped = _blocks(table, [*metrics, *criteria])
    if len(items) < 2 or len(systems) < 2:
        raise GenmetricsError(
            f"correlations: need >= 2 complete items and systems, got {len(items)}, {len(systems)}"
        )
    m, h = arr[..., : len(metrics)], arr[..., len(metrics) :]
    rng = np.random.default_rng(seed)
    n_i, n_s = len(items), len(systems)
    rows = []
    for level in levels:
        draws_i = rng.integers(0, n_i, size=(n_boot, n_i))
        draws_s = rng.integers(0, n_s, size=(n_boot, n_s))
        for method in methods:
            defined = None
            boots = np.full((n_boot, len(metrics), len(criteria)), np.nan)
            if level == "item":  # per-item correlations once, then resample their mean
                per = _corr(method, m, h, axis=1)
                point = _nan_mean(per)
                defined = (~np.isnan(per)).sum(axis=0)
                for b in range(n_boot):
                    boots[b] = _nan_mean(per[draws_i[b]])
            elif level == "system":
                point = _level_stat(method, level, m, h)
                w = np.stack([np.bincount(d, minlength=n_i) for d in draws_i]) / n_i
                ms = np.einsum("bi,isk->bsk", w, m)
                hs = np.einsum("bi,isc->bsc", w, h)
                ms = np.take_along_axis(ms, draws_s[:, :, None], axis=1)
                hs = np.take_along_axis(hs, draws_s[:, :, None], axis=1)
                boots = _corr(method, ms, hs, axis=1)
            else:
                point = _level_stat(method, level, m, h)
                for b in range(n_boot):
                    boots[b] = _level_stat(method, "pooled", m[draws_i[b]], h[draws_i[b]])
            with warnings.catch_warnings():  # a cell undefined in every replicate: NaN, counted
                warnings.simplefilter("ignore", RuntimeWarning)
                lo = np.nanquantile(boots, (1 - ci) / 2, axis=0)
                hi = np.nanquantile(boots, (1 + ci) / 2, axis=0)
            used = (~np.isnan(boots)).sum(axis=0)
            for k, metric in enumerate(metrics):
                for c, crit in enumerate(criteria):
                    v = point[k, c]
                    rows.append(
                        {
                            "metric": metric,
                            "criterion": crit,
                            "level": level,
                            "method": method,
                            "value": None if np.isnan(v) else float(v),
                            "ci_low": None if used[k, c] == 0 else float(lo[k, c]),
                            "ci_high": None if used[k, c] == 0 else float(hi[k, c]),
                            "n_systems": n_s,
                            "n_items": n_i,
                            "n_items_defined": None if defined is None else int(defined[k, c]),
                            "n_items_dropped": dropped,
                            "n_boot": n_boot,
                            "n_boot_used": int(used[k, c]),
                            "seed": seed,
                        }
                    )
    return pd.DataFrame(rows)


def upstream_check(table: pd.DataFrame, pairs: Mapping[str, str]) -> pd.DataFrame:
    """Our value vs the stored upstream value of the same texts, per ``ours → upstream`` pair:
    Pearson r, Spearman ρ, mean and max |ours − upstream|, and n."""
    rows = []
    for ours, theirs in pairs.items():
        if ours not in table or theirs not in table:
            raise GenmetricsError(
                f"upstream_check: no column {ours if ours not in table else theirs!r}"
            )
        d = table[[ours, theirs]].dropna()
        diff = (d[ours] - d[theirs]).abs()
        rows.append(
            {
                "ours": ours,
                "upstream": theirs,
                "pearson": float(stats.pearsonr(d[ours], d[theirs]).statistic),
                "spearman": float(stats.spearmanr(d[ours], d[theirs]).statistic),
                "mean_abs_diff": float(diff.mean()),
                "max_abs_diff": float(diff.max()),
                "share_within_0.01": float((diff <= 0.01).mean()),
                "n": len(d),
            }
        )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------- A/B


def pairwise_scores(
    ab: PairwiseJudgments, entries: Mapping[str, Mapping[str, Any]]
) -> pd.DataFrame:
    """Per item, every value of every entry on ``text_a`` (columns ``a.<col>``) and
    ``text_b`` (``b.<col>``), each text scored alone (:func:`score_texts`)."""
    t = ab.table
    a = score_texts(t["text_a"].tolist(), None, entries)
    b = score_texts(t["text_b"].tolist(), None, entries)
    out = pd.concat(
        [t[["item", "group"]].reset_index(drop=True), a.add_prefix("a."), b.add_prefix("b.")],
        axis=1,
    )
    out.attrs["undefined"] = {
        f"{side}.{k}": v
        for side, d in (("a", a), ("b", b))
        for k, v in d.attrs["undefined"].items()
    }
    return out


def pairwise_agreement(
    ab: PairwiseJudgments,
    scores: pd.DataFrame,
    higher_is_better: Mapping[str, bool],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
) -> pd.DataFrame:
    """Per metric column and group (and ``all``): the metric's choice per item (the better
    value wins, :func:`genmetrics.analysis.agreement.metric_judgments`) against the raters',
    through :func:`genmetrics.analysis.agreement.agreement` (Bradley–Terry strengths of
    each system from human and metric judgments; item agreement with the human majority and
    its bootstrap interval). A tie between the two values counts as a disagreement, and so
    does an item where the metric is undefined on either text (``metric_undefined``).
    Bradley–Terry fits use a pseudo-count of 0.5 wins each way (``alpha``), so that a metric
    that always prefers one system still gets finite strengths."""
    t = ab.table.reset_index(drop=True)
    groups = {"all": np.arange(len(t))}
    if t["group"].nunique() > 1:
        groups.update({g: np.flatnonzero(t["group"] == g) for g in sorted(t["group"].unique())})
    rows = []
    for col, higher in higher_is_better.items():
        va, vb = scores[f"a.{col}"].to_numpy(float), scores[f"b.{col}"].to_numpy(float)
        undefined = ~(np.isfinite(va) & np.isfinite(vb))
        judged = metric_judgments(
            np.where(undefined, 0.0, va), np.where(undefined, 0.0, vb), higher_is_better=higher
        )  # a text the metric cannot score: a tie (a disagreement), counted below
        for g, idx in groups.items():
            items = [(t.at[i, "system_a"], t.at[i, "system_b"]) for i in idx]
            res = agreement(
                items,
                [t.at[i, "votes"] for i in idx],
                [judged[i] for i in idx],
                n_boot=n_boot,
                seed=seed,
                level=ci,
                alpha=0.5,
            )
            systems = res["systems"]
            rows.append(
                {
                    "metric": col,
                    "higher_is_better": higher,
                    "group": g,
                    "item_agreement": res["item_agreement"],
                    "ci_low": (res["pairwise_accuracy_ci"] or (None, None))[0],
                    "ci_high": (res["pairwise_accuracy_ci"] or (None, None))[1],
                    "n_items": res["n_items"],
                    "n_decisive_items": res["n_decisive_items"],
                    "n_judgments": res["n_judgments"],
                    "metric_ties": sum(judged[i] == "tie" for i in idx),
                    "metric_undefined": int(undefined[idx].sum()),
                    **{f"human_bt.{s}": res["human_bt"][s] for s in systems},
                    **{f"metric_bt.{s}": res["metric_bt"].get(s) for s in systems},
                    "n_boot": n_boot,
                    "seed": seed,
                }
            )
    return pd.DataFrame(rows)


def summary_of(judged: JudgedTexts) -> dict[str, Any]:
    """Counts of a judged set for its record."""
    t = judged.table
    return {
        "set": judged.name,
        "citation": judged.citation,
        "texts": len(t),
        "items": int(t["item"].nunique()),
        "systems": int(t["system"].nunique()),
        "criteria": list(judged.criteria),
        "excluded": dict(judged.excluded),
    }
