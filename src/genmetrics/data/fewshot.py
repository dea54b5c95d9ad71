"""Few-shot prompts and their parser: the biographies of Le Bronnec et al. (2024), §5.4,
Table B.5 (pr-4-llm: ``pr_llm/data/make_icl_dataset.py``, ``pr_llm/generation/preprocessing.py``
``ICLFormatter``, ``configs/generation/wikipedia_bio/*.yaml``,
``pr_llm/evaluate/wikipedia_bio/mauve_pr.py``).

**The prompt.** A header, then ``n`` examples, each ``"{instruction} {name}:\\n\\n{content}"``,
joined by ``"\\n\\n"``, then ``"\\n\\n{instruction}"`` (:data:`TEMPLATES`: the header
``"Write biographies of various people.\\n\\n"`` and the instruction ``"- Biography of"``). A
base model gets that string, byte for byte what ``ICLFormatter`` builds without chat tokens.
A chat model gets its own chat template (``tokenizer.apply_chat_template``, as
:func:`genmetrics.data.prompts.format_prompt` does for every chat prompt) around a user turn made of
the chat header (``"... Here are a few examples:\\n\\n"``) and the examples, and its answer
is opened by the instruction. The authors put literal ``[INST]``/``[/INST]`` around header and
examples instead (``"[INST] {header}{examples} [/INST]\\n\\n- Biography of"``), whatever the
model's template was.

**How the prompt ends** (``name``): ``free``, the authors' prompt, ends with the instruction,
and the model chooses whom to write about; ``item`` ends with
``"{instruction} {item's name}:\\n\\n"``, so that the biography written is the item's person
(each prompt stands for one reference, an *item*).

**The examples** (:func:`draw_examples`): for each item, ``n`` rows of the pool drawn by its
own ``numpy.random.default_rng`` seeded from (the config seed, the item's id), so a prompt's
examples do not depend on the other prompts. Never the item itself (same id) and never a row
of the same name (the same person: compared after whitespace folding, case-insensitively);
without replacement within a prompt. The authors draw ``n`` indices of the whole pool *with*
replacement (``rng.integers(0, len(pool), n)`` from one generator for all prompts), so an
example can appear twice in a prompt and a prompt's examples depend on the prompts drawn
before; ``replace=True`` draws with ``rng.integers`` like them, always without the item.
Names are cut to ``max_title_words`` (10) words and contents to ``max_example_words`` words
(350: the authors' command-line default; their function's default is 250), in the words of
the dataset's language (:mod:`genmetrics.data.words`).

**The parser** (:func:`parse_biography`): the continuation is cut at the authors' regex
``\\n\\n- Biography|\\n\\n#`` (the instruction without its last word: a configured
instruction is cut the same way) and the part before is one biography: ``" Name:\\n\\ncontent"``
(``free``) or the content (``item``). Its text is formatted as the references are,
``"{name}:\\n\\n{content}"`` (:func:`genmetrics.data.clean.titled_text`; the authors'
``format_ref_dataset``), so precision and recall compare like with like. An output that does
not parse (no name line, empty content) is kept, as its cut text, and flagged, never dropped.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.data.clean import normalize_text, titled_text
from genmetrics.data.words import DEFAULT_LANGUAGE, truncate_words

#: Table B.5 of Le Bronnec et al. (2024) as pr-4-llm's configs write it; a config may
#: override each string (``datasets.<name>.prompts.few_shot.header_base`` ...)
TEMPLATES: dict[str, dict[str, str]] = {
    "biography": {
        "header_base": "Write biographies of various people.\n\n",
        "header_chat": "Write biographies of various people. Here are a few examples:\n\n",
        "instruction": "- Biography of",
    },
}
#: how a prompt ends: with the instruction (the model picks the person) or the item's name
NAME_MODES = ("free", "item")
#: the template's strings a config may override
TEMPLATE_KEYS = ("header_base", "header_chat", "instruction")


class Biography(NamedTuple):
    """One parsed continuation: ``text`` formatted as the references (or the cut output when it
    did not parse), and whether it parsed."""

    text: str
    parsed: bool


def resolve_template(options: Mapping[str, Any], where: str = "few_shot") -> dict[str, str]:
    """The header and instruction strings of ``options`` (``few_shot`` config): the template's
    (``template``, default ``biography``), each overridden by a string the options give."""
    name = options.get("template", "biography")
    if name not in TEMPLATES:
        raise GenmetricsError(f"{where}.template: {name!r} is not one of {sorted(TEMPLATES)}")
    out = dict(TEMPLATES[name])
    for key in TEMPLATE_KEYS:
        if options.get(key) is not None:
            out[key] = str(options[key])
    if not out["instruction"].strip():
        raise GenmetricsError(f"{where}.instruction: must not be empty")
    return out


def _name_key(name: str) -> str:
    """What makes two names the same person: whitespace folded, case ignored."""
    return " ".join(str(name).split()).casefold()


def _item_seed(seed: int, item_id: str) -> list[int]:
    """The entropy of one item's generator: the config seed and 8 bytes of sha256(item id)."""
    digest = hashlib.sha256(str(item_id).encode()).digest()
    return [int(seed), int.from_bytes(digest[:8], "big")]


