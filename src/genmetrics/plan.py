"""The run plan: a workflow config, checked and resolved once, as typed objects.

:func:`load_plan` turns a config mapping into a :class:`Plan`:

1. validation against the JSON schema, whose ``default:`` values fill what the config leaves
   out (the schema is the one source of config defaults);
2. ``$VAR``/``~`` expansion in path keys (``genmetrics.config.expand_paths``);
3. cross-checks of names: a model's checkpoint, an entry's featurizer, a reference model's seed;
4. every metric entry's parameter *values*, completed with the metric's defaults and checked
   by the metric itself (``Metric.check_params``), so a bad value stops ``snakemake -n`` with
   its key path, e.g. ``metrics.pr_k50.params.k: must be an integer >= 1, got 'four'``.

Rules only wire: every job's input files and params, every target list and every result path
(:data:`RESULTS`) come from here. A per-model job's params depend only on that model (and on
settings that concern it), never on the model list; params are dicts with sorted keys, so
reordering config.yaml triggers no rerun.

This module is ~700 lines on purpose: the typed objects, the queries the rules call and the
builder that fills them are one idea (what the config means), kept in one place so that no
default or path is decided anywhere else.
"""

from __future__ import annotations

import copy
import inspect
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.agreement.settings import AGREE, AgreementPlan, JudgmentSet, agreement_plan
from genmetrics.generation import GenerationSettings
from genmetrics.kinds import KINDS, PARTS, TEXT_KINDS, texts_path
from genmetrics.omniinput.settings import OMNI, PROPOSALS, OmniPlan, omni_plan
from genmetrics.provenance import code_digest
from genmetrics.resources import JobResources, job_resources, resource_keys

REFERENCES = "references"
#: modules whose code decides a feature file (their digest is a params value of the rule)
FEATURE_CODE = {
    "embed": ("genmetrics.features.embed",),
    "surprisal": ("genmetrics.features.surprisal",),
}
#: the OmniInput code (the jobs module imports the whole subpackage, whose modules the digest
#: follows): any change to it reruns the OmniInput jobs
AGREEMENT_CODE = (
    "genmetrics.agreement.scoring",
    "genmetrics.agreement.correlation",
    "genmetrics.agreement.preference",
    "genmetrics.agreement.judgment_sets",
    "genmetrics.analysis.statistics",
)
OMNI_CODE = ("genmetrics.omniinput.jobs", "genmetrics.metrics.omniinput")
#: the wildcard that names what a GPU rule's job loads
_RULE_WILDCARD = {
    "generate": "model",
    "embed": "featurizer",
    "surprisal": "evaluator",
    "score_with_model": "entry",
    "omni_sample": "run",
}
PROMPTS = "prompts"
#: assets the ``pos_tags`` rule needs (genmetrics.assets.ASSETS)
POS_ASSETS = ("nltk_data",)


@dataclass(frozen=True)
class ResultPaths:
    """The one table of result paths (Snakemake patterns); rules and targets use these names."""

    raw: str = "results/data/{dataset}/raw.jsonl"
    references: str = texts_path("{dataset}", REFERENCES)
    clean_stats: str = "results/data/{dataset}/clean_stats.json"
    size_check: str = "results/data/{dataset}/size_check.json"
    prompts: str = texts_path("{dataset}", PROMPTS)
    shard: str = "results/generations/{dataset}/{model}/shards/seed{seed}.{shard}.jsonl"
    shard_stats: str = "results/generations/{dataset}/{model}/shards/seed{seed}.{shard}.stats.json"
    # a generate job's finished batches (genmetrics.progress), deleted once the shard is written
    progress: str = "results/generations/{dataset}/{model}/shards/seed{seed}.{shard}.progress.jsonl"
    generations: str = texts_path("{dataset}", "{model}/seed{seed}")
    generation_stats: str = "results/generations/{dataset}/{model}/seed{seed}.stats.json"
    embeddings: str = KINDS["embeddings"].pattern
    surprisal: str = KINDS["surprisal"].pattern
    pos: str = KINDS["pos"].pattern
    score: str = "results/scores/{dataset}/{source}/{entry}.json"
    scores: str = "results/scores.csv"
    scores_summary: str = "results/scores_summary.csv"
    headline_table: str = "results/scores_headline.csv"
    headline_markdown: str = "results/scores_headline.md"
    spread: str = "results/analysis/spread/{dataset}/{model}/{entry}.json"
    spread_table: str = "results/spread.csv"
    sweep: str = "results/analysis/sweep/{dataset}/{source}/{entry}.csv"
    length_table: str = "results/analysis/length_correlation.csv"
    correlation_figure: str = "results/figures/metric_correlation.png"
    correlation_table: str = "results/analysis/metric_correlation.csv"
    pr_figure: str = "results/figures/precision_recall.png"
    pr_plane_table: str = "results/analysis/pr_plane.csv"
    overlap_table: str = "results/analysis/model_overlap.csv"
    overlap_markdown: str = "results/analysis/model_overlap.md"
    pr_curves_figure: str = "results/figures/pr_curves.png"
    spectra_figure: str = "results/figures/surprisal_spectra.png"
    scaling_table: str = "results/analysis/scaling.csv"
    scaling_markdown: str = "results/analysis/scaling.md"
    scaling_figure: str = "results/figures/scaling.png"
    length_figure: str = "results/figures/length_correlation.png"
    sweep_figure: str = "results/figures/pr_sweep.png"
    report: str = "results/report.html"


RESULTS = ResultPaths()


def canonical(obj: Any) -> Any:
    """Dicts with sorted keys (recursively), lists for tuples: job params compare equal when
    only the key order of the config changed."""
    if isinstance(obj, Mapping):
        return {k: canonical(obj[k]) for k in sorted(obj)}
    if isinstance(obj, (list, tuple)):
        return [canonical(v) for v in obj]
    return obj


def names_pattern(names: Iterable[str]) -> str:
    """A regex matching exactly one of ``names`` (matching nothing when there are none)."""
    names = list(names)
    return "|".join(re.escape(n) for n in names) if names else "(?!)"


