"""Load metric inputs from files (JSONL texts, NPZ features) and produce score records.

Used by the CLI (``genmetrics score``) and the workflow's score rule, so both give the same
numbers. A score record follows the design contract: ``{"metric", "dataset", "source",
"reference", "values", "params", "n", "seconds", "versions", "warnings"}``: ``warnings`` lists,
one line each, what makes a number degenerate or computed on less than its inputs (the
metric's own: zero k-NN radii, identical histograms, a rank-deficient covariance; a value not
finite; texts a featurizer or the metric's model truncated, with ``truncation`` per role).
"""

from __future__ import annotations

import platform
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from genmetrics import GenmetricsError, __version__
from genmetrics.data.words import DEFAULT_LANGUAGE, count_words
from genmetrics.metrics.invoke import run
from genmetrics.metrics.kinds import (
    KINDS,
    PAIR_BY,
    TEXT_KINDS,
    Kind,
    link_groups,
    pair_rows,
    truncation_warning,
)
from genmetrics.metrics.registry import Metric, MetricResult, all_metrics, get
from genmetrics.npz import read_provenance


def _take(x: Any, idx: list[int]) -> Any:
    return x[np.asarray(idx, dtype=np.int64)] if isinstance(x, np.ndarray) else [x[i] for i in idx]


def load_input(kind: Kind, path: str | Path, what: str) -> tuple[Any, list[dict[str, Any]]]:
    """Read a metric's input file as ``kind`` (:meth:`Kind.load`); a ``pos`` input may also be
    a file of texts, tagged on load (:func:`genmetrics.features.pos.load_pos`): the tagging
    lives on the features side, which the metrics never import."""
    if kind.name == "pos":
        from genmetrics.features.pos import load_pos

        return kind.load(path, what, loader=load_pos)
    return kind.load(path, what)


def resolve(metric: str | Metric, params: Mapping[str, Any] | None) -> tuple[Metric, dict]:
    """The registered metric (looked up by name once, or the :class:`Metric` a caller already
    holds) and ``params`` merged over its defaults and checked (:meth:`Metric.check_params`)."""
    m = metric if isinstance(metric, Metric) else get(metric)
    return m, m.check_params(params)


