"""The metric contract: one registry shared by the CLI, the Python API and the workflow.

A metric module registers its public function once; everything else is read from it::

    @register(
        "precision_recall",
        input="embeddings",                      # a kind of genmetrics.metrics.kinds.KINDS
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
* **Inputs**: ``input`` is a kind of :data:`genmetrics.metrics.kinds.KINDS`; ``paired=True`` aligns
  candidate rows with reference rows by ``prompt_id``/``source_id``, else by ``id`` (any
  kind; by position only when asked for: :func:`genmetrics.metrics.kinds.pair_rows`). ``part`` says
  which part of each generation the features are computed from (``text`` or only the
  ``continuation``); ``reference="prompts"`` compares each source with the dataset's prompts
  (featurized the same way), e.g. coherence. ``links=True``: the function also takes
  ``links``, for each candidate the indices of every reference with the same prompt
  (:func:`genmetrics.metrics.kinds.link_groups`), or ``None`` when the two sets share no prompt; the
  metric then pairs where it can and compares sets otherwise (FACE).
* **Per prompt** (``by_prompt=True``): the function also takes ``prompt_ids``, one string per
  candidate item (its row's ``prompt_id``: a generation's prompt), to score each prompt's
  samples as a group (NoveltyBench's ``distinct_k``). The rows' ids are never made up from
  line numbers: a candidate row without a ``prompt_id`` is an error naming the file.
* **Input by parameter** (``input_by``): ``{param: {value: kind}}``, the kind read under some
  values of a parameter, else ``input`` (``distinct_k`` compares the texts of records, or the
  workflow's embeddings with ``equivalence: embedding``). ``input`` is the kind of the
  default parameters; :meth:`Metric.input_kind` gives the kind of a run's parameters, and
  everything that loads or plans an input asks it.
* **Models and assets**: a metric downloads nothing; what it needs comes from features
  (embed / surprisal rules) and from ``assets(params)``, the names of offline assets
  (:data:`genmetrics.data.assets.ASSETS`) that the workflow fetches in rules. A metric that must
  run an encoder itself (BERTScore and BERTScore homogenization: token-level matching) says
  so with ``loads_model(params)``, and the workflow runs it in a GPU-resourced rule of its own.
* **Cost of resampling** (``costly(params)``): why recomputing the metric on each of an
  interval's resamples (:mod:`genmetrics.scoring.intervals`) is unreasonable, "" where it is not; its
  scores then get no interval unless the config entry asks (so does ``loads_model``).
* **Duplicates** (``duplicates_change_value``, default ``True``): whether a copy of a text in
  the set changes what the other texts contribute. ``False`` only where the value is a mean,
  or a ratio of sums, of numbers each computed from one text, pair or prompt alone (ROUGE,
  BLEU's n-gram counts, perplexity, TTR, NoveltyBench's per-prompt classes): a copy then adds
  weight and nothing else, so an interval may draw prompts with replacement
  (:data:`genmetrics.scoring.intervals.SCHEMES`). ``True`` for every metric that compares the texts
  of a set with each other (repetition, nearest neighbours, clusters, kernels' spectra,
  distances between distributions): it reads a copy as repetition or as a zero distance, and
  an interval drawing with replacement is refused for it. Where a parameter decides it
  (MATTR and HD-D pooled over the concatenated texts), ``duplicates_when(params)`` says so
  for a run's params (:meth:`Metric.duplicates_matter`); the flag is then the defaults'.
* **Presets** (``presets``): a parameter whose value names a published convention and
  implies other settings, ``{param: {choice: Preset(doc, fixed=..., defaults=...)}}``:
  ``fixed`` settings may not be changed under that choice (an error naming the key),
  ``defaults`` replace the signature's defaults and may be overridden. Every setting a run
  used is then in its params, so the record states them (FACE's ``convention``). The
  signature's defaults must be those of the preset parameter's own default choice.
* **Sizes**: ``min_items(params)`` = (the fewest items each set needs, the parameter that
  asks for them), e.g. ``(k + 1, "k")``; the workflow checks it right after cleaning.
* **Per pair**: a paired metric that averages one number per (candidate, reference) pair
  returns them as ``extras["per_pair"][value]`` (``rouge``, ``bertscore``); the human
  agreement analysis (:mod:`genmetrics.agreement`) correlates them with people.
* **Aggregation** (per-text metrics): how per-text values become the corpus value and what
  happens to texts the metric cannot score (too short, empty); the result's ``n`` reports
  how many were excluded (``n["excluded"]``). A mean over nothing is never a score: when
  every candidate is excluded, :func:`compute` raises an error naming the metric, the count
  and why, which the metric states with ``exclusion(params)`` (e.g. "are shorter than
  window=50 words; lower window or use short_texts: upstream").

What the analyses and figures read about a metric is declared here too, and nowhere else:

* **Family** (``family``): one of :data:`FAMILIES`, in that display order (the headline
  table's sections); default :data:`OTHER`.
* **Headline** (``headline``): the value(s) that carry the metric's finding, in display
  order; default its first value with a direction, none when no value has one (Zipf). A pair
  is declared here: kNN precision and recall, PRD's F8 and F1/8 (quality and diversity). The
  same values are the headline table's columns and the correlation heatmap's scores: a
  metric's other values are sub-scores or variants of its headline (ROUGE-2 beside ROUGE-1,
  density beside precision, FACE's CORR beside SO) that correlate with it by construction,
  and drawn they would crowd the heatmap with self-agreement; they stay in ``scores.csv`` and
  in the correlation table (every directed pair).
* **Closer to the references** (``closer_to_references``): directed values whose direction
  holds only down (or up) to the references' own value of the same score, a property the
  reference texts have too: a perplexity below the human texts' is not better, it is further
  from them. Their summaries read "closer to the references" instead of ↑/↓; the registered
  direction stays for ordering.
* **Scale** (``scale``): how each value reads, one of :data:`SCALES` (a range such as
  ``0–1``/``0–100``/``%`` or a unit such as ``nats``/``words``): one string for every value,
  or a mapping naming every value. Shown after the headline table's arrows. The score tables
  keep one convention (:data:`TABLE_SCALES`): a proportion reads 0–1, so a value registered
  in ``%`` or ``0–100`` (SimCTG's rep-n, sacreBLEU) is divided by 100 there
  (:meth:`Metric.table_scale`); the score records keep the metric's own numbers.
* **Figures** (``figures``): the figures of :data:`FIGURES` the metric's scores feed (the
  P/R plane, PRD's curves, FACE's spectra); a figure may require values (the P/R plane plots
  ``precision`` against ``recall``). :func:`metrics_feeding` lists a figure's metrics.
* **Sweep** (``sweepable``): the N/k sweep analysis (``analysis.sweep``) can rerun it.

**Plugins**: besides the modules of :mod:`genmetrics.metrics`, the registry imports every
module named in the environment variable :data:`PLUGIN_ENV` (comma-separated dotted names,
e.g. ``GENMETRICS_METRIC_MODULES=mylab.metrics,mylab.more``); a module registers its metrics
on import as the built-in ones do. Snakemake jobs inherit the variable, so a plugin metric is
configured and scored like any other.

The function is called with keyword arguments only: ``candidate=...`` (and ``reference=...``
when the metric takes one) plus every parameter, already checked. It returns a
:class:`MetricResult` or a ``{name: float}`` dict.
"""

