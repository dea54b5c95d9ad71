"""The ``omniinput:`` config section checked and resolved for the workflow: the toy validation
and the language-model runs, their targets (rules/omniinput.smk)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.paths import RESULTS, ResultPaths
from genmetrics.provenance import code_digest

PROPOSALS = ("uniform", "gradient", "monte_carlo")


@dataclass(frozen=True)
class OmniRun:
    """One language model's input space V^length, sampled and annotated."""

    name: str
    checkpoint: str
    length: int
    bins: dict[str, Any]
    proposal: str
    budget: int
    sampler: dict[str, Any]
    annotator: dict[str, Any]
    direction: str
    seed: int
    resources: dict[str, Any] | None = None
    group: str = ""  # the config's run name (a run with ``seeds`` is one run per seed)
    classifier: str | None = None  # z = this classifier's logit instead of the LM's mean NLL

    def settings(self) -> dict[str, Any]:
        """Everything that decides the sampler's output (a params value of its rule)."""
        return {
            "checkpoint": self.checkpoint,
            "length": self.length,
            "bins": self.bins,
            "proposal": self.proposal,
            "budget": self.budget,
            "sampler": self.sampler,
            "seed": self.seed,
            **({"classifier": self.classifier} if self.classifier else {}),
        }


#: the OmniInput code (the jobs module imports the whole subpackage, whose modules the digest
#: follows): any change to it reruns the OmniInput jobs
OMNI_CODE = (
    "genmetrics.omniinput.jobs",
    "genmetrics.studies.omniinput_compare.jobs",
    "genmetrics.studies.omniinput_compare.classifier",
    "genmetrics.studies.omniinput_compare.compare",
    "genmetrics.studies.omniinput_compare.variance",
    "genmetrics.metrics.omniinput",
)


