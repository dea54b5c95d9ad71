"""OmniInput: Wang–Landau vs exhaustive enumeration on an analytic toy, determinism and
checkpoint/resume, the gradient (GWG) proposal, PR curves, and clear errors.

Measured on the linear toy V=5, L=6 (15 625 sequences), window [min z − 1, max z + 1] in 24
bins (22 populated, the rarest holding 1 sequence), 8 walkers, ln f_final = 2e-4 with 1/t
(≈1.1e5 evaluations): max |ln ρ̂ − ln ρ| over populated bins was 0.16–0.20 for the uniform
proposal and 0.05–0.12 for the gradient proposal over WL seeds 0–2 (0.21 / 0.11 worst over
toy seeds 1–3 with 20 bins); the tolerance is 0.3 for both.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from genmetrics import GenmetricsError
from genmetrics.npz import load_npz
from genmetrics.omniinput import (
    Bins,
    LinearToy,
    all_sequences,
    aupr,
    digit_sum_rule,
    enumerate_outputs,
    exact_ln_rho,
    exact_r,
    flat_histogram_walk,
    gradient_log_proposal,
    precision_recall_curve,
    wang_landau,
)

V, L = 5, 6
TOL = 0.3


@pytest.fixture(scope="module")
def toy() -> LinearToy:
    return LinearToy(V, L, seed=1)


@pytest.fixture(scope="module")
def window(toy: LinearToy) -> Bins:
    lo, hi = toy.bounds()
    return Bins(lo - 1.0, hi + 1.0, 24)


@pytest.fixture(scope="module")
def exact(toy: LinearToy, window: Bins) -> tuple[np.ndarray, np.ndarray]:
    z = enumerate_outputs(toy, V, L, batch=4000)
    return z, exact_ln_rho(z, window)


@pytest.fixture(scope="module", params=["uniform", "gradient"])
def wl_run(request, toy: LinearToy, window: Bins):
    res = wang_landau(
        toy,
        V,
        L,
        window,
        proposal=request.param,
        grad_f=toy.grad,
        ln_f_final=2e-4,
        check_every=100,
        seed=0,
    )
    return request.param, res


# ------------------------------------------------------------------ bins and toy


def test_bins_index():
    b = Bins(0.0, 3.0, 3)
    np.testing.assert_array_equal(b.edges, [0, 1, 2, 3])
    got = b.index(np.array([-0.1, 0.0, 0.999, 1.0, 2.5, 3.0, 3.01, np.nan]))
    np.testing.assert_array_equal(got, [-1, 0, 0, 1, 2, 2, -1, -1])
    with pytest.raises(GenmetricsError, match="lo < hi"):
        Bins(1.0, 1.0, 3)
    with pytest.raises(GenmetricsError, match="n must be"):
        Bins(0.0, 1.0, 0)


def test_toy_enumeration_and_rule(toy: LinearToy):
    seqs = all_sequences(3, 2)
    np.testing.assert_array_equal(seqs[:4], [[0, 0], [0, 1], [0, 2], [1, 0]])
    assert len(seqs) == 9
    z = enumerate_outputs(toy, V, L, batch=1000)  # several batches
    assert z.shape == (V**L,)
    np.testing.assert_allclose(z, toy(all_sequences(V, L)))
    lo, hi = toy.bounds()
    assert z.min() == pytest.approx(lo) and z.max() == pytest.approx(hi)
    np.testing.assert_array_equal(digit_sum_rule(np.array([[1, 2], [3, 4], [0, 0]]), 3), [1, 0, 1])
    b = Bins(0.0, 2.0, 2)
    r = exact_r(np.array([0.5, 0.6, 1.5, 5.0]), np.array([1.0, 0.0, 1.0, 1.0]), b)
    np.testing.assert_allclose(r, [0.5, 1.0])
    ln = exact_ln_rho(np.array([0.5, 0.6, 5.0]), b)
    np.testing.assert_allclose(ln, [math.log(2), -np.inf])
    _, g = toy.grad(all_sequences(V, L)[:3])
    np.testing.assert_array_equal(g[2], toy.W)


def test_enumeration_refuses_too_large():
    with pytest.raises(GenmetricsError, match=r"10\^8 = 1e\+08.*limit of 2e\+07"):
        enumerate_outputs(lambda t: np.zeros(len(t)), 10, 8)


# ------------------------------------------------------------------ WL vs enumeration


def test_wang_landau_matches_enumeration(wl_run, exact, window: Bins):
    proposal, res = wl_run
    z, ln_rho = exact
    populated = np.isfinite(ln_rho)
    assert 0 < populated.sum() < window.n  # the window has empty end bins
    assert res.stopped == "converged" and res.final_ln_f < 2e-4
    assert res.one_over_t_from is not None  # switched to 1/t
    assert res.bins_reached == populated.sum()
    np.testing.assert_array_equal(np.isfinite(res.ln_rho), populated)
    err = np.abs(res.ln_rho[populated] - ln_rho[populated]).max()
    assert err < TOL, f"{proposal}: max |ln rho_hat - ln rho| = {err:.3f}"
    # normalisation: sum of rho_hat = V^L
    lse = np.logaddexp.reduce(res.ln_rho[populated])
    assert abs(lse - L * math.log(V)) < 1e-9
    # evaluations: one per sequence evaluated, walkers per step (+ the start)
    extra = 8 if proposal == "uniform" else 16
    assert res.model_evaluations == res.iterations * 8 + extra
    assert res.walker_steps == res.iterations * 8 == res.visits.sum()


def test_samples_lie_in_their_bins(wl_run, toy: LinearToy, window: Bins, exact):
    _, res = wl_run
    _, ln_rho = exact
    for b, s in enumerate(res.samples):
        assert len(s) == min(50, res.visits[b])
        if len(s):
            np.testing.assert_array_equal(window.index(toy(s)), b)
    # bins with many sequences get many distinct samples
    big = int(np.argmax(ln_rho))
    assert len(np.unique(res.samples[big], axis=0)) > 25


def test_pr_curve_from_wl_close_to_exact(wl_run, exact, window: Bins):
    """Exact r(z) from the digit-sum rule; the curve from ρ̂ follows the exact one."""
    _, res = wl_run
    z, ln_rho = exact
    r = exact_r(z, digit_sum_rule(all_sequences(V, L), 3), window)
    for direction in ("low", "high"):
        want = precision_recall_curve(ln_rho, r, window, direction)
        got = precision_recall_curve(res.ln_rho, r, window, direction)
        ok = np.isfinite(want["precision"])
        assert np.abs(got["precision"][ok] - want["precision"][ok]).max() < 0.05
        assert np.abs(got["recall"] - want["recall"]).max() < 0.05
        assert (
            abs(aupr(res.ln_rho, r, window, direction) - aupr(ln_rho, r, window, direction)) < 0.02
        )


# ------------------------------------------------------------------ determinism, checkpoints

SMALL = dict(ln_f_final=2e-3, check_every=50, seed=3, samples_per_bin=5)


def _small(proposal: str, **kw):
    """A small run; returns (result, number of sequences this call evaluated)."""
    toy = LinearToy(4, 5, seed=2)
    lo, hi = toy.bounds()
    bins = Bins(lo - 1e-9, hi + 1e-9, 10)
    calls = [0]

    def f(tokens: np.ndarray) -> np.ndarray:
        calls[0] += len(tokens)
        return toy(tokens)

    def grad_f(tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        calls[0] += len(tokens)
        return toy.grad(tokens)

    res = wang_landau(f, 4, 5, bins, proposal=proposal, grad_f=grad_f, **{**SMALL, **kw})
    return res, calls[0]


def _same(a, b) -> None:
    np.testing.assert_array_equal(a.ln_rho, b.ln_rho)
    np.testing.assert_array_equal(a.ln_S, b.ln_S)
    np.testing.assert_array_equal(a.histogram, b.histogram)
    np.testing.assert_array_equal(a.visits, b.visits)
    assert len(a.samples) == len(b.samples)
    for x, y in zip(a.samples, b.samples, strict=True):
        np.testing.assert_array_equal(x, y)
    for k in ("model_evaluations", "iterations", "final_ln_f", "stopped", "stages"):
        assert getattr(a, k) == getattr(b, k), k
    assert a.one_over_t_from == b.one_over_t_from


@pytest.mark.parametrize("proposal", ["uniform", "gradient"])
def test_same_seed_same_result_and_resume(proposal: str, tmp_path):
    ref, n_ref = _small(proposal)
    assert n_ref == ref.model_evaluations
    again, _ = _small(proposal)
    _same(ref, again)
    other, _ = _small(proposal, seed=4)
    assert not np.array_equal(other.ln_S, ref.ln_S)

    ck = tmp_path / "wl.npz"
    part, _ = _small(proposal, checkpoint=ck, checkpoint_every=37, stop_after_evaluations=3000)
    assert part.stopped == "interrupted" and 3000 <= part.model_evaluations < ref.model_evaluations
    assert ck.exists() and not list(tmp_path.glob(".*tmp*"))
    done, n_done = _small(proposal, checkpoint=ck, checkpoint_every=37)
    _same(ref, done)
    assert n_done == ref.model_evaluations - part.model_evaluations  # it did resume
    # a finished checkpoint returns the same result again without new steps
    again, n_again = _small(proposal, checkpoint=ck, checkpoint_every=37)
    _same(ref, again)
    assert n_again == 0
    ref.save(tmp_path / "result.npz")
    saved = load_npz(tmp_path / "result.npz")
    np.testing.assert_array_equal(saved["ln_rho"], ref.ln_rho)
    for b, s in enumerate(ref.samples):
        np.testing.assert_array_equal(saved["samples"][b, : saved["sample_counts"][b]], s)


def test_resume_after_a_crash_equals_uninterrupted(tmp_path):
    """f dies mid-run: the last periodic checkpoint carries the run on to the same result."""
    ref, _ = _small("uniform")
    toy = LinearToy(4, 5, seed=2)
    ck = tmp_path / "wl.npz"
    calls = {"n": 0}

    def dying(tokens: np.ndarray) -> np.ndarray:
        calls["n"] += len(tokens)
        if calls["n"] > 2500:
            raise KeyboardInterrupt
        return toy(tokens)

    lo, hi = toy.bounds()
    bins = Bins(lo - 1e-9, hi + 1e-9, 10)
    with pytest.raises(KeyboardInterrupt):
        wang_landau(dying, 4, 5, bins, checkpoint=ck, checkpoint_every=23, **SMALL)
    assert ck.exists()
    done, n_done = _small("uniform", checkpoint=ck, checkpoint_every=23)
    _same(ref, done)
    assert 0 < n_done < ref.model_evaluations - 2000  # resumed near the crash
    with pytest.raises(GenmetricsError, match="flatness"):
        _small("uniform", checkpoint=ck, flatness=0.7)


def test_budget_stop():
    res, _ = _small("uniform", max_evaluations=1000)
    assert res.stopped == "budget" and res.model_evaluations <= 1000
    assert res.model_evaluations > 1000 - 8


# ------------------------------------------------------------------ gradient proposal


def _brute_force_logq(toy: LinearToy, x: np.ndarray, ln_s: np.ndarray, bins: Bins) -> np.ndarray:
    """softmax over every single-token change (i, v ≠ x_i) of (S(bin z) − S(bin z'))/2, with
    z' evaluated exactly (the linear toy's first-order estimate is exact) and clipped to the
    window (a move estimated outside counts as landing in the edge bin)."""
    z = toy(x[None])[0]
    v_size, length = toy.vocab_size, toy.length
    logits = np.full(length * v_size, -np.inf)
    for i in range(length):
        for v in range(v_size):
            if v == x[i]:
                continue
            y = x.copy()
            y[i] = v
            b = bins.index(np.clip(toy(y[None]), bins.lo, bins.hi))[0]
            logits[i * v_size + v] = (ln_s[bins.index(z)] - ln_s[b]) / 2
    m = logits.max()
    return logits - m - math.log(np.exp(logits - m).sum())


def test_gradient_proposal_against_brute_force():
    toy = LinearToy(3, 4, seed=5)
    lo, hi = toy.bounds()
    bins = Bins((lo + hi) / 2, hi, 6)  # moves to low z leave the window (edge bin's S)
    ln_s = np.random.default_rng(1).normal(0, 2, 6)
    seqs = all_sequences(3, 4)
    seqs = seqs[bins.index(toy(seqs)) >= 0]
    seqs = seqs[np.argsort(toy(seqs))[:7]]  # near the lower edge
    z, g = toy.grad(seqs)
    logq = gradient_log_proposal(seqs, z, g, ln_s, bins)
    np.testing.assert_allclose(np.exp(logq).sum(axis=1), 1.0, rtol=1e-12)
    for w, x in enumerate(seqs):
        stay = np.arange(4) * 3 + x
        assert np.all(logq[w, stay] == -np.inf)
        np.testing.assert_allclose(logq[w], _brute_force_logq(toy, x, ln_s, bins), atol=1e-12)
    # only the stay moves are impossible: a move estimated out of the window is still proposed
    assert np.isneginf(logq).sum() == 7 * 4
    neighbours = np.array(
        [np.where(np.arange(4) == i, v, x) for x in seqs for i in range(4) for v in range(3)]
    )
    assert (toy(neighbours) < bins.lo).any()  # the case the clipping is about occurs here
    mixed = gradient_log_proposal(seqs, z, g, ln_s, bins, uniform_mix=0.1)
    np.testing.assert_allclose(np.exp(mixed).sum(axis=1), 1.0, rtol=1e-12)
    moves = np.isfinite(mixed)  # every non-stay move, each with at least ε / (L (V - 1))
    assert moves.sum() == 7 * 4 * 2 and np.exp(mixed[moves]).min() >= 0.1 / 8 - 1e-15


def test_gradient_walk_has_the_right_stationary_distribution():
    """With S fixed (ln f = 0) the walk samples π(x) ∝ exp(−S(bin z(x))) over all 27 states.
    Measured total variation: 0.015 (gradient), 0.011 (uniform); 0.069 when the reverse
    probability q(x|x') is left out of the acceptance."""
    v_size, length = 3, 3
    toy = LinearToy(v_size, length, seed=4)
    lo, hi = toy.bounds()
    bins = Bins(lo - 1e-9, hi + 1e-9, 5)
    ln_s = np.random.default_rng(0).normal(0, 1, 5)
    pi = np.exp(-ln_s[bins.index(toy(all_sequences(v_size, length)))])
    pi /= pi.sum()
    for proposal in ("gradient", "uniform"):
        states, evals = flat_histogram_walk(
            toy, v_size, length, bins, ln_s, 3000, proposal=proposal, grad_f=toy.grad, seed=0
        )
        k = (states * v_size ** np.arange(length - 1, -1, -1)).sum(-1).ravel()
        emp = np.bincount(k, minlength=v_size**length) / k.size
        tv = 0.5 * np.abs(emp - pi).sum()
        assert tv < 0.035, f"{proposal}: total variation {tv:.4f}"


# ------------------------------------------------------------------ curves


def test_curves_hand_computed():
    """ρ = (1, 2, 1), r = (1, 0.5, 0) over bins [0,1), [1,2), [2,3].

    low: λ = 1: P = 1, R = 1/2; λ = 2: P = 2/3, R = 1; λ = 3: P = 1/2, R = 1;
    AUPR = 1/2 · 1 + 1/2 · (1 + 2/3)/2 = 11/12.
    high: λ = 2: P = 0, R = 0; λ = 1: P = 1/3, R = 1/2; λ = 0: P = 1/2, R = 1;
    AUPR = 1/2 · (0 + 1/3)/2 + 1/2 · (1/3 + 1/2)/2 = 7/24.
    """
    bins = Bins(0.0, 3.0, 3)
    ln_rho = np.log([1.0, 2.0, 1.0]) + 500.0  # huge ρ: sums stay in log space
    r = np.array([1.0, 0.5, 0.0])
    low = precision_recall_curve(ln_rho, r, bins, "low")
    np.testing.assert_allclose(low["lambda"], [1, 2, 3])
    np.testing.assert_allclose(low["precision"], [1, 2 / 3, 1 / 2])
    np.testing.assert_allclose(low["recall"], [1 / 2, 1, 1])
    np.testing.assert_allclose(low["log_recall"], np.log([1, 2, 2]) + 500.0)
    assert aupr(ln_rho, r, bins, "low") == pytest.approx(11 / 12)
    high = precision_recall_curve(ln_rho, r, bins, "high")
    np.testing.assert_allclose(high["lambda"], [0, 1, 2])
    np.testing.assert_allclose(high["precision"], [1 / 2, 1 / 3, 0])
    np.testing.assert_allclose(high["recall"], [1, 1 / 2, 0])
    assert high["log_recall"][2] == -np.inf
    assert aupr(ln_rho, r, bins, "high") == pytest.approx(7 / 24)


def test_curves_empty_bins_and_no_positive_mass():
    bins = Bins(0.0, 3.0, 3)
    ln_rho = np.array([-np.inf, 0.0, 0.0])
    out = precision_recall_curve(ln_rho, np.array([np.nan, 1.0, 0.0]), bins)
    assert np.isnan(out["precision"][0])  # nothing selected yet
    np.testing.assert_allclose(out["precision"][1:], [1.0, 0.5])
    # points (0, 1), (1, 1), (1, 1/2): area 1
    assert aupr(ln_rho, np.array([np.nan, 1.0, 0.0]), bins) == pytest.approx(1.0)
    none = precision_recall_curve(ln_rho, np.array([np.nan, 0.0, 0.0]), bins)
    assert np.isnan(none["recall"]).all()
    assert math.isnan(aupr(ln_rho, np.array([np.nan, 0.0, 0.0]), bins))


# ------------------------------------------------------------------ errors


def test_curve_errors():
    bins = Bins(0.0, 3.0, 3)
    ln_rho = np.zeros(3)
    with pytest.raises(GenmetricsError, match=r"r\[1\] = 1.5 is outside \[0, 1\]"):
        precision_recall_curve(ln_rho, np.array([0.0, 1.5, 0.0]), bins)
    with pytest.raises(GenmetricsError, match=r"r\[2\] is NaN but bin 2 \[2, 3\] is populated"):
        aupr(ln_rho, np.array([0.0, 1.0, np.nan]), bins)
    with pytest.raises(GenmetricsError, match="one value per bin"):
        precision_recall_curve(ln_rho, np.zeros(4), bins)
    with pytest.raises(GenmetricsError, match="direction"):
        precision_recall_curve(ln_rho, np.zeros(3), bins, direction="up")


def test_unreachable_range_is_a_clear_error(toy: LinearToy):
    with pytest.raises(GenmetricsError, match=r"output range \[100, 200\]: no sample reached") as e:
        wang_landau(toy, V, L, Bins(100.0, 200.0, 10), max_entry_evaluations=500)
    assert "outputs seen span" in str(e.value)


def test_walkers_outside_the_range_search_their_way_in(toy: LinearToy, exact):
    z, _ = exact
    hi = float(np.quantile(z, 0.001))  # a tail window random starts almost never hit
    bins = Bins(float(z.min()) - 1e-9, hi, 4)
    res = wang_landau(toy, V, L, bins, ln_f_final=0.05, check_every=20, seed=1)
    assert res.bins_reached >= 1 and res.stopped == "converged"
    for s in res.samples:
        if len(s):
            assert (toy(s) <= hi).all()


def test_bad_arguments(toy: LinearToy, window: Bins):
    with pytest.raises(GenmetricsError, match="needs grad_f"):
        wang_landau(toy, V, L, window, proposal="gradient")
    with pytest.raises(GenmetricsError, match="proposal must be"):
        wang_landau(toy, V, L, window, proposal="langevin")
    with pytest.raises(GenmetricsError, match="ln_f_final"):
        wang_landau(toy, V, L, window, ln_f_final=2.0)
    with pytest.raises(GenmetricsError, match="f returned 1 outputs for 8"):
        wang_landau(lambda t: np.zeros(1), V, L, window)
