"""Our metrics on human-judged texts, through the metric registry
(:func:`genmetrics.metrics.compute`), the same code that scores a model in the workflow.

* :func:`score_texts` — one value per text and metric value: a paired metric with a
  reference (``rouge``, ``bertscore``) is run once on all (text, reference) pairs and its
  per-pair values (``extras["per_pair"]``) are used; any other text metric is run on each
  text alone (``bleu`` on one pair = sentence BLEU; ``rep_n`` on one text).
* :func:`pairwise_scores` — both texts of every A/B item, each scored alone.
* :func:`applies`, :func:`entry_values`, :func:`directions` — which metrics can score judged
  texts, which values an entry reports, and which way each value is better.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from genmetrics import GenmetricsError
from genmetrics.agreement.judgment_sets import PairwiseJudgments
from genmetrics.metrics import compute, get
from genmetrics.metrics.registry import HIGHER


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