def split_part(source: str) -> tuple[str, str]:
    """``"m/seed0.continuation"`` → ``("m/seed0", "continuation")``; ``"m/seed0"`` → text."""
    for part in PARTS[1:]:
        if source.endswith(f".{part}"):
            return source[: -len(part) - 1], part
    return source, PARTS[0]


# ------------------------------------------------------------------ typed plan objects


@dataclass(frozen=True)
class Dataset:
    name: str
    spec: dict  # source and reading options: what fetch_dataset needs
    clean: dict
    prompts: dict  # words, mode, file (schema defaults filled)

    @property
    def local_files(self) -> list[str]:
        src = self.spec["source"]
        return [src["path"]] if src["kind"] == "local" else []

    @property
    def prompt_files(self) -> list[str]:
        return [self.prompts["file"]] if self.prompts.get("file") else []


@dataclass(frozen=True)
class Checkpoint:
    name: str
    spec: dict  # what fetch_model needs; it writes the manifest Plan.manifest(name)
    params_b: float | None = None  # parameters in billions (sizes its GPU jobs)
    resources: dict | None = None  # checkpoints.<name>.resources
    dtype: str = "auto"  # generation precision (genmetrics.models.resolve_dtype)


#: checkpoint keys that size or place its jobs, not what fetch_model makes of it
_JOB_KEYS = ("params_b", "resources", "max_memory")


@dataclass(frozen=True)
class Model:
    """A generator: a checkpoint with decoding settings, or texts that already exist."""

    name: str
    datasets: tuple[str, ...]
    seeds: tuple[int, ...]
    checkpoint: str | None = None
    #: per dataset: every setting of this model's generate jobs
    generation: dict[str, GenerationSettings] = field(default_factory=dict)
    texts: dict | None = None  # imported texts spec (models.<name>.texts)
    resources: dict | None = None  # models.<name>.resources (its generate jobs)

    @property
    def generates(self) -> bool:
        return self.checkpoint is not None

    def sources(self) -> list[str]:
        return [f"{self.name}/seed{s}" for s in self.seeds]

    def texts_for(self, dataset: str) -> dict:
        """The imported texts spec for one dataset (``{dataset}`` in the path filled in)."""
        spec = dict(self.texts or {})
        src = dict(spec.get("source", {}))
        if "path" in src:
            src["path"] = str(src["path"]).replace("{dataset}", dataset)
        spec["source"] = src
        return spec

    def local_files(self, dataset: str) -> list[str]:
        src = self.texts_for(dataset).get("source", {})
        return [src["path"]] if src.get("kind") == "local" else []


@dataclass(frozen=True)
class FeatureModel:
    """A featurizer (embeddings) or an evaluator (surprisal): a checkpoint plus settings."""

    name: str
    checkpoint: str
    settings: dict  # keyword arguments of embed_texts / surprisal_texts (cache included)


@dataclass(frozen=True)
class ScoreEntry:
    """One ``metrics.<entry>``: a registered metric, its checked params, what it reads."""

    name: str
    metric: str
    params: dict  # every parameter as the metric runs with it (defaults filled, checked)
    input: str  # a kind of genmetrics.kinds.KINDS
    part: str  # text | continuation
    paired: bool
    reference: str | None  # source of the reference set; None for reference-free metrics
    datasets: tuple[str, ...]
    feature_model: str | None  # the featurizer or evaluator (kind's config_key)
    length_control: str
    score_references: bool
    spread: dict | None
    assets: tuple[str, ...]
    loads_model: bool  # runs an encoder in the job (BERTScore): the score_with_model rule
    min_items: tuple[int, str]  # (items each set needs, the parameter asking) from the registry

    def input_path(self, dataset: str, source: str) -> str:
        """The file this entry reads for one source (features, tags or texts)."""
        if self.length_control != "none":
            return texts_path(dataset, source)  # cut first, then scored
        kind = KINDS[self.input]
        keys = {kind.config_key: self.feature_model} if kind.config_key else {}
        return kind.path(dataset, source, self.part, **keys)

    def settings(self) -> dict:
        """A score job's params: the same for every source."""
        return canonical(
            {
                "metric": self.metric,
                "params": self.params,
                "reference": self.reference,
                "length_control": self.length_control,
            }
        )


@dataclass(frozen=True)
class Targets:
    scores: tuple[str, ...]
    generation_stats: tuple[str, ...]
    spreads: tuple[str, ...]
    sweeps: tuple[str, ...]
    prd_scores: tuple[str, ...]
    face_scores: tuple[str, ...]  # the first face entry's, for the spectra figure
    figures: tuple[str, ...]  # in the HTML report
    analyses: tuple[str, ...]
    all: tuple[str, ...]
    omniinput: tuple[str, ...] = ()  # not in all: `snakemake omniinput`
    agreement: tuple[str, ...] = ()  # `snakemake agreement`; all of an agreement-only config
    omniinput_toy: tuple[str, ...] = ()


