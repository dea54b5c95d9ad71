"""Batched sampling from a causal LM with per-model decoding parameters and word budgets.

Prompts are sorted by token length and run in left-padded batches. The token budget comes from
the word budget (``prompts.max_new_tokens``); the continuation is then cut to the word budget.
``finish_reason`` is ``eos`` (the model stopped), ``words`` (cut at the word budget) or
``length`` (ran out of tokens first). The same seed, inputs, batch size and device give the
same texts.

A workflow generate job is :func:`generate_shard` (one shard of a dataset's prompts, one model
and seed, with the settings the run plan resolved); :func:`merge_shards` joins the shards.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from genmetrics import GenmetricsError
from genmetrics.clean import count_words, normalize_text, truncate_words
from genmetrics.prompts import (
    DEFAULT_INSTRUCTION,
    format_prompt,
    load_tokens_per_word,
    max_new_tokens,
    tokens_per_word,
)

SAMPLING_KEYS = ("do_sample", "temperature", "top_p", "top_k", "repetition_penalty", "typical_p")


def generate(
    model: Any,
    tokenizer: Any,
    prompts: Sequence[Mapping[str, Any]],
    *,
    template: str,
    sampling: Mapping[str, Any],
    words: int,
    max_new_tokens: int,
    seed: int,
    batch_size: int = 8,
    instruction: str = DEFAULT_INSTRUCTION,
    continuation_mode: str = "prefix",
    progress: bool = True,
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Generate one continuation per prompt row ``{"id", "prompt"}``.

    Returns (rows, stats). Rows: ``{"id", "prompt_id", "text", "prompt", "continuation",
    "n_tokens", "finish_reason"}`` where ``text`` = prompt + continuation (comparable with the
    reference texts, as pr-4-llm does) unless ``continuation_mode="instruction"``.
    """
    import torch

    unknown = set(sampling) - set(SAMPLING_KEYS)
    if unknown:
        raise GenmetricsError(f"sampling: unknown key(s) {sorted(unknown)}; known {SAMPLING_KEYS}")
    gen_kwargs = dict(sampling)
    gen_kwargs.setdefault("do_sample", True)
    if not gen_kwargs["do_sample"]:
        for k in ("temperature", "top_p", "top_k", "typical_p"):
            gen_kwargs.pop(k, None)
    device = next(model.parameters()).device
    inputs = [
        format_prompt(p["prompt"], template, tokenizer, instruction, continuation_mode)
        for p in prompts
    ]
    add_special = template == "base"
    encoded = [tokenizer(t, add_special_tokens=add_special)["input_ids"] for t in inputs]
    if any(len(e) == 0 for e in encoded):
        i = next(i for i, e in enumerate(encoded) if len(e) == 0)
        raise GenmetricsError(f"prompt {prompts[i]['id']!r} encodes to no tokens")
    order = sorted(range(len(prompts)), key=lambda i: (len(encoded[i]), i))
    eos_ids = _eos_ids(model, tokenizer)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos_ids[0]
    torch.manual_seed(seed)
    results: dict[int, dict[str, Any]] = {}
    n_new = 0
    t0 = time.perf_counter()
    bar = tqdm(total=len(order), desc="generate", unit="text", disable=not progress)
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        width = max(len(encoded[i]) for i in idx)
        ids = torch.full((len(idx), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(idx), width), dtype=torch.long)
        for r, i in enumerate(idx):  # left padding
            ids[r, width - len(encoded[i]) :] = torch.tensor(encoded[i])
            mask[r, width - len(encoded[i]) :] = 1
        with torch.no_grad():
            out = model.generate(
                input_ids=ids.to(device),
                attention_mask=mask.to(device),
                max_new_tokens=max_new_tokens,
                min_new_tokens=1,
                pad_token_id=pad_id,
                eos_token_id=eos_ids,
                **gen_kwargs,
            )
        new = out[:, width:].cpu().tolist()
        for r, i in enumerate(idx):
            toks = new[r]
            finish = "length"
            for j, t in enumerate(toks):
                if t in eos_ids:
                    toks, finish = toks[: j + 1], "eos"
                    break
            n_new += len(toks)
            cont = tokenizer.decode(toks, skip_special_tokens=True)
            results[i] = _row(prompts[i], cont, len(toks), finish, words, continuation_mode)
        bar.update(len(idx))
    bar.close()
    seconds = time.perf_counter() - t0
    stats = {
        "seconds": seconds,
        "new_tokens": n_new,
        "tokens_per_second": n_new / max(seconds, 1e-9),
    }
    return [results[i] for i in range(len(prompts))], stats


def _row(
    prompt: Mapping[str, Any], cont: str, n_tokens: int, finish: str, words: int, mode: str
) -> dict[str, Any]:
    if count_words(cont) > words:
        cont, finish = truncate_words(cont.lstrip(), words), "words"
        cont = " " + cont
    cont = cont.rstrip()
    text = cont if mode == "instruction" else prompt["prompt"] + cont
    # an instruction answered with nothing is an empty text, never the instruction itself
    text = normalize_text(text, keep_newlines=True)
    return {
        "id": f"{prompt['id']}",
        "prompt_id": str(prompt["id"]),
        "text": text,
        "prompt": prompt["prompt"],
        "continuation": normalize_text(cont, keep_newlines=True),
        "n_tokens": n_tokens,
        "finish_reason": finish,
    }


