"""Vectorized Self-BLEU vs the nltk sentence_bleu loop (pr-4-llm / degen convention)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
from shared_texts import shared_texts

from genmetrics import GenmetricsError
from genmetrics.metrics import compute
from genmetrics.metrics._ngrams import tokenize
from genmetrics.metrics.self_bleu import sample_indices, self_bleu_scores

SMOOTH = SmoothingFunction().method1


def _nltk(docs, i, n):
    return sentence_bleu(
        docs[:i] + docs[i + 1 :], docs[i], weights=(1.0 / n,) * n, smoothing_function=SMOOTH
    )


@pytest.mark.parametrize("tokenizer", ["whitespace", "gpt2"])
@pytest.mark.parametrize(
    "rel,n_texts", [("webtext/webtext_short.jsonl", 120), ("webtext/face_demo_human.jsonl", 25)]
)
def test_per_hypothesis_equals_nltk(tokenizer, rel, n_texts):
    texts = shared_texts(rel, n_texts)
    docs = tokenize(texts, tokenizer)
    for n in (4, 2):
        ref = np.array([_nltk(docs, i, n) for i in range(len(docs))])
        np.testing.assert_allclose(self_bleu_scores(docs, n), ref, rtol=0, atol=1e-9)


def test_edge_cases_equal_nltk():
    """Duplicates (clipping against the 2nd-largest count), texts shorter than n (zero counts,
    denominator 1), length ties in the brevity penalty, hypotheses with no matching unigram."""
    docs = [
        ["a", "b"],
        ["a", "b"],
        ["c"],
        ["a", "b", "c", "d", "a", "b"],
        ["d"],
        ["x", "y", "z", "w", "q"],
        ["b", "a", "b", "a"],
        ["zz"],
    ]
    for n in (1, 2, 3, 4, 5):
        ref = np.array([_nltk(docs, i, n) for i in range(len(docs))])
        np.testing.assert_allclose(self_bleu_scores(docs, n), ref, rtol=0, atol=1e-12)
    assert self_bleu_scores(docs, 4)[-1] == 0.0  # no unigram match → nltk returns 0


def test_sampling_reproduces_pr4llm():
    texts = shared_texts("webtext/webtext_short.jsonl", 100)
    idx = random.Random(12345).sample(range(100), int(0.2 * 100))
    assert sample_indices(100, 0.2, 12345) == idx
    docs = tokenize(texts, "gpt2")
    expected = sum(_nltk(docs, i, 4) for i in idx) / len(idx)
    out = compute("self_bleu", texts, params={"tokenizer": "gpt2", "sample": 0.2})
    assert out.values["self_bleu"] == pytest.approx(expected, abs=1e-9)
    assert out.n == {"candidate": 100, "hypotheses": 20}
    assert list(out.extras["hypotheses"]) == idx
    # an int sample size and another seed
    out = compute("self_bleu", texts, params={"sample": 7, "seed": 3})
    idx = random.Random(3).sample(range(100), 7)
    docs = tokenize(texts, "whitespace")
    assert out.values["self_bleu"] == pytest.approx(
        np.mean([_nltk(docs, i, 4) for i in idx]), abs=1e-9
    )


def test_orderings_and_non_ascii():
    same = compute("self_bleu", ["the cat sat on the mat today"] * 3).values["self_bleu"]
    assert same == pytest.approx(1.0)
    texts = shared_texts("webtext/webtext_short.jsonl", 60)
    diverse = compute("self_bleu", texts).values["self_bleu"]
    assert 0 < diverse < 0.2
    uni = ["Café über naïve straße", "東京 は 大きい 都市 です", "Café über straße naïve"]
    docs = tokenize(uni, "whitespace")
    ref = np.mean([_nltk(docs, i, 4) for i in range(3)])
    assert compute("self_bleu", uni).values["self_bleu"] == pytest.approx(ref, abs=1e-12)
    ids = tokenize(uni, "gpt2")
    assert compute("self_bleu", uni, params={"tokenizer": "gpt2"}).values[
        "self_bleu"
    ] == pytest.approx(np.mean([_nltk(ids, i, 4) for i in range(3)]), abs=1e-12)


@pytest.mark.parametrize("tokenizer", ["whitespace", "gpt2"])
def test_empty_texts_equal_nltk(tokenizer):
    """An empty text scores 0 as a hypothesis and is a length-0 reference for the others (its
    length can be the closest one in the brevity penalty), as in nltk's sentence_bleu."""
    texts = shared_texts("webtext/webtext_short.jsonl", 20)
    texts = ["", "a", "a b c"] + texts[:8] + ["   ", "the the the"] + texts[8:]
    docs = tokenize(texts, tokenizer)
    for n in (4, 2, 1):
        ref = np.array([_nltk(docs, i, n) for i in range(len(docs))])
        np.testing.assert_allclose(self_bleu_scores(docs, n), ref, rtol=0, atol=1e-12)
    out = compute("self_bleu", texts, params={"tokenizer": tokenizer})
    assert out.values["self_bleu"] == pytest.approx(
        np.mean([_nltk(docs, i, 4) for i in range(len(docs))]), abs=1e-12
    )
    assert out.extras["per_hypothesis"][0] == 0.0


def test_bad_input():
    with pytest.raises(GenmetricsError, match="at least 2"):
        compute("self_bleu", ["only one text"])
    with pytest.raises(GenmetricsError, match="selects no hypothesis"):
        compute("self_bleu", ["a b", "c d"], params={"sample": 0.2})
    with pytest.raises(GenmetricsError, match="tokenizer"):
        compute("self_bleu", ["a b", "c d"], params={"tokenizer": "bpe"})
    with pytest.raises(GenmetricsError, match="smoothing"):
        compute("self_bleu", ["a b", "c d"], params={"smoothing": "method4"})
    with pytest.raises(GenmetricsError, match="unknown parameter"):
        compute("self_bleu", ["a b", "c d"], params={"weights": [1]})
