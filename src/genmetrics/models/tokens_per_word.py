"""Tokens per word: measuring it on texts, and the table a run uses.

A model's word budget becomes ``max_new_tokens`` through its tokenizer family's row of
``resources/tokens_per_word.tsv`` (:func:`genmetrics.data.prompts.tokens_per_word`). This module
measures such a row on the user's own texts and adds a user's table to the shipped one
(the config's ``tokens_per_word_table``).

:func:`measure_tokens_per_word` counts, over all texts, the tokens of each whole text (no
special tokens) and its words, and returns tokens / words (sums, not a mean of ratios):

* ``words="whitespace"`` (default): the words genmetrics' budgets count
  (:func:`genmetrics.data.words.count_words`: whitespace words, jieba words for ``zh``);
* ``words="nltk"``: NLTK ``word_tokenize`` words (sentence split by punkt, then Treebank
  tokens: punctuation and clitics are words), as Le Bronnec et al. (2024) measured Table B.1
  (pr-4-llm ``pr_llm/data/average_tokens_per_words.py``: ``len(tokenizer.encode(text,
  add_special_tokens=False))`` and ``len(word_tokenize(text))`` summed over WebText train).
  More words than whitespace words, so a smaller ratio.

A row outside :data:`PLAUSIBLE` (0.5 to 20 tokens per word) is warned about by
:func:`implausible_rows`, naming the file, line and row: ``0.0001`` makes every budget one
token.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.data.prompts import load_tokens_per_word, max_new_tokens
from genmetrics.data.words import DEFAULT_LANGUAGE, check_language, count_words, uses_whitespace

WORD_KINDS = ("whitespace", "nltk")

#: punkt's name of each whitespace language (the punkt_tab data of genmetrics.data.assets has all)
NLTK_LANGUAGES = {
    "en": "english",
    "de": "german",
    "es": "spanish",
    "fr": "french",
    "it": "italian",
    "nl": "dutch",
    "pt": "portuguese",
    "ru": "russian",
}

#: tokens per word a real tokenizer gives: fewer than 0.5 is a token of more than two words on
#: average, more than 20 a word of more than 20 tokens (GPT-2's bytes on Chinese jieba words
#: give 4.5, a byte tokenizer on English about 6); outside, a row is a typo or a wrong unit
PLAUSIBLE = (0.5, 20.0)

#: a row name of the table: no whitespace, no leading '#' (a comment)
_ROW_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*(@[a-z]+)?\Z")


@dataclass(frozen=True)
class TokensPerWord:
    """A measured ratio with its counts."""

    tokens_per_word: float  # tokens / words
    tokens: int
    words: int
    texts: int
    words_kind: str  # whitespace | nltk
    language: str

    def describe_words(self) -> str:
        """What was counted as a word, for the table's ``measured_on`` column."""
        if self.words_kind == "nltk":
            return "NLTK word_tokenize words"
        return "whitespace words" if uses_whitespace(self.language) else "jieba words"


def count_tokens(tokenizer: Any, text: str) -> int:
    """Tokens of ``text`` without special tokens: a ``tiktoken.Encoding``
    (``encode_ordinary``) or a HF tokenizer (``encode(text, add_special_tokens=False)``)."""
    if hasattr(tokenizer, "encode_ordinary"):
        return len(tokenizer.encode_ordinary(text))
    return len(tokenizer.encode(text, add_special_tokens=False))


def _word_counter(words: str, language: str):
    if words == "whitespace":
        return lambda text: count_words(text, language)
    if language not in NLTK_LANGUAGES:
        raise GenmetricsError(
            f"words='nltk' counts words of a whitespace language ({', '.join(NLTK_LANGUAGES)}); "
            f"for {language!r} use words='whitespace' (genmetrics.data.words)"
        )
    from nltk.tokenize import word_tokenize

    from genmetrics.data.assets import use_nltk_data

    use_nltk_data()  # punkt_tab from a registry wheel: no network
    name = NLTK_LANGUAGES[language]
    return lambda text: len(word_tokenize(text, language=name))


