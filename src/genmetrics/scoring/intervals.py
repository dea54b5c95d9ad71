"""The interval of a score over its prompts: a seeded resampling of the prompts in the score
job, after the point estimate, on the inputs already loaded (features, tags, texts; a model is
never rerun).

Units. The candidate rows are grouped by prompt (their ``prompt_id``, else ``source_id``);
a row without one is a unit of its own (the method says how many). The references follow the
draw where they belong to the same prompts, else stay fixed (:func:`units`):

* ``paired`` — a paired metric (BLEU, ROUGE, BERTScore, coherence): each candidate keeps its
  reference (the rows are aligned first), so pairs are resampled together;
* ``linked`` — a linked metric (FACE): the references of the drawn prompts, links rebuilt;
* ``tied`` — references without a ``prompt_id`` whose ``id`` is a candidate's prompt (the human
  texts the prompts were cut from): the references of the drawn prompts;
* ``fixed`` — any other reference set (another model's texts, which carry their own
  ``prompt_id``: an independent sample), kept whole in every resample;
* ``none`` — no reference.

Schemes (:data:`SCHEMES`), each with ``resamples`` B draws from
``numpy.random.default_rng(seed)``; the draws depend only on the number of units and the seed,
and the units are sorted by prompt id (a row without one by its ``id``), so every source of a
dataset (every model, every seed, the human texts) and every entry with the same seed gets the
same prompts in replicate b (common random numbers: differences between models or metrics can
be resampled replicate by replicate):

* ``half`` (default) — each draw takes m = ⌊U/2⌋ of the U units *without* replacement (the
  delete-d jackknife with d = U/2, Shao & Wu 1989, Ann. Stat. 17: 1176–1197), in
  complementary pairs (draw 2j + 1 takes m of the units draw 2j left: two independent
  samples of m prompts), and recomputes the metric; replicate = point + s·(value − mean of the
  B values), clipped to the value's registered range (:data:`RANGES`). The factor s² is the
  value's variance at U prompts over the variance of the B values (the record's
  ``variance_scale``):

  - for a value that is a mean, or a ratio of sums, of per-text, per-pair or per-prompt
    numbers (registered ``duplicates_change_value=False``, or resampled from its per-pair
    numbers) and for ``mean_words``, s² = m/(U − m): the replicates then have exactly the
    variance of the point estimate (s²/U);
  - for a set statistic (any other: kNN precision/recall, MAUVE, Fréchet, Vendi, self-BLEU,
    distinct-n, …) the variance need not shrink as 1/U (a distance between two samples of one
    distribution shrinks as 1/U², the n-gram Vendi Score's grows with U), so it is measured:
    the complementary pairs give E[(T(S_2j) − T(S_2j+1))²]/2, unbiased for the variance of T
    on m prompts, and B more draws of ⌊U/4⌋ prompts, each nested in its half draw (so pairs
    are disjoint too), give it on ⌊U/4⌋;
    :func:`~genmetrics.scoring.set_variance.extrapolated_variance` reads the rate off the two
    sizes and extrapolates to U (Bertail, Politis & Romano 1999). This costs B more
    recomputations on sets a quarter the size, needs U ≥ 8 (else the mean's factor, and the
    method says so), and replaces the mean's factor, which made the replicates of set
    statistics 0.44–1.61 times as spread as the values really are over fresh samples of 160
    (benchmarks/bench_intervals.py: the n-gram Vendi Score 0.44, Fréchet 1.61; now 0.89–1.19,
    docs/metrics/index.md) and Fréchet's and distinct-1's 1.47 and 1.32 times in the paired
    simulation (tests/test_paired_simulation.py).

  Why not draws with replacement: a prompt drawn twice puts the
  same text twice in the set, which every metric comparing texts within a set reads as
  repetition or as a zero distance. On the demo's 160 texts the with-replacement replicates
  of self-BLEU lie at 0.61–0.73 around a point estimate of 0.067, and kNN precision's at
  0.80–0.96 around 0.98;
* ``replacement`` — the textbook bootstrap: U units drawn with replacement (a prompt drawn
  twice is two prompts: its rows' ids get a ``#c`` copy suffix), replicate = the value on the
  draw. Right for means over prompts or pairs (ROUGE, perplexity, MATTR), biased for set
  metrics (above), so it is offered only for metrics registered with
  ``duplicates_change_value=False`` (:func:`check_scheme`: an error naming the metric and the
  scheme in the config check, on the command line and here).

The interval is the percentile interval of the replicates at ``level``
(:func:`genmetrics.analysis.statistics.percentile_interval`). It holds its point estimate or
says why not: the half-sample replicates are clipped to the value's range widened to the
point (an unbiased estimate such as KID's may lie below 0, outside the range of what it
estimates), and a value whose point still lies outside its interval (replicates all NaN, or
too skewed for their percentiles to reach the point) gets no bounds, and ``reasons`` says why.

A metric whose value is the mean of its per-pair numbers (``extras["per_pair"]``: ROUGE,
BERTScore) is resampled from them, without recomputation (checked: their mean must be the
value); ``mean_words`` is always the mean of the drawn texts' lengths. A metric costly to
recompute B times — registered ``costly`` (Fréchet: a d×d matrix square root each time) or
running an encoder (``loads_model``, e.g. BERTScore homogenization) — gets no interval unless
its entry asks (``asked``). A resample the metric refuses (too few texts left) counts
as failed: NaN replicates, and the method says how many; all failed: no interval.

The record's ``interval`` (:func:`bootstrap`): ``{"method", "scheme", "resamples", "seed",
"level", "unit": "prompt", "n_units", "draws": sha256, "lower": {value: float or None},
"upper": {...}, "replicates": {value: [B floats, float32 precision]}, "variance_scale":
{value: s²} (``half`` only)}``, where ``draws``
(:func:`draws_digest`) digests the sorted unit names and the B draws of unit indices: two
records with the same ``draws`` resampled the same prompts in every replicate, so their
replicates pair (:mod:`genmetrics.analysis.paired`); with ``"reasons": {value: "not computed: …"}`` for
values without bounds, or ``{"method": None, "reason": "not computed: …"}``.
"""