def cut_name(name: Any, max_title_words: int, language: str = DEFAULT_LANGUAGE) -> str:
    """A name on one line, cut to ``max_title_words`` words (the authors' ``title``)."""
    return truncate_words(normalize_text(str(name)), max_title_words, language)


def draw_examples(
    items: Sequence[Mapping[str, Any]],
    pool: Sequence[Mapping[str, Any]],
    n: int,
    seed: int,
    *,
    replace: bool = False,
    name_field: str = "title",
    content_field: str = "text",
    max_example_words: int = 350,
    max_title_words: int = 10,
    language: str = DEFAULT_LANGUAGE,
    where: str = "few_shot",
) -> list[list[dict[str, str]]]:
    """For each item, ``n`` examples ``{"id", "name", "content"}`` drawn from ``pool``.

    Each item draws with ``numpy.random.default_rng([seed, sha256(item id)])``: from the pool
    rows whose id differs from the item's and whose name (``name_field``) is not the item's,
    in pool order, ``rng.choice(len, n, replace=False)``; with ``replace=True``,
    ``rng.integers(0, len, n)`` as the authors (who draw from the whole pool, the item
    included, with one generator for all prompts). Names are cut to ``max_title_words``,
    contents (``content_field``) to ``max_example_words`` words of ``language``. A pool
    smaller than ``n`` after the exclusion, without ``replace``, is an error naming
    ``where``.n.
    """
    if n < 0:
        raise GenmetricsError(f"{where}.n: must be >= 0, got {n}")
    for role, rows, fields in (
        ("item", items, {"name_field": name_field}),
        ("pool row", pool, {"name_field": name_field, "content_field": content_field}),
    ):
        for row in rows:
            for key, f in fields.items():
                if row.get(f) is None or not str(row[f]).strip():
                    raise GenmetricsError(
                        f"{where}.{key}: {role} {row.get('id')!r} has no {f!r} (a dataset's "
                        "label_fields keep a field of its source rows)"
                    )
    keys = [(str(r["id"]), _name_key(r[name_field])) for r in pool]
    cut = [
        {
            "id": str(r["id"]),
            "name": cut_name(r[name_field], max_title_words, language),
            "content": truncate_words(str(r[content_field]), max_example_words, language),
        }
        for r in pool
    ]
    out = []
    for item in items:
        item_id, item_key = str(item["id"]), _name_key(item[name_field])
        allowed = [j for j, (i, k) in enumerate(keys) if i != item_id and k != item_key]
        if n == 0:
            out.append([])
            continue
        if not allowed or (len(allowed) < n and not replace):
            raise GenmetricsError(
                f"{where}.n: {n} examples per prompt, but the pool has {len(allowed)} rows "
                f"besides item {item_id!r} and rows of its name; lower n, use a larger pool"
                + ("" if replace else " or set replace: true")
            )
        rng = np.random.default_rng(_item_seed(seed, item_id))
        if replace:
            picks = rng.integers(0, len(allowed), size=n)
        else:
            picks = rng.choice(len(allowed), size=n, replace=False)
        out.append([dict(cut[allowed[int(p)]]) for p in picks])
    return out


def example_block(example: Mapping[str, str], instruction: str) -> str:
    """One example as ICLFormatter writes it: ``"{instruction} {name}:\\n\\n{content}"``."""
    return f"{instruction} {example['name']}:\n\n{example['content']}"


def _opener(parts: Mapping[str, Any]) -> str:
    """What the model continues: the instruction, or the instruction and the item's name."""
    if parts.get("item_name") is None:
        return parts["instruction"]
    return f"{parts['instruction']} {parts['item_name']}:\n\n"


def render_base(parts: Mapping[str, Any]) -> str:
    """A base model's prompt: header + examples joined by ``"\\n\\n"`` + ``"\\n\\n"`` + the
    opener (ICLFormatter's string without chat tokens, for ``name: free``)."""
    examples = "\n\n".join(example_block(e, parts["instruction"]) for e in parts["examples"])
    return f"{parts['header_base']}{examples}\n\n{_opener(parts)}"


