"""The optional vLLM generation backend (``models.<name>.backend: vllm``) and the dispatch of a
generate job to its backend (:func:`generate_shard_by_backend`).

vLLM is imported only here and only when a job asks for it (``pip install vllm``: CUDA
wheels, never part of an install extra that CI or ``make install`` pulls). A vLLM job writes
the rows and statistics of the transformers backend (:func:`genmetrics.generation.transformers_backend.generate`):
the same keys, ids, order, ``prompt_id``/``sample``, word-budget cut (``_row``), finish reasons
and statistics, with ``backend`` saying which engine (and version) made them.

**The same inputs.** Prompts are rendered by :func:`genmetrics.data.prompts.format_prompt` and
tokenized by the checkpoint's Hugging Face tokenizer exactly as the transformers backend does
(special tokens added for ``template: base`` only), then handed to vLLM as token ids
(``{"prompt_token_ids": [...]}``), so a chat template's BOS is never doubled. The output's
token ids are cut at the first EOS (the generation config's and the tokenizer's, as
``generation._eos_ids``) and decoded by the same tokenizer (``skip_special_tokens``).

**The same distribution.** ``SamplingParams`` get every key of the transformers call
explicitly: the model's ``sampling`` over the checkpoint's ``generation_config.json`` over
transformers' global defaults (temperature 1, top_k 50, top_p 1, repetition_penalty 1), so
an unset ``top_k`` is 50 in both engines. ``do_sample: false`` is greedy (temperature 0).
``max_tokens`` is the word budget's ``max_new_tokens``, ``min_tokens`` 1 (transformers'
``min_new_tokens=1``). vLLM has no typical-p sampling: the plan refuses ``typical_p`` ≠ 1.

**Seeds.** Each text is its own request, seeded with
``batch_seed(seed, <row id>)``: the row id is the prompt's id, or ``<prompt id>~<j>`` for
sample j of ``samples_per_prompt`` (one request per sample with ``n=1``, rather than one
request with ``n=s``, so sample j's text depends on (seed, prompt, j) only, not on s nor on how
a vLLM version seeds a request's children). vLLM's per-request generator makes the sampled
tokens independent of which requests share a step; its logits are not guaranteed
batch-invariant, so a resumed job on the same GPU, vLLM version and tensor-parallel size gives
the same texts up to that floating-point caveat (the transformers backend's texts are
bitwise-determined by seed and batch). The texts differ from the transformers backend's (other
random streams, other kernels): ``backend`` is part of the job's params, so switching it
reruns that model's jobs only.

**Shards and resuming** follow the transformers backend: the same batch plan
(:func:`genmetrics.generation.transformers_backend.plan_batches` over token lengths, ``batch_size``), shard ``k``
of ``n`` owns batches ``k, k+n, ...``; the pending batches go to vLLM in calls of about
``requests_per_call`` requests (continuous batching inside each call), and each call's batches
are appended to the progress log before the next call starts.

**The engine hook.** ``$GENMETRICS_VLLM_MODULE`` names the module that provides ``LLM`` and
``SamplingParams`` (default ``vllm``); the CPU tests set it to :mod:`genmetrics.testing.fake_vllm`,
a deterministic fake with vLLM's interface. The module's name is recorded in ``backend`` and
is part of the progress key, so a fake run is never mistaken for (nor resumed as) a real one.
``$GENMETRICS_VLLM_ENGINE_ARGS`` (a JSON object) adds ``LLM`` keywords that belong to the
machine, not to the experiment (``gpu_memory_utilization`` on a shared GPU,
``enforce_eager``, ``max_model_len``): recorded in ``stats["backend"]["engine_args"]``, never
in the params.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from genmetrics import GenmetricsError
from genmetrics.data.prompts import DEFAULT_INSTRUCTION, format_prompt, max_new_tokens
from genmetrics.generation.progress import ProgressLog
from genmetrics.generation.transformers_backend import (
    GENERATION_CODE,
    GenerationSettings,
    _eos_ids,
    _row,
    batch_seed,
    plan_batches,
    progress_key,
    sample_prompts,
    shard_batches,
)

#: the engines a model's generate jobs can run on (``models.<name>.backend``)
BACKENDS = ("transformers", "vllm")
#: keys a non-default backend adds to a generate job's settings (absent for transformers,
#: so the params of every transformers job are what they always were)
BACKEND_KEYS = ("backend", "tensor_parallel_size")
#: the environment variable naming the module that provides ``LLM`` and ``SamplingParams``
ENGINE_ENV = "GENMETRICS_VLLM_MODULE"
#: the environment variable holding more ``LLM(...)`` keywords as a JSON object: runtime
#: settings of the machine such as ``{"gpu_memory_utilization": 0.5, "enforce_eager": true}``
#: (recorded in ``stats["backend"]["engine_args"]``, not in the params)
ENGINE_ARGS_ENV = "GENMETRICS_VLLM_ENGINE_ARGS"
#: ``LLM`` keywords the job sets itself (from its settings), never from the environment
_JOB_ARGS = ("model", "tokenizer", "revision", "seed", "tensor_parallel_size", "dtype")
_JOB_ARGS += ("trust_remote_code",)
#: modules whose code decides a vLLM job's texts (its code param; transformers jobs keep
#: ``GENERATION_CODE`` alone)
VLLM_CODE = (*GENERATION_CODE, "genmetrics.generation.vllm_backend")
#: transformers' values for sampling keys that neither the model's ``sampling`` nor the
#: checkpoint's ``generation_config.json`` set (``GenerationConfig._get_default_generation_params``)
TRANSFORMERS_DEFAULTS = {
    "temperature": 1.0,
    "top_k": 50,
    "top_p": 1.0,
    "repetition_penalty": 1.0,
    "typical_p": 1.0,
}


def split_backend(settings: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(backend, generation settings) of a generate job's settings: ``backend`` is
    ``{"backend": name, "tensor_parallel_size": n}`` (transformers, 1 when absent)."""
    rest = {k: v for k, v in settings.items() if k not in BACKEND_KEYS}
    backend = {
        "backend": settings.get("backend", "transformers"),
        "tensor_parallel_size": int(settings.get("tensor_parallel_size", 1)),
    }
    if backend["backend"] not in BACKENDS:
        raise GenmetricsError(f"backend must be one of {BACKENDS}, got {backend['backend']!r}")
    return backend, rest