from __future__ import annotations

import hashlib
import math
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from genmetrics import GenmetricsError
from genmetrics.analysis.statistics import percentile_interval
from genmetrics.metrics.invoke import run
from genmetrics.metrics.kinds import LINK_FIELDS
from genmetrics.metrics.registry import Metric, MetricResult
from genmetrics.scoring.set_variance import set_scale

#: the resampling schemes (see the module docstring)
SCHEMES = ("half", "replacement")
#: the fewest units resampled (half of 3 is one prompt)
MIN_UNITS = 4
#: the settings of an entry that asks for nothing else (the schema's defaults)
DEFAULTS = {"resamples": 200, "level": 0.95, "seed": 0, "scheme": "half"}
#: a registered scale → the range its values lie in (replicates are clipped to it)
RANGES: dict[str, tuple[float, float]] = {
    "0–1": (0.0, 1.0),
    "0–100": (0.0, 100.0),
    "%": (0.0, 100.0),
    "−1–1": (-1.0, 1.0),
    "0–n": (0.0, math.inf),
    "≥ 0": (0.0, math.inf),
    "≳ 0": (-math.inf, math.inf),  # an unbiased estimate of a quantity ≥ 0 (KID): no range
    "≤ 0": (-math.inf, 0.0),
    "≥ 1": (1.0, math.inf),
    "words": (0.0, math.inf),
    "count": (0.0, math.inf),
}
_REFERENCES = {
    "none": "",
    "paired": "each candidate keeps its paired reference (pairs resampled together)",
    "linked": "the references of the drawn prompts (FACE's links rebuilt)",
    "tied": "the references of the drawn prompts (the human texts they were cut from)",
    "fixed": "the reference set is kept whole (an independent sample, not resampled)",
}


