"""Wang–Landau estimate of a model's output distribution over fixed-length token sequences.

The input space is Ω = V^L (every token sequence of length L over a vocabulary of V tokens,
uniform prior). For an output function z(x) (mean NLL of a sequence, a classifier logit) and
bins over a window [lo, hi], the density of states is ρ(z) = #{x ∈ Ω : z(x) ∈ bin z} and
S(z) = ln ρ(z). Wang & Landau (2001): a walk with target π(x) ∝ exp(−S(bin(z(x)))) visits every
bin equally often once S is right; S is learnt on the fly.

* ``walkers`` walkers share one S and one histogram H. Every step proposes one move per walker
  and evaluates all proposals in one call; acceptance
  A = min(1, exp(S(z) − S(z′)) · q(x|x′) / q(x′|x)), using S as it was at the start of the
  step; a proposal outside the window is rejected. Then, for every walker,
  S(z_cur) += ln f and H(z_cur) += 1.
* Every ``check_every`` steps the histogram is checked for flatness over the bins visited so
  far: min H ≥ ``flatness`` · mean H → ln f ← ln f / 2, H ← 0.
* 1/t variant (Belardinelli & Pereyra 2007), ``one_over_t``: t = walker-steps so far / bins
  visited so far; as soon as ln f < 1/t (checked after each halving) the run switches to
  ln f = 1/t, recomputed after every step, with no more flatness checks.
* Stop when ln f < ``ln_f_final`` (``stopped="converged"``) or when the next step would exceed
  ``max_evaluations`` (``"budget"``).
* Normalisation: ln ρ̂ = S − logsumexp(S over visited bins) + L ln V, i.e. Σ ρ̂ = V^L — right
  when the window holds every output (otherwise the mass outside the window is missing;
  ``ln_S`` is returned for renormalising).

Proposals (``proposal``): ``"uniform"`` single-token moves or ``"gradient"``
(Gibbs-with-Gradients, as GWL), in :mod:`genmetrics.omniinput.proposals`.

What counts as a model evaluation (``model_evaluations``): one sequence passed to ``f`` or to
``grad_f`` (one forward + backward of one sequence counts as one).

Walker start: uniform random sequences. A walker whose output is outside the window does a
greedy random search first (uniform single-token moves, accepted when the distance to the
window does not grow) for at most ``max_entry_evaluations`` evaluations; walkers still outside
then restart as copies of walkers inside; if none got inside, a :class:`GenmetricsError` names
the window and the outputs seen.

Representative samples: each bin keeps a reservoir (Algorithm R, seeded) of up to
``samples_per_bin`` states over all walker-steps in that bin (the walk's time average, which is
uniform within a bin; a state may repeat).

Checkpoint (``checkpoint`` path, an ``.npz``, :mod:`genmetrics.omniinput.checkpoint`): the
walk's arrays and a JSON ``state`` (ln f, counters, settings, RNG state); written every
``checkpoint_every`` steps and at the end, and read back when the file exists. A resumed run
gives exactly the result of an uninterrupted one.
``stop_after_evaluations`` stops the walk early (checkpoint written, ``stopped="interrupted"``).

The bins over z and the result (:class:`~genmetrics.omniinput.density.WLResult`) with its
file are in :mod:`genmetrics.omniinput.density`.

Why this module is above 500 lines: it is one idea, the walk itself — the walkers' shared
state, their entry into the window, the batched Metropolis–Hastings step, the ln f schedule
(flatness halvings, 1/t) with resuming, and the fixed-S walk that reuses the same step. These
share the private walk state (``_Walk``), and splitting them would expose it across modules;
the proposals, the checkpoint file and the result file are already modules of their own.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.omniinput.checkpoint import CHECKPOINT_FORMAT, read_checkpoint, write_checkpoint
from genmetrics.omniinput.density import Bins, WLResult
from genmetrics.omniinput.proposals import gradient_log_proposal, sample_rows, uniform_move

_log = logging.getLogger("genmetrics")


class OutputFn(Protocol):
    """z for a batch of sequences: int64 tokens (walkers, L) → float (walkers,)."""

    def __call__(self, tokens: np.ndarray) -> np.ndarray: ...


#: (z (walkers,), ∂z/∂onehot (walkers, L, V)) for int64 tokens (walkers, L)
GradFn = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


class _Walk:
    """The shared state of the walkers and one batched Metropolis–Hastings step."""

    def __init__(
        self,
        f: OutputFn,
        grad_f: GradFn | None,
        vocab_size: int,
        length: int,
        bins: Bins,
        walkers: int,
        proposal: str,
        samples_per_bin: int,
        uniform_mix: float,
        rng: np.random.Generator,
    ) -> None:
        self.f, self.grad_f = f, grad_f
        self.V, self.L, self.bins, self.W = vocab_size, length, bins, walkers
        self.proposal, self.K = proposal, samples_per_bin
        self.uniform_mix, self.rng = uniform_mix, rng
        n = bins.n
        self.ln_S = np.zeros(n)
        self.H = np.zeros(n, np.int64)
        self.visited = np.zeros(n, bool)
        self.reservoir = np.full((n, samples_per_bin, length), -1, np.int64)
        self.counts = np.zeros(n, np.int64)
        self.tokens = np.zeros((walkers, length), np.int64)
        self.z = np.zeros(walkers)
        self.b = np.zeros(walkers, np.int64)
        self.grad: np.ndarray | None = None
        self.evaluations = 0
        self.iterations = 0
        self.walker_steps = 0
        self.accepted = 0

    # ---------------------------------------------------------------- evaluations
    def eval_f(self, tokens: np.ndarray) -> np.ndarray:
        z = np.asarray(self.f(tokens), dtype=np.float64).reshape(-1)
        if z.shape != (len(tokens),):
            raise GenmetricsError(
                f"f returned {z.size} outputs for {len(tokens)} sequences (expected one each)"
            )
        self.evaluations += len(tokens)
        return z

    def eval_grad(self, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        assert self.grad_f is not None
        z, g = self.grad_f(tokens)
        z = np.asarray(z, dtype=np.float64).reshape(-1)
        g = np.asarray(g, dtype=np.float64)
        if z.shape != (len(tokens),) or g.shape != (len(tokens), self.L, self.V):
            raise GenmetricsError(
                f"grad_f must return z ({len(tokens)},) and a gradient "
                f"({len(tokens)}, {self.L}, {self.V}); got {z.shape} and {g.shape}"
            )
        self.evaluations += len(tokens)
        return z, g

    # ---------------------------------------------------------------- start
    def enter(self, max_entry_evaluations: int) -> None:
        """Random starts, then greedy random search into the window (see module docstring)."""
        bins, rng = self.bins, self.rng
        tokens = rng.integers(0, self.V, size=(self.W, self.L), dtype=np.int64)
        z = self.eval_f(tokens)
        seen_lo, seen_hi = np.nanmin(z, initial=np.inf), np.nanmax(z, initial=-np.inf)

        def dist(z: np.ndarray) -> np.ndarray:
            d = np.maximum(np.maximum(bins.lo - z, z - bins.hi), 0.0)
            return np.where(np.isnan(z), np.inf, d)

        spent = 0
        out = np.flatnonzero(bins.index(z) < 0)
        while len(out) and spent + len(out) <= max_entry_evaluations:
            prop = uniform_move(tokens[out], self.V, rng)
            zp = self.eval_f(prop)
            spent += len(out)
            seen_lo, seen_hi = (
                min(seen_lo, np.nanmin(zp, initial=np.inf)),
                max(seen_hi, np.nanmax(zp, initial=-np.inf)),
            )
            ok = dist(zp) <= dist(z[out])
            tokens[out[ok]] = prop[ok]
            z[out[ok]] = zp[ok]
            out = np.flatnonzero(bins.index(z) < 0)
        inside = np.flatnonzero(bins.index(z) >= 0)
        if len(inside) == 0:
            raise GenmetricsError(
                f"output range [{bins.lo:g}, {bins.hi:g}]: no sample reached it after "
                f"{self.evaluations} evaluations (random starts + greedy search); outputs seen "
                f"span [{seen_lo:g}, {seen_hi:g}], closest walker at z = "
                f"{z[np.argmin(dist(z))]:g}. Widen or move the range (bins lo/hi)."
            )
        for k, w in enumerate(out):  # walkers still outside copy walkers inside
            tokens[w] = tokens[inside[k % len(inside)]]
            z[w] = z[inside[k % len(inside)]]
        self.tokens, self.z = tokens, z
        if self.proposal == "gradient":
            self.z, self.grad = self.eval_grad(self.tokens)
            bad = np.flatnonzero(bins.index(self.z) < 0)
            if len(bad):
                raise GenmetricsError(
                    f"grad_f and f disagree: grad_f gives z = {self.z[bad[0]]:g} outside "
                    f"[{bins.lo:g}, {bins.hi:g}] where f gave {z[bad[0]]:g}"
                )
        self.b = bins.index(self.z)

    # ---------------------------------------------------------------- one step
    def step(self, ln_f: float) -> None:
        rng, W, V = self.rng, self.W, self.V
        rows = np.arange(W)
        S = self.ln_S
        if self.proposal == "uniform":
            prop = uniform_move(self.tokens, V, rng)
            zp = self.eval_f(prop)
            gp = None
            log_q_ratio = np.zeros(W)
        else:
            assert self.grad is not None
            logq = gradient_log_proposal(
                self.tokens, self.z, self.grad, S, self.bins, self.uniform_mix
            )
            idx = sample_rows(logq, rng.random(W))
            pos, new = idx // V, idx % V
            prop = self.tokens.copy()
            prop[rows, pos] = new
            zp, gp = self.eval_grad(prop)
            logq_rev = gradient_log_proposal(prop, zp, gp, S, self.bins, self.uniform_mix)
            rev = logq_rev[rows, pos * V + self.tokens[rows, pos]]
            log_q_ratio = rev - logq[rows, idx]
        bp = self.bins.index(zp)
        inside = bp >= 0
        with np.errstate(invalid="ignore"):
            log_a = np.where(inside, S[self.b] - S[np.maximum(bp, 0)] + log_q_ratio, -np.inf)
        u = rng.random(W)
        acc = np.log(np.maximum(u, 1e-300)) < log_a
        self.tokens[acc] = prop[acc]
        self.z[acc] = zp[acc]
        self.b[acc] = bp[acc]
        if gp is not None:
            assert self.grad is not None
            self.grad[acc] = gp[acc]
        self.accepted += int(acc.sum())
        np.add.at(S, self.b, ln_f)
        np.add.at(self.H, self.b, 1)
        self.visited[self.b] = True
        self.iterations += 1
        self.walker_steps += W
        self._reservoir(rng.random(W))

    def _reservoir(self, u: np.ndarray) -> None:
        """Algorithm R per bin: the c-th visit replaces slot floor(u·c) if that is < K."""
        for w in range(self.W):
            bb = self.b[w]
            self.counts[bb] += 1
            c = self.counts[bb]
            j = c - 1 if c <= self.K else int(u[w] * c)
            if j < self.K:
                self.reservoir[bb, j] = self.tokens[w]

    # ---------------------------------------------------------------- checkpoint
    def arrays(self) -> dict[str, np.ndarray]:
        out = {
            "ln_S": self.ln_S,
            "H": self.H,
            "visited": self.visited,
            "reservoir": self.reservoir,
            "counts": self.counts,
            "tokens": self.tokens,
            "z": self.z,
        }
        if self.grad is not None:
            out["grad"] = self.grad
        return out

    def load(self, arrays: dict[str, np.ndarray], path: Path) -> None:
        shapes = {k: v.shape for k, v in self.arrays().items()}
        shapes["tokens"] = (self.W, self.L)
        shapes["z"] = (self.W,)
        if self.proposal == "gradient":
            shapes["grad"] = (self.W, self.L, self.V)
        for k, shape in shapes.items():
            if k not in arrays or arrays[k].shape != shape:
                got = arrays[k].shape if k in arrays else "missing"
                raise GenmetricsError(
                    f"{path}: checkpoint array {k!r} has shape {got}, expected {shape}"
                )
        self.ln_S = arrays["ln_S"].astype(np.float64)
        self.H = arrays["H"].astype(np.int64)
        self.visited = arrays["visited"].astype(bool)
        self.reservoir = arrays["reservoir"].astype(np.int64)
        self.counts = arrays["counts"].astype(np.int64)
        self.tokens = arrays["tokens"].astype(np.int64)
        self.z = arrays["z"].astype(np.float64)
        self.grad = arrays["grad"].astype(np.float64) if "grad" in arrays else None
        self.b = self.bins.index(self.z)


def _check_args(
    vocab_size: int,
    length: int,
    walkers: int,
    proposal: str,
    grad_f: GradFn | None,
    flatness: float,
    check_every: int,
    ln_f_start: float,
    ln_f_final: float,
    max_evaluations: int,
    samples_per_bin: int,
    uniform_mix: float,
) -> None:
    def bad(name: str, value: Any, need: str) -> GenmetricsError:
        return GenmetricsError(f"wang_landau: {name} must be {need}, got {value!r}")

    for name, value in (
        ("vocab_size", vocab_size),
        ("length", length),
        ("walkers", walkers),
        ("check_every", check_every),
        ("max_evaluations", max_evaluations),
    ):
        if int(value) != value or value < 1:
            raise bad(name, value, "a positive integer")
    if vocab_size < 2:
        raise bad("vocab_size", vocab_size, "at least 2")
    if int(samples_per_bin) != samples_per_bin or samples_per_bin < 0:
        raise bad("samples_per_bin", samples_per_bin, "a non-negative integer")
    if proposal not in ("uniform", "gradient"):
        raise bad("proposal", proposal, "'uniform' or 'gradient'")
    if proposal == "gradient" and grad_f is None:
        raise GenmetricsError("wang_landau: proposal='gradient' needs grad_f")
    if not 0 < flatness < 1:
        raise bad("flatness", flatness, "in (0, 1)")
    if not (0 < ln_f_final < ln_f_start and math.isfinite(ln_f_start)):
        raise GenmetricsError(
            f"wang_landau: need 0 < ln_f_final < ln_f_start, got ln_f_final={ln_f_final!r}, "
            f"ln_f_start={ln_f_start!r}"
        )
    if not 0 <= uniform_mix < 1:
        raise bad("uniform_mix", uniform_mix, "in [0, 1)")


def wang_landau(
    f: OutputFn,
    vocab_size: int,
    length: int,
    bins: Bins,
    *,
    walkers: int = 8,
    proposal: str = "uniform",
    grad_f: GradFn | None = None,
    flatness: float = 0.8,
    check_every: int = 1000,
    ln_f_start: float = 1.0,
    ln_f_final: float = 1e-4,
    one_over_t: bool = True,
    max_evaluations: int = 10_000_000,
    max_entry_evaluations: int = 100_000,
    samples_per_bin: int = 50,
    uniform_mix: float = 0.0,
    seed: int = 0,
    checkpoint: str | Path | None = None,
    checkpoint_every: int = 1000,
    checkpoint_key: str | None = None,
    stop_after_evaluations: int | None = None,
    progress: bool = False,
) -> WLResult:
    """Wang–Landau density of states of z over V^L token sequences (see the module docstring).

    ``check_every`` and ``checkpoint_every`` count steps (one move per walker each);
    ``max_evaluations`` and ``stop_after_evaluations`` count sequences evaluated. Every random
    draw comes from ``np.random.default_rng(seed)``. ``checkpoint_key`` (the workflow's hash of
    the model, settings and code): a checkpoint written under another key is not resumed but
    started afresh (without a key, a checkpoint of other settings is an error).
    """
    _check_args(
        vocab_size,
        length,
        walkers,
        proposal,
        grad_f,
        flatness,
        check_every,
        ln_f_start,
        ln_f_final,
        max_evaluations,
        samples_per_bin,
        uniform_mix,
    )
    settings = {
        "format": CHECKPOINT_FORMAT,
        "vocab_size": int(vocab_size),
        "length": int(length),
        "bins": bins.as_dict(),
        "walkers": int(walkers),
        "proposal": proposal,
        "flatness": float(flatness),
        "check_every": int(check_every),
        "ln_f_start": float(ln_f_start),
        "ln_f_final": float(ln_f_final),
        "one_over_t": bool(one_over_t),
        "samples_per_bin": int(samples_per_bin),
        "uniform_mix": float(uniform_mix),
        "seed": int(seed),
    }
    rng = np.random.default_rng(seed)
    walk = _Walk(
        f, grad_f, vocab_size, length, bins, walkers, proposal, samples_per_bin, uniform_mix, rng
    )
    ckpt = Path(checkpoint) if checkpoint is not None else None
    ln_f, stages, one_over_t_from = float(ln_f_start), 0, None
    arrays, state = read_checkpoint(ckpt, checkpoint_key, settings)
    if arrays is not None:
        assert ckpt is not None
        walk.load(arrays, ckpt)
        rng.bit_generator.state = state["rng"]
        ln_f, stages, one_over_t_from = state["ln_f"], state["stages"], state["one_over_t_from"]
        walk.evaluations, walk.iterations = state["evaluations"], state["iterations"]
        walk.walker_steps, walk.accepted = state["walker_steps"], state["accepted"]
        if progress:
            _log.info("wang_landau: resumed from %s at %d evaluations", ckpt, walk.evaluations)
    else:
        walk.enter(max_entry_evaluations)

    def save() -> None:
        if ckpt is None:
            return
        state = {
            "key": checkpoint_key,
            "settings": settings,
            "rng": rng.bit_generator.state,
            "ln_f": ln_f,
            "stages": stages,
            "one_over_t_from": one_over_t_from,
            "evaluations": walk.evaluations,
            "iterations": walk.iterations,
            "walker_steps": walk.walker_steps,
            "accepted": walk.accepted,
        }
        write_checkpoint(ckpt, walk.arrays(), state)

    from tqdm.auto import tqdm

    bar = tqdm(
        total=max_evaluations,
        initial=walk.evaluations,
        desc=f"Wang-Landau ({proposal})",
        unit="eval",
        disable=not progress,
    )
    stopped = ""
    while True:
        if ln_f < ln_f_final:
            stopped = "converged"
            break
        if walk.evaluations + walkers > max_evaluations:
            stopped = "budget"
            break
        if stop_after_evaluations is not None and walk.evaluations >= stop_after_evaluations:
            stopped = "interrupted"
            break
        before = walk.evaluations
        walk.step(ln_f)
        bar.update(walk.evaluations - before)
        if one_over_t_from is not None:
            ln_f = walk.visited.sum() / walk.walker_steps  # 1/t
        elif walk.iterations % check_every == 0:
            h = walk.H[walk.visited]
            if h.min() >= flatness * h.mean():
                ln_f /= 2
                stages += 1
                walk.H[:] = 0
                inv_t = walk.visited.sum() / walk.walker_steps
                if one_over_t and ln_f < inv_t:
                    ln_f, one_over_t_from = inv_t, walk.iterations
                if progress:
                    _log.info(
                        "wang_landau: stage %d, ln f = %.3g, %d bins, %d evaluations",
                        stages,
                        ln_f,
                        int(walk.visited.sum()),
                        walk.evaluations,
                    )
        if ckpt is not None and walk.iterations % checkpoint_every == 0:
            save()
    bar.close()
    save()
    return _result(walk, ln_f, stopped, stages, one_over_t_from)


def _result(
    walk: _Walk, ln_f: float, stopped: str, stages: int, one_over_t_from: int | None
) -> WLResult:
    visited = walk.visited
    s = walk.ln_S[visited]
    ln_rho = np.full(walk.bins.n, -np.inf)
    if len(s):
        m = s.max()
        ln_rho[visited] = s - (m + math.log(np.exp(s - m).sum())) + walk.L * math.log(walk.V)
    samples = [walk.reservoir[b, : min(c, walk.K)].copy() for b, c in enumerate(walk.counts)]
    return WLResult(
        bins=walk.bins,
        ln_rho=ln_rho,
        ln_S=walk.ln_S.copy(),
        histogram=walk.H.copy(),
        visits=walk.counts.copy(),
        samples=samples,
        model_evaluations=int(walk.evaluations),
        iterations=int(walk.iterations),
        walker_steps=int(walk.walker_steps),
        final_ln_f=float(ln_f),
        stopped=stopped,
        bins_reached=int(visited.sum()),
        stages=int(stages),
        one_over_t_from=one_over_t_from,
        acceptance_rate=walk.accepted / walk.walker_steps if walk.walker_steps else float("nan"),
        proposal=walk.proposal,
        vocab_size=walk.V,
        length=walk.L,
    )


def flat_histogram_walk(
    f: OutputFn,
    vocab_size: int,
    length: int,
    bins: Bins,
    ln_S: np.ndarray,
    steps: int,
    *,
    walkers: int = 8,
    proposal: str = "uniform",
    grad_f: GradFn | None = None,
    uniform_mix: float = 0.0,
    max_entry_evaluations: int = 100_000,
    seed: int = 0,
) -> tuple[np.ndarray, int]:
    """Walk with a fixed S (ln f = 0): target π(x) ∝ exp(−S(bin(z(x)))) over the window.

    Returns the states after every step, (steps, walkers, L) int64, and the evaluations spent.
    Used to draw more representative samples from a converged S and to test detailed balance.
    """
    ln_S = np.asarray(ln_S, dtype=np.float64)
    if ln_S.shape != (bins.n,) or not np.isfinite(ln_S).all():
        raise GenmetricsError(
            f"flat_histogram_walk: ln_S must be {bins.n} finite values, got shape {ln_S.shape}"
        )
    _check_args(vocab_size, length, walkers, proposal, grad_f, 0.5, 1, 1.0, 0.5, 1, 0, uniform_mix)
    walk = _Walk(
        f,
        grad_f,
        vocab_size,
        length,
        bins,
        walkers,
        proposal,
        0,
        uniform_mix,
        np.random.default_rng(seed),
    )
    walk.enter(max_entry_evaluations)
    walk.ln_S = ln_S.copy()
    out = np.empty((steps, walkers, length), np.int64)
    for t in range(steps):
        walk.step(0.0)
        out[t] = walk.tokens
    return out, walk.evaluations
