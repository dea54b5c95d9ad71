"""The metric registry: one entry per metric, shared by the CLI, the Python API and the workflow.

A metric module registers its public function with :func:`register`::

    @register(
        "precision_recall",
        input="embeddings",          # what the function receives, see INPUT_KINDS
        reference="required",        # "required" | "none" | "optional"
        values=("precision", "recall", "density", "coverage"),
        params={"k": 4, "pca": 0.9, "strict": True, "method": "auto", "seed": 0},
    )
    def precision_recall(reference, candidate, *, k=4, pca=0.9, ...) -> MetricResult: ...

The function is called with keyword arguments only: ``candidate=...`` (and ``reference=...``
when the metric takes one) plus the merged parameters. It returns a :class:`MetricResult`
(or a plain ``{name: float}`` dict). Input kinds and what the function receives:

- ``embeddings``: ``np.ndarray`` float [N, d] (validated finite, 2-D).
- ``texts``: ``list[str]`` (validated non-empty strings).
- ``paired_texts``: ``list[str]``; reference and candidate are aligned one-to-one
  (candidate ``prompt_id`` → reference ``id`` when present, else by position).
- ``records``: ``list[dict]`` rows with at least ``text`` (generations also carry
  ``prompt``/``continuation``), for metrics that need the prompt (coherence).
- ``surprisal``: ``list[np.ndarray]`` per-text surprisal in nats.
- ``pos``: ``list[list[str]]`` PTB tags per text (tagged on the fly from texts if needed).
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from genmetrics import GenmetricsError

INPUT_KINDS = ("embeddings", "texts", "paired_texts", "records", "surprisal", "pos")
ReferenceMode = Literal["required", "none", "optional"]


@dataclass
class MetricResult:
    """What a metric returns: named scalar values, plus arrays for plots (curves, histograms)."""

    values: dict[str, float]
    extras: dict[str, Any] = field(default_factory=dict)
    n: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Metric:
    name: str
    func: Callable[..., MetricResult | Mapping[str, float]]
    input: str
    reference: ReferenceMode
    values: tuple[str, ...]
    params: Mapping[str, Any]
    description: str

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "input": self.input,
            "reference": self.reference,
            "values": list(self.values),
            "params": dict(self.params),
            "description": self.description,
        }


_REGISTRY: dict[str, Metric] = {}


def register(
    name: str,
    *,
    input: str,
    reference: ReferenceMode,
    values: tuple[str, ...] | list[str],
    params: Mapping[str, Any] | None = None,
    description: str | None = None,
) -> Callable[[Callable], Callable]:
    """Decorator that registers ``func`` under ``name`` (snake_case, stable)."""
    if input not in INPUT_KINDS:
        raise ValueError(f"metric {name!r}: input must be one of {INPUT_KINDS}, got {input!r}")
    if reference not in ("required", "none", "optional"):
        raise ValueError(f"metric {name!r}: bad reference mode {reference!r}")

    def deco(func: Callable) -> Callable:
        if name in _REGISTRY and _REGISTRY[name].func is not func:
            raise ValueError(f"metric {name!r} registered twice")
        doc = description or (inspect.getdoc(func) or "").split("\n\n")[0].replace("\n", " ")
        _REGISTRY[name] = Metric(
            name=name,
            func=func,
            input=input,
            reference=reference,
            values=tuple(values),
            params=dict(params or {}),
            description=doc,
        )
        return func

    return deco


_loaded = False


def _load_all() -> None:
    """Import every module of ``genmetrics.metrics`` (not starting with ``_``) once."""
    global _loaded
    if _loaded:
        return
    import genmetrics.metrics as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        if info.name.startswith("_") or info.name == "registry":
            continue
        importlib.import_module(f"genmetrics.metrics.{info.name}")
    _loaded = True


def get(name: str) -> Metric:
    _load_all()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise GenmetricsError(
            f"unknown metric {name!r}; known metrics: {', '.join(sorted(_REGISTRY))}"
        ) from None


def all_metrics() -> dict[str, Metric]:
    _load_all()
    return dict(sorted(_REGISTRY.items()))


def resolve_params(metric: Metric, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Merge user parameters over the metric's defaults; unknown names are an error."""
    params = dict(params or {})
    unknown = sorted(set(params) - set(metric.params))
    if unknown:
        raise GenmetricsError(
            f"metric {metric.name!r}: unknown parameter(s) {', '.join(unknown)}; "
            f"known: {', '.join(sorted(metric.params)) or '(none)'}"
        )
    return {**metric.params, **params}


def validate_embeddings(x: Any, what: str) -> np.ndarray:
    """Check a feature matrix once at the edge: 2-D, numeric, finite, non-empty."""
    a = np.asarray(x)
    if a.ndim != 2:
        raise GenmetricsError(f"{what}: features must be 2-D [N, d], got shape {a.shape}")
    if a.shape[0] == 0 or a.shape[1] == 0:
        raise GenmetricsError(f"{what}: empty feature matrix {a.shape}")
    if not np.issubdtype(a.dtype, np.number):
        raise GenmetricsError(f"{what}: features must be numeric, got {a.dtype}")
    bad = ~np.isfinite(a).all(axis=1)
    if bad.any():
        rows = np.flatnonzero(bad)[:5].tolist()
        raise GenmetricsError(f"{what}: {int(bad.sum())} row(s) with NaN/inf, first rows {rows}")
    return a


def validate_texts(texts: Any, what: str) -> list[str]:
    if isinstance(texts, str):
        raise GenmetricsError(f"{what}: expected a list of texts, got one string")
    texts = list(texts)
    if not texts:
        raise GenmetricsError(f"{what}: no texts")
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise GenmetricsError(f"{what}: item {i} is {type(t).__name__}, not str")
        if not t.strip():
            raise GenmetricsError(f"{what}: item {i} is empty or whitespace-only")
    return texts


def compute(
    name: str,
    candidate: Any,
    reference: Any = None,
    params: Mapping[str, Any] | None = None,
) -> MetricResult:
    """Run metric ``name`` on already-loaded inputs (see the module docstring for the kinds)."""
    metric = get(name)
    merged = resolve_params(metric, params)
    if metric.reference == "required" and reference is None:
        raise GenmetricsError(f"metric {name!r} needs a reference")
    kwargs: dict[str, Any] = {"candidate": _validate(metric.input, candidate, "candidate")}
    if metric.reference != "none" and reference is not None:
        kwargs["reference"] = _validate(metric.input, reference, "reference")
    out = metric.func(**kwargs, **merged)
    if not isinstance(out, MetricResult):
        out = MetricResult(values={k: float(v) for k, v in dict(out).items()})
    out.values = {k: float(v) for k, v in out.values.items()}
    return out


def _validate(kind: str, x: Any, what: str) -> Any:
    if kind == "embeddings":
        return validate_embeddings(x, what)
    if kind in ("texts", "paired_texts"):
        return validate_texts(x, what)
    return x
