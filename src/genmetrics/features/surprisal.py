"""Per-token surprisal (natural log) under an evaluator causal LM, ragged per text.

s_t = −ln softmax(logits_{t−1})[x_t]. The first real token is scored only when a start token
is prepended: ``prepend="auto"`` uses the tokenizer's own BOS if it adds one (Llama, Gemma),
otherwise EOS (the GPT-2 ``<|endoftext|>`` convention); ``"none"`` leaves the first token
unscored (the FACE convention with GPT-2: L tokens give L−1 values). Texts longer than
``max_tokens`` (start token included) are truncated.

With ``contexts`` (e.g. each generation's prompt), every text is scored *given* its context:
ids = [start] + ids(context) + ids(text), each tokenised without special tokens, and only the
text's tokens get values. This is the conditional surprisal behind the log-prob coherence of
Su & Collier (2023) (``compute_coherence.py``: [BOS] + prompt, continuation tokens scored).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.features.batching import TextBar, check_texts, right_padded_batches
from genmetrics.features.cache import (
    FeatureCache,
    cached_map,
    model_identity,
    run_stats,
    tokenizer_of,
)
from genmetrics.metrics.kinds import truncation_record

PREPEND = ("auto", "bos", "eos", "none")


def start_token(tok: Any, prepend: str) -> int | None:
    """The token id put before each text (or None), per the ``prepend`` policy."""
    if prepend not in PREPEND:
        raise GenmetricsError(f"surprisal prepend must be one of {PREPEND}, got {prepend!r}")
    if prepend == "none":
        return None
    if prepend == "bos" or (prepend == "auto" and _adds_bos(tok)):
        if tok.bos_token_id is None:
            raise GenmetricsError("prepend 'bos': the tokenizer has no BOS token")
        return int(tok.bos_token_id)
    if tok.eos_token_id is None:
        raise GenmetricsError("prepend 'eos': the tokenizer has no EOS token")
    return int(tok.eos_token_id)


def _adds_bos(tok: Any) -> bool:
    ids = tok("a")["input_ids"]
    return tok.bos_token_id is not None and len(ids) > 0 and ids[0] == tok.bos_token_id


def surprisal_texts(
    texts: Sequence[str],
    model: str | Path | tuple[Any, Any],
    *,
    prepend: str = "auto",
    max_tokens: int = 1024,
    batch_size: int = 8,
    device: str = "auto",
    cache_dir: str | Path | None = None,
    cache_key: str | None = None,
    progress: bool = False,
    contexts: Sequence[str] | None = None,
    stats: dict[str, Any] | None = None,
) -> list[np.ndarray]:
    """Surprisal arrays (float32, nats), one per text; cached by content like embeddings.

    ``contexts``: one string per text that conditions it (its values are not returned); an
    empty text then gives an empty array. ``stats``, when given, is filled with how the cache
    served the call (:func:`~genmetrics.features.cache.run_stats`) and with ``truncation``:
    how many texts the ``max_tokens`` cut (start token and context counted, as the evaluator
    reads them; :func:`~genmetrics.metrics.kinds.truncation_record`); a cut text is scored on
    its first tokens only, and a perplexity on this file says so (its score record's
    ``truncation`` and ``warnings``).
    """
    if contexts is None:
        keys = check_texts(texts)
    else:
        if len(contexts) != len(texts):
            raise GenmetricsError(f"{len(contexts)} contexts for {len(texts)} texts")
        keys = [
            json.dumps([c, t], ensure_ascii=False) for c, t in zip(contexts, texts, strict=True)
        ]
    identity = model_identity(model, cache_key) if cache_dir else None
    settings = {
        "prepend": prepend,
        "max_tokens": max_tokens,
        "model": identity,
        "kind": "surprisal" if contexts is None else "conditional_surprisal",
    }
    cache = FeatureCache(cache_dir if identity else None, settings)
    loaded: list[tuple[Any, Any]] = []

    def compute(batch_keys: list[str]) -> list[np.ndarray]:
        if not loaded:
            if isinstance(model, tuple):
                loaded.append(model)
            else:
                from genmetrics.models.checkpoints import gpu_device_map, load_causal_lm

                loaded.append(
                    load_causal_lm(model, device=device, device_map=gpu_device_map(device))
                )
        lm, tok = loaded[0]
        if contexts is None:
            pairs = [("", t) for t in batch_keys]
        else:
            pairs = [tuple(json.loads(k)) for k in batch_keys]
        return _surprisal(pairs, lm, tok, prepend, max_tokens, batch_size, bar)

    bar = TextBar("surprisal", progress)
    values, computed = cached_map(keys, compute, cache, bar=bar)
    if stats is not None:
        stats.update(run_stats(cache, settings, keys, computed, bool(loaded)))
        tok = loaded[0][1] if loaded else tokenizer_of(model)
        start = start_token(tok, prepend)
        ctxs = [""] * len(texts) if contexts is None else list(contexts)
        lengths = [len(_ids(tok, start, c, t)[0]) for c, t in zip(ctxs, texts, strict=True)]
        stats["truncation"] = truncation_record(lengths, max_tokens)
    return values


def _ids(tok: Any, start: int | None, ctx: str, text: str) -> tuple[list[int], int]:
    """The whole token ids the evaluator reads for ``text`` given ``ctx`` (start token,
    context, text; before the ``max_tokens`` cut) and the length of its prefix."""
    prefix = [] if start is None else [start]
    prefix += tok(ctx, add_special_tokens=False)["input_ids"] if ctx else []
    return prefix + tok(text, add_special_tokens=False, verbose=False)["input_ids"], len(prefix)


def _surprisal(
    pairs: list[tuple[str, str]],
    model: Any,
    tok: Any,
    prepend: str,
    max_tokens: int,
    batch_size: int,
    bar: Any,
) -> list[np.ndarray]:
    import torch

    device = next(model.parameters()).device
    start = start_token(tok, prepend)
    enc, first = [], []  # ids, and the position of each text's first scored token
    for i, (ctx, t) in enumerate(pairs):
        ids, n_prefix = _ids(tok, start, ctx, t)
        if n_prefix >= max_tokens:
            raise GenmetricsError(
                f"surprisal: text {i}'s context has {n_prefix} tokens, max_tokens={max_tokens}"
            )
        enc.append(ids[:max_tokens])
        first.append(max(n_prefix, 1))
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    out: list[np.ndarray | None] = [None] * len(pairs)
    for idx, lens, ids, mask in right_padded_batches(enc, batch_size, pad, device, bar):
        with torch.no_grad():
            logits = model(input_ids=ids, attention_mask=mask).logits.float()
        logp = torch.log_softmax(logits[:, :-1], dim=-1)
        nll = -logp.gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1).cpu().numpy()
        for r, i in enumerate(idx):
            out[i] = nll[r, first[i] - 1 : lens[r] - 1].astype(np.float32)
    return out


def surprisal_source(
    rows: Sequence[dict[str, Any]], part: str, source: str, model: Any, **settings: Any
) -> dict[str, Any]:
    """The surprisal job: the arrays of one ragged feature file (``ids``, ``prompt_ids``,
    ``offsets``, ``values``); a continuation is scored given its prompt. ``settings`` may
    hold ``stats`` (filled as :func:`surprisal_texts` fills it: the file's ``truncation``)."""
    from genmetrics.metrics.kinds import part_texts, row_links
    from genmetrics.npz import ragged_to_arrays

    kept, texts = part_texts(rows, part, source)
    contexts = None
    if part == "continuation":
        prompts = {str(r["id"]): r["prompt"] for r in rows}
        contexts = [prompts[r["id"]] for r in kept]
    offsets, values = ragged_to_arrays(surprisal_texts(texts, model, contexts=contexts, **settings))
    return {**row_links(kept), "offsets": offsets, "values": values}
