"""Coherence of a continuation with its prompt, from features: the score job loads no model.

Two published definitions, which are not comparable with each other:

* ``coherence`` (SimCTG and Contrastive Decoding; Su et al. 2022, Li et al. 2022): mean over
  generations of cos(enc(prompt), enc(continuation)). Inputs are embeddings made by the embed
  rule with a sentence-encoder featurizer: each generation's continuation (``part:
  continuation``, the candidate) and the dataset's prompts (the reference), paired by
  ``prompt_id``. The papers use ``princeton-nlp/sup-simcse-bert-base-uncased`` with
  ``pooling: pooler``; offline the default encoder is all-MiniLM-L6-v2 with mean pooling, so
  absolute values differ from the papers' unless the featurizer points at SimCSE. Generations
  whose continuation has no word are skipped, as SimCTG does: the embed rule leaves them out of
  the continuation features, and the score's ``n.unpaired_reference`` counts prompts without a
  scored continuation.
* ``coherence_logprob`` (Su & Collier 2023, ``open_ended_generation/english/
  compute_coherence.py``): mean over generations of the mean log-probability of the
  continuation tokens given [BOS] + prompt under an evaluator LM (the paper uses OPT-2.7B),
  i.e. −mean of the *conditional* surprisal made by the surprisal rule (``part:
  continuation``). Generations with no continuation token are excluded (``n.excluded``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics.perplexity import text_mean_surprisal
from genmetrics.metrics.registry import HIGHER, MetricResult, register


def cosine_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine similarity of two aligned matrices (float64)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        raise GenmetricsError(f"coherence: embedding shapes differ, {a.shape} vs {b.shape}")
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    return (a * b).sum(1) / np.maximum(na * nb, 1e-12)


@register(
    "coherence",
    input="embeddings",
    reference="prompts",
    paired=True,
    part="continuation",
    values={"coherence": HIGHER},
    family="coherence",
    scale="−1–1",  # a cosine
    duplicates_change_value=False,  # a mean of per-generation cosines
    aggregation=(
        "mean over generations; a continuation with no word is skipped, as SimCTG "
        "(left out by the embed rule)"
    ),
    upstream="SimCTG / Contrastive Decoding coherence (SimCSE cosine)",
    citation="Su et al. (2022); Li et al. (2022)",
)
def coherence(candidate: np.ndarray, reference: np.ndarray) -> MetricResult:
    """Mean cos(enc(prompt), enc(continuation)) over generations; ``candidate`` holds the
    continuation embeddings and ``reference`` the embeddings of their prompts, row-aligned."""
    per_row = cosine_rows(candidate, reference)
    return MetricResult(
        values={"coherence": float(per_row.mean())},
        extras={"per_row": per_row},
        n={"candidate": len(per_row)},
    )


@register(
    "coherence_logprob",
    input="surprisal",
    part="continuation",
    values={"coherence_logprob": HIGHER},
    family="coherence",
    scale="nats",  # a mean log-probability (≤ 0)
    duplicates_change_value=False,  # a mean of per-generation means
    aggregation="mean over generations with a token of their mean log-prob (n.excluded)",
    upstream="Su & Collier (2023) compute_coherence.py",
    citation="Su & Collier (2023)",
)
def coherence_logprob(candidate: Sequence[np.ndarray]) -> MetricResult:
    """Mean over generations of mean_t log p(x_t | [BOS] + prompt, x_<t) = −mean surprisal of
    the continuation given its prompt (the surprisal rule's ``part: continuation``)."""
    per_row = -text_mean_surprisal(candidate, "coherence_logprob")
    return MetricResult(
        values={"coherence_logprob": float(per_row.mean())},
        extras={"per_row": per_row},
        n={"candidate": len(candidate), "excluded": len(candidate) - int(per_row.size)},
    )
