"""Prompts and word budgets.

Reference-prefix prompts (Le Bronnec et al. 2024): the prompt is the first ``k`` words of a
reference text (k=10 by default). Base models get that raw prefix. Chat models get their chat
template around an instruction plus the first ``k-1`` words, and the ``k``-th word opens the
assistant's answer (Le Bronnec et al. (2024), Table B.2; pr-4-llm ``WebTextFormatter``), so both
kinds continue the same k words. :func:`build_prompts` chooses between prefixes, a prompt file,
instructions and few-shot prompts (:mod:`genmetrics.data.fewshot`), as ``datasets.<name>.prompts``
says.

Words are those of the dataset's language (:mod:`genmetrics.data.words`). In a whitespace language
a prefix is its words joined by single spaces (as always); in ``zh`` it is the text's own
characters up to the end of the k-th jieba word.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.data.words import DEFAULT_LANGUAGE, uses_whitespace, word_spans

DEFAULT_INSTRUCTION = "Continue the following text:"


def make_prompts(
    references: Sequence[Mapping[str, Any]],
    words: int = 10,
    language: str = DEFAULT_LANGUAGE,
) -> list[dict[str, Any]]:
    """One prompt per reference: its first ``words`` words (of ``language``).

    Returns ``{"id", "prompt", "reference", "reference_id"}`` rows; texts shorter than
    ``words + 1`` words are skipped (nothing would be left to continue).
    """
    if words < 1:
        raise GenmetricsError(f"prompts.words must be >= 1, got {words}")
    whitespace = uses_whitespace(language)
    out = []
    for row in references:
        text = row["text"]
        if whitespace:
            toks = text.split()
            if len(toks) <= words:
                continue
            prompt = " ".join(toks[:words])
        else:
            spans = word_spans(text, language)
            if len(spans) <= words:
                continue
            prompt = text[: spans[words - 1][1]]  # as truncate_words: the text's own characters
        out.append(
            {
                "id": str(row["id"]),
                "prompt": prompt,
                "reference": row["text"],
                "reference_id": str(row["id"]),
            }
        )
    return out


def prompts_from_file(rows: Sequence[Mapping[str, Any]], path: str) -> list[dict[str, Any]]:
    """Prompts given directly (e.g. creative-writing instructions): rows need ``id``, ``prompt``."""
    out = []
    for i, row in enumerate(rows, start=1):
        if not str(row.get("prompt", "")).strip():
            raise GenmetricsError(f"{path}: row {i}: missing or empty 'prompt'")
        out.append(
            {
                "id": str(row.get("id", i)),
                "prompt": row["prompt"],
                **{k: v for k, v in row.items() if k not in ("id", "prompt")},
            }
        )
    return out


PROMPT_MODES = ("prefix", "instruction", "few_shot")


def build_prompts(
    references: Sequence[Mapping[str, Any]],
    options: Mapping[str, Any],
    file_rows: Sequence[Mapping[str, Any]] | None = None,
    *,
    file_name: str = "prompt file",
    where: str = "prompts",
    pool_rows: Sequence[Mapping[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """A dataset's prompts, as ``options`` (``datasets.<name>.prompts``) say:

    * ``file`` given: the rows of that file (``file_rows``, read from ``file_name``);
    * ``mode: instruction``: each reference text is an instruction (creative writing);
    * ``mode: prefix``: the first ``words`` words of each reference (:func:`make_prompts`),
      in the words of ``language`` (the dataset's; absent: whitespace words);
    * ``mode: few_shot``: one few-shot prompt per reference, its examples drawn from
      ``pool_rows`` (``None``: the references themselves), as ``options["few_shot"]`` says
      (:func:`genmetrics.data.fewshot.few_shot_prompts`; errors name its config key, from
      ``few_shot.dataset``, the config's name of a swept dataset).

    An empty result is an error naming ``where``.
    """
    mode = options["mode"]
    if mode not in PROMPT_MODES:
        raise GenmetricsError(f"{where}.mode: must be one of {PROMPT_MODES}, got {mode!r}")
    if options.get("file"):
        if file_rows is None:
            raise GenmetricsError(f"{where}.file: the prompt file's rows were not given")
        rows = prompts_from_file(file_rows, file_name)
    elif mode == "instruction":
        rows = [{"id": str(r["id"]), "prompt": r["text"]} for r in references]
    elif mode == "few_shot":
        from genmetrics.data.fewshot import few_shot_prompts

        fs = options.get("few_shot")
        if not fs:
            raise GenmetricsError(f"{where}.few_shot: required with mode few_shot")
        if fs.get("dataset"):
            where = f"datasets.{fs['dataset']}.prompts"
        rows = few_shot_prompts(
            references,
            references if pool_rows is None else pool_rows,
            fs,
            options.get("language", DEFAULT_LANGUAGE),
            where=f"{where}.few_shot",
        )
    else:
        rows = make_prompts(references, options["words"], options.get("language", DEFAULT_LANGUAGE))
    if not rows:
        raise GenmetricsError(f"{where}: no prompts")
    wrap = options.get("wrap", "none")
    if wrap != "none":
        if mode != "instruction":
            raise GenmetricsError(f"{where}.wrap: {wrap!r} wraps instructions (mode: instruction)")
        rows = [{**r, "wrap": wrap_instruction(r["prompt"], wrap, where)} for r in rows]
    return rows


#: How an instruction is put to a model (``datasets.<name>.prompts.wrap``). ``pr4llm-creative``
#: is pr-4-llm's ``CreativeFormatter`` (``pr_llm/generation/preprocessing.py``; Le Bronnec et
#: al. (2024), §5.5): the instruction plus a length request (100 to 500 words, their
#: ``min_essay_length``/``max_essay_length``); a chat model gets it as its user turn and its
#: answer opens with "Sure here is a proposition:" (the authors write ``[INST] ... [/INST]`` by
#: hand; we use the model's chat template), a base model gets it inside a text header.
INSTRUCTION_WRAPS: dict[str, dict[str, str]] = {
    "pr4llm-creative": {
        "request": "{prompt} Your text should be approximately between 100 and 500 words.",
        "chat_opener": "Sure here is a proposition:\n\n",
        "base": "Below is a text following the instructions:\n\n{request}\n\n### Text:\n\n",
    },
}
WRAPS = ("none", *INSTRUCTION_WRAPS)


def wrap_instruction(prompt: str, wrap: str, where: str = "prompts") -> dict[str, str]:
    """The inputs of one instruction under ``wrap`` (:data:`INSTRUCTION_WRAPS`): ``base`` (a
    base model's whole input), ``chat_user`` (a chat model's user turn) and ``chat_opener``
    (the start of its answer)."""
    if wrap not in INSTRUCTION_WRAPS:
        raise GenmetricsError(f"{where}.wrap: must be one of {WRAPS}, got {wrap!r}")
    w = INSTRUCTION_WRAPS[wrap]
    request = w["request"].format(prompt=prompt)
    return {
        "base": w["base"].format(request=request),
        "chat_user": request,
        "chat_opener": w["chat_opener"],
    }


def format_prompt(
    prompt: str,
    template: str,
    tokenizer: Any = None,
    instruction: str = DEFAULT_INSTRUCTION,
    continuation_mode: str = "prefix",
    language: str = DEFAULT_LANGUAGE,
    few_shot: Mapping[str, Any] | None = None,
    wrap: Mapping[str, str] | None = None,
) -> str:
    """Model input text for one prompt.

    ``template="base"``: the raw prompt. ``template="chat"``: ``tokenizer.apply_chat_template``
    with a user turn ``"{instruction}\\n\\n{first k-1 words}"`` and the generation prompt, then
    the k-th word (words of ``language``; in ``zh`` the k-1 words are the prompt's characters
    before the k-th word, and the k-th word is the rest of the prompt). With
    ``continuation_mode="instruction"`` (prompt files such as creative writing) the whole
    prompt is the user turn and the answer starts empty. With ``continuation_mode="few_shot"``
    the prompt row's ``few_shot`` parts are rendered for the template
    (:func:`genmetrics.data.fewshot.render`: the chat header and examples as the user turn, the
    instruction opening the answer; ``instruction`` is not used). An instruction row's
    ``wrap`` (:func:`wrap_instruction`) gives a base model its ``base`` text and a chat model
    the user turn ``chat_user`` with the answer opened by ``chat_opener``.
    """
    if continuation_mode == "few_shot":
        from genmetrics.data.fewshot import render

        if few_shot is None:
            raise GenmetricsError("a few-shot prompt needs its few_shot parts (make_prompts)")
        return render(few_shot, template, tokenizer)
    if template == "base":
        return wrap["base"] if wrap and continuation_mode == "instruction" else prompt
    if template != "chat":
        raise GenmetricsError(f"template must be 'chat' or 'base', got {template!r}")
    if tokenizer is None or not getattr(tokenizer, "chat_template", None):
        raise GenmetricsError("template 'chat' needs a tokenizer with a chat template")
    if continuation_mode == "instruction" and wrap:
        user, opener = wrap["chat_user"], wrap["chat_opener"]
    elif continuation_mode == "instruction":
        user, opener = prompt, ""
    elif uses_whitespace(language):
        words = prompt.split()
        user = f"{instruction}\n\n{' '.join(words[:-1])}" if len(words) > 1 else instruction
        opener = words[-1]
    else:
        spans = word_spans(prompt, language)
        last = spans[-1][0] if spans else 0
        head = prompt[:last].strip()
        user = f"{instruction}\n\n{head}" if head else instruction
        opener = prompt[last:].strip()
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": user}], tokenize=False, add_generation_prompt=True
    )
    return text + opener


def tokens_per_word(
    table: Mapping[str, float], tokenizer_family: str | None, language: str = DEFAULT_LANGUAGE
) -> float:
    """Tokens per word of a tokenizer family; ``None``: the ``default`` row. A family the table
    lacks is an error (a silent default would change the word budget).

    Whitespace languages use the rows ``<family>``; a language with a segmenter (``zh``) uses
    the rows ``<family>@<language>`` (tokens per jieba word), and ``default@<language>`` for a
    family not measured in that language (a conservative, high value: a budget too small would
    stop continuations before their word budget)."""
    if tokenizer_family is not None and tokenizer_family not in table:
        raise GenmetricsError(
            f"tokenizer family {tokenizer_family!r} is not in the tokens-per-word table "
            f"(known: {', '.join(sorted(table))}); add a row or leave it unset for default"
        )
    if not uses_whitespace(language):
        rows = [f"{tokenizer_family}@{language}"] if tokenizer_family is not None else []
        for row in [*rows, f"default@{language}"]:
            if row in table:
                return float(table[row])
        raise GenmetricsError(f"tokens-per-word table has no 'default@{language}' row")
    if tokenizer_family is not None:
        return float(table[tokenizer_family])
    if "default" not in table:
        raise GenmetricsError("tokens-per-word table has no 'default' row")
    return float(table["default"])


def max_new_tokens(words: int, tpw: float, margin: float = 1.25) -> int:
    """Token budget for a word budget: ``ceil(words × tokens_per_word × margin)``."""
    if words < 1:
        raise GenmetricsError(f"word budget must be >= 1, got {words}")
    return int(math.ceil(words * tpw * margin))


def load_tokens_per_word(path: str | Path) -> dict[str, float]:
    """Read ``resources/tokens_per_word.tsv`` (columns: tokenizer, tokens_per_word, ...).

    Strict: UTF-8 (a leading BOM is allowed), a regular file, every value a finite positive
    number, every tokenizer named once; errors name the file and line."""
    from genmetrics.io import regular_file

    path = regular_file(path, "tokens-per-word table")
    table: dict[str, float] = {}
    first: dict[str, int] = {}
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            header = f.readline().rstrip("\r\n").split("\t")
            if header[:2] != ["tokenizer", "tokens_per_word"]:
                raise GenmetricsError(
                    f"{path}: line 1: expected header 'tokenizer\\ttokens_per_word'"
                )
            for lineno, line in enumerate(f, start=2):
                if not line.strip() or line.startswith("#"):
                    continue
                parts = line.rstrip("\r\n").split("\t")
                name = parts[0].strip()
                try:
                    value = float(parts[1])
                except (IndexError, ValueError):
                    value = math.nan
                if not name or not math.isfinite(value) or value <= 0:
                    row = " ".join(line.split())[:200]
                    raise GenmetricsError(
                        f"{path}: line {lineno}: bad row {row!r} (a tokenizer name and a finite "
                        "positive number of tokens per word)"
                    )
                if name in first:
                    raise GenmetricsError(
                        f"{path}: line {lineno}: tokenizer {name!r} is listed twice (first at "
                        f"line {first[name]})"
                    )
                first[name] = lineno
                table[name] = value
    except UnicodeDecodeError as e:
        raise GenmetricsError(f"{path}: invalid UTF-8 at byte {e.start}") from None
    except OSError as e:
        raise GenmetricsError(f"{path}: cannot be read ({e.strerror or e})") from None
    return table
