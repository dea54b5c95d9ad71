"""A density-of-states estimate: the bins over the output z, the result of a Wang–Landau run
(:class:`WLResult`, from :func:`genmetrics.omniinput.sampler.wang_landau`) and its ``.npz``
file (:meth:`WLResult.save`, :func:`read_result`: samples padded with −1, scalars as JSON, no
pickle).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.npz import load_npz, save_npz


@dataclass(frozen=True)
class Bins:
    """``n`` uniform bins over [lo, hi]; bin k = [edges[k], edges[k+1]), the last one closed."""

    lo: float
    hi: float
    n: int

    def __post_init__(self) -> None:
        if not (math.isfinite(self.lo) and math.isfinite(self.hi) and self.lo < self.hi):
            raise GenmetricsError(f"bins: need finite lo < hi, got lo={self.lo!r}, hi={self.hi!r}")
        if int(self.n) != self.n or self.n < 1:
            raise GenmetricsError(f"bins: n must be a positive integer, got {self.n!r}")
        edges = np.linspace(self.lo, self.hi, int(self.n) + 1)
        edges.flags.writeable = False
        object.__setattr__(self, "_edges", edges)

    @property
    def edges(self) -> np.ndarray:
        return self._edges  # type: ignore[attr-defined]

    @property
    def centers(self) -> np.ndarray:
        e = self.edges
        return (e[:-1] + e[1:]) / 2

    def index(self, z: np.ndarray | float) -> np.ndarray:
        """Bin index of each z (int64, same shape); −1 outside [lo, hi] or NaN."""
        z = np.asarray(z, dtype=np.float64)
        idx = np.searchsorted(self._edges, z, side="right") - 1  # type: ignore[attr-defined]
        idx = np.where(z == self.hi, self.n - 1, idx)
        ok = (z >= self.lo) & (z <= self.hi)  # False for NaN
        return np.where(ok, idx, -1).astype(np.int64)

    def as_dict(self) -> dict[str, Any]:
        return {"lo": float(self.lo), "hi": float(self.hi), "n": int(self.n)}


@dataclass
class WLResult:
    """Outcome of :func:`wang_landau`; ``ln_rho`` is −inf for bins never visited."""

    bins: Bins
    ln_rho: np.ndarray
    ln_S: np.ndarray
    histogram: np.ndarray
    visits: np.ndarray
    samples: list[np.ndarray]
    model_evaluations: int
    iterations: int
    walker_steps: int
    final_ln_f: float
    stopped: str
    bins_reached: int
    stages: int
    one_over_t_from: int | None
    acceptance_rate: float
    proposal: str = "uniform"
    vocab_size: int = 0  # Ω = V^L
    length: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def save(self, path: str | Path) -> None:
        """Write the result as an ``.npz`` (samples padded with −1, scalars as JSON)."""
        k = max((len(s) for s in self.samples), default=0)
        length = self.samples[0].shape[1] if self.samples else 0
        pad = np.full((self.bins.n, k, length), -1, np.int64)
        for b, s in enumerate(self.samples):
            pad[b, : len(s)] = s
        scalars = {
            "bins": self.bins.as_dict(),
            "model_evaluations": self.model_evaluations,
            "iterations": self.iterations,
            "walker_steps": self.walker_steps,
            "final_ln_f": self.final_ln_f,
            "stopped": self.stopped,
            "bins_reached": self.bins_reached,
            "stages": self.stages,
            "one_over_t_from": self.one_over_t_from,
            "acceptance_rate": self.acceptance_rate,
            "proposal": self.proposal,
            "vocab_size": self.vocab_size,
            "length": self.length,
        }
        save_npz(
            path,
            ln_rho=self.ln_rho,
            ln_S=self.ln_S,
            histogram=self.histogram,
            visits=self.visits,
            samples=pad,
            sample_counts=np.array([len(s) for s in self.samples], np.int64),
            meta=np.array(json.dumps(scalars)),
        )


def read_result(path: str | Path) -> WLResult:
    """A :class:`WLResult` written by :meth:`WLResult.save` (no pickle)."""
    a = load_npz(path, required=("ln_rho", "ln_S", "histogram", "visits", "samples", "meta"))
    try:
        meta = json.loads(str(a["meta"]))
        bins = Bins(**meta.pop("bins"))
    except (ValueError, TypeError, KeyError) as e:
        raise GenmetricsError(f"{path}: not a Wang-Landau result ({e})") from None
    n = bins.n
    for k in ("ln_rho", "ln_S", "histogram", "visits", "sample_counts"):
        if k not in a or a[k].shape != (n,):
            raise GenmetricsError(f"{path}: {k!r} must have one value per bin ({n})")
    pad, counts = a["samples"], a["sample_counts"]
    if pad.ndim != 3 or pad.shape[0] != n or (counts > pad.shape[1]).any():
        raise GenmetricsError(f"{path}: 'samples' has shape {pad.shape} for {n} bins")
    samples = [pad[b, : int(c)].astype(np.int64) for b, c in enumerate(counts)]
    return WLResult(
        bins=bins,
        ln_rho=a["ln_rho"].astype(np.float64),
        ln_S=a["ln_S"].astype(np.float64),
        histogram=a["histogram"],
        visits=a["visits"],
        samples=samples,
        **meta,
    )
