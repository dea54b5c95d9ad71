"""The spectral core of FACE / FACE-2 (genmetrics.metrics._spectra): known answers and an
independent implementation of the FACEScore conventions written from the formulas."""

from __future__ import annotations

import numpy as np
import pytest
from face_oracle import facescore_reference
from scipy.interpolate import interp1d

from genmetrics import GenmetricsError
from genmetrics.metrics._spectra import align, distances, spectrum


def test_a_sinusoid_peaks_at_its_frequency():
    for n in (64, 65):  # even and odd lengths
        t = np.arange(n)
        freq, values = spectrum(np.sin(2 * np.pi * 0.125 * t) + 3.0)
        assert freq[0] == 0 and freq[-1] < 0.5 and len(freq) == n - n // 2
        peak = freq[1:][np.argmax(values[1:])]  # past the mean's bin at 0
        assert abs(peak - 0.125) <= 1 / n
        assert values[0] == pytest.approx(3.0 * n)  # |sum x|: no 1/N scaling


def test_identical_spectra_are_at_zero_distance():
    rng = np.random.default_rng(0)
    f, v = spectrum(rng.gamma(2.0, 1.5, size=101), zscore=True)
    a = align(f, v)
    d = distances(a, a.copy())
    for key in ("so", "corr", "spear"):
        assert d[key] == pytest.approx(1.0)
    for key in ("sam", "emd", "kl", "js"):
        assert d[key] == pytest.approx(0.0, abs=1e-7)  # sam is 0, not NaN (clipped cosine)


def test_short_empty_and_non_finite_sequences_are_refused_clearly():
    f, v = spectrum([1.0, 2.0])  # one bin
    with pytest.raises(GenmetricsError, match="1 bin"):
        align(f, v)
    with pytest.raises(GenmetricsError, match="non-empty"):
        spectrum([])
    with pytest.raises(GenmetricsError, match="NaN or inf"):
        spectrum([1.0, np.nan, 2.0])


@pytest.mark.parametrize("value", ["norm", "real"])
@pytest.mark.parametrize("lengths", [(40, 57), (101, 100)])
def test_agrees_with_the_facescore_formulas(value, lengths):
    rng = np.random.default_rng(sum(lengths))
    x1, x2 = (rng.gamma(2.0, 2.0, size=n) for n in lengths)
    ours = distances(align(*spectrum(x1, value)), align(*spectrum(x2, value)))
    want = facescore_reference(x1, x2, value)
    for key, v in want.items():
        assert ours[key] == pytest.approx(v, abs=1e-9, rel=1e-9), key


def test_face_alignment_uses_the_true_frequencies():
    """FACE interpolates on fftfreq (0 ... (N/2-1)/N), FACEScore on the index: they differ
    for a short spectrum and both extrapolate linearly past the last frequency."""
    x = np.random.default_rng(1).gamma(2.0, 2.0, size=10)
    f, v = spectrum(x)
    face, score = align(f, v, "face"), align(f, v, "facescore")
    want = interp1d(f, v, fill_value="extrapolate")(np.linspace(0, 0.5, 1000))
    np.testing.assert_allclose(face, want, rtol=1e-12, atol=1e-12)
    assert not np.allclose(face, score)


def test_zeros_in_the_spectra_follow_scipy_conventions():
    """0 · ln 0 = 0 (rel_entr), a zero of the human spectrum replaced by 1e-10 in KL, as
    FACEScore; checked against scipy through the oracle, row by row in a batch."""
    from face_oracle import facescore_distances

    from genmetrics.metrics._spectra import batch_distances

    rng = np.random.default_rng(3)
    a, b = rng.gamma(2.0, 1.0, size=(5, 1000)), rng.gamma(2.0, 1.0, size=(5, 1000))
    a[0, :50] = 0.0  # human zeros: KL's 1e-10 replacement
    b[1, 100:200] = 0.0  # model zeros: 0 ln 0
    a[2, 10:20] = b[2, 10:20] = 0.0  # both: the midpoint is 0 there too
    got = batch_distances(a, b)
    for i in range(5):
        want = facescore_distances(a[i], b[i])
        for key, v in want.items():
            assert got[key][i] == pytest.approx(v, abs=1e-12, rel=1e-12), (i, key)


def test_batch_distances_do_not_depend_on_the_thread_count(monkeypatch):
    """Blocks of rows run on the job's threads (OMP_NUM_THREADS): 1 and 3 threads give the
    same numbers, bit for bit."""
    import os

    from genmetrics.metrics._spectra import BLOCK, batch_distances

    rng = np.random.default_rng(5)
    a, b = rng.gamma(2.0, 1.0, size=(2, 3 * BLOCK + 7, 200))
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(4)), raising=False)
    got = {}
    for threads in ("1", "3"):
        monkeypatch.setenv("OMP_NUM_THREADS", threads)
        got[threads] = batch_distances(a, b)
    for key, v in got["1"].items():
        assert np.array_equal(v, got["3"][key]), key
