"""The ``face`` metric (Yang et al. 2023; Liu et al. 2025) on the surprisal NPZ contract:
pairing by prompt or by set, best over several references, dropped short sequences, the
CLI, agreement with the FACEScore formulas (tests/face_oracle.py) and the ensemble votes."""

from __future__ import annotations

import json

import numpy as np
import pytest
from face_oracle import facescore_distances, facescore_reference, facescore_spectrum

from genmetrics import GenmetricsError
from genmetrics.cli import main
from genmetrics.metrics import compute
from genmetrics.metrics.face import judge
from genmetrics.npz import ragged_to_arrays, save_npz
from genmetrics.scoring.from_files import score_loaded


def _seqs(rng, n, lo=20, hi=80, shape=2.0):
    return [rng.gamma(shape, 1.5, size=int(rng.integers(lo, hi))) for _ in range(n)]


def _npz(path, seqs, ids, prompt_ids=None):
    offsets, values = ragged_to_arrays(seqs)
    arrays = {"offsets": offsets, "values": values, "ids": ids}
    if prompt_ids is not None:
        arrays["prompt_ids"] = prompt_ids
    save_npz(path, **arrays)


def _mean_oracle(refs, cands, value="norm", zscore=False):
    per = [facescore_reference(r, c, value, zscore) for r, c in zip(refs, cands, strict=True)]
    return {k: float(np.mean([p[k] for p in per])) for k in per[0]}