def _eos_ids(model: Any, tokenizer: Any) -> list[int]:
    ids: list[int] = []
    gc = getattr(model, "generation_config", None)
    cand = getattr(gc, "eos_token_id", None) if gc is not None else None
    for c in (cand, tokenizer.eos_token_id):
        if c is None:
            continue
        for x in c if isinstance(c, (list, tuple)) else [c]:
            if x not in ids:
                ids.append(int(x))
    if not ids:
        raise GenmetricsError("the tokenizer has no EOS token; set one in the checkpoint config")
    return ids


def shard_rows(rows: Sequence[Any], shard: int, shards: int) -> list[Any]:
    """Contiguous block ``shard`` of ``shards`` (sizes differ by at most one), so merging the
    shards in order restores the prompt order."""
    if not 0 <= shard < shards:
        raise GenmetricsError(f"shard {shard} out of range for {shards} shards")
    n = len(rows)
    return list(rows[shard * n // shards : (shard + 1) * n // shards])


def shard_seed(seed: int, shard: int) -> int:
    """The torch seed of one shard of a run: ``seed * 1000003 + shard``.

    Each shard of a seed samples with its own stream, and the stream of a shard depends only
    on (seed, shard): rerunning one shard gives the same texts, whatever the other shards do.
    """
    return int(seed) * 1_000_003 + int(shard)


@dataclass(frozen=True)
class GenerationSettings:
    """Every setting of one model's generate job on one dataset (resolved by the run plan:
    ``genmetrics.plan``; the config's defaults come from its schema)."""

    template: str  # chat | base
    tokenizer_family: str | None  # row of tokens_per_word.tsv (None: default)
    instruction: str | None  # chat user turn (None: DEFAULT_INSTRUCTION)
    sampling: Mapping[str, Any]
    words: int  # continuation budget in words
    batch_size: int
    token_margin: float  # max_new_tokens = ceil(words × tokens/word × margin)
    shards: int
    mode: str  # prefix | instruction
    dtype: str
    trust_remote_code: bool
    device_map: str | None

    @classmethod
    def of(cls, settings: Mapping[str, Any] | GenerationSettings) -> GenerationSettings:
        if isinstance(settings, cls):
            return settings
        names = {f.name for f in fields(cls)}
        unknown, missing = set(settings) - names, names - set(settings)
        if unknown or missing:
            raise GenmetricsError(
                f"generation settings: unknown {sorted(unknown)}, missing {sorted(missing)}"
            )
        return cls(**settings)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def generate_shard(
    prompts: Sequence[Mapping[str, Any]],
    model: str | Path | tuple[Any, Any],
    settings: Mapping[str, Any] | GenerationSettings,
    *,
    seed: int,
    shard: int,
    tokens_per_word_table: str | Path | Mapping[str, float],
    progress: bool = True,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Generate continuations for shard ``shard`` of ``prompts`` (in prompt order).

    ``model`` is a manifest/folder/hub id (loaded with the settings' dtype, device_map and
    trust_remote_code) or a loaded ``(model, tokenizer)``. The word budget becomes
    ``max_new_tokens`` through the tokens-per-word table. Returns (rows, stats); stats add
    ``texts`` and ``max_new_tokens`` to :func:`generate`'s.
    """
    s = GenerationSettings.of(settings)
    rows = shard_rows(prompts, shard, s.shards)
    table = (
        tokens_per_word_table
        if isinstance(tokens_per_word_table, Mapping)
        else load_tokens_per_word(tokens_per_word_table)
    )
    budget = max_new_tokens(s.words, tokens_per_word(table, s.tokenizer_family), s.token_margin)
    if isinstance(model, tuple):
        lm, tok = model
    else:
        from genmetrics.models import load_causal_lm

        lm, tok = load_causal_lm(
            model, dtype=s.dtype, trust_remote_code=s.trust_remote_code, device_map=s.device_map
        )
    out, stats = generate(
        lm,
        tok,
        rows,
        template=s.template,
        sampling=s.sampling,
        words=s.words,
        max_new_tokens=budget,
        seed=shard_seed(seed, shard),
        batch_size=s.batch_size,
        instruction=s.instruction or DEFAULT_INSTRUCTION,
        continuation_mode=s.mode,
        progress=progress,
    )
    return out, {**stats, "texts": len(out), "max_new_tokens": budget}


def merge_shards(
    shards: Sequence[Sequence[Mapping[str, Any]]], stats: Sequence[Mapping[str, Any]]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Join the shards of one (model, seed) in shard order (= prompt order) and sum their
    statistics: texts, new tokens, seconds, shards, tokens per second."""
    if len(shards) != len(stats):
        raise GenmetricsError(f"{len(shards)} shard files but {len(stats)} stats files")
    rows = [dict(r) for part in shards for r in part]
    seconds = sum(float(s["seconds"]) for s in stats)
    tokens = sum(int(s["new_tokens"]) for s in stats)
    return rows, {
        "texts": len(rows),
        "new_tokens": tokens,
        "seconds": seconds,
        "shards": len(stats),
        "tokens_per_second": tokens / max(seconds, 1e-9),
    }
