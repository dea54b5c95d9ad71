"""Length control, a step of scoring (``metrics.<entry>.length_control: shortest`` or
``shortest_models``): every text is cut, per prompt, to the shortest text for that prompt
among the sources, then scored (Shaib et al. 2024, §5: compression ratios and other diversity
scores depend on length, so sources are compared at equal length).

* :func:`truncate_to_shortest` — per prompt, cut every source's texts to the shortest length
  (in words) found among the sources for that prompt; prompts missing from any source are
  dropped. Words are those of the dataset's ``language`` (:mod:`genmetrics.data.words`:
  ``str.split()`` tokens by default, jieba words for ``zh``); the cut keeps the original
  characters (spacing, newlines, punctuation) up to the end of the last kept word.
* :func:`shortest_texts` — the same for the workflow's sources (generations pair with their
  prompt by ``prompt_id``, a human reference by its own id); :func:`score_shortest` scores a
  metric on texts cut that way, in memory (:func:`score_rows`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.data.words import DEFAULT_LANGUAGE, count_words, truncate_words
from genmetrics.metrics.kinds import TEXT_KINDS
from genmetrics.metrics.registry import Metric
from genmetrics.scoring.from_files import resolve, score_resolved


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
            w = count_words(row[text_field], language)
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
            new["n_words_original"] = count_words(row[text_field], language)
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
    metric: str | Metric,
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
    over the prompts of the cut texts (:mod:`genmetrics.scoring.intervals`)."""
    from genmetrics.io import read_jsonl

    paths = [str(p) for p in group]
    for role, path in (("candidate", candidate), ("reference", reference)):
        if path is not None and str(path) not in paths:
            raise GenmetricsError(f"length control: the {role} {path} is not in the group")
    cut = shortest_texts({p: read_jsonl(p, required=("id", "text")) for p in paths}, language)
    reference_rows = None if reference is None else cut[str(reference)]
    return score_rows(metric, cut[str(candidate)], reference_rows, params, language, interval)


def score_rows(
    metric: str | Metric,
    candidate: Sequence[Mapping[str, Any]],
    reference: Sequence[Mapping[str, Any]] | None = None,
    params: Mapping[str, Any] | None = None,
    language: str = DEFAULT_LANGUAGE,
    interval: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """:func:`genmetrics.scoring.score_files` on rows already in memory, for metrics on texts
    (kinds ``texts``, ``records`` and ``pos``: POS tags are computed from the rows' texts).
    ``metric``: a name, or the :class:`~genmetrics.metrics.registry.Metric` a score job
    resolved; ``params`` are checked here, once."""
    m, checked = resolve(metric, params)
    kind = m.input_kind(checked)
    if kind not in TEXT_KINDS:
        raise GenmetricsError(f"length control: only for metrics on texts, not {kind}")
    cand_rows = list(candidate)
    ref_rows = None if reference is None or m.reference == "none" else list(reference)
    ref = None if ref_rows is None else _as_kind(kind, ref_rows)
    cand = _as_kind(kind, cand_rows)
    return score_resolved(
        m,
        cand,
        cand_rows,
        ref,
        ref_rows,
        checked,
        f"{m.name} (length control)",
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
