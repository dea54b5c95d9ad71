"""Coherence of a continuation with its prompt, in the two published (incompatible) definitions.

* ``definition="simcse"`` (default; SimCTG / Contrastive Decoding, Su et al. 2022, Li et al.
  2022): cosine similarity between sentence-encoder embeddings of the prompt and of the
  continuation, averaged over rows. The papers use ``princeton-nlp/sup-simcse-bert-base-uncased``
  (``pooling="pooler"``); offline the default encoder is all-MiniLM-L6-v2
  (:func:`genmetrics.assets.minilm_dir`, mean pooling over the attention mask), so absolute
  values differ from the papers' unless ``model``/``pooling`` point at SimCSE.
* ``definition="logprob"`` (Su & Collier 2023, "Contrastive Search Is What You Need",
  ``open_ended_generation/english/compute_coherence.py``): mean over continuation tokens of
  log p(x_t | prompt, x_<t) under an evaluator causal LM (``model``; the paper uses OPT-2.7B),
  averaged over rows. Context ids = [BOS] + ids(prompt) (EOS when the tokenizer has no BOS),
  continuation tokenised separately, both without special tokens. We use ``log_softmax``
  (upstream: ``np.log(softmax)`` in float32; differences ~1e-6).

Both skip rows whose continuation has no whitespace token (``continuation.strip().split()``
empty), as upstream; ``n["skipped"]`` counts them. Rows must carry ``prompt`` and
``continuation`` strings.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics.registry import MetricResult, register


def _pairs(records: Any) -> tuple[list[str], list[str], int]:
    if isinstance(records, (str, bytes)) or not isinstance(records, Sequence):
        raise GenmetricsError(
            "coherence: expected a list of records with 'prompt' and 'continuation'"
        )
    if not records:
        raise GenmetricsError("coherence: no records")
    prompts: list[str] = []
    conts: list[str] = []
    skipped = 0
    for i, row in enumerate(records):
        if not isinstance(row, Mapping):
            raise GenmetricsError(f"coherence: record {i} is {type(row).__name__}, not a mapping")
        for key in ("prompt", "continuation"):
            if not isinstance(row.get(key), str):
                raise GenmetricsError(
                    f"coherence: record {i} (id {row.get('id', '?')!r}) has no string {key!r}"
                )
        if not row["continuation"].strip().split():
            skipped += 1
            continue
        prompts.append(row["prompt"])
        conts.append(row["continuation"])
    if not conts:
        raise GenmetricsError("coherence: every continuation is empty")
    return prompts, conts, skipped


@functools.lru_cache(maxsize=2)
def _load_encoder(model: str, device: str) -> tuple[Any, Any]:
    """(encoder, tokenizer), kept for the next call (loading dominates small runs)."""
    from genmetrics.models import load_encoder

    return load_encoder(model, device=device)


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    na = np.linalg.norm(a, axis=1)
    nb = np.linalg.norm(b, axis=1)
    return (a * b).sum(1) / np.maximum(na * nb, 1e-12)


def logprob_coherence(
    prompts: list[str],
    continuations: list[str],
    model: str,
    *,
    batch_size: int = 8,
    device: str = "auto",
) -> np.ndarray:
    """Per-row mean log-prob (nats) of the continuation tokens given [BOS] + prompt tokens."""
    from genmetrics.models import load_causal_lm

    net, tok = load_causal_lm(model, device=device)
    return logprob_coherence_with(net, tok, prompts, continuations, batch_size=batch_size)


def logprob_coherence_with(
    net: Any, tok: Any, prompts: list[str], continuations: list[str], *, batch_size: int = 8
) -> np.ndarray:
    """:func:`logprob_coherence` with an already loaded model and tokenizer (NaN rows: the
    continuation has no token)."""
    import torch

    start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    if start is None:
        raise GenmetricsError(
            "coherence: the evaluator tokenizer has neither a BOS nor an EOS token"
        )
    limit = getattr(net.config, "max_position_embeddings", None) or getattr(
        net.config, "n_positions", None
    )
    seqs: list[tuple[list[int], int]] = []  # (ids, context length)
    for i, (p, c) in enumerate(zip(prompts, continuations, strict=True)):
        ctx = [start] + tok(p, add_special_tokens=False)["input_ids"]
        cont = tok(c, add_special_tokens=False)["input_ids"]
        if limit is not None and len(ctx) + len(cont) > limit:
            raise GenmetricsError(
                f"coherence: row {i} has {len(ctx) + len(cont)} tokens, more than the evaluator's "
                f"{limit} positions"
            )
        seqs.append((ctx + cont, len(ctx)))
    result = np.full(len(seqs), np.nan)
    device = next(net.parameters()).device
    order = np.argsort([len(s) for s, _ in seqs], kind="stable")
    with torch.inference_mode():
        for b in range(0, len(order), batch_size):
            idx = order[b : b + batch_size]
            width = max(len(seqs[i][0]) for i in idx)
            ids = torch.full((len(idx), width), start, dtype=torch.long)
            mask = torch.zeros((len(idx), width), dtype=torch.long)
            for r, i in enumerate(idx):
                s = seqs[i][0]
                ids[r, : len(s)] = torch.tensor(s)
                mask[r, : len(s)] = 1
            logits = net(input_ids=ids.to(device), attention_mask=mask.to(device)).logits
            logp = torch.log_softmax(logits.float(), dim=-1)
            for r, i in enumerate(idx):
                s, c0 = seqs[i]
                if len(s) == c0:
                    continue
                target = torch.tensor(s[c0:], device=logp.device)
                lp = logp[r, c0 - 1 : len(s) - 1].gather(1, target[:, None])[:, 0]
                result[i] = float(lp.double().mean())
    return result


@register(
    "coherence",
    input="records",
    reference="none",
    values=("coherence",),
    params={
        "definition": "simcse",
        "model": None,
        "pooling": "mean",
        "batch_size": 32,
        "max_tokens": 256,
        "device": "auto",
    },
)
def coherence(
    candidate: list[dict],
    *,
    definition: str = "simcse",
    model: str | None = None,
    pooling: str = "mean",
    batch_size: int = 32,
    max_tokens: int = 256,
    device: str = "auto",
) -> MetricResult:
    """Mean prompt–continuation coherence: cos(enc(prompt), enc(continuation)) (``simcse``) or
    mean token log-prob of the continuation under an evaluator LM (``logprob``)."""
    prompts, conts, skipped = _pairs(candidate)
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise GenmetricsError(
            f"coherence: batch_size must be a positive integer, got {batch_size!r}"
        )
    if definition == "simcse":
        if pooling not in ("mean", "cls", "pooler"):
            raise GenmetricsError(
                f"coherence: pooling must be mean | cls | pooler, got {pooling!r}"
            )
        if model is None:
            from genmetrics.assets import minilm_dir

            model = str(minilm_dir())
        from genmetrics.features.embed import embed_texts
        from genmetrics.models import resolve_device

        for i, p in enumerate(prompts):
            if not p.strip():
                raise GenmetricsError(
                    f"coherence: kept row {i} has an empty prompt; definition=simcse needs "
                    "text on both sides"
                )
        emb = embed_texts(
            prompts + conts,
            _load_encoder(str(model), resolve_device(device)),
            kind="sentence_encoder",
            pooling=pooling,
            batch_size=batch_size,
            max_tokens=int(max_tokens),
        ).astype(np.float64)
        per_row = _cosine(emb[: len(prompts)], emb[len(prompts) :])
    elif definition == "logprob":
        if model is None:
            raise GenmetricsError(
                "coherence: definition=logprob needs param 'model' (a causal LM folder or hub id; "
                "the paper uses facebook/opt-2.7b)"
            )
        per_row = logprob_coherence(
            prompts, conts, str(model), batch_size=batch_size, device=device
        )
        tokenless = int(np.isnan(per_row).sum())
        skipped += tokenless
        per_row = per_row[~np.isnan(per_row)]
        if per_row.size == 0:
            raise GenmetricsError("coherence: no continuation has any token")
    else:
        raise GenmetricsError(f"coherence: definition must be simcse | logprob, got {definition!r}")
    return MetricResult(
        values={"coherence": float(np.mean(per_row))},
        extras={"per_row": per_row, "definition": definition, "model": str(model)},
        n={"candidate": len(per_row), "skipped": skipped},
    )
