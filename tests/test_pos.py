"""POS tagging (NLTK averaged perceptron, PTB tags) for CR: POS."""

from __future__ import annotations

import pytest
from shared_texts import shared_texts

from genmetrics import GenmetricsError
from genmetrics.features.pos import tag_texts


def test_whitespace_tags_equal_nltk_pos_tag_on_split():
    """diversity ≤ 0.1.22 convention: nltk.pos_tag(text.split())."""
    import nltk

    from genmetrics.data.assets import use_nltk_data

    use_nltk_data()
    texts = shared_texts("webtext/face_demo_human.jsonl", 25)
    ours = tag_texts(texts)
    assert ours == [[t for _, t in nltk.pos_tag(x.split())] for x in texts]
    assert [len(t) for t in ours] == [len(x.split()) for x in texts]


def test_nltk_tokenization_equals_word_tokenize():
    import nltk

    texts = shared_texts("gpt2_generations/gpt2-small_topk40.jsonl", 10)
    ours = tag_texts(texts, tokenization="nltk")
    ref = [[t for _, t in nltk.pos_tag(nltk.word_tokenize(x, preserve_line=True))] for x in texts]
    assert ours == ref


def test_known_tags_and_edge_cases():
    tags = tag_texts(["The cat sat on the mat .", "Café naïve 東京", "   ", "Hello, world!"])
    assert tags[0] == ["DT", "NN", "VBD", "IN", "DT", "NN", "."]
    assert len(tags[1]) == 3  # non-ASCII tokens are tagged, one tag per whitespace token
    assert tags[2] == []  # no tokens, no tags
    # whitespace tokens keep punctuation attached; the nltk tokenizer splits it off
    assert len(tags[3]) == 2
    assert len(tag_texts(["Hello, world!"], tokenization="nltk")[0]) == 4


def test_bad_arguments():
    with pytest.raises(GenmetricsError, match="one string"):
        tag_texts("a text")
    with pytest.raises(GenmetricsError, match="tokenization"):
        tag_texts(["a"], tokenization="spacy")
    with pytest.raises(GenmetricsError, match="tagger"):
        tag_texts(["a"], tagger="spacy")
    with pytest.raises(GenmetricsError, match="not str"):
        tag_texts(["a", 3])
