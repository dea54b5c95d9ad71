"""Perplexity from per-token surprisal (nats).

``perplexity`` = exp(Σ_i Σ_t s_it / Σ_i T_i) (token-weighted over the corpus, as HF's
perplexity guide and mauve-experiments compute it); ``mean_text_perplexity`` = mean_i
exp(mean_t s_it); ``mean_surprisal`` = Σ s / Σ T. Texts with no scored token are an error.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics.registry import MetricResult, register


@register(
    "perplexity",
    input="surprisal",
    reference="none",
    values=("perplexity", "mean_text_perplexity", "mean_surprisal"),
    params={},
)
def perplexity(candidate: Sequence[np.ndarray]) -> MetricResult:
    """Corpus perplexity exp(total surprisal / total tokens) and the mean per-text perplexity."""
    seqs = [np.asarray(s, dtype=np.float64) for s in candidate]
    if not seqs:
        raise GenmetricsError("perplexity: no texts")
    lengths = np.array([len(s) for s in seqs])
    if (lengths == 0).any():
        raise GenmetricsError(
            f"perplexity: {int((lengths == 0).sum())} text(s) have no scored token "
            f"(first index {int(np.flatnonzero(lengths == 0)[0])})"
        )
    allv = np.concatenate(seqs)
    if not np.isfinite(allv).all():
        raise GenmetricsError("perplexity: surprisal values contain NaN/inf")
    mean_s = float(allv.mean())
    per_text = np.array([np.exp(s.mean()) for s in seqs])
    return MetricResult(
        values={
            "perplexity": float(np.exp(mean_s)),
            "mean_text_perplexity": float(per_text.mean()),
            "mean_surprisal": mean_s,
        },
        n={"candidate": len(seqs), "tokens": int(lengths.sum())},
    )
