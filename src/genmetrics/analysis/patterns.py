"""Repeated patterns of a source's texts: the most repeated exact word n-grams and the most
repeated part-of-speech n-grams, with example strings (Shaib et al. (2024), "Standardizing the
Measurement of Text Diversity", Tables 1 and 10; the ``diversity`` package's
``extract_patterns``).

* :func:`repeated_ngrams` — exact n-grams of whitespace words (``text.split()``, the words of
  the package's ``token_patterns`` and of its ≤ 0.1.22 tagger), case kept unless
  ``lowercase``: per n-gram, ``count`` (occurrences over all texts, repeats inside one text
  included) and ``texts`` (texts that contain it at least once).
* :func:`repeated_pos_patterns` — n-grams of POS tags given one per whitespace word (the
  workflow's ``pos`` features, :func:`genmetrics.features.pos.tag_texts`), the same counts,
  and the most frequent surface strings realising each pattern, with their counts.
* :func:`patterns_table` — both, for the sources of one dataset, as a tidy table;
  :func:`patterns_markdown` — its Table-1/Table-10 layout (per source, its top patterns);
  :func:`patterns_files` — the workflow job (rule ``repeated_patterns``) on result files.

Conventions. An n-gram never crosses a text's end; with ``sentences=True`` (the default, as
``extract_patterns`` splits its corpus with NLTK punkt) it never crosses a sentence either: a
word belongs to the punkt sentence (``PunktTokenizer("english").span_tokenize``) where it
starts. Only n-grams occurring at least ``min_count`` (2) times are kept; rows are ordered by
``count`` descending, then the n-gram's text ascending, so ties are deterministic.

Where the package differs: ``extract_patterns`` sentence-splits ``" ".join(texts)`` (a text
without final punctuation runs into the next one), tags with spaCy ``en_core_web_sm`` (≥ 0.2.0;
not obtainable offline; NLTK's perceptron on whitespace words here, the ≤ 0.1.22 tagger),
splits on single spaces (``split(" ")``, empty tokens possible), keeps the top ``top_n``
patterns without a minimum count, breaks ties by first occurrence, and returns every surface
string of a pattern as an unordered set without counts.
"""

from __future__ import annotations

import bisect
import functools
import json
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from genmetrics import GenmetricsError

__all__ = [
    "Repeated",
    "repeated_ngrams",
    "repeated_pos_patterns",
    "sentence_ids",
    "patterns_table",
    "patterns_markdown",
    "patterns_files",
    "TABLE_COLUMNS",
]

TABLE_COLUMNS = ["source", "kind", "n", "rank", "pattern", "count", "texts", "examples"]
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Repeated:
    """One repeated pattern: its words or tags joined by single spaces, its occurrences, the
    number of texts containing it, and (POS patterns) ``(surface string, count)`` examples."""

    pattern: str
    count: int
    texts: int
    examples: tuple[tuple[str, int], ...] = ()


@functools.cache
def _punkt() -> Any:
    """NLTK's English punkt model, loaded once (offline data from
    :func:`genmetrics.data.assets.use_nltk_data`)."""
    from nltk.tokenize import PunktTokenizer

    from genmetrics.data.assets import use_nltk_data

    use_nltk_data()
    return PunktTokenizer("english")


def sentence_ids(text: str) -> list[int]:
    """The punkt sentence (0, 1, ...) of each whitespace word of ``text``: the sentence whose
    span holds the word's first character (NLTK ``PunktTokenizer("english")``, the model
    ``nltk.sent_tokenize`` uses)."""
    starts = [s for s, _ in _punkt().span_tokenize(text)]
    return [max(bisect.bisect_right(starts, m.start()) - 1, 0) for m in _WORD.finditer(text)]


def _check_texts(texts: Sequence[str], what: str) -> None:
    if isinstance(texts, str):
        raise GenmetricsError(f"{what}: expected a list of texts, got one string")
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise GenmetricsError(f"{what}: item {i} is {type(t).__name__}, not str")


def _check_sizes(n: int, top: int | None, min_count: int, what: str) -> None:
    if not isinstance(n, int) or n < 1:
        raise GenmetricsError(f"{what}: n must be an integer ≥ 1, got {n!r}")
    if top is not None and (not isinstance(top, int) or top < 1):
        raise GenmetricsError(f"{what}: top must be an integer ≥ 1 or None, got {top!r}")
    if not isinstance(min_count, int) or min_count < 1:
        raise GenmetricsError(f"{what}: min_count must be an integer ≥ 1, got {min_count!r}")