@dataclass(frozen=True)
class Plan:
    cache: str
    model_cache: str
    feature_cache: str
    datasets: dict[str, Dataset]
    checkpoints: dict[str, Checkpoint]
    models: dict[str, Model]
    featurizers: dict[str, FeatureModel]
    evaluators: dict[str, FeatureModel]
    entries: dict[str, ScoreEntry]
    sweep: dict | None
    report: dict
    scaling: dict | None = None  # analysis.scaling, checked
    omniinput: OmniPlan | None = None  # omniinput:, checked
    agreement: AgreementPlan | None = None  # agreement:, checked
    cluster: dict = field(default_factory=dict)  # the config's resources: section
    notes: tuple[str, ...] = ()  # what the environment changed, for the run log
    targets: Targets = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "targets", self._targets())

    # -------------------------------------------------------------- names and sources

    @property
    def generating_models(self) -> list[str]:
        return [m for m, model in self.models.items() if model.generates]

    @property
    def text_models(self) -> list[str]:
        return [m for m, model in self.models.items() if not model.generates]

    def model_sources(self, dataset: str) -> list[str]:
        """``{model}/seed{seed}`` of every model evaluated on ``dataset``."""
        return [s for m in self.models.values() if dataset in m.datasets for s in m.sources()]

    def entries_loading_models(self, loads: bool) -> list[str]:
        """Entries whose score job runs an encoder (``loads=True``) or not."""
        return [n for n, e in self.entries.items() if e.loads_model == loads]

    def wildcard_constraints(self) -> dict[str, str]:
        parts = "|".join(re.escape(p) for p in PARTS[1:])
        models = names_pattern(self.models)
        return {
            "dataset": names_pattern(self.datasets),
            "model": models,
            "checkpoint": names_pattern(self.checkpoints),
            "featurizer": names_pattern(self.featurizers),
            "evaluator": names_pattern(self.evaluators),
            "entry": names_pattern(self.entries),
            "asset": names_pattern(
                sorted(
                    {a for e in self.entries.values() for a in e.assets}
                    | set(POS_ASSETS)
                    | {a for s in self.agreement_sets() for a in s.assets()}
                )
            ),
            "seed": r"\d+",
            "shard": r"\d+",
            "run": names_pattern(self.omniinput.runs if self.omniinput else {}),
            "jset": names_pattern(self.agreement.sets if self.agreement else {}),
            "proposal": "|".join(PROPOSALS),
            "source": rf"(?:{REFERENCES}|{PROMPTS}|(?:{models})/seed\d+)(?:\.(?:{parts}))?",
        }

    def model_templates(self) -> dict[str, str]:
        """``chat`` or ``base`` per generating model (imported texts have none), sorted by name
        so that reordering the config's models reruns nothing."""
        return {
            name: m.generation[m.datasets[0]].template
            for name, m in sorted(self.models.items())
            if m.generates
        }

    def manifest(self, checkpoint: str) -> str:
        """The loadable description of a checkpoint (genmetrics.models.prepare_model)."""
        return f"{self.model_cache}/{checkpoint}/model.json"

    def asset_manifest(self, asset: str) -> str:
        return f"{self.cache}/assets/{asset}.json"

    def job(self, method: str) -> Callable[[Any], Any]:
        """An input/params function for a rule: ``self.<method>`` called with the job's
        wildcards that it names (``dataset``, ``model``, ...)."""
        fn = getattr(self, method)
        names = list(inspect.signature(fn).parameters)

        def of_wildcards(wildcards):
            return fn(**{n: wildcards[n] for n in names})

        of_wildcards.__name__ = method
        return of_wildcards

    def sweep_temp_files(self, older_than_s: float = 3600) -> int:
        """Delete temporary files that killed writers left in ``results/`` and the caches
        (:func:`genmetrics.io.sweep_stale_tmp`, older than an hour: a live writer on another
        node is never that slow to rename); return how many."""
        from genmetrics.io import sweep_stale_tmp

        folders = dict.fromkeys(["results", self.cache, self.model_cache, self.feature_cache])
        return sum(sweep_stale_tmp(f, older_than_s, recursive=True) for f in folders)

    # -------------------------------------------------------------- data and generation

    def dataset_spec(self, dataset: str) -> dict:
        return canonical(self.datasets[dataset].spec)

    def dataset_files(self, dataset: str) -> list[str]:
        """A local dataset file is an input: a missing one stops the DAG before any job."""
        return self.datasets[dataset].local_files

    def clean_options(self, dataset: str) -> dict:
        return canonical(self.datasets[dataset].clean)

    def size_requirements(self, dataset: str) -> list[dict]:
        """What each entry on ``dataset`` needs of the cleaned set, checked right after cleaning
        (the ``check_sizes`` rule) so that a k or a cluster count too large for the data fails
        before any model runs. A spread resample keeps ``fraction`` of the references."""
        out = []
        for e in self.entries.values():
            least, param = e.min_items
            if dataset not in e.datasets or least <= 1:
                continue
            fraction = e.spread["fraction"] if e.spread else 1.0
            why = f"{param}={e.params[param]} needs at least {least} texts per set"
            if fraction < 1:
                why += f", and the spread resamples keep {fraction:g} of the references"
            out.append(
                {
                    "entry": e.name,
                    "key": f"metrics.{e.name}.params.{param}",
                    "needs": math.ceil(least / fraction),
                    "why": why,
                }
            )
        return canonical(out)

    def prompt_options(self, dataset: str) -> dict:
        return canonical(self.datasets[dataset].prompts)

    def prompt_files(self, dataset: str) -> list[str]:
        return self.datasets[dataset].prompt_files

    def checkpoint_spec(self, checkpoint: str) -> dict:
        return canonical(self.checkpoints[checkpoint].spec)

    def generation_settings(self, dataset: str, model: str) -> dict:
        """Everything about one model's generation job, and nothing about other models."""
        return canonical(self.models[model].generation[dataset].as_dict())

    def generation_model(self, model: str) -> str:
        return self.manifest(self.models[model].checkpoint)

    def shard_files(self, dataset: str, model: str, seed: str) -> list[str]:
        n = self.models[model].generation[dataset].shards
        keys = dict(dataset=dataset, model=model, seed=seed)
        return [RESULTS.shard.format(shard=i, **keys) for i in range(n)]

    def shard_stat_files(self, dataset: str, model: str, seed: str) -> list[str]:
        n = self.models[model].generation[dataset].shards
        keys = dict(dataset=dataset, model=model, seed=seed)
        return [RESULTS.shard_stats.format(shard=i, **keys) for i in range(n)]

    def imported_texts(self, dataset: str, model: str) -> dict:
        return canonical(self.models[model].texts_for(dataset))

    def imported_files(self, dataset: str, model: str) -> dict[str, Any]:
        """The texts file (when local) and, with ``match_references``, the dataset's
        references, whose ids the texts are restricted to."""
        out: dict[str, Any] = {"texts": self.models[model].local_files(dataset)}
        if (self.models[model].texts or {}).get("match_references"):
            out["references"] = RESULTS.references.format(dataset=dataset)
        return out

    # -------------------------------------------------------------- cluster resources

    def job_resources(self, rule: str, name: str) -> JobResources:
        """What one GPU job asks of the cluster (:mod:`genmetrics.resources`). ``name`` is the
        job's model (generate), featurizer (embed), evaluator (surprisal) or entry
        (score_with_model)."""
        if rule == "generate":
            m = self.models[name]
            ck = self.checkpoints[m.checkpoint]
            layers, dtype, where = [ck.resources, m.resources], ck.dtype, f"models.{name}"
        elif rule in ("embed", "surprisal"):
            fm = (self.featurizers if rule == "embed" else self.evaluators)[name]
            ck = self.checkpoints[fm.checkpoint]
            layers, dtype, where = [ck.resources], "float32", f"checkpoints.{ck.name}"
        elif rule == "omni_sample":
            run = self.omni.runs[name]
            ck = self.checkpoints[run.checkpoint]
            layers, dtype, where = (
                [ck.resources, run.resources],
                "float32",
                f"omniinput.runs.{name}",
            )
        else:  # score_with_model: a small encoder (BERTScore), sized by the rule's settings
            ck, layers, dtype, where = None, [], "float32", f"resources.rules.{rule}"
        return job_resources(
            rule,
            self.cluster,
            params_b=ck.params_b if ck else None,
            dtype=dtype,
            overrides=layers,
            where=where + ".resources",
        )

    def rule_resources(self, rule: str) -> dict[str, Callable[..., Any]]:
        """``resources:`` of a GPU rule: one function of (wildcards, attempt) per resource, so
        the sizes follow the config per job and runtime grows with the attempt."""
        wildcard = _RULE_WILDCARD[rule]
        request = self.cluster["gpu_request"]

        def one(key: str) -> Callable[..., Any]:
            def value(wildcards, attempt):
                res = self.job_resources(rule, wildcards[wildcard])
                return res.snakemake(request, attempt)[key]

            value.__name__ = f"{rule}_{key}"
            return value

        return {key: one(key) for key in resource_keys(request)}

    def rule_threads(self, rule: str) -> Callable[..., int]:
        """``threads:`` of a GPU rule: the CPUs its job asks for."""
        wildcard = _RULE_WILDCARD[rule]

        def threads(wildcards):
            return self.job_resources(rule, wildcards[wildcard]).cpus

        threads.__name__ = f"{rule}_threads"
        return threads

    # -------------------------------------------------------------- features

    def source_texts(self, dataset: str, source: str) -> str:
        """The rows a feature job reads (for ``m/seed0.continuation``: the generations)."""
        return texts_path(dataset, split_part(source)[0])

    def feature_source(self, source: str) -> str:
        return split_part(source)[0]

    def feature_part(self, source: str) -> str:
        return split_part(source)[1]

    def featurizer_model(self, featurizer: str) -> str:
        return self.manifest(self.featurizers[featurizer].checkpoint)

    def embed_settings(self, featurizer: str) -> dict:
        return canonical(self.featurizers[featurizer].settings)

    def evaluator_model(self, evaluator: str) -> str:
        return self.manifest(self.evaluators[evaluator].checkpoint)

    def surprisal_settings(self, evaluator: str) -> dict:
        return canonical(self.evaluators[evaluator].settings)

    def pos_assets(self) -> list[str]:
        return [self.asset_manifest(a) for a in POS_ASSETS]

    # -------------------------------------------------------------- scores and analyses

    def score_inputs(self, dataset: str, source: str, entry: str) -> dict:
        e = self.entries[entry]
        inputs: dict[str, Any] = {"candidate": e.input_path(dataset, source)}
        if e.reference is not None:
            inputs["reference"] = e.input_path(dataset, e.reference)
        if e.length_control != "none":  # by design, depends on every source of the dataset
            inputs["group"] = [
                texts_path(dataset, s) for s in [REFERENCES, *self.model_sources(dataset)]
            ]
        if e.assets:
            inputs["assets"] = [self.asset_manifest(a) for a in e.assets]
        return inputs

    def score_settings(self, entry: str) -> dict:
        return self.entries[entry].settings()

    def score_upstream(self, dataset: str, source: str, entry: str) -> dict:
        """The config upstream of one score (for its provenance record): the featurizer or
        evaluator that made its features, and the generation settings of the model(s) whose
        texts it reads."""
        e = self.entries[entry]
        out: dict[str, Any] = {}
        if e.feature_model:
            table = self.featurizers if e.input == "embeddings" else self.evaluators
            fm = table[e.feature_model]
            out[KINDS[e.input].config_key] = {
                "name": fm.name,
                "checkpoint": self.checkpoint_spec(fm.checkpoint),
                "settings": fm.settings,
            }
        for role, src in (("candidate", source), ("reference", e.reference)):
            model = split_part(src)[0].split("/")[0] if src else None
            m = self.models.get(model) if model else None
            if m is not None and m.generates:
                out[f"{role}_generation"] = {
                    "model": m.name,
                    "checkpoint": self.checkpoint_spec(m.checkpoint),
                    "settings": self.generation_settings(dataset, m.name),
                }
        return canonical(out)

    def score_code(self, entry: str) -> str:
        """Digest of the code behind one entry's scores (:func:`code_digest`): the metric's
        module and the ``genmetrics.metrics`` helpers it imports (plus the length-control
        code when the entry uses it). A change there reruns this entry's scores only."""
        from genmetrics.metrics import get

        e = self.entries[entry]
        modules = [get(e.metric).func.__module__]
        if e.length_control != "none":
            modules.append("genmetrics.analysis.length")
        return code_digest(*modules)

    def code_digest(self, rule: str) -> str:
        """Digest of the code that decides a model rule's outputs (a params value)."""
        from genmetrics.generation import GENERATION_CODE

        return code_digest(*{"generate": GENERATION_CODE, **FEATURE_CODE}[rule])

    # -------------------------------------------------------------- OmniInput

    @property
    def omni(self) -> OmniPlan:
        if self.omniinput is None:
            raise GenmetricsError("the config has no omniinput: section")
        return self.omniinput

    def omni_toy_settings(self) -> dict[str, Any]:
        """The toy's settings with the code digest of the modules that compute it."""
        assert self.omni.toy is not None
        return {**self.omni.toy, "code": self.omni_code()}

    # -------------------------------------------------------------- human agreement

    def agreement_sets(self) -> list[JudgmentSet]:
        return list(self.agreement.sets.values()) if self.agreement else []

    def agreement_summary_settings(self) -> dict[str, Any]:
        """Every set's settings, keys sorted (a params value: config order changes nothing)."""
        return canonical({s.name: s.settings() for s in self.agreement_sets()})

    def agreement_names(self, pairwise: bool) -> list[str]:
        return [s.name for s in self.agreement_sets() if s.pairwise == pairwise]

    def agreement_set(self, jset: str) -> JudgmentSet:
        if self.agreement is None or jset not in self.agreement.sets:
            raise GenmetricsError(f"agreement.sets has no {jset!r}")
        return self.agreement.sets[jset]

    def agreement_inputs(self, jset: str) -> dict[str, Any]:
        """The set's files (a change reruns it) and the assets its metrics need."""
        s = self.agreement_set(jset)
        path = Path(s.path)
        files = sorted(str(p) for p in path.glob("*.jsonl")) if path.is_dir() else [str(path)]
        return {"data": files, "assets": [self.asset_manifest(a) for a in s.assets()]}

    def agreement_settings(self, jset: str) -> dict[str, Any]:
        """The set's settings with the code digest of the modules that score it."""
        from genmetrics.metrics import get

        s = self.agreement_set(jset)
        modules = {get(e["metric"]).func.__module__ for e in s.entries.values()}
        code = code_digest(*sorted(modules), *AGREEMENT_CODE)
        return canonical({**s.settings(), "path": s.path, "code": code})

    def agreement_results(self) -> dict[str, str]:
        """Per set, the table the summary reads (correlations or pairwise agreement)."""
        return {
            n: (AGREE.pairwise if s.pairwise else AGREE.correlations).format(jset=n)
            for n, s in (self.agreement.sets.items() if self.agreement else ())
        }

    def omni_code(self) -> str:
        """Digest of the OmniInput code (a params value: a code change reruns its jobs)."""
        return code_digest(*OMNI_CODE)

    def omni_toy_results(self) -> dict[str, str]:
        return self.omni.toy_results()

    def omni_run_model(self, run: str) -> str:
        return self.manifest(self.omni.runs[run].checkpoint)

    def omni_run_settings(self, run: str) -> dict[str, Any]:
        return {**self.omni.runs[run].settings(), "code": self.omni_code()}

    def omni_annotator(self, run: str) -> dict[str, Any]:
        return self.omni.runs[run].annotator

    def omni_direction(self, run: str) -> str:
        return self.omni.runs[run].direction

    def omni_annotator_inputs(self, run: str) -> dict[str, str]:
        """What the annotate job reads besides the samples: the judge LM or the raters' CSV."""
        a = self.omni.runs[run].annotator
        if a["kind"] == "judge_lm":
            return {"judge": self.manifest(a["checkpoint"])}
        if a["kind"] == "csv":
            return {"scores": a["path"]}
        return {}

    def omni_scores(self) -> list[str]:
        return [OMNI.run_score.format(run=r) for r in self.omni.runs]

    def spread_inputs(self, dataset: str, model: str, entry: str) -> dict:
        e = self.entries[entry]
        return {
            "reference": e.input_path(dataset, e.reference),
            "candidates": [e.input_path(dataset, s) for s in self.models[model].sources()],
        }

    def spread_settings(self, entry: str) -> dict:
        e = self.entries[entry]
        return canonical({"metric": e.metric, "params": e.params, "spread": e.spread})

    def sweep_inputs(self, dataset: str, source: str, entry: str) -> dict:
        e = self.entries[entry]
        return {
            "reference": e.input_path(dataset, e.reference),
            "candidate": e.input_path(dataset, source),
        }

    def _scaling_cells(self) -> list[dict[str, Any]]:
        members = {m for fam in self.scaling["families"].values() for m in fam}
        cells = []
        for name in self.scaling["metrics"]:
            e = self.entries[name]
            for ds in e.datasets:
                for m in sorted(members):
                    if ds not in self.models[m].datasets:
                        continue
                    src = self.models[m].sources()[0]
                    cells.append(
                        {
                            "entry": name,
                            "dataset": ds,
                            "model": m,
                            "score": RESULTS.score.format(dataset=ds, source=src, entry=name),
                            "candidate": e.input_path(ds, src),
                            "reference": e.input_path(ds, e.reference) if e.reference else None,
                        }
                    )
        return cells

    def scaling_inputs(self) -> dict[str, list[str]]:
        """Every score the scaling analysis judges, and the inputs it resamples."""
        cells = self._scaling_cells()
        feats = {c[k] for c in cells for k in ("candidate", "reference") if c[k]}
        return {"scores": [c["score"] for c in cells], "inputs": sorted(feats)}

    def scaling_settings(self) -> dict:
        """:func:`genmetrics.analysis.scaling.run_scaling`'s settings: families, bootstrap,
        each entry's metric, params, evaluator and variant label, and the cells' files."""
        from genmetrics.metrics import get

        entries = {}
        for name in self.scaling["metrics"]:
            e = self.entries[name]
            defaults = get(e.metric).defaults
            changed = [
                f"{k}={v if isinstance(v, str) else json.dumps(v)}"
                for k, v in e.params.items()
                if defaults[k] != v
            ]
            entries[name] = {
                "metric": e.metric,
                "params": e.params,
                "evaluator": e.feature_model,
                "variant": e.metric + (f" ({', '.join(changed)})" if changed else ""),
            }
        return canonical(
            {
                "families": self.scaling["families"],
                "bootstrap": self.scaling["bootstrap"],
                "seed": self.scaling["seed"],
                "entries": entries,
                "cells": self._scaling_cells(),
            }
        )

    def sweep_settings(self, entry: str) -> dict:
        return canonical({**self.sweep, "params": self.entries[entry].params})

    # -------------------------------------------------------------- targets

    def score_targets(self, entries: Iterable[str] | None = None) -> list[str]:
        out = []
        for name in self.entries if entries is None else entries:
            e = self.entries[name]
            for ds in e.datasets:
                srcs = [s for s in self.model_sources(ds) if s != e.reference]
                if e.reference is None and e.score_references:
                    srcs = [REFERENCES, *srcs]
                out += [RESULTS.score.format(dataset=ds, source=s, entry=name) for s in srcs]
        return out

    def _targets(self) -> Targets:
        gen_stats = [
            RESULTS.generation_stats.format(dataset=ds, model=m.name, seed=s)
            for ds in self.datasets
            for m in self.models.values()
            if m.generates and ds in m.datasets
            for s in m.seeds
        ]
        spreads = [
            RESULTS.spread.format(dataset=ds, model=m.name, entry=e.name)
            for e in self.entries.values()
            if e.spread is not None
            for ds in e.datasets
            for m in self.models.values()
            if ds in m.datasets and m.sources()[0] != e.reference
        ]
        sweeps = []
        if self.sweep:
            e = self.entries[self.sweep["metric"]]
            sweeps = [
                RESULTS.sweep.format(dataset=ds, source=m.sources()[0], entry=e.name)
                for ds in e.datasets
                for m in self.models.values()
                if ds in m.datasets
            ]
        prd = self.score_targets(n for n, e in self.entries.items() if e.metric == "prd")
        face = next((n for n, e in self.entries.items() if e.metric == "face"), None)
        face_scores = self.score_targets([face]) if face else []
        figures = [RESULTS.correlation_figure, RESULTS.pr_figure]
        figures += [RESULTS.pr_curves_figure] if prd else []
        figures += [RESULTS.spectra_figure] if face_scores else []
        figures += [RESULTS.scaling_figure] if self.scaling else []
        figures += [RESULTS.length_figure]
        analyses = [RESULTS.length_table]
        analyses += [RESULTS.scaling_table] if self.scaling else []
        analyses += [RESULTS.pr_curves_figure] if prd else []
        analyses += [RESULTS.spectra_figure] if face_scores else []
        analyses += [RESULTS.spread_table] if spreads else []
        omni = self.omniinput
        return Targets(
            omniinput=tuple(omni.targets) if omni else (),
            agreement=tuple(self.agreement.targets) if self.agreement else (),
            omniinput_toy=tuple(omni.toy_targets) if omni else (),
            scores=tuple(self.score_targets()),
            generation_stats=tuple(gen_stats),
            spreads=tuple(spreads),
            sweeps=tuple(sweeps),
            prd_scores=tuple(prd),
            face_scores=tuple(face_scores),
            figures=tuple(figures),
            analyses=tuple(analyses),
            all=(
                tuple(self.agreement.targets)
                if not self.models and self.agreement
                else (
                    RESULTS.scores,
                    RESULTS.report,
                    *analyses,
                    *(RESULTS.size_check.format(dataset=ds) for ds in self.datasets),
                )
            ),
        )


