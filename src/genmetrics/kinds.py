"""Input kinds: the one table of what a metric can read, and the one place inputs are checked.

Each kind has a file suffix, a loader (file → data + per-row metadata with ``id`` and, for
generations, ``prompt_id``/``source_id``), a validator (applied once, at the edge: in
:func:`genmetrics.metrics.compute`) and the path pattern of the workflow file that holds it.
``paired`` is not a kind: it is a property of a metric (``Metric.paired``), and any kind can be
paired by ``prompt_id``/``source_id`` with :func:`pair_rows`.

============  ======  =========================================================  ==========
kind          suffix  workflow file                                              config key
============  ======  =========================================================  ==========
texts         .jsonl  results/data/{dataset}/references.jsonl or                 —
                      results/generations/{dataset}/{source}.jsonl
records       .jsonl  same as texts (rows with ``prompt`` and ``continuation``)   —
embeddings    .npz    results/features/embed/{featurizer}/{dataset}/{source}.npz featurizer
surprisal     .npz    results/features/surprisal/{evaluator}/{dataset}/…npz      evaluator
pos           .jsonl  results/features/pos/{dataset}/{source}.jsonl              —
============  ======  =========================================================  ==========
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from genmetrics import GenmetricsError

Rows = list[dict[str, Any]]


#: the part of a source's rows that features are computed from: the whole ``text``, or only
#: the model's ``continuation`` (coherence); the ``prompts`` source is always its ``prompt``.
PARTS = ("text", "continuation")


def texts_path(dataset: str, source: str) -> str:
    """The rows of a source: human references, the dataset's prompts, or a model's generations."""
    if source == "references":
        return f"results/data/{dataset}/references.jsonl"
    if source == "prompts":
        return f"results/data/{dataset}/prompts.jsonl"
    return f"results/generations/{dataset}/{source}.jsonl"


def part_texts(rows: Sequence[Mapping[str, Any]], part: str, source: str) -> tuple[Rows, list[str]]:
    """The rows and texts to featurize for one part of a source.

    ``prompts`` rows give their ``prompt``; other sources give ``part`` (``text`` or
    ``continuation``). A continuation with no word is left out, as SimCTG skips it; the kept
    rows keep ``id`` and ``prompt_id`` so features can be paired with their prompt.
    """
    if part not in PARTS:
        raise GenmetricsError(f"unknown part {part!r}; known: {', '.join(PARTS)}")
    field = "prompt" if source == "prompts" else part
    kept, texts = [], []
    for i, r in enumerate(rows, start=1):
        if not isinstance(r.get(field), str):
            raise GenmetricsError(f"{source}: row {i} (id={r.get('id')!r}) has no string {field!r}")
        if part == "continuation" and not r[field].split():
            continue
        kept.append({k: str(r[k]) for k in ("id", "prompt_id") if k in r})
        texts.append(r[field])
    return kept, texts


def row_links(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """The arrays a feature file keeps to pair its rows: ``ids``, and ``prompt_ids`` when the
    rows come from generations."""
    out = {"ids": [str(r["id"]) for r in rows]}
    if rows and all("prompt_id" in r for r in rows):
        out["prompt_ids"] = [str(r["prompt_id"]) for r in rows]
    return out


# ------------------------------------------------------------------ validators


def validate_embeddings(x: Any, what: str) -> np.ndarray:
    """A feature matrix: 2-D, numeric, finite, non-empty."""
    a = np.asarray(x)
    if a.ndim != 2:
        raise GenmetricsError(f"{what}: features must be 2-D [N, d], got shape {a.shape}")
    if a.shape[0] == 0 or a.shape[1] == 0:
        raise GenmetricsError(f"{what}: empty feature matrix {a.shape}")
    if not np.issubdtype(a.dtype, np.number) or np.issubdtype(a.dtype, np.complexfloating):
        raise GenmetricsError(f"{what}: features must be real numbers, got {a.dtype}")
    bad = ~np.isfinite(a).all(axis=1)
    if bad.any():
        rows = np.flatnonzero(bad)[:5].tolist()
        raise GenmetricsError(f"{what}: {int(bad.sum())} row(s) with NaN/inf, first rows {rows}")
    return a


def validate_texts(texts: Any, what: str) -> list[str]:
    """A non-empty list of strings. Empty strings are allowed: real model output has empty
    generations, and each metric states what it does with them (its docstring)."""
    if isinstance(texts, (str, bytes)):
        raise GenmetricsError(f"{what}: expected a list of texts, got one string")
    texts = list(texts)
    if not texts:
        raise GenmetricsError(f"{what}: no texts")
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise GenmetricsError(f"{what}: item {i} is {type(t).__name__}, not str")
    return texts


def validate_records(records: Any, what: str) -> list[dict[str, Any]]:
    """Rows with string ``prompt`` and ``continuation`` (generations)."""
    if isinstance(records, (str, bytes)) or not isinstance(records, Sequence):
        raise GenmetricsError(f"{what}: expected a list of records")
    if not records:
        raise GenmetricsError(f"{what}: no records")
    for i, row in enumerate(records):
        if not isinstance(row, Mapping):
            raise GenmetricsError(f"{what}: record {i} is {type(row).__name__}, not a mapping")
        for key in ("prompt", "continuation"):
            if not isinstance(row.get(key), str):
                raise GenmetricsError(
                    f"{what}: record {i} (id {row.get('id', '?')!r}) has no string {key!r}"
                )
    return list(records)


def validate_surprisal(seqs: Any, what: str) -> list[np.ndarray]:
    """Per-text 1-D float sequences (nats), finite; empty sequences are allowed."""
    if isinstance(seqs, np.ndarray) and seqs.ndim == 1 and seqs.dtype != object:
        raise GenmetricsError(f"{what}: expected a list of per-text sequences, got one array")
    out = []
    for i, s in enumerate(seqs):
        a = np.asarray(s)
        if a.ndim != 1 or not np.issubdtype(a.dtype, np.number):
            raise GenmetricsError(f"{what}: sequence {i} must be 1-D numbers, got {a.shape}")
        if not np.isfinite(a).all():
            raise GenmetricsError(f"{what}: sequence {i} has NaN/inf")
        out.append(a.astype(np.float64, copy=False))
    if not out:
        raise GenmetricsError(f"{what}: no sequences")
    return out


def validate_pos(tags: Any, what: str) -> list[list[str]]:
    """Per-text lists of tag strings."""
    out = []
    for i, t in enumerate(tags):
        if isinstance(t, str) or not all(isinstance(x, str) for x in t):
            raise GenmetricsError(f"{what}: item {i} must be a list of tag strings")
        out.append(list(t))
    if not out:
        raise GenmetricsError(f"{what}: no tagged texts")
    return out


# ------------------------------------------------------------------ loaders


def _load_texts(path: Path) -> tuple[list[str], Rows]:
    from genmetrics.io import read_texts

    rows = read_texts(path, allow_empty=True)
    return [r["text"] for r in rows], rows


def _load_records(path: Path) -> tuple[Rows, Rows]:
    from genmetrics.io import read_texts

    rows = read_texts(path, allow_empty=True)
    return rows, rows


def _feature_rows(path: Path, ids: np.ndarray) -> Rows:
    """Row ids of a feature file, with ``prompt_id`` when the file has ``prompt_ids``."""
    from genmetrics.io import load_npz

    rows = [{"id": str(i)} for i in ids]
    z = load_npz(path)
    if "prompt_ids" in z:
        if len(z["prompt_ids"]) != len(rows):
            raise GenmetricsError(
                f"{path}: 'prompt_ids' has {len(z['prompt_ids'])} rows, not {len(rows)}"
            )
        for r, p in zip(rows, z["prompt_ids"], strict=True):
            r["prompt_id"] = str(p)
    return rows


def _load_embeddings(path: Path) -> tuple[np.ndarray, Rows]:
    from genmetrics.io import load_embeddings

    ids, emb = load_embeddings(path)
    return emb, _feature_rows(path, ids)


def _load_surprisal(path: Path) -> tuple[list[np.ndarray], Rows]:
    from genmetrics.io import load_ragged

    ids, seqs = load_ragged(path)
    return seqs, _feature_rows(path, ids)


def _load_pos(path: Path) -> tuple[list[list[str]], Rows]:
    from genmetrics.io import read_jsonl, read_texts

    rows = read_jsonl(path)
    if rows and all("tags" in r for r in rows):
        return [list(r["tags"]) for r in rows], rows
    from genmetrics.features.pos import tag_texts

    rows = read_texts(path, allow_empty=True)
    return tag_texts([r["text"] for r in rows]), rows


@dataclass(frozen=True)
class Kind:
    """One input kind: how it is stored, loaded, checked and where the workflow writes it."""

    name: str
    suffix: str
    loader: Callable[[Path], tuple[Any, Rows]]
    validator: Callable[[Any, str], Any]
    pattern: str
    config_key: str | None = None

    def path(self, dataset: str, source: str, part: str = "text", **keys: str) -> str:
        """The workflow file of this kind for one (dataset, source[, part])."""
        if self.pattern == "texts":
            return texts_path(dataset, source)
        if part != "text" and source != "prompts":
            source = f"{source}.{part}"
        return self.pattern.format(dataset=dataset, source=source, **keys)

    def load(self, path: str | Path, what: str) -> tuple[Any, Rows]:
        path = Path(path)
        if path.suffix != self.suffix:
            raise GenmetricsError(f"{path}: {what} must be a {self.suffix} file of {self.name}")
        if path.is_dir():
            raise GenmetricsError(f"{path}: {what} is a directory, not a {self.suffix} file")
        return self.loader(path)


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind("texts", ".jsonl", _load_texts, validate_texts, "texts"),
        Kind("records", ".jsonl", _load_records, validate_records, "texts"),
        Kind(
            "embeddings",
            ".npz",
            _load_embeddings,
            validate_embeddings,
            "results/features/embed/{featurizer}/{dataset}/{source}.npz",
            "featurizer",
        ),
        Kind(
            "surprisal",
            ".npz",
            _load_surprisal,
            validate_surprisal,
            "results/features/surprisal/{evaluator}/{dataset}/{source}.npz",
            "evaluator",
        ),
        Kind(
            "pos",
            ".jsonl",
            _load_pos,
            validate_pos,
            "results/features/pos/{dataset}/{source}.jsonl",
        ),
    )
}

#: kinds whose rows carry texts (every score on them reports ``mean_words``)
TEXT_KINDS = ("texts", "records", "pos")


def kind(name: str) -> Kind:
    try:
        return KINDS[name]
    except KeyError:
        raise GenmetricsError(f"unknown input kind {name!r}; known: {', '.join(KINDS)}") from None


def pair_rows(
    ref_rows: Sequence[Mapping[str, Any]], cand_rows: Sequence[Mapping[str, Any]], where: str
) -> tuple[list[int], list[int]]:
    """Indices pairing each candidate with its reference.

    By candidate ``prompt_id`` (or ``source_id``) → reference ``id`` when every candidate row
    has one; else by position, which needs equal counts. Nothing is paired silently: a
    duplicate reference id, or a candidate whose link matches no reference, is an error
    naming ``where`` and the id.
    """
    link = next((k for k in ("prompt_id", "source_id") if all(k in r for r in cand_rows)), None)
    if link is None:
        if len(ref_rows) != len(cand_rows):
            raise GenmetricsError(
                f"{where}: a paired metric needs equal counts or a prompt_id/source_id link "
                f"({len(ref_rows)} references vs {len(cand_rows)} candidates)"
            )
        return list(range(len(ref_rows))), list(range(len(cand_rows)))
    ids = [str(r.get("id")) for r in ref_rows]
    dup = [i for i, c in Counter(ids).items() if c > 1]
    if dup:
        raise GenmetricsError(f"{where}: reference id {dup[0]!r} occurs more than once")
    pos = {i: n for n, i in enumerate(ids)}
    missing = [str(r[link]) for r in cand_rows if str(r[link]) not in pos]
    if missing:
        raise GenmetricsError(
            f"{where}: {len(missing)} candidate(s) whose {link} matches no reference id, "
            f"first {missing[0]!r}"
        )
    return [pos[str(r[link])] for r in cand_rows], list(range(len(cand_rows)))
