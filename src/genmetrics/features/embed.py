"""Text embeddings from a causal LM or a sentence encoder, batched by length, cached by content.

- ``causal_lm``: the hidden state of layer ``layer`` (default: last, after the final norm, as
  HF returns it) at the **last real token** of each text: the MAUVE / pr-4-llm convention
  (right padding, attention mask, ``truncation=True, max_length``).
- ``sentence_encoder``: ``pooling="mean"`` (default) averages the last hidden states over the
  attention mask (sentence-transformers pooling for all-MiniLM-L6-v2 and all-mpnet-base-v2);
  ``"cls"`` takes the first token, ``"pooler"`` the model's pooler output (SimCSE).
"""

from __future__ import annotations

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

KINDS = ("causal_lm", "sentence_encoder")
POOLING = ("mean", "cls", "pooler")


def embed_texts(
    texts: Sequence[str],
    model: str | Path | tuple[Any, Any],
    *,
    kind: str = "causal_lm",
    batch_size: int = 16,
    max_tokens: int = 512,
    layer: int = -1,
    pooling: str = "mean",
    device: str = "auto",
    cache_dir: str | Path | None = None,
    cache_key: str | None = None,
    progress: bool = False,
    stats: dict[str, Any] | None = None,
) -> np.ndarray:
    """Embed ``texts``; return float32 [N, d]. ``model`` is a path/manifest/hub id or a loaded
    ``(model, tokenizer)`` pair. With ``cache_dir`` and ``cache_key`` (naming the featurizer),
    texts already embedded by the same model *content* and settings are read from the cache
    (:func:`~genmetrics.features.cache.model_identity`). ``stats``, when given, is filled with
    how the cache served the call (:func:`~genmetrics.features.cache.run_stats`) and with
    ``truncation``: how many texts had more than ``max_tokens`` tokens, embedded from their
    first ``max_tokens`` only (:func:`~genmetrics.metrics.kinds.truncation_record`; counted
    with the tokenizer, cached texts included)."""
    if kind not in KINDS:
        raise GenmetricsError(f"featurizer kind must be one of {KINDS}, got {kind!r}")
    if pooling not in POOLING:
        raise GenmetricsError(f"pooling must be one of {POOLING}, got {pooling!r}")
    texts = check_texts(texts)
    identity = model_identity(model, cache_key) if cache_dir else None
    settings = {"kind": kind, "max_tokens": max_tokens, "layer": layer, "model": identity}
    if kind == "sentence_encoder" and pooling != "mean":
        settings["pooling"] = pooling
    cache = FeatureCache(cache_dir if identity else None, settings)
    loaded: list[tuple[Any, Any]] = []

    def compute(batch_texts: list[str]) -> list[np.ndarray]:
        if not loaded:
            loaded.append(_load(model, kind, device))
        lm, tok = loaded[0]
        emb = _embed(batch_texts, lm, tok, kind, batch_size, max_tokens, layer, pooling, bar)
        return list(emb)

    bar = TextBar("embed", progress)
    vecs, computed = cached_map(texts, compute, cache, same_shape=True, bar=bar)
    if stats is not None:
        stats.update(run_stats(cache, settings, texts, computed, bool(loaded)))
        tok = loaded[0][1] if loaded else tokenizer_of(model)
        lengths = [len(tok(t, verbose=False)["input_ids"]) for t in texts]
        stats["truncation"] = truncation_record(lengths, max_tokens)
    return np.stack(vecs).astype(np.float32)


def _load(model: Any, kind: str, device: str) -> tuple[Any, Any]:
    if isinstance(model, tuple):
        return model
    from genmetrics.models.checkpoints import gpu_device_map, load_causal_lm, load_encoder

    if kind == "causal_lm":
        return load_causal_lm(model, device=device, device_map=gpu_device_map(device))
    return load_encoder(model, device=device)


def _embed(
    texts: list[str],
    model: Any,
    tok: Any,
    kind: str,
    batch_size: int,
    max_tokens: int,
    layer: int,
    pooling: str,
    bar: Any,
) -> np.ndarray:
    import torch

    device = next(model.parameters()).device
    enc = [tok(t, truncation=True, max_length=max_tokens)["input_ids"] for t in texts]
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    out: list[np.ndarray | None] = [None] * len(texts)
    for idx, lens, ids, mask in right_padded_batches(enc, batch_size, pad, device, bar):
        with torch.no_grad():
            res = model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
        if kind == "causal_lm":
            h = res.hidden_states[layer]
            last = torch.tensor(lens, device=h.device) - 1
            vec = h[torch.arange(len(idx), device=h.device), last]
        elif pooling == "pooler":
            vec = res.pooler_output
        else:
            h = res.last_hidden_state if layer == -1 else res.hidden_states[layer]
            if pooling == "cls":
                vec = h[:, 0]
            else:
                m = mask.to(h.device).unsqueeze(-1).to(h.dtype)
                vec = (h * m).sum(1) / m.sum(1).clamp(min=1e-9)
        vec = vec.float().cpu().numpy()
        for r, i in enumerate(idx):
            out[i] = vec[r]
    return np.stack(out)


def embed_source(
    rows: Sequence[dict[str, Any]], part: str, source: str, model: Any, **settings: Any
) -> dict[str, Any]:
    """The embed job: the arrays of one feature file (``ids``, ``prompt_ids``, ``emb``) for one
    part of a source's rows (:func:`genmetrics.metrics.kinds.part_texts`); ``settings`` may
    hold ``stats`` (filled as :func:`embed_texts` fills it: the file's ``truncation``)."""
    from genmetrics.metrics.kinds import part_texts, row_links

    kept, texts = part_texts(rows, part, source)
    return {**row_links(kept), "emb": embed_texts(texts, model, **settings)}