# ------------------------------------------------------------------ building the plan


def _scaling(
    spec: Mapping[str, Any] | None, entries: Mapping[str, ScoreEntry], models: Mapping[str, Model]
) -> dict | None:
    """``analysis.scaling`` checked: members are models, metrics are entries whose scores the
    analysis can recompute on resampled prompts."""
    if not spec:
        return None
    key = "analysis.scaling"
    for fam, members in spec["families"].items():
        for m in members:
            if m not in models:
                raise GenmetricsError(f"{key}.families.{fam}: {m!r} is not in models")
        if len(set(members.values())) != len(members):
            raise GenmetricsError(f"{key}.families.{fam}: sizes must differ, got {members}")
    names = list(spec.get("metrics") or entries)
    for name in names:
        if name not in entries:
            raise GenmetricsError(f"{key}.metrics: {name!r} is not in metrics")
        if entries[name].length_control != "none":
            raise GenmetricsError(
                f"{key}.metrics: {name!r} uses length_control; the analysis resamples each "
                "source on its own and cannot recut texts to the shortest"
            )
    return {
        "families": {f: dict(m) for f, m in spec["families"].items()},
        "metrics": names,
        "bootstrap": int(spec.get("bootstrap", 200)),
        "seed": int(spec.get("seed", 0)),
    }


