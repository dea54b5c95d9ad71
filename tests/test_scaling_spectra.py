"""GAM-smoothed spectra per model size (FACE-2 Figure 5): the smoother, the spectra it is fed
and the figure (genmetrics.studies.face2_scaling.smoothed_spectra, genmetrics.figures.scaling)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("statsmodels")

from genmetrics import GenmetricsError  # noqa: E402
from genmetrics.metrics import compute, get  # noqa: E402
from genmetrics.studies.face2_scaling.smoothed_spectra import (  # noqa: E402
    gam_smooth,
    spectra_gam_panels,
    text_spectra,
)
from genmetrics.testing.tiny_lm import write_surprisal_npz  # noqa: E402

FREQ = np.linspace(0, 0.5, 1000)
FAST = {"alphas": (1e-4, 1e-1, 1e2, 1e5)}  # a short penalty grid for the figure tests


def truth(x: np.ndarray) -> np.ndarray:
    return 10.0 + 3.0 * np.sin(8 * np.pi * x) * np.exp(-2.0 * x)


def noisy_texts(n_texts: int, sd: float, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return truth(FREQ) + rng.normal(0.0, sd, (n_texts, FREQ.size))


def test_gam_is_closer_to_the_true_curve_than_the_noisy_mean():
    spectra = noisy_texts(30, sd=2.0)
    g = gam_smooth(FREQ, spectra)
    err_fit = np.sqrt(np.mean((g.fit - truth(g.x)) ** 2))
    # the raw per-frequency mean of the same texts, at the same frequencies
    raw = np.interp(g.x, FREQ, spectra.mean(axis=0))
    err_raw = np.sqrt(np.mean((raw - truth(g.x)) ** 2))
    assert err_raw > 0.25  # ≈ 2 / √30: the noise left in a mean of 30 texts
    assert err_fit < 0.5 * err_raw
    # the 95% band holds the true curve nearly everywhere, and is narrower than the noise
    inside = (g.low <= truth(g.x)) & (truth(g.x) <= g.high)
    assert inside.mean() > 0.85
    assert np.all(g.low < g.fit) and np.all(g.fit < g.high)
    assert np.median(g.high - g.low) < 2 * err_raw
    assert (g.n_texts, g.n_points) == (30, 30 * 100)
    assert g.x[0] > 0 and g.x[-1] == pytest.approx(0.5)  # frequency 0 left out
    assert 3 < g.edf <= 21


def test_gam_penalty_follows_the_data():
    """A flat truth lets the cross-validation pick a heavy penalty (few effective degrees of
    freedom); a wiggly one needs a light penalty."""
    rng = np.random.default_rng(1)
    flat = 10.0 + rng.normal(0, 2.0, (20, FREQ.size))
    wiggly = 10.0 + 3 * np.sin(30 * np.pi * FREQ) + rng.normal(0, 0.5, (20, FREQ.size))
    g_flat, g_wiggly = gam_smooth(FREQ, flat), gam_smooth(FREQ, wiggly)
    assert g_flat.alpha > g_wiggly.alpha
    assert g_flat.edf < 6 < g_wiggly.edf


def test_gam_is_deterministic_and_checks_its_input():
    spectra = noisy_texts(8, sd=1.0, seed=3)
    a, b = gam_smooth(FREQ, spectra, **FAST), gam_smooth(FREQ, spectra, **FAST)
    np.testing.assert_array_equal(a.fit, b.fit)
    np.testing.assert_array_equal(a.high, b.high)
    with pytest.raises(GenmetricsError, match="at least 2"):
        gam_smooth(FREQ, spectra[:1])
    with pytest.raises(GenmetricsError, match="must be"):
        gam_smooth(FREQ, spectra[:, :10])
    bad = spectra.copy()
    bad[0, 5] = np.nan
    with pytest.raises(GenmetricsError, match="not finite"):
        gam_smooth(FREQ, bad)


def test_text_spectra_are_the_metrics_spectra():
    """The figure's per-text spectra average to the face record's mean spectrum."""
    rng = np.random.default_rng(2)
    ref = [rng.gamma(2.0, 1.5, int(n)) for n in rng.integers(30, 90, 12)]
    cand = [rng.gamma(2.0, 1.0, int(n)) for n in rng.integers(30, 90, 10)] + [np.ones(2)]
    for given in ({"convention": "face2", "zscore": True}, {"convention": "face1"}, {}):
        params = get("face").check_params(given)
        rec = compute("face", cand, ref, params=given)
        sp = text_spectra(cand, params)
        assert sp.shape == (10, 1000)  # the 2-value sequence is dropped, as the metric drops it
        np.testing.assert_allclose(
            sp.mean(axis=0), rec.extras["spectrum"]["candidate_mean"], rtol=1e-5, atol=1e-6
        )
    with pytest.raises(GenmetricsError, match="no sequence"):
        text_spectra([np.ones(2)], get("face").check_params({}))


@pytest.fixture(scope="module")
def smoothed(tmp_path_factory):
    """Two datasets; family F (f-small < f-large) on both, family G (g1 < g2) on d1 only."""
    root = tmp_path_factory.mktemp("spectra")
    rng = np.random.default_rng(0)
    families = {"F": {"f-large": 20.0, "f-small": 2.7}, "G": {"g1": 1, "g2": 2}}
    cells = []
    for ds, models in (("d1", ["f-small", "f-large", "g1", "g2"]), ("d2", ["f-small", "f-large"])):
        ids = [f"{ds}-h{i}" for i in range(6)]
        ref = root / ds / "references.npz"
        write_surprisal_npz(ref, [rng.gamma(2.0, 1.5, 60) for _ in ids], ids)
        for m in models:
            cand = root / ds / f"{m}.npz"
            write_surprisal_npz(
                cand, [rng.gamma(2.0, 1.0, 60) for _ in ids], [f"{m}{i}" for i in ids], ids
            )
            cells.append(
                {
                    "entry": "f",
                    "dataset": ds,
                    "model": m,
                    "candidate": str(cand),
                    "reference": str(ref),
                }
            )
    settings = {
        "entry": "face2_zl2",
        "evaluator": "ev",
        "params": get("face").check_params({"convention": "face2", "zscore": True}),
        "families": families,
        "tasks": ["d2", "d1", "d3"],  # config order; d3 has no cell
        "cells": cells,
    }
    return spectra_gam_panels(settings, gam=FAST), root


def test_panels_per_dataset_human_first_then_models_by_size(smoothed):
    data, _ = smoothed
    assert [p.dataset for p in data.panels] == ["d2", "d1"]
    d1 = data.panels[1]
    assert [c.model for c in d1.curves] == ["human texts", "f-small", "f-large", "g1", "g2"]
    assert [c.family for c in d1.curves] == [None, "F", "F", "G", "G"]
    assert d1.curves[1].label == "f-small (F: 2.7)"
    assert all(c.gam.n_texts == 6 and c.gam.fit.shape == (200,) for c in d1.curves)
    assert data.entry == "face2_zl2" and data.params["zscore"] is True


def test_smoothed_spectra_figure_writes_a_png(smoothed, tmp_path):
    from genmetrics.figures.scaling import _shade, smoothed_spectra_figure

    data, _ = smoothed
    out = tmp_path / "scaling_spectra.png"
    smoothed_spectra_figure(data, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # colours by log size within a family: the smallest light, the largest dark
    assert _shade(2.7, [2.7, 6.0, 20.0]) == pytest.approx(0.4)
    assert _shade(20.0, [2.7, 6.0, 20.0]) == pytest.approx(0.95)
    mid = 0.4 + 0.55 * np.log(6.0 / 2.7) / np.log(20.0 / 2.7)
    assert _shade(6.0, [2.7, 6.0, 20.0]) == pytest.approx(mid)


def test_spectra_panels_need_one_human_file(smoothed):
    _, root = smoothed
    settings = {
        "entry": "f",
        "evaluator": "ev",
        "params": get("face").check_params({}),
        "families": {"F": {"a": 1, "b": 2}},
        "tasks": ["d"],
        "cells": [
            {"dataset": "d", "model": "a", "candidate": "x", "reference": "r1"},
            {"dataset": "d", "model": "b", "candidate": "y", "reference": "r2"},
        ],
    }
    with pytest.raises(GenmetricsError, match="one human"):
        spectra_gam_panels(settings)
    with pytest.raises(GenmetricsError, match="unknown GAM"):
        spectra_gam_panels(settings, gam={"knots": 3})
