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
from genmetrics.metrics.diversity import ngram_ids, token_ids
from genmetrics.metrics.registry import MetricResult, register

__all__ = ["self_bleu", "self_bleu_scores", "sample_indices", "tokenize"]

_EPSILON = 0.1  # nltk SmoothingFunction().method1 epsilon


def tokenize(texts: Sequence[str], tokenizer: str = "whitespace") -> list[list]:
    """``whitespace``: ``text.split()``; ``gpt2``: GPT-2 BPE ids (HF ``gpt2`` tokenizer without
    special tokens added, ``<|endoftext|>`` in text parsed as the special id, as HF does)."""
    if tokenizer == "whitespace":
        return [t.split() for t in texts]
    if tokenizer == "gpt2":
        from genmetrics.assets import gpt2_encoding

        enc = gpt2_encoding()
        return enc.encode_batch(list(texts), allowed_special="all", num_threads=2)
    raise GenmetricsError(f"self_bleu: tokenizer must be 'whitespace' or 'gpt2', got {tokenizer!r}")


def sample_indices(n: int, sample: str | int | float, seed: int = 12345) -> list[int]:
    """Hypothesis indices: ``"all"`` → all; an int k → ``Random(seed).sample(range(n), min(n, k))``;
    a fraction f in (0, 1] → k = int(f·n) (pr-4-llm: f = 0.2, seed 12345)."""
    if sample in ("all", None):
        return list(range(n))
    if isinstance(sample, str):
        try:
            sample = float(sample) if "." in sample else int(sample)
        except ValueError:
            raise GenmetricsError(
                f"self_bleu: sample must be 'all', an int or a fraction, got {sample!r}"
            ) from None
    if isinstance(sample, bool):
        raise GenmetricsError("self_bleu: sample must be 'all', an int or a fraction")
    if isinstance(sample, float):
        if not 0 < sample <= 1:
            raise GenmetricsError(f"self_bleu: a fractional sample must be in (0, 1], got {sample}")
        k = int(n * sample)
    else:
        k = min(n, int(sample))
    if k < 1:
        raise GenmetricsError(f"self_bleu: sample={sample!r} of {n} texts selects no hypothesis")
    return random.Random(seed).sample(range(n), k)


def self_bleu_scores(docs: Sequence[Sequence], n: int = 4) -> np.ndarray:
    """Sentence BLEU-n of every text against all other texts (nltk method1 smoothing)."""
    N = len(docs)
    lens = np.fromiter((len(d) for d in docs), dtype=np.int64, count=N)
    tok, doc, v = token_ids(docs)
    grams = ngram_ids(tok, doc, v, n)
    logp = np.zeros((N, n))
    zero_unigram = np.zeros(N, bool)
    for k in range(1, n + 1):
        pos, gid = grams[k]
        d = doc[pos]
        den = np.maximum(1, lens - k + 1)
        if len(gid) == 0:
            num = np.zeros(N)
        else:
            G = int(gid.max()) + 1
            key, cnt = np.unique(d * np.int64(G) + gid, return_counts=True)
            ud, ug = key // G, key % G
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
    reference="none",
    values=("self_bleu",),
    params={
        "n": 4,
        "tokenizer": "whitespace",
        "sample": "all",
        "seed": 12345,
        "smoothing": "method1",
    },
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
    scores every text, so ``sample`` only chooses which hypotheses are averaged."""
    n = int(n)
    if n < 1:
        raise GenmetricsError(f"self_bleu: n must be >= 1, got {n}")
    if smoothing != "method1":
        raise GenmetricsError(
            f"self_bleu: only smoothing='method1' is supported, got {smoothing!r}"
        )
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
