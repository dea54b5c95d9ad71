"""Toy ground truth for OmniInput without a language model: exhaustive enumeration of V^L,
exact ρ(z) and r(z), the digit-sum annotator and an analytic linear energy with an exact
gradient (so the gradient proposal can be tested)."""

from __future__ import annotations

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.omniinput.density import Bins
from genmetrics.omniinput.sampler import OutputFn

#: the most sequences :func:`enumerate_outputs` walks through
MAX_ENUMERATION = 20_000_000


def all_sequences(
    vocab_size: int, length: int, start: int = 0, stop: int | None = None
) -> np.ndarray:
    """Sequences number ``start`` … ``stop − 1`` of V^L in lexicographic order (int64, (n, L));
    sequence k has token i = digit i of k in base V, most significant first."""
    stop = vocab_size**length if stop is None else stop
    k = np.arange(start, stop, dtype=np.int64)
    powers = vocab_size ** np.arange(length - 1, -1, -1, dtype=np.int64)
    return (k[:, None] // powers[None, :]) % vocab_size


def enumerate_outputs(
    f: OutputFn,
    vocab_size: int,
    length: int,
    batch: int = 65_536,
    max_sequences: int = MAX_ENUMERATION,
) -> np.ndarray:
    """z(x) for every x in V^L, in the order of :func:`all_sequences` (float64, (V^L,)).

    Refuses (GenmetricsError) when V^L > ``max_sequences``.
    """
    if vocab_size < 1 or length < 1 or batch < 1:
        raise GenmetricsError(
            f"enumerate_outputs: vocab_size, length and batch must be positive, got "
            f"vocab_size={vocab_size}, length={length}, batch={batch}"
        )
    total = vocab_size**length
    if total > max_sequences:
        raise GenmetricsError(
            f"enumerate_outputs: V^L = {vocab_size}^{length} = {total:.4g} sequences is more "
            f"than the limit of {max_sequences:.4g} (max_sequences); shrink vocab_size or length"
        )
    out = np.empty(total, np.float64)
    for start in range(0, total, batch):
        stop = min(start + batch, total)
        z = np.asarray(f(all_sequences(vocab_size, length, start, stop)), np.float64)
        if z.shape != (stop - start,):
            raise GenmetricsError(
                f"enumerate_outputs: f returned shape {z.shape} for {stop - start} sequences"
            )
        out[start:stop] = z
    return out


def exact_ln_rho(z: np.ndarray, bins: Bins) -> np.ndarray:
    """ln #{x : z(x) ∈ bin} per bin (−inf for empty bins); outputs outside the bins are not
    counted."""
    idx = bins.index(np.asarray(z))
    counts = np.bincount(idx[idx >= 0], minlength=bins.n).astype(np.float64)
    with np.errstate(divide="ignore"):
        return np.log(counts)


def exact_r(z: np.ndarray, scores: np.ndarray, bins: Bins) -> np.ndarray:
    """r(z) = mean annotation score of the sequences in each bin (NaN for empty bins)."""
    idx = bins.index(np.asarray(z))
    scores = np.asarray(scores, np.float64)
    if scores.shape != np.shape(z):
        raise GenmetricsError(
            f"exact_r: scores has shape {scores.shape}, z has shape {np.shape(z)}"
        )
    keep = idx >= 0
    n = np.bincount(idx[keep], minlength=bins.n).astype(np.float64)
    s = np.bincount(idx[keep], weights=scores[keep], minlength=bins.n)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, s / n, np.nan)


def digit_sum_rule(tokens: np.ndarray, m: int) -> np.ndarray:
    """The toy annotator: 1.0 where the digit sum (token i is digit i) is divisible by ``m``."""
    if int(m) != m or m < 1:
        raise GenmetricsError(f"digit_sum_rule: m must be a positive integer, got {m!r}")
    tokens = np.asarray(tokens)
    return (tokens.sum(axis=-1) % m == 0).astype(np.float64)


class LinearToy:
    """z(x) = Σ_i W[i, x_i] with W ~ N(0, scale²) of shape (L, V) drawn with ``seed``; the
    gradient w.r.t. the one-hot input is W itself (exact, so first-order estimates are exact)."""

    def __init__(self, vocab_size: int, length: int, seed: int = 0, scale: float = 1.0) -> None:
        self.vocab_size, self.length = vocab_size, length
        self.W = np.random.default_rng(seed).normal(0.0, scale, size=(length, vocab_size))

    def __call__(self, tokens: np.ndarray) -> np.ndarray:
        tokens = np.asarray(tokens, np.int64)
        return self.W[np.arange(self.length)[None, :], tokens].sum(axis=1)

    def grad(self, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(z, ∂z/∂onehot) with the gradient (n, L, V) = W for every sequence."""
        z = self(tokens)
        return z, np.broadcast_to(self.W, (len(z), self.length, self.vocab_size)).copy()

    def bounds(self) -> tuple[float, float]:
        """The exact minimum and maximum of z over V^L."""
        return float(self.W.min(axis=1).sum()), float(self.W.max(axis=1).sum())