def test_cli_scores_paired_npz_files_like_the_facescore_formulas(tmp_path, capsys):
    rng = np.random.default_rng(0)
    # the NPZ contract stores float32: compare with the values as stored
    human = [x.astype(np.float32) for x in _seqs(rng, 30)]
    model = [x.astype(np.float32) for x in _seqs(rng, 30, shape=4.0)]
    order = rng.permutation(30)  # the candidate file lists prompts in another order
    _npz(tmp_path / "H.npz", human, [f"p{i}" for i in range(30)])
    _npz(
        tmp_path / "M.npz",
        [model[i] for i in order],
        [f"g{i}" for i in order],
        [f"p{i}" for i in order],
    )
    code = main(
        [
            "score",
            "face",
            "--reference",
            str(tmp_path / "H.npz"),
            "--candidate",
            str(tmp_path / "M.npz"),
            "--param",
            "value=real",
            "--param",
            "zscore=true",
            "--param",
            "align=facescore",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["params"]["value"] == "real" and out["params"]["zscore"] is True
    assert out["extras"]["pairing"] == "prompt" and out["n"]["pairs"] == 30
    want = _mean_oracle(human, model, "real", zscore=True)
    for key, v in want.items():
        assert out["values"][key] == pytest.approx(v, abs=1e-9), key


def test_unlinked_sets_are_compared_by_their_mean_spectra():
    rng = np.random.default_rng(1)
    human, model = _seqs(rng, 12), _seqs(rng, 9, shape=5.0)
    rows_h = [{"id": f"h{i}"} for i in range(12)]
    rows_m = [{"id": f"m{i}"} for i in range(9)]
    rec = score_loaded("face", model, rows_m, human, rows_h)
    assert rec["extras"]["pairing"] == "set" and rec["n"]["pairs"] == 0
    want = facescore_distances(
        np.mean([facescore_spectrum(x) for x in human], axis=0),
        np.mean([facescore_spectrum(x) for x in model], axis=0),
    )
    for key, v in want.items():
        assert rec["values"][key] == pytest.approx(v, abs=1e-9), key
    with pytest.raises(GenmetricsError, match="pairing=prompt"):
        score_loaded("face", model, rows_m, human, rows_h, {"pairing": "prompt"})


def test_several_references_per_candidate_take_the_best_one():
    rng = np.random.default_rng(2)
    refs = _seqs(rng, 6)  # two human references for each of 3 prompts
    cands = _seqs(rng, 3, shape=4.0)
    ref_rows = [{"id": f"h{j}", "prompt_id": f"p{j // 2}"} for j in range(6)]
    cand_rows = [{"id": f"g{i}", "prompt_id": f"p{i}"} for i in range(3)]
    rec = score_loaded("face", cands, cand_rows, refs, ref_rows)
    assert rec["n"]["pairs"] == 6
    for key, better in (("so", max), ("corr", max), ("emd", min), ("kl", min)):
        per = [
            better(facescore_reference(refs[2 * i + k], cands[i])[key] for k in (0, 1))
            for i in range(3)
        ]
        assert rec["values"][key] == pytest.approx(np.mean(per), abs=1e-9), key
        assert rec["extras"]["per_candidate"][key] == pytest.approx(per, abs=1e-9)


def test_a_partly_linked_candidate_set_is_an_error_not_a_silent_pairing():
    rng = np.random.default_rng(3)
    refs, cands = _seqs(rng, 3), _seqs(rng, 3)
    ref_rows = [{"id": f"p{j}"} for j in range(3)]
    cand_rows = [{"id": "a", "prompt_id": "p0"}, {"id": "b", "prompt_id": "p1"}]
    cand_rows.append({"id": "c", "prompt_id": "p9"})
    with pytest.raises(GenmetricsError, match=r"1 of 3 candidate\(s\).*'p9'"):
        score_loaded("face", cands, cand_rows, refs, ref_rows, where="M.npz vs H.npz")


def test_short_and_empty_sequences_are_dropped_and_counted():
    rng = np.random.default_rng(4)
    human, model = _seqs(rng, 5), _seqs(rng, 5)
    model[1] = np.array([2.0, 3.0])  # one bin: FACEScore gives NaN, FACE shifts the pairs
    model[3] = np.array([])
    human[4] = np.array([1.0])
    res = compute("face", model, human, links=[[i] for i in range(5)])
    assert res.n["dropped_candidate"] == 2 and res.n["dropped_reference"] == 1
    assert res.n["pairs"] == 2 and res.n["unpaired_candidate"] == 1  # model[4] lost its human
    want = _mean_oracle([human[0], human[2]], [model[0], model[2]])
    for key, v in want.items():
        assert res.values[key] == pytest.approx(v, abs=1e-9), key
    assert res.extras["per_candidate"]["so"][1] is None
    with pytest.raises(GenmetricsError, match="no candidate sequence has 3 or more"):
        compute("face", [np.array([]), np.array([1.0, 2.0])], human)


def test_non_finite_surprisal_is_refused_naming_the_sequence():
    rng = np.random.default_rng(5)
    human, model = _seqs(rng, 4), _seqs(rng, 4)
    model[2][5] = np.nan
    with pytest.raises(GenmetricsError, match="candidate: 1 of 4 text.*NaN/inf, first sequence 2"):
        compute("face", model, human)


def test_identical_sets_score_perfectly_and_signed_spectra_stay_finite():
    rng = np.random.default_rng(6)
    human = _seqs(rng, 8)
    for value in ("norm", "real"):
        res = compute("face", human, human, {"value": value}, links=[[i] for i in range(8)])
        for key in ("so", "corr", "spear"):
            assert res.values[key] == pytest.approx(1.0)
        for key in ("sam", "emd", "kl", "js"):
            assert res.values[key] == pytest.approx(0.0, abs=1e-6)


def test_known_ordering_a_closer_model_scores_better_on_every_distance():
    """Candidates drawn from the humans' own process are closer than white noise of the same
    mean (surprisal of real text is autocorrelated; white noise has a flat spectrum)."""
    rng = np.random.default_rng(7)

    def ar1(n, phi):
        x = np.zeros(n)
        for t in range(1, n):
            x[t] = phi * x[t - 1] + rng.normal()
        return np.abs(x) + 1.0

    human = [ar1(200, 0.8) for _ in range(40)]
    close = [ar1(200, 0.8) for _ in range(40)]
    flat = [rng.permutation(ar1(200, 0.8)) for _ in range(40)]  # same values, no memory
    near = compute("face", close, human, {"pairing": "set"}).values
    far = compute("face", flat, human, {"pairing": "set"}).values
    votes = judge(near, far)
    assert {votes[k] for k in ("so", "corr", "spear", "sam", "emd", "js")} == {"a"}
    assert votes["ensemble3"] == "a" and votes["ensemble5"] == "a"


def test_judge_counts_votes_and_ties():
    a = {"so": 0.5, "corr": 0.2, "spear": 0.1, "sam": 0.3, "emd": 0.1, "kl": 0.2, "js": 0.3}
    b = {"so": 0.4, "corr": 0.3, "spear": 0.1, "sam": 0.3, "emd": 0.2, "kl": 0.1, "js": 0.2}
    v = judge(a, b)
    assert v["so"] == "a" and v["corr"] == "b" and v["spear"] == "tie"
    assert v["emd"] == "a" and v["kl"] == "b" and v["js"] == "b"
    assert v["ensemble3"] == "b"  # emd a, kl b, js b
    assert v["ensemble5"] == "b"  # so a, corr b, emd a, kl b, js b


@pytest.mark.parametrize(
    "params",
    [
        {"align": "face"},
        {"method": "welch"},
        {"window": "hann"},
        {"log": True, "zscore": True},
    ],
)
def test_every_variant_runs_and_differs_from_the_default(params):
    rng = np.random.default_rng(8)
    human, model = _seqs(rng, 10, 60, 120), _seqs(rng, 10, 60, 120, shape=4.0)
    base = compute("face", model, human).values
    other = compute("face", model, human, params).values
    assert all(np.isfinite(v) for v in other.values())
    assert any(abs(other[k] - base[k]) > 1e-6 for k in base)


def test_welch_refuses_signed_values():
    rng = np.random.default_rng(9)
    with pytest.raises(GenmetricsError, match="welch"):
        compute("face", _seqs(rng, 3), _seqs(rng, 3), {"method": "welch", "value": "real"})


def test_a_flat_spectrum_is_counted_not_averaged_in_as_nan():
    rng = np.random.default_rng(10)
    human, model = _seqs(rng, 6), _seqs(rng, 6)
    model[2] = np.full(40, 3.0)  # z-scored: all zeros, so CORR and KL are undefined
    res = compute("face", model, human, {"zscore": True}, links=[[i] for i in range(6)])
    assert res.n["undefined_candidate"] == 1 and res.extras["per_candidate"]["corr"][2] is None
    assert all(np.isfinite(v) for v in res.values.values())
    keep = [0, 1, 3, 4, 5]
    want = _mean_oracle([human[i] for i in keep], [model[i] for i in keep], zscore=True)
    for key, v in want.items():
        assert res.values[key] == pytest.approx(v, abs=1e-9), key
