"""Length control: many diversity and quality scores move with text length, so compare sources
at equal length and report how much each score follows length.

* :func:`mean_words` — mean whitespace-word count of texts.
* :func:`truncate_to_shortest` — per prompt, cut every source's texts to the shortest length
  (in whitespace words) found among the sources for that prompt; prompts missing from any
  source are dropped. Words are ``str.split()`` tokens; the cut keeps the original spacing and
  newlines up to the end of the last kept word.
* :func:`length_correlation` — Pearson and Spearman correlation of each score with the mean
  length, across sources.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.clean import truncate_words


def n_words(text: str) -> int:
    """Number of whitespace words (``len(text.split())``)."""
    return len(text.split())


def mean_words(texts: Sequence[str]) -> float:
    """Mean number of whitespace words per text."""
    if isinstance(texts, str):
        raise GenmetricsError("mean_words: expected a list of texts, got one string")
    texts = list(texts)
    if not texts:
        raise GenmetricsError("mean_words: no texts")
    return float(np.mean([n_words(t) for t in texts]))


def truncate_to_shortest(
    sources: Mapping[str, Sequence[Mapping[str, Any]]],
    key: str = "prompt_id",
    text_field: str = "text",
) -> dict[str, list[dict]]:
    """Cut texts so that, for every prompt, all sources have the same length in words.

    For each value of ``key`` present in every source, m = min number of words over all rows of
    all sources with that key; every such row's text becomes its first m words (fields other
    than the text are copied; ``n_words_original`` records the uncut length). Rows whose key is
    absent from some source are dropped; row order within each source is kept.
    """
    if not sources:
        raise GenmetricsError("truncate_to_shortest: no sources")
    shortest: dict[Any, int] = {}
    present: dict[str, set] = {}
    for name, rows in sources.items():
        keys = set()
        for i, row in enumerate(rows):
            if key not in row:
                raise GenmetricsError(
                    f"truncate_to_shortest: source {name!r} row {i} has no {key!r}"
                )
            if not isinstance(row.get(text_field), str):
                raise GenmetricsError(
                    f"truncate_to_shortest: source {name!r} row {i} has no string {text_field!r}"
                )
            k = row[key]
            keys.add(k)
            w = n_words(row[text_field])
            shortest[k] = min(w, shortest.get(k, w))
        present[name] = keys
    common = set.intersection(*present.values())
    if not common:
        raise GenmetricsError(f"truncate_to_shortest: no {key!r} value is shared by all sources")
    out: dict[str, list[dict]] = {}
    for name, rows in sources.items():
        kept = []
        for row in rows:
            if row[key] not in common:
                continue
            new = dict(row)
            new["n_words_original"] = n_words(row[text_field])
            new[text_field] = truncate_words(row[text_field], shortest[row[key]])
            kept.append(new)
        out[name] = kept
    return out


def length_correlation(scores: Any, length: str = "mean_words"):
    """Pearson and Spearman correlation of every numeric score column with the ``length``
    column, across rows (one row per source).

    Returns a DataFrame indexed by score with columns ``pearson``, ``pearson_p``, ``spearman``,
    ``spearman_p`` and ``n``; NaN where a column is constant or has < 3 finite rows.
    """
    import pandas as pd
    from scipy import stats

    if not isinstance(scores, pd.DataFrame):
        raise GenmetricsError(
            "length_correlation: expected a pandas DataFrame (one row per source)"
        )
    if length not in scores.columns:
        raise GenmetricsError(
            f"length_correlation: no {length!r} column; columns: {', '.join(map(str, scores.columns))}"
        )
    x_all = pd.to_numeric(scores[length], errors="coerce").to_numpy(dtype=float)
    rows = []
    for col in scores.columns:
        if col == length or not pd.api.types.is_numeric_dtype(scores[col]):
            continue
        y = scores[col].to_numpy(dtype=float)
        ok = np.isfinite(x_all) & np.isfinite(y)
        x, y = x_all[ok], y[ok]
        rec = {"score": col, "n": int(ok.sum())}
        if ok.sum() < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
            rec.update(pearson=np.nan, pearson_p=np.nan, spearman=np.nan, spearman_p=np.nan)
        else:
            pr = stats.pearsonr(x, y)
            sr = stats.spearmanr(x, y)
            rec.update(
                pearson=float(pr.statistic),
                pearson_p=float(pr.pvalue),
                spearman=float(sr.statistic),
                spearman_p=float(sr.pvalue),
            )
        rows.append(rec)
    cols = ["pearson", "pearson_p", "spearman", "spearman_p", "n"]
    if not rows:
        return pd.DataFrame(columns=cols).rename_axis("score")
    return pd.DataFrame(rows).set_index("score")[cols]
