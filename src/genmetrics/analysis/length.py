"""Length control: many diversity and quality scores move with text length, so compare sources
at equal length and report how much each score follows length.

* :func:`mean_words` — mean word count of texts.
* Scoring at equal length (``metrics.<entry>.length_control``) is a step of scoring:
  :mod:`genmetrics.scoring.length_control`.
* :func:`length_correlation` — Pearson and Spearman correlation of each score with the mean
  length, across sources, with a Fisher-z interval, none below
  :data:`~genmetrics.analysis.statistics.MIN_CORRELATION_POINTS` sources ("too few");
  :func:`length_analysis` runs it on the tidy scores table.

Shaib et al. (2024), §5: compression ratios and other diversity scores depend on length, so
sources are compared at equal length.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.data.words import DEFAULT_LANGUAGE, count_words


def n_words(text: str, language: str = DEFAULT_LANGUAGE) -> int:
    """Number of words (default: whitespace words, ``len(text.split())``)."""
    return count_words(text, language)


def mean_words(texts: Sequence[str], language: str = DEFAULT_LANGUAGE) -> float:
    """Mean number of words per text (words of ``language``)."""
    if isinstance(texts, str):
        raise GenmetricsError("mean_words: expected a list of texts, got one string")
    texts = list(texts)
    if not texts:
        raise GenmetricsError("mean_words: no texts")
    return float(np.mean([n_words(t, language) for t in texts]))


#: the columns of :func:`length_correlation`'s table (``interval``: how low/high were found)
LENGTH_CORRELATION_COLUMNS = [
    "pearson",
    "pearson_p",
    "spearman",
    "spearman_p",
    "n",
    "pearson_low",
    "pearson_high",
    "spearman_low",
    "spearman_high",
    "level",
    "interval",
    "too_few",
    "constant",
]
_COMPUTED = ("pearson", "pearson_p", "spearman", "spearman_p")
_COMPUTED += ("pearson_low", "pearson_high", "spearman_low", "spearman_high")
#: what ``interval`` says: analytic, Fisher's z (Bonett–Wright standard error for Spearman)
FISHER_INTERVAL = "fisher_z"


def length_analysis(scores: Any) -> tuple[Any, int]:
    """Correlation of every headline score with the mean length of the scored texts, across
    sources, from the tidy scores table (``results/scores.csv``).

    Returns (the :func:`length_correlation` table, the number of sources); the table is empty
    when no score reports ``mean_words``.
    """
    import pandas as pd

    from genmetrics.analysis.correlation import length_table

    table = length_table(scores)
    if "mean_words" not in table.columns:
        return pd.DataFrame(columns=LENGTH_CORRELATION_COLUMNS).rename_axis("score"), len(table)
    return length_correlation(table.reset_index(drop=True)), len(table)


def length_correlation(
    scores: Any,
    length: str = "mean_words",
    min_sources: int | None = None,
    level: float = 0.95,
):
    """Pearson and Spearman correlation of every numeric score column with the ``length``
    column, across rows (one row per source), with an analytic ``level`` interval.

    Returns a DataFrame indexed by score with columns :data:`LENGTH_CORRELATION_COLUMNS`:
    ``n`` rows where both are finite; ``too_few``: n below ``min_sources`` (default
    :data:`~genmetrics.analysis.statistics.MIN_CORRELATION_POINTS`, 5: with fewer, even a
    perfect ρ cannot be told from chance), where nothing is computed; ``constant``: the score
    or the length does not vary. Both leave the correlations, p-values and intervals NaN.
    ``pearson_low``/``high`` and ``spearman_low``/``high``: Fisher-z intervals
    (:func:`~genmetrics.analysis.statistics.fisher_interval`; Bonett–Wright for Spearman),
    ``interval`` = ``"fisher_z"``; a perfect ±1 has the degenerate interval [±1, ±1].
    """
    import pandas as pd
    from scipy import stats

    from genmetrics.analysis.statistics import MIN_CORRELATION_POINTS, fisher_interval

    min_sources = MIN_CORRELATION_POINTS if min_sources is None else int(min_sources)
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
        n = int(ok.sum())
        few = n < min_sources
        flat = not few and (np.ptp(x) == 0 or np.ptp(y) == 0)
        rec: dict[str, Any] = {"score": col, "n": n, "level": level}
        rec.update(interval=FISHER_INTERVAL, too_few=few, constant=flat)
        if few or flat:
            rec.update(dict.fromkeys(_COMPUTED, np.nan))
        else:
            pr = stats.pearsonr(x, y)
            sr = stats.spearmanr(x, y)
            p_lo, p_hi = fisher_interval(pr.statistic, n, level, "pearson")
            s_lo, s_hi = fisher_interval(sr.statistic, n, level, "spearman")
            rec.update(
                pearson=float(pr.statistic),
                pearson_p=float(pr.pvalue),
                spearman=float(sr.statistic),
                spearman_p=float(sr.pvalue),
                pearson_low=p_lo,
                pearson_high=p_hi,
                spearman_low=s_lo,
                spearman_high=s_hi,
            )
        rows.append(rec)
    if not rows:
        return pd.DataFrame(columns=LENGTH_CORRELATION_COLUMNS).rename_axis("score")
    return pd.DataFrame(rows).set_index("score")[LENGTH_CORRELATION_COLUMNS]