def load_plan(config: Mapping[str, Any], schema_path: str | Path) -> Plan:
    """Validate ``config`` (a copy: the argument is not changed) and resolve it into a Plan.

    Raises :class:`GenmetricsError` naming the config key of the first problem.
    """
    from genmetrics.config import expand_paths, validate_config

    cfg = copy.deepcopy(dict(config))
    if "agreement" not in cfg:  # else the schema's anyOf error would not name the key
        missing = [k for k in ("datasets", "checkpoints", "models", "metrics") if k not in cfg]
        if missing:
            raise GenmetricsError(
                f"config: {missing[0]!r} is required (a config without datasets, checkpoints, "
                "models and metrics must have an agreement: section)"
            )
    validate_config(cfg, schema_path)
    notes = expand_paths(cfg)
    env_cache = os.environ.get("GENMETRICS_CACHE")
    if env_cache and Path(env_cache).resolve() != Path(cfg["cache"]).resolve():
        notes.append(
            f"GENMETRICS_CACHE={env_cache} in the environment is not used: jobs download into "
            f"cache: {cfg['cache']} (the config)"
        )
    datasets = {
        name: Dataset(
            name=name,
            spec={k: v for k, v in d.items() if k not in ("clean", "prompts")},
            clean=dict(d.get("clean", {})),
            prompts=dict(d["prompts"]),
        )
        for name, d in cfg.get("datasets", {}).items()
    }
    model_cache = cfg["model_cache"].rstrip("/")
    checkpoints = {name: _checkpoint(name, c) for name, c in cfg.get("checkpoints", {}).items()}
    cluster = dict(cfg["resources"])
    models = {
        name: _model(name, m, cfg, datasets, checkpoints, cluster)
        for name, m in cfg.get("models", {}).items()
    }
    feature_cache = cfg["feature_cache"].rstrip("/")
    featurizers = {
        name: _feature_model(name, f, "featurizers", "embed", feature_cache, checkpoints)
        for name, f in cfg.get("featurizers", {}).items()
    }
    evaluators = {
        name: _feature_model(name, f, "evaluators", "surprisal", feature_cache, checkpoints)
        for name, f in cfg.get("evaluators", {}).items()
    }
    tables = {"featurizer": featurizers, "evaluator": evaluators}
    entries = {
        name: _entry(name, e, datasets, models, tables)
        for name, e in cfg.get("metrics", {}).items()
    }
    sweep = cfg["analysis"].get("sweep")
    if sweep:
        name = sweep["metric"]
        if name not in entries:
            raise GenmetricsError(f"analysis.sweep.metric: {name!r} is not in metrics")
        if entries[name].metric != "precision_recall":
            raise GenmetricsError(
                f"analysis.sweep.metric: {name!r} is not a precision_recall entry"
            )
    plan = Plan(
        cache=cfg["cache"].rstrip("/"),
        model_cache=model_cache,
        feature_cache=feature_cache,
        datasets=datasets,
        checkpoints=checkpoints,
        models=models,
        featurizers=featurizers,
        evaluators=evaluators,
        entries=entries,
        sweep=dict(sweep) if sweep else None,
        report=dict(cfg["report"]),
        scaling=_scaling(cfg["analysis"].get("scaling"), entries, models),
        omniinput=omni_plan(cfg.get("omniinput"), checkpoints),
        agreement=agreement_plan(cfg.get("agreement")),
        cluster=cluster,
        notes=tuple(notes),
    )
    # a GPU kind that resources.gpu_kinds lacks stops the dry run here, naming its key
    for rule, table in (("embed", featurizers), ("surprisal", evaluators)):
        for name in table:
            plan.job_resources(rule, name)
    return plan


