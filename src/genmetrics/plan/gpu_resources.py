"""What a GPU job asks of a cluster, derived from the config (``resources:`` and checkpoints).

A GPU job (generate, embed, surprisal, score_with_model, omni_sample) gets a GPU kind (``a100``, ``v100``,
... from ``resources.gpu_kinds``), a GPU count, CPUs, memory and a runtime:

* weights = ``params_b`` × bytes per parameter in the job's precision (generation with
  ``dtype: auto``: bf16 on a kind with ``bf16: true``, else fp32; features always fp32);
* GPUs = the power of two >= weights × 1.3 / GPU memory (weights plus activations and KV
  cache; tensor splits of 1, 2, 4, 8 GPUs fit a node): a 70B model in bf16 on 80 GB A100s
  asks 4, a 7B model 1, a 7B model in fp32 on 32 GB V100s 2;
* CPUs = ``cpus_per_gpu`` × GPUs; memory = 8 GB + 1.2 × weights (the checkpoint is read
  through host memory); runtime = the rule's minutes (×attempt in the rules).

Explicit values override the derived ones, from the least to the most specific:
``resources.rules.<rule>``, ``checkpoints.<name>.resources``, ``models.<name>.resources``.
:meth:`JobResources.snakemake` gives the Snakemake resources the SLURM executor plugin reads:
``gpu`` + ``gpu_model`` (``sbatch --gpus=KIND:N``) or ``gres`` (``--gres=gpu:KIND:N``), never
both.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from genmetrics import GenmetricsError


@dataclass(frozen=True)
class GpuRule:
    """A rule whose jobs run on GPUs: the wildcard naming what a job loads, and the minutes
    of a first attempt (runtime grows with the attempt)."""

    wildcard: str
    runtime: int


#: the GPU rules, listed once (the schema's ``resources.rules`` keys are checked against it)
GPU_RULES: dict[str, GpuRule] = {
    "generate": GpuRule("model", 240),
    "embed": GpuRule("featurizer", 60),
    "surprisal": GpuRule("evaluator", 60),
    "score_with_model": GpuRule("entry", 60),
    "omni_sample": GpuRule("run", 240),
}
BASE_MEM_MB = 8000
BYTES = {"float32": 4, "bfloat16": 2, "float16": 2}
#: GPU memory needed per GB of weights (activations, KV cache, CUDA context)
GPU_HEADROOM = 1.3
#: parameters assumed when a checkpoint gives no params_b (a small model; a note says so)
DEFAULT_PARAMS_B = 1.0


@dataclass(frozen=True)
class JobResources:
    rule: str
    partition: str
    gpu_kind: str
    gpus: int
    cpus: int
    mem_mb: int
    runtime: int  # minutes of the first attempt
    dtype: str  # the precision the sizes assume
    weights_gb: float

    def snakemake(self, request: str, attempt: int = 1) -> dict[str, Any]:
        """Snakemake resources of one attempt: runtime × attempt, one node."""
        out: dict[str, Any] = {"slurm_partition": self.partition}
        if request == "gres":
            out["gres"] = f"gpu:{self.gpu_kind}:{self.gpus}"
        else:
            out["gpu"] = self.gpus
            out["gpu_model"] = self.gpu_kind
        out.update(
            cpus_per_task=self.cpus,
            mem_mb=self.mem_mb,
            runtime=self.runtime * max(int(attempt), 1),
            nodes=1,
        )
        return out

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def resource_keys(request: str) -> tuple[str, ...]:
    """The Snakemake resource names a GPU rule declares (the same for every job of a run)."""
    gpu = ("gres",) if request == "gres" else ("gpu", "gpu_model")
    return ("slurm_partition", *gpu, "cpus_per_task", "mem_mb", "runtime", "nodes")


def precision(dtype: str, bf16: bool) -> str:
    """The dtype a job on a GPU kind computes in (``auto``: bf16 where native, else fp32)."""
    if dtype == "auto":
        return "bfloat16" if bf16 else "float32"
    return dtype


def job_resources(
    rule: str,
    cluster: Mapping[str, Any],
    *,
    params_b: float | None,
    dtype: str,
    overrides: Sequence[Mapping[str, Any] | None] = (),
    where: str = "resources",
) -> JobResources:
    """Resources of one ``rule`` job: derived from ``params_b`` and ``dtype`` on the job's GPU
    kind, then ``overrides`` (least specific first) applied key by key."""
    if rule not in GPU_RULES:
        raise GenmetricsError(f"{rule}: not a GPU rule ({', '.join(GPU_RULES)})")
    given: dict[str, Any] = dict(cluster.get("rules", {}).get(rule) or {})
    for layer in overrides:
        given.update(layer or {})
    kind = given.get("gpu_kind", cluster["gpu_kind"])
    kinds = cluster["gpu_kinds"]
    if kind not in kinds:
        raise GenmetricsError(
            f"{where}.gpu_kind: {kind!r} is not in resources.gpu_kinds ({', '.join(kinds)})"
        )
    spec = kinds[kind]
    used = precision(dtype, bool(spec.get("bf16", False)))
    weights_gb = (params_b or DEFAULT_PARAMS_B) * BYTES[used]
    gpus = given.get("gpus") or _pow2(math.ceil(weights_gb * GPU_HEADROOM / spec["memory_gb"]))
    return JobResources(
        rule=rule,
        partition=given.get("partition", spec["partition"]),
        gpu_kind=kind,
        gpus=int(gpus),
        cpus=int(given.get("cpus", cluster["cpus_per_gpu"] * gpus)),
        mem_mb=int(given.get("mem_mb", BASE_MEM_MB + math.ceil(weights_gb * 1.2 * 1024))),
        runtime=int(given.get("runtime", GPU_RULES[rule].runtime)),
        dtype=used,
        weights_gb=round(weights_gb, 3),
    )


def _pow2(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()
