"""The typed model of a run: datasets, checkpoints, models, featurizers/evaluators and metric
entries, as :func:`genmetrics.plan.load.load_plan` resolves them from the config.

Job params built from these are dicts with sorted keys (:func:`canonical`), so reordering
config.yaml triggers no rerun.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from genmetrics.data.words import DEFAULT_LANGUAGE, uses_whitespace
from genmetrics.generation.transformers_backend import GenerationSettings
from genmetrics.metrics.kinds import KINDS, PARTS
from genmetrics.params import canonical
from genmetrics.paths import PROMPTS, REFERENCES, RESULTS, ResultPaths

__all__ = ["PROMPTS", "REFERENCES"]


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


def source_files(src: dict) -> list[str]:
    """The local files a source reads (job inputs): a ``local`` source's path, an
    ``upstream`` source's copy in the data mirror when one is set (``mirror_root``)."""
    if src.get("kind") == "local":
        return [src["path"]]
    if src.get("kind") == "upstream" and src.get("mirror_root"):
        return [os.path.join(src["mirror_root"], src["file"])]
    return []


def for_dataset(src: dict, dataset: str) -> dict:
    """A source with ``{dataset}`` filled in: in ``path``, an upstream source's ``file`` and
    its upstream files' paths and its reader's string options; an upstream source's ``rows``
    and ``sha256`` given per dataset (a mapping) become the dataset's value."""
    src = dict(src)
    for k in ("path", "file"):
        if k in src:
            src[k] = str(src[k]).replace("{dataset}", dataset)
    for k in ("rows", "sha256"):
        if isinstance(src.get(k), dict):
            src[k] = src[k].get(dataset)
    if isinstance(src.get("upstream"), dict) and src["upstream"].get("files"):
        files = {}
        for n, f in src["upstream"]["files"].items():
            f = dict(f)
            if "path" in f:
                f["path"] = str(f["path"]).replace("{dataset}", dataset)
            if isinstance(f.get("sha256"), dict):
                f["sha256"] = f["sha256"].get(dataset)
            files[n] = f
        src["upstream"] = {**src["upstream"], "files": files}
    if isinstance(src.get("upstream"), dict) and isinstance(src["upstream"].get("options"), dict):
        opts = {
            k: v.replace("{dataset}", dataset) if isinstance(v, str) else v
            for k, v in src["upstream"]["options"].items()
        }
        src["upstream"] = {**src["upstream"], "options": opts}
    if src.get("mirror_root") and src.get("file"):
        src["mirror_path"] = os.path.join(src["mirror_root"], src["file"])
    return src


@dataclass(frozen=True)
class Dataset:
    name: str
    spec: dict  # source and reading options: what fetch_dataset needs
    clean: dict
    prompts: dict  # words, mode, file (schema defaults filled)
    language: str = DEFAULT_LANGUAGE  # datasets.<name>.language (genmetrics.data.words)

    def with_language(self, options: dict) -> dict:
        """``options`` plus ``language`` where the words are not whitespace words: the
        params of a job on a whitespace dataset stay what they always were."""
        if uses_whitespace(self.language):
            return options
        return {**options, "language": self.language}

    @property
    def local_files(self) -> list[str]:
        return source_files(self.spec["source"])

    @property
    def prompt_files(self) -> list[str]:
        return [self.prompts["file"]] if self.prompts.get("file") else []


@dataclass(frozen=True)
class Checkpoint:
    name: str
    spec: dict  # what fetch_model needs; it writes the manifest Plan.manifest(name)
    params_b: float | None = None  # parameters in billions (sizes its GPU jobs)
    resources: dict | None = None  # checkpoints.<name>.resources
    dtype: str = "auto"  # generation precision (genmetrics.models.checkpoints.resolve_dtype)


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
    #: a generate job's backend keys when it is not transformers (generation_vllm.BACKEND_KEYS:
    #: ``{"backend": "vllm", "tensor_parallel_size": n}``); empty for transformers
    engine: dict = field(default_factory=dict)

    @property
    def generates(self) -> bool:
        return self.checkpoint is not None

    def sources(self) -> list[str]:
        return [f"{self.name}/seed{s}" for s in self.seeds]

    def texts_for(self, dataset: str) -> dict:
        """The imported texts spec for one dataset (``{dataset}`` in the path filled in)."""
        spec = dict(self.texts or {})
        spec["source"] = for_dataset(spec.get("source", {}), dataset)
        return spec

    def local_files(self, dataset: str) -> list[str]:
        return source_files(self.texts_for(dataset).get("source", {}))


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
    input: str  # a kind of genmetrics.metrics.kinds.KINDS
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
    # the interval over prompts (genmetrics.scoring.intervals.entry_interval): its settings, or the
    # reason it is off; None: no interval key in the records (a plan built without one)
    interval: dict | None = None

    def input_path(self, dataset: str, source: str, results: ResultPaths = RESULTS) -> str:
        """The file this entry reads for one source (features, tags or texts) under
        ``results``."""
        if self.length_control != "none":
            return results.texts(dataset, source)  # cut first, then scored
        kind = KINDS[self.input]
        keys = {kind.config_key: self.feature_model} if kind.config_key else {}
        return kind.path(dataset, source, self.part, results, **keys)

    def settings(self) -> dict:
        """A score job's params: the same for every source."""
        return canonical(
            {
                "metric": self.metric,
                "params": self.params,
                "reference": self.reference,
                "length_control": self.length_control,
                **({"interval": self.interval} if self.interval is not None else {}),
            }
        )
