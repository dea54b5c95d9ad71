"""Paired model-vs-model differences (genmetrics.analysis.paired): the records of two models
share their draws of prompts (same digest), the table by hand on known replicates, Holm and
Benjamini–Hochberg against statsmodels, pairing narrowing the interval where prompts share
an effect, the seeds' draws, and ``genmetrics compare``."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from genmetrics.analysis.paired import (
    benjamini_hochberg,
    degrees_of_freedom,
    holm,
    paired_differences,
    percentile_p,
    t_p,
    z_p,
)
from genmetrics.cli import main
from genmetrics.scoring.from_files import score_loaded
from genmetrics.scoring.intervals import DEFAULTS

WORDS = "the a river stone market city green old quiet bright song road north glass".split()


def texts(n: int, seed: int, vocab: int = len(WORDS)) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS[:vocab], size=12)) for _ in range(n)]


def record(metric: str, cand, source: str, prompts: list[str], resamples: int = 60, **kw):
    rows = [{"id": f"{source}-{p}", "prompt_id": p} for p in prompts]
    iv = {**DEFAULTS, "resamples": resamples, "asked": False}
    rec = score_loaded(metric, cand, rows, interval=iv, **kw)
    return rec | {"dataset": "toy", "source": source, "entry": metric, "reference": None}


def test_two_models_records_share_their_draws_and_other_prompts_do_not():
    prompts = [f"p{i:02d}" for i in range(30)]
    a = record("distinct_n", texts(30, 1), "model-a/seed0", prompts)
    b = record("distinct_n", texts(30, 2, vocab=8), "model-b/seed0", prompts[::-1])  # any order
    c = record("distinct_n", texts(30, 3), "model-c/seed0", [f"q{i}" for i in range(30)])
    assert a["interval"]["draws"] == b["interval"]["draws"]
    assert a["interval"]["n_units"] == b["interval"]["n_units"] == 30
    assert c["interval"]["draws"] != a["interval"]["draws"]
    t = paired_differences([a, b, c])
    ab = t[(t["model_a"] == "model-a") & (t["model_b"] == "model-b")]
    ac = t[(t["model_a"] == "model-a") & (t["model_b"] == "model-c")]
    assert ab["p"].notna().all() and (ab["n_prompts"] == 30).all()
    assert ac["p"].isna().all()
    assert ac["note"].str.contains("not drawn on the same prompts").all()
    # model a draws from 14 words, model b from 8: a is more diverse, the difference holds
    d = ab[ab["value"] == "distinct_1"].iloc[0]
    assert d["difference"] > 0 and d["lower"] > 0 and d["p"] < 1e-3
    assert d["direction"] == "higher" and d["better"] == "model-a"


def fake(source: str, value: float, reps: list[float], draws: str = "d", seed: int = 0) -> dict:
    iv = {"method": "half-sample bootstrap over prompts", "scheme": "half", "seed": seed}
    iv |= {"resamples": len(reps), "level": 0.9, "unit": "prompt", "n_units": 10}
    iv |= {"draws": draws, "lower": {"distinct_1": min(reps)}, "upper": {"distinct_1": max(reps)}}
    iv |= {"replicates": {"distinct_1": reps}}
    return {
        "metric": "distinct_n",
        "entry": "distinct_n",
        "dataset": "toy",
        "source": source,
        "reference": None,
        "values": {"distinct_1": value},
        "n": {"candidate": 10},
        "interval": iv,
    }


def test_the_table_by_hand():
    """a − b replicates (0.1, 0.2, ..., 1.0) − 0: sd = 0.30277 (ddof 1), T = 0.5/sd = 1.6514
    on ν = 1/(1/9 + 1/9) = 4.5 degrees of freedom (10 prompts, 10 resamples): p = 2·P(t_4.5
    > 1.6514) = 0.1660 (scipy), where the z-test would say erfc(T/√2) = 0.0986; the 90 % t
    interval 0.5 ∓ t_4.5,0.95·sd = 0.5 ∓ 2.0656·0.30277 = (−0.1254, 1.1254) holds 0, as p >
    0.1 says (the percentile interval, numpy's 0.05/0.95 quantiles, would be (0.145, 0.955))."""
    ra = [round(0.1 * k, 1) for k in range(1, 11)]
    t = paired_differences([fake("a", 0.5, ra), fake("b", 0.0, [0.0] * 10)])
    r = t.iloc[0]
    assert (r["model_a"], r["model_b"], r["difference"]) == ("a", "b", 0.5)
    assert r["lower"] == pytest.approx(-0.12538, abs=1e-5)
    assert r["upper"] == pytest.approx(1.12538, abs=1e-5)
    sd = float(np.std(np.arange(1, 11) / 10, ddof=1))
    assert sd == pytest.approx(0.302765, abs=1e-6)
    assert degrees_of_freedom(10, 10) == pytest.approx(4.5)
    assert r["p"] == pytest.approx(0.16602, abs=1e-5)
    assert z_p(0.5, np.asarray(ra)) == pytest.approx(math.erfc(0.5 / sd / math.sqrt(2)))
    assert z_p(0.5, np.asarray(ra)) == pytest.approx(0.0986, abs=1e-4)
    assert r["p_holm"] == r["p_bh"] == r["p"]  # one test
    assert percentile_p(np.asarray(ra)) == pytest.approx(2 / 11)  # no d_b ≤ 0: (1 + 0)·2/11


def test_records_without_a_digest_or_with_other_draws_get_no_p():
    t = paired_differences([fake("a", 0.5, [0.4, 0.6] * 5), fake("b", 0.1, [0.0, 0.2] * 5, "x")])
    assert t["p"].isna().all() and t["note"].iloc[0].startswith("not computed: ")
    old = fake("b", 0.1, [0.0, 0.2] * 5)
    del old["interval"]["draws"]
    t = paired_differences([fake("a", 0.5, [0.4, 0.6] * 5), old])
    assert "scored before draws were recorded" in t["note"].iloc[0]


def test_seeds_are_averaged_and_drawn_as_the_headline_draws_them():
    """Model a has seeds 0 and 1 with replicates r0, r1; b one seed. Replicate b of a is the
    mean of the seeds drawn by default_rng(seed).integers(0, 2, (B, 2)) (seed_bootstrap); the
    90 % interval is the difference ∓ t_ν,0.95 times their sd (ν of 10 prompts and 40
    resamples, scipy)."""
    rng = np.random.default_rng(5)
    r0, r1, rb = (rng.normal(m, 0.1, 40).round(4).tolist() for m in (0.5, 0.7, 0.2))
    recs = [fake("a/seed0", 0.5, r0), fake("a/seed1", 0.7, r1), fake("b/seed0", 0.2, rb)]
    row = paired_differences(recs).iloc[0]
    assert row["difference"] == pytest.approx(0.6 - 0.2)
    idx = np.random.default_rng(0).integers(0, 2, size=(40, 2))
    both = np.vstack([r0, r1])
    ra = both[idx, np.arange(40)[:, None]].mean(axis=1)
    from scipy import stats

    half = stats.t.ppf(0.95, 1 / (1 / 9 + 1 / 39)) * np.std(ra - np.asarray(rb), ddof=1)
    assert (row["lower"], row["upper"]) == pytest.approx((0.4 - half, 0.4 + half))


def test_holm_and_bh_agree_with_statsmodels():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    p = np.random.default_rng(0).uniform(0, 0.2, 37) ** 2
    p[[3, 9]] = p[4]  # ties
    for ours, method in ((holm, "holm"), (benjamini_hochberg, "fdr_bh")):
        ref = multitest.multipletests(p, alpha=0.05, method=method)[1]
        np.testing.assert_allclose(ours(p), ref, rtol=1e-12)
    with_nan = np.array([0.01, np.nan, 0.04, 0.03])
    assert np.isnan(holm(with_nan)[1])
    np.testing.assert_allclose(holm(with_nan)[[0, 2, 3]], [0.03, 0.06, 0.06])  # by hand
    np.testing.assert_allclose(benjamini_hochberg(with_nan)[[0, 2, 3]], [0.03, 0.04, 0.04])


def test_pairing_narrows_the_interval_where_prompts_share_an_effect():
    """coherence (the mean cosine of each continuation with its prompt) with a prompt effect
    both models share: the paired interval of a − b is much narrower than the one from the
    two intervals as if independent (√(w_a² + w_b²)): over 3 times narrower."""
    rng = np.random.default_rng(1)
    n, dim = 60, 8
    prompts = rng.normal(size=(n, dim))
    spread = rng.uniform(0.2, 3.0, n)[:, None]  # how far each prompt's continuations stray
    common = rng.normal(size=(n, dim))  # the way they stray, shared by the models
    recs = []
    for name, noise in (("a", 1.0), ("b", 1.1)):
        cont = prompts + spread * noise * (common + 0.3 * rng.normal(size=(n, dim)))
        ref_rows = [{"id": f"p{i}"} for i in range(n)]
        recs.append(
            record(
                "coherence",
                cont,
                f"{name}/seed0",
                [f"p{i}" for i in range(n)],
                200,
                ref=prompts,
                ref_rows=ref_rows,
            )
        )
    row = paired_differences(recs).iloc[0]
    wa, wb = (
        (r["interval"]["upper"]["coherence"] - r["interval"]["lower"]["coherence"]) for r in recs
    )
    assert (row["upper"] - row["lower"]) * 3 < math.hypot(wa, wb)


def test_p_edges_and_the_t_reference():
    """No spread and no difference: p = 1; a difference without spread: NaN. With many
    resamples ν → U − 1: T = 2.0452 (t_29's 97.5 % point) gives p = 0.05 at 30 prompts, where
    the z-test gives 0.041; at the default 200 resamples ν = 25.3."""
    for f in (lambda x, d: t_p(x, d, 30), z_p):
        assert f(0.0, np.zeros(10)) == 1.0
        assert math.isnan(f(0.3, np.zeros(10)))
    d = np.array([-1.0, 1.0] * 50_000)
    t = 2.045230 * float(np.std(d, ddof=1))
    assert t_p(t, d, 30) == pytest.approx(0.05, abs=1e-5)
    assert z_p(t, d) == pytest.approx(0.0408, abs=1e-4)
    assert degrees_of_freedom(30, 200) == pytest.approx(25.31, abs=0.01)
    assert z_p(1.96, np.array([-1.0, 1.0] * 50)) == pytest.approx(0.05, abs=0.002)


def test_compare_on_the_command_line(tmp_path, capsys):
    prompts = [f"p{i:02d}" for i in range(20)]
    paths = []
    for i, (src, vocab) in enumerate((("m1/seed0", 14), ("m2/seed0", 6))):
        rec = record("distinct_n", texts(20, i, vocab), src, prompts)
        paths.append(tmp_path / f"r{i}.json")
        paths[-1].write_text(json.dumps(rec))
    assert main(["compare", *map(str, paths), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["value"] for r in rows} >= {"distinct_1"}
    assert all(r["model_a"] == "m1" and r["model_b"] == "m2" for r in rows)
    assert main(["compare", *map(str, paths)]) == 0
    assert "distinct_1" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text('{"metric": "x"}')
    assert main(["compare", str(paths[0]), str(bad)]) == 2
    assert "bad.json: not a score record" in capsys.readouterr().err
    assert main(["compare", str(paths[0]), str(paths[0])]) == 2
    assert "at least two models" in capsys.readouterr().err
