"""Corpus diversity scores of Shaib et al. (PyPI ``diversity`` 0.3.1, cshaib/diversity).

All scores take a list of texts and no reference. Conventions matched (see
``docs/metrics-reference.md`` §A3):

- ``compression_ratio``: UTF-8 bytes of ``" ".join(texts)`` / compressed bytes. The package
  writes ``gzip.compress(data)`` *into* ``gzip.GzipFile(".../compressed.gz", "w+")`` (double
  gzip, both level 9; the outer header stores the file name "compressed"), and
  ``convention="diversity"`` (default) builds exactly those bytes; ``"single"`` is one plain
  ``gzip.compress``. ``xz`` = ``lzma.open(..., "wb")`` = ``lzma.compress`` (preset 6, XZ
  format) in both conventions. The package rounds to 3 decimals (``round=3``); we return the
  unrounded ratio by default.

  The inner header holds the package's wall clock (``gzip.compress`` stores ``time.time()``),
  and the outer deflate compresses those 4 bytes. For most corpora the outer stream is a
  stored block and the clock does not matter; for short or very repetitive ones the 4 bytes
  are Huffman-coded and the package's own size moves by 1-3 bytes with the second it runs
  (over 2024-2030: "the cat sat on the mat" × 50 gives 78 bytes in 91 % of seconds, 79 in 9 %).
  We store the fixed second ``_MTIME`` (2025-06-15), which gives the package's most frequent
  size on every corpus we measured. An mtime of 0 — what this module used to store — is not
  a possible clock: its four zero bytes extend the zero run before them into a deflate match
  and the file comes out 2-5 bytes short (the package README's three-sentence corpus: 140
  instead of 142 bytes, ratio 1.157 instead of 1.141).
- ``pos_compression_ratio``: the same ratio over per-text space-joined PTB tag sequences.
- ``ngram_diversity``: ``" ".join(texts).split(" ")`` (n-grams cross text boundaries, empty
  tokens kept), score = Σ_{n=1..num_n} |unique n-grams| / |n-grams| (range 0..num_n).
- ``self_repetition`` (Salkar et al. 2022, the package's current formula): per text the set of
  unique ``text.split()`` n-grams; df(g) = number of texts containing g;
  score = mean_texts ln(1 + Σ_{g in text} (df(g) − 1)).

Empty texts are scored as the package scores them, never left out: in the joined corpus an
empty text adds its separating space (compression ratios, n-gram diversity: an empty token);
in self-repetition it is a text with no n-gram, ln(1) = 0, counted in the mean.
"""

from __future__ import annotations

import builtins
import gzip
import io
import lzma
from collections.abc import Callable

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics._ngrams import doc_gram_counts, doc_ngrams, n_unique
from genmetrics.metrics.registry import HIGHER, LOWER, MetricResult, register
from genmetrics.params import Const, Interval, Options

__all__ = [
    "compression_ratio",
    "compressed_size",
    "ngram_diversity",
    "pos_compression_ratio",
    "self_repetition",
]

#: the clock second stored in the inner gzip header (see the module doc)
_MTIME = 1_750_000_000


# ---------------------------------------------------------------- compression ratio


def compressed_size(data: bytes, algorithm: str = "gzip", convention: str = "diversity") -> int:
    """Size in bytes of ``data`` compressed as the ``diversity`` package does (see module doc)."""
    if algorithm == "xz":
        return len(lzma.compress(data))
    if convention == "single":
        return len(gzip.compress(data, compresslevel=9, mtime=0))
    buf = io.BytesIO()
    # outer file as GzipFile('.../compressed.gz', 'w+') writes it: FNAME "compressed", level 9
    with gzip.GzipFile(filename="compressed.gz", mode="wb", fileobj=buf, mtime=0) as f:
        f.write(gzip.compress(data, mtime=_MTIME))  # inner: the package's gzip.compress(data)
    return len(buf.getvalue())


def _ratio(joined: str, n: int, algorithm: str, convention: str, digits: int | None):
    data = joined.encode("utf-8")
    comp = compressed_size(data, algorithm, convention)
    value = len(data) / comp  # 0.0 for a corpus of one empty text, as the package
    if digits is not None:
        value = builtins.round(value, digits)
    return MetricResult(
        values={"compression_ratio": value},
        extras={"original_bytes": len(data), "compressed_bytes": comp},
        n={"candidate": n},
    )


_CR_PARAMS = {
    "algorithm": (Options("gzip", "xz"), "compressor"),
    "convention": (Options("diversity", "single"), "diversity: the package's double gzip"),
    "round": ((Interval(int, 0, None), Const(None)), "decimals (3 = the package's rounding)"),
}


