"""Load metric inputs from files (JSONL texts, NPZ features) and produce score records.

Used by the CLI (``genmetrics score``) and the workflow's score rule, so both give the same
numbers. A score record follows the design contract: ``{"metric", "dataset", "source",
"reference", "values", "params", "n", "seconds", "versions"}``.
"""

from __future__ import annotations

import platform
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from genmetrics import GenmetricsError, __version__
from genmetrics.clean import count_words
from genmetrics.io import load_embeddings, load_ragged, read_jsonl, read_texts
from genmetrics.metrics.registry import Metric, MetricResult, compute, get, resolve_params

TEXT_INPUTS = ("texts", "paired_texts", "records", "pos")


def load_input(metric: Metric, path: str | Path, role: str) -> tuple[Any, list[dict] | None]:
    """Read ``path`` in the form ``metric.input`` needs; also return the raw rows for texts."""
    path = Path(path)
    kind = metric.input
    if kind == "embeddings":
        _require_suffix(path, ".npz", metric, role)
        ids, emb = load_embeddings(path)
        return emb, [{"id": str(i)} for i in ids]
    if kind == "surprisal":
        _require_suffix(path, ".npz", metric, role)
        ids, seqs = load_ragged(path)
        return seqs, [{"id": str(i)} for i in ids]
    _require_suffix(path, ".jsonl", metric, role)
    if kind == "pos":
        rows = read_jsonl(path)
        if rows and all("tags" in r for r in rows):
            return [list(r["tags"]) for r in rows], rows
        rows = read_texts(path)
        from genmetrics.features.pos import tag_texts

        return tag_texts([r["text"] for r in rows]), rows
    rows = read_texts(path)
    if kind == "records":
        return rows, rows
    return [r["text"] for r in rows], rows


def _require_suffix(path: Path, suffix: str, metric: Metric, role: str) -> None:
    if path.suffix != suffix:
        raise GenmetricsError(
            f"{path}: metric {metric.name!r} reads {metric.input} from a {suffix} file ({role})"
        )


def align_pairs(
    ref_rows: Sequence[Mapping[str, Any]], cand_rows: Sequence[Mapping[str, Any]], where: str
) -> tuple[list[int], list[int]]:
    """Indices pairing candidates with references: by candidate ``prompt_id``/``source_id`` →
    reference ``id`` when every candidate has one, else by position (equal counts required)."""
    link = next((k for k in ("prompt_id", "source_id") if all(k in r for r in cand_rows)), None)
    if link:
        pos = {str(r.get("id")): i for i, r in enumerate(ref_rows)}
        ri, ci = [], []
        for j, r in enumerate(cand_rows):
            i = pos.get(str(r[link]))
            if i is not None:
                ri.append(i)
                ci.append(j)
        if not ri:
            raise GenmetricsError(f"{where}: no candidate {link} matches a reference id")
        return ri, ci
    if len(ref_rows) != len(cand_rows):
        raise GenmetricsError(
            f"{where}: paired metric needs equal counts or a prompt_id/source_id link "
            f"({len(ref_rows)} references vs {len(cand_rows)} candidates)"
        )
    return list(range(len(ref_rows))), list(range(len(cand_rows)))


def score_files(
    name: str,
    candidate: str | Path,
    reference: str | Path | None = None,
    params: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Compute metric ``name`` on files; return ``{"metric", "values", "params", "n", ...}``."""
    metric = get(name)
    merged = resolve_params(metric, params)
    if metric.reference == "required" and reference is None:
        raise GenmetricsError(f"metric {name!r} needs --reference")
    cand, cand_rows = load_input(metric, candidate, "candidate")
    ref = ref_rows = None
    if reference is not None and metric.reference != "none":
        ref, ref_rows = load_input(metric, reference, "reference")
    if metric.input == "paired_texts" and ref is not None:
        ri, ci = align_pairs(ref_rows or [], cand_rows or [], f"{candidate} vs {reference}")
        ref, cand = [ref[i] for i in ri], [cand[j] for j in ci]
    t0 = time.perf_counter()
    result = compute(name, cand, ref, merged)
    seconds = time.perf_counter() - t0
    return record(metric, result, merged, seconds, cand_rows, ref_rows, cand, ref)


def record(
    metric: Metric,
    result: MetricResult,
    params: Mapping[str, Any],
    seconds: float,
    cand_rows: Sequence[Mapping[str, Any]] | None,
    ref_rows: Sequence[Mapping[str, Any]] | None,
    cand: Any,
    ref: Any,
) -> dict[str, Any]:
    n = {"candidate": _count(cand)}
    if ref is not None:
        n["reference"] = _count(ref)
    n.update(result.n)
    values = dict(result.values)
    if metric.input in TEXT_INPUTS and cand_rows and all("text" in r for r in cand_rows):
        # length control (seed 002): every text score comes with the mean length in words
        values.setdefault("mean_words", float(np.mean([count_words(r["text"]) for r in cand_rows])))
    out = {
        "metric": metric.name,
        "values": values,
        "params": dict(params),
        "n": n,
        "seconds": round(seconds, 4),
        "versions": versions(),
    }
    if result.extras:
        out["extras"] = result.extras  # curves and histograms, for plots
    return out


def _count(x: Any) -> int:
    return int(x.shape[0]) if isinstance(x, np.ndarray) else len(x)


def versions() -> dict[str, str]:
    import importlib.metadata as md

    out = {"genmetrics": __version__, "python": platform.python_version()}
    for pkg in ("numpy", "scikit-learn", "torch", "transformers"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            pass
    return out