def _checkpoint(name: str, c: Mapping[str, Any]) -> Checkpoint:
    spec = {k: v for k, v in c.items() if k not in _JOB_KEYS}
    # fetch_model converts a GGUF once, to float32 unless bfloat16 is asked; "auto" is the
    # precision of generation, chosen per GPU at load time
    if spec.get("dtype") == "auto":
        spec["dtype"] = "float32"
    return Checkpoint(
        name,
        spec,
        params_b=c.get("params_b"),
        resources=dict(c["resources"]) if c.get("resources") else None,
        dtype=c["dtype"],
    )


def _model(
    name: str,
    m: Mapping[str, Any],
    cfg: Mapping[str, Any],
    datasets: Mapping[str, Dataset],
    checkpoints: Mapping[str, Checkpoint],
    cluster: Mapping[str, Any],
) -> Model:
    key = f"models.{name}"
    for ds in m.get("datasets", []):
        if ds not in datasets:
            raise GenmetricsError(f"{key}.datasets: {ds!r} is not in datasets")
    gen = cfg["generation"]
    common = dict(
        name=name,
        datasets=tuple(m.get("datasets", datasets)),
        seeds=tuple(m.get("seeds", gen["seeds"])),
        resources=dict(m["resources"]) if m.get("resources") else None,
    )
    if "texts" in m:
        if m.get("resources"):
            raise GenmetricsError(f"{key}.resources: imported texts run no GPU job")
        return Model(texts=dict(m["texts"]), **common)
    ckpts = cfg["checkpoints"]
    if m["checkpoint"] not in ckpts:
        raise GenmetricsError(
            f"{key}.checkpoint: {m['checkpoint']!r} is not in checkpoints "
            f"({', '.join(ckpts) or 'none'})"
        )
    ck = ckpts[m["checkpoint"]]
    checkpoint = checkpoints[m["checkpoint"]]
    res = job_resources(  # the same call as Plan.job_resources("generate", name)
        "generate",
        cluster,
        params_b=checkpoint.params_b,
        dtype=checkpoint.dtype,
        overrides=[checkpoint.resources, m.get("resources")],
        where=f"{key}.resources",
    )
    settings = {
        "template": m.get("template", ck["template"]),
        "tokenizer_family": ck.get("tokenizer_family"),
        "instruction": m.get("instruction"),
        "sampling": dict(m.get("sampling", {})),
        "words": m.get("words", gen["words"]),
        "batch_size": m.get("batch_size", gen["batch_size"]),
        "token_margin": gen["token_margin"],
        "shards": gen["shards"],
        "dtype": ck["dtype"],
        "trust_remote_code": ck["trust_remote_code"],
        # a model given more than one GPU is spread over them (accelerate)
        "device_map": ck.get("device_map") or ("auto" if res.gpus > 1 else None),
        "max_memory": dict(ck["max_memory"]) if ck.get("max_memory") else None,
    }
    if settings["max_memory"] and not settings["device_map"]:
        raise GenmetricsError(
            f"checkpoints.{m['checkpoint']}.max_memory: needs device_map (or more than one GPU)"
        )
    generation = {
        ds: GenerationSettings(**settings, mode=datasets[ds].prompts["mode"])
        for ds in common["datasets"]
    }
    return Model(checkpoint=m["checkpoint"], generation=generation, **common)