def render_chat(parts: Mapping[str, Any], tokenizer: Any) -> str:
    """A chat model's prompt: its chat template around the user turn chat header + examples
    (joined by ``"\\n\\n"``), with the generation prompt, then the opener as the start of the
    answer (the authors: literal ``[INST]``/``[/INST]`` tokens and ``"\\n\\n"`` before the
    instruction)."""
    if tokenizer is None or not getattr(tokenizer, "chat_template", None):
        raise GenmetricsError("template 'chat' needs a tokenizer with a chat template")
    examples = "\n\n".join(example_block(e, parts["instruction"]) for e in parts["examples"])
    user = f"{parts['header_chat']}{examples}"
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": user}], tokenize=False, add_generation_prompt=True
    )
    return text + _opener(parts)


def render(parts: Mapping[str, Any], template: str, tokenizer: Any = None) -> str:
    """A few-shot prompt row's ``few_shot`` parts as a model's input (``chat`` or ``base``)."""
    if template == "base":
        return render_base(parts)
    if template == "chat":
        return render_chat(parts, tokenizer)
    raise GenmetricsError(f"template must be 'chat' or 'base', got {template!r}")


def stop_pattern(instruction: str = TEMPLATES["biography"]["instruction"]) -> re.Pattern[str]:
    """Where a continuation's first biography ends: the authors' ``\\n\\n- Biography|\\n\\n#``,
    i.e. a blank line and the instruction without its last word (all of a one-word one), or
    a blank line and a ``#`` heading."""
    words = instruction.split()
    stem = " ".join(words[:-1]) if len(words) > 1 else instruction.strip()
    return re.compile(r"\n\n" + re.escape(stem) + r"|\n\n#")


def parse_biography(
    output: str,
    instruction: str = TEMPLATES["biography"]["instruction"],
    name: str | None = None,
) -> Biography:
    """One biography out of a continuation, formatted as the references.

    The continuation is cut at :func:`stop_pattern` (the part before is kept, as the
    authors' ``re.split(...)[0]``). ``name=None`` (``free``): the cut text must be a name line
    ending with ``:`` (``" Name:"``), one or more line breaks, then content; ``name`` given
    (``item``): the cut text is the content. The text is ``"{name}:\\n\\n{content}"``
    (:func:`genmetrics.data.clean.titled_text`; name on one line, content with single line breaks
    as every generated text). Without a name line or content, the text is the cut output
    (normalised) and ``parsed`` is false.
    """
    cut = stop_pattern(instruction).split(output, maxsplit=1)[0]
    raw = normalize_text(cut, keep_newlines=True)
    if name is None:
        head, sep, rest = cut.lstrip().partition("\n")
        head = head.strip()
        if not sep or not head.endswith(":") or not head[:-1].strip():
            return Biography(raw, False)
        name, content = head[:-1], rest
    else:
        content = cut
    content = normalize_text(content, keep_newlines=True)
    if not content:
        return Biography(raw, False)
    return Biography(titled_text(normalize_text(name), content), True)


def few_shot_prompts(
    items: Sequence[Mapping[str, Any]],
    pool: Sequence[Mapping[str, Any]],
    options: Mapping[str, Any],
    language: str = DEFAULT_LANGUAGE,
    where: str = "few_shot",
) -> list[dict[str, Any]]:
    """One prompt per item (a reference row): ``{"id", "prompt", "reference",
    "reference_id", "few_shot"}``. ``prompt`` is the base model's input (:func:`render_base`);
    ``few_shot`` holds the parts every model's template renders (:func:`render`): the
    headers, the instruction, the examples and ``item_name`` (``None`` with ``name: free``).
    ``options`` is ``datasets.<name>.prompts.few_shot`` with one ``n`` (the plan's variant)."""
    strings = resolve_template(options, where)
    mode = options.get("name", "free")
    if mode not in NAME_MODES:
        raise GenmetricsError(f"{where}.name: must be one of {NAME_MODES}, got {mode!r}")
    name_field = options.get("name_field", "title")
    max_title = int(options.get("max_title_words", 10))
    drawn = draw_examples(
        items,
        pool,
        int(options["n"]),
        int(options.get("seed", 0)),
        replace=bool(options.get("replace", False)),
        name_field=name_field,
        content_field=options.get("content_field") or "text",
        max_example_words=int(options.get("max_example_words", 350)),
        max_title_words=max_title,
        language=language,
        where=where,
    )
    rows = []
    for item, examples in zip(items, drawn, strict=True):
        item_name = cut_name(item[name_field], max_title, language) if mode == "item" else None
        parts = {**strings, "examples": examples, "item_name": item_name}
        rows.append(
            {
                "id": str(item["id"]),
                "prompt": render_base(parts),
                "reference": item["text"],
                "reference_id": str(item["id"]),
                "few_shot": parts,
            }
        )
    return rows
