"""Lexical diversity per text: TTR, MATTR, HD-D, MTLD, as ``lexical-diversity`` 0.1.1 computes them.

Reference: kristopherkyle/lexical_diversity (PyPI ``lexical-diversity`` 0.1.1, commit 746738d),
``lex_div.py``. Our implementation is independent (O(n) sliding windows, grouped HD-D terms)
and reproduces the package's numbers, including its quirks:

* Tokenisation (:func:`ld_tokenize`): the literal strings
  ```` `` '' ' . , ? ! ) ( % / - _ -LRB- -RRB- SYM : ; ```` are deleted with ``str.replace`` in
  that order (so apostrophes and hyphens vanish inside words: ``don't`` → ``dont``, and the
  upper-case string ``SYM`` is removed before lower-casing), whitespace runs become one space,
  the text is lower-cased and split on ``" "``. Leading/trailing whitespace therefore yields an
  empty-string token (``" a b"`` → ``['', 'a', 'b']``), and a text made only of those
  punctuation strings yields ``['']``; both count as tokens exactly as in the package.
  Non-ASCII text is kept (Unicode whitespace and lower-casing).
* Each registered metric returns the mean over texts of the per-text value (``{name}``), the
  population standard deviation (``{name}_std``) and the per-text values in ``extras``.
  MATTR and HD-D also take ``pool: concatenated``: one score on the texts joined by a space
  (``lex_div.mattr(lex_div.tokenize(" ".join(texts)))``), the convention of Shaib et al.
  (2024, §3: the token/type scores are computed "with the outputs from a model concatenated
  into a single text"); ``{name}_std`` is then NaN (one value, no spread over texts).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics.registry import HIGHER, MetricResult, register
from genmetrics.params import BOOL, Interval, Options

#: Strings deleted by ``lexical_diversity.lex_div.tokenize``, in its order.
LD_PUNCTUATION: tuple[str, ...] = tuple(
    "`` '' ' . , ? ! ) ( % / - _ -LRB- -RRB- SYM : ;".split(" ")
)
_WS = re.compile(r"\s+")


def ld_tokenize(text: str) -> list[str]:
    """``lexical_diversity.lex_div.tokenize``: delete punctuation strings, collapse whitespace,
    lower-case, split on single spaces (empty tokens at the edges are kept, as upstream)."""
    for p in LD_PUNCTUATION:
        text = text.replace(p, "")
    return _WS.sub(" ", text).lower().split(" ")


@lru_cache(maxsize=1)
def _lemma_dict() -> dict[str, str]:
    """The package's lemma table (``e_lemma_lower_clean.txt``: tab-separated, lemma first)."""
    try:
        from importlib.resources import files

        raw = (files("lexical_diversity") / "e_lemma_lower_clean.txt").read_text()
    except (ModuleNotFoundError, FileNotFoundError) as e:
        raise GenmetricsError(
            "lemmatize=true needs the lemma table of the 'lexical-diversity' package "
            "(pip install lexical-diversity==0.1.1)"
        ) from e
    table: dict[str, str] = {}
    for line in raw.split("\n"):
        if not line or line[0] == "#":
            continue
        forms = line.split("\t")
        for w in forms:
            table[w] = forms[0]
    return table


def ld_lemmatize(text: str) -> list[str]:
    """``lexical_diversity.lex_div.flemmatize``: :func:`ld_tokenize` then lemma look-up."""
    table = _lemma_dict()
    return [table.get(w, w) for w in ld_tokenize(text)]


def ttr_score(tokens: Sequence[str]) -> float:
    """Type-token ratio |types| / |tokens| (0 for no tokens)."""
    return len(set(tokens)) / len(tokens) if tokens else 0.0


def mattr_score(tokens: Sequence[str], window: int = 50) -> float:
    """Moving-average TTR (Covington & McFall 2010) as ``lex_div.mattr``.

    Mean of TTR over every full window of ``window`` tokens (``len - window + 1`` windows);
    texts with fewer than ``window + 1`` tokens get their plain TTR.
    """
    n = len(tokens)
    if n < window + 1:
        return ttr_score(tokens)
    counts: Counter[str] = Counter(tokens[:window])
    distinct = [len(counts)]
    for i in range(window, n):
        new, old = tokens[i], tokens[i - window]
        counts[new] += 1
        counts[old] -= 1
        if counts[old] == 0:
            del counts[old]
        distinct.append(len(counts))
    # sequential float sum of d/window, in the package's order (bit-identical)
    total = float(np.cumsum(np.asarray(distinct, dtype=np.float64) / float(window))[-1])
    return total / len(distinct)


def _hyper_none(n: int, f: int, sample: int) -> float:
    """P(a type of frequency f is absent from a random sample of ``sample`` of n tokens)."""
    try:
        return float(math.comb(n - f, sample)) / float(math.comb(n, sample))
    except OverflowError:  # huge n: same ratio as a product of 'sample' factors
        return math.prod((n - f - i) / (n - i) for i in range(sample))


