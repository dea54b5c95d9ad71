"""Corpus diversity scores of Shaib et al. (PyPI ``diversity`` 0.3.1, cshaib/diversity).

All scores take a list of texts and no reference. Conventions matched (see
``docs/metrics-reference.md`` §A3):

- ``compression_ratio``: bytes of ``" ".join(texts)`` (UTF-8) / compressed bytes. The package
  writes ``gzip.compress(data)`` *into* a ``gzip.GzipFile`` named ``compressed.gz`` (double gzip,
  level 9, header with the file name); ``convention="diversity"`` (default) reproduces that size,
  ``"single"`` is one plain ``gzip.compress``. ``xz`` = ``lzma.compress`` (preset 6, XZ format) in
  both conventions. The package rounds to 3 decimals (``round=3``); we return the unrounded ratio
  by default. The only bytes of the package's output we cannot know are the 4 mtime bytes of the
  inner gzip header (the package stores the wall clock); we store 0 — the compressed size can
  differ by a byte at most, invisible at 3 decimals except on a rounding boundary.
- ``pos_compression_ratio``: the same ratio over per-text space-joined PTB tag sequences.
- ``ngram_diversity``: ``" ".join(texts).split(" ")`` (n-grams cross text boundaries, empty
  tokens kept), score = Σ_{n=1..num_n} |unique n-grams| / |n-grams| (range 0..num_n).
- ``self_repetition`` (Salkar et al. 2022, the package's current formula): per text the set of
  unique ``text.split()`` n-grams; df(g) = number of texts containing g;
  score = mean_texts ln(1 + Σ_{g in text} (df(g) − 1)).
"""

from __future__ import annotations

import gzip
import io
import lzma
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics.registry import MetricResult, register

__all__ = [
    "compression_ratio",
    "compressed_size",
    "ngram_diversity",
    "ngram_ids",
    "pos_compression_ratio",
    "self_repetition",
    "token_ids",
]


# ---------------------------------------------------------------- shared n-gram machinery


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


# ---------------------------------------------------------------- compression ratio


def compressed_size(data: bytes, algorithm: str = "gzip", convention: str = "diversity") -> int:
    """Size in bytes of ``data`` compressed as the ``diversity`` package does (see module doc)."""
    if algorithm == "xz":
        return len(lzma.compress(data))
    if algorithm != "gzip":
        raise GenmetricsError(f"compression: algorithm must be 'gzip' or 'xz', got {algorithm!r}")
    if convention == "single":
        return len(gzip.compress(data, compresslevel=9, mtime=0))
    if convention != "diversity":
        raise GenmetricsError(
            f"compression: convention must be 'diversity' or 'single', got {convention!r}"
        )
    # inner: gzip.compress(data) with Python's own header (mtime 0, XFL=2, OS=255)
    header = b"\x1f\x8b\x08\x00" + b"\x00\x00\x00\x00" + b"\x02\xff"
    trailer = (zlib.crc32(data) & 0xFFFFFFFF).to_bytes(4, "little")
    trailer += (len(data) & 0xFFFFFFFF).to_bytes(4, "little")
    inner = header + zlib.compress(data, level=9, wbits=-15) + trailer
    # outer: GzipFile('.../compressed.gz', 'w+') → header with FNAME "compressed"
    buf = io.BytesIO()
    with gzip.GzipFile(filename="compressed.gz", mode="wb", fileobj=buf, mtime=0) as f:
        f.write(inner)
    return len(buf.getvalue())


def _ratio(joined: str, algorithm: str, convention: str, round_: int | None) -> MetricResult:
    data = joined.encode("utf-8")
    if not data:
        raise GenmetricsError("compression_ratio: nothing to compress (all texts empty)")
    comp = compressed_size(data, algorithm, convention)
    value = len(data) / comp
    if round_ is not None:
        value = round(value, int(round_))
    return MetricResult(
        values={"compression_ratio": value},
        extras={"original_bytes": len(data), "compressed_bytes": comp},
    )


@register(
    "compression_ratio",
    input="texts",
    reference="none",
    values=("compression_ratio",),
    params={"algorithm": "gzip", "convention": "diversity", "round": None},
)
def compression_ratio(
    candidate: list[str],
    *,
    algorithm: str = "gzip",
    convention: str = "diversity",
    round: int | None = None,  # noqa: A002 (stable parameter name)
) -> MetricResult:
    """Compression ratio = UTF-8 bytes of ``" ".join(texts)`` / compressed bytes (higher = more
    repetitive), as ``diversity.compression_ratio`` (double gzip by default; ``round=3`` gives
    the package's rounded number)."""
    out = _ratio(" ".join(candidate), algorithm, convention, round)
    out.n = {"candidate": len(candidate)}
    return out


def _as_tags(candidate: Any, tagger: str, tokenization: str) -> list[list[str]]:
    if isinstance(candidate, str):
        raise GenmetricsError("pos_compression_ratio: expected a list, got one string")
    items = list(candidate)
    if not items:
        raise GenmetricsError("pos_compression_ratio: no texts")
    if all(isinstance(x, str) for x in items):  # raw texts: tag them here
        from genmetrics.features.pos import tag_texts
        from genmetrics.metrics.registry import validate_texts

        return tag_texts(validate_texts(items, "candidate"), tagger, tokenization)
    for i, tags in enumerate(items):
        if isinstance(tags, str) or not all(isinstance(t, str) for t in tags):
            raise GenmetricsError(f"pos_compression_ratio: item {i} is not a list of tag strings")
    return [list(t) for t in items]


