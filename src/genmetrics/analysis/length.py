"""Length control: many diversity and quality scores move with text length, so compare sources
at equal length and report how much each score follows length.

* :func:`mean_words` — mean word count of texts.
* :func:`truncate_to_shortest` — per prompt, cut every source's texts to the shortest length
  (in words) found among the sources for that prompt; prompts missing from any source are
  dropped. Words are those of the dataset's ``language`` (:mod:`genmetrics.words`:
  ``str.split()`` tokens by default, jieba words for ``zh``); the cut keeps the original
  characters (spacing, newlines, punctuation) up to the end of the last kept word.
* :func:`shortest_texts` — the same for the workflow's sources (generations pair with their
  prompt by ``prompt_id``, a human reference by its own id); :func:`score_shortest` scores a
  metric on texts cut that way (``metrics.<entry>.length_control: shortest``), in memory.
* :func:`length_correlation` — Pearson and Spearman correlation of each score with the mean
  length, across sources, with a Fisher-z interval, none below
  :data:`~genmetrics.analysis.statistics.MIN_CORRELATION_POINTS` sources ("too few");
  :func:`length_analysis` runs it on the tidy scores table.

Shaib et al. (2024), §5: compression ratios and other diversity scores depend on length, so
sources are compared at equal length.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.words import DEFAULT_LANGUAGE, count_words, truncate_words


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


def truncate_to_shortest(
    sources: Mapping[str, Sequence[Mapping[str, Any]]],
    key: str = "prompt_id",
    text_field: str = "text",
    language: str = DEFAULT_LANGUAGE,
) -> dict[str, list[dict]]:
    """Cut texts so that, for every prompt, all sources have the same length in words (of
    ``language``).

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
            w = n_words(row[text_field], language)
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
            new["n_words_original"] = n_words(row[text_field], language)
            new[text_field] = truncate_words(row[text_field], shortest[row[key]], language)
            kept.append(new)
        out[name] = kept
    return out


def shortest_texts(
    sources: Mapping[str, Sequence[Mapping[str, Any]]], language: str = DEFAULT_LANGUAGE
) -> dict[str, list[dict]]:
    """:func:`truncate_to_shortest` over workflow sources: a generation's prompt is its
    ``prompt_id``, a human reference's is its own ``id`` (every source counts, the references
    too). Rows keep their fields; ``prompt_id`` is added where it was missing."""
    keyed = {
        name: [{**r, "prompt_id": str(r.get("prompt_id", r["id"]))} for r in rows]
        for name, rows in sources.items()
    }
    return truncate_to_shortest(keyed, language=language)


def score_shortest(
    metric: str,
    candidate: str | Path,
    reference: str | Path | None,
    group: Sequence[str | Path],
    params: Mapping[str, Any] | None = None,
    language: str = DEFAULT_LANGUAGE,
    interval: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The score record of ``metric`` on ``candidate`` (and ``reference``) after cutting every
    text to the shortest text for its prompt among the ``group`` files (which hold the
    candidate and the reference). Same record as :func:`genmetrics.scoring.score_files`, whose
    ``values.mean_words`` is then the cut length. Words are those of ``language``; ``interval``:
    over the prompts of the cut texts (:mod:`genmetrics.intervals`)."""
    from genmetrics.io import read_jsonl

    paths = [str(p) for p in group]
    for role, path in (("candidate", candidate), ("reference", reference)):
        if path is not None and str(path) not in paths:
            raise GenmetricsError(f"length control: the {role} {path} is not in the group")
    cut = shortest_texts({p: read_jsonl(p, required=("id", "text")) for p in paths}, language)
    reference_rows = None if reference is None else cut[str(reference)]
    return score_rows(metric, cut[str(candidate)], reference_rows, params, language, interval)


def score_rows(
    metric: str,
    candidate: Sequence[Mapping[str, Any]],
    reference: Sequence[Mapping[str, Any]] | None = None,
    params: Mapping[str, Any] | None = None,
    language: str = DEFAULT_LANGUAGE,
    interval: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """:func:`genmetrics.scoring.score_files` on rows already in memory, for metrics on texts
    (kinds ``texts``, ``records`` and ``pos``: POS tags are computed from the rows' texts)."""
    from genmetrics.kinds import TEXT_KINDS
    from genmetrics.metrics import get
    from genmetrics.scoring import score_loaded

    m = get(metric)
    kind = m.input_kind(m.check_params(params))
    if kind not in TEXT_KINDS:
        raise GenmetricsError(f"length control: only for metrics on texts, not {kind}")
    cand_rows = list(candidate)
    ref_rows = None if reference is None or m.reference == "none" else list(reference)
    ref = None if ref_rows is None else _as_kind(kind, ref_rows)
    cand = _as_kind(kind, cand_rows)
    return score_loaded(
        metric,
        cand,
        cand_rows,
        ref,
        ref_rows,
        params,
        f"{metric} (length control)",
        language=language,
        interval=interval,
    )


def _as_kind(kind: str, rows: Sequence[Mapping[str, Any]]) -> Any:
    if kind == "records":
        return list(rows)
    texts = [r["text"] for r in rows]
    if kind == "pos":
        from genmetrics.features.pos import tag_texts

        return tag_texts(texts)
    return texts


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
