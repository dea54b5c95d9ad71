"""Content-addressed feature cache: a text already featurized with the same settings is reused.

Key = sha256 of the featurizer settings (JSON, sorted) and the text. Each entry is one ``.npy``
file ``{root}/{key[:2]}/{key}.npy`` written atomically, so parallel jobs can share a cache.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from genmetrics.io import atomic_path


def settings_digest(settings: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()


class FeatureCache:
    def __init__(self, root: str | Path | None, settings: Mapping[str, Any]):
        self.root = Path(root) if root else None
        self.prefix = settings_digest(settings).encode()

    def _path(self, text: str) -> Path:
        assert self.root is not None
        key = hashlib.sha256(self.prefix + b"\0" + text.encode("utf-8")).hexdigest()
        return self.root / key[:2] / f"{key}.npy"

    def get(self, text: str) -> np.ndarray | None:
        if self.root is None:
            return None
        p = self._path(text)
        if not p.exists():
            return None
        try:
            return np.load(p, allow_pickle=False)
        except (ValueError, OSError):
            return None  # a damaged entry is recomputed

    def put(self, text: str, value: np.ndarray) -> None:
        if self.root is None:
            return
        with atomic_path(self._path(text), suffix=".tmp.npy") as tmp:
            np.save(tmp, np.asarray(value), allow_pickle=False)


def cached_map(
    texts: Sequence[str],
    compute: Callable[[list[str]], list[np.ndarray]],
    cache: FeatureCache,
) -> tuple[list[np.ndarray], int]:
    """Return one array per text, computing only texts missing from ``cache`` (deduplicated).

    Returns (arrays, number of texts computed).
    """
    out: list[np.ndarray | None] = [cache.get(t) for t in texts]
    missing = sorted({t for t, v in zip(texts, out, strict=True) if v is None})
    if missing:
        computed = dict(zip(missing, compute(missing), strict=True))
        for t, v in computed.items():
            cache.put(t, v)
        out = [computed[t] if v is None else v for t, v in zip(texts, out, strict=True)]
    return [o for o in out if o is not None], len(missing)