def _starts(length: int, n: int, segments: Sequence[int] | None) -> range | list[int]:
    """Start positions of the n-grams of a sequence that stay inside one segment (segment ids
    never decrease along a text, so the first and last word's ids decide)."""
    if segments is None:
        return range(length - n + 1)
    return [i for i in range(length - n + 1) if segments[i] == segments[i + n - 1]]


def _ranked(
    counts: Counter, texts: Counter, top: int | None, min_count: int
) -> list[tuple[str, int, int]]:
    rows = sorted(
        ((p, c, texts[p]) for p, c in counts.items() if c >= min_count),
        key=lambda r: (-r[1], r[0]),
    )
    return rows if top is None else rows[:top]


def repeated_ngrams(
    texts: Sequence[str],
    n: int,
    top: int | None = 10,
    *,
    lowercase: bool = False,
    sentences: bool = True,
    min_count: int = 2,
) -> list[Repeated]:
    """The ``top`` most repeated exact ``n``-grams of whitespace words over ``texts``.

    ``count``: occurrences over all texts (an n-gram twice in one text counts 2); ``texts``:
    texts containing it. N-grams with fewer than ``min_count`` occurrences are left out; a
    text shorter than ``n`` words contributes nothing. ``top=None``: every repeated n-gram.
    """
    _check_texts(texts, "repeated_ngrams")
    _check_sizes(n, top, min_count, "repeated_ngrams")
    counts: Counter = Counter()
    in_texts: Counter = Counter()
    for text in texts:
        words = (text.lower() if lowercase else text).split()
        segs = sentence_ids(text) if sentences and len(words) >= n else None
        grams = [" ".join(words[i : i + n]) for i in _starts(len(words), n, segs)]
        counts.update(grams)
        in_texts.update(set(grams))
    return [Repeated(p, c, t) for p, c, t in _ranked(counts, in_texts, top, min_count)]


def repeated_pos_patterns(
    texts: Sequence[str],
    tags: Sequence[Sequence[str]],
    n: int = 5,
    top: int | None = 10,
    examples: int = 3,
    *,
    lowercase: bool = False,
    sentences: bool = True,
    min_count: int = 2,
) -> list[Repeated]:
    """The ``top`` most repeated POS ``n``-grams, ``tags[i]`` being one tag per whitespace
    word of ``texts[i]`` (as :func:`genmetrics.features.pos.tag_texts` tags by default).

    ``count`` and ``texts`` as in :func:`repeated_ngrams`, over tag sequences; ``examples``:
    the ``examples`` most frequent word strings realising the pattern (lower-cased with
    ``lowercase``), with their counts, by count descending then string ascending.
    """
    _check_texts(texts, "repeated_pos_patterns")
    _check_sizes(n, top, min_count, "repeated_pos_patterns")
    if not isinstance(examples, int) or examples < 0:
        raise GenmetricsError(f"repeated_pos_patterns: examples must be ≥ 0, got {examples!r}")
    if len(tags) != len(texts):
        raise GenmetricsError(
            f"repeated_pos_patterns: {len(texts)} texts but {len(tags)} tag lists"
        )
    counts: Counter = Counter()
    in_texts: Counter = Counter()
    surface: dict[str, Counter] = {}
    for i, (text, text_tags) in enumerate(zip(texts, tags, strict=True)):
        words = (text.lower() if lowercase else text).split()
        if len(words) != len(text_tags):
            raise GenmetricsError(
                f"repeated_pos_patterns: text {i} has {len(words)} whitespace words but "
                f"{len(text_tags)} tags (tags must be one per whitespace word)"
            )
        segs = sentence_ids(text) if sentences and len(words) >= n else None
        seen = set()
        for j in _starts(len(words), n, segs):
            pattern = " ".join(text_tags[j : j + n])
            counts[pattern] += 1
            seen.add(pattern)
            surface.setdefault(pattern, Counter())[" ".join(words[j : j + n])] += 1
        in_texts.update(seen)
    out = []
    for p, c, t in _ranked(counts, in_texts, top, min_count):
        ex = sorted(surface[p].items(), key=lambda kv: (-kv[1], kv[0]))[:examples]
        out.append(Repeated(p, c, t, tuple(ex)))
    return out