def _compression_metric(
    name: str, input: str, join: Callable[[list], str], what: str, suffix: str = ""
):
    """Register the compression ratio of one input kind: texts, or POS tag sequences."""

    def metric(
        candidate: list,
        *,
        algorithm: str = "gzip",
        convention: str = "diversity",
        round: int | None = None,  # noqa: A002 (stable parameter name)
    ) -> MetricResult:
        return _ratio(join(candidate), len(candidate), algorithm, convention, round)

    metric.__name__ = metric.__qualname__ = name
    metric.__doc__ = (
        f"Compression ratio of {what} = UTF-8 bytes of the space-joined corpus / compressed "
        "bytes (higher = more repetitive), as ``diversity.compression_ratio`` (double gzip by "
        "default; ``round=3`` gives the package's rounded number)."
    )
    return register(
        name,
        input=input,
        values={"compression_ratio": LOWER},
        params=_CR_PARAMS,
        family="diversity",
        scale="≥ 0",  # bytes / compressed bytes
        upstream=f"diversity 0.3.1 compression_ratio{suffix}",
        citation="Shaib et al. (2024)",
    )(metric)


#: ``" ".join(texts)``, as ``diversity.compression_ratio``
compression_ratio = _compression_metric("compression_ratio", "texts", " ".join, "texts")
#: Shaib et al.'s "CR: POS": the ratio of ``[" ".join(tags) for tags in docs]`` on the PTB tags
#: of the pos_tags feature (:func:`genmetrics.features.pos.tag_texts`: NLTK perceptron on
#: ``text.split()`` = diversity <= 0.1.22)
pos_compression_ratio = _compression_metric(
    "pos_compression_ratio",
    "pos",
    lambda docs: " ".join(" ".join(tags) for tags in docs),
    "part-of-speech tag sequences",
    " of POS sequences (NLTK perceptron tags of text.split(), as diversity <= 0.1.22; 0.3.1 "
    "tags with spaCy)",
)


# ---------------------------------------------------------------- n-gram diversity


@register(
    "ngram_diversity",
    input="texts",
    values={
        "ngram_diversity": HIGHER,
        "ngram_diversity_1": HIGHER,
        "ngram_diversity_2": HIGHER,
        "ngram_diversity_3": HIGHER,
        "ngram_diversity_4": HIGHER,
    },
    family="diversity",
    scale={"ngram_diversity": "0–n", **{f"ngram_diversity_{n}": "0–1" for n in range(1, 5)}},
    params={
        "num_n": (Interval(int, 1, 4), "largest n (the sum runs over n = 1..num_n)"),
        "round": ((Interval(int, 0, None), Const(None)), "decimals (3 = the package's rounding)"),
    },
    upstream="diversity 0.3.1 ngram_diversity_score",
    citation="Shaib et al. (2024)",
)
def ngram_diversity(
    candidate: list[str],
    *,
    num_n: int = 4,
    round: int | None = None,  # noqa: A002
) -> MetricResult:
    """N-gram diversity = Σ_{n=1..num_n} |unique n-grams| / |n-grams| over the single token stream
        ``" ".join(texts).split(" ")`` (as ``diversity.ngram_diversity_score``, which rounds the sum
        to 3: ``round=3``). Per-n ratios are reported as ``ngram_diversity_n``. An empty text is an
    empty token of the stream, as in the package."""
    words = " ".join(candidate).split(" ")
    if len(words) < num_n:  # the package divides by zero here
        raise GenmetricsError(
            f"ngram_diversity: the corpus has {len(words)} token(s), fewer than num_n={num_n}"
        )
    grams = doc_ngrams([words], num_n)  # one document: n-grams cross text boundaries
    per_n = {f"ngram_diversity_{k}": n_unique(g) / len(g) for k, (_, g) in grams.items()}
    total = sum(per_n.values())
    values = {"ngram_diversity": total if round is None else builtins.round(total, round)}
    return MetricResult(
        values={**values, **per_n}, n={"candidate": len(candidate), "tokens": len(words)}
    )


# ---------------------------------------------------------------- self-repetition


@register(
    "self_repetition",
    input="texts",
    values={"self_repetition": LOWER},
    family="diversity",
    scale="≥ 0",  # a mean of ln(1 + a count)
    params={"n": (Interval(int, 1, None), "n-gram order")},
    upstream="diversity 0.3.1 self_repetition_score",
    citation="Salkar et al. (2022); Shaib et al. (2024)",
)
def self_repetition(candidate: list[str], *, n: int = 4) -> MetricResult:
    """Self-repetition (Salkar et al. 2022) as ``diversity.self_repetition_score`` ≥ 0.3:
        mean over texts of ln(1 + Σ_{g ∈ set(ngrams_n(text.split()))} (df(g) − 1)), df(g) = number
        of texts containing n-gram g. Texts shorter than n (empty ones too) contribute ln(1) = 0
    and count in the mean, as in the package."""
    d, gid = doc_ngrams([t.split() for t in candidate], n)[n]
    docs, grams, _ = doc_gram_counts(d, gid)  # each n-gram once per text
    df = np.bincount(grams)  # number of texts holding each n-gram
    sum_ni = np.bincount(docs, weights=df[grams] - 1, minlength=len(candidate))
    per_doc = np.log(sum_ni + 1.0)
    return MetricResult(
        values={"self_repetition": float(per_doc.mean())},
        extras={"per_text": per_doc},
        n={"candidate": len(candidate)},
    )
