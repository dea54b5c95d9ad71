"""A metric from outside genmetrics, registered with its facts: the plugin of
``tests/test_plugin_metric.py`` (``GENMETRICS_METRIC_MODULES=toy_metric``, ``tests/`` on the
Python path). Nothing else in the project names it."""

from __future__ import annotations

from genmetrics.metrics.registry import HIGHER, register


@register(
    "toy_vowels",
    input="texts",
    values={"vowel_share": HIGHER, "letters": None},
    family="lexical",
    headline=("vowel_share",),
    scale={"vowel_share": "%", "letters": "count"},
    upstream="none (a test plugin)",
    citation="none",
)
def toy_vowels(candidate: list[str]) -> dict[str, float]:
    """Share of vowels (a, e, i, o, u) among the corpus's letters, in percent."""
    letters = [c for text in candidate for c in text.lower() if c.isalpha()]
    vowels = sum(c in "aeiou" for c in letters)
    return {"vowel_share": 100.0 * vowels / max(len(letters), 1), "letters": float(len(letters))}
