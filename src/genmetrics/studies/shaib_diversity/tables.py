"""The diversity study of Shaib et al. (2024) as tables: every diversity score per source with
the texts' mean length, raw and truncated to the shortest text per prompt (their Tables 3-5
and 7), each score's correlation with length per dataset (Table 6), and the stability of the
scores' rankings across two datasets (Table 2).

Every table is read off the tidy ``results/scores.csv``: a *column* is one diversity entry of
the config (its headline value) and, where the config has it, the same metric and params with
``length_control: shortest`` (or ``shortest_models``) as its truncated twin
(``Plan.diversity_columns``). Values of several generation seeds are averaged (``n_seeds`` says
how many); ``mean_words`` is the mean whitespace-word length the raw entries report, and
``mean_words_cut`` the length after the cut.

Length correlation (Table 6): across the sources of one dataset, Pearson's r and Spearman's
ρ of each raw score with ``mean_words``, and of the truncated score with the same (uncut)
``mean_words``: after the cut, a score that still follows the original length measures
something length control does not remove. Fewer than 3 sources give NaN, never a number.

Stability (Table 2): the sources of two datasets are matched one to one (the same model name
in both, the references to the references, or an explicit map of comparable systems), and
each score's values on the matched sources are rank-correlated between the datasets:
Kendall's τ-b (scipy; its p exact for small n without ties) and Spearman's ρ with its exact
permutation p-value for n <= 8 (:func:`spearman_exact`), n the number of matched sources.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from genmetrics import GenmetricsError

KEYS = ["dataset", "model"]
LENGTH_COLUMNS = ["dataset", "score", "version", "pearson", "spearman", "n"]
STABILITY_COLUMNS = ["score", "version", "kendall_tau", "kendall_p", "spearman", "spearman_p", "n"]
_MIN_SOURCES = 3


def diversity_table(scores: pd.DataFrame, columns: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per (dataset, model) — the human references are the model ``references`` —
    with ``n_seeds``, ``mean_words``, ``mean_words_cut`` (NaN without truncated entries) and,
    per column ``c``, ``c["label"]`` (raw) and ``c["label"] + " (cut)"`` (truncated; absent
    when ``c["cut_entry"]`` is None). Values are means over seeds."""
    if not columns:
        raise GenmetricsError("diversity table: no diversity entry in the config's metrics")
    d = scores.copy()
    parts = []
    for c in columns:
        for entry, label in ((c["entry"], c["label"]), (c.get("cut_entry"), f"{c['label']} (cut)")):
            if entry is None:
                continue
            rows = d[(d["entry"] == entry) & (d["name"] == c["name"])]
            parts.append(_seed_mean(rows, label))
    lengths = []
    for col, entries in (
        ("mean_words", [c["entry"] for c in columns]),
        ("mean_words_cut", [c["cut_entry"] for c in columns if c.get("cut_entry")]),
    ):
        rows = d[d["entry"].isin(entries) & (d["name"] == "mean_words")]
        # every entry of one kind saw the same texts: one length per (source, seed)
        per_seed = rows.groupby([*KEYS, "seed"], dropna=False)["value"].max().reset_index()
        lengths.append(_seed_mean(per_seed, col))
    seeds = (
        d[d["entry"].isin([c["entry"] for c in columns])]
        .groupby(KEYS)["seed"]
        .nunique(dropna=False)
        .rename("n_seeds")
    )
    table = pd.concat([seeds, *lengths, *parts], axis=1)
    table = table.reindex(columns=["n_seeds", "mean_words", "mean_words_cut", *_labels(columns)])
    if table.empty:
        raise GenmetricsError("diversity table: scores.csv has no value of the diversity entries")
    table["n_seeds"] = table["n_seeds"].fillna(0).astype(int)
    return table.sort_index()


def _labels(columns: Sequence[Mapping[str, Any]]) -> list[str]:
    raw = [c["label"] for c in columns]
    cut = [f"{c['label']} (cut)" for c in columns if c.get("cut_entry")]
    return raw + cut


def _seed_mean(rows: pd.DataFrame, label: str) -> pd.Series:
    if rows.empty:
        return pd.Series(dtype=float, name=label)
    return rows.groupby(KEYS)["value"].mean().rename(label)


