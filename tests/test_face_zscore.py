"""FACE-2's z-score as its text gives it (§4.1: σ = sqrt(Σ(s − μ)² / (N − 1)), no epsilon)
beside its authors' code's (FACEScore: the population std + 1e-6), on sequences whose spectra
are computed by hand.

Human s = (1, 2, 3, 6): μ = 3, deviations (−2, −1, 0, 3), Σd² = 14. Its DFT keeps bins 0 and
1 (frequencies 0 and 1/4): X(0) = Σd = 0, X(1) = d0 − d2 + i(d3 − d1) = −2 + 4i, |X(1)| = √20.
Model s = (0, 0, 3): μ = 1, d = (−1, −1, 2), Σd² = 6, bins 0 and 1 (frequencies 0 and 1/3):
X(1) = −1 − e^{−2πi/3} + 2e^{−4πi/3} = −3/2 + (3√3/2)i, |X(1)| = 3.
FACEScore's grid re-grids each spectrum by its index, so both become straight ramps from 0 at
frequency 0 to |X(1)|/σ at 0.5, and SO = Σmin / Σmax = the ratio of the two ends.

* sample std (ddof 1): σ_h = √(14/3), σ_m = √3 → ends √(30/7) and √3, SO = √(7/10) ≈ 0.8367;
* population std (ddof 0): σ_h = √(7/2), σ_m = √2 → ends √(40/7) and 3/√2, SO = √(63/80) ≈
  0.8874 (the 1e-6 moves the fourth decimal of neither).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from genmetrics import GenmetricsError
from genmetrics.cli import main
from genmetrics.metrics import compute, get
from genmetrics.metrics.face import CONVENTIONS, VALUES, face
from genmetrics.npz import ragged_to_arrays, save_npz

HUMAN = [np.array([1.0, 2.0, 3.0, 6.0])]
MODEL = [np.array([0.0, 0.0, 3.0])]
SO_SAMPLE = math.sqrt(7 / 10)  # FACE-2's text
SO_POPULATION = math.sqrt(63 / 80)  # its authors' code


def _score(convention: str, **params):
    given = {"convention": convention, "zscore": True, "pairing": "set", **params}
    return compute("face", MODEL, HUMAN, params=given)


def test_face2_divides_by_the_sample_std_with_no_epsilon():
    res = _score("face2")
    spec = res.extras["spectrum"]
    # the ramps' ends: |X(1)| / σ with σ the sample std
    assert spec["reference_mean"][0] == 0.0 and spec["candidate_mean"][0] == 0.0
    assert spec["reference_mean"][-1] == pytest.approx(math.sqrt(30 / 7), rel=1e-5)
    assert spec["candidate_mean"][-1] == pytest.approx(math.sqrt(3), rel=1e-5)
    assert res.values["so"] == pytest.approx(SO_SAMPLE, abs=1e-12)
    # two ramps from 0 are one distribution: every normalised distance is 0, CORR is 1
    assert res.values["corr"] == pytest.approx(1.0, abs=1e-12)
    for key in ("emd", "kl_human_model", "js_eq6", "jsd"):
        assert res.values[key] == pytest.approx(0.0, abs=1e-12), key


def test_the_authors_code_convention_divides_by_the_population_std_plus_1e6():
    res = _score("face2-code-zscore")
    spec = res.extras["spectrum"]
    h_end = math.sqrt(20) / (math.sqrt(14 / 4) + 1e-6)
    m_end = 3 / (math.sqrt(2) + 1e-6)
    assert spec["reference_mean"][-1] == pytest.approx(h_end, rel=1e-5)
    assert spec["candidate_mean"][-1] == pytest.approx(m_end, rel=1e-5)
    assert res.values["so"] == pytest.approx(m_end / h_end, abs=1e-12)
    assert res.values["so"] == pytest.approx(SO_POPULATION, abs=1e-6)
    assert abs(SO_POPULATION - SO_SAMPLE) > 0.05  # the two conventions are told apart
    assert VALUES["face2-code-zscore"] == VALUES["face2"]


def test_each_convention_fixes_its_std_and_epsilon_and_says_whose_it_is():
    metric = get("face")
    paper = metric.check_params({"convention": "face2", "zscore": True})
    code = metric.check_params({"convention": "face2-code-zscore", "zscore": True})
    assert (paper["zscore_ddof"], paper["zscore_eps"]) == (1, 0.0)
    assert (code["zscore_ddof"], code["zscore_eps"]) == (0, 1e-6)
    assert "N - 1" in CONVENTIONS["face2"].doc
    assert "authors' code" in CONVENTIONS["face2-code-zscore"].doc
    # the code conventions keep the codes' population std + 1e-6
    for name in ("facescore", "face-code"):
        p = metric.check_params({"convention": name, "zscore": True})
        assert (p["zscore_ddof"], p["zscore_eps"]) == (0, 1e-6), name
    with pytest.raises(GenmetricsError, match="convention=face2 fixes zscore_ddof=1"):
        metric.check_params({"convention": "face2", "zscore_ddof": 0})
    with pytest.raises(GenmetricsError, match="fixes zscore_eps=0.0"):
        metric.check_params({"convention": "face2", "zscore_eps": 1e-6})
    # called directly, a contradiction is refused too
    with pytest.raises(GenmetricsError, match="convention=face2 fixes zscore_ddof=1"):
        face(HUMAN, MODEL, convention="face2", zscore=True)
    direct = face(HUMAN, MODEL, convention="face2", zscore=True, zscore_ddof=1, zscore_eps=0.0)
    assert direct.values["so"] == pytest.approx(SO_SAMPLE, abs=1e-12)


@pytest.mark.filterwarnings("error")  # no 0/0 on the way
def test_a_constant_sequence_has_zero_z_scores_not_nan():
    """σ = 0 and no epsilon: (s − μ) / σ is 0/0 for (0.3, 0.3, 0.3, 0.3), and rounding noise
    over noise for (0.1, 0.1, 0.1) (its mean is 0.10000000000000002: z ≈ −0.82 everywhere, a
    spectrum that is not flat). The metric makes both 0 (the codes' epsilon does the same), so
    the flat spectra are counted as undefined, never averaged in."""
    human = [np.array([1.0, 2.0, 3.0, 6.0]), np.array([2.0, 1.0, 4.0]), np.array([1.0, 5.0, 2.0])]
    model = [np.full(4, 0.3), np.full(3, 0.1), np.array([0.0, 0.0, 3.0])]
    params = {"convention": "face2", "zscore": True, "pairing": "prompt"}
    res = compute("face", model, human, params=params, links=[[0], [1], [2]])
    assert res.n["undefined_candidate"] == 2
    assert np.isfinite(res.extras["spectrum"]["candidate_mean"]).all()
    assert all(math.isfinite(v) for v in res.values.values())


def _npz(path, seqs, ids):
    offsets, values = ragged_to_arrays(seqs)
    save_npz(path, offsets=offsets, values=values, ids=ids)


def test_the_command_line_records_the_papers_std(tmp_path, capsys):
    _npz(tmp_path / "H.npz", [x.astype(np.float32) for x in HUMAN], ["h0"])
    _npz(tmp_path / "M.npz", [x.astype(np.float32) for x in MODEL], ["m0"])
    code = main(
        [
            "score",
            "face",
            "--reference",
            str(tmp_path / "H.npz"),
            "--candidate",
            str(tmp_path / "M.npz"),
            "--param",
            "convention=face2",
            "--param",
            "zscore=true",
            "--param",
            "pairing=set",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["params"]["convention"] == "face2"
    assert out["params"]["zscore_ddof"] == 1
    assert out["params"]["zscore_eps"] == 0.0
    assert out["values"]["so"] == pytest.approx(SO_SAMPLE, abs=1e-9)
