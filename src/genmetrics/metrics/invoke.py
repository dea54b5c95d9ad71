"""Running a registered metric on inputs already loaded: :func:`compute` looks the metric up
and checks its params, :func:`run` takes the :class:`~genmetrics.metrics.registry.Metric` and
checked params a score job resolved once. Both validate the inputs at the edge (each kind's
validator), pass links and prompt ids to the metrics that take them, and refuse a mean over
nothing."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.metrics._contract import check_links, check_prompt_ids, refuse_texts
from genmetrics.metrics.kinds import KINDS
from genmetrics.metrics.registry import Metric, MetricResult, get


def compute(
    name: str | Metric,
    candidate: Any,
    reference: Any = None,
    params: Mapping[str, Any] | None = None,
    links: Sequence[Sequence[int]] | None = None,
    prompt_ids: Sequence[Any] | None = None,
) -> MetricResult:
    """Run metric ``name`` (or a :class:`Metric` already looked up) on already-loaded inputs of
    its kind (see :mod:`genmetrics.metrics.kinds`), its ``params`` checked first; ``links``
    (metrics registered with ``links=True``): per candidate, its references' indices;
    ``prompt_ids`` (``by_prompt=True``): per candidate, the id of its prompt."""
    metric = name if isinstance(name, Metric) else get(name)
    return run(metric, candidate, reference, metric.check_params(params), links, prompt_ids)


def run(
    metric: Metric,
    candidate: Any,
    reference: Any,
    params: Mapping[str, Any],
    links: Sequence[Sequence[int]] | None = None,
    prompt_ids: Sequence[Any] | None = None,
) -> MetricResult:
    """:func:`compute` with ``params`` already checked (:meth:`Metric.check_params`): what a
    score job and each of its interval's resamples call with the one :class:`Metric` they
    resolved. The inputs are validated here, at the edge."""
    name, merged = metric.name, params
    if metric.reference in ("required", "prompts") and reference is None:
        raise GenmetricsError(f"metric {name!r} needs a reference ({metric.reference})")
    refuse_texts(metric.name, metric.input_kind(merged), candidate=candidate, reference=reference)
    validate = KINDS[metric.input_kind(merged)].validator
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
        kwargs["links"] = check_links(name, links, kwargs)
    elif links is not None:
        raise GenmetricsError(f"metric {name!r} takes no links")
    if metric.by_prompt:
        kwargs["prompt_ids"] = check_prompt_ids(name, prompt_ids, len(kwargs["candidate"]))
    elif prompt_ids is not None:
        raise GenmetricsError(f"metric {name!r} takes no prompt_ids")
    out = metric.func(**kwargs, **merged)
    if not isinstance(out, MetricResult):
        out = MetricResult(values=dict(out))
    out.values = {k: float(v) for k, v in out.values.items()}
    unknown = sorted(set(out.values) - set(metric.values))
    if unknown:
        raise RuntimeError(f"metric {name!r} returned undeclared value(s) {unknown}")
    _check_not_all_excluded(metric, out, merged, len(kwargs["candidate"]))
    return out


def _check_not_all_excluded(
    metric: Metric, out: MetricResult, params: Mapping[str, Any], n_candidate: int
) -> None:
    """A mean over nothing (every candidate excluded by the metric's policy) is an error
    naming the metric, the count and why (``exclusion(params)``), not a NaN score."""
    excluded = out.n.get("excluded")
    total = out.n.get("candidate", n_candidate)
    if not excluded or excluded < total:
        return
    why = (
        metric.exclusion(params)
        if metric.exclusion
        else f"are excluded by its aggregation ({metric.aggregation})"
    )
    raise GenmetricsError(f"{metric.name}: all {total} texts {why}")
