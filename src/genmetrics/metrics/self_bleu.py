"""Self-BLEU (Zhu et al. 2018), vectorized, equal to the nltk loop of pr-4-llm / degen.

Reference loop (``AlexVerine/pr-4-llm`` ``SelfBLEUDistinctNScorer``)::

    idx = random.Random(12345).sample(range(n), int(0.2 * n))
    mean(sentence_bleu(texts[:i] + texts[i+1:], texts[i], weights=(1/N,)*N,
                       smoothing_function=SmoothingFunction().method1) for i in idx)

Per hypothesis h and order k, nltk clips each n-gram count by its maximum count in any
reference. With *all other* texts as references that maximum is the corpus maximum over
texts ≠ h, which we read from the top-2 counts of each n-gram over all texts (the second one
when h holds the maximum). The brevity penalty uses the closest length among the other texts
(ties → the shorter, as nltk). Everything is O(total tokens · log) instead of O(n² · tokens);
the result equals nltk's to ~1e-15.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics._ngrams import doc_gram_counts, doc_ngrams, tokenize
from genmetrics.metrics.registry import LOWER, MetricResult, register
from genmetrics.params import Const, Interval, Options

__all__ = ["self_bleu", "self_bleu_scores", "sample_indices"]

_EPSILON = 0.1  # nltk SmoothingFunction().method1 epsilon


def sample_indices(n: int, sample: str | int | float, seed: int = 12345) -> list[int]:
    """Hypothesis indices: ``"all"`` → all; an int k → ``Random(seed).sample(range(n), min(n, k))``;
    a fraction f in (0, 1] → k = int(f·n) (pr-4-llm: f = 0.2, seed 12345)."""
    if sample == "all":
        return list(range(n))
    k = int(n * sample) if isinstance(sample, float) else min(n, sample)
    if k < 1:
        raise GenmetricsError(f"self_bleu: sample={sample!r} of {n} texts selects no hypothesis")
    return random.Random(seed).sample(range(n), k)


def self_bleu_scores(docs: Sequence[Sequence], n: int = 4) -> np.ndarray:
    """Sentence BLEU-n of every text against all other texts (nltk method1 smoothing)."""
    N = len(docs)
    lens = np.fromiter((len(d) for d in docs), dtype=np.int64, count=N)
    grams = doc_ngrams(docs, n)
    logp = np.zeros((N, n))
    zero_unigram = np.zeros(N, bool)
    for k in range(1, n + 1):
        ud, ug, cnt = doc_gram_counts(*grams[k])
        den = np.maximum(1, lens - k + 1)
        if len(ug) == 0:
            num = np.zeros(N)
        else:
            G = int(ug.max()) + 1
            # top-2 counts per n-gram (sorted by n-gram, count descending)
            order = np.lexsort((-cnt, ug))
            sg, sc, sd = ug[order], cnt[order], ud[order]
            start = np.flatnonzero(np.r_[True, sg[1:] != sg[:-1]])
            max1 = np.zeros(G, np.int64)
            arg1 = np.full(G, -1, np.int64)
            max2 = np.zeros(G, np.int64)
            max1[sg[start]] = sc[start]
            arg1[sg[start]] = sd[start]
            has2 = start + 1 < len(sg)
            s2 = start[has2]
            same = sg[s2 + 1] == sg[s2]
            max2[sg[s2[same]]] = sc[s2[same] + 1]
            ref_max = np.where(arg1[ug] == ud, max2[ug], max1[ug])
            clipped = np.minimum(cnt, ref_max)
            num = np.bincount(ud, weights=clipped, minlength=N)
        if k == 1:
            zero_unigram = num == 0
        p = np.where(num == 0, _EPSILON / den, num / den)
        logp[:, k - 1] = np.log(p)
    # brevity penalty: closest length among the other texts, ties → shorter
    srt = np.sort(lens)
    lo = np.searchsorted(srt, lens, "left")
    hi = np.searchsorted(srt, lens, "right")
    below = np.where(lo > 0, srt[np.maximum(lo - 1, 0)], -(10**18))
    above = np.where(hi < N, srt[np.minimum(hi, N - 1)], 10**18)
    closest = np.where(lens - below <= above - lens, below, above)
    closest = np.where(hi - lo >= 2, lens, closest)
    with np.errstate(divide="ignore", invalid="ignore"):
        bp = np.where(
            lens > closest, 1.0, np.where(lens == 0, 0.0, np.exp(1 - closest / np.maximum(lens, 1)))
        )
    w = 1.0 / n
    bleu = bp * np.exp(np.sum(w * logp, axis=1))
    bleu[zero_unigram] = 0.0
    return bleu


@register(
    "self_bleu",
    input="texts",
    values={"self_bleu": LOWER},
    family="diversity",
    scale="0–1",  # nltk sentence_bleu
    params={
        "n": (Interval(int, 1, None), "BLEU order (uniform weights 1/n)"),
        "tokenizer": (Options("whitespace", "gpt2"), "str.split or GPT-2 BPE ids (pr-4-llm)"),
        "sample": (
            (
                Const("all"),
                Interval(float, 0, 1, closed="right", integers=False),
                Interval(int, 1, None),
            ),
            "hypotheses averaged: all, a count, or a fraction (pr-4-llm: 0.2)",
        ),
        "seed": (Interval(int, 0, 2**32 - 1), "seed of the hypothesis sample"),
        "smoothing": (Options("method1"), "nltk SmoothingFunction method"),
    },
    upstream="nltk sentence_bleu; pr-4-llm SelfBLEU",
    assets=lambda p: ("gpt2_bpe",) if p["tokenizer"] == "gpt2" else (),
    citation="Zhu et al. (2018); Le Bronnec et al. (2024)",
)
def self_bleu(
    candidate: list[str],
    *,
    n: int = 4,
    tokenizer: str = "whitespace",
    sample: str | int | float = "all",
    seed: int = 12345,
    smoothing: str = "method1",
) -> MetricResult:
    """Self-BLEU-n = mean over sampled hypotheses of nltk ``sentence_bleu(all other texts, h,
    weights=(1/n,)*n, smoothing_function=SmoothingFunction().method1)`` (higher = less diverse).
    ``tokenizer="gpt2", sample=0.2, seed=12345`` reproduces pr-4-llm. Vectorized: one pass
    scores every text, so ``sample`` only chooses which hypotheses are averaged. Empty texts are
    scored as nltk scores them: 0 as a hypothesis (no matching unigram), length 0 for the
    brevity penalty of the others."""
    if len(candidate) < 2:
        raise GenmetricsError(
            "self_bleu: needs at least 2 texts (each is scored against the others)"
        )
    idx = sample_indices(len(candidate), sample, seed)
    docs = tokenize(candidate, tokenizer)
    scores = self_bleu_scores(docs, n)
    chosen = scores[np.asarray(idx, dtype=np.int64)]
    return MetricResult(
        values={"self_bleu": float(np.mean(chosen))},
        extras={"per_hypothesis": chosen, "hypotheses": np.asarray(idx)},
        n={"candidate": len(candidate), "hypotheses": len(idx)},
    )