def measure_tokens_per_word(
    tokenizer: Any,
    texts: Iterable[str],
    words: str = "whitespace",
    language: str = DEFAULT_LANGUAGE,
) -> TokensPerWord:
    """Tokens per word of ``tokenizer`` on ``texts``: sum of tokens / sum of words.

    ``words``: ``"whitespace"`` (the words of ``language`` that genmetrics' budgets count) or
    ``"nltk"`` (NLTK ``word_tokenize`` words, Le Bronnec et al.'s Table B.1). Tokens are those
    of each whole text without special tokens (:func:`count_tokens`).
    """
    if words not in WORD_KINDS:
        raise GenmetricsError(f"words must be one of {WORD_KINDS}, got {words!r}")
    language = check_language(language)
    if isinstance(texts, str):
        raise GenmetricsError("measure_tokens_per_word: expected a list of texts, got one string")
    count = _word_counter(words, language)
    n_texts = n_tokens = n_words = 0
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise GenmetricsError(f"text {i} is {type(text).__name__}, not str")
        n_texts += 1
        n_tokens += count_tokens(tokenizer, text)
        n_words += count(text)
    if n_words == 0:
        raise GenmetricsError(f"no words in {n_texts} text(s): nothing to measure")
    return TokensPerWord(n_tokens / n_words, n_tokens, n_words, n_texts, words, language)


def row_name(family: str, language: str = DEFAULT_LANGUAGE) -> str:
    """The table row of ``family`` in ``language``: ``family`` for whitespace languages (their
    rows are shared), ``family@zh`` for a language with a segmenter."""
    name = family if uses_whitespace(language) or "@" in family else f"{family}@{language}"
    if not _ROW_NAME.match(name):
        raise GenmetricsError(
            f"family {family!r}: a row name is letters, digits, '_', '.', '+', '-' (and "
            "'@<language>'), starting with a letter or digit"
        )
    return name


def format_row(name: str, m: TokensPerWord, source: str, tokenizer: str) -> str:
    """One line of the table (``name<TAB>value<TAB>measured_on``), without its newline."""
    note = (
        f"{source}: {m.texts:,} texts, {m.tokens:,} tokens ({tokenizer}, no special tokens) / "
        f"{m.words:,} {m.describe_words()} ({m.language}); genmetrics tokens-per-word"
    )
    return "\t".join([name, f"{m.tokens_per_word:.3f}", " ".join(note.split())])


def implausible_rows(path: str | Path, where: str | None = None) -> list[str]:
    """One warning per row of the table at ``path`` (read by
    :func:`genmetrics.data.prompts.load_tokens_per_word`, so well formed) whose value is outside
    :data:`PLAUSIBLE`, naming ``where`` (else the file), the line and the row, with the token
    budget it gives 50 words."""
    load_tokens_per_word(path)  # the format checked, with its errors
    lo, hi = PLAUSIBLE
    out = []
    with open(path, encoding="utf-8-sig", newline="") as f:  # as load_tokens_per_word reads it
        lines = list(f)
    for lineno, line in enumerate(lines[1:], start=2):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.rstrip("\r\n").split("\t")
        name, value = parts[0].strip(), float(parts[1])
        if not lo <= value <= hi:
            label = f"{where}: {path}" if where else str(path)
            out.append(
                f"warning: {label}: line {lineno}: row {name!r} says {value:g} tokens per word, "
                f"outside the plausible {lo:g} to {hi:g}: a 50-word budget becomes "
                f"{max_new_tokens(50, value)} token(s); check the row (a typo, or another unit?)"
            )
    return out


def with_user_table(
    shipped: Mapping[str, float], path: str | Path, where: str = "tokens_per_word_table"
) -> tuple[dict[str, float], list[str]]:
    """The shipped table plus the rows of the user's table at ``path`` (same format, read by
    :func:`genmetrics.data.prompts.load_tokens_per_word`); a user's row replaces a shipped row of
    the same name. Returns (table, notes: one line per replaced value, and a warning per
    row outside :data:`PLAUSIBLE`, :func:`implausible_rows`). Errors name ``where``."""
    try:
        user = load_tokens_per_word(path)
    except GenmetricsError as e:
        raise GenmetricsError(f"{where}: {e}") from None
    notes = [
        f"{where}: row {name!r} of {path} ({value:g}) replaces the shipped value {shipped[name]:g}"
        for name, value in user.items()
        if name in shipped and shipped[name] != value
    ]
    return {**shipped, **user}, notes + implausible_rows(path, where)