from __future__ import annotations

import importlib
import inspect
import os
import pkgutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from genmetrics import GenmetricsError
from genmetrics.metrics._contract import check_input_by, check_presets
from genmetrics.metrics.kinds import KINDS
from genmetrics.params import Constraint, Param, check_params, did_you_mean

ReferenceMode = Literal["required", "none", "optional", "prompts"]
HIGHER, LOWER = "higher", "lower"
#: how a value of ``closer_to_references`` is better (:meth:`Metric.better`)
CLOSER = "closer to the references"
#: what ``params`` maps each name to: (constraint or constraints, one-line doc)
ParamSpec = tuple[Constraint | tuple[Constraint, ...], str]
_INPUT_ARGS = ("candidate", "reference", "links", "prompt_ids")
#: the family of a metric that declares none (and of scores of unregistered metrics)
OTHER = "other"
#: metric families, in display order
FAMILIES = (
    "quality/diversity",  # a candidate distribution against the reference one
    "diversity",  # across a corpus: repetition, compression, homogeneity
    "lexical",  # per text: type-token statistics
    "reference",  # per pair: overlap with a reference text
    "surprisal",  # under an evaluator LM, or token frequencies
    "coherence",  # continuation against its prompt
    OTHER,
)
#: how a value reads (its range or unit) → what that means, for the tables' legends
SCALES = {
    "0–1": "between 0 and 1",
    "0–100": "between 0 and 100",
    "%": "a percentage (0–100)",
    "−1–1": "between −1 and 1 (a correlation or a cosine)",
    "0–n": "a sum of one share per n-gram order, between 0 and the number of orders",
    "≥ 0": "0 or more, unbounded",
    # an unbiased estimate of a quantity >= 0 (KID's MMD²): no range its intervals are cut to
    "≳ 0": "an unbiased estimate of a quantity ≥ 0: below 0 where the sets cannot be told apart",
    "≤ 0": "0 or less",
    "≥ 1": "1 or more, unbounded",
    "nats": "natural-log units (a log-probability or surprisal)",
    "words": "a length in words",
    "count": "a number of items",
}
#: the score tables' one convention: scale registered → (scale shown, factor applied); a
#: proportion reads 0–1 in every table, whatever scale its metric reports it on
TABLE_SCALES = {"%": ("0–1", 0.01), "0–100": ("0–1", 0.01)}
#: figures that metric scores feed → the values a metric must declare to feed it
FIGURES: dict[str, tuple[str, ...]] = {
    "pr_plane": ("precision", "recall"),  # the precision–recall plane (seeds, resamples)
    "pr_curves": (),  # PRD curves (the records' extras)
    "spectra": (),  # surprisal spectra (the records' extras)
}
#: comma-separated modules imported with the built-in metrics (see the module docstring)
PLUGIN_ENV = "GENMETRICS_METRIC_MODULES"


