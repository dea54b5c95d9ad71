"""The Vendi Score (``vendi`` on embeddings, ``ngram_vendi`` on texts): hand-computed cases,
the dual form, and the ``vendi-score`` 0.0.3 package (an oracle: ``pip install --no-deps
vendi-score==0.0.3``; its ``score_X`` ignores q, which a test shows)."""

from __future__ import annotations

import math
import types
import warnings

import numpy as np
import pytest
import scipy.sparse
from shared_texts import shared_texts

from genmetrics import GenmetricsError
from genmetrics.metrics import compute
from genmetrics.metrics.vendi import ngram_features, score_kernel

ORDERS = [0.5, 1, 2, "inf"]


def _package():
    """vendi_score.vendi (numpy, scipy, scikit-learn only)."""
    return pytest.importorskip("vendi_score.vendi", reason="pip install --no-deps vendi-score")


class _CsrWithA(scipy.sparse.csr_matrix):
    """A CSR matrix with ``.A`` (= ``toarray()``), which SciPy 1.14 removed and the
    package's ``ngram_vendi_score`` still calls; products of two keep the class."""

    @property
    def A(self) -> np.ndarray:  # noqa: N802 (SciPy's old name)
        return self.toarray()


def _package_text_utils():
    """vendi_score/text_utils.py loaded alone (a private copy): it imports datasets, torch and
    transformers for functions the n-gram kernel never calls, so stand-ins take their place
    while it loads; its ``normalize`` returns a matrix that still has SciPy's ``.A``."""
    from sklearn.preprocessing import normalize

    from genmetrics.studies.shaib_diversity.runtime_scores import package_module

    _package()
    stand_ins = {
        "datasets": types.SimpleNamespace(),
        "torch": types.SimpleNamespace(),
        "transformers": types.SimpleNamespace(AutoModel=None, AutoTokenizer=None),
    }
    mod = package_module("text_utils", package="vendi_score", stand_ins=stand_ins)
    mod.normalize = lambda x: _CsrWithA(normalize(x))
    return mod


