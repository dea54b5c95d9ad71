"""Cleaning: normalise whitespace and unicode, drop empty and duplicate texts, length filters
in words, optional truncation to N words, a seeded sample of N texts, and (``title_field``)
texts titled as pr-4-llm's biography references, ``"{title}:\n\n{text}"``.

Words are the words of the option ``language`` (:mod:`genmetrics.data.words`: whitespace words by
default, jieba words for ``zh``)."""

from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.data.words import DEFAULT_LANGUAGE, check_language, count_words, truncate_words

_WS = re.compile(r"[ \t\r\f\v\u00a0\u2000-\u200b\u3000]+")
_NL = re.compile(r"\s*\n\s*(\n\s*)*")

CLEAN_DEFAULTS: dict[str, Any] = {
    "unicode": "NFC",
    "keep_newlines": False,
    "min_words": 1,
    "max_words": None,
    "truncate_words": None,
    "dedupe": True,
    "sample": None,
    "seed": 0,
    "filter": None,
    "language": DEFAULT_LANGUAGE,  # datasets.<name>.language (the workflow adds it here)
    # a few-shot dataset's prompts.few_shot.name_field (the workflow adds it): titled texts
    "title_field": None,
}

#: the field where a titled row keeps its text before the title (the authors' ``content``)
CONTENT_FIELD = "content"


def titled_text(title: str, text: str) -> str:
    """A text under its title, as pr-4-llm formats its biography references
    (``pr_llm/evaluate/wikipedia_bio/mauve_pr.py``, ``format_ref_dataset``):
    ``f"{title}:\n\n{text}"``. The parsed biographies of :mod:`genmetrics.data.fewshot` are
    formatted by this function too."""
    return f"{title}:\n\n{text}"


def normalize_text(text: str, form: str | None = "NFC", keep_newlines: bool = False) -> str:
    """Unicode-normalise, drop control characters, collapse whitespace; paragraph breaks are kept
    as one ``\\n`` when ``keep_newlines``, else folded into a space."""
    if form:
        text = unicodedata.normalize(form, text)
    text = "".join(c for c in text if c in "\n\t" or unicodedata.category(c)[0] != "C")
    if keep_newlines:
        text = _NL.sub("\n", text)
        text = "\n".join(_WS.sub(" ", line).strip() for line in text.split("\n"))
    else:
        text = _WS.sub(" ", text.replace("\n", " ")).strip()
    return text.strip()