def check_scheme(
    metric: Metric, scheme: str, where: str, params: Mapping[str, Any] | None = None
) -> None:
    """Refuse ``scheme`` for ``metric`` where it would bias the interval: ``replacement``
    for a metric registered ``duplicates_change_value`` (a prompt drawn twice puts its texts
    in the set twice, read as repetition or as a zero distance), under ``params`` where a
    parameter decides it (:meth:`~genmetrics.metrics.registry.Metric.duplicates_matter`);
    ``where`` names the key."""
    if scheme not in SCHEMES:
        raise GenmetricsError(f"{where}: one of {', '.join(SCHEMES)}, got {scheme!r}")
    if scheme == "replacement" and metric.duplicates_matter(params):
        raise GenmetricsError(
            f"{where}: scheme replacement is refused for metric {metric.name}: a prompt drawn "
            f"twice puts its texts in the set twice, and a copy of a text changes "
            f"{metric.name}'s value (it compares the texts of a set with each other), so the "
            "interval would not hold the score; use scheme: half"
        )


def entry_interval(
    key: str,
    given: bool | Mapping[str, Any] | None,
    metric: Metric | None = None,
    params: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The settings of config entry ``key``'s interval (``metrics.<entry>.interval``, checked
    by the schema): left out, on with :data:`DEFAULTS` unless the metric is costly
    (``asked`` false); ``true`` or a mapping, on, also where costly (``asked`` true);
    ``false``, off with its reason. With ``metric``, a scheme it refuses is an error
    (:func:`check_scheme`)."""
    if given is False:
        return {"reason": f"not computed: switched off by the config ({key}.interval: false)"}
    if given is None or given is True:
        return {**DEFAULTS, "asked": given is True}
    if not isinstance(given, Mapping):
        raise GenmetricsError(f"{key}.interval: true, false or a mapping, got {given!r}")
    unknown = sorted(set(given) - set(DEFAULTS))
    if unknown:
        raise GenmetricsError(f"{key}.interval: unknown key(s) {unknown}; known: {list(DEFAULTS)}")
    scheme = given.get("scheme", DEFAULTS["scheme"])
    if scheme not in SCHEMES:
        raise GenmetricsError(f"{key}.interval.scheme: one of {', '.join(SCHEMES)}")
    if metric is not None:
        check_scheme(metric, scheme, f"{key}.interval.scheme", params)
    return {**DEFAULTS, **given, "asked": True}


def not_computed(reason: str) -> dict[str, Any]:
    """The ``interval`` of a record without one: ``reason`` starts "not computed: "."""
    if not reason.startswith("not computed: "):
        reason = f"not computed: {reason}"
    return {"method": None, "reason": reason}


@dataclass(frozen=True)
class Units:
    """The resampling units of one score: per unit its candidate and reference rows."""

    cand: list[list[int]]
    ref: list[list[int]]
    references: str  # a key of _REFERENCES
    loose: int  # candidate rows without a prompt id (each its own unit)
    names: list[str] = field(default_factory=list)  # each unit's prompt id (or row id)


def _prompt(row: Mapping[str, Any]) -> str | None:
    for key in LINK_FIELDS:
        if row.get(key) not in (None, ""):
            return str(row[key])
    return None


def units(
    metric: Metric,
    cand_rows: Sequence[Mapping[str, Any]],
    ref_rows: Sequence[Mapping[str, Any]] | None,
    links: Sequence[Sequence[int]] | None = None,
) -> Units:
    """The units of a score on inputs already paired (a paired metric's rows aligned) and
    linked (``links``, a linked metric's), sorted by prompt id (a row without one by its own
    ``id``, the prompt id of a human text or of a generation of one sample per prompt); the
    references' role as in the module docstring."""
    keys: list[tuple] = []
    for i, r in enumerate(cand_rows):
        p = _prompt(r)
        keys.append(("p", p) if p is not None else ("r", i))
    loose = sum(k[0] == "r" for k in keys)
    ref_keys: list[tuple] = []
    if ref_rows is None:
        mode = "none"
    elif metric.paired:
        mode = "paired"
    elif metric.links:
        mode = "linked" if links is not None else "fixed"
        field = next((k for k in LINK_FIELDS if ref_rows and all(k in r for r in ref_rows)), "id")
        ref_keys = [("p", str(r.get(field))) for r in ref_rows]
    else:
        prompts = {k[1] for k in keys if k[0] == "p"}
        ids = [str(r.get("id")) for r in ref_rows]
        tied = (
            not loose
            and not any(k in r for r in ref_rows for k in LINK_FIELDS)
            and prompts <= set(ids)
        )
        mode = "tied" if tied else "fixed"
        ref_keys = [("p", i) for i in ids]
    groups: dict[tuple, tuple[list[int], list[int]]] = {}
    for i, k in enumerate(keys):
        groups.setdefault(k, ([], []))[0].append(i)
        if mode == "paired":
            groups[k][1].append(i)
    if mode in ("linked", "tied"):
        for j, k in enumerate(ref_keys):
            groups.setdefault(k, ([], []))[1].append(j)
    names = {k: k[1] if k[0] == "p" else str(cand_rows[k[1]].get("id", "")) for k in groups}
    order = sorted(groups, key=lambda k: (names[k], k[0] == "r", k[1] if k[0] == "r" else 0))
    cand, ref = [groups[k][0] for k in order], [groups[k][1] for k in order]
    return Units(cand, ref, mode, loose, [names[k] for k in order])


def draws(n_units: int, resamples: int, seed: int, scheme: str) -> list[np.ndarray]:
    """The B draws of unit indices (sorted): ⌊U/2⌋ without replacement (``half``; each a
    uniform draw, in complementary pairs: draw 2j + 1 holds none of draw 2j's units), or U with
    replacement (``replacement``), from ``numpy.random.default_rng(seed)``."""
    if scheme == "half":
        return [np.sort(d) for d in _half_orders(n_units, resamples, seed)]
    if scheme == "replacement":
        rng = np.random.default_rng(seed)
        return [np.sort(rng.integers(0, n_units, n_units)) for _ in range(resamples)]
    raise GenmetricsError(f"interval scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}")


def _half_orders(n_units: int, resamples: int, seed: int) -> list[np.ndarray]:
    """The half draws in their random order, in complementary pairs: draws 2j and 2j + 1 are
    the first and the second ⌊U/2⌋ units of one permutation (disjoint; for an odd U the last
    unit of the permutation is left out of the pair)."""
    rng = np.random.default_rng(seed)
    m, out = n_units // 2, []
    while len(out) < resamples:
        order = rng.permutation(n_units)
        out += [order[:m], order[m : 2 * m]]
    return out[:resamples]


def quarter_draws(n_units: int, resamples: int, seed: int) -> list[np.ndarray]:
    """Draw b of ⌊U/4⌋ units: the first ⌊U/4⌋ of half draw b in its random order, sorted, so
    draws 2j and 2j + 1 are disjoint like their half draws
    (:func:`~genmetrics.scoring.set_variance.extrapolated_variance`)."""
    return [np.sort(d[: n_units // 4]) for d in _half_orders(n_units, resamples, seed)]


def draws_digest(names: Sequence[str], picks: Sequence[np.ndarray], scheme: str) -> str:
    """The sha256 of what a record's replicates were drawn on: the scheme, the units' names
    in their order (prompt ids) and each draw's unit indices. Equal digests: replicate b of
    both records took the same prompts (the pairing :mod:`genmetrics.analysis.paired` checks)."""
    h = hashlib.sha256(scheme.encode())
    for name in names:
        h.update(b"\0" + name.encode())
    for d in picks:
        h.update(b"\1" + np.asarray(d, dtype=np.int64).tobytes())
    return h.hexdigest()


def _take(x: Any, idx: list[int]) -> Any:
    return x[np.asarray(idx, dtype=np.int64)] if isinstance(x, np.ndarray) else [x[i] for i in idx]


@dataclass
class _Inputs:
    """One score's inputs as the metric computed it (aligned, linked, grouped)."""

    cand: Any
    ref: Any
    links: list[list[int]] | None
    prompt_ids: list[str] | None


def _resample(u: Units, draw: np.ndarray, x: _Inputs) -> tuple[_Inputs, list[int]]:
    """The inputs of one draw, and the candidate rows it took (a unit drawn c > 0 times
    before is a new prompt: its prompt ids get ``#c``, its links point to its own copies)."""
    seen: Counter = Counter()
    ci: list[int] = []
    copies: list[int] = []
    where: dict[tuple[int, int], int] = {}  # (reference row, copy) → its row in the draw
    ri: list[int] = []
    for unit in draw.tolist():
        c = seen[unit]
        seen[unit] += 1
        ci += u.cand[unit]
        copies += [c] * len(u.cand[unit])
        for j in u.ref[unit]:
            where[j, c] = len(ri)
            ri.append(j)
    ref = x.ref
    if u.references in ("paired", "linked", "tied"):
        ref = _take(x.ref, ri)
    links = None
    if x.links is not None:  # a linked metric's references are resampled with the prompts
        links = [[where[j, c] for j in x.links[i]] for i, c in zip(ci, copies, strict=True)]
    prompt_ids = None
    if x.prompt_ids is not None:
        prompt_ids = [
            f"{x.prompt_ids[i]}#{c}" if c else x.prompt_ids[i]
            for i, c in zip(ci, copies, strict=True)
        ]
    return _Inputs(_take(x.cand, ci), ref, links, prompt_ids), ci


def _per_pair(result: MetricResult, n_cand: int) -> dict[str, np.ndarray] | None:
    """Every value's per-pair numbers, when each value is exactly their mean (else None)."""
    per = result.extras.get("per_pair") if isinstance(result.extras, Mapping) else None
    if not isinstance(per, Mapping) or not result.values:
        return None
    out = {}
    for name, value in result.values.items():
        a = np.asarray(per.get(name, ()), dtype=float)
        if a.shape != (n_cand,) or not math.isclose(float(a.mean()), value, abs_tol=1e-9):
            return None
        out[name] = a
    return out


def _range(metric: Metric, name: str, point: float) -> tuple[float, float]:
    """The range the half-sample replicates of value ``name`` are clipped to: its registered
    scale's (:data:`RANGES`), widened to hold ``point`` (an estimate may lie outside the range
    of what it estimates, or outside by a rounding, e.g. MAUVE 1.0000000000000002)."""
    scale = "words" if name == "mean_words" else metric.scale(name)
    lo, hi = RANGES.get(scale or "", (-math.inf, math.inf))
    return (min(lo, point), max(hi, point)) if math.isfinite(point) else (lo, hi)


def bootstrap(
    metric: Metric,
    inputs: Mapping[str, Any],
    params: Mapping[str, Any],
    result: MetricResult,
    values: Mapping[str, float],
    settings: Mapping[str, Any],
    check: Any = None,
    lengths: Sequence[float] | None = None,
) -> dict[str, Any]:
    """The record's ``interval`` of one score (see the module docstring).

    ``inputs``: ``cand``, ``cand_rows``, ``ref``, ``ref_rows``, ``links``, ``prompt_ids`` as
    the metric computed them; ``result``: its point result, ``values``: the record's values
    (``mean_words`` included); ``settings``: ``resamples``, ``level``, ``seed``, ``scheme``,
    ``asked`` (the entry asked for it: computed even where costly), or ``reason`` (switched
    off), and ``progress`` (a progress bar of the resamples on stderr: the command line); ``check(cand, ref)``: called before each recomputation (the size checks);
    ``lengths``: each candidate's length in words (``mean_words``).
    """
    if "reason" in settings:
        return not_computed(settings["reason"])
    b, level, seed = int(settings["resamples"]), float(settings["level"]), int(settings["seed"])
    scheme = settings.get("scheme", DEFAULTS["scheme"])
    check_scheme(metric, scheme, "interval scheme", params)
    x = _Inputs(inputs["cand"], inputs["ref"], inputs.get("links"), inputs.get("prompt_ids"))
    u = units(metric, inputs["cand_rows"], inputs["ref_rows"], x.links)
    n_units = len(u.cand)
    if n_units < MIN_UNITS:
        return not_computed(f"{n_units} prompt(s): fewer than {MIN_UNITS} to resample")
    per_pair = _per_pair(result, len(inputs["cand_rows"]))
    costly = metric.costly(params) or (
        "it runs an encoder in its job (loads_model)" if metric.loads_model(params) else ""
    )
    if per_pair is None and costly and not settings.get("asked"):
        return not_computed(
            f"{metric.name} would be recomputed {b} times, and {costly}; ask for one with the "
            "entry's interval: true"
        )
    names = list(values)
    picks = draws(n_units, b, seed, scheme)
    # a set statistic's variance need not shrink as 1/n: measured on independent samples of
    # two sizes (extrapolated_variance)
    set_statistic = scheme == "half" and per_pair is None and metric.duplicates_matter(params)
    extrapolate = set_statistic and n_units >= 8 and b >= 2
    bar = tqdm(
        total=b * (2 if extrapolate else 1),
        desc="interval resamples",
        unit="resample",
        disable=not settings.get("progress"),
    )

    def replicates(picks: Sequence[np.ndarray]) -> tuple[np.ndarray, int, str]:
        reps = np.full((len(picks), len(names)), np.nan)
        failed, first = 0, ""
        for k, draw in enumerate(picks):
            bar.update()
            xb, ci = _resample(u, draw, x)
            if per_pair is not None:
                got = {v: float(a[ci].mean()) for v, a in per_pair.items()}
            else:
                try:
                    if check is not None:
                        check(xb.cand, xb.ref)
                    got = run(
                        metric, xb.cand, xb.ref, params, links=xb.links, prompt_ids=xb.prompt_ids
                    ).values
                except GenmetricsError as e:
                    failed, first = failed + 1, first or str(e)
                    continue
            if lengths is not None and "mean_words" in values and "mean_words" not in got:
                got = {**got, "mean_words": float(np.mean([lengths[i] for i in ci]))}
            reps[k] = [got.get(v, np.nan) for v in names]
        return reps, failed, first

    reps, failed, first = replicates(picks)
    if failed == b:
        bar.close()
        return not_computed(f"every one of the {b} resamples failed, first: {first}")
    m = n_units // 2
    scale, extrapolated = None, ""
    if scheme == "half":
        point = np.array([values[v] for v in names], dtype=float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a value NaN in every draw
            centre, spread = np.nanmean(reps, axis=0), np.nanvar(reps, axis=0, ddof=1)
        scale = [m / (n_units - m)] * len(names)
        if extrapolate:
            small, q_failed, q_first = replicates(quarter_draws(n_units, b, seed))
            if max(failed, q_failed) > b // 2:
                extrapolated = (
                    f"not extrapolated: {max(failed, q_failed)} of {b} draws of {m} or "
                    f"{n_units // 4} prompts failed (first: {first or q_first})"
                )
            else:  # a mean over texts (mean_words), or no usable variance: the mean's factor
                measured = set_scale(reps, small, spread, n_units)
                scale = [
                    s2 if v != "mean_words" and math.isfinite(s2) else mean
                    for v, s2, mean in zip(names, measured, scale, strict=True)
                ]
                extrapolated = "extrapolated"
        elif set_statistic:
            extrapolated = f"not extrapolated: {n_units} prompts, fewer than 8"
        reps = point + np.sqrt(np.array(scale)) * (reps - centre)
        for j, v in enumerate(names):
            reps[:, j] = np.clip(reps[:, j], *_range(metric, v, float(point[j])))
    bar.close()
    lower, upper = percentile_interval(reps, level)
    out = {
        "method": _method(
            u, scheme, b, n_units, m, per_pair is not None, failed, first, extrapolated
        ),
        "scheme": scheme,
        "resamples": b,
        "seed": seed,
        "level": level,
        "unit": "prompt",
        "n_units": n_units,
        "draws": draws_digest(u.names, picks, scheme),
        "lower": dict(zip(names, lower.tolist(), strict=True)),
        "upper": dict(zip(names, upper.tolist(), strict=True)),
        "replicates": {v: [_f32(a) for a in reps[:, j]] for j, v in enumerate(names)},
    }
    if scale is not None:
        out["variance_scale"] = {v: _f32(s2) for v, s2 in zip(names, scale, strict=True)}
    reasons = _outside(values, out["lower"], out["upper"])
    for v in reasons:
        out["lower"][v] = out["upper"][v] = None
    return out | ({"reasons": reasons} if reasons else {})


def _outside(
    values: Mapping[str, float], lower: Mapping[str, float], upper: Mapping[str, float]
) -> dict[str, str]:
    """Why each value whose interval does not hold its point estimate has none: no replicate
    gave a number, or the percentile bounds miss the point (skewed replicates). A NaN point
    (no number to cover) keeps its bounds."""
    out = {}
    for v, x in values.items():
        lo, hi = lower[v], upper[v]
        if not math.isfinite(x):
            continue
        if math.isnan(lo) or math.isnan(hi):
            out[v] = f"not computed: no resample gave {v} a number"
        elif not lo <= x <= hi:
            out[v] = (
                f"not computed: the point estimate {x:.6g} lies outside the percentile "
                f"interval [{lo:.6g}, {hi:.6g}] of its replicates (too skewed to hold it)"
            )
    return out


def _f32(a: float) -> float:
    """``a`` at float32 precision, written with the fewest digits that keep it."""
    return float(str(np.float32(a))) if math.isfinite(a) else float("nan")


def _method(
    u: Units,
    scheme: str,
    b: int,
    n: int,
    m: int,
    per_pair: bool,
    failed: int,
    first: str,
    extrapolated: str = "",
) -> str:
    """The record's ``method``: what was drawn, how the replicates were made, and where the
    references and prompt-less rows went."""
    if scheme == "half" and extrapolated == "extrapolated":
        out = (
            f"half-sample bootstrap over prompts: {b} draws of {m} of the {n} prompts without "
            f"replacement; replicate = point + s·(value − mean of the draws), s² "
            f"(variance_scale) the value's variance at {n} prompts over the draws' variance; "
            f"the variance at {n} extrapolated from independent samples of {m} and {n // 4} "
            f"prompts (the draws in disjoint pairs, and {b} draws of {n // 4} nested in them; "
            "Var ∝ k^(−α), α in [−2, 2] read off the two sizes); clipped to the value's range; "
            "percentile interval"
        )
    elif scheme == "half":
        out = (
            f"half-sample bootstrap over prompts: {b} draws of {m} of the {n} prompts without "
            "replacement (delete-d jackknife, d = n/2); replicate = point + "
            f"sqrt({m}/{n - m})·(value − mean of the draws), clipped to the value's range; "
            "percentile interval"
        )
        if extrapolated:
            out += f" (a set statistic's variance {extrapolated}; the factor of a mean used)"
    else:
        out = (
            f"bootstrap over prompts: {b} draws of the {n} prompts with replacement (a prompt "
            "drawn twice counts twice); percentile interval"
        )
    out += "; from the per-pair scores (no recomputation)" if per_pair else ""
    if u.references != "none":
        out += f"; references: {_REFERENCES[u.references]}"
    if u.loose:
        out += f"; {u.loose} candidate row(s) without a prompt_id, each its own unit"
    if failed:
        out += f"; {failed} of {b} resamples failed and are left out (first: {first})"
    return out