@dataclass(frozen=True)
class OmniPlan:
    """The ``omniinput:`` section resolved (empty without one), with the queries its rules
    call per job (rules/omniinput.smk: ``per_job(PLAN.omniinput.<query>)``)."""

    toy: dict[str, Any] | None = None
    runs: dict[str, OmniRun] = field(default_factory=dict)
    #: a checkpoint's manifest in the model cache (the plan's ``manifest``: keyed by content)
    manifest: Callable[[str], str] = str
    classifiers: dict[str, dict[str, Any]] = field(default_factory=dict)
    comparisons: dict[str, dict[str, Any]] = field(default_factory=dict)
    variance: dict[str, dict[str, Any]] = field(default_factory=dict)
    results: ResultPaths = RESULTS  # the run's result paths (its results_dir)

    @property
    def toy_targets(self) -> list[str]:
        return [self.results.omni_toy_validation, self.results.omni_toy_figure] if self.toy else []

    @property
    def run_targets(self) -> list[str]:
        if not self.runs:
            return []
        samples = [self.results.omni_samples.format(run=r) for r in self.runs]
        return [*samples, self.results.omni_table, self.results.omni_figure, *self.study_targets]

    @property
    def study_targets(self) -> list[str]:
        """The comparison tables and figures, the annotation-variance tables."""
        out = [self.results.omni_classifier_report.format(classifier=c) for c in self.classifiers]
        for c in self.comparisons:
            out += [
                p.format(comparison=c)
                for p in (self.results.omni_compare_table, self.results.omni_compare_figure)
            ]
        for v in self.variance:
            out += [
                p.format(variance=v)
                for p in (self.results.omni_variance_table, self.results.omni_variance_summary)
            ]
        return out

    @property
    def targets(self) -> list[str]:
        return self.toy_targets + self.run_targets

    # ---------------------------------------------------------- job queries (params, inputs)

    def code(self) -> str:
        """Digest of the OmniInput code (a params value: a code change reruns its jobs)."""
        return code_digest(*OMNI_CODE)

    def toy_settings(self) -> dict[str, Any]:
        """The toy's settings with the code digest of the modules that compute it."""
        assert self.toy is not None
        return {**self.toy, "code": self.code()}

    def toy_results(self) -> dict[str, str]:
        """self.results.omni_toy_result of each proposal, by name."""
        assert self.toy is not None
        return {p: self.results.omni_toy_result.format(proposal=p) for p in self.toy["proposals"]}

    def run_model(self, run: str) -> str:
        """The run's checkpoint: <model_cache>/<model key>/model.json."""
        return self.manifest(self.runs[run].checkpoint)

    def run_settings(self, run: str) -> dict[str, Any]:
        return {**self.runs[run].settings(), "code": self.code()}

    def annotator(self, run: str) -> dict[str, Any]:
        return self.runs[run].annotator

    def direction(self, run: str) -> str:
        return self.runs[run].direction

    def annotator_inputs(self, run: str) -> dict[str, str]:
        """What the annotate job reads besides the samples: the judge LM or the raters' CSV."""
        return self._annotator_inputs(self.runs[run].annotator)

    def run_target(self, run: str) -> dict[str, str]:
        """What the sampler reads besides the checkpoint: a classifier run's weights
        (self.results.omni_classifier) by the name ``classifier``; an LM run nothing."""
        c = self.runs[run].classifier
        return {"classifier": self.results.omni_classifier.format(classifier=c)} if c else {}

    def classifier_settings(self, classifier: str) -> dict[str, Any]:
        return {**self.classifiers[classifier], "code": self.code()}

    def classifier_tokenizer(self, classifier: str) -> str:
        """The classifier's tokenizer checkpoint: <model_cache>/<model key>/model.json."""
        return self.manifest(self.classifiers[classifier]["tokenizer"])

    def compare_scores(self, comparison: str) -> list[str]:
        """self.results.omni_score of every seed of every run the comparison names."""
        groups = self.comparisons[comparison]["runs"]
        return [self.results.omni_score.format(run=r) for g in groups for r in self.group_runs(g)]

    def compare_settings(self, comparison: str) -> dict[str, Any]:
        """Per run of the comparison: its model, length, seeds, annotator and run names."""
        out = {}
        for g in self.comparisons[comparison]["runs"]:
            runs = [self.runs[r] for r in self.group_runs(g)]
            out[g] = {
                "checkpoint": runs[0].checkpoint,
                "length": runs[0].length,
                "annotator": runs[0].annotator,
                "runs": {str(r.seed): r.name for r in runs},
            }
        return {"runs": out, "interval": self.comparisons[comparison]["interval"]}

    def group_runs(self, group: str) -> list[str]:
        """The runs of one config run name (one per seed), in seed order."""
        return [n for n, r in self.runs.items() if r.group == group]

    def variance_run(self, variance: str) -> str:
        return self.variance[variance]["run"]

    def variance_inputs(self, variance: str) -> dict[str, str]:
        """The run's sampler result, samples and annotations (annotator A), its checkpoint, and
        what annotator B reads (its judge LM or raters' CSV, as in annotator_inputs)."""
        run = self.variance[variance]["run"]
        return {
            "result": self.results.omni_result.format(run=run),
            "samples": self.results.omni_samples.format(run=run),
            "annotations_a": self.results.omni_annotations.format(run=run),
            "model": self.run_model(run),
            **self._annotator_inputs(self.variance[variance]["annotator"]),
        }

    def variance_settings(self, variance: str) -> dict[str, Any]:
        v = self.variance[variance]
        return {
            "annotator_a": self.runs[v["run"]].annotator,
            "annotator_b": v["annotator"],
            "labels": v["labels"],
            "threshold": v["threshold"],
            "direction": self.runs[v["run"]].direction,
            "code": self.code(),
        }

    def _annotator_inputs(self, a: Mapping[str, Any]) -> dict[str, str]:
        if a["kind"] == "judge_lm":
            return {"judge": self.manifest(a["checkpoint"])}
        if a["kind"] == "csv":
            return {"scores": a["path"]}
        return {}

    def scores(self) -> list[str]:
        """self.results.omni_score of every run."""
        return [self.results.omni_score.format(run=r) for r in self.runs]


