"""Feature-cache entries of the wrong shape: an entry that is not a vector of floats is
recomputed (a warning names it); an embedding of another length than the others is an error
naming the entry, not numpy's stacking error."""

from __future__ import annotations

import logging

import numpy as np
import pytest
from conftest import build_model, build_tokenizer

from genmetrics import GenmetricsError
from genmetrics.features.cache import FeatureCache, cached_map
from genmetrics.features.embed import embed_texts
from genmetrics.features.surprisal import surprisal_texts

TEXTS = ["the cat sat on the mat .", "a dog ran", "quickly"]


def _entries(root):
    return sorted(root.rglob("*.npy"))


@pytest.fixture
def tiny():
    tok = build_tokenizer()
    return build_model(len(tok)), tok


def test_an_embedding_of_another_length_is_an_error_naming_the_entry(tmp_path, tiny):
    first = embed_texts(TEXTS, tiny, cache_dir=tmp_path, cache_key="tiny")
    entries = _entries(tmp_path)
    assert len(entries) == 3
    np.save(entries[1], np.zeros(first.shape[1] + 3, np.float32))
    with pytest.raises(GenmetricsError, match=rf"entry {entries[1]} has shape \(\d+,\)"):
        embed_texts(TEXTS, tiny, cache_dir=tmp_path, cache_key="tiny")


@pytest.mark.parametrize(
    "bad",
    [
        lambda v: v[None, :],  # a matrix of one row
        lambda v: np.asarray(v[0]),  # a scalar
        lambda v: (v * 100).astype(np.int64),  # integers
    ],
    ids=["2-d", "0-d", "int"],
)
def test_an_entry_that_is_no_float_vector_is_recomputed(tmp_path, tiny, caplog, bad):
    first = embed_texts(TEXTS, tiny, cache_dir=tmp_path, cache_key="tiny")
    entry = _entries(tmp_path)[0]
    np.save(entry, bad(np.load(entry)))
    with caplog.at_level(logging.WARNING, logger="genmetrics"):
        again = embed_texts(TEXTS, tiny, cache_dir=tmp_path, cache_key="tiny")
    np.testing.assert_allclose(again, first, rtol=0, atol=1e-6)
    assert str(entry) in caplog.text and "recomputed" in caplog.text
    assert np.load(entry).ndim == 1  # rewritten


def test_a_surprisal_entry_of_two_dimensions_is_recomputed(tmp_path, tiny):
    first = surprisal_texts(TEXTS, tiny, cache_dir=tmp_path, cache_key="tiny")
    for entry in _entries(tmp_path):
        np.save(entry, np.load(entry)[None, :])
    again = surprisal_texts(TEXTS, tiny, cache_dir=tmp_path, cache_key="tiny")
    for a, b in zip(first, again, strict=True):
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)


def test_cached_map_same_shape_trusts_the_computed_arrays(tmp_path):
    """With one text computed, the computed array's shape is the right one: the odd entry is
    the cached one even where it is the most common shape."""
    cache = FeatureCache(tmp_path, {"k": 1})
    for t in ("a", "b"):
        cache.put(t, np.zeros(2, np.float32))
    calls = []

    def compute(texts):
        calls.append(list(texts))
        return [np.zeros(4, np.float32) for _ in texts]

    with pytest.raises(GenmetricsError, match=r"has shape \(2,\), the other .* \(4,\)"):
        cached_map(["a", "b", "c"], compute, cache, chunk=1, same_shape=True)
    assert calls == [["c"]]
    # variable lengths (surprisal) are fine without same_shape
    out, computed = cached_map(["a", "b", "c"], compute, cache, chunk=1)
    assert [len(v) for v in out] == [2, 2, 4] and computed == 0
