"""Words of a text, per language: the one definition behind every word count and word cut
(cleaning's ``min_words``/``max_words``/``truncate_words``, prompt prefixes, the
continuation's word budget, ``mean_words`` and length control).

* **Whitespace languages** (:data:`WHITESPACE_LANGUAGES`, ``en`` the default): a word is a
  maximal run of non-whitespace characters, ``text.split()``; punctuation attached to a word
  is part of it. These are the counts genmetrics always made (same numbers, bit for bit).
* **zh** (Chinese, no spaces between words): the text is segmented by jieba 0.42.1
  (``Tokenizer.lcut(text)``: jieba's default "accurate" mode, its default dictionary and
  ``HMM=True``, jieba's default, which joins characters the dictionary does not know into
  words). The tokens jieba returns cover the text exactly; a token is a **word** when it holds
  at least one letter or digit (``str.isalnum`` of some character: CJK ideographs, Latin
  letters, digits, full-width ones too), so punctuation and whitespace tokens are not words.

Segmentation is deterministic: genmetrics uses its own jieba tokenizer (words other code adds
to jieba's global dictionary do not change it), built once per process from the packaged
dictionary (about 0.7 s) without jieba's cache file (no file is written, none is read), and
without jieba's log lines. jieba is imported only for a language that needs it.

:func:`truncate_words` keeps the original characters of the text up to the end of the
``n``-th word (what follows, punctuation included, is dropped); a text of at most ``n`` words
is returned unchanged.

Other languages written without spaces (Japanese, Thai, ...) have no segmenter here: a
``language`` outside :data:`LANGUAGES` is an error naming its config key. Token-level metrics
(surprisal, FACE, perplexity) count tokenizer tokens and need no words.
"""

from __future__ import annotations

import re
import threading
from typing import Any

from genmetrics import GenmetricsError

DEFAULT_LANGUAGE = "en"
#: languages whose words are separated by whitespace (all counted the same way)
WHITESPACE_LANGUAGES = ("en", "de", "es", "fr", "it", "nl", "pt", "ru")
#: languages with a word segmenter: language -> the segmenter's name
SEGMENTERS = {"zh": "jieba"}
LANGUAGES = (*WHITESPACE_LANGUAGES, *SEGMENTERS)

_NON_SPACE = re.compile(r"\S+")
_JIEBA_LOCK = threading.Lock()
_jieba: Any = None  # genmetrics' own jieba.Tokenizer, built on first use


def check_language(language: Any, where: str = "language") -> str:
    """``language`` if genmetrics can count its words, else an error naming ``where``."""
    if language in LANGUAGES:
        return language
    raise GenmetricsError(
        f"{where}: {language!r} is not a supported language; whitespace words for "
        f"{', '.join(WHITESPACE_LANGUAGES)}; "
        + ", ".join(f"{lang} words by {seg}" for lang, seg in SEGMENTERS.items())
        + " (a language written without spaces needs a word segmenter: docs/workflow.md, Languages)"
    )


def uses_whitespace(language: str) -> bool:
    """Whether ``language``'s words are whitespace words (the default behaviour)."""
    return check_language(language) in WHITESPACE_LANGUAGES


def word_spans(text: str, language: str = DEFAULT_LANGUAGE) -> list[tuple[int, int]]:
    """``(start, end)`` character offsets of the words of ``text``, in order."""
    if uses_whitespace(language):
        return [m.span() for m in _NON_SPACE.finditer(text)]
    spans = []
    pos = 0
    for token in _segmenter().lcut(text):
        end = pos + len(token)
        if any(c.isalnum() for c in token):
            spans.append((pos, end))
        pos = end
    if pos != len(text):  # jieba's tokens always cover the text; never silently miscount
        raise GenmetricsError(f"jieba: the tokens of a text do not cover it ({text[:40]!r})")
    return spans


def count_words(text: str, language: str = DEFAULT_LANGUAGE) -> int:
    """Number of words of ``text`` (whitespace languages: ``len(text.split())``)."""
    if uses_whitespace(language):
        return len(text.split())
    return len(word_spans(text, language))


def truncate_words(text: str, n: int, language: str = DEFAULT_LANGUAGE) -> str:
    """The first ``n`` words of ``text`` with the original characters between them (``""`` if
    n ≤ 0; the whole text if it has at most ``n`` words)."""
    if n <= 0:
        return ""
    if uses_whitespace(language):
        words = list(_NON_SPACE.finditer(text))
        if len(words) <= n:
            return text
        return text[: words[n - 1].end()]
    spans = word_spans(text, language)
    if len(spans) <= n:
        return text
    return text[: spans[n - 1][1]]


def _segmenter() -> Any:
    """genmetrics' jieba tokenizer (default dictionary), built once per process."""
    global _jieba
    with _JIEBA_LOCK:
        if _jieba is None:
            _jieba = _build_jieba()
        return _jieba


def _build_jieba() -> Any:
    import logging
    import warnings

    try:
        with warnings.catch_warnings():  # jieba 0.42.1 imports pkg_resources (deprecated)
            warnings.simplefilter("ignore")
            import jieba
    except ImportError:
        raise GenmetricsError(
            "language zh needs jieba: pip install 'genmetrics[text]' (or jieba==0.42.1)"
        ) from None
    jieba.setLogLevel(logging.WARNING)
    tokenizer = jieba.Tokenizer()
    # what Tokenizer.initialize does, without its cache file (a marshal file in the temp
    # folder, read back by any later process) and without its log lines
    tokenizer.FREQ, tokenizer.total = tokenizer.gen_pfdict(tokenizer.get_dict_file())
    tokenizer.initialized = True
    return tokenizer