def omni_plan(
    section: Mapping[str, Any] | None,
    checkpoints: Mapping[str, Any],
    manifest: Callable[[str], str] = str,
    results: ResultPaths = RESULTS,
) -> OmniPlan:
    """``omniinput`` (schema-checked, defaults filled) resolved; errors name the config key.
    Without the section: an empty plan (no targets)."""
    if not section:
        return OmniPlan(manifest=manifest, results=results)
    toy = dict(section["toy"]) if section.get("toy") is not None else None
    if toy is not None:
        m = toy["model"]
        if m["d_model"] % m["heads"]:
            raise GenmetricsError(
                f"omniinput.toy.model.d_model ({m['d_model']}) must be a multiple of heads "
                f"({m['heads']})"
            )
        size = toy["vocab_size"] ** toy["length"]
        if size > toy["max_sequences"]:
            raise GenmetricsError(
                f"omniinput.toy: vocab_size^length = {toy['vocab_size']}^{toy['length']} = "
                f"{size:.4g} inputs is too many to enumerate for the exact check (max_sequences "
                f"= {toy['max_sequences']:.4g}); shrink vocab_size or length"
            )
    classifiers = _classifiers(section.get("classifiers", {}), checkpoints)
    runs: dict[str, OmniRun] = {}
    for name, r in section.get("runs", {}).items():
        key = f"omniinput.runs.{name}"
        checkpoint, classifier = r.get("checkpoint"), r.get("classifier")
        if classifier is not None:
            checkpoint = _classifier_run(key, r, classifiers)
        elif checkpoint is None:
            raise GenmetricsError(f"{key}.checkpoint: required (or classifier: a classifier run)")
        elif checkpoint not in checkpoints:
            raise GenmetricsError(
                f"{key}.checkpoint: {checkpoint!r} is not in checkpoints ({', '.join(checkpoints)})"
            )
        bins = dict(r["bins"])
        if not bins["lo"] < bins["hi"]:
            raise GenmetricsError(f"{key}.bins: need lo < hi, got lo={bins['lo']}, hi={bins['hi']}")
        annotator = _annotator(
            key + ".annotator", r.get("annotator"), checkpoints, results.omni_samples
        )
        seeds = r.get("seeds")
        for seed in seeds if seeds is not None else [r["seed"]]:
            run = name if seeds is None else f"{name}-seed{seed}"
            if run in runs or (seeds is not None and run in section.get("runs", {})):
                raise GenmetricsError(f"{key}.seeds: the run name {run!r} is taken twice")
            runs[run] = OmniRun(
                name=run,
                checkpoint=checkpoint,
                length=r["length"],
                bins=bins,
                proposal=r["proposal"],
                budget=r["budget"],
                sampler=dict(r["sampler"]),
                annotator=annotator,
                direction=r["direction"],
                seed=seed,
                resources=r.get("resources"),
                group=name,
                classifier=classifier,
            )
    comparisons = _comparisons(section.get("comparisons", {}), runs)
    variance = {}
    for name, v in section.get("variance", {}).items():
        key = f"omniinput.variance.{name}"
        if v["run"] not in runs:
            raise GenmetricsError(
                f"{key}.run: {v['run']!r} is not a run (runs with seeds are named "
                f"<run>-seed<k>: {', '.join(runs)})"
            )
        v = {
            **v,
            "annotator": _annotator(
                key + ".annotator", v["annotator"], checkpoints, results.omni_samples
            ),
        }
        if v["labels"][0] == v["labels"][1]:
            raise GenmetricsError(f"{key}.labels: the two annotators need different names")
        variance[name] = v
    return OmniPlan(
        toy=toy,
        runs=runs,
        manifest=manifest,
        classifiers=classifiers,
        comparisons=comparisons,
        variance=variance,
        results=results,
    )


def _classifiers(
    section: Mapping[str, Any], checkpoints: Mapping[str, Any]
) -> dict[str, dict[str, Any]]:
    out = {}
    for name, c in section.items():
        key = f"omniinput.classifiers.{name}"
        if c["tokenizer"] not in checkpoints:
            raise GenmetricsError(f"{key}.tokenizer: {c['tokenizer']!r} is not in checkpoints")
        for f in ("train", "heldout"):
            if "path" in c[f] and not Path(c[f]["path"]).is_file():
                raise GenmetricsError(f"{key}.{f}.path: {c[f]['path']} is not a file")
        out[name] = dict(c)
    return out