def _quiet(fn, *args, **kwargs):
    """Call a package function without its warnings (scipy.sparse.csr is deprecated, sklearn
    notes that token_pattern is unused with a tokenizer)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=1, keepdims=True)


# ------------------------------------------------------------------ hand-computed


# u1, u2 at 60° (cosine 1/2), u3 orthogonal to both: K = [[1, ½, 0], [½, 1, 0], [0, 0, 1]].
# The block [[1, ½], [½, 1]] has eigenvalues 3/2 and 1/2, the last row 1, so K/3 has
# eigenvalues 1/2, 1/6, 1/3 (they sum to 1).
HAND = np.array([[1.0, 0.0, 0.0], [0.5, math.sqrt(3) / 2, 0.0], [0.0, 0.0, 1.0]])
HAND_K = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 1.0]])
SHANNON = -(0.5 * math.log(0.5) + math.log(1 / 6) / 6 + math.log(1 / 3) / 3)  # 1.0114 nats
HAND_VS = {
    1: math.exp(SHANNON),  # 2.7495
    2: 1 / (1 / 4 + 1 / 36 + 1 / 9),  # 1 / Σλ² = 18/7
    "inf": 2.0,  # 1 / max λ
    0.5: (math.sqrt(1 / 2) + math.sqrt(1 / 6) + math.sqrt(1 / 3)) ** 2,  # (Σ√λ)^(1/(1−½))
}


@pytest.mark.parametrize("q", ORDERS)
def test_vendi_of_a_hand_computed_3x3_kernel(q):
    assert np.allclose(HAND @ HAND.T, HAND_K)
    rows = HAND * np.array([[2.0], [0.3], [7.0]])  # the cosine ignores the rows' norms
    got = compute("vendi", rows, params={"q": q})
    assert got.values["vendi"] == pytest.approx(HAND_VS[q], rel=1e-12)
    assert score_kernel(HAND_K, q) == pytest.approx(HAND_VS[q], rel=1e-12)


def test_q1_is_the_exponential_of_the_shannon_entropy_of_the_normalised_eigenvalues():
    assert HAND_VS[1] == pytest.approx(2.749459, abs=1e-6)  # exp(1.011404)
    assert compute("vendi", HAND).values["vendi"] == pytest.approx(math.exp(SHANNON), rel=1e-12)


def test_identical_items_count_once_and_orthogonal_items_count_each():
    same = np.tile([[0.3, -1.2, 2.0]], (40, 1))
    for q in ORDERS:
        assert compute("vendi", same, params={"q": q}).values["vendi"] == pytest.approx(1.0)
        assert compute("vendi", np.eye(7), params={"q": q}).values["vendi"] == pytest.approx(7)


def test_vendi_does_not_increase_with_the_order():
    x = np.random.default_rng(3).normal(size=(60, 10)) + np.array([2.0] + [0.0] * 9)
    vs = [compute("vendi", x, params={"q": q}).values["vendi"] for q in (0.5, 1, 2, "inf")]
    assert all(a > b for a, b in zip(vs[:-1], vs[1:], strict=True)), vs


def test_a_zero_embedding_has_no_cosine_and_is_an_error():
    x = np.ones((5, 3))
    x[2] = 0.0
    with pytest.raises(GenmetricsError, match=r"1 row\(s\) of zeros .* first rows \[2\]"):
        compute("vendi", x)


def test_order_parameter_accepts_numbers_and_inf_only():
    assert (
        compute("vendi", HAND, params={"q": "2"}).values
        == compute("vendi", HAND, params={"q": 2}).values
    )
    for bad in (0, -1, "infinity", float("inf")):
        with pytest.raises(GenmetricsError, match=r"vendi params\.q: must be a number > 0 or"):
            compute("vendi", HAND, params={"q": bad})


# ------------------------------------------------------------------ the dual form


@pytest.mark.parametrize("q", ORDERS)
def test_dual_form_equals_the_kernel_form_and_the_package(q):
    vendi = _package()
    x = np.random.default_rng(0).normal(size=(120, 9)) + 0.8  # d < n: the dual form
    got = compute("vendi", x, params={"q": q})
    assert got.extras["form"] == "dual" and got.extras["rank"] == 9
    u = _unit(x)
    k = u @ u.T
    ours_kernel = score_kernel(k, q)  # the n × n kernel's eigenvalues
    theirs_k = _quiet(vendi.score_K, k, q=q)
    theirs_dual = _quiet(vendi.score_dual, x, q=q)
    # the package keeps the positive ones of the 111 rounding-noise eigenvalues of K/n (about
    # 1e-17 each); under q = 0.5 their square roots move the score by 1.3e-7 relatively here.
    # Every other order agrees to 1e-10
    rel = 1e-6 if q == 0.5 else 1e-10
    assert got.values["vendi"] == pytest.approx(ours_kernel, rel=1e-10)
    assert got.values["vendi"] == pytest.approx(theirs_k, rel=rel)
    assert got.values["vendi"] == pytest.approx(theirs_dual, rel=1e-10)


def test_kernel_form_when_there_are_fewer_items_than_dimensions():
    vendi = _package()
    x = np.random.default_rng(1).normal(size=(12, 40))
    got = compute("vendi", x, params={"q": 2})
    assert got.extras["form"] == "kernel"
    assert got.values["vendi"] == pytest.approx(_quiet(vendi.score_dual, x, q=2), rel=1e-10)


def test_package_score_x_ignores_q_and_ours_does_not():
    """vendi-score 0.0.3's score_X calls score_K(K, q=1): every q gives the q = 1 score. Ours
    (any form) honours q and equals the package's score_K(K, q) on the same kernel."""
    vendi = _package()
    x = np.random.default_rng(2).normal(size=(30, 50))  # n < d: the package's score_X path
    k = _unit(x) @ _unit(x).T
    ours = {q: compute("vendi", x, params={"q": q}).values["vendi"] for q in ORDERS}
    for q in (0.5, 2, "inf"):
        assert _quiet(vendi.score_X, x, q=q) == _quiet(vendi.score_X, x, q=1)  # q ignored
        assert abs(ours[q] - ours[1]) > 0.01 * ours[1]  # the orders differ here
        assert ours[q] == pytest.approx(_quiet(vendi.score_K, k, q=q), rel=1e-7)
    assert ours[1] == pytest.approx(_quiet(vendi.score_X, x, q=1), rel=1e-10)


# ------------------------------------------------------------------ the n-gram kernel


def _package_ngram_kernel(text_utils, texts: list[str], ns=(1, 2, 3, 4)) -> np.ndarray:
    """The kernel of the package's ngram_vendi_score, built by its own functions."""
    from sklearn.preprocessing import normalize

    ks = []
    for n in ns:
        x = normalize(_quiet(text_utils.get_ngrams, texts, n=n, tokenizer=str.split))
        ks.append((x @ x.T).toarray())
    return np.stack(ks).mean(axis=0)


def test_ngram_vendi_equals_the_package_on_real_texts():
    text_utils = _package_text_utils()
    texts = shared_texts("webtext/webtext_short.jsonl", 80)
    assert min(len(t.split()) for t in texts) >= 4  # the package's kernel has K_ii = 1 here
    theirs = _quiet(text_utils.ngram_vendi_score, texts, tokenizer=str.split)
    assert compute("ngram_vendi", texts).values["vendi"] == pytest.approx(theirs, rel=1e-10)
    k = _package_ngram_kernel(text_utils, texts)
    phi = ngram_features(texts, 4)
    assert np.allclose((phi @ phi.T).toarray(), k, atol=1e-12)
    vendi = _package()
    for q in (0.5, 2, "inf"):
        got = compute("ngram_vendi", texts, params={"q": q}).values["vendi"]
        assert got == pytest.approx(_quiet(vendi.score_K, k, q=q), rel=1e-7)