@dataclass
class MetricResult:
    """What a metric returns: named scalar values, plus arrays for plots (curves, histograms).

    ``warnings``: one line each where the number is degenerate or computed on less than the
    inputs (zero k-NN radii, identical histograms, a rank-deficient covariance, texts a model
    of the metric truncated); the score record carries them (``warnings``), and so do
    ``scores.csv`` and the headline table. ``truncation``: for a metric that runs a model on
    texts itself (BERTScore), per role (``candidate``, ``reference``) the
    :func:`genmetrics.metrics.kinds.truncation_record` of its tokenizer's cut."""

    values: dict[str, float]
    extras: dict[str, Any] = field(default_factory=dict)
    n: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    truncation: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass(frozen=True)
class Preset:
    """What one choice of a preset parameter implies: ``fixed`` settings (not to be changed
    under it) and ``defaults`` (overridable); ``doc`` says what the choice reproduces."""

    doc: str
    fixed: Mapping[str, Any] = field(default_factory=dict)
    defaults: Mapping[str, Any] = field(default_factory=dict)


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
    by_prompt: bool = False
    input_by: Mapping[str, Mapping[Any, str]] = field(default_factory=dict)
    part: str = "text"
    aggregation: str = "corpus"
    upstream: str = ""
    citation: str = ""
    assets: Callable[[Mapping[str, Any]], tuple[str, ...]] = lambda params: ()
    loads_model: Callable[[Mapping[str, Any]], bool] = lambda params: False
    costly: Callable[[Mapping[str, Any]], str] = lambda params: ""
    min_items: Callable[[Mapping[str, Any]], tuple[int, str]] = lambda params: (1, "")
    exclusion: Callable[[Mapping[str, Any]], str] | None = None
    family: str = OTHER
    headline: tuple[str, ...] = ()
    scales: Mapping[str, str] = field(default_factory=dict)  # value → SCALES key; {}: unstated
    figures: tuple[str, ...] = ()
    sweepable: bool = False
    presets: Mapping[str, Mapping[str, Preset]] = field(default_factory=dict)
    duplicates_change_value: bool = True
    #: where a parameter decides it (MATTR's ``pool``), the value for checked params
    duplicates_when: Callable[[Mapping[str, Any]], bool] | None = None

    def duplicates_matter(self, params: Mapping[str, Any] | None = None) -> bool:
        """Whether a copy of a text changes the value under ``params`` (``duplicates_when``
        where registered, else ``duplicates_change_value``; missing params: the defaults)."""
        if self.duplicates_when is None:
            return self.duplicates_change_value
        return bool(self.duplicates_when({**self.defaults, **(params or {})}))

    closer_to_references: tuple[str, ...] = ()

    def better(self, value: str) -> str | None:
        """How ``value`` is better, for people: ``higher``, ``lower``, ``closer to the
        references`` (:attr:`closer_to_references`) or None (no direction)."""
        if value in self.closer_to_references:
            return CLOSER
        return self.values.get(value)

    @property
    def defaults(self) -> dict[str, Any]:
        return {k: p.default for k, p in self.params.items()}

    def defaults_for(self, params: Mapping[str, Any] | None) -> dict[str, Any]:
        """The defaults under the preset choices in ``params`` (e.g. FACE's convention)."""
        given = params or {}
        return self.check_params({k: given[k] for k in self.presets if k in given})

    def input_kind(self, params: Mapping[str, Any] | None = None) -> str:
        """The input kind of a run with ``params`` (checked; a missing one is its default):
        the kind ``input_by`` names for a parameter's value, else ``input``."""
        given = params or {}
        for key, kinds in self.input_by.items():
            value = given.get(key, self.params[key].default)
            if value in kinds:
                return kinds[value]
        return self.input

    def scale(self, value: str) -> str | None:
        """How ``value`` reads (a key of :data:`SCALES`); None where the metric states none."""
        return self.scales.get(value)

    def table_scale(self, value: str) -> tuple[str | None, float]:
        """(the scale the score tables show ``value`` on, the factor from the metric's own
        numbers to it): :data:`TABLE_SCALES`, else its registered scale and 1."""
        scale = self.scale(value)
        return TABLE_SCALES.get(scale, (scale, 1.0)) if scale else (None, 1.0)

    def check_params(self, params: Mapping[str, Any] | None, where: str | None = None) -> dict:
        """Every parameter as the metric will run with it (defaults filled, preset settings
        applied, values checked)."""
        where = where or f"{self.name} params"
        given = dict(params or {})
        for key, choices in self.presets.items():
            choice = self.params[key].check(given[key], f"{where}.{key}") if key in given else None
            preset = choices[choice if choice is not None else self.params[key].default]
            for name, value in preset.fixed.items():
                if name in given and given[name] != value:
                    raise GenmetricsError(
                        f"{where}.{name}: {key}={choice} fixes {name}={value!r} "
                        f"({preset.doc}); got {given[name]!r}. Drop {name}, or choose another "
                        f"{key} ({', '.join(choices)})"
                    )
            given = {**preset.defaults, **preset.fixed, **given}
        return check_params(self.params, given, where)

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "input": self.input,
            "paired": self.paired,
            "links": self.links,
            "by_prompt": self.by_prompt,
            "input_by": {k: dict(v) for k, v in self.input_by.items()},
            "part": self.part,
            "reference": self.reference,
            "values": dict(self.values),
            "params": {
                k: {"default": p.default, "accepts": p.describe(), "doc": p.doc}
                for k, p in self.params.items()
            },
            "family": self.family,
            "headline": list(self.headline),
            "scales": dict(self.scales),
            "figures": list(self.figures),
            "sweepable": self.sweepable,
            "duplicates_change_value": self.duplicates_change_value,
            "closer_to_references": list(self.closer_to_references),
            "presets": {
                key: {
                    c: {"doc": p.doc, "fixed": dict(p.fixed), "defaults": dict(p.defaults)}
                    for c, p in choices.items()
                }
                for key, choices in self.presets.items()
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
    by_prompt: bool = False,
    input_by: Mapping[str, Mapping[Any, str]] | None = None,
    part: str = "text",
    aggregation: str = "corpus",
    upstream: str = "",
    citation: str = "",
    assets: Callable[[Mapping[str, Any]], tuple[str, ...]] | None = None,
    loads_model: Callable[[Mapping[str, Any]], bool] | None = None,
    costly: Callable[[Mapping[str, Any]], str] | None = None,
    min_items: Callable[[Mapping[str, Any]], tuple[int, str]] | None = None,
    exclusion: Callable[[Mapping[str, Any]], str] | None = None,
    description: str | None = None,
    family: str = OTHER,
    headline: Sequence[str] | None = None,
    scale: str | Mapping[str, str] | None = None,
    figures: Sequence[str] = (),
    sweepable: bool = False,
    presets: Mapping[str, Mapping[str, Preset]] | None = None,
    duplicates_change_value: bool = True,
    duplicates_when: Callable[[Mapping[str, Any]], bool] | None = None,
    closer_to_references: Sequence[str] = (),
) -> Callable[[Callable], Callable]:
    """Decorator that registers ``func`` under ``name`` (snake_case, stable); the facts are
    checked here (see the module docstring)."""
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
    heads = _check_headline(name, values, headline)
    closer = tuple(closer_to_references)
    if any(values.get(v) is None for v in closer):
        raise ValueError(
            f"metric {name!r}: closer_to_references {list(closer)} names values without a direction"
        )
    scales = _check_scales(name, values, scale)
    _check_facts(name, values, family, figures)

    def deco(func: Callable) -> Callable:
        if name in _REGISTRY and _REGISTRY[name].func is not func:
            raise ValueError(f"metric {name!r} registered twice")
        doc = description or (inspect.getdoc(func) or "").split("\n\n")[0].replace("\n", " ")
        declared = _declare(name, func, params or {})
        check_presets(name, declared, presets or {})
        check_input_by(name, input, declared, input_by or {})
        _REGISTRY[name] = Metric(
            name=name,
            func=func,
            input=input,
            reference=reference,
            values=dict(values),
            params=declared,
            description=doc,
            paired=paired,
            links=links,
            by_prompt=by_prompt,
            input_by={k: dict(v) for k, v in (input_by or {}).items()},
            part=part,
            aggregation=aggregation,
            upstream=upstream,
            citation=citation,
            assets=assets or (lambda params: ()),
            loads_model=loads_model or (lambda params: False),
            costly=costly or (lambda params: ""),
            min_items=min_items or (lambda params: (1, "")),
            exclusion=exclusion,
            family=family,
            headline=heads,
            scales=scales,
            figures=tuple(figures),
            sweepable=sweepable,
            presets={k: dict(v) for k, v in (presets or {}).items()},
            duplicates_change_value=bool(duplicates_change_value),
            duplicates_when=duplicates_when,
            closer_to_references=closer,
        )
        return func

    return deco