@register(
    "pos_compression_ratio",
    input="pos",
    reference="none",
    values=("compression_ratio",),
    params={
        "algorithm": "gzip",
        "convention": "diversity",
        "round": None,
        "tagger": "nltk",
        "tokenization": "whitespace",
    },
)
def pos_compression_ratio(
    candidate: list[list[str]] | list[str],
    *,
    algorithm: str = "gzip",
    convention: str = "diversity",
    round: int | None = None,  # noqa: A002
    tagger: str = "nltk",
    tokenization: str = "whitespace",
) -> MetricResult:
    """Compression ratio of part-of-speech sequences (Shaib et al. "CR: POS"):
    ``compression_ratio([" ".join(tags) for tags in docs])``. Receives PTB tags per text; raw
    texts are tagged first with :func:`genmetrics.features.pos.tag_texts` (``tagger``,
    ``tokenization``; NLTK perceptron on ``text.split()`` = diversity ≤ 0.1.22)."""
    docs = _as_tags(candidate, tagger, tokenization)
    out = _ratio(" ".join(" ".join(t) for t in docs), algorithm, convention, round)
    out.n = {"candidate": len(docs)}
    return out


# ---------------------------------------------------------------- n-gram diversity


@register(
    "ngram_diversity",
    input="texts",
    reference="none",
    values=(
        "ngram_diversity",
        "ngram_diversity_1",
        "ngram_diversity_2",
        "ngram_diversity_3",
        "ngram_diversity_4",
    ),
    params={"num_n": 4, "round": None},
)
def ngram_diversity(
    candidate: list[str],
    *,
    num_n: int = 4,
    round: int | None = None,  # noqa: A002
) -> MetricResult:
    """N-gram diversity = Σ_{n=1..num_n} |unique n-grams| / |n-grams| over the single token stream
    ``" ".join(texts).split(" ")`` (as ``diversity.ngram_diversity_score``, which rounds the sum
    to 3: ``round=3``). Per-n ratios are reported as ``ngram_diversity_n``."""
    num_n = int(num_n)
    if num_n < 1:
        raise GenmetricsError(f"ngram_diversity: num_n must be >= 1, got {num_n}")
    words = " ".join(candidate).split(" ")
    if len(words) < num_n:
        raise GenmetricsError(
            f"ngram_diversity: the corpus has {len(words)} token(s), fewer than num_n={num_n}"
        )
    tok, _, v = token_ids([words])
    grams = ngram_ids(tok, np.zeros(len(tok), np.int64), v, num_n)
    values: dict[str, float] = {}
    total = 0.0
    for k in range(1, num_n + 1):
        ids = grams[k][1]
        r = int(np.count_nonzero(np.bincount(ids))) / len(ids)  # ids are dense
        values[f"ngram_diversity_{k}"] = r
        total += r
    values = {"ngram_diversity": total if round is None else builtins_round(total, round), **values}
    return MetricResult(values=values, n={"candidate": len(candidate), "tokens": len(words)})


def builtins_round(x: float, digits: int) -> float:
    """Python's ``round`` (the parameter named ``round`` shadows it inside the metrics)."""
    import builtins

    return builtins.round(x, int(digits))


# ---------------------------------------------------------------- self-repetition


@register(
    "self_repetition",
    input="texts",
    reference="none",
    values=("self_repetition",),
    params={"n": 4},
)
def self_repetition(candidate: list[str], *, n: int = 4) -> MetricResult:
    """Self-repetition (Salkar et al. 2022) as ``diversity.self_repetition_score`` ≥ 0.3:
    mean over texts of ln(1 + Σ_{g ∈ set(ngrams_n(text.split()))} (df(g) − 1)), df(g) = number
    of texts containing n-gram g. Texts shorter than n contribute ln(1) = 0."""
    n = int(n)
    if n < 1:
        raise GenmetricsError(f"self_repetition: n must be >= 1, got {n}")
    docs = [t.split() for t in candidate]
    tok, doc, v = token_ids(docs)
    pos, gid = ngram_ids(tok, doc, v, n)[n]
    d = doc[pos]
    # unique (doc, n-gram) pairs
    G = int(gid.max()) + 1 if len(gid) else 1
    pairs = np.sort(d * np.int64(G) + gid)
    pairs = pairs[np.r_[True, pairs[1:] != pairs[:-1]]] if len(pairs) else pairs
    pd, pg = pairs // G, pairs % G
    df = np.bincount(pg, minlength=G)
    sum_ni = np.bincount(pd, weights=df[pg] - 1, minlength=len(docs))
    per_doc = np.log(sum_ni + 1.0)
    return MetricResult(
        values={"self_repetition": float(per_doc.mean())},
        extras={"per_text": per_doc},
        n={"candidate": len(candidate)},
    )