def score_files(
    metric: str | Metric,
    candidate: str | Path,
    reference: str | Path | None = None,
    params: Mapping[str, Any] | None = None,
    pair_by: str = "id",
    language: str = DEFAULT_LANGUAGE,
    load: Callable[[Kind, str | Path, str], tuple[Any, list[dict[str, Any]]]] = load_input,
    interval: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Compute ``metric`` (a registered name, or the :class:`Metric` a score job resolved) on
    files; return ``{"metric", "values", "params", "n", ...}``.

    Files are read as the metric's input kind (:data:`genmetrics.metrics.kinds.KINDS`) by ``load``
    (kind, path, ``"candidate"``/``"reference"``; default :func:`load_input`; the command
    line's also featurizes texts: :mod:`genmetrics.scoring.on_the_fly`), after the
    parameters are checked, then scored by :func:`score_resolved`; ``pair_by`` (paired
    metrics): ``"id"`` or ``"position"`` (:func:`genmetrics.metrics.kinds.pair_rows`); ``language``:
    the words of ``mean_words``; ``interval``: the settings of its interval over prompts
    (:mod:`genmetrics.scoring.intervals`).
    """
    metric, merged = resolve(metric, params)  # before any file is read
    name = metric.name
    check_pair_by(metric, pair_by)
    if metric.reference in ("required", "prompts") and reference is None:
        raise GenmetricsError(f"metric {name!r} needs --reference")
    if metric.reference == "none" and reference is not None:
        raise GenmetricsError(f"metric {name!r} takes no reference, got --reference {reference}")
    kind = KINDS[metric.input_kind(merged)]
    cand, cand_rows = load(kind, candidate, "candidate")
    ref = ref_rows = None
    if reference is not None:
        ref, ref_rows = load(kind, reference, "reference")
        if load is load_input and kind.suffix == ".npz" and kind.config_key:
            files = {"candidate": candidate, "reference": reference}
            check_same_features(
                {r: {"path": str(p), **npz_made_by(Path(p), kind)} for r, p in files.items()},
                kind,
            )
    where = f"{candidate} vs {reference}" if reference is not None else str(candidate)
    try:
        rec = score_resolved(
            metric,
            cand,
            cand_rows,
            ref,
            ref_rows,
            merged,
            where,
            pair_by=pair_by,
            language=language,
            interval=interval,
        )
    except GenmetricsError as e:  # a check on the loaded data (sizes, dimensions): name the files
        if str(candidate) in str(e) or (reference is not None and str(reference) in str(e)):
            raise
        raise GenmetricsError(f"{where}: {e}") from None
    add_truncation(rec, file_truncation({"candidate": candidate, "reference": reference}))
    return rec


def file_truncation(paths: Mapping[str, str | Path | None]) -> dict[str, dict[str, Any]]:
    """Per role, the ``truncation`` a feature file's provenance records (how many of its texts
    the featurizer's ``max_tokens`` cut: :func:`genmetrics.metrics.kinds.truncation_record`);
    a role whose file is not a feature ``.npz`` or records none is left out."""
    out = {}
    for role, path in paths.items():
        if path is None or Path(path).suffix != ".npz" or not Path(path).is_file():
            continue
        rec = (read_provenance(path) or {}).get("truncation")
        if isinstance(rec, dict):
            out[role] = rec
    return out


def add_truncation(rec: dict[str, Any], truncation: Mapping[str, Mapping[str, Any]]) -> None:
    """Record ``truncation`` (per role) in the score record ``rec``: its ``truncation`` and,
    for each role with a text cut, a line in its ``warnings``."""
    if not truncation:
        return
    rec.setdefault("truncation", {}).update({k: dict(v) for k, v in truncation.items()})
    for role, t in truncation.items():
        line = truncation_warning(role, t)
        if line and line not in rec.setdefault("warnings", []):
            rec["warnings"].append(line)


def npz_made_by(path: Path, kind: Kind) -> dict[str, Any]:
    """What a feature file says made it, under the kind's option name (``featurizer``,
    ``evaluator``): its provenance's ``features`` (the workflow's embed and surprisal jobs,
    ``genmetrics embed``: name, ``checkpoint_sha256``, settings, cache key); a file written
    before those: the job's settings and the weights hash of its model input."""
    from genmetrics.npz import read_provenance

    option = kind.config_key
    prov = read_provenance(path) or {}
    if not option:
        return {}
    if isinstance(prov.get("features"), dict):
        return {option: prov["features"]}
    made = (prov.get("config") or {}).get(option) if isinstance(prov.get("config"), dict) else None
    if not isinstance(made, dict):
        return {}
    job = {k: v for k, v in made.items() if k not in ("cache_dir", "cache_key")}
    model = (
        (prov.get("inputs") or {}).get("model") if isinstance(prov.get("inputs"), dict) else None
    )
    sha = model.get("weights_sha256") if isinstance(model, dict) else None
    return {option: {"settings": job, "cache_dir": made.get("cache_dir"), "checkpoint_sha256": sha}}


#: settings of a featurizer that do not change what its features mean
NOT_THE_SPACE = ("batch_size", "device", "cache_dir", "cache_key")


def check_same_features(inputs: Mapping[str, Mapping[str, Any]], kind: Kind) -> None:
    """Candidate and reference features from different weights (``checkpoint_sha256``) or
    settings (where both say; the batch size is not a setting of the space) are two spaces,
    and no distance between them means anything: an error naming both files and what differs
    (two checkpoints under one featurizer name: two projects sharing a cache, a checkpoint
    replaced between runs). ``inputs``: per role, ``path`` and the kind's option's record
    (:func:`npz_made_by`, or the command line's featurizer description)."""
    option = kind.config_key
    a, b = (inputs.get(r, {}).get(option) or {} for r in ("candidate", "reference"))
    paths = [inputs.get(r, {}).get("path", r) for r in ("candidate", "reference")]
    names = [m.get("name") or "?" for m in (a, b)]
    made = f"{option} {names[0]}" if names[0] == names[1] else f"{option}s {names[0]}, {names[1]}"
    x, y = a.get("checkpoint_sha256"), b.get("checkpoint_sha256")
    if x is not None and y is not None and x != y:
        raise GenmetricsError(
            f"{paths[0]} (candidate) and {paths[1]} (reference): {kind.name} of {made} made "
            f"by different weights (checkpoint sha256 {x[:16]}… and {y[:16]}…): make both "
            f"with the same checkpoint"
        )
    x, y = a.get("settings"), b.get("settings")
    if x is not None and y is not None:
        x, y = ({k: v for k, v in s.items() if k not in NOT_THE_SPACE} for s in (x, y))
        if x != y:
            diff = ", ".join(
                f"{k}: {x.get(k)!r} vs {y.get(k)!r}"
                for k in sorted({*x, *y})
                if x.get(k) != y.get(k)
            )
            raise GenmetricsError(
                f"{paths[0]} (candidate) and {paths[1]} (reference): {kind.name} of {made} "
                f"differ in settings ({diff}): make both with the same {option}"
            )