def _check_headline(
    name: str, values: Mapping[str, str | None], headline: Sequence[str] | None
) -> tuple[str, ...]:
    """The headline as declared (directed values, no repeat), or the first directed value."""
    directed = [v for v, d in values.items() if d is not None]
    if headline is None:
        return tuple(directed[:1])
    if isinstance(headline, str):
        raise ValueError(f"metric {name!r}: headline must be a sequence of value names")
    heads = tuple(headline)
    bad = [v for v in heads if v not in directed]
    if bad:
        raise ValueError(
            f"metric {name!r}: headline value(s) {bad} are not values with a direction "
            f"(those are {directed})"
        )
    if len(set(heads)) != len(heads):
        raise ValueError(f"metric {name!r}: headline {list(heads)} repeats a value")
    return heads


def _check_scales(
    name: str, values: Mapping[str, str | None], scale: str | Mapping[str, str] | None
) -> dict[str, str]:
    """Value → scale: one scale for every value, or a mapping naming each value exactly."""
    if scale is None:
        return {}
    scales = {v: scale for v in values} if isinstance(scale, str) else dict(scale)
    if set(scales) != set(values):
        raise ValueError(
            f"metric {name!r}: scale must name every value: missing "
            f"{sorted(set(values) - set(scales))}, unknown {sorted(set(scales) - set(values))}"
        )
    bad = {v: s for v, s in scales.items() if s not in SCALES}
    if bad:
        raise ValueError(f"metric {name!r}: scale(s) {bad} not in {list(SCALES)}")
    return scales


