"""The ``omniinput:`` config section checked and resolved for the workflow: the toy validation
and the language-model runs, their targets (rules/omniinput.smk)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.paths import RESULTS, model_manifest
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
        }


#: the OmniInput code (the jobs module imports the whole subpackage, whose modules the digest
#: follows): any change to it reruns the OmniInput jobs
OMNI_CODE = ("genmetrics.omniinput.jobs", "genmetrics.metrics.omniinput")


@dataclass(frozen=True)
class OmniPlan:
    """The ``omniinput:`` section resolved (empty without one), with the queries its rules
    call per job (rules/omniinput.smk: ``per_job(PLAN.omniinput.<query>)``)."""

    toy: dict[str, Any] | None = None
    runs: dict[str, OmniRun] = field(default_factory=dict)
    model_cache: str = ""  # where converted checkpoints live (their model.json)

    @property
    def toy_targets(self) -> list[str]:
        return [RESULTS.omni_toy_validation, RESULTS.omni_toy_figure] if self.toy else []

    @property
    def run_targets(self) -> list[str]:
        if not self.runs:
            return []
        samples = [RESULTS.omni_samples.format(run=r) for r in self.runs]
        return [*samples, RESULTS.omni_table, RESULTS.omni_figure]

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
        """RESULTS.omni_toy_result of each proposal, by name."""
        assert self.toy is not None
        return {p: RESULTS.omni_toy_result.format(proposal=p) for p in self.toy["proposals"]}

    def run_model(self, run: str) -> str:
        """The run's checkpoint: <model_cache>/<checkpoint>/model.json."""
        return model_manifest(self.model_cache, self.runs[run].checkpoint)

    def run_settings(self, run: str) -> dict[str, Any]:
        return {**self.runs[run].settings(), "code": self.code()}

    def annotator(self, run: str) -> dict[str, Any]:
        return self.runs[run].annotator

    def direction(self, run: str) -> str:
        return self.runs[run].direction

    def annotator_inputs(self, run: str) -> dict[str, str]:
        """What the annotate job reads besides the samples: the judge LM or the raters' CSV."""
        a = self.runs[run].annotator
        if a["kind"] == "judge_lm":
            return {"judge": model_manifest(self.model_cache, a["checkpoint"])}
        if a["kind"] == "csv":
            return {"scores": a["path"]}
        return {}

    def scores(self) -> list[str]:
        """RESULTS.omni_score of every run."""
        return [RESULTS.omni_score.format(run=r) for r in self.runs]


def omni_plan(
    section: Mapping[str, Any] | None, checkpoints: Mapping[str, Any], model_cache: str = ""
) -> OmniPlan:
    """``omniinput`` (schema-checked, defaults filled) resolved; errors name the config key.
    Without the section: an empty plan (no targets)."""
    if not section:
        return OmniPlan(model_cache=model_cache)
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
    runs = {}
    for name, r in section.get("runs", {}).items():
        key = f"omniinput.runs.{name}"
        if r["checkpoint"] not in checkpoints:
            raise GenmetricsError(
                f"{key}.checkpoint: {r['checkpoint']!r} is not in checkpoints "
                f"({', '.join(checkpoints)})"
            )
        bins = dict(r["bins"])
        if not bins["lo"] < bins["hi"]:
            raise GenmetricsError(f"{key}.bins: need lo < hi, got lo={bins['lo']}, hi={bins['hi']}")
        runs[name] = OmniRun(
            name=name,
            checkpoint=r["checkpoint"],
            length=r["length"],
            bins=bins,
            proposal=r["proposal"],
            budget=r["budget"],
            sampler=dict(r["sampler"]),
            annotator=_annotator(key + ".annotator", r.get("annotator"), checkpoints),
            direction=r["direction"],
            seed=r["seed"],
            resources=r.get("resources"),
        )
    return OmniPlan(toy=toy, runs=runs, model_cache=model_cache)


def _annotator(key: str, a: Mapping[str, Any] | None, checkpoints: Mapping[str, Any]) -> dict:
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
            "results/omniinput/RUN/samples.csv, fill the score column)"
        )
    return a
