"""The interval over prompts of every score (genmetrics.scoring.intervals, issue 27 item 3): coverage on
a synthetic case with a known sampling distribution, determinism, the paired and tied
resampling of references checked draw by draw, the units (prompts, copies, rows without a
prompt id), the per-pair shortcut, and the reasons a score has none (switched off, costly)."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pytest

from genmetrics import GenmetricsError
from genmetrics.metrics import compute, get
from genmetrics.metrics import registry as reg
from genmetrics.metrics.registry import HIGHER, MetricResult, register
from genmetrics.scoring.from_files import score_loaded
from genmetrics.scoring.intervals import DEFAULTS, draws, quarter_draws, units
from genmetrics.scoring.set_variance import extrapolated_variance

WORDS = "the a river stone market city green old quiet bright song road north glass".split()


def settings(**kw) -> dict:
    return {**DEFAULTS, "asked": False, **kw}


def sentences(n: int, seed: int, length: int = 12) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=length)) for _ in range(n)]


@pytest.fixture
def toys(monkeypatch) -> Iterator[dict]:
    """Test metrics in a copy of the registry (gone afterwards); ``calls`` counts runs."""
    reg.all_metrics()
    monkeypatch.setattr(reg, "_REGISTRY", dict(reg._REGISTRY))
    calls = {"n": 0}

    @register("iv_mean", input="embeddings", values={"mean": HIGHER}, duplicates_change_value=False)
    def iv_mean(candidate):
        """The mean of the first feature."""
        calls["n"] += 1
        return {"mean": float(np.mean(candidate[:, 0]))}

    @register(
        "iv_encoder", input="embeddings", values={"score": HIGHER}, loads_model=lambda p: True
    )
    def iv_encoder(candidate):
        """Stands for a metric that runs an encoder."""
        calls["n"] += 1
        return {"score": float(np.mean(candidate[:, 0]))}

    @register(
        "iv_encoder_pairs",
        input="embeddings",
        reference="required",
        paired=True,
        values={"score": HIGHER},
        loads_model=lambda p: True,
    )
    def iv_encoder_pairs(candidate, reference):
        """A paired metric that runs an encoder and keeps its per-pair scores (BERTScore)."""
        calls["n"] += 1
        per = candidate[:, 0] * reference[:, 0]
        return MetricResult({"score": float(per.mean())}, {"per_pair": {"score": per}})

    @register(
        "iv_prompts",
        input="embeddings",
        values={"prompts": HIGHER},
        by_prompt=True,
        duplicates_change_value=False,
    )
    def iv_prompts(candidate, prompt_ids):
        """The number of distinct prompts."""
        return {"prompts": float(len(set(prompt_ids)))}

    @register(
        "iv_links",
        input="embeddings",
        reference="required",
        links=True,
        values={"links": HIGHER},
        duplicates_change_value=False,
    )
    def iv_links(candidate, reference, links):
        """The mean number of references linked to a candidate."""
        return {"links": float(np.mean([len(g) for g in links]))}

    yield calls


def grouped(n_prompts: int, per_prompt: int, rng: np.random.Generator, tau: float, sigma: float):
    """Rows of ``per_prompt`` samples per prompt; first feature = prompt effect + noise."""
    effect = rng.normal(0.0, tau, n_prompts)
    x = np.repeat(effect, per_prompt) + rng.normal(0.0, sigma, n_prompts * per_prompt)
    rows = [
        {"id": f"p{p}~{j}", "prompt_id": f"p{p}"}
        for p in range(n_prompts)
        for j in range(per_prompt)
    ]
    return np.column_stack([x, np.zeros_like(x)]), rows


@pytest.mark.parametrize("scheme", ["half", "replacement"])
def test_95_percent_interval_covers_the_true_mean_in_95_percent_of_datasets(toys, scheme):
    """A metric that is the mean of per-prompt values (2 samples per prompt, a prompt effect
    of sd 1 and sample noise of sd 0.5: rows of a prompt are correlated, so resampling rows
    instead of prompts would be too narrow). Over 200 seeded datasets of 40 prompts the true
    mean (0) lies in the 95% interval in 95% of them, within ±4.6% (three binomial standard
    deviations, sqrt(0.95 · 0.05 / 200) = 1.54%)."""
    rng = np.random.default_rng(2024)
    covered, reps = 0, 200
    for i in range(reps):
        x, rows = grouped(40, 2, rng, tau=1.0, sigma=0.5)
        iv = score_loaded("iv_mean", x, rows, interval=settings(seed=i, scheme=scheme))["interval"]
        covered += iv["lower"]["mean"] <= 0.0 <= iv["upper"]["mean"]
    assert abs(covered / reps - 0.95) <= 3 * math.sqrt(0.95 * 0.05 / reps)


def test_same_seed_same_interval_other_seed_other_interval():
    texts = sentences(30, 0)
    rows = [{"id": f"t{i}", "prompt_id": f"p{i}", "text": t} for i, t in enumerate(texts)]
    one = score_loaded("distinct_n", texts, rows, interval=settings(resamples=50, seed=3))
    two = score_loaded("distinct_n", texts, rows, interval=settings(resamples=50, seed=3))
    other = score_loaded("distinct_n", texts, rows, interval=settings(resamples=50, seed=4))
    assert one["interval"] == two["interval"]
    assert one["interval"]["replicates"] != other["interval"]["replicates"]
    iv = one["interval"]
    assert (iv["resamples"], iv["seed"], iv["level"], iv["unit"]) == (50, 3, 0.95, "prompt")
    assert set(iv["lower"]) == set(iv["upper"]) == set(one["values"])  # mean_words too
    assert all(len(r) == 50 for r in iv["replicates"].values())
    for name, value in one["values"].items():
        assert iv["lower"][name] <= value <= iv["upper"][name]


def test_half_sample_replicates_by_hand_and_pairs_stay_together():
    """BLEU, paired by prompt: replicate b is the point estimate plus sqrt(m/(U-m)) times the
    deviation of BLEU on the pairs of draw b from the mean over draws; a candidate identical
    to its reference keeps it in every draw, so identical pairs give 100 in every replicate
    (a reference drawn apart from its candidate would not)."""
    refs = sentences(21, 1)
    answer = [
        t if i % 2 == 0 else s for i, (t, s) in enumerate(zip(refs, sentences(21, 2), strict=True))
    ]
    ref_rows = [{"id": f"p{i:02d}"} for i in range(21)]
    # the candidates' file lists the prompts in reverse: pairing is by prompt id
    cand_rows = [{"id": f"g{i}", "prompt_id": f"p{20 - i:02d}"} for i in range(21)]
    cands = answer[::-1]
    rec = score_loaded("bleu", cands, cand_rows, refs, ref_rows, interval=settings(resamples=30))
    iv = rec["interval"]
    assert "pairs resampled together" in iv["method"]
    # by hand: units sorted by prompt id, 10 of the 21 drawn without replacement
    by_hand = []
    for d in draws(21, 30, 0, "half"):
        cand, ref = [answer[p] for p in d], [refs[p] for p in d]
        by_hand.append(compute("bleu", cand, ref).values["bleu"])
    by_hand = np.array(by_hand)
    want = rec["values"]["bleu"] + math.sqrt(10 / 11) * (by_hand - by_hand.mean())
    assert iv["replicates"]["bleu"] == pytest.approx(np.clip(want, 0, 100), rel=1e-6)
    same = [{"id": f"g{i}", "prompt_id": f"p{i:02d}"} for i in range(21)]
    perfect = score_loaded("bleu", refs, same, refs, ref_rows, interval=settings(resamples=30))
    assert perfect["values"]["bleu"] == pytest.approx(100.0)
    assert perfect["interval"]["replicates"]["bleu"] == pytest.approx([100.0] * 30)


def test_human_references_of_the_drawn_prompts_are_drawn_with_them():
    """kNN precision/recall against the human texts the prompts were cut from (reference ids =
    the candidates' prompt ids, no prompt_id of their own): draw b takes the candidates and
    the references of the same prompts; another model's texts (with their own prompt_id) are
    an independent sample, kept whole."""
    rng = np.random.default_rng(5)
    p, q = rng.normal(size=(24, 4)), rng.normal(0.3, 1.0, size=(24, 4))
    ids = [f"p{i:02d}" for i in range(24)]
    cand_rows = [{"id": i, "prompt_id": i} for i in ids]
    tied = score_loaded(
        "precision_recall",
        q,
        cand_rows,
        p,
        [{"id": i} for i in ids],
        {"k": 3},
        interval=settings(resamples=12),
    )
    assert "the references of the drawn prompts" in tied["interval"]["method"]
    other = [{"id": i, "prompt_id": i} for i in ids]
    fixed = score_loaded(
        "precision_recall", q, cand_rows, p, other, {"k": 3}, interval=settings(resamples=12)
    )
    assert "kept whole" in fixed["interval"]["method"]
    for rec, whole in ((tied, False), (fixed, True)):
        vals = []
        for d in draws(24, 12, 0, "half"):
            vals.append(compute("precision_recall", q[d], p if whole else p[d], {"k": 3}).values)
        rec_b = np.array([v["recall"] for v in vals])
        # a set statistic: s² (variance_scale) extrapolated, not m/(U − m) = 1
        s = math.sqrt(rec["interval"]["variance_scale"]["recall"])
        want = rec["values"]["recall"] + s * (rec_b - rec_b.mean())
        assert rec["interval"]["replicates"]["recall"] == pytest.approx(
            np.clip(want, 0, 1), abs=1e-6
        )


def test_prompts_group_samples_copies_are_new_prompts_and_loose_rows_are_units(toys):
    x, rows = grouped(10, 3, np.random.default_rng(0), 1.0, 1.0)
    u = units(get("iv_mean"), rows, None)
    assert [len(c) for c in u.cand] == [3] * 10 and u.references == "none"
    half = score_loaded("iv_prompts", x, rows, interval=settings(resamples=20))
    assert half["interval"]["replicates"]["prompts"] == [10.0] * 20  # 10 + sqrt(1)(5 - 5)
    rep = score_loaded("iv_prompts", x, rows, interval=settings(resamples=20, scheme="replacement"))
    assert rep["interval"]["replicates"]["prompts"] == [10.0] * 20  # a prompt drawn twice: 2
    loose = [{"id": f"r{i}"} for i in range(6)] + rows[6:]
    iv = score_loaded("iv_mean", x, loose, interval=settings(resamples=20))["interval"]
    assert "6 candidate row(s) without a prompt_id, each its own unit" in iv["method"]
    assert len(units(get("iv_mean"), loose, None).cand) == 6 + 8


def test_linked_references_follow_their_prompt_copy(toys):
    """Each prompt has two references; drawn twice (with replacement), each copy of a
    candidate links its own copy's two references, never the other copy's."""
    x, rows = grouped(8, 1, np.random.default_rng(1), 1.0, 1.0)
    refs = [{"id": f"r{p}{j}", "prompt_id": f"p{p}"} for p in range(8) for j in range(2)]
    r = np.random.default_rng(2).normal(size=(16, 2))
    for scheme in ("half", "replacement"):
        rec = score_loaded(
            "iv_links", x, rows, r, refs, interval=settings(resamples=20, scheme=scheme)
        )
        assert rec["values"]["links"] == 2.0
        assert rec["interval"]["replicates"]["links"] == [2.0] * 20
        assert "links rebuilt" in rec["interval"]["method"]


def test_per_pair_scores_are_resampled_without_rerunning_the_metric(toys):
    rng = np.random.default_rng(3)
    q, p = rng.normal(size=(20, 2)), rng.normal(size=(20, 2))
    rows = [{"id": f"p{i:02d}", "prompt_id": f"p{i:02d}"} for i in range(20)]
    refs = [{"id": f"p{i:02d}"} for i in range(20)]
    toys["n"] = 0
    rec = score_loaded("iv_encoder_pairs", q, rows, p, refs, interval=settings(resamples=40))
    assert toys["n"] == 1  # the point estimate only
    assert "from the per-pair scores (no recomputation)" in rec["interval"]["method"]
    per = q[:, 0] * p[:, 0]
    means = np.array([per[d].mean() for d in draws(20, 40, 0, "half")])
    want = per.mean() + (means - means.mean())
    assert rec["interval"]["replicates"]["score"] == pytest.approx(want, abs=1e-6)


def test_rouge_per_pair_shortcut_equals_recomputing():
    refs, cands = sentences(16, 7), sentences(16, 8)
    rows = [{"id": f"g{i}", "prompt_id": f"p{i:02d}"} for i in range(16)]
    ref_rows = [{"id": f"p{i:02d}"} for i in range(16)]
    rec = score_loaded("rouge", cands, rows, refs, ref_rows, interval=settings(resamples=8))
    assert "no recomputation" in rec["interval"]["method"]
    got = []
    for d in draws(16, 8, 0, "half"):
        got.append(compute("rouge", [cands[i] for i in d], [refs[i] for i in d]).values["rougeL"])
    want = rec["values"]["rougeL"] + (np.array(got) - np.mean(got))
    assert rec["interval"]["replicates"]["rougeL"] == pytest.approx(want, abs=1e-6)


def test_a_costly_metric_gets_the_reason_unless_the_entry_asks(toys):
    x, rows = grouped(12, 1, np.random.default_rng(4), 1.0, 1.0)
    toys["n"] = 0
    off = score_loaded("iv_encoder", x, rows, interval=settings(resamples=25))["interval"]
    assert off["method"] is None and off["reason"] == (
        "not computed: iv_encoder would be recomputed 25 times, and it runs an encoder in its "
        "job (loads_model); ask for one with the entry's interval: true"
    )
    assert toys["n"] == 1
    on = score_loaded("iv_encoder", x, rows, interval=settings(resamples=25, asked=True))
    # the point twice, 25 half draws and 25 quarter draws (a set statistic's two sizes)
    assert on["interval"]["method"] and toys["n"] == 1 + 1 + 25 + 25


def test_frechet_is_registered_costly_and_computed_when_asked():
    rng = np.random.default_rng(8)
    q, p = rng.normal(size=(12, 3)), rng.normal(size=(12, 3))
    rows = [{"id": f"p{i:02d}", "prompt_id": f"p{i:02d}"} for i in range(12)]
    refs = [{"id": f"p{i:02d}"} for i in range(12)]
    assert "square root of a d × d matrix" in get("frechet").costly({})
    off = score_loaded("frechet", q, rows, p, refs, interval=settings(resamples=20))
    assert off["interval"]["reason"].startswith("not computed: frechet would be recomputed 20")
    on = score_loaded("frechet", q, rows, p, refs, interval=settings(resamples=20, asked=True))
    assert on["interval"]["lower"]["frechet"] <= on["values"]["frechet"]


def test_switched_off_and_too_few_prompts_say_why(toys):
    x, rows = grouped(3, 2, np.random.default_rng(6), 1.0, 1.0)
    off = score_loaded("iv_mean", x, rows, interval={"reason": "not computed: switched off"})
    assert off["interval"] == {"method": None, "reason": "not computed: switched off"}
    few = score_loaded("iv_mean", x, rows, interval=settings())["interval"]
    assert few == {"method": None, "reason": "not computed: 3 prompt(s): fewer than 4 to resample"}
    assert "interval" not in score_loaded("iv_mean", x, rows)  # nobody asked: no key


def test_half_sample_interval_holds_a_set_metric_and_replacement_is_refused_for_it():
    """Self-BLEU compares the texts of a set: a prompt drawn twice puts the same text twice,
    which reads as repetition (the with-replacement replicates of these texts all lay far
    above the score). The half-sample interval holds the score; drawing with replacement is
    refused, naming the metric and the scheme."""
    texts = sentences(40, 9, length=16)
    rows = [{"id": f"t{i}", "prompt_id": f"p{i:02d}", "text": t} for i, t in enumerate(texts)]
    half = score_loaded("self_bleu", texts, rows, interval=settings(resamples=40))
    value = half["values"]["self_bleu"]
    assert half["interval"]["lower"]["self_bleu"] <= value <= half["interval"]["upper"]["self_bleu"]
    assert half["interval"]["scheme"] == "half"
    with pytest.raises(GenmetricsError, match="scheme replacement is refused for metric self_bleu"):
        score_loaded(
            "self_bleu", texts, rows, interval=settings(resamples=40, scheme="replacement")
        )


def test_every_source_draws_the_same_prompts_in_replicate_b(toys):
    """Units are sorted by prompt id (a row without one by its own id), so a file in another
    order, or rows that carry their prompt only as their id (POS tags of generations), draw
    the same prompts in every replicate: common random numbers across models and entries."""
    x, rows = grouped(15, 1, np.random.default_rng(9), 1.0, 1.0)
    base = score_loaded("iv_mean", x, rows, interval=settings(resamples=30))["interval"]
    perm = np.random.default_rng(10).permutation(15)
    shuffled = score_loaded(
        "iv_mean", x[perm], [rows[i] for i in perm], interval=settings(resamples=30)
    )["interval"]
    as_ids = [{"id": r["prompt_id"]} for r in rows]
    by_id = score_loaded("iv_mean", x, as_ids, interval=settings(resamples=30))["interval"]
    assert shuffled["replicates"] == base["replicates"] == by_id["replicates"]


def test_a_value_its_interval_would_miss_gets_no_bounds_and_the_reason(toys):
    """The last guard of bootstrap: a (deliberately mis-registered) metric whose replicates
    all lie below its point (the share of distinct rows: 1 on the set, about 0.63 on a draw
    with replacement) gets no bounds for that value, and ``reasons`` says why; the other
    value keeps its interval."""

    @register(
        "iv_distinct",
        input="embeddings",
        values={"distinct": HIGHER, "mean": HIGHER},
        duplicates_change_value=False,  # wrong on purpose
    )
    def iv_distinct(candidate):
        """Share of distinct rows, and the mean of the first feature."""
        share = len(np.unique(candidate, axis=0)) / len(candidate)
        return {"distinct": share, "mean": float(candidate[:, 0].mean())}

    x, rows = grouped(30, 1, np.random.default_rng(12), 1.0, 1.0)
    rec = score_loaded(
        "iv_distinct", x, rows, interval=settings(resamples=40, scheme="replacement")
    )
    iv = rec["interval"]
    assert rec["values"]["distinct"] == 1.0
    assert iv["lower"]["distinct"] is None and iv["upper"]["distinct"] is None
    assert iv["reasons"]["distinct"].startswith("not computed: the point estimate 1 lies outside")
    assert iv["lower"]["mean"] <= rec["values"]["mean"] <= iv["upper"]["mean"]
    assert set(iv["reasons"]) == {"distinct"}


def test_extrapolated_variance_by_hand():
    """Var(T_30) from the variances on 15 and 7 prompts (Var ∝ k^(−α)): a mean's
    (α = 1: 1/15 and 1/7 → 1/30), a degenerate statistic's (α = 2: → 1/900), a count's whose
    variance grows with k (0.5 at 15, 0.4 at 7: α = log(0.8)/log(15/7) < 0), a rate outside
    [−2, 2] clamped (α = 3 read as 2, about −3 as −2), and NaN where a variance is not
    positive."""
    n, m1, m2 = 30, 15, 7
    assert extrapolated_variance(1 / 15, 1 / 7, n, m1, m2) == pytest.approx(1 / 30)
    assert extrapolated_variance(1 / 15**2, 1 / 7**2, n, m1, m2) == pytest.approx(1 / 900)
    assert extrapolated_variance(1 / 15**3, 1 / 7**3, n, m1, m2) == pytest.approx(1 / 15**3 / 4)
    alpha = math.log(0.8) / math.log(15 / 7)
    assert extrapolated_variance(0.5, 0.4, n, m1, m2) == pytest.approx(0.5 * 0.5**alpha)
    assert extrapolated_variance(0.5, 0.05, n, m1, m2) == pytest.approx(0.5 * 4)
    assert math.isnan(extrapolated_variance(0.0, 0.4, n, m1, m2))
    assert math.isnan(extrapolated_variance(float("nan"), 0.4, n, m1, m2))


def test_half_draws_come_in_disjoint_pairs_and_quarter_draws_nest_in_them():
    """Half draws 2j and 2j + 1 share no prompt (two independent samples of ⌊U/2⌋; for an odd
    U one prompt is left out of the pair), quarter draw b lies inside half draw b, so quarter
    draws 2j and 2j + 1 are disjoint too; same seed, same draws."""
    for n in (30, 31):
        half, quarter = draws(n, 21, 4, "half"), quarter_draws(n, 21, 4)
        assert [len(d) for d in half] == [n // 2] * 21
        assert all(
            len(q) == n // 4 and set(q) <= set(h) for h, q in zip(half, quarter, strict=True)
        )
        for j in range(10):
            assert not set(half[2 * j]) & set(half[2 * j + 1])
        assert len({tuple(d) for d in half}) == 21
    assert [q.tolist() for q in quarter] == [q.tolist() for q in quarter_draws(31, 21, 4)]


def test_a_set_statistic_replicates_spread_as_the_statistic_does(toys):
    """A controlled experiment with known rates: T = (mean of x)² on x ~ N(0, 1) has
    Var(T_k) = 2/k², so half-sample replicates rescaled as a mean's would be (m/(U − m)) are
    too spread; the extrapolated ones are not. Over 120 datasets of 40 prompts, the mean sd of
    the replicates over the sd of T across datasets is within 0.8–1.25 for T and for the mean
    (whose factor stays m/(U − m), as the method says), and T's replicates with the mean's
    factor would be at least 1.25 times too spread (measured: 0.83 and 1.32)."""

    @register("iv_square", input="embeddings", values={"square": HIGHER})
    def iv_square(candidate):
        """The square of the first feature's mean (a set statistic: Var ∝ 1/k²)."""
        return {"square": float(np.mean(candidate[:, 0]) ** 2)}

    rng = np.random.default_rng(17)
    sq_points, sq_sds, as_mean, mean_points, mean_sds = [], [], [], [], []
    for i in range(120):
        x, rows = grouped(40, 1, rng, 0.0, 1.0)
        sq = score_loaded("iv_square", x, rows, interval=settings(resamples=100, seed=i))
        mu = score_loaded("iv_mean", x, rows, interval=settings(resamples=100, seed=i))
        sq_points.append(sq["values"]["square"])
        sq_sds.append(np.std(sq["interval"]["replicates"]["square"], ddof=1))
        as_mean.append(sq_sds[-1] / math.sqrt(sq["interval"]["variance_scale"]["square"]))
        mean_points.append(mu["values"]["mean"])
        mean_sds.append(np.std(mu["interval"]["replicates"]["mean"], ddof=1))
    assert "extrapolated" in sq["interval"]["method"] and "sqrt(" not in sq["interval"]["method"]
    assert mu["interval"]["variance_scale"]["mean"] == pytest.approx(1.0)
    assert "sqrt(20/20)" in mu["interval"]["method"]
    assert 0.8 <= np.mean(sq_sds) / np.std(sq_points, ddof=1) <= 1.25
    assert np.mean(as_mean) / np.std(sq_points, ddof=1) >= 1.25
    assert 0.8 <= np.mean(mean_sds) / np.std(mean_points, ddof=1) <= 1.25