def patterns_table(
    sources: Mapping[str, Sequence[str]],
    tags: Mapping[str, Sequence[Sequence[str]]] | None = None,
    *,
    n: Sequence[int] = (4, 5),
    pos_n: Sequence[int] = (5,),
    top: int = 10,
    examples: int = 3,
    lowercase: bool = False,
    sentences: bool = True,
    min_count: int = 2,
) -> pd.DataFrame:
    """Repeated n-grams (``kind="ngram"``, each of ``n``) and POS patterns (``kind="pos"``,
    each of ``pos_n``; needs ``tags`` per source) of every source, in the sources' order:
    columns :data:`TABLE_COLUMNS`, ``rank`` from 1, ``examples`` a JSON list of
    ``[string, count]`` (empty for n-grams)."""
    if pos_n and tags is None:
        raise GenmetricsError("patterns_table: POS patterns (pos_n) need the sources' tags")
    rows = []
    for source, texts in sources.items():
        options = dict(lowercase=lowercase, sentences=sentences, min_count=min_count)
        found = [("ngram", k, repeated_ngrams(texts, k, top, **options)) for k in n]
        for k in pos_n:
            if source not in tags:
                raise GenmetricsError(f"patterns_table: no tags for source {source!r}")
            found.append(
                (
                    "pos",
                    k,
                    repeated_pos_patterns(texts, tags[source], k, top, examples, **options),
                )
            )
        for kind, k, reps in found:
            for rank, r in enumerate(reps, start=1):
                ex = json.dumps([list(e) for e in r.examples], ensure_ascii=False)
                rows.append([source, kind, k, rank, r.pattern, r.count, r.texts, ex])
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def _cell(text: str) -> str:
    """A Markdown table cell: pipes escaped, newlines as spaces."""
    return text.replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    """``text`` as a Markdown code span in a table cell (double backticks around a backtick)."""
    return f"`` {_cell(text)} ``" if "`" in text else f"`{_cell(text)}`"


def patterns_markdown(table: pd.DataFrame, dataset: str, n_texts: Mapping[str, int]) -> str:
    """The Table-1/Table-10 layout of :func:`patterns_table`'s rows: one Markdown table per
    kind and n, rows grouped by source (the source named on its first row), with the count,
    the number of texts and, for POS patterns, the example strings with their counts."""
    lines = [f"# Repeated patterns: {dataset}", ""]
    lines.append(
        "Most repeated exact word n-grams and part-of-speech n-grams per source (Shaib et al. "
        "(2024), Tables 1 and 10). count: occurrences over the source's texts; texts: texts "
        "containing the pattern (of " + ", ".join(f"{s}: {k}" for s, k in n_texts.items()) + ")."
    )
    for (kind, k), block in table.groupby(["kind", "n"], sort=True):
        title = f"exact {k}-grams" if kind == "ngram" else f"POS {k}-grams"
        lines += ["", f"## {title}", ""]
        header = ["source", "rank", "n-gram" if kind == "ngram" else "pattern", "count", "texts"]
        header += ["examples (count)"] if kind == "pos" else []
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for source in n_texts:
            rows = block[block["source"] == source]
            if rows.empty:
                empty = [_cell(source), "–", "(nothing repeated)"] + [""] * (len(header) - 3)
                lines.append("| " + " | ".join(empty) + " |")
                continue
            for i, r in enumerate(rows.itertuples()):
                cells = [_cell(source) if i == 0 else "", str(r.rank), _code(r.pattern)]
                cells += [str(r.count), str(r.texts)]
                if kind == "pos":
                    ex = json.loads(r.examples)
                    cells.append("; ".join(f"{_code(s)} ({c})" for s, c in ex))
                lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def patterns_files(
    dataset: str,
    sources: Sequence[str],
    text_files: Sequence[str],
    pos_files: Sequence[str] | None,
    options: Mapping[str, object],
) -> tuple[pd.DataFrame, str]:
    """The workflow's job: each source's texts (a references or generations file) and, with
    ``pos_n``, its tags (a ``pos`` feature file, rows in the same order with the same ids),
    listed by :func:`patterns_table` (``options``: its keyword arguments); return the table
    (with a ``dataset`` column first) and its Markdown."""
    from genmetrics.io import read_texts
    from genmetrics.metrics.kinds import read_pos

    if len(sources) != len(text_files) or (pos_files and len(pos_files) != len(sources)):
        raise GenmetricsError("patterns_files: one texts (and pos) file per source")
    rows = {s: read_texts(p) for s, p in zip(sources, text_files, strict=True)}
    texts = {s: [r["text"] for r in rows[s]] for s in sources}
    tags = None
    if pos_files:
        tags = {}
        for s, tpath, ppath in zip(sources, text_files, pos_files, strict=True):
            tagged = read_pos(ppath)
            if tagged is None:
                raise GenmetricsError(f"{ppath}: rows have no 'tags'")
            if [r.get("id") for r in tagged[1]] != [r.get("id") for r in rows[s]]:
                raise GenmetricsError(f"{ppath}: its ids are not those of {tpath}, in order")
            tags[s] = tagged[0]
    table = patterns_table(texts, tags, **options)
    markdown = patterns_markdown(table, dataset, {s: len(t) for s, t in texts.items()})
    table.insert(0, "dataset", dataset)
    return table, markdown