def _feature_model(
    name: str,
    f: Mapping[str, Any],
    section: str,
    kind: str,
    feature_cache: str,
    checkpoints: Mapping[str, Checkpoint],
) -> FeatureModel:
    if f["checkpoint"] not in checkpoints:
        raise GenmetricsError(
            f"{section}.{name}.checkpoint: {f['checkpoint']!r} is not in checkpoints"
        )
    settings = {k: v for k, v in f.items() if k != "checkpoint"}
    settings["cache_dir"] = f"{feature_cache}/{kind}/{name}"
    settings["cache_key"] = f"{name}:{f['checkpoint']}"
    return FeatureModel(name, f["checkpoint"], settings)


def _entry(
    name: str,
    e: Mapping[str, Any],
    datasets: Mapping[str, Dataset],
    models: Mapping[str, Model],
    tables: Mapping[str, Mapping[str, FeatureModel]],
) -> ScoreEntry:
    from genmetrics.metrics import get

    key = f"metrics.{name}"
    try:
        metric = get(e.get("metric", name))
    except GenmetricsError as err:
        raise GenmetricsError(f"{key}.metric: {err}") from None
    if metric.input == "density":
        raise GenmetricsError(
            f"{key}: {metric.name} scores a model's input space, not texts; configure it under "
            "omniinput.runs (README, OmniInput)"
        )
    params = metric.check_params(e["params"], where=f"{key}.params")
    kind = KINDS[metric.input]
    feature_model = None
    for what, table in tables.items():
        given = e.get(what)
        if what == kind.config_key:
            if not given:
                raise GenmetricsError(f"{key}.{what}: required for this metric ({metric.input})")
            if given not in table:
                raise GenmetricsError(f"{key}.{what}: {given!r} is not defined under {what}s")
            feature_model = given
        elif given:
            raise GenmetricsError(
                f"{key}.{what}: not used by {metric.name}, which reads {metric.input}"
            )
    entry_datasets = tuple(e.get("datasets", datasets))
    for ds in entry_datasets:
        if ds not in datasets:
            raise GenmetricsError(f"{key}.datasets: {ds!r} is not in datasets")
    reference = _reference_source(key, e, metric.reference, entry_datasets, models)
    if e["length_control"] != "none" and metric.input not in TEXT_KINDS:
        raise GenmetricsError(
            f"{key}.length_control: only for metrics on texts, not {metric.input}"
        )
    spread = e.get("spread")
    if spread is not None and (metric.input != "embeddings" or reference is None):
        raise GenmetricsError(f"{key}.spread: only for metrics on embeddings with a reference")
    return ScoreEntry(
        name=name,
        metric=metric.name,
        params=params,
        input=metric.input,
        part=metric.part,
        paired=metric.paired,
        reference=reference,
        datasets=entry_datasets,
        feature_model=feature_model,
        length_control=e["length_control"],
        # human references have no prompt/continuation split: only whole texts are scored
        score_references=e["score_references"] and metric.part == "text",
        spread=dict(spread) if spread is not None else None,
        assets=_assets(metric, params, e["length_control"]),
        loads_model=_loads_model(key, metric, params),
        min_items=metric.min_items(params),
    )


