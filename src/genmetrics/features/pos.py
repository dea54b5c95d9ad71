"""Part-of-speech tags (Penn Treebank) per text, for the POS compression ratio (CR: POS).

The ``diversity`` package ≤ 0.1.22 (the era of Shaib et al.'s paper v1) tagged each text with
``nltk.pos_tag(text.split())`` — NLTK's averaged perceptron on whitespace tokens; that is the
default here (``tokenization="whitespace"``). ``tokenization="nltk"`` uses
``nltk.word_tokenize(text, preserve_line=True)`` (Treebank tokens, no sentence splitting).
Later package versions use spaCy ``en_core_web_sm`` ``token.tag_``; that model is not
obtainable offline, so it is not offered. Tagger data come from
:func:`genmetrics.data.assets.use_nltk_data` (registry wheels, no network at run time).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError

__all__ = ["tag_texts", "load_pos", "TOKENIZATIONS"]

TOKENIZATIONS = ("whitespace", "nltk")


def tag_texts(
    texts: Sequence[str], tagger: str = "nltk", tokenization: str = "whitespace"
) -> list[list[str]]:
    """PTB tags of each text: ``[[tag, ...], ...]`` (one list per text, one tag per token).

    A text with no tokens (empty or whitespace-only) gets an empty list.
    """
    if isinstance(texts, str):
        raise GenmetricsError("tag_texts: expected a list of texts, got one string")
    if tagger != "nltk":
        raise GenmetricsError(f"tag_texts: tagger must be 'nltk', got {tagger!r}")
    if tokenization not in TOKENIZATIONS:
        raise GenmetricsError(
            f"tag_texts: tokenization must be one of {TOKENIZATIONS}, got {tokenization!r}"
        )
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise GenmetricsError(f"tag_texts: item {i} is {type(t).__name__}, not str")

    from nltk.tag.perceptron import PerceptronTagger

    from genmetrics.data.assets import use_nltk_data

    use_nltk_data()
    tag = PerceptronTagger()  # loads the English averaged-perceptron model once

    if tokenization == "whitespace":
        tokenize = str.split
    else:
        from nltk.tokenize import word_tokenize

        def tokenize(text: str) -> list[str]:
            return word_tokenize(text, preserve_line=True)

    out: list[list[str]] = []
    for text in texts:
        toks = tokenize(text)
        out.append([t for _, t in tag.tag(toks)] if toks else [])
    return out


def load_pos(path: Path) -> tuple[list[list[str]], list[dict[str, Any]]]:
    """A loader of the ``pos`` input kind that also reads texts (for :meth:`Kind.load
    <genmetrics.metrics.kinds.Kind.load>`): a file of tags (``results/features/pos/…``) as it is
    (:func:`genmetrics.metrics.kinds.read_pos`), a file of texts (references, generations) tagged on
    load with :func:`tag_texts`' defaults, as the ``pos_tags`` feature rule does."""
    from genmetrics.io import read_texts
    from genmetrics.metrics.kinds import read_pos

    tagged = read_pos(path)
    if tagged is not None:
        return tagged
    rows = read_texts(path, allow_empty=True)
    return tag_texts([r["text"] for r in rows]), rows
