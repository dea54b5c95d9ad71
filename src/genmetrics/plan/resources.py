"""Cluster resources of the GPU rules, per job, from the config (:mod:`genmetrics.plan.gpu_resources`
sizes them; :data:`genmetrics.plan.gpu_resources.GPU_RULES` lists the GPU rules once)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from genmetrics.plan.gpu_resources import GPU_RULES, JobResources, job_resources, resource_keys
from genmetrics.plan.memo import fixed_signature, memoized


class ResourceQueries:
    """The :class:`~genmetrics.plan.core.Plan` part that sizes GPU jobs."""

    @memoized
    def job_resources(self, rule: str, name: str) -> JobResources:
        """What one GPU job asks of the cluster (:mod:`genmetrics.plan.gpu_resources`). ``name`` is the
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
            run = self.omniinput.runs[name]
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
        wildcard = GPU_RULES[rule].wildcard
        request = self.cluster["gpu_request"]

        def one(key: str) -> Callable[..., Any]:
            def value(wildcards, attempt):
                res = self.job_resources(rule, wildcards[wildcard])
                return res.snakemake(request, attempt)[key]

            value.__name__ = f"{rule}_{key}"
            return fixed_signature(value)

        return {key: one(key) for key in resource_keys(request)}

    def rule_threads(self, rule: str) -> Callable[..., int]:
        """``threads:`` of a GPU rule: the CPUs its job asks for."""
        wildcard = GPU_RULES[rule].wildcard

        def threads(wildcards):
            return self.job_resources(rule, wildcards[wildcard]).cpus

        threads.__name__ = f"{rule}_threads"
        return fixed_signature(threads)