def _loads_model(key: str, metric: Any, params: Mapping[str, Any]) -> bool:
    """Whether the entry's job runs an encoder; its model must then be local (or the offline
    asset), since a hub id would be downloaded inside the job."""
    if not metric.loads_model(params):
        return False
    model = params.get("model")
    if model is not None and not Path(model).is_dir():
        raise GenmetricsError(
            f"{key}.params.model: {model!r} is not a local model folder; in the workflow a "
            "score job never downloads (leave it null for the offline MiniLM)"
        )
    return True


def _assets(metric: Any, params: Mapping[str, Any], length_control: str) -> tuple[str, ...]:
    """Offline assets a score job needs; a length-controlled metric on POS tags tags the cut
    texts itself, so it needs the tagger's data too."""
    assets = list(metric.assets(params))
    if length_control != "none" and metric.input == "pos":
        assets += [a for a in POS_ASSETS if a not in assets]
    return tuple(assets)


def _reference_source(
    key: str,
    e: Mapping[str, Any],
    mode: str,
    entry_datasets: tuple[str, ...],
    models: Mapping[str, Model],
) -> str | None:
    ref = e["reference"]
    if mode in ("none", PROMPTS):
        if ref != REFERENCES:
            raise GenmetricsError(
                f"{key}.reference: this metric takes "
                + ("no reference" if mode == "none" else "the dataset's prompts as reference")
            )
        return None if mode == "none" else PROMPTS
    if isinstance(ref, str):
        return ref
    model = models.get(ref["model"])
    if model is None:
        raise GenmetricsError(f"{key}.reference.model: {ref['model']!r} is not in models")
    if ref["seed"] not in model.seeds:
        raise GenmetricsError(
            f"{key}.reference.seed: {ref['seed']} is not a seed of model {model.name!r} "
            f"({', '.join(map(str, model.seeds))})"
        )
    missing = [ds for ds in entry_datasets if ds not in model.datasets]
    if missing:
        raise GenmetricsError(
            f"{key}.reference.model: {model.name!r} is not evaluated on dataset {missing[0]!r}"
        )
    return f"{model.name}/seed{ref['seed']}"


# ------------------------------------------------------------------ running a score job


def score_entry(
    settings: Mapping[str, Any],
    *,
    entry: str,
    dataset: str,
    source: str,
    candidate: str | Path,
    reference: str | Path | None = None,
    group: Iterable[str | Path] = (),
) -> dict[str, Any]:
    """One score job: the score record of ``entry`` for one (dataset, source).

    ``settings`` is :meth:`ScoreEntry.settings` (metric, params, reference, length_control).
    With ``length_control: shortest`` every text is first cut, per prompt, to the shortest
    text among the ``group`` files (the dataset's every source; see
    :func:`genmetrics.analysis.length.score_shortest`).
    """
    from genmetrics.scoring import score_files

    metric, params = settings["metric"], settings["params"]
    if settings["length_control"] == "shortest":
        from genmetrics.analysis.length import score_shortest

        rec = score_shortest(metric, candidate, reference, list(group), params)
    else:
        rec = score_files(metric, candidate, reference, params)
    return {
        "metric": rec["metric"],
        "entry": entry,
        "dataset": dataset,
        "source": source,
        "reference": settings["reference"],
        "length_control": settings["length_control"],
        **rec,
    }
