"""The run plan: the typed model of a run (:mod:`genmetrics.plan.objects`) with the queries
the rules call, assembled from one part per idea: the files a job reads
(:mod:`~genmetrics.plan.inputs`), its params (:mod:`~genmetrics.plan.jobs`), its cluster
resources (:mod:`~genmetrics.plan.resources`) and the target lists
(:mod:`~genmetrics.plan.targets`)."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from genmetrics.agreement.settings import AgreementPlan
from genmetrics.metrics.kinds import PARTS
from genmetrics.omniinput.settings import PROPOSALS, OmniPlan
from genmetrics.params import canonical
from genmetrics.paths import DRAW, PROMPTS, REFERENCES, RESULTS, ResultPaths
from genmetrics.plan.inputs import POS_ASSETS, JobInputs
from genmetrics.plan.instruction_sets import InstructionSetQueries
from genmetrics.plan.jobs import JobParams
from genmetrics.plan.memo import fixed_signature
from genmetrics.plan.objects import (
    Checkpoint,
    Dataset,
    FeatureModel,
    Model,
    ScoreEntry,
    names_pattern,
)
from genmetrics.plan.patterns import PatternQueries
from genmetrics.plan.resources import ResourceQueries
from genmetrics.plan.robustness import RobustnessQueries
from genmetrics.plan.targets import TargetLists, Targets


@dataclass(frozen=True)
class Plan(
    JobInputs,
    JobParams,
    ResourceQueries,
    TargetLists,
    PatternQueries,
    RobustnessQueries,
    InstructionSetQueries,
):
    """A config, checked and resolved (:func:`genmetrics.plan.load.load_plan`)."""

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
    diversity: dict | None = None  # analysis.diversity: the diversity tables' columns
    omniinput: OmniPlan = field(default_factory=OmniPlan)  # omniinput:, with its job queries
    agreement: AgreementPlan = field(default_factory=AgreementPlan)  # agreement:, likewise
    cluster: dict = field(default_factory=dict)  # the config's resources: section
    notes: tuple[str, ...] = ()  # what the environment changed, for the run log
    variants: dict = field(default_factory=dict)  # few-shot variant -> {"dataset", "n"}
    patterns: dict | None = None  # analysis.patterns, checked (plan/patterns.py)
    robustness: list | None = None  # entries differing only in featurizer (plan/robustness.py)
    instruction_sets: dict | None = None  # analysis.instruction_sets (plan/instruction_sets.py)
    results: ResultPaths = RESULTS  # every file the run writes, under the config's results_dir
    targets: Targets = field(init=False)
    # answers of the memoized queries (plan/memo.py), per query and arguments
    _memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "targets", self._targets())

    @property
    def generating_models(self) -> list[str]:
        return [m for m, model in self.models.items() if model.generates]

    @property
    def text_models(self) -> list[str]:
        return [m for m, model in self.models.items() if not model.generates]

    def model_sources(self, dataset: str) -> list[str]:
        """``{model}/seed{seed}`` of every model evaluated on ``dataset``."""
        return [s for m in self.models.values() if dataset in m.datasets for s in m.sources()]

    def few_shot_variants(self) -> dict[str, dict[str, Any]]:
        """Each few-shot dataset of the plan (``<name>-n<k>``, :mod:`~genmetrics.plan.variants`)
        → ``{"dataset": <name> (the config's), "n": k}``, sorted by name: for the analyses that
        plot precision and recall against ``n``. Empty without few-shot datasets."""
        return canonical(self.variants)

    def few_shot_generation_stats(self) -> list[str]:
        """The generation statistics (``RESULTS.generation_stats``) of every generating model
        on every few-shot dataset: their ``unparsed`` counts."""
        return [
            self.results.generation_stats.format(dataset=ds, model=m.name, seed=s)
            for ds in self.variants
            for m in self.models.values()
            if m.generates and ds in m.datasets
            for s in m.seeds
        ]

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
            "model_key": "[0-9a-f]{20}",
            "featurizer": names_pattern(self.featurizers),
            "evaluator": names_pattern(self.evaluators),
            "entry": names_pattern(self.entries),
            "asset": names_pattern(
                sorted(
                    {a for e in self.entries.values() for a in e.assets}
                    | set(POS_ASSETS)
                    | {a for s in self.agreement.sets.values() for a in s.assets()}
                )
            ),
            "seed": r"\d+",
            "shard": r"\d+",
            "draw": r"\d+",
            "run": names_pattern(self.omniinput.runs),
            "classifier": names_pattern(self.omniinput.classifiers),
            "comparison": names_pattern(self.omniinput.comparisons),
            "variance": names_pattern(self.omniinput.variance),
            "jset": names_pattern(self.agreement.sets),
            "proposal": "|".join(PROPOSALS),
            "source": rf"(?:{REFERENCES}(?:{DRAW}\d+)?|{PROMPTS}|(?:{models})/seed\d+)"
            rf"(?:\.(?:{parts}))?",
        }

    def model_templates(self) -> dict[str, str]:
        """``chat`` or ``base`` per generating model (imported texts have none), sorted by name
        so that reordering the config's models reruns nothing."""
        return {
            name: m.generation[m.datasets[0]].template
            for name, m in sorted(self.models.items())
            if m.generates
        }

    @staticmethod
    def per_job(query: Callable[..., Any]) -> Callable[[Any], Any]:
        """An input/params function for a rule: ``query`` (a method of the plan) called with
        the job's wildcards that it names (``dataset``, ``model``, ...), in its order. Its
        signature is fixed once for Snakemake (:func:`~genmetrics.plan.memo.fixed_signature`)."""
        names = tuple(inspect.signature(query).parameters)

        def of_wildcards(wildcards):
            return query(*[wildcards[n] for n in names])

        of_wildcards.__name__ = query.__name__
        return fixed_signature(of_wildcards)

    def sweep_temp_files(self, older_than_s: float = 3600) -> int:
        """Delete temporary files that killed writers left in ``results/`` and the caches
        (:func:`genmetrics.io.sweep_stale_tmp`, older than an hour: a live writer on another
        node is never that slow to rename); return how many."""
        from genmetrics.io import sweep_stale_tmp

        folders = dict.fromkeys(["results", self.cache, self.model_cache, self.feature_cache])
        return sum(sweep_stale_tmp(f, older_than_s, recursive=True) for f in folders)
