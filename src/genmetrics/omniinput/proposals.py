"""Proposals of the Wang–Landau walk: one single-token move per walker.

* ``"uniform"`` (:func:`uniform_move`): a position uniformly, a new token uniformly among the
  other V − 1 (symmetric: q ratio 1).
* ``"gradient"`` (:func:`gradient_log_proposal`, drawn with :func:`sample_rows`):
  Gibbs-with-Gradients (Grathwohl et al. 2021) on the one-hot input, as GWL (Liu et al. 2023).
  With g = ∂z/∂onehot (from ``grad_f``), the first-order change of z for token v at position
  i is Δ_{i,v} = g_{i,v} − g_{i,x_i}; the estimated log-target change is
  d_{i,v} = S(bin(z)) − S(bin(clip(z + Δ_{i,v}))) (bin look-up in the current S; an estimate
  beyond the window counts as its edge bin, because it is only a first-order guess: giving
  such moves probability 0 would strand a walker whose reverse moves are all estimated
  outside, and a move that really leaves the window is rejected anyway); q(i, v | x) =
  softmax over (i, v) of d/2 with the stay moves v = x_i excluded (if every move is −inf:
  uniform over the non-stay moves). The reverse q(x | x′) is computed at x′ with its own
  gradient. ``uniform_mix`` = ε mixes in ε of the uniform proposal (default 0: plain GWG).
"""

from __future__ import annotations

import math

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.omniinput.density import Bins


def check_tokens(tokens: np.ndarray, length: int, vocab_size: int) -> np.ndarray:
    """``tokens`` as a contiguous int64 array of shape (n, ``length``) with ids in
    0..``vocab_size`` − 1 (what a target of the walk evaluates), else a clear error."""
    tokens = np.ascontiguousarray(tokens, dtype=np.int64)
    if tokens.ndim != 2 or tokens.shape[1] != length:
        raise GenmetricsError(f"tokens must have shape (n, {length}), got {tokens.shape}")
    if tokens.size and (tokens.min() < 0 or tokens.max() >= vocab_size):
        raise GenmetricsError(f"token ids must be in 0..{vocab_size - 1}")
    return tokens


def uniform_move(tokens: np.ndarray, vocab_size: int, rng: np.random.Generator) -> np.ndarray:
    """A copy of ``tokens`` (sequences, L) with one token per sequence changed: a position
    uniformly, then a new token uniformly among the other V − 1 (positions drawn first, then
    the offsets, from ``rng``)."""
    n, length = tokens.shape
    pos = rng.integers(0, length, size=n)
    off = rng.integers(1, vocab_size, size=n)
    rows = np.arange(n)
    prop = tokens.copy()
    prop[rows, pos] = (tokens[rows, pos] + off) % vocab_size
    return prop


def _log_softmax_rows(logits: np.ndarray) -> np.ndarray:
    m = np.max(logits, axis=1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return logits - m - np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))


def gradient_log_proposal(
    tokens: np.ndarray,
    z: np.ndarray,
    grad: np.ndarray,
    ln_S: np.ndarray,
    bins: Bins,
    uniform_mix: float = 0.0,
) -> np.ndarray:
    """log q(i, v | x) for every walker, flattened to (walkers, L·V) (index i·V + v).

    Δ_{i,v} = g_{i,v} − g_{i,x_i}; d_{i,v} = S(bin(z)) − S(bin(clip(z + Δ_{i,v}, lo, hi)));
    q = softmax(d / 2) over (i, v) with the stay moves v = x_i at −inf; a walker with every
    move at −inf (NaN gradients) gets the uniform proposal over its L(V − 1) non-stay moves. With
    ``uniform_mix`` ε: q = (1 − ε) q + ε uniform. A walker outside the window (z not in a bin)
    gets −inf everywhere (it is never at such a state; used for rejected reverse moves).
    """
    w, length = tokens.shape
    v_size = grad.shape[2]
    rows = np.arange(w)[:, None]
    cols = np.arange(length)[None, :]
    g_cur = grad[rows, cols, tokens]  # (w, L)
    delta = grad - g_cur[:, :, None]
    b = bins.index(z)
    s_cur = np.where(b >= 0, ln_S[np.maximum(b, 0)], np.nan)
    be = bins.index(np.clip(z[:, None, None] + delta, bins.lo, bins.hi))
    d = np.where(be >= 0, s_cur[:, None, None] - ln_S[np.maximum(be, 0)], -np.inf)
    stay = np.zeros((w, length, v_size), bool)
    stay[rows, cols, tokens] = True
    logits = np.where(stay, -np.inf, d / 2).reshape(w, length * v_size)
    uniform = np.where(stay.reshape(w, -1), -np.inf, -math.log(length * (v_size - 1)))
    dead = ~np.isfinite(logits).any(axis=1)
    logits = np.where(dead[:, None], uniform, logits)
    logq = _log_softmax_rows(logits)
    if uniform_mix > 0:
        logq = np.logaddexp(logq + math.log1p(-uniform_mix), uniform + math.log(uniform_mix))
    return np.where((b >= 0)[:, None], logq, -np.inf)


def sample_rows(logq: np.ndarray, u: np.ndarray) -> np.ndarray:
    """One index per row from the probabilities exp(logq), by inversion with uniforms ``u``."""
    c = np.cumsum(np.exp(logq), axis=1)
    target = u[:, None] * c[:, -1:]
    return np.minimum((c <= target).sum(axis=1), logq.shape[1] - 1)
