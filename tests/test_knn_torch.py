"""The torch engine of exact P/R/D/C (the GPU path), run on device "cpu": the same values as
the numpy engine, on random data and on constructed ties, and the record names the device."""

from __future__ import annotations

import numpy as np
import pytest
from test_precision_recall import brute_force  # the full-matrix definition, once

from genmetrics.metrics import compute
from genmetrics.metrics import precision_recall as mod
from genmetrics.metrics._knn_exact import as_real, prdc_exact
from genmetrics.metrics._knn_torch import _prdc_torch, prdc_torch

torch = pytest.importorskip("torch")
KEYS = ("precision", "recall", "density", "coverage")


def torch_engine(p, q, ks, strict=True, block=1 << 26):
    p, q = as_real(np.asarray(p)), as_real(np.asarray(q))
    pf, qf = p.astype(np.float32), q.astype(np.float32)
    return _prdc_torch(p, q, pf, qf, ks, strict, "cpu", block)


@pytest.mark.parametrize(
    "n_p,n_q,d,dtype,seed",
    [(700, 650, 8, np.float64, 0), (400, 530, 40, np.float32, 1), (300, 90, 3, np.float64, 2)],
)
def test_torch_equals_numpy_random(n_p, n_q, d, dtype, seed):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(5, d)) * 3
    p = (centers[rng.integers(0, 5, n_p)] + rng.normal(size=(n_p, d))).astype(dtype)
    q = (centers[rng.integers(0, 3, n_q)] + rng.normal(size=(n_q, d)) * 1.2).astype(dtype)
    for strict in (True, False):
        cpu = prdc_exact(p, q, [1, 4, 9], strict=strict)
        assert prdc_torch(p, q, [1, 4, 9], strict=strict, device="cpu") == cpu
        # several row blocks on the device
        assert torch_engine(p, q, [1, 4, 9], strict, block=50 * max(n_p, n_q)) == cpu
        ref = brute_force(p.astype(np.float64), q.astype(np.float64), 4, strict)
        assert cpu[4] == pytest.approx(ref, abs=1e-12)


def test_torch_equals_numpy_on_ties():
    """Exact ties the float32 GEMM cannot resolve: 3-4-5 offsets on a grid far from the origin
    (distance exactly 5 = the radius), plus duplicated points; strict and <= differ here."""
    rng = np.random.default_rng(4)
    grid = np.array(np.meshgrid(np.arange(9), np.arange(9))).reshape(2, -1).T * 5.0
    p = np.vstack([grid, grid[:6]]) + 1000.0  # spacing 5, six duplicates
    q = np.vstack([grid[rng.choice(len(grid), 40, replace=False)] + [3.0, 4.0], grid[:3]])
    q = q + 1000.0
    for k in (2, 4):
        out = {}
        for strict in (True, False):
            ref = brute_force(p, q, k, strict)
            cpu = prdc_exact(p, q, [k], strict=strict)[k]
            assert torch_engine(p, q, [k], strict, block=2000)[k] == cpu
            assert cpu == pytest.approx(ref, abs=1e-12)
            out[strict] = cpu
        assert out[False]["density"] > out[True]["density"]  # the ties are real


def test_record_states_the_device(monkeypatch):
    """With array_device() = cuda the blocked engine takes the torch path and says so; the
    values are those of the CPU engine (here the torch code runs on "cpu")."""
    rng = np.random.default_rng(0)
    p, q = rng.normal(size=(700, 8)), rng.normal(size=(650, 8))
    monkeypatch.setattr(mod, "_array_device", lambda: "cpu")  # also on a machine with a GPU
    cpu = compute("precision_recall", q, p, {"pca": False})
    assert cpu.extras["knn"]["device"] == "cpu"
    seen = []

    def fake_torch(*args, device, **kw):
        seen.append(device)
        return prdc_torch(*args, device="cpu", **kw)

    monkeypatch.setattr(mod, "_array_device", lambda: "cuda")
    monkeypatch.setattr(mod, "_prdc_torch", fake_torch)
    gpu = compute("precision_recall", q, p, {"pca": False})
    assert seen == ["cuda"]
    assert gpu.extras["knn"] == {**cpu.extras["knn"], "device": "cuda"}
    assert gpu.values == cpu.values
