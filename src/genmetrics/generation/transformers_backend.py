"""Batched sampling from a causal LM with per-model decoding parameters and word budgets.

The token budget comes from the word budget (``prompts.max_new_tokens``); the continuation is
then cut to the word budget, in words of the dataset's language (:mod:`genmetrics.data.words`).
``finish_reason`` is ``eos`` (the model stopped), ``words`` (cut at the word budget) or
``length`` (ran out of tokens first).

**Batches and seeds.** All prompts of a dataset are sorted by token length (ties: prompt order)
and cut into batches of ``batch_size`` (left-padded). Batch ``b`` samples from its own random
stream, seeded by :func:`batch_seed` from (seed, id of its first prompt). So a batch's texts
depend on the seed, the batch's prompts and the device, never on which shard runs it, how
many shards there are, or how far an earlier attempt got: raising ``generation.shards`` or
resuming a killed job gives the same bytes. Changing ``batch_size`` changes the batches (their
members, padding and streams) and therefore the texts; greedy decoding is batch-independent up
to floating-point padding effects.

**Samples per prompt.** With ``samples_per_prompt`` = s > 1 every prompt is generated s times
(:func:`sample_prompts`): the rows are ``<prompt id>~<j>`` (j = 0 .. s-1) with the prompt's
``prompt_id`` and ``sample`` j, in prompt order, and each sample is its own row of the batches
(its own random draws). With s = 1 (the default) a row's id is its prompt's id, as always.

**Shards and resuming.** Shard ``k`` of ``n`` runs batches ``k, k + n, k + 2n, ...`` (balanced
lengths) and writes its rows in prompt order; :func:`merge_shards` restores the dataset's
prompt order. A generate job appends each finished batch to a progress log
(:mod:`genmetrics.generation.progress`, fsynced, outside the job's outputs); a restarted job skips the
batches it finds there. The log is keyed by everything that determines the texts
(:func:`progress_key`), so a log of other settings is never resumed.

**Few-shot prompts** (``continuation_mode="few_shot"``, :mod:`genmetrics.data.fewshot`): each
model's template renders the prompt row's ``few_shot`` parts; the continuation (cut to the
word budget) is parsed into one biography (:func:`genmetrics.data.fewshot.parse_biography`): the
row's ``text`` is that biography, ``continuation`` the output, ``parsed`` whether it parsed;
the statistics count ``unparsed`` rows (kept, never dropped).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, asdict, dataclass, fields
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from genmetrics import GenmetricsError
from genmetrics.data.clean import normalize_text
from genmetrics.data.fewshot import parse_biography
from genmetrics.data.prompts import (
    DEFAULT_INSTRUCTION,
    format_prompt,
    max_new_tokens,
)
from genmetrics.data.words import DEFAULT_LANGUAGE, count_words, truncate_words, uses_whitespace
from genmetrics.generation.progress import ProgressLog

SAMPLING_KEYS = ("do_sample", "temperature", "top_p", "top_k", "repetition_penalty", "typical_p")


#: between a prompt's id and its sample index in the id of a generated text (s > 1)
SAMPLE_SEP = "~"


def sample_prompts(prompts: Sequence[Mapping[str, Any]], samples: int) -> list[dict[str, Any]]:
    """Each prompt row ``samples`` times: ids ``<id>~<j>``, with ``prompt_id`` (the prompt's id)
    and ``sample`` (j); ``samples=1`` returns the rows unchanged (ids are the prompts' ids)."""
    if samples < 1:
        raise GenmetricsError(f"samples_per_prompt must be >= 1, got {samples}")
    if samples == 1:
        return [dict(p) for p in prompts]
    return [
        {**p, "id": f"{p['id']}{SAMPLE_SEP}{j}", "prompt_id": str(p["id"]), "sample": j}
        for p in prompts
        for j in range(samples)
    ]


def batch_seed(seed: int, prompt_id: str) -> int:
    """The torch seed of the batch whose first prompt is ``prompt_id``: the first 8 bytes of
    ``sha256(f"{seed}:{prompt_id}")`` as an integer below 2**63."""
    digest = hashlib.sha256(f"{int(seed)}:{prompt_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


@dataclass(frozen=True)
class Batch:
    """One batch of prompts: its index among the dataset's batches, its members (positions in
    the prompt list, shortest first) and its seed."""

    index: int
    members: tuple[int, ...]
    seed: int


def plan_batches(
    prompt_ids: Sequence[str], lengths: Sequence[int], batch_size: int, seed: int
) -> list[Batch]:
    """Cut every prompt of a dataset into batches: sorted by (token length, position)."""
    if batch_size < 1:
        raise GenmetricsError(f"batch_size must be >= 1, got {batch_size}")
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    return [
        Batch(b, tuple(order[i : i + batch_size]), batch_seed(seed, prompt_ids[order[i]]))
        for b, i in enumerate(range(0, len(order), batch_size))
    ]


def shard_batches(batches: Sequence[Batch], shard: int, shards: int) -> list[Batch]:
    """The batches shard ``shard`` of ``shards`` runs: every ``shards``-th, from ``shard``."""
    if not 0 <= shard < shards:
        raise GenmetricsError(f"shard {shard} out of range for {shards} shards")
    return list(batches[shard::shards])


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
    shard: int = 0,
    shards: int = 1,
    log: ProgressLog | None = None,
    language: str = DEFAULT_LANGUAGE,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Generate one continuation per prompt row ``{"id", "prompt"}`` of shard ``shard``.

    ``prompts`` is the whole dataset (the batches are planned over all of it); the rows
    returned are the shard's, in prompt order: ``{"id", "prompt_id", "text", "prompt",
    "continuation", "n_tokens", "finish_reason"}`` where ``text`` = prompt + continuation
    (comparable with the reference texts, as pr-4-llm does) unless
    ``continuation_mode="instruction"``, or the parsed biography with ``"few_shot"`` (rows
    add ``parsed``; stats add ``unparsed``). Batches already in ``log`` are not generated
    again. ``words`` counts words of ``language``.
    """
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
        format_prompt(
            p["prompt"],
            template,
            tokenizer,
            instruction,
            continuation_mode,
            language,
            few_shot=p.get("few_shot"),
            wrap=p.get("wrap"),
        )
        for p in prompts
    ]
    add_special = template == "base"
    encoded = [tokenizer(t, add_special_tokens=add_special)["input_ids"] for t in inputs]
    if any(len(e) == 0 for e in encoded):
        i = next(i for i, e in enumerate(encoded) if len(e) == 0)
        raise GenmetricsError(f"prompt {prompts[i]['id']!r} encodes to no tokens")
    ids = [str(p["id"]) for p in prompts]
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise GenmetricsError(f"prompt id {dup!r} appears more than once")
    batches = shard_batches(
        plan_batches(ids, [len(e) for e in encoded], batch_size, seed), shard, shards
    )
    eos_ids = _eos_ids(model, tokenizer)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else eos_ids[0]
    log = log if log is not None else ProgressLog(None, "")
    results: dict[int, dict[str, Any]] = {}
    generated = resumed = generated_tokens = 0
    t0 = time.perf_counter()
    bar = tqdm(
        total=sum(len(b.members) for b in batches),
        desc="generate",
        unit="text",
        disable=not progress,
    )
    for batch in batches:
        idx = batch.members
        done = log.get(batch.index, [ids[i] for i in idx])
        if done is None:
            done = _sample_batch(
                model,
                tokenizer,
                [encoded[i] for i in idx],
                batch.seed,
                device,
                pad_id,
                eos_ids,
                max_new_tokens,
                gen_kwargs,
            )
            done = [
                _row(prompts[i], cont, n, finish, words, continuation_mode, language)
                for i, (cont, n, finish) in zip(idx, done, strict=True)
            ]
            log.put(batch.index, [ids[i] for i in idx], done)
            generated += 1
            generated_tokens += sum(r["n_tokens"] for r in done)
        else:
            resumed += 1
        for i, row in zip(idx, done, strict=True):
            results[i] = row
        bar.update(len(idx))
    bar.close()
    seconds = time.perf_counter() - t0
    order = sorted(results)
    rows = [results[i] for i in order]
    stats = {
        "texts": len(rows),
        "new_tokens": sum(int(r["n_tokens"]) for r in rows),
        "batches": len(batches),
        "batches_generated": generated,
        "batches_resumed": resumed,
        "generated_tokens": generated_tokens,  # by this attempt
        "seconds": seconds,  # of this attempt
        "tokens_per_second": generated_tokens / max(seconds, 1e-9),
    }
    if continuation_mode == "few_shot":
        stats["unparsed"] = sum(1 for r in rows if not r["parsed"])
    return rows, stats


def _sample_batch(
    model: Any,
    tokenizer: Any,
    encoded: Sequence[Sequence[int]],
    seed: int,
    device: Any,
    pad_id: int,
    eos_ids: Sequence[int],
    max_new_tokens: int,
    gen_kwargs: Mapping[str, Any],
) -> list[tuple[str, int, str]]:
    """Sample one left-padded batch from its own stream: (continuation, tokens, finish)."""
    import torch

    width = max(len(e) for e in encoded)
    ids = torch.full((len(encoded), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(encoded), width), dtype=torch.long)
    for r, e in enumerate(encoded):  # left padding
        ids[r, width - len(e) :] = torch.tensor(e)
        mask[r, width - len(e) :] = 1
    torch.manual_seed(seed)  # CPU and every CUDA device
    with torch.no_grad():
        out = model.generate(
            input_ids=ids.to(device),
            attention_mask=mask.to(device),
            max_new_tokens=max_new_tokens,
            min_new_tokens=1,
            pad_token_id=pad_id,
            eos_token_id=list(eos_ids),
            **gen_kwargs,
        )
    result = []
    for toks in out[:, width:].cpu().tolist():
        finish = "length"
        for j, t in enumerate(toks):
            if t in eos_ids:
                toks, finish = toks[: j + 1], "eos"
                break
        result.append((tokenizer.decode(toks, skip_special_tokens=True), len(toks), finish))
    return result


def _row(
    prompt: Mapping[str, Any],
    cont: str,
    n_tokens: int,
    finish: str,
    words: int,
    mode: str,
    language: str = DEFAULT_LANGUAGE,
) -> dict[str, Any]:
    """The row of one continuation, cut to ``words`` words of ``language`` (``finish_reason``
    ``words`` then). A whitespace language's cut continuation starts with one space; a ``zh``
    one keeps its own characters (no space is put between Chinese words). A few-shot row's
    text is the cut continuation's biography (``parsed``: whether it parsed)."""
    if count_words(cont, language) > words:
        finish = "words"
        if uses_whitespace(language):
            cont = " " + truncate_words(cont.lstrip(), words)
        else:
            cont = truncate_words(cont, words, language)
    cont = cont.rstrip()
    extra = {}
    if mode == "few_shot":  # the biography, titled as the references (its own normalising)
        parts = prompt["few_shot"]
        text, extra["parsed"] = parse_biography(cont, parts["instruction"], parts["item_name"])
    else:
        text = cont if mode == "instruction" else prompt["prompt"] + cont
        # an instruction answered with nothing is an empty text, never the instruction itself
        text = normalize_text(text, keep_newlines=True)
    return {
        "id": f"{prompt['id']}",
        "prompt_id": str(prompt.get("prompt_id", prompt["id"])),
        **({"sample": int(prompt["sample"])} if "sample" in prompt else {}),
        "text": text,
        "prompt": prompt["prompt"],
        "continuation": normalize_text(cont, keep_newlines=True),
        "n_tokens": n_tokens,
        "finish_reason": finish,
        **extra,
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


@dataclass(frozen=True)
class GenerationSettings:
    """Every setting of one model's generate job on one dataset (resolved by the run plan:
    ``genmetrics.plan``; the config's defaults come from its schema)."""

    template: str  # chat | base
    tokenizer_family: str | None  # row of tokens_per_word.tsv (None: default)
    tokens_per_word: float  # that row's value (resolved by the plan: the file is no input)
    instruction: str | None  # chat user turn (None: DEFAULT_INSTRUCTION)
    sampling: Mapping[str, Any]
    words: int  # continuation budget in words (of the language)
    batch_size: int
    token_margin: float  # max_new_tokens = ceil(words × tokens/word × margin)
    shards: int
    mode: str  # prefix | instruction | few_shot
    dtype: str  # auto | float32 | bfloat16 | float16 (auto: genmetrics.models.checkpoints.resolve_dtype)
    trust_remote_code: bool
    device_map: str | None  # "auto": accelerate spreads the model over the job's GPUs
    max_memory: Mapping[str, str] | None  # per device, with device_map (key "gpu": each GPU)
    language: str = DEFAULT_LANGUAGE  # the dataset's (genmetrics.data.words): words of the budget
    samples_per_prompt: int = 1  # texts generated per prompt (ids <prompt id>~<j> when > 1)

    @classmethod
    def of(cls, settings: Mapping[str, Any] | GenerationSettings) -> GenerationSettings:
        if isinstance(settings, cls):
            return settings
        names = {f.name for f in fields(cls)}
        optional = {f.name for f in fields(cls) if f.default is not MISSING}
        unknown, missing = set(settings) - names, names - optional - set(settings)
        if unknown or missing:
            raise GenmetricsError(
                f"generation settings: unknown {sorted(unknown)}, missing {sorted(missing)}"
            )
        return cls(**settings)

    def as_dict(self) -> dict[str, Any]:
        """Every setting; ``language`` only where it is not a whitespace language and
        ``samples_per_prompt`` only where it is not 1 (so the params of jobs without them are
        those they always were)."""
        out = asdict(self)
        if uses_whitespace(self.language):
            del out["language"]
        if self.samples_per_prompt == 1:
            del out["samples_per_prompt"]
        return out


#: modules whose code decides the texts: their digest is in the progress key and in the
#: generate rule's params (a change reruns generation; comments and docstrings do not)
GENERATION_CODE = (
    "genmetrics.generation.transformers_backend",
    "genmetrics.data.prompts",
    "genmetrics.data.clean",
    "genmetrics.data.words",
    "genmetrics.data.fewshot",
)


def progress_key(**parts: Any) -> str:
    """sha256 of everything that determines a shard's texts (JSON, sorted keys)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def generate_shard(
    prompts: Sequence[Mapping[str, Any]],
    model: str | Path | tuple[Any, Any],
    settings: Mapping[str, Any] | GenerationSettings,
    *,
    seed: int,
    shard: int,
    progress: bool = True,
    progress_path: str | Path | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Generate continuations for shard ``shard`` of ``prompts`` (the shard's rows in prompt
    order), resuming from the progress log at ``progress_path`` when one is given.

    ``model`` is a manifest/folder/hub id (loaded with the settings' dtype, device_map,
    max_memory and trust_remote_code) or a loaded ``(model, tokenizer)``. The word budget
    becomes ``max_new_tokens`` through the settings' tokens per word. Returns (rows, stats);
    stats add the budget, the dtype and device that ran, and the progress key to
    :func:`generate`'s. The caller deletes the log (:func:`genmetrics.generation.progress.drop`) once
    the shard's outputs are written.
    """
    from genmetrics.models.checkpoints import describe_device, model_fingerprint
    from genmetrics.provenance import code_digest, package_versions

    s = GenerationSettings.of(settings)
    budget = max_new_tokens(s.words, s.tokens_per_word, s.token_margin)
    prompts = sample_prompts(prompts, s.samples_per_prompt)
    if isinstance(model, tuple):
        lm, tok = model
        weights = None
    else:
        from genmetrics.models.checkpoints import load_causal_lm

        lm, tok = load_causal_lm(
            model,
            dtype=s.dtype,
            trust_remote_code=s.trust_remote_code,
            device_map=s.device_map,
            max_memory=s.max_memory,
        )
        weights = model_fingerprint(model) or str(model)
    dtype = str(next(lm.parameters()).dtype).removeprefix("torch.")
    device = describe_device(lm)
    prompts_digest = hashlib.sha256(  # a row's few-shot parts and wrap too (what models see)
        json.dumps(
            [
                [str(p["id"]), p["prompt"], *[p[k] for k in ("few_shot", "wrap") if k in p]]
                for p in prompts
            ]
        ).encode()
    ).hexdigest()
    key = progress_key(
        settings=s.as_dict(),
        seed=int(seed),
        shard=int(shard),
        max_new_tokens=budget,
        prompts=prompts_digest,
        weights=weights if weights is not None else repr(type(lm)),
        dtype=dtype,  # a resumed job on other hardware must not mix bf16 and fp32 batches
        device=device["name"],
        versions=package_versions(("torch", "transformers")),
        code=code_digest(*GENERATION_CODE),
    )
    with ProgressLog(progress_path, key) as log:
        out, stats = generate(
            lm,
            tok,
            prompts,
            template=s.template,
            sampling=s.sampling,
            words=s.words,
            max_new_tokens=budget,
            seed=seed,
            batch_size=s.batch_size,
            instruction=s.instruction or DEFAULT_INSTRUCTION,
            continuation_mode=s.mode,
            progress=progress,
            shard=shard,
            shards=s.shards,
            log=log,
            language=s.language,
        )
    return out, {
        **stats,
        "max_new_tokens": budget,
        "dtype": dtype,
        "dtype_requested": s.dtype,
        "device": device,
        "device_map": s.device_map,
        "max_memory": s.max_memory,
        "progress_key": key,
    }


def merge_shards(
    prompt_ids: Sequence[str],
    shards: Sequence[Sequence[Mapping[str, Any]]],
    stats: Sequence[Mapping[str, Any]],
    samples_per_prompt: int = 1,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Join the shards of one (model, seed) in the dataset's prompt order and sum their
    statistics. Every prompt must have exactly ``samples_per_prompt`` rows, the ids of
    :func:`sample_prompts` (nothing is dropped or doubled)."""
    if len(shards) != len(stats):
        raise GenmetricsError(f"{len(shards)} shard files but {len(stats)} stats files")
    by_id: dict[str, dict[str, Any]] = {}
    for k, part in enumerate(shards):
        for r in part:
            rid = str(r["id"])
            if rid in by_id:
                raise GenmetricsError(f"shard {k}: text {rid!r} was generated twice")
            by_id[rid] = dict(r)
    want = [
        str(p["id"]) for p in sample_prompts([{"id": i} for i in prompt_ids], samples_per_prompt)
    ]
    missing = [i for i in want if i not in by_id]
    extra = sorted(set(by_id) - set(want))
    if missing or extra:
        raise GenmetricsError(
            f"shards do not match the prompts: missing {missing[:5]}, unknown {extra[:5]}"
        )
    rows = [by_id[i] for i in want]
    seconds = sum(float(s["seconds"]) for s in stats)
    generated = sum(int(s.get("generated_tokens", s["new_tokens"])) for s in stats)
    merged = {
        "texts": len(rows),
        "new_tokens": sum(int(r["n_tokens"]) for r in rows),
        "seconds": seconds,
        "shards": len(stats),
        "tokens_per_second": generated / max(seconds, 1e-9),
        "batches": sum(int(s.get("batches", 0)) for s in stats),
        "batches_resumed": sum(int(s.get("batches_resumed", 0)) for s in stats),
    }
    if any("unparsed" in s for s in stats):  # few-shot biographies that did not parse
        merged["unparsed"] = sum(int(s.get("unparsed", 0)) for s in stats)
    for key in ("max_new_tokens", "dtype", "dtype_requested"):
        values = {json.dumps(s.get(key)) for s in stats}
        if len(values) == 1:
            merged[key] = stats[0].get(key) if stats else None
    merged["devices"] = [s.get("device") for s in stats]
    return rows, merged