def _check_facts(
    name: str, values: Mapping[str, str | None], family: str, figures: Sequence[str]
) -> None:
    if family not in FAMILIES:
        raise ValueError(f"metric {name!r}: family must be one of {FAMILIES}, got {family!r}")
    if isinstance(figures, str):
        raise ValueError(f"metric {name!r}: figures must be a sequence of figure names")
    for f in figures:
        if f not in FIGURES:
            raise ValueError(f"metric {name!r}: figure {f!r} is not one of {tuple(FIGURES)}")
        missing = [v for v in FIGURES[f] if v not in values]
        if missing:
            raise ValueError(f"metric {name!r}: figure {f!r} plots value(s) {missing} it lacks")


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
    """Import every module of ``genmetrics.metrics`` (not starting with ``_``) once, then the
    plugin modules named in :data:`PLUGIN_ENV` (imported once each, as any import)."""
    global _loaded
    if not _loaded:
        # the package's folder, found without importing the package (its __init__ imports us)
        for info in pkgutil.iter_modules([str(Path(__file__).parent)]):
            if info.name.startswith("_") or info.name == "registry":
                continue
            importlib.import_module(f"genmetrics.metrics.{info.name}")
        _loaded = True
    _load_plugins()


def _load_plugins() -> None:
    for module in plugin_modules():
        try:
            importlib.import_module(module)
        except ImportError as e:
            raise GenmetricsError(f"{PLUGIN_ENV}: cannot import {module!r}: {e}") from None


