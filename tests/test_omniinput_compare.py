"""The OmniInput study pieces (configs/omniinput_compare.yaml): the model comparison over seeds
(hand-computed AUPRs, t interval), the annotation-variance table (hand-computed r(z) and
Cohen's kappa, and sklearn's kappa), the fixed-length padding and the bag-of-tokens classifier
(its logit and gradient by hand, trained on real AG News text above chance), the config's
checks naming their keys."""

from __future__ import annotations

import json
import math
import zlib

import numpy as np
import pytest

from genmetrics import GenmetricsError
from genmetrics.metrics.omniinput import omniinput
from genmetrics.omniinput.curves import Density
from genmetrics.omniinput.density import Bins
from genmetrics.omniinput.settings import omni_plan
from genmetrics.studies.omniinput_compare.classifier import (
    BagOfTokens,
    balanced_draw,
    pad_tokens,
    train_classifier,
)
from genmetrics.studies.omniinput_compare.compare import comparison_rows, mean_curve, seed_summary
from genmetrics.studies.omniinput_compare.variance import cohen_kappa, variance_table

BINS = Bins(0.0, 3.0, 3)
LN_RHO = np.log([1.0, 2.0, 3.0])
# two seeds of one model: r per bin; by hand (direction low, trapezoids from (0, p_first)):
# seed 0: r ρ = [1, 1, 0], Σ = 2: (rec, p) = (0.5, 1), (1, 2/3), (1, 1/3) -> AUPR 0.5 + 0.5 *
#   (1 + 2/3) / 2 = 11/12
# seed 1: r ρ = [0.8, 1, 0.6], Σ = 2.4: (1/3, 0.8), (0.75, 0.6), (1, 0.4) -> 0.8/3 +
#   (5/12)(0.7) + 0.25 (0.5) = 0.683333...
R_SEEDS = ([1.0, 0.5, 0.0], [0.8, 0.5, 0.2])
AUPR_SEEDS = (11 / 12, 0.8 / 3 + (5 / 12) * 0.7 + 0.125)


def _record(r) -> dict:
    d = Density(BINS, LN_RHO, np.array(r), np.array([2, 2, 2]), math.log(10.0))
    m = omniinput(d)
    return {"values": m.values, "extras": m.extras}


def test_seed_summary_by_hand():
    s = seed_summary([0.5, 0.6, 0.7, float("nan")], level=0.95)
    assert s["n"] == 3 and s["n_nan"] == 1
    assert s["mean"] == pytest.approx(0.6) and s["sd"] == pytest.approx(0.1)
    assert (s["min"], s["max"]) == (0.5, 0.7)
    half = 4.302652729911275 * 0.1 / math.sqrt(3)  # t_{0.975, 2}
    assert s["ci_low"] == pytest.approx(0.6 - half) and s["ci_high"] == pytest.approx(0.6 + half)
    one = seed_summary([0.4])
    assert one["mean"] == 0.4 and math.isnan(one["sd"]) and math.isnan(one["ci_low"])


def test_comparison_rows_and_mean_curve_by_hand():
    records = {f"m-seed{i}": _record(r) for i, r in enumerate(R_SEEDS)}
    for i, want in enumerate(AUPR_SEEDS):
        assert records[f"m-seed{i}"]["values"]["aupr"] == pytest.approx(want)
    settings = {
        "interval": 0.95,
        "runs": {
            "m": {
                "checkpoint": "ck",
                "length": 25,
                "annotator": {"kind": "judge_lm", "checkpoint": "judge"},
                "runs": {"0": "m-seed0", "1": "m-seed1"},
            }
        },
    }
    (row,) = comparison_rows(settings, records)
    mean = sum(AUPR_SEEDS) / 2
    sd = abs(AUPR_SEEDS[0] - AUPR_SEEDS[1]) / math.sqrt(2)
    assert row["model"] == "ck" and row["length"] == 25 and row["n_seeds"] == 2
    assert row["annotator"] == "judge_lm:judge" and row["seeds"] == "0 1"
    assert row["aupr_mean"] == pytest.approx(mean) and row["aupr_sd"] == pytest.approx(sd)
    assert (row["aupr_min"], row["aupr_max"]) == pytest.approx(sorted(AUPR_SEEDS))
    half = 12.706204736174698 * sd / math.sqrt(2)  # t_{0.975, 1}
    assert row["aupr_t95_low"] == pytest.approx(mean - half)
    c = mean_curve(list(records.values()))
    np.testing.assert_allclose(c["precision"], [0.9, (2 / 3 + 0.6) / 2, (1 / 3 + 0.4) / 2])
    np.testing.assert_allclose(c["precision_min"], [0.8, 0.6, 1 / 3])
    np.testing.assert_allclose(c["precision_max"], [1.0, 2 / 3, 0.4])
    np.testing.assert_allclose(c["recall"], [(0.5 + 1 / 3) / 2, (1 + 0.75) / 2, 1.0])
    other = _record(R_SEEDS[0])
    other["extras"]["curve"]["lambda"] = [5.0, 6.0, 7.0]
    with pytest.raises(GenmetricsError, match="share their bins"):
        mean_curve([records["m-seed0"], other])


