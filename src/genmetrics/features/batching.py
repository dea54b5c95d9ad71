"""Length-sorted, right-padded batches of token ids (shared by embeddings and surprisal)."""

from __future__ import annotations

import sys
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


class TextBar:
    """One progress bar over texts (on stderr; ``progress=False``: silent):
    :func:`genmetrics.features.cache.cached_map` starts it with the number of texts it
    computes (none: no bar is drawn) and closes it; :func:`right_padded_batches` advances it
    after each batch. One bar for a whole call, however many cache chunks it computes."""

    def __init__(self, desc: str, progress: bool) -> None:
        self.desc, self.progress = desc, progress
        self._bar: tqdm | None = None

    def start(self, total: int) -> None:
        if self.progress and total and self._bar is None:
            self._bar = tqdm(total=total, desc=self.desc, unit="text", file=sys.stderr)

    def update(self, n: int) -> None:
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def right_padded_batches(
    encoded: Sequence[Sequence[int]],
    batch_size: int,
    pad_id: int,
    device: Any,
    bar: TextBar | None = None,
) -> Iterator[tuple[np.ndarray, list[int], Any, Any]]:
    """Yield ``(indices, lengths, input_ids, attention_mask)`` for batches of similar length
    (sorted, so little padding), right-padded with ``pad_id`` and moved to ``device``;
    ``bar`` (:class:`TextBar`) advances by each batch's texts once the caller has used it."""
    import torch

    order = np.argsort([len(e) for e in encoded], kind="stable")
    for start in range(0, len(order), batch_size):
        idx = order[start : start + batch_size]
        lens = [len(encoded[i]) for i in idx]
        width = max(lens)
        ids = torch.full((len(idx), width), pad_id, dtype=torch.long)
        mask = torch.zeros((len(idx), width), dtype=torch.long)
        for r, i in enumerate(idx):
            ids[r, : lens[r]] = torch.tensor(encoded[i])
            mask[r, : lens[r]] = 1
        yield idx, lens, ids.to(device), mask.to(device)
        if bar is not None:
            bar.update(len(idx))