def hdd_score(tokens: Sequence[str], sample: int = 42) -> float:
    """HD-D (McCarthy & Jarvis 2007) as ``lex_div.hdd``.

    ``Σ_types (1 − C(N−f, s)/C(N, s)) / s`` with exact integer binomials (s = ``sample``);
    every term is 0 when N < s, so **HD-D = 0 for texts shorter than ``sample`` tokens**.
    """
    n = len(tokens)
    if n < sample:
        return 0.0
    freq_of_freq = Counter(Counter(tokens).values())
    return sum(
        k * ((1.0 - _hyper_none(n, f, sample)) * (1 / sample)) for f, k in freq_of_freq.items()
    )


def _mtld_pass(tokens: Sequence[str], threshold: float, min_length: int) -> float:
    factor = 0.0
    lengths = 0
    seen: set[str] = set()
    start = 0
    n = len(tokens)
    for x, tok in enumerate(tokens):
        seen.add(tok)
        length = x + 1 - start
        ttr = len(seen) / length
        if x + 1 == n:  # the last factor is always partial, even when it just closed
            factor += (1 - ttr) / (1 - threshold)
            lengths += length
        elif ttr < threshold and length >= min_length:
            factor += 1
            lengths += length
            start = x + 1
            seen = set()
    return lengths / factor if factor != 0 else 0.0


def mtld_score(tokens: Sequence[str], threshold: float = 0.72, min_length: int = 10) -> float:
    """MTLD (McCarthy & Jarvis 2010) as ``lex_div.mtld``: mean of the forward and backward
    passes; a factor closes when TTR < ``threshold`` and it has ≥ ``min_length`` tokens; the
    final factor counts (1 − TTR)/(1 − threshold); MTLD = tokens / factors (0 if no factor)."""
    fwd = _mtld_pass(tokens, threshold, min_length)
    bwd = _mtld_pass(list(reversed(tokens)), threshold, min_length)
    return (fwd + bwd) / 2


def _tokens(texts: list[str], lemmatize: bool) -> list[list[str]]:
    fn = ld_lemmatize if lemmatize else ld_tokenize
    return [fn(t) for t in texts]


def _result(
    name: str,
    per_text_fn: Callable[[list[str]], float],
    tokens: list[list[str]],
    minimum: int,
    short_texts: str,
) -> MetricResult:
    """Per-text scores → corpus mean, with the aggregation policy.

    ``short_texts="exclude"`` (default) leaves out texts with fewer than ``minimum`` words (and
    texts with no word) and counts them in ``n["excluded"]``; when every text is excluded the
    mean is NaN here, and :func:`genmetrics.metrics.compute` refuses it (naming the parameter).
    ``"upstream"`` scores every text as lexical-diversity does (HD-D 0 for short texts, MATTR
    their plain TTR) for exact comparison with the package.
    """
    words = np.asarray([sum(1 for w in t if w) for t in tokens])
    keep = np.ones(len(tokens), bool) if short_texts == "upstream" else words >= max(minimum, 1)
    arr = np.asarray([per_text_fn(t) for t, k in zip(tokens, keep, strict=True) if k], np.float64)
    mean = float(arr.mean()) if arr.size else float("nan")
    std = float(arr.std()) if arr.size else float("nan")
    return MetricResult(
        values={name: mean, f"{name}_std": std},
        extras={"per_text": arr, "n_tokens": np.asarray([len(t) for t in tokens])},
        n={
            "candidate": len(tokens),
            "scored": int(arr.size),
            "excluded": int(len(tokens) - arr.size),
            "no_words": int((words == 0).sum()),
            "short": int((words < minimum).sum()),
        },
    )


def _pooled(
    name: str,
    score_fn: Callable[[list[str]], float],
    texts: list[str],
    lemmatize: bool,
    minimum: int,
) -> MetricResult:
    """One score on the texts joined by a space (``pool: concatenated``); a concatenation of
    fewer than ``minimum`` words excludes every text (an error naming the parameter)."""
    joined = " ".join(texts)
    toks = ld_lemmatize(joined) if lemmatize else ld_tokenize(joined)
    words = sum(1 for w in toks if w)
    short = words < max(minimum, 1)
    value = float("nan") if short else score_fn(toks)
    return MetricResult(
        values={name: value, f"{name}_std": float("nan")},
        extras={"n_tokens": np.asarray([len(toks)])},
        n={
            "candidate": len(texts),
            "scored": 0 if short else len(texts),
            "excluded": len(texts) if short else 0,
            "tokens": len(toks),
        },
    )


_SHORT = Options("exclude", "upstream")
_POOL = (
    Options("texts", "concatenated"),
    "texts: the mean of per-text scores; concatenated: one score on the texts joined by a "
    "space (Shaib et al. 2024)",
)