def clean_rows(
    rows: Sequence[Mapping[str, Any]],
    options: Mapping[str, Any] | None = None,
    where: str = "dataset",
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Clean rows ``{"id", "text", ...}``; return (kept rows, counts of what was dropped).

    Order: label filter (``filter: {field: [allowed values]}``; a list-valued field, e.g. the
    models that continued a document, must contain every listed value) → normalise → drop
    empty → dedupe (exact, after normalisation) → length filter (min/max words) → truncate →
    seeded sample (``random.Random(seed).sample``, then original order kept) → with
    ``title_field``, each text titled (:func:`titled_text`, the field's value on one line),
    the text before the title kept in the field ``content``: filters, cuts and dedupe see
    the text without its title. Words are those of ``language``
    (:func:`genmetrics.data.words.count_words`).
    """
    opts = {**CLEAN_DEFAULTS, **(options or {})}
    unknown = set(opts) - set(CLEAN_DEFAULTS)
    if unknown:
        raise GenmetricsError(f"{where}.clean: unknown option(s) {sorted(unknown)}")
    language = check_language(opts["language"], f"{where}.language")
    stats = {"input": len(rows), "empty": 0, "duplicate": 0, "too_short": 0, "too_long": 0}
    if opts["filter"]:
        for field, allowed in opts["filter"].items():
            allowed = set(allowed) if isinstance(allowed, list) else {allowed}
            missing = [r["id"] for r in rows if field not in r]
            if missing:
                raise GenmetricsError(
                    f"{where}.clean.filter: rows have no field {field!r} (first id {missing[0]!r})"
                )
            rows = [r for r in rows if _kept(r[field], allowed, r, field, where)]
        stats["filtered"] = stats["input"] - len(rows)
    seen: set[str] = set()
    seen_ids: set[str] = set()
    out: list[dict[str, Any]] = []
    for row in rows:
        text = normalize_text(str(row["text"]), opts["unicode"], opts["keep_newlines"])
        if not text:
            stats["empty"] += 1
            continue
        if opts["dedupe"]:
            if text in seen:
                stats["duplicate"] += 1
                continue
            seen.add(text)
        n = count_words(text, language)
        if opts["min_words"] and n < opts["min_words"]:
            stats["too_short"] += 1
            continue
        if opts["max_words"] and n > opts["max_words"]:
            stats["too_long"] += 1
            continue
        if opts["truncate_words"]:
            text = truncate_words(text, int(opts["truncate_words"]), language)
        new = {k: v for k, v in row.items() if not k.startswith("_")}
        new["id"] = str(row["id"])
        if new["id"] in seen_ids:
            raise GenmetricsError(f"{where}: duplicate id {new['id']!r}")
        seen_ids.add(new["id"])
        new["text"] = text
        out.append(new)
    if opts["sample"] is not None and opts["sample"] > len(out):
        raise GenmetricsError(
            f"{where}.clean.sample: {opts['sample']} texts asked, but {len(out)} are left after "
            f"cleaning ({stats}); lower sample or loosen the filters"
        )
    if opts["sample"] is not None and opts["sample"] < len(out):
        keep = set(random.Random(opts["seed"]).sample(range(len(out)), int(opts["sample"])))
        out = [r for i, r in enumerate(out) if i in keep]
    stats["output"] = len(out)
    if not out:
        raise GenmetricsError(f"{where}: no texts left after cleaning ({stats})")
    if opts["title_field"]:
        out = [_titled(r, opts["title_field"], opts["unicode"], where) for r in out]
    return out, stats


def _titled(row: dict[str, Any], field: str, form: str | None, where: str) -> dict[str, Any]:
    """``row`` with its text titled by ``row[field]`` and the untitled text in ``content``."""
    title = normalize_text(str(row.get(field) or ""), form)
    if not title:
        raise GenmetricsError(
            f"{where}: row {row['id']!r} has no {field!r} to title its text with "
            "(prompts.few_shot.name_field; label_fields keep a field of the source rows)"
        )
    if CONTENT_FIELD in row:
        raise GenmetricsError(
            f"{where}: rows have a field {CONTENT_FIELD!r}, where a titled text keeps its text "
            "before the title; leave it out of label_fields"
        )
    return {**row, CONTENT_FIELD: row["text"], "text": titled_text(title, row["text"])}


def check_sizes(n: int, requirements: Sequence[Mapping[str, Any]], dataset: str) -> None:
    """Refuse a cleaned dataset of ``n`` texts that a metric entry cannot score, naming the
    entry's config key (``requirements``: :meth:`genmetrics.plan.Plan.size_requirements`)."""
    short = [r for r in requirements if n < r["needs"]]
    if short:
        r = short[0]
        raise GenmetricsError(
            f"{r['key']}: {r['why']} ({r['needs']} in all), but datasets.{dataset} has {n} "
            f"after cleaning"
            + (f"; also {len(short) - 1} other entr(ies)" if len(short) > 1 else "")
        )


def _kept(value: Any, allowed: set[Any], row: Mapping[str, Any], field: str, where: str) -> bool:
    """The label filter: a scalar holds one of ``allowed``; a list contains all of them. A
    label that is an object (or a list holding objects or lists) cannot match: an error naming
    the row."""
    try:
        if isinstance(value, list):
            return allowed <= set(value)
        return value in allowed
    except TypeError:
        raise GenmetricsError(
            f"{where}.clean.filter: row {row.get('id')!r}: field {field!r} is not a label "
            f"value (a string, a number or a list of them), got {type(value).__name__}"
        ) from None
