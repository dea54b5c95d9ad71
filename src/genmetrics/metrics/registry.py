"""The metric contract: one registry shared by the CLI, the Python API and the workflow.

A metric module registers its public function once; everything else is read from it::

    @register(
        "precision_recall",
        input="embeddings",                      # a kind of genmetrics.kinds.KINDS
        reference="required",                    # "none" (default) | "required" | "optional" | "prompts"
        values={"precision": HIGHER, "recall": HIGHER, ...},   # direction of better
        params={"k": (Interval(int, 1, None), "neighbours per point")},
        upstream="prdc 0.2",
        citation="Kynkäänniemi et al. (2019)",
    )
    def precision_recall(reference, candidate, *, k: int = 4) -> MetricResult: ...

* **Defaults** come from the function signature only; ``params`` declares each keyword
  parameter's constraints (:mod:`genmetrics.params`) and one-line doc. Registration fails if
  the two disagree or a default breaks its own constraint.
* **Values** name every number the metric returns and whether higher or lower is better
  (``None``: neither, e.g. a length or a count).
* **Inputs**: ``input`` is a kind of :data:`genmetrics.kinds.KINDS`; ``paired=True`` aligns
  candidate rows with reference rows by ``prompt_id``/``source_id`` (any kind). ``part`` says
  which part of each generation the features are computed from (``text`` or only the
  ``continuation``); ``reference="prompts"`` compares each source with the dataset's prompts
  (featurized the same way), e.g. coherence. ``links=True``: the function also takes
  ``links``, for each candidate the indices of every reference with the same prompt
  (:func:`genmetrics.kinds.link_groups`), or ``None`` when the two sets share no prompt; the
  metric then pairs where it can and compares sets otherwise (FACE).
* **Models and assets**: a metric downloads nothing; what it needs comes from features
  (embed / surprisal rules) and from ``assets(params)``, the names of offline assets
  (:data:`genmetrics.assets.ASSETS`) that the workflow fetches in rules. A metric that must
  run an encoder itself (BERTScore and BERTScore homogenization: token-level matching) says
  so with ``loads_model(params)``, and the workflow runs it in a GPU-resourced rule of its own.
* **Sizes**: ``min_items(params)`` = (the fewest items each set needs, the parameter that
  asks for them), e.g. ``(k + 1, "k")``; the workflow checks it right after cleaning.
* **Per pair**: a paired metric that averages one number per (candidate, reference) pair
  returns them as ``extras["per_pair"][value]`` (``rouge``, ``bertscore``); the human
  agreement analysis (:mod:`genmetrics.analysis.human`) correlates them with people.
* **Aggregation** (per-text metrics): how per-text values become the corpus value and what
  happens to texts the metric cannot score (too short, empty); the result's ``n`` reports
  how many were excluded.

The function is called with keyword arguments only: ``candidate=...`` (and ``reference=...``
when the metric takes one) plus every parameter, already checked. It returns a
:class:`MetricResult` or a ``{name: float}`` dict.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from genmetrics import GenmetricsError
from genmetrics.kinds import KINDS
from genmetrics.params import Constraint, Param, check_params

ReferenceMode = Literal["required", "none", "optional", "prompts"]
HIGHER, LOWER = "higher", "lower"
#: what ``params`` maps each name to: (constraint or constraints, one-line doc)
ParamSpec = tuple[Constraint | tuple[Constraint, ...], str]
_INPUT_ARGS = ("candidate", "reference", "links")


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
    values: Mapping[str, str | None]
    params: Mapping[str, Param]
    description: str
    paired: bool = False
    links: bool = False
    part: str = "text"
    aggregation: str = "corpus"
    upstream: str = ""
    citation: str = ""
    assets: Callable[[Mapping[str, Any]], tuple[str, ...]] = lambda params: ()
    loads_model: Callable[[Mapping[str, Any]], bool] = lambda params: False
    min_items: Callable[[Mapping[str, Any]], tuple[int, str]] = lambda params: (1, "")

    @property
    def defaults(self) -> dict[str, Any]:
        return {k: p.default for k, p in self.params.items()}

    def check_params(self, params: Mapping[str, Any] | None, where: str | None = None) -> dict:
        """Every parameter as the metric will run with it (defaults filled, values checked)."""
        return check_params(self.params, params, where or f"{self.name} params")

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "input": self.input,
            "paired": self.paired,
            "links": self.links,
            "part": self.part,
            "reference": self.reference,
            "values": dict(self.values),
            "params": {
                k: {"default": p.default, "accepts": p.describe(), "doc": p.doc}
                for k, p in self.params.items()
            },
            "aggregation": self.aggregation,
            "upstream": self.upstream,
            "citation": self.citation,
            "description": self.description,
        }


_REGISTRY: dict[str, Metric] = {}


def register(
    name: str,
    *,
    input: str,
    reference: ReferenceMode = "none",
    values: Mapping[str, str | None],
    params: Mapping[str, ParamSpec] | None = None,
    paired: bool = False,
    links: bool = False,
    part: str = "text",
    aggregation: str = "corpus",
    upstream: str = "",
    citation: str = "",
    assets: Callable[[Mapping[str, Any]], tuple[str, ...]] | None = None,
    loads_model: Callable[[Mapping[str, Any]], bool] | None = None,
    min_items: Callable[[Mapping[str, Any]], tuple[int, str]] | None = None,
    description: str | None = None,
) -> Callable[[Callable], Callable]:
    """Decorator that registers ``func`` under ``name`` (snake_case, stable)."""
    if input not in KINDS:
        raise ValueError(f"metric {name!r}: input must be one of {tuple(KINDS)}, got {input!r}")
    if reference not in ("required", "none", "optional", "prompts"):
        raise ValueError(f"metric {name!r}: bad reference mode {reference!r}")
    if (paired or links) and reference == "none":
        raise ValueError(f"metric {name!r}: a paired or linked metric needs a reference")
    if paired and links:
        raise ValueError(f"metric {name!r}: paired and links exclude each other")
    for v, d in values.items():
        if d not in (HIGHER, LOWER, None):
            raise ValueError(f"metric {name!r}: value {v!r} has bad direction {d!r}")

    def deco(func: Callable) -> Callable:
        if name in _REGISTRY and _REGISTRY[name].func is not func:
            raise ValueError(f"metric {name!r} registered twice")
        doc = description or (inspect.getdoc(func) or "").split("\n\n")[0].replace("\n", " ")
        _REGISTRY[name] = Metric(
            name=name,
            func=func,
            input=input,
            reference=reference,
            values=dict(values),
            params=_declare(name, func, params or {}),
            description=doc,
            paired=paired,
            links=links,
            part=part,
            aggregation=aggregation,
            upstream=upstream,
            citation=citation,
            assets=assets or (lambda params: ()),
            loads_model=loads_model or (lambda params: False),
            min_items=min_items or (lambda params: (1, "")),
        )
        return func

    return deco


def _declare(name: str, func: Callable, specs: Mapping[str, ParamSpec]) -> dict[str, Param]:
    """Params from the signature's keyword defaults, constraints and docs from ``specs``."""
    sig = inspect.signature(func)
    defaults = {
        k: p.default
        for k, p in sig.parameters.items()
        if k not in _INPUT_ARGS and p.kind is not inspect.Parameter.VAR_KEYWORD
    }
    missing = [k for k, v in defaults.items() if v is inspect.Parameter.empty]
    if missing:
        raise ValueError(f"metric {name!r}: parameter(s) without a default: {missing}")
    if set(defaults) != set(specs):
        raise ValueError(
            f"metric {name!r}: declared params {sorted(specs)} differ from the signature's "
            f"{sorted(defaults)}"
        )
    out = {}
    for k, default in defaults.items():
        constraints, doc = specs[k]
        if isinstance(constraints, Constraint):
            constraints = (constraints,)
        p = Param(k, default, tuple(constraints), doc)
        if p.check(default, f"metric {name!r} default {k}") != default:
            raise ValueError(f"metric {name!r}: default {k}={default!r} is not canonical")
        out[k] = p
    return out