def check_pair_by(metric: Metric, pair_by: str) -> None:
    """``pair_by`` is one of :data:`~genmetrics.metrics.kinds.PAIR_BY`; ``position`` only for a
    paired metric (it would change nothing elsewhere, and say so by failing)."""
    if pair_by not in PAIR_BY:
        raise GenmetricsError(f"pair_by must be one of {', '.join(PAIR_BY)}, got {pair_by!r}")
    if pair_by != "id" and not metric.paired:
        paired = ", ".join(n for n, m in all_metrics().items() if m.paired)
        raise GenmetricsError(
            f"--pair-by {pair_by}: metric {metric.name!r} is not paired (paired: {paired})"
        )


def check_sizes(metric: Metric, params: Mapping[str, Any], counts: Mapping[str, int]) -> None:
    """Each set holds at least the metric's ``min_items(params)`` (the workflow's
    ``check_sizes`` rule checks the same before any model runs); the error names the
    parameter that asks for them."""
    least, param = metric.min_items(params)
    if least <= 1:  # an empty set is the kind validator's error, which names the file
        return
    for role, n in counts.items():
        if n < least:
            why = f"{param}={params[param]} needs" if param in params else "needs"
            raise GenmetricsError(
                f"{metric.name}: {why} at least {least} texts per set; the {role} has {n}"
            )


def score_loaded(
    metric: str | Metric,
    cand: Any,
    cand_rows: Sequence[Mapping[str, Any]],
    ref: Any = None,
    ref_rows: Sequence[Mapping[str, Any]] | None = None,
    params: Mapping[str, Any] | None = None,
    where: str = "",
    **options: Any,
) -> dict[str, Any]:
    """Score inputs already in memory (data of ``metric``'s kind plus one row of metadata per
    item): :func:`score_resolved` (its ``options``: ``pair_by``, ``language``, ``interval``)
    after :func:`resolve` (``metric`` a registered name or a :class:`Metric`; ``params``
    checked here)."""
    m, checked = resolve(metric, params)
    return score_resolved(m, cand, cand_rows, ref, ref_rows, checked, where, **options)


