"""Content-addressed feature cache: a text already featurized with the same settings is reused.

Key = sha256 of the featurizer settings (JSON, sorted) and the text. The settings hold what
determines the numbers (:func:`model_identity`): the model's content hash (weights, config,
tokenizer; never its name), the featurizer options, and the torch/transformers versions. Each entry is one ``.npy``
file ``{root}/{key[:2]}/{key}.npy`` written atomically, so parallel jobs can share a cache.

An entry that cannot be read, or is not a one-dimensional float array, is recomputed (a
warning names it); entries of one call that must share a shape (embeddings) and do not are an
error naming the odd entry.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.io import atomic_path

_log = logging.getLogger("genmetrics")


def settings_digest(settings: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()


def model_identity(model: Any, cache_key: str | None = None) -> dict[str, Any] | None:
    """What identifies a featurizer's model for the cache, or ``None`` (do not cache).

    A manifest or local folder is identified by its content hash; a hub id (no local files to
    hash) only by ``cache_key`` when the caller gives one (with the hub revision in it).
    """
    from genmetrics.models.checkpoints import model_fingerprint
    from genmetrics.provenance import package_versions

    fp = model_fingerprint(model)
    if fp is None and cache_key is None:
        return None
    versions = package_versions(("torch", "transformers"))
    del versions["python"]  # not part of the key (entries stay valid across Python patches)
    return {"weights_sha256": fp, "name": None if fp else cache_key, "versions": versions}


def tokenizer_of(model: Any) -> Any:
    """The tokenizer of a featurizer's ``model``: the second of a loaded ``(model, tokenizer)``
    pair, else loaded alone (no weights) from its manifest, folder or hub id."""
    if isinstance(model, tuple):
        return model[1]
    from genmetrics.models.checkpoints import load_tokenizer

    return load_tokenizer(model)


class FeatureCache:
    """Entries of one featurizer setting under ``root`` (``None``: no cache). ``key`` is the
    digest of the settings (:func:`settings_digest`); a text's entry is
    ``sha256(key + "\\0" + text)``, so the key names exactly the entries a run read."""

    def __init__(self, root: str | Path | None, settings: Mapping[str, Any]):
        self.root = Path(root) if root else None
        self.key = settings_digest(settings)
        self.prefix = self.key.encode()

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
        try:  # mapped first: a damaged or forged header fails before any allocation
            value = np.array(np.load(p, mmap_mode="r", allow_pickle=False))
        except (ValueError, OSError):
            return None  # a damaged entry is recomputed
        if value.ndim != 1 or value.dtype.kind != "f":  # every entry: one text's float vector
            _log.warning(
                "feature cache: %s holds a %s array of shape %s, not a vector of floats; "
                "recomputed",
                p,
                value.dtype,
                value.shape,
            )
            return None
        return value

    def put(self, text: str, value: np.ndarray) -> None:
        if self.root is None:
            return
        # an entry can be recomputed: no fsync per entry (slow on NFS/Lustre)
        with atomic_path(self._path(text), suffix=".tmp.npy", durable=False) as tmp:
            np.save(tmp, np.asarray(value), allow_pickle=False)


def cached_map(
    texts: Sequence[str],
    compute: Callable[[list[str]], list[np.ndarray]],
    cache: FeatureCache,
    chunk: int = 256,
    same_shape: bool = False,
    bar: Any | None = None,
) -> tuple[list[np.ndarray], int]:
    """Return one array per text, computing only the chunks of texts not all in ``cache``.

    The distinct texts are sorted and cut into chunks of ``chunk``; a chunk whose every text
    is cached is read, any other chunk is computed whole and written to the cache as soon as
    it is done. A killed job keeps its finished chunks, and the rerun computes the rest in the
    same chunks, so the same batches give the same bytes as a run that was never stopped (a
    chunk cut off half-written is computed again whole). With ``same_shape`` (embeddings of
    one model) arrays of different shapes are an error naming the odd cache entry. ``bar``
    (:class:`genmetrics.features.batching.TextBar`) is started with the number of texts to
    compute (``compute`` advances it; none: nothing is drawn) and closed at the end. Returns
    (arrays, texts computed).
    """
    found = {t: cache.get(t) for t in dict.fromkeys(texts)}
    ordered = sorted(found)
    chunks = [ordered[i : i + chunk] for i in range(0, len(ordered), chunk)]
    todo = [c for c in chunks if any(found[t] is None for t in c)]
    if todo and cache.root is not None:
        _log.info(
            "feature cache %s: computing %d of %d chunks (%d texts), the rest cached",
            cache.root,
            len(todo),
            len(chunks),
            sum(map(len, todo)),
        )
    if bar is not None:
        bar.start(sum(map(len, todo)))
    try:
        for part in todo:
            for t, v in zip(part, compute(part), strict=True):
                cache.put(t, v)
                found[t] = v
    finally:
        if bar is not None:
            bar.close()
    if same_shape:
        computed = {t for part in todo for t in part}
        _check_same_shape(found, computed, cache)
    return [found[t] for t in texts], sum(map(len, todo))


def _check_same_shape(
    found: Mapping[str, np.ndarray], computed: set[str], cache: FeatureCache
) -> None:
    """All arrays of ``found`` have one shape; else an error naming a cached entry of the odd
    shape (the shape of the computed arrays is the right one, else the most common)."""
    shapes = Counter(np.shape(v) for v in found.values())
    if len(shapes) <= 1:
        return
    made = {np.shape(found[t]) for t in computed}
    right = next(iter(made)) if len(made) == 1 else shapes.most_common(1)[0][0]
    odd = next((t for t, v in found.items() if np.shape(v) != right and t not in computed), None)
    if odd is None:  # the featurizer itself
        raise GenmetricsError(
            f"the featurizer returned arrays of different shapes {sorted(shapes)}"
        )
    raise GenmetricsError(
        f"feature cache {cache.root}: entry {cache._path(odd)} has shape {np.shape(found[odd])}, "
        f"the other features of this call {right} (a damaged or foreign entry: delete it, or "
        "the cache folder, and rerun)"
    )


def run_stats(
    cache: FeatureCache,
    settings: Mapping[str, Any],
    texts: Sequence[str],
    computed: int,
    model_loaded: bool,
) -> dict[str, Any]:
    """How the cache served one featurization (the ``stats`` of ``embed_texts`` and
    ``surprisal_texts``): ``cache_key`` (None without a cache), ``cache_dir``, the
    ``cache_settings`` it digests (model content hash, options, versions), ``texts``, how many
    distinct texts were ``computed`` and read ``from_cache``, and whether the model was
    loaded at all (a call served whole by the cache never loads it)."""
    return {
        "cache_key": cache.key if cache.root is not None else None,
        "cache_dir": str(cache.root) if cache.root is not None else None,
        "cache_settings": dict(settings),
        "texts": len(texts),
        "computed": computed,
        "from_cache": len(set(texts)) - computed,
        "model_loaded": model_loaded,
    }


#: settings of a feature job that say where entries are filed, not what the features are
WHERE_FILED = ("cache_dir", "cache_key")


def made_by(
    name: str, model: Any, settings: Mapping[str, Any], stats: Mapping[str, Any]
) -> dict[str, Any]:
    """What made a feature file (its provenance's ``features``): the featurizer or evaluator
    ``name``, ``checkpoint_sha256`` (the content hash of the weights it ran: from the cache's
    model identity, else :func:`~genmetrics.models.checkpoints.model_fingerprint`), its
    ``settings``, and the cache it was served from (``cache_key``, ``cache_dir``,
    ``cache_settings``: :func:`run_stats`). Scoring compares the checkpoint hashes of the two
    sides (:func:`genmetrics.scoring.from_files.check_same_features`)."""
    identity = (stats.get("cache_settings") or {}).get("model") or {}
    sha = identity.get("weights_sha256")
    if sha is None and not isinstance(model, tuple):
        from genmetrics.models.checkpoints import model_fingerprint

        sha = model_fingerprint(model)
    return {
        "name": name,
        "checkpoint_sha256": sha,
        "settings": {k: v for k, v in settings.items() if k not in WHERE_FILED},
        **{k: stats.get(k) for k in ("cache_key", "cache_dir", "cache_settings")},
    }