_loaded = False


def _load_all() -> None:
    """Import every module of ``genmetrics.metrics`` (not starting with ``_``) once."""
    global _loaded
    if _loaded:
        return
    # the package's folder, found without importing the package (its __init__ imports us)
    for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
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
    """Merge user parameters over the metric's defaults, each checked (see Metric.check_params)."""
    return metric.check_params(params)


def compute(
    name: str,
    candidate: Any,
    reference: Any = None,
    params: Mapping[str, Any] | None = None,
    links: Sequence[Sequence[int]] | None = None,
) -> MetricResult:
    """Run metric ``name`` on already-loaded inputs of its kind (see :mod:`genmetrics.kinds`);
    ``links`` (metrics registered with ``links=True``): per candidate, its references' indices."""
    metric = get(name)
    merged = metric.check_params(params)
    if metric.reference in ("required", "prompts") and reference is None:
        raise GenmetricsError(f"metric {name!r} needs a reference ({metric.reference})")
    validate = KINDS[metric.input].validator
    kwargs: dict[str, Any] = {"candidate": validate(candidate, "candidate")}
    if metric.reference != "none" and reference is not None:
        kwargs["reference"] = validate(reference, "reference")
    if metric.paired and "reference" in kwargs:
        if len(kwargs["reference"]) != len(kwargs["candidate"]):
            raise GenmetricsError(
                f"metric {name!r} is paired: {len(kwargs['reference'])} references vs "
                f"{len(kwargs['candidate'])} candidates"
            )
    if metric.links:
        kwargs["links"] = _check_links(name, links, kwargs)
    elif links is not None:
        raise GenmetricsError(f"metric {name!r} takes no links")
    out = metric.func(**kwargs, **merged)
    if not isinstance(out, MetricResult):
        out = MetricResult(values=dict(out))
    out.values = {k: float(v) for k, v in out.values.items()}
    unknown = sorted(set(out.values) - set(metric.values))
    if unknown:
        raise RuntimeError(f"metric {name!r} returned undeclared value(s) {unknown}")
    return out


def _check_links(
    name: str, links: Sequence[Sequence[int]] | None, kwargs: Mapping[str, Any]
) -> list[list[int]] | None:
    """Links as lists of valid reference indices, one list per candidate (or None)."""
    if links is None or "reference" not in kwargs:
        return None
    n_ref, n_cand = len(kwargs["reference"]), len(kwargs["candidate"])
    out = [[int(j) for j in group] for group in links]
    if len(out) != n_cand:
        raise GenmetricsError(f"metric {name!r}: {len(out)} link groups for {n_cand} candidates")
    for i, group in enumerate(out):
        if not group or min(group) < 0 or max(group) >= n_ref:
            raise GenmetricsError(
                f"metric {name!r}: candidate {i} links to {group}, not to references 0..{n_ref - 1}"
            )
    return out