def _classifier_run(key: str, r: Mapping[str, Any], classifiers: Mapping[str, Any]) -> str:
    """A classifier run's checks; returns the checkpoint whose tokenizer defines V."""
    name = r["classifier"]
    if name not in classifiers:
        raise GenmetricsError(
            f"{key}.classifier: {name!r} is not in omniinput.classifiers ({', '.join(classifiers)})"
        )
    if r.get("checkpoint") is not None:
        raise GenmetricsError(
            f"{key}.checkpoint: not used with classifier (its tokenizer is omniinput."
            f"classifiers.{name}.tokenizer)"
        )
    if r["length"] != classifiers[name]["length"]:
        raise GenmetricsError(
            f"{key}.length: {r['length']} != omniinput.classifiers.{name}.length "
            f"({classifiers[name]['length']}): the classifier reads inputs of a fixed length"
        )
    if r["direction"] != "high":
        raise GenmetricsError(
            f"{key}.direction: a classifier run's z is the positive class's logit: use high"
        )
    return classifiers[name]["tokenizer"]


def _comparisons(
    section: Mapping[str, Any], runs: Mapping[str, OmniRun]
) -> dict[str, dict[str, Any]]:
    """Each comparison's runs exist, share one length and one annotator."""
    groups: dict[str, list[OmniRun]] = {}
    for r in runs.values():
        groups.setdefault(r.group, []).append(r)
    out = {}
    for name, c in section.items():
        key = f"omniinput.comparisons.{name}.runs"
        for g in c["runs"]:
            if g not in groups:
                raise GenmetricsError(f"{key}: {g!r} is not in omniinput.runs")
        first = groups[c["runs"][0]][0]
        for g in c["runs"][1:]:
            r = groups[g][0]
            if r.length != first.length:
                raise GenmetricsError(
                    f"{key}: {g!r} has length {r.length}, {first.group!r} {first.length}: a "
                    "comparison is at one sequence length"
                )
            if r.annotator != first.annotator:
                raise GenmetricsError(
                    f"{key}: {g!r} and {first.group!r} have different annotators; the same "
                    "annotator must score every model's samples"
                )
        out[name] = dict(c)
    return out


def _annotator(
    key: str,
    a: Mapping[str, Any] | None,
    checkpoints: Mapping[str, Any],
    samples: str = RESULTS.omni_samples,
) -> dict:
    """An annotator section checked; ``samples`` is the run's samples path pattern (under the
    config's ``results_dir``), named in the error of a missing CSV."""
    if a is None:
        raise GenmetricsError(
            f"{key}: missing; say who scores the samples: kind judge_lm (with checkpoint), "
            "rule (with rule: module:function) or csv (with path)"
        )
    a = dict(a)
    kind = a["kind"]
    need = {"judge_lm": "checkpoint", "rule": "rule", "csv": "path"}[kind]
    if not a.get(need):
        raise GenmetricsError(f"{key}.{need}: required with kind: {kind}")
    used = {"judge_lm": {"checkpoint", "template"}, "rule": {"rule", "params"}, "csv": {"path"}}
    extra = {"checkpoint", "rule", "path", "template", "params"} - used[kind]
    given = sorted(k for k in extra if a.get(k))
    if given:
        raise GenmetricsError(f"{key}: {', '.join(given)} not used with kind: {kind}")
    if kind == "judge_lm" and a["checkpoint"] not in checkpoints:
        raise GenmetricsError(f"{key}.checkpoint: {a['checkpoint']!r} is not in checkpoints")
    if kind == "rule" and (":" not in a["rule"] or a["rule"].count(":") != 1):
        raise GenmetricsError(f"{key}.rule: {a['rule']!r} is not module:function")
    if kind == "csv" and not Path(a["path"]).is_file():
        raise GenmetricsError(
            f"{key}.path: {a['path']} is not a file (export the samples first: snakemake "
            f"{samples.format(run='RUN')}, fill the score column)"
        )
    return a
