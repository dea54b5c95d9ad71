"""Homogenization (ROUGE-L and BERTScore) vs rouge_score / bert_score / the diversity package."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import torch_threads_after_numba
from shared_texts import shared_texts

from genmetrics import GenmetricsError
from genmetrics.metrics import compute
from genmetrics.metrics.homogenization import rouge_tokenize, rougel_pair_sums

ODD = [
    "Ça été très ÉTÉ naïve café",  # non-ASCII letters vanish in rouge_score's tokenizer
    "İstanbul is big; ıi",  # 'İ'.lower() = 'i' + combining dot → token 'i'
    "!!! ??? ...",  # no tokens at all → F = 0 against everything
    "running runs ran runner generously",
]


def _package_homogenization():
    from genmetrics.studies.shaib_diversity.runtime_scores import package_module

    # the module file alone: homogenization.py imports `evaluate` (bertscore/bleu only)
    mod = package_module("homogenization")
    if mod is None:
        pytest.skip("reference package `diversity` not installed")
    return mod.homogenization_score


@pytest.mark.parametrize("stem", [False, True])
def test_rougel_row_sums_equal_rouge_score(stem):
    from rouge_score import rouge_scorer

    texts = shared_texts("webtext/webtext_short.jsonl", 24) + shared_texts(
        "webtext/face_demo_human.jsonl", 4
    )
    texts += ODD
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=stem)
    assert rouge_tokenize(texts, stem) == [scorer._tokenizer.tokenize(t) for t in texts]
    n = len(texts)
    F = np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            F[i, j] = scorer.score(texts[j], texts[i])["rougeL"].fmeasure
            assert F[i, j] == scorer.score(texts[i], texts[j])["rougeL"].fmeasure  # symmetric
            F[j, i] = F[i, j]
    np.testing.assert_allclose(
        rougel_pair_sums(texts, stem, n_jobs=2), F.sum(1), rtol=0, atol=1e-12
    )
    np.testing.assert_allclose(
        rougel_pair_sums(texts, stem, n_jobs=1), F.sum(1), rtol=0, atol=1e-12
    )


def test_lcs_long_sequences_and_word_boundaries():
    """LCS across several 64-bit words (carries), repeated tokens, lengths 63/64/65/130."""
    from rouge_score import rouge_scorer

    rng = np.random.default_rng(0)
    vocab = [f"w{k}" for k in range(6)]
    texts = [" ".join(rng.choice(vocab, size=L)) for L in (1, 63, 64, 65, 130, 200, 7)]
    scorer = rouge_scorer.RougeScorer(["rougeL"])
    ref = [
        sum(scorer.score(b, a)["rougeL"].fmeasure for j, b in enumerate(texts) if j != i)
        for i, a in enumerate(texts)
    ]
    np.testing.assert_allclose(rougel_pair_sums(texts), ref, rtol=0, atol=1e-12)


def test_homogenization_equals_package():
    package = _package_homogenization()
    texts = shared_texts("webtext/webtext_short.jsonl", 40) + ODD
    ref = package(texts, verbose=False)
    as_package = {"tokenizer": "rouge_score", "zero_total": "package"}
    ours = compute("homogenization", texts, params=as_package).values["homogenization"]
    assert abs(ours - ref) <= 0.0005 + 1e-9
    rounded = compute("homogenization", texts, params={**as_package, "round": 3})
    assert rounded.values["homogenization"] == ref
    # unrounded value against the package's formula (sum of row means / n) at 1e-9
    from rouge_score import rouge_scorer

    sc = rouge_scorer.RougeScorer(["rougeL"])
    total = 0.0
    for i, r in enumerate(texts):
        total += sum(sc.score(p, r)["rougeL"].fmeasure for j, p in enumerate(texts) if j != i) / (
            len(texts) - 1
        )
    assert ours == pytest.approx(total / len(texts), abs=1e-9)


def test_zero_total_quirk_and_errors():
    package = _package_homogenization()
    disjoint = ["alpha beta", "gamma delta", "epsilon zeta"]
    assert package(disjoint, verbose=False) == 1.0  # the package's quirk
    quirk = compute("homogenization", disjoint, params={"zero_total": "package"})
    assert quirk.values["homogenization"] == 1.0
    assert compute("homogenization", disjoint).values["homogenization"] == 0.0
    same = compute("homogenization", ["a b c", "a b c", "a b c"]).values["homogenization"]
    assert same == 1.0
    half = compute("homogenization", ["a b", "a c"]).values["homogenization"]
    assert half == pytest.approx(0.5)  # LCS 1 of 2 tokens each way
    with pytest.raises(GenmetricsError, match="at least 2"):
        compute("homogenization", ["one text only"])
    with pytest.raises(GenmetricsError, match="measure"):
        compute("homogenization", ["a", "b"], params={"measure": "bleu"})


def test_empty_texts_equal_package():
    """Empty texts score 0 against every other text and count in the mean, as the package."""
    package = _package_homogenization()
    texts = shared_texts("webtext/webtext_short.jsonl", 10)
    texts = texts[:3] + [""] + texts[3:] + ["  ", ""]
    as_package = {"tokenizer": "rouge_score", "zero_total": "package"}
    ours = compute("homogenization", texts, params=as_package).values["homogenization"]
    ref = package(texts, verbose=False)
    assert round(ours, 3) == ref
    kept = [t for t in texts if t.strip()]
    full = compute("homogenization", kept, params=as_package).values["homogenization"]
    n, m = len(texts), len(kept)  # same pair sums, more pairs
    assert ours == pytest.approx(full * m * (m - 1) / (n * (n - 1)), abs=1e-12)
    assert package(["", ""], verbose=False) == 1.0  # no pair shares a word: the quirk
    empty = compute("homogenization", ["", ""], params=as_package)
    assert empty.values["homogenization"] == 1.0
    assert compute("homogenization", ["", ""]).values["homogenization"] == 0.0


@pytest.mark.slow
def test_bertscore_equals_bert_score_package_loop():
    """Our one-pass-per-text BERTScore equals the package loop (bert_score.score per reference,
    batches of hypotheses padded by bert_score) for the same model/layer, idf off."""
    bert_score = pytest.importorskip("bert_score")
    from genmetrics.data.assets import minilm_dir

    texts = shared_texts("webtext/webtext_short.jsonl", 5) + [
        "Short one.",
        "Café ünïcode 東京 text",
    ]
    model = str(minilm_dir())
    n = len(texts)
    scorer = bert_score.BERTScorer(model_type=model, num_layers=6)  # = evaluate's bertscore
    for batch_size in (64, 3):
        ref = 0.0
        for i in range(n):
            preds = [x for j, x in enumerate(texts) if j != i]
            _, _, F = scorer.score(preds, [texts[i]] * len(preds), batch_size=batch_size)
            ref += sum(F.tolist()) / (n - 1)
        ref /= n
        params = {"measure": "bertscore", "model": model, "num_layers": 6}
        ours = compute("homogenization", texts, params={**params, "batch_size": batch_size})
        assert ours.values["homogenization"] == pytest.approx(ref, abs=1e-6)
    plain = compute("homogenization", texts, params={"measure": "bertscore", "padding": "none"})
    assert 0 < plain.values["homogenization"] < 1


def test_non_ascii_texts_are_scored_by_default():
    """rouge_score's tokenizer drops every non-ASCII letter: Russian and Greek texts have no
    tokens and the package calls them fully homogeneous. The default tokenizer scores them."""
    package = _package_homogenization()
    distinct = ["Мама мыла раму", "Кошка спит на диване", "Καλημέρα κόσμε", "Ο ήλιος λάμπει"]
    assert package(distinct, verbose=False) == 1.0
    assert compute("homogenization", distinct).values["homogenization"] == 0.0
    same = ["Кошка спит на диване"] * 3
    assert compute("homogenization", same).values["homogenization"] == 1.0
    half = compute("homogenization", ["Кошка спит", "Кошка ест"]).values["homogenization"]
    assert half == pytest.approx(0.5)


def test_the_unicode_tokenizer_equals_rouge_score_on_ascii_text():
    texts = shared_texts("webtext/webtext_short.jsonl", 60) + ODD + ["snake_case x_1 A-B"]
    for stem in (False, True):
        ascii_texts = [t for t in texts if t.isascii()]
        assert rouge_tokenize(ascii_texts, stem, "unicode") == rouge_tokenize(ascii_texts, stem)
    assert rouge_tokenize(["Ça été naïve"], tokenizer="unicode") == [["ça", "été", "naïve"]]


@pytest.mark.parametrize("torch_first", [True, False])
def test_rougel_leaves_torch_s_threads_as_they_were(torch_first):
    """numba's omp layer sets OpenMP's thread count (shared with torch: one libgomp) when it
    launches the ROUGE-L kernel on 2 threads; a job on 1 thread keeps 1 for torch after it,
    whether torch was imported before the kernel ran or after."""
    code = ("import torch\n" if torch_first else "") + (
        "from genmetrics.metrics.homogenization import rougel_pair_sums\n"
        "rougel_pair_sums(['a b c d', 'a b d e', 'c d e f'], n_jobs=2)\n"
    )
    assert torch_threads_after_numba(code) == 1