def generate_shard_by_backend(
    prompts: Sequence[Mapping[str, Any]],
    model: str | Path,
    settings: Mapping[str, Any],
    *,
    seed: int,
    shard: int,
    progress: bool = True,
    progress_path: str | Path | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One generate job on the backend its settings name (what ``workflow/scripts/generate.py``
    calls): :func:`genmetrics.generation.transformers_backend.generate_shard` for transformers, :func:`generate_shard`
    here for vLLM. Both return the same rows and statistics; ``stats["backend"]`` names the
    engine and its version, and its ``sampling`` the decoding that ran (for transformers
    :func:`resolved_sampling`: the config's keys over the checkpoint's generation config over
    transformers' defaults, so an unset ``top_k`` shows as the 50 it is)."""
    backend, gen = split_backend(settings)
    if backend["backend"] == "vllm":
        return generate_shard(
            prompts,
            model,
            gen,
            seed=seed,
            shard=shard,
            tensor_parallel_size=backend["tensor_parallel_size"],
            progress=progress,
            progress_path=progress_path,
        )
    from genmetrics.generation.transformers_backend import generate_shard as transformers_shard
    from genmetrics.models.checkpoints import _model_path
    from genmetrics.provenance import package_versions

    rows, stats = transformers_shard(
        prompts, model, gen, seed=seed, shard=shard, progress=progress, progress_path=progress_path
    )
    version = package_versions(("transformers",)).get("transformers")
    s = GenerationSettings.of(gen)
    path, revision = _model_path(model)  # the decoding generate() ran, for the record
    values = resolved_sampling(s.sampling, _generation_config(path, revision, s.trust_remote_code))
    backend = {"name": "transformers", "version": version, "sampling": values}
    return rows, {**stats, "backend": backend}


def merge_backends(stats: Sequence[Mapping[str, Any]]) -> dict[str, Any] | list[Any]:
    """The ``backend`` of a merged generation (``merge_generations``): the shards' one record
    with their ``load_seconds`` summed, or the list of every shard's when they differ (shards
    run by other engine versions, say)."""
    backends = [s.get("backend") for s in stats]
    same = [
        {k: v for k, v in b.items() if k != "load_seconds"} if isinstance(b, Mapping) else b
        for b in backends
    ]
    if not same or any(b != same[0] for b in same) or not isinstance(same[0], dict):
        return backends
    if any("load_seconds" in b for b in backends):
        return {**same[0], "load_seconds": sum(float(b.get("load_seconds", 0)) for b in backends)}
    return same[0]


def engine_module() -> Any:
    """The module providing ``LLM`` and ``SamplingParams``: ``$GENMETRICS_VLLM_MODULE`` or
    ``vllm`` (an error that says how to install it when it is missing)."""
    name = os.environ.get(ENGINE_ENV) or "vllm"
    try:
        return importlib.import_module(name)
    except ImportError as e:
        hint = " (pip install vllm; it needs CUDA GPUs)" if name == "vllm" else ""
        raise GenmetricsError(f"backend vllm: cannot import {name!r}{hint}: {e}") from None


def engine_args() -> dict[str, Any]:
    """More ``LLM`` keywords from ``$GENMETRICS_VLLM_ENGINE_ARGS`` (a JSON object; none when
    unset); a keyword the job sets from its settings (model, seed, dtype, ...) is an error."""
    text = os.environ.get(ENGINE_ARGS_ENV, "").strip()
    if not text:
        return {}
    try:
        args = json.loads(text)
    except ValueError as e:
        raise GenmetricsError(f"{ENGINE_ARGS_ENV}: not JSON ({e})") from None
    if not isinstance(args, dict):
        raise GenmetricsError(f"{ENGINE_ARGS_ENV}: must be a JSON object, got {text!r}")
    taken = sorted(set(args) & set(_JOB_ARGS))
    if taken:
        raise GenmetricsError(
            f"{ENGINE_ARGS_ENV}: {taken} come from the job's settings, not the environment"
        )
    return args


def engine_version(module: Any) -> str | None:
    """The engine module's ``__version__`` (vLLM's; the fake's is ``fake``)."""
    return getattr(module, "__version__", None)


def resolved_sampling(sampling: Mapping[str, Any], generation_config: Any = None) -> dict[str, Any]:
    """The decoding transformers' ``generate`` runs, as the job calls it: ``do_sample`` (true
    unless the config says false) and ``sampling`` (the config's, after presets) over the
    checkpoint's generation config (attributes not ``None``) over
    :data:`TRANSFORMERS_DEFAULTS`. Greedy keeps ``repetition_penalty`` only (``generate``
    drops the other keys). ``top_k`` 0: no top-k filter. Only the keys a config can set are
    resolved: other logits settings a checkpoint's ``generation_config.json`` may carry
    (``min_p``, ``no_repeat_ngram_size``, ...) are not in the record."""
    out: dict[str, Any] = dict(TRANSFORMERS_DEFAULTS)
    for k in TRANSFORMERS_DEFAULTS:
        v = getattr(generation_config, k, None) if generation_config is not None else None
        if v is not None:
            out[k] = v
    out.update({k: v for k, v in sampling.items() if k in TRANSFORMERS_DEFAULTS})
    if not sampling.get("do_sample", True):
        return {"do_sample": False, "repetition_penalty": float(out["repetition_penalty"])}
    return {
        "do_sample": True,
        "temperature": float(out["temperature"]),
        "top_k": int(out["top_k"] or 0),
        "top_p": float(out["top_p"]),
        "repetition_penalty": float(out["repetition_penalty"]),
        "typical_p": float(out["typical_p"]),
    }


def sampling_values(
    sampling: Mapping[str, Any], generation_config: Any = None
) -> dict[str, float | int]:
    """:func:`resolved_sampling` as vLLM takes it: ``do_sample: false`` gives ``temperature``
    0 (greedy, and vLLM then ignores the other keys); ``typical_p`` other than 1 is an error
    (vLLM has none)."""
    out = resolved_sampling({**sampling, "do_sample": True}, generation_config)
    if out["typical_p"] != 1.0:
        raise GenmetricsError("backend vllm: typical_p sampling does not exist in vLLM")
    if not sampling.get("do_sample", True):
        out.update(temperature=0.0, top_k=0, top_p=1.0)
    return {k: out[k] for k in ("temperature", "top_k", "top_p", "repetition_penalty")}


def _engine_sampling(values: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`sampling_values` as ``SamplingParams`` keywords: ``top_k`` only when it filters
    (vLLM versions disagree on whether 0 or -1 disables it; the default disables it in all)."""
    out = dict(values)
    if not out["top_k"]:
        del out["top_k"]
    return out


def _generation_config(path: str, revision: str | None, trust_remote_code: bool) -> Any:
    """The checkpoint's ``generation_config.json`` as transformers reads it (``None``: none)."""
    from transformers import GenerationConfig

    try:
        return GenerationConfig.from_pretrained(
            path, revision=revision, trust_remote_code=trust_remote_code
        )
    except OSError:
        return None


class _Checkpoint:
    """What :func:`genmetrics.generation.transformers_backend._eos_ids` reads of a model: its generation config."""

    def __init__(self, generation_config: Any) -> None:
        self.generation_config = generation_config


def _cut(
    token_ids: Sequence[int], finish_reason: str | None, eos: Sequence[int]
) -> tuple[list[int], str, int]:
    """(tokens up to and including the first EOS, finish, tokens generated): as the
    transformers backend counts them (the EOS counts). vLLM keeps a stop token in
    ``token_ids``; if an engine dropped it (``finish_reason`` ``stop`` and no EOS in the
    ids), it still counts."""
    toks = list(token_ids)
    for j, t in enumerate(toks):
        if t in eos:
            return toks[: j + 1], "eos", j + 1
    if finish_reason == "stop":
        return toks, "eos", len(toks) + 1
    return toks, "length", len(toks)


#: requests per ``LLM.generate`` call (about; whole batches): vLLM schedules them continuously,
#: the progress log records them once the call returns
REQUESTS_PER_CALL = 1024


def generate_shard(
    prompts: Sequence[Mapping[str, Any]],
    model: str | Path,
    settings: Mapping[str, Any] | GenerationSettings,
    *,
    seed: int,
    shard: int,
    tensor_parallel_size: int = 1,
    progress: bool = True,
    progress_path: str | Path | None = None,
    requests_per_call: int = REQUESTS_PER_CALL,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Shard ``shard`` of ``prompts`` generated by vLLM: the rows and statistics of
    :func:`genmetrics.generation.transformers_backend.generate_shard` (see the module docstring), resuming from the
    progress log at ``progress_path``. ``model`` is a manifest, folder or hub id; the engine is
    ``LLM(model=<folder>, tokenizer=<folder>, seed=seed, tensor_parallel_size=...,
    dtype=<resolved>, trust_remote_code=...)``. Settings that place a transformers model
    (``device_map``, ``max_memory``) do not apply."""
    from genmetrics.models.checkpoints import (
        _model_path,
        load_tokenizer,
        model_fingerprint,
        resolve_dtype,
    )
    from genmetrics.provenance import code_digest

    s = GenerationSettings.of(settings)
    if requests_per_call < 1:
        raise GenmetricsError(f"requests_per_call must be >= 1, got {requests_per_call}")
    budget = max_new_tokens(s.words, s.tokens_per_word, s.token_margin)
    rows_in = sample_prompts(prompts, s.samples_per_prompt)
    path, revision = _model_path(model)
    tok = load_tokenizer(model, trust_remote_code=s.trust_remote_code)
    gen_config = _generation_config(path, revision, s.trust_remote_code)
    eos = _eos_ids(_Checkpoint(gen_config), tok)
    values = sampling_values(s.sampling, gen_config)
    dtype = resolve_dtype(s.dtype, "cuda")  # auto: bfloat16 on GPUs that compute it natively
    ids, encoded = _encode(rows_in, tok, s)
    batches = shard_batches(
        plan_batches(ids, [len(e) for e in encoded], s.batch_size, seed), shard, s.shards
    )
    engine = engine_module()
    extra_args = engine_args()
    engine_name = engine.__name__
    version = engine_version(engine)
    prompts_digest = hashlib.sha256(
        json.dumps(
            [
                [str(p["id"]), p["prompt"], *[p[k] for k in ("few_shot", "wrap") if k in p]]
                for p in rows_in
            ]
        ).encode()
    ).hexdigest()
    device = _describe_engine_device(engine_name, tensor_parallel_size)
    key = progress_key(
        settings=s.as_dict(),
        backend={"name": "vllm", "engine": engine_name, "version": version},
        device=device["name"],  # a resumed job on another GPU kind must not mix its batches
        tensor_parallel_size=int(tensor_parallel_size),
        seed=int(seed),
        shard=int(shard),
        max_new_tokens=budget,
        prompts=prompts_digest,
        weights=model_fingerprint(model) or str(model),
        dtype=dtype,
        code=code_digest(*VLLM_CODE),
    )
    results: dict[int, dict[str, Any]] = {}
    generated = resumed = generated_tokens = 0
    llm = None
    load_seconds = 0.0  # building the engine: not generation (the transformers backend's
    t0 = time.perf_counter()  # seconds also leave out loading the model)
    bar = tqdm(
        total=sum(len(b.members) for b in batches),
        desc="generate",
        unit="text",
        disable=not progress,
    )
    with ProgressLog(progress_path, key) as log:
        pending = []
        for batch in batches:
            done = log.get(batch.index, [ids[i] for i in batch.members])
            if done is None:
                pending.append(batch)
                continue
            resumed += 1
            for i, row in zip(batch.members, done, strict=True):
                results[i] = row
            bar.update(len(batch.members))
        for call in _calls(pending, requests_per_call):
            if llm is None:  # no engine (and no GPU memory) when every batch was resumed
                t_load = time.perf_counter()
                llm = engine.LLM(
                    model=path,
                    tokenizer=path,
                    revision=revision,
                    seed=int(seed),
                    tensor_parallel_size=int(tensor_parallel_size),
                    dtype=dtype,
                    trust_remote_code=s.trust_remote_code,
                    **extra_args,
                )
                load_seconds = time.perf_counter() - t_load
            members = [i for b in call for i in b.members]
            params = [
                engine.SamplingParams(
                    n=1,
                    seed=batch_seed(seed, ids[i]),
                    max_tokens=budget,
                    min_tokens=1,
                    stop_token_ids=list(eos),
                    skip_special_tokens=True,
                    **_engine_sampling(values),
                )
                for i in members
            ]
            outputs = llm.generate(
                [{"prompt_token_ids": list(encoded[i])} for i in members], params, use_tqdm=False
            )
            if len(outputs) != len(members):
                raise GenmetricsError(f"vLLM returned {len(outputs)} outputs for {len(members)}")
            by_member = {}
            for i, out in zip(members, outputs, strict=True):
                (completion,) = out.outputs  # n=1
                toks, finish, n = _cut(completion.token_ids, completion.finish_reason, eos)
                cont = tok.decode(toks, skip_special_tokens=True)
                by_member[i] = _row(rows_in[i], cont, n, finish, s.words, s.mode, s.language)
            for b in call:
                done = [by_member[i] for i in b.members]
                log.put(b.index, [ids[i] for i in b.members], done)
                for i, row in zip(b.members, done, strict=True):
                    results[i] = row
                generated += 1
                generated_tokens += sum(r["n_tokens"] for r in done)
                bar.update(len(b.members))
    bar.close()
    seconds = time.perf_counter() - t0 - load_seconds
    if llm is not None:
        del llm
        _release_gpu_memory()
    rows = [results[i] for i in sorted(results)]
    stats: dict[str, Any] = {
        "texts": len(rows),
        "new_tokens": sum(int(r["n_tokens"]) for r in rows),
        "batches": len(batches),
        "batches_generated": generated,
        "batches_resumed": resumed,
        "generated_tokens": generated_tokens,
        "seconds": seconds,
        "tokens_per_second": generated_tokens / max(seconds, 1e-9),
    }
    if s.mode == "few_shot":
        stats["unparsed"] = sum(1 for r in rows if not r["parsed"])
    return rows, {
        **stats,
        "max_new_tokens": budget,
        "dtype": dtype,
        "dtype_requested": s.dtype,
        "device": device,
        "device_map": None,
        "max_memory": None,
        "progress_key": key,
        "backend": {
            "name": "vllm",
            "version": version,
            "engine": engine_name,
            "tensor_parallel_size": int(tensor_parallel_size),
            "load_seconds": load_seconds,  # building the engine (weights, CUDA graphs)
            "engine_args": extra_args,
            "sampling": values,
            "stop_token_ids": list(eos),
        },
    }


def _encode(
    rows: Sequence[Mapping[str, Any]], tok: Any, s: GenerationSettings
) -> tuple[list[str], list[list[int]]]:
    """(row ids, token ids of each row's model input) as the transformers backend makes them:
    :func:`format_prompt`, special tokens added for ``template: base`` only; an empty encoding
    or a repeated id is an error."""
    if not rows:
        return [], []
    inputs = [
        format_prompt(
            p["prompt"],
            s.template,
            tok,
            s.instruction or DEFAULT_INSTRUCTION,
            s.mode,
            s.language,
            few_shot=p.get("few_shot"),
            wrap=p.get("wrap"),
        )
        for p in rows
    ]
    add_special = s.template == "base"
    # one batch call (the Rust tokenizer's encode_batch): the ids of one call per text, as
    # the transformers backend makes them (no padding, no truncation), in a third of the time
    encoded = [list(e) for e in tok(inputs, add_special_tokens=add_special)["input_ids"]]
    ids = [str(p["id"]) for p in rows]
    for i, e in enumerate(encoded):
        if not e:
            raise GenmetricsError(f"prompt {rows[i]['id']!r} encodes to no tokens")
    if len(set(ids)) != len(ids):
        dup = next(i for i in ids if ids.count(i) > 1)
        raise GenmetricsError(f"prompt id {dup!r} appears more than once")
    return ids, encoded


def _calls(batches: Sequence[Any], requests: int) -> list[list[Any]]:
    """Consecutive batches grouped into calls of at least ``requests`` requests (the last may
    be smaller); whole batches, so the progress log records each call's batches."""
    calls: list[list[Any]] = []
    current: list[Any] = []
    size = 0
    for b in batches:
        current.append(b)
        size += len(b.members)
        if size >= requests:
            calls.append(current)
            current, size = [], 0
    if current:
        calls.append(current)
    return calls


def _describe_engine_device(engine: str, tensor_parallel_size: int) -> dict[str, Any]:
    """Where the engine ran, in :func:`genmetrics.models.checkpoints.describe_device`'s shape: the CUDA
    devices of its tensor-parallel ranks (their names from torch), or the fake's ``cpu``."""
    if engine != "vllm":
        return {"name": f"cpu ({engine})", "devices": ["cpu"], "device_map": {}}
    import torch

    if not torch.cuda.is_available():
        return {"name": "cuda (not visible to this process)", "devices": [], "device_map": {}}
    devices = [f"cuda:{i}" for i in range(int(tensor_parallel_size))]
    names = [f"{d} {torch.cuda.get_device_name(i)}" for i, d in enumerate(devices)]
    return {"name": ", ".join(names), "devices": devices, "device_map": {}}


def _release_gpu_memory() -> None:
    """Best effort after the engine is dropped: collect it and return cached CUDA memory (a
    process that builds a second engine, as a test or a benchmark does, needs it back)."""
    import gc

    gc.collect()
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except ImportError:  # pragma: no cover - torch comes with transformers here
        pass