def _load_for(name: str) -> None:
    """What :func:`get` needs: the module named after the metric when there is one (most
    built-in metrics live in theirs, so a job imports only the code it runs: 0.04 s less per
    process than every module) and the plugins; every module when that did not register
    ``name``."""
    if not _loaded and name.isidentifier() and not name.startswith("_") and name != "registry":
        if (Path(__file__).parent / f"{name}.py").is_file():
            importlib.import_module(f"genmetrics.metrics.{name}")
    _load_plugins()
    if name not in _REGISTRY:
        _load_all()


def plugin_modules() -> list[str]:
    """The modules named in :data:`PLUGIN_ENV` (comma-separated; blanks ignored)."""
    return [m.strip() for m in os.environ.get(PLUGIN_ENV, "").split(",") if m.strip()]


def get(name: str) -> Metric:
    _load_for(name)
    try:
        return _REGISTRY[name]
    except KeyError:
        raise GenmetricsError(
            f"unknown metric {name!r}{did_you_mean(name, _REGISTRY)}; known metrics: "
            f"{', '.join(sorted(_REGISTRY))}"
        ) from None


def all_metrics() -> dict[str, Metric]:
    _load_all()
    return dict(sorted(_REGISTRY.items()))


def metrics_feeding(figure: str) -> list[str]:
    """The registered metrics whose scores feed ``figure`` (a key of :data:`FIGURES`)."""
    if figure not in FIGURES:
        raise ValueError(f"figure must be one of {tuple(FIGURES)}, got {figure!r}")
    return [n for n, m in all_metrics().items() if figure in m.figures]


def resolve_params(metric: Metric, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Merge user parameters over the metric's defaults, each checked (see Metric.check_params)."""
    return metric.check_params(params)
