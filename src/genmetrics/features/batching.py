"""Length-sorted, right-padded batches of token ids (shared by embeddings and surprisal)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from genmetrics import GenmetricsError


def check_texts(texts: Sequence[str]) -> list[str]:
    texts = list(texts)
    for i, t in enumerate(texts):
        if not isinstance(t, str) or not t.strip():
            raise GenmetricsError(f"text {i} is empty or not a string")
    return texts


def right_padded_batches(
    encoded: Sequence[Sequence[int]],
    batch_size: int,
    pad_id: int,
    device: Any,
    desc: str,
    progress: bool = False,
) -> Iterator[tuple[np.ndarray, list[int], Any, Any]]:
    """Yield ``(indices, lengths, input_ids, attention_mask)`` for batches of similar length
    (sorted, so little padding), right-padded with ``pad_id`` and moved to ``device``."""
    import torch

    order = np.argsort([len(e) for e in encoded], kind="stable")
    for start in tqdm(range(0, len(order), batch_size), desc=desc, disable=not progress):
        idx = order[start : start + batch_size]
        lens = [len(encoded[i]) for i in idx]
        width = max(lens)
        ids = torch.full((len(idx), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(idx), width), dtype=torch.long)
        for r, i in enumerate(idx):
            ids[r, : lens[r]] = torch.tensor(encoded[i])
            mask[r, : lens[r]] = 1
        yield idx, lens, ids.to(device), mask.to(device)