def test_annotation_variance_table_by_hand():
    a = [np.array([1.0, 0.0, 1.0]), np.zeros(0), np.array([0.0, 0.2])]
    b = [np.array([1.0, 1.0, 0.9]), np.zeros(0), np.array([0.0, 0.6])]
    ln_rho = np.log([1.0, 1e-9, 3.0])
    ln_rho[1] = -np.inf  # an empty bin
    rows, s = variance_table(a, b, BINS, ln_rho, "low", 0.5, ("A", "B"))
    assert [r["n"] for r in rows] == [3, 0, 2]
    assert rows[0]["r_A"] == pytest.approx(2 / 3) and rows[0]["r_B"] == pytest.approx(2.9 / 3)
    assert rows[0]["difference"] == pytest.approx(-0.9 / 3)
    assert rows[2]["r_A"] == pytest.approx(0.1) and rows[2]["r_B"] == pytest.approx(0.3)
    # bin 0: labels A 1 0 1, B 1 1 1: p_o = 2/3, p_e = (2/3)(1) + (1/3)(0) = 2/3 -> kappa 0
    assert rows[0]["equal_labels"] == pytest.approx(2 / 3) and rows[0]["kappa"] == pytest.approx(0)
    # bin 2: labels A 0 0, B 0 1: p_o = 1/2, p_A = 0 -> p_e = 1/2 -> kappa 0
    assert rows[2]["kappa"] == pytest.approx(0.0)
    assert math.isnan(rows[1]["r_A"]) and math.isnan(rows[1]["kappa"])
    # pooled: A 1 0 1 0 0, B 1 1 1 0 1: p_o = 3/5, p_A = 2/5, p_B = 4/5,
    # p_e = 0.32 + 0.12 = 0.44 -> kappa = 0.16 / 0.56
    assert s["kappa"] == pytest.approx(0.16 / 0.56) and s["equal_labels"] == pytest.approx(0.6)
    assert s["mean_abs_difference"] == pytest.approx((0.3 + 0.2) / 2)
    # AUPR of each annotator's r on the same density: (bins 0 and 2 populated)
    ra, rb = np.array([2 / 3, np.nan, 0.1]), np.array([2.9 / 3, np.nan, 0.3])
    from genmetrics.omniinput.curves import aupr

    assert s["aupr_A"] == pytest.approx(aupr(ln_rho, ra, BINS, "low"))
    assert s["aupr_B"] == pytest.approx(aupr(ln_rho, rb, BINS, "low"))
    assert s["aupr_A"] != pytest.approx(s["aupr_B"])
    with pytest.raises(GenmetricsError, match="same samples"):
        variance_table(a, [b[0], b[1], b[2][:1]], BINS, ln_rho)


def test_cohen_kappa_matches_sklearn():
    from sklearn.metrics import cohen_kappa_score

    rng = np.random.default_rng(0)
    a = rng.random(200) < 0.4
    b = np.where(rng.random(200) < 0.8, a, ~a)
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    assert math.isnan(cohen_kappa(np.ones(4, bool), np.ones(4, bool)))  # p_e = 1


def test_pad_tokens_by_hand():
    np.testing.assert_array_equal(pad_tokens([5, 6, 7], 5, 2), [5, 6, 7, 2, 2])
    np.testing.assert_array_equal(pad_tokens(range(1, 8), 4, 2), [1, 2, 3, 4])
    np.testing.assert_array_equal(pad_tokens([], 3, 9), [9, 9, 9])
    with pytest.raises(GenmetricsError, match="length"):
        pad_tokens([1], 0, 2)


def test_bag_of_tokens_logit_and_gradient_by_hand():
    f = BagOfTokens(np.array([0.0, 1.0, 2.0, 3.0]), 0.5, length=2, pad_id=0)
    x = np.array([[1, 3], [0, 0]])
    np.testing.assert_allclose(f(x), [0.5 + (1 + 3) / 2, 0.5])
    z, g = f.grad(x)
    assert g.shape == (2, 2, 4)
    # a one-token change moves z by exactly g[i, v] - g[i, x_i] (z is linear in the one-hot)
    y = x.copy()
    y[0, 1] = 2
    assert f(y)[0] - z[0] == pytest.approx(g[0, 1, 2] - g[0, 1, 3])
    with pytest.raises(GenmetricsError, match="token ids"):
        f(np.array([[4, 0]]))


