"""Perplexity from per-token surprisal (nats).

``perplexity`` = exp(Σ_i Σ_t s_it / Σ_i T_i) (token-weighted over the corpus, as HF's
perplexity guide and mauve-experiments compute it); ``mean_text_perplexity`` = mean_i
exp(mean_t s_it); ``mean_surprisal`` = Σ s / Σ T. Texts with no scored token (an empty
generation) are left out and counted; a corpus with no scored token at all is an error.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics.registry import LOWER, MetricResult, register

__all__ = ["perplexity", "text_mean_surprisal"]


def text_mean_surprisal(candidate: Sequence[np.ndarray], metric: str) -> np.ndarray:
    """mean_t s_it of every text with at least one scored token (float64), in input order.

    The per-text statistic of ``perplexity`` and ``coherence_logprob``; texts without a token
    are left out (the caller counts them), and a corpus with none scored is an error.
    """
    means = np.array([np.mean(s, dtype=np.float64) for s in candidate if len(s)])
    if means.size == 0:
        raise GenmetricsError(f"{metric}: no text has a scored token")
    return means


@register(
    "perplexity",
    input="surprisal",
    values={"perplexity": LOWER, "mean_text_perplexity": LOWER, "mean_surprisal": LOWER},
    family="surprisal",
    scale={"perplexity": "≥ 1", "mean_text_perplexity": "≥ 1", "mean_surprisal": "nats"},
    aggregation=(
        "perplexity pools tokens over texts; mean_text_perplexity averages per-text values "
        "over texts with at least one token (the others counted in n.excluded)"
    ),
    upstream="exp(mean token NLL), as HF evaluate perplexity",
    citation="Jelinek et al. (1977)",
)
def perplexity(candidate: Sequence[np.ndarray]) -> MetricResult:
    """Corpus perplexity exp(total surprisal / total tokens), the mean per-text perplexity and
    the mean surprisal (nats per token).

    Texts with no scored token (an empty generation) add nothing to the pooled values and are
    left out of ``mean_text_perplexity``; ``n["excluded"]`` counts them. Values above the
    float range are reported as ``inf`` (written as ``null`` in JSON).
    """
    per_text_mean = text_mean_surprisal(candidate, "perplexity")
    lengths = np.array([len(s) for s in candidate])
    mean_s = float(np.concatenate([np.asarray(s, dtype=np.float64) for s in candidate]).mean())
    with np.errstate(over="ignore"):
        per_text = np.exp(per_text_mean)
        ppl = float(np.exp(mean_s))
    return MetricResult(
        values={
            "perplexity": ppl,
            "mean_text_perplexity": float(per_text.mean()),
            "mean_surprisal": mean_s,
        },
        n={
            "candidate": len(candidate),
            "tokens": int(lengths.sum()),
            "excluded": int((lengths == 0).sum()),
        },
    )