def score_resolved(
    metric: Metric,
    cand: Any,
    cand_rows: Sequence[Mapping[str, Any]],
    ref: Any = None,
    ref_rows: Sequence[Mapping[str, Any]] | None = None,
    params: Mapping[str, Any] | None = None,
    where: str = "",
    pair_by: str = "id",
    language: str = DEFAULT_LANGUAGE,
    interval: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Score inputs already in memory (data of ``metric``'s kind plus one row of metadata per
    item; ``params`` as :func:`resolve` checked them): a paired metric aligns candidates with
    references by ``prompt_id``/``source_id``, else by ``id``, or by position with ``pair_by="position"`` (:func:`pair_rows`, naming
    ``where`` in errors), a linked one gets each candidate's references
    (:func:`link_groups`), a per-prompt one the ``prompt_id`` of each candidate row
    (:func:`prompt_ids`); each set must hold the metric's ``min_items`` (:func:`check_sizes`);
    returns the score record (a text metric's ``mean_words`` in words of ``language``).
    ``interval``: the settings of its interval over prompts (:func:`genmetrics.scoring.intervals.
    bootstrap`, on the same aligned inputs), recorded as ``interval``; None: no such key."""
    name, merged = metric.name, dict(params or {})
    check_pair_by(metric, pair_by)
    if metric.reference == "none":
        ref = ref_rows = None
    unpaired = links = None
    if metric.links and ref is not None:
        links = link_groups(ref_rows or [], cand_rows, where or name)
    if metric.paired and ref is not None:
        ri, ci = pair_rows(ref_rows or [], cand_rows, where or name, by=pair_by)
        unpaired = len(ref_rows or []) - len(ri)
        ref, ref_rows = _take(ref, ri), _take(ref_rows, ri)
        cand, cand_rows = _take(cand, ci), _take(cand_rows, ci)
    groups = prompt_ids(cand_rows, where or name, name) if metric.by_prompt else None
    counts = {"candidate": _count(cand)} | ({} if ref is None else {"reference": _count(ref)})
    check_sizes(metric, merged, counts)
    t0 = time.perf_counter()
    result = run(metric, cand, ref, merged, links=links, prompt_ids=groups)
    seconds = time.perf_counter() - t0
    if unpaired is not None:
        result.n.setdefault("unpaired_reference", unpaired)
    lengths = text_lengths(metric, merged, cand_rows, language)
    rec = record(metric, result, merged, seconds, cand_rows, ref_rows, cand, ref, lengths=lengths)
    if interval is not None:
        from genmetrics.scoring.intervals import bootstrap

        inputs = {"cand": cand, "cand_rows": cand_rows, "ref": ref, "ref_rows": ref_rows}
        inputs |= {"links": links, "prompt_ids": groups}

        def check(c: Any, r: Any) -> None:
            check_sizes(metric, merged, {"candidate": _count(c)} | _counted("reference", r))

        rec["interval"] = bootstrap(
            metric, inputs, merged, result, rec["values"], interval, check, lengths
        )
    return rec


def _counted(role: str, x: Any) -> dict[str, int]:
    return {} if x is None else {role: _count(x)}


def text_lengths(
    metric: Metric,
    params: Mapping[str, Any],
    cand_rows: Sequence[Mapping[str, Any]] | None,
    language: str = DEFAULT_LANGUAGE,
) -> list[int] | None:
    """Each candidate's length in words of ``language`` where the metric reads texts and every
    row has one (its record then reports ``mean_words``); else None."""
    if (
        metric.input_kind(params) in TEXT_KINDS
        and cand_rows
        and all("text" in r for r in cand_rows)
    ):
        return [count_words(r["text"], language) for r in cand_rows]
    return None


def prompt_ids(rows: Sequence[Mapping[str, Any]], where: str, metric: str) -> list[str]:
    """The ``prompt_id`` of every candidate row, for a metric scored per prompt; a row without
    one is an error naming ``where`` (the file), how many and the first: prompts are never
    made up from line numbers."""
    bad = [i for i, r in enumerate(rows, start=1) if r.get("prompt_id") in (None, "")]
    if bad:
        first = rows[bad[0] - 1].get("id")
        raise GenmetricsError(
            f"{where}: {len(bad)} of {len(rows)} candidate row(s) have no prompt_id, first row "
            f"{bad[0]} (id {first!r}); {metric} groups each prompt's samples by prompt_id"
        )
    return [str(r["prompt_id"]) for r in rows]


def record(
    metric: Metric,
    result: MetricResult,
    params: Mapping[str, Any],
    seconds: float,
    cand_rows: Sequence[Mapping[str, Any]] | None,
    ref_rows: Sequence[Mapping[str, Any]] | None,
    cand: Any,
    ref: Any,
    language: str = DEFAULT_LANGUAGE,
    lengths: Sequence[int] | None = None,
) -> dict[str, Any]:
    n = {"candidate": _count(cand)}
    if ref is not None:
        n["reference"] = _count(ref)
    n.update(result.n)
    values = dict(result.values)
    if lengths is None:
        lengths = text_lengths(metric, params, cand_rows, language)
    if lengths is not None:
        # length control (Shaib et al. 2024): every text score comes with the mean length in words
        values.setdefault("mean_words", float(np.mean(lengths)))
    out = {
        "metric": metric.name,
        "values": values,
        "params": dict(params),
        "aggregation": metric.aggregation,
        "n": n,
        "seconds": round(seconds, 4),
        "versions": versions(),
        "warnings": [*result.warnings, *saturated(values)],
    }
    if result.extras:
        out["extras"] = result.extras  # curves and histograms, for plots
    add_truncation(out, result.truncation)
    return out


def saturated(values: Mapping[str, float]) -> list[str]:
    """A warning for each value that is not a finite number: ``inf`` where it overflowed
    the float range (a perplexity above ~1.8e308), ``nan`` where it is undefined."""
    return [
        f"saturated value: {name} is {v} (beyond the float range or undefined)"
        for name, v in values.items()
        if not np.isfinite(v)
    ]


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
