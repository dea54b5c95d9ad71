"""Zipf coefficient of generated text (Holtzman et al. 2020), in its two published conventions.

Both pool every token of every text into one frequency table (an empty text adds nothing),
sort the frequencies in decreasing order, f_1 ≥ f_2 ≥ …, and fit a least-squares line
ln f = a + b · ln rank. The exponent s of f ∝ rank^(−s) is s = −b. V is the number of distinct
tokens, N = ``max_rank`` (5000 in both references) and M = min(V, N).

* ``degen`` — ari-holtzman/degen ``metrics/zipf.py``: every rank r = 1..M is one point,
  ``scipy.stats.linregress(ln r, ln f_r)``; degen prints −slope and −r.
* ``mauve`` — krishnap25/mauve-experiments ``src/metrics.py::zipf_coeff(samples, min_num=1,
  max_num=5000, stretch_factor=15)``: ranks r = 1..M−1 (``np.arange(1, M)``: the last rank is
  left out), binned on a log grid x_r = round(15 · ln r) / 15; one point per distinct x, at the
  first (most frequent) rank of its bin: (x, ln f_r). ``sklearn LinearRegression`` slope,
  returned as is (negative for Zipfian text).

Reported in both conventions: ``zipf`` = −b (the positive exponent s; degen's number, and
mauve-experiments' number negated), ``zipf_slope`` = b (the fitted slope itself: mauve-experiments'
number, degen's negated), ``zipf_r`` = −r (Pearson r of the fitted points, negated as degen
prints it). The two conventions give different numbers on the same text: compare a model with
human text under one convention.

One deliberate difference from degen: when every fitted frequency is equal (e.g. each token
once) the line is flat (slope 0, so ``zipf`` = 0 in both conventions, as scipy and sklearn
give) but r is 0/0; ``scipy.stats.linregress`` (1.17) returns r = NaN there, so degen would
print ``nan``. ``zipf_r`` is 0 there instead: a flat rank-frequency curve has no Zipf trend to
correlate with, and 0 keeps the value inside its 0–1 scale (a NaN would be written as null).
"""

from __future__ import annotations

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics._ngrams import token_ids, tokenize
from genmetrics.metrics.registry import MetricResult, register
from genmetrics.params import Interval, Options

#: mauve-experiments' log-rank bin width is 1 / STRETCH (``stretch_factor=15``)
STRETCH = 15


def sorted_frequencies(docs: list[list]) -> np.ndarray:
    """Frequencies of the distinct tokens of all documents pooled, in decreasing order."""
    tok, _, vocab = token_ids(docs)
    return np.sort(np.bincount(tok, minlength=vocab))[::-1]


def _fit(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """Ordinary least squares y = a + b·x: (b, a, Pearson r); r = 0 when x or y is constant
    (scipy's ``linregress`` gives NaN: see the module docstring)."""
    xm, ym = x - x.mean(), y - y.mean()
    sxx, syy, sxy = float(xm @ xm), float(ym @ ym), float(xm @ ym)
    slope = sxy / sxx
    r = 0.0 if sxx == 0 or syy == 0 else max(-1.0, min(1.0, sxy / np.sqrt(sxx * syy)))
    return slope, float(y.mean() - slope * x.mean()), r


def zipf_points(freqs: np.ndarray, convention: str, max_rank: int) -> tuple[np.ndarray, ...]:
    """(ln rank, ln frequency, rank) of the points each convention fits, from sorted freqs."""
    m = min(len(freqs), max_rank)
    if convention == "degen":
        rank = np.arange(1, m + 1)
        return np.log(rank.astype(np.float64)), np.log(freqs[:m].astype(np.float64)), rank
    if convention == "mauve":
        ranks = np.arange(1, m)  # as mauve-experiments: the M-th rank is left out
        x = np.round(STRETCH * np.log(ranks.astype(np.float64))) / STRETCH
        x, first = np.unique(x, return_index=True)
        return x, np.log(freqs[first].astype(np.float64)), ranks[first]
    raise GenmetricsError(f"zipf: convention must be degen or mauve, got {convention!r}")


@register(
    "zipf",
    input="texts",
    values={"zipf": None, "zipf_r": None, "zipf_slope": None},
    family="surprisal",
    # the fit of ln f against ln rank over frequencies sorted descending: slope ≤ 0, r ≤ 0
    scale={"zipf": "≥ 0", "zipf_r": "0–1", "zipf_slope": "≤ 0"},
    params={
        "convention": (Options("degen", "mauve"), "degen: every rank; mauve: log-rank bins"),
        "tokenizer": (Options("gpt2", "whitespace"), "GPT-2 BPE ids (both references) or split"),
        "max_rank": (Interval(int, 2, None), "fit the max_rank most frequent tokens (N)"),
    },
    upstream=(
        "degen metrics/zipf.py (scipy linregress; zipf_r 0 where scipy's r is NaN: all fitted "
        "frequencies equal); mauve-experiments zipf_coeff"
    ),
    assets=lambda p: ("gpt2_bpe",) if p["tokenizer"] == "gpt2" else (),
    citation="Holtzman et al. (2020); Pillutla et al. (2021)",
)
def zipf(
    candidate: list[str],
    *,
    convention: str = "degen",
    tokenizer: str = "gpt2",
    max_rank: int = 5000,
) -> MetricResult:
    """Zipf exponent s = −b of the fit ln f = a + b·ln rank over the top-N token frequencies.

    ``degen`` (Holtzman et al. 2020): points (ln r, ln f_r), r = 1..min(V, N), as
    ``scipy.stats.linregress``; ``mauve`` (mauve-experiments ``zipf_coeff``): ranks
    1..min(V, N)−1 binned at x = round(15·ln r)/15, one point (x, ln f) at the first rank of
    each bin, OLS slope. ``zipf`` = −b (positive), ``zipf_slope`` = b, ``zipf_r`` = −r (0, not
    scipy's NaN, when every fitted frequency is equal).
    ``tokenizer``: ``gpt2`` (GPT-2 BPE ids, as both references) or ``whitespace``. Fewer than
    2 distinct tokens (``mauve``: fewer than 2 bins, i.e. 3 distinct tokens) is an error.
    """
    docs = tokenize(candidate, tokenizer)
    freqs = sorted_frequencies(docs)
    vocab = len(freqs)
    if vocab < 2:
        raise GenmetricsError(
            f"zipf: {vocab} distinct token(s) in {int(freqs.sum())} tokens of "
            f"{len(candidate)} texts ({tokenizer} tokenizer): a rank-frequency slope needs at "
            "least 2 distinct tokens"
        )
    x, y, ranks = zipf_points(freqs, convention, max_rank)
    if len(x) < 2:
        raise GenmetricsError(
            f"zipf: the mauve convention fits ranks 1..min(V, max_rank)−1 in log bins; "
            f"V={vocab} distinct tokens and max_rank={max_rank} leave {len(x)} bin: it needs "
            "at least 2 (3 distinct tokens and max_rank >= 3)"
        )
    slope, intercept, r = _fit(x, y)
    return MetricResult(
        # + 0.0: a flat fit reads 0.0, never −0.0
        values={"zipf": -slope + 0.0, "zipf_r": -r + 0.0, "zipf_slope": slope + 0.0},
        extras={"intercept": intercept, "log_rank": x, "log_freq": y, "rank": ranks},
        n={
            "candidate": len(candidate),
            "tokens": int(freqs.sum()),
            "vocab": vocab,
            "ranks": min(vocab, max_rank) - (convention == "mauve"),
            "points": len(x),
        },
    )