class _HashTokenizer:
    """A tiny deterministic tokenizer (lower-cased words hashed into 4,095 ids, pad 0), so the
    training test needs no model files."""

    pad_token_id = 0

    def __len__(self) -> int:
        return 4096

    def __call__(self, text: str, add_special_tokens: bool = False) -> dict:
        return {"input_ids": [1 + zlib.crc32(w.encode()) % 4095 for w in text.lower().split()]}


def test_classifier_trains_above_chance_on_real_text(shared_data, tmp_path):
    s = {
        "train": {"path": str(shared_data / "ag_news/train_sample.jsonl")},
        "heldout": {"path": str(shared_data / "ag_news/test.jsonl")},
        "text_field": "text",
        "label_field": "label",
        "positive": 1,  # Sports vs the rest
        "length": 16,
        "max_train": 600,
        "max_heldout": 400,
        "epochs": 150,
        "lr": 0.1,
        "l2": 1e-5,
        "seed": 0,
    }
    out = tmp_path / "weights.safetensors"
    report = train_classifier(s, _HashTokenizer(), out)
    assert report["chance_accuracy"] == 0.5 and report["heldout_n"] == 400
    # 400 balanced held-out texts: chance gives 0.5 +- 0.025; a topic this lexical far more
    assert report["heldout_accuracy"] > 0.65, report
    meta = json.loads((tmp_path / "weights.json").read_text())
    assert meta["heldout_accuracy"] == report["heldout_accuracy"] and meta["length"] == 16
    f = BagOfTokens.load(out)
    assert f.vocab_size == 4096 and f.pad_id == 0
    # trained again with the same seed: the same weights
    train_classifier(s, _HashTokenizer(), tmp_path / "again.safetensors")
    np.testing.assert_array_equal(BagOfTokens.load(tmp_path / "again.safetensors").weight, f.weight)


def test_balanced_draw():
    labels = [0, 1, 1, 0, 0, 0, 2, 1]
    idx = balanced_draw(labels, 1, 4, seed=3)
    assert sorted(labels[i] == 1 for i in idx) == [False, False, True, True]
    with pytest.raises(GenmetricsError, match="both classes"):
        balanced_draw([0, 0], 1, 2, seed=0)


def _section(tmp_path, **over) -> dict:
    data = tmp_path / "d.jsonl"
    data.write_text('{"text": "a", "label": 1}\n')
    wl = {"walkers": 4}
    run = {"length": 4, "bins": {"lo": 0.0, "hi": 1.0, "n": 2}, "proposal": "uniform"}
    run |= {"budget": 8, "sampler": wl, "direction": "low", "seed": 0}
    ann = {"kind": "judge_lm", "checkpoint": "lm"}
    sec = {
        "classifiers": {
            "c": {"tokenizer": "lm", "train": {"path": str(data)}, "heldout": {"path": str(data)}}
            | {"length": 4, "positive": 1}
        },
        "runs": {
            "a": {**run, "checkpoint": "lm", "annotator": ann, "seeds": [0, 1]},
            "b": {**run, "checkpoint": "lm", "annotator": ann},
            "k": {**run, "classifier": "c", "direction": "high", "annotator": ann},
        },
        "comparisons": {"cmp": {"runs": ["a", "b"], "interval": 0.95}},
        "variance": {"v": {"run": "a-seed1", "annotator": ann} | {"labels": ["x", "y"]}},
    }
    for path, value in over.items():
        *keys, last = path.split(".")
        d = sec
        for k in keys:
            d = d[k]
        d[last] = value
    return sec


def test_config_seeds_classifier_runs_and_errors_naming_keys(tmp_path):
    plan = omni_plan(_section(tmp_path), {"lm": {}})
    assert list(plan.runs) == ["a-seed0", "a-seed1", "b", "k"]
    assert plan.group_runs("a") == ["a-seed0", "a-seed1"] and plan.runs["a-seed1"].seed == 1
    assert plan.runs["k"].checkpoint == "lm" and plan.run_target("k") == {
        "classifier": "results/omniinput/classifier/c/weights.safetensors"
    }
    assert plan.compare_scores("cmp") == [
        f"results/omniinput/{r}/score.json" for r in ("a-seed0", "a-seed1", "b")
    ]
    bad = {
        "runs.k.length": (8, "omniinput.runs.k.length"),
        "runs.k.direction": ("low", "omniinput.runs.k.direction"),
        "runs.k.classifier": ("nope", "omniinput.runs.k.classifier"),
        "runs.b.length": (5, "omniinput.comparisons.cmp.runs"),
        "runs.b.annotator": ({"kind": "judge_lm", "checkpoint": "lm", "chat": False}, "annotator"),
        "variance.v.run": ("a", "omniinput.variance.v.run"),
        "classifiers.c.tokenizer": ("gone", "omniinput.classifiers.c.tokenizer"),
    }
    for path, (value, key) in bad.items():
        with pytest.raises(GenmetricsError, match=key.replace(".", r"\.")):
            omni_plan(_section(tmp_path, **{path: value}), {"lm": {}})
