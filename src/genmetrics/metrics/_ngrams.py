"""Tokens and n-grams as dense integer ids: the one n-gram engine of the text metrics.

Used by ``ngram_diversity`` and ``self_repetition`` (diversity.py), ``rep_n`` and
``distinct_n`` (repetition.py) and ``self_bleu``. Each metric keeps its upstream convention by
what it passes in: one document per text (n-grams stay inside a text) or the whole corpus as
one token stream (n-grams cross text boundaries, ``ngram_diversity``), and which tokens
(``str.split()``, ``" ".join(...).split(" ")`` with its empty tokens, GPT-2 ids, or a text
without its last token for SimCTG). An empty text is a document with no token: it has no
n-gram, and its index still counts in per-document results.

All counts are vectorised (``np.unique`` over int64 keys), O(tokens · log tokens).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from genmetrics import GenmetricsError

TOKENIZERS = ("whitespace", "gpt2")


def tokenize(texts: Sequence[str], tokenizer: str = "whitespace") -> list[list]:
    """``whitespace``: ``text.split()``; ``gpt2``: GPT-2 BPE ids (HF ``gpt2`` tokenizer without
    special tokens added; ``<|endoftext|>`` in a text is the special id 50256, as HF parses it)."""
    if tokenizer == "whitespace":
        return [t.split() for t in texts]
    if tokenizer == "gpt2":
        from genmetrics.data.assets import gpt2_encoding

        enc = gpt2_encoding()
        return enc.encode_batch(list(texts), allowed_special="all", num_threads=2)
    raise GenmetricsError(f"tokenizer must be one of {TOKENIZERS}, got {tokenizer!r}")


def token_ids(docs: Sequence[Sequence[Any]]) -> tuple[np.ndarray, np.ndarray, int]:
    """Map hashable tokens of each document to dense int64 ids.

    Returns ``(tok, doc, vocab_size)``: concatenated token ids and the document index of each
    token position. Integer tokens (e.g. GPT-2 ids) are densified with ``np.unique``.
    """
    lens = np.fromiter((len(d) for d in docs), dtype=np.int64, count=len(docs))
    doc = np.repeat(np.arange(len(docs), dtype=np.int64), lens)
    if lens.sum() == 0:
        return np.zeros(0, np.int64), doc, 0
    first = next(d for d in docs if len(d))
    if isinstance(first, np.ndarray) or isinstance(first[0], (int, np.integer)):
        flat = np.concatenate([np.asarray(d, dtype=np.int64) for d in docs])
        uniq, tok = np.unique(flat, return_inverse=True)
        return tok.astype(np.int64), doc, len(uniq)
    vocab: dict[Any, int] = {}
    tok = np.fromiter(
        (vocab.setdefault(t, len(vocab)) for d in docs for t in d),
        dtype=np.int64,
        count=int(lens.sum()),
    )
    return tok, doc, len(vocab)


def ngram_ids(
    tok: np.ndarray, doc: np.ndarray, vocab_size: int, nmax: int
) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Dense ids of every n-gram (n = 1..nmax) that lies inside one document.

    Returns ``{n: (start_positions, ids)}``; equal ids ⇔ equal token tuples. Built iteratively:
    the n-gram at p is the pair (id of the (n−1)-gram at p, token at p+n−1).
    """
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    N = len(tok)
    cur = tok
    empty = np.zeros(0, np.int64)
    out[1] = (np.arange(N, dtype=np.int64), tok)
    for k in range(2, nmax + 1):
        m = N - k + 1
        if m <= 0:
            out[k] = (empty, empty)
            continue
        key = cur[:m] * np.int64(max(vocab_size, 1)) + tok[k - 1 : k - 1 + m]
        _, cur = np.unique(key, return_inverse=True)
        cur = cur.astype(np.int64)
        valid = doc[:m] == doc[k - 1 : k - 1 + m]
        pos = np.flatnonzero(valid)
        out[k] = (pos, cur[pos])
    return out


def doc_ngrams(
    docs: Sequence[Sequence[Any]], nmax: int
) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """``{n: (doc index, n-gram id)}`` of every n-gram inside each document, n = 1..nmax."""
    tok, doc, vocab = token_ids(docs)
    return {n: (doc[pos], gid) for n, (pos, gid) in ngram_ids(tok, doc, vocab, nmax).items()}


def n_unique(gid: np.ndarray) -> int:
    """Number of distinct n-grams (ids are small non-negative ints: one bincount, no sort)."""
    return int(np.count_nonzero(np.bincount(gid))) if len(gid) else 0


def doc_gram_counts(d: np.ndarray, gid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct (document, n-gram) pairs and how often each n-gram occurs in that document:
    ``(doc, gram, count)`` sorted by document, then n-gram."""
    G = int(gid.max()) + 1 if len(gid) else 1
    key, cnt = np.unique(d * np.int64(G) + gid, return_counts=True)
    return key // G, key % G, cnt