def test_ngram_vendi_equals_the_package_for_other_orders():
    text_utils = _package_text_utils()
    texts = shared_texts("gpt2_generations/gpt2-small_topk40.jsonl", 50)
    vendi = _package()
    for num_n in (1, 2):
        k = _package_ngram_kernel(text_utils, texts, ns=range(1, num_n + 1))
        got = compute("ngram_vendi", texts, params={"num_n": num_n}).values["vendi"]
        assert got == pytest.approx(_quiet(vendi.score_K, k, q=1), rel=1e-10)


def test_a_text_without_an_ngram_of_some_order_is_its_whole_token_sequence():
    """["a b", "a b", "c"], n = 1, 2: "c" has no bigram. Ours: "c" is its own bigram, so
    K = [[1, 1, 0], [1, 1, 0], [0, 0, 1]], eigenvalues of K/3 = 2/3, 1/3. The package gives
    "c" a zero bigram vector: K_33 = (1 + 0)/2 = 1/2, eigenvalues 2/3, 1/6 (sum 5/6)."""
    text_utils = _package_text_utils()
    texts = ["a b", "a b", "c"]
    ours = math.exp(-(2 / 3 * math.log(2 / 3) + 1 / 3 * math.log(1 / 3)))  # 1.8899
    theirs = math.exp(-(2 / 3 * math.log(2 / 3) + 1 / 6 * math.log(1 / 6)))  # 1.7662
    got = compute("ngram_vendi", texts, params={"num_n": 2}).values["vendi"]
    assert got == pytest.approx(ours, rel=1e-12)
    k = _package_ngram_kernel(text_utils, texts, ns=(1, 2))
    assert k[2, 2] == 0.5
    assert _quiet(_package().score_K, k) == pytest.approx(theirs, rel=1e-12)
    # empty texts are identical to each other and unlike any other text
    assert compute("ngram_vendi", ["", "", "x y"]).values["vendi"] == pytest.approx(ours)
    # two different short texts are different at every order
    assert compute("ngram_vendi", ["a", "b"]).values["vendi"] == pytest.approx(2.0)


def test_ngram_kernel_has_a_unit_diagonal_and_repeats_count_once():
    texts = ["the cat sat", "", "the cat sat", "a dog", "the cat sat on the mat today"]
    phi = ngram_features(texts, 4)
    k = (phi @ phi.T).toarray()
    assert np.allclose(np.diag(k), 1.0) and k[0, 2] == pytest.approx(1.0)
    # "the cat sat" against the long text ("the" twice: unigram norm √(4 + 5) = 3):
    # unigrams 4 / (√3 · 3); bigrams 2 / (√2 · √6); trigrams 1 / (1 · √5); 4-grams: the
    # short text has none, so it is its own token sequence there → 0
    want = (4 / (3 * math.sqrt(3)) + 2 / math.sqrt(12) + 1 / math.sqrt(5) + 0) / 4
    assert k[0, 4] == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("q", [700, 1000])
def test_a_large_finite_order_is_the_extended_precision_value_between_vs_inf_and_vs_2(q):
    """Σ λ_i^q underflows to 0 in float64 at these orders (λ_max ≈ 0.06 and 0.13; the plain
    sum gave VS = ∞); taken in log space VS_q is finite and equals exp(log(Σ λ_i^q) / (1 − q)) in mpmath (50 digits) on the
    same eigenvalues within 1e-9 relative, between VS_∞ and VS_2. Embeddings: 200 seeded
    Gaussian rows in 40 dimensions; texts: the n-gram kernel of 120 WebText documents."""
    mpmath = pytest.importorskip("mpmath")
    from genmetrics.metrics._kernels import gram_eigenvalues, unit_rows

    x = np.random.default_rng(11).normal(size=(200, 40))
    texts = shared_texts("webtext/face_demo_human.jsonl", 120)
    for name, data, phi in (
        ("vendi", x, unit_rows(x)),
        ("ngram_vendi", texts, ngram_features(texts, 4)),
    ):
        lam, _ = gram_eigenvalues(phi)
        assert float(lam.max()) ** q == 0.0  # the plain sum underflows
        with mpmath.workdps(50):
            total = mpmath.fsum(mpmath.mpf(float(v)) ** q for v in lam)
            want = float(mpmath.exp(mpmath.log(total) / (1 - q)))
        got = compute(name, data, params={"q": q}).values["vendi"]
        assert got == pytest.approx(want, rel=1e-9), name
        vs_inf = compute(name, data, params={"q": "inf"}).values["vendi"]
        vs_2 = compute(name, data, params={"q": 2}).values["vendi"]
        assert vs_inf <= got <= vs_2, (name, vs_inf, got, vs_2)