def _lexical(
    name: str,
    params: dict,
    short_doc: str,
    minimum: str,
    citation: str,
    scale: str = "0–1",
    length: str | None = None,
):
    """The registration shared by the four lexical-diversity scores (one per-text policy);
    ``scale``: of the per-text value (and so of its mean and standard deviation); ``length``:
    the parameter giving the fewest words a text needs (None: one word)."""

    def exclusion(p: Mapping[str, Any]) -> str:
        if length is None:
            return "have no word; use short_texts: upstream to score them as lexical-diversity"
        return (
            f"are shorter than {length}={p[length]} words; lower {length} or use "
            "short_texts: upstream"
        )

    return register(
        name,
        input="texts",
        values={name: HIGHER, f"{name}_std": None},
        family="lexical",
        scale=scale,
        params={
            **params,
            "lemmatize": (BOOL, "lemmatize with the package's table before counting"),
            "short_texts": (_SHORT, short_doc),
        },
        aggregation=f"mean over texts with at least {minimum} (others excluded, n.excluded)",
        exclusion=exclusion,
        duplicates_change_value=False,  # a mean (and std) of per-text values
        # pooled (MATTR, HD-D): a copy adds its words to the one concatenated text
        duplicates_when=lambda p: p.get("pool", "texts") == "concatenated",
        upstream=f"lexical-diversity 0.1.1 lex_div.{name}",
        citation=citation,
    )


@_lexical(
    "ttr", {}, "texts with no word: exclude, or score 0 as upstream", "one word", "Templin (1957)"
)
def ttr(candidate: list[str], *, lemmatize: bool = False, short_texts: str = "exclude"):
    """Type-token ratio per text (``lex_div.ttr`` on ``lex_div.tokenize``), mean over texts.

    Empty texts (no word) are excluded by default; ``short_texts="upstream"`` scores them 0.
    """
    return _result("ttr", ttr_score, _tokens(candidate, lemmatize), 1, short_texts)


@_lexical(
    "mattr",
    {"window": (Interval(int, 1, None), "tokens per moving window"), "pool": _POOL},
    "texts shorter than window: exclude, or their plain TTR as upstream",
    "`window` words",
    "Covington & McFall (2010)",
    length="window",
)
def mattr(
    candidate,
    *,
    window: int = 50,
    lemmatize: bool = False,
    short_texts: str = "exclude",
    pool: str = "texts",
):
    """Moving-average type-token ratio per text (``lex_div.mattr``, window 50), mean over texts.

    Texts with fewer than ``window`` words have no full window: they are excluded by default
    (``n["excluded"]``); ``short_texts="upstream"`` gives them their plain TTR, as the package.
    ``pool="concatenated"``: one MATTR over the texts joined by a space (windows cross texts).
    """
    if pool == "concatenated":
        return _pooled("mattr", lambda t: mattr_score(t, window), candidate, lemmatize, window)
    toks = _tokens(candidate, lemmatize)
    return _result("mattr", lambda t: mattr_score(t, window), toks, window, short_texts)


@_lexical(
    "hdd",
    {
        "sample": (Interval(int, 1, None), "tokens drawn (hypergeometric sample size)"),
        "pool": _POOL,
    },
    "texts shorter than sample: exclude, or score 0 as upstream",
    "`sample` words",
    "McCarthy & Jarvis (2007)",
    length="sample",
)
def hdd(
    candidate,
    *,
    sample: int = 42,
    lemmatize: bool = False,
    short_texts: str = "exclude",
    pool: str = "texts",
):
    """HD-D per text (``lex_div.hdd``, sample 42), mean over texts.

    The package scores 0 for texts with fewer than ``sample`` tokens, which makes a corpus with
    short texts look less diverse (a length effect, Shaib et al. 2024). By default those texts
    are excluded from the mean (``n["excluded"]``); ``short_texts="upstream"`` keeps the zeros.
    ``pool="concatenated"``: one HD-D over the texts joined by a space.
    """
    if pool == "concatenated":
        return _pooled("hdd", lambda t: hdd_score(t, sample), candidate, lemmatize, sample)
    toks = _tokens(candidate, lemmatize)
    return _result("hdd", lambda t: hdd_score(t, sample), toks, sample, short_texts)


@_lexical(
    "mtld",
    {"threshold": (Interval(float, 0, 1, closed="neither"), "TTR at which a factor closes")},
    "texts with no word: exclude, or score as upstream",
    "one word",
    "McCarthy & Jarvis (2010)",
    scale="words",  # tokens per factor
)
def mtld(candidate, *, threshold: float = 0.72, lemmatize: bool = False, short_texts="exclude"):
    """MTLD per text (``lex_div.mtld``, TTR threshold .72, min factor length 10), mean over texts.

    Empty texts (no word) are excluded by default; ``short_texts="upstream"`` scores them as
    the package does.
    """
    toks = _tokens(candidate, lemmatize)
    return _result("mtld", lambda t: mtld_score(t, threshold), toks, 1, short_texts)
