"""Syntactic templates (Shaib et al. 2024, "Detection and Measurement of Syntactic Templates
in Generated Text"): how much of a set of texts follows its own most frequent part-of-speech
n-grams. Read from the ``pos`` features (one PTB tag per whitespace word, see
:mod:`genmetrics.features.pos`): no tagger runs here.

* A **template** is a POS n-gram (``n`` tags, default 4) of the set's texts that is among its
  ``top`` most frequent (by occurrences; ties: first occurrence first, the order of the
  package's stable sort over ``nltk.FreqDist``), after keeping only n-grams found in at least
  ``min_texts`` texts (default 1: no condition, as the package).
* ``template_rate`` = share of texts that contain at least one template (``diversity``
  0.3.1 ``template_rate``);
* ``templates_per_token`` = per text, the number of token positions where a template starts
  (overlapping occurrences count; several templates at one position count once) divided by
  its number of tokens, averaged over texts (``templates_per_token`` per text, averaged as
  ``compute_all_metrics``'s ``avg_templates_per_token``). A text with no token counts 0 in
  both, and stays in both denominators, as in the package.

The package (``diversity/template.py``, ``functions.extract_patterns``, defaults ``n=5``,
``top_n=100``) tags punkt sentences of the joined corpus, keeps the ``top_n`` POS n-grams and
then searches each text's *string* for the surface strings those n-grams matched. We match
tags instead, so the numbers are equal where that search finds exactly the tag matches:
tags that do not depend on context (the same word, the same tag) and no surface string inside
another word; n-grams here run within each text (the tags carry no sentence boundary), the
package's within each sentence. ``tests/test_pos_templates.py`` shows the equality on
one-sentence texts with a context-free tagger.
"""

from __future__ import annotations

from collections import Counter

from genmetrics.metrics.registry import LOWER, MetricResult, register
from genmetrics.params import Const, Interval

__all__ = ["find_templates", "pos_templates"]

Gram = tuple[str, ...]


def _grams(tags: list[str], n: int) -> list[Gram]:
    return [tuple(tags[i : i + n]) for i in range(len(tags) - n + 1)]


def find_templates(
    docs: list[list[str]], n: int = 4, top: int | None = 100, min_texts: int = 1
) -> list[tuple[Gram, int, int]]:
    """The templates of ``docs`` (tag lists): ``(n-gram, occurrences, texts)``, most frequent
    first, ties in order of first occurrence (the module doc)."""
    count: Counter[Gram] = Counter()  # insertion order = first occurrence
    texts: Counter[Gram] = Counter()
    for tags in docs:
        grams = _grams(tags, n)
        count.update(grams)
        texts.update(set(grams))
    kept = [(g, c, texts[g]) for g, c in count.items() if texts[g] >= min_texts]
    kept.sort(key=lambda t: t[1], reverse=True)  # stable: ties keep first occurrence
    return kept if top is None else kept[:top]


@register(
    "pos_templates",
    input="pos",
    values={"template_rate": LOWER, "templates_per_token": LOWER},
    family="diversity",
    headline=("template_rate",),
    scale="0–1",
    params={
        "n": (Interval(int, 1, None), "tags per template (POS n-gram length)"),
        "top": (
            (Interval(int, 1, None), Const(None)),
            "keep the most frequent n-grams as templates (the package's top_n; null: all)",
        ),
        "min_texts": (
            Interval(int, 1, None),
            "an n-gram must occur in at least this many texts (1: any, as the package)",
        ),
    },
    upstream="diversity 0.3.1 template_rate, templates_per_token (extract_patterns top_n "
    "POS n-grams; matched on tags, not surface strings)",
    citation="Shaib et al. (2024)",
)
def pos_templates(
    candidate: list[list[str]], *, n: int = 4, top: int | None = 100, min_texts: int = 1
) -> MetricResult:
    """Template rate = share of texts containing at least one template, and templates per
    token = mean over texts of (token positions where a template starts) / tokens, where the
    templates are the set's ``top`` most frequent POS ``n``-grams found in at least
    ``min_texts`` texts (Shaib et al. 2024; ``diversity`` 0.3.1's definitions, on tags).
    Lower = less templated."""
    templates = find_templates(candidate, n, top, min_texts)
    chosen = {g for g, _, _ in templates}
    with_template, per_token = 0, []
    for tags in candidate:
        starts = sum(g in chosen for g in _grams(tags, n))
        with_template += starts > 0
        per_token.append(starts / len(tags) if tags else 0.0)
    return MetricResult(
        values={
            "template_rate": with_template / len(candidate),
            "templates_per_token": sum(per_token) / len(per_token),
        },
        extras={
            "templates": [
                {"pattern": " ".join(g), "count": c, "texts": t} for g, c, t in templates
            ],
        },
        n={
            "candidate": len(candidate),
            "templates": len(templates),
            "tokens": sum(len(t) for t in candidate),
        },
    )
