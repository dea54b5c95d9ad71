"""An independent implementation of the FACEScore conventions, written from the formulas
(FACEScore ``fft_utils.py``, ``face_score.py``, ``metrics.py``; FACE ``run_fft.py``) one pair at
a time, as the official code runs. The oracle of tests/test_spectra.py and tests/test_face.py,
and the per-pair baseline of benchmarks/bench_face.py. It never calls genmetrics."""

from __future__ import annotations

import numpy as np
from scipy.interpolate import interp1d
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy, spearmanr


def facescore_spectrum(x, value="norm", zscore=False):
    x = np.asarray(x, dtype=float)[:1000]  # face_score.py, use_max=False: the first 1000 values
    if zscore:
        x = (x - np.mean(x)) / (np.std(x) + 1e-6)
    n = len(x)
    s = np.fft.fftshift(np.fft.fft(x))[n // 2 :]
    s = np.abs(s) if value == "norm" else np.real(s)
    idx = np.linspace(0, 0.5, len(s))
    return interp1d(idx, s, fill_value="extrapolate")(np.linspace(0, 0.5, 1000))


def facescore_distances(s1, s2):
    """metrics.py on two aligned spectra (s1 = human, s2 = model), SAM's cosine clipped."""
    a1, a2 = np.abs(s1), np.abs(s2)
    c1, c2 = np.cumsum(a1) / np.cumsum(a1)[-1], np.cumsum(a2) / np.cumsum(a2)[-1]
    cos = np.dot(s1 / np.linalg.norm(s1), s2 / np.linalg.norm(s2))
    return {
        "so": np.sum(np.minimum(a1, a2)) / np.sum(np.maximum(a1, a2)),
        "corr": np.corrcoef(s1, s2)[0, 1],
        "spear": spearmanr(s1, s2)[0],
        "sam": np.arccos(np.clip(cos, -1, 1)) / np.pi,
        "emd": np.sum(np.abs(c1 - c2)) / len(c1),
        "kl": entropy(a2, np.where(a1 == 0, 1e-10, a1)),
        "js": jensenshannon(a1, a2),
    }


def facescore_reference(x1, x2, value="norm", zscore=False):
    """All distances between human sequence x1 and model sequence x2."""
    return facescore_distances(
        facescore_spectrum(x1, value, zscore), facescore_spectrum(x2, value, zscore)
    )