def length_correlations(table: pd.DataFrame, columns: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Per dataset and score, r and ρ of the raw score (``version`` raw) and of the truncated
    score (``version`` cut) with the raw ``mean_words`` across the dataset's sources.

    Where the score has a truncated twin, both versions run over the sources the truncated
    table compares (with ``shortest_models`` the references are not among them), so that raw
    and cut rest on the same sources; otherwise over every source."""
    from scipy import stats

    rows = []
    for ds, sub in table.groupby(level="dataset", sort=True):
        for c in columns:
            cut_col = f"{c['label']} (cut)"
            compared = sub[sub[cut_col].notna()] if cut_col in sub.columns else sub
            for version, col in (("raw", c["label"]), ("cut", cut_col)):
                if col not in sub.columns:
                    continue
                pair = compared[["mean_words", col]].dropna()
                n = len(pair)
                r = rho = np.nan
                if n >= _MIN_SOURCES and pair.nunique().min() > 1:
                    r = float(stats.pearsonr(pair["mean_words"], pair[col])[0])
                    rho = float(stats.spearmanr(pair["mean_words"], pair[col])[0])
                rows.append([ds, c["label"], version, r, rho, n])
    return pd.DataFrame(rows, columns=LENGTH_COLUMNS)


def match_sources(
    table: pd.DataFrame, datasets: Sequence[str], match: Mapping[str, str] | None = None
) -> list[tuple[str, str]]:
    """The (source of the first dataset, source of the second) pairs the stability table
    compares: ``match`` as given (each source must have scores), else every model name present
    in both datasets, the references included."""
    a, b = datasets
    have = {
        ds: set(table.loc[ds].index) if ds in table.index.get_level_values(0) else set()
        for ds in (a, b)
    }
    for ds in (a, b):
        if not have[ds]:
            raise GenmetricsError(f"analysis.diversity.stability.datasets: {ds!r} has no scores")
    if match:
        pairs = sorted(match.items())
        for x, y in pairs:
            for ds, src in ((a, x), (b, y)):
                if src not in have[ds]:
                    raise GenmetricsError(
                        f"analysis.diversity.stability.match: {src!r} has no scores on {ds!r} "
                        f"(sources: {sorted(have[ds])})"
                    )
        return pairs
    return [(s, s) for s in sorted(have[a] & have[b])]


def stability(
    table: pd.DataFrame,
    columns: Sequence[Mapping[str, Any]],
    datasets: Sequence[str],
    match: Mapping[str, str] | None = None,
) -> tuple[pd.DataFrame, list[tuple[str, str]]]:
    """Kendall τ-b and Spearman ρ between the two ``datasets`` of each score's values on the
    matched sources (:func:`match_sources`), raw and cut; the pairs used are returned too.
    NaN (not a number) where fewer than 3 pairs have both values or one side is constant."""
    from scipy import stats

    if len(datasets) != 2 or datasets[0] == datasets[1]:
        raise GenmetricsError("analysis.diversity.stability.datasets: two different datasets")
    pairs = match_sources(table, datasets, match)
    a, b = datasets
    rows = []
    for c in columns:
        for version, col in (("raw", c["label"]), ("cut", f"{c['label']} (cut)")):
            if col not in table.columns:
                continue
            x = np.array([table.loc[(a, s), col] for s, _ in pairs], dtype=float)
            y = np.array([table.loc[(b, s), col] for _, s in pairs], dtype=float)
            ok = np.isfinite(x) & np.isfinite(y)
            x, y = x[ok], y[ok]
            tau = tau_p = rho = rho_p = np.nan
            if len(x) >= _MIN_SOURCES and np.ptp(x) > 0 and np.ptp(y) > 0:
                tau, tau_p = stats.kendalltau(x, y)
                rho, rho_p = spearman_exact(x, y)
            rows.append([c["label"], version, tau, tau_p, rho, rho_p, int(len(x))])
    return pd.DataFrame(rows, columns=STABILITY_COLUMNS), pairs


def spearman_exact(x: np.ndarray, y: np.ndarray, max_n: int = 8) -> tuple[float, float]:
    """Spearman's ρ and its two-sided p-value: exact over every permutation of ``y`` for
    n <= ``max_n`` (the share of the n! orderings with |ρ| at least the observed one, ties
    kept as average ranks), else scipy's t approximation. scipy's own p-value is the t
    approximation at every n, which gives p = 0 for a perfect order of 4 items (exact: 1/12)."""
    import itertools

    from scipy import stats

    rho = float(stats.spearmanr(x, y)[0])
    n = len(x)
    if n > max_n:
        return rho, float(stats.spearmanr(x, y)[1])
    rx, ry = stats.rankdata(x), stats.rankdata(y)
    rx = rx - rx.mean()
    perms = np.array(list(itertools.permutations(ry - ry.mean())))
    num = perms @ rx
    den = np.sqrt((rx**2).sum() * (perms[0] ** 2).sum())
    hits = np.abs(num / den) >= abs(rho) - 1e-12
    return rho, float(hits.mean())


# ---------------------------------------------------------------- Markdown


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "–"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return f"{float(v):.{digits}f}"


def _row(cells: Sequence[Any]) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def diversity_markdown(
    table: pd.DataFrame,
    columns: Sequence[Mapping[str, Any]],
    length: pd.DataFrame,
    stable: pd.DataFrame | None = None,
    pairs: Sequence[tuple[str, str]] = (),
    datasets: Sequence[str] = (),
) -> str:
    """The study's tables in Markdown: per dataset the raw and the truncated table (the
    paper's Tables 3-5, 7), the length correlations (Table 6), and the stability (Table 2)."""
    arrows = {c["label"]: "↑" if c["direction"] == "higher" else "↓" for c in columns}
    lines = [
        "# Diversity per source (Shaib et al. 2024)",
        "",
        "Each score as its registered metric computes it over all texts of a source "
        "(↑ higher = more diverse, ↓ lower = more diverse); `words`: mean whitespace words per "
        "text. *Truncated*: every text cut to the shortest text of its prompt among the "
        "sources (`length_control`), so that length cannot explain a difference. Means over "
        "`seeds` generation seeds.",
        "",
    ]
    labels = [c["label"] for c in columns]
    for ds, sub in table.groupby(level="dataset", sort=True):
        blocks = [("raw", "mean_words", labels)]
        cut = [lab for lab in labels if f"{lab} (cut)" in sub.columns]
        if cut:
            blocks.append(("truncated", "mean_words_cut", cut))
        for name, length_col, labs in blocks:
            cols = labs if name == "raw" else [f"{lab} (cut)" for lab in labs]
            shown = sub[sub[cols].notna().any(axis=1)]  # shortest_models: no references cut
            lines += [f"## {ds}: {name} ({len(shown)} sources)", ""]
            head = ["source", "seeds", "words", *(f"{lab} {arrows[lab]}" for lab in labs)]
            lines += [_row(head), _row(["---"] + ["---:"] * (len(head) - 1))]
            for (_, model), row in shown.iterrows():
                cells = [model, int(row["n_seeds"]), _fmt(row[length_col], 1)]
                lines.append(_row(cells + [_fmt(row[c]) for c in cols]))
            lines.append("")
    lines += [
        "## Correlation with length (Table 6)",
        "",
        "Across the sources of each dataset (those the truncated table compares): the score "
        "against the texts' mean length (raw), and the truncated score against the same uncut "
        "length (cut). – : fewer than 3 sources or a constant column.",
        "",
        _row(["dataset", "score", "version", "Pearson r", "Spearman ρ", "n"]),
        _row(["---", "---", "---", "---:", "---:", "---:"]),
    ]
    for r in length.itertuples(index=False):
        lines.append(_row([r.dataset, r.score, r.version, _fmt(r.pearson), _fmt(r.spearman), r.n]))
    lines.append("")
    if stable is not None:
        a, b = datasets
        shown = ", ".join(f"{x} ↔ {y}" for x, y in pairs)
        lines += [
            f"## Stability across datasets (Table 2): {a} against {b}",
            "",
            f"Rank correlation of each score's values over the {len(pairs)} matched sources "
            f"({shown}); p: two-sided, exact (Kendall with tied values: asymptotic).",
            "",
            _row(["score", "version", "Kendall τ", "p", "Spearman ρ", "p", "n"]),
            _row(["---", "---", "---:", "---:", "---:", "---:", "---:"]),
        ]
        for r in stable.itertuples(index=False):
            lines.append(
                _row(
                    [
                        r.score,
                        r.version,
                        _fmt(r.kendall_tau),
                        _fmt(r.kendall_p),
                        _fmt(r.spearman),
                        _fmt(r.spearman_p),
                        r.n,
                    ]
                )
            )
        lines.append("")
    return "\n".join(lines)
