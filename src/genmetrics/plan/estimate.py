"""What a run will do, before it runs: jobs per rule, generated texts × tokens, and a time.

* :func:`job_counts` reads Snakemake's summary of a dry run (``snakemake -n``: the "Job stats"
  table, ``rule  count``) into ``{rule: jobs}``.
* :func:`generation_work` counts, per (dataset, model), the generate jobs (seeds × shards),
  the texts (prompts × samples per prompt × seeds) and the token budget (texts × max new
  tokens, ``max_new_tokens = ceil(words × tokens/word × token_margin)``: an upper bound).
* :func:`estimate` prices them with measured costs (``resources/plan/job_seconds.tsv``: one
  row per job kind, its unit, the seconds, the largest model (billions of parameters) the
  measurement covers and where the number comes from):

      job-seconds = Σ_rules jobs(rule) × seconds(rule)      (unit: per job)
                  + tokens / 1000 × seconds(generate)        (unit: per 1000 tokens)

  and the wall time on ``cores`` cores as job-seconds / cores (one thread per job, the cores
  kept busy: the demo's measured 1,276 job-seconds ran in 10 min 46 s on 2 cores). A rule
  whose models are larger than any measured row, or with no row, is listed as not estimated
  rather than priced by extrapolation.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from genmetrics import GenmetricsError

#: job kinds whose cost depends on the size of a model (the others: ``any`` size)
MODEL_RULES = ("generate", "embed", "surprisal", "score_with_model", "fetch_model")
PER_JOB, PER_1000_TOKENS = "job", "1000 tokens"


@dataclass(frozen=True)
class JobCost:
    """One measured cost: ``seconds`` per ``unit`` of ``kind``, for models ≤ ``size_b_max``."""

    kind: str
    unit: str  # "job" | "1000 tokens"
    seconds: float
    size_b_max: float | None  # None: any size (a job that loads no model)
    machine: str
    source: str


@dataclass(frozen=True)
class GenerationWork:
    """One model's generation on one dataset."""

    dataset: str
    model: str
    params_b: float | None
    jobs: int  # seeds × shards
    texts: int | None  # prompts × samples per prompt × seeds (None: the prompts are unknown)
    max_new_tokens: int

    @property
    def tokens(self) -> int | None:
        return None if self.texts is None else self.texts * self.max_new_tokens


@dataclass
class Estimate:
    """Seconds per rule (priced), the rules left unpriced with the reason, the total."""

    seconds: dict[str, float] = field(default_factory=dict)
    not_estimated: dict[str, str] = field(default_factory=dict)
    cores: int = 2

    @property
    def job_seconds(self) -> float:
        return sum(self.seconds.values())

    @property
    def wall_seconds(self) -> float:
        return self.job_seconds / self.cores


def job_counts(dry_run: str) -> dict[str, int]:
    """``{rule: jobs}`` from the last "Job stats:" table of a ``snakemake -n`` output (the
    ``total`` row left out); ``{}`` when nothing is to be done."""
    blocks = dry_run.split("Job stats:")
    if len(blocks) < 2:
        if "Nothing to be done" in dry_run:
            return {}
        raise GenmetricsError("snakemake -n: no 'Job stats:' table in its output")
    counts: dict[str, int] = {}
    for line in blocks[-1].splitlines()[1:]:
        m = re.fullmatch(r"\s*([A-Za-z_][\w]*)\s+(\d+)\s*", line)
        if m is None:
            if counts:
                break
            continue  # the header and its dashes
        if m.group(1) == "total":
            break
        counts[m.group(1)] = int(m.group(2))
    return counts


def read_costs(path: str | Path) -> list[JobCost]:
    """The rows of a job-cost table (tab-separated: kind, unit, seconds, size_b_max,
    machine, source); errors name the file and line."""
    out = []
    with Path(path).open(encoding="utf-8", newline="") as f:
        rows = csv.DictReader((ln for ln in f if not ln.startswith("#")), delimiter="\t")
        for i, r in enumerate(rows, start=2):
            try:
                unit = r["unit"]
                if unit not in (PER_JOB, PER_1000_TOKENS):
                    raise ValueError(f"unit {unit!r} is not {PER_JOB!r} or {PER_1000_TOKENS!r}")
                size = r["size_b_max"].strip()
                out.append(
                    JobCost(
                        r["kind"],
                        unit,
                        float(r["seconds"]),
                        None if size in ("", "any") else float(size),
                        r["machine"],
                        r["source"],
                    )
                )
            except (KeyError, ValueError, AttributeError) as e:
                raise GenmetricsError(f"{path}: data row {i}: {e}") from None
    return out


def _cost(costs: Iterable[JobCost], kind: str, size_b: float | None) -> JobCost | None:
    """The row of ``kind`` that covers models of ``size_b`` (None: no model or unknown)."""
    for c in sorted(costs, key=lambda c: math.inf if c.size_b_max is None else c.size_b_max):
        if c.kind != kind:
            continue
        if c.size_b_max is None or (size_b is not None and size_b <= c.size_b_max):
            return c
    return None


def estimate(
    counts: Mapping[str, int],
    costs: list[JobCost],
    *,
    size_b: float | Mapping[str, float | None] | None = None,
    generated_tokens: int | None = None,
    cores: int = 2,
) -> Estimate:
    """Price the jobs of ``counts`` with ``costs``. ``size_b``: the largest model of the run
    (billions of parameters; it selects the cost rows of :data:`MODEL_RULES`);
    ``generated_tokens``: the token budget of every generate job together (priced per 1000
    tokens; None prices nothing and lists generate as not estimated). ``size_b`` may be a
    mapping ``{rule: size}`` (a generate job's model is not its embed job's featurizer)."""
    if cores < 1:
        raise GenmetricsError(f"cores: {cores} (at least 1)")
    out = Estimate(cores=cores)
    for rule, n in counts.items():
        if n == 0:
            continue
        model_rule = rule in MODEL_RULES
        size = size_b.get(rule) if isinstance(size_b, Mapping) else size_b
        row = _cost(costs, rule, size if model_rule else None)
        jobs = f"{n} job" if n == 1 else f"{n} jobs"
        if row is None:
            largest = max(
                (c.size_b_max for c in costs if c.kind == rule and c.size_b_max is not None),
                default=None,
            )
            out.not_estimated[rule] = (
                f"{jobs}: no measured cost"
                if largest is None
                else f"{jobs} on {size:g}B-parameter models: measured up to {largest:g}B only"
            )
            continue
        if row.unit == PER_1000_TOKENS:
            if generated_tokens is None:
                out.not_estimated[rule] = f"{jobs}: their texts × tokens are unknown"
                continue
            out.seconds[rule] = generated_tokens / 1000 * row.seconds
        else:
            out.seconds[rule] = n * row.seconds
    return out


def format_duration(seconds: float) -> str:
    """``12 s``, ``7 min``, ``2.5 h``, ``3.1 days``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"


def prompt_count(plan, dataset: str) -> int | None:
    """Prompts of ``dataset``: its ``clean.sample``, else the lines of its prompt file, else
    its source's ``rows`` (None: not known before the data is read)."""
    ds = plan.datasets[dataset]
    if ds.clean.get("sample") is not None:
        return int(ds.clean["sample"])
    file = ds.prompts.get("file")
    if file and Path(file).is_file():
        with Path(file).open(encoding="utf-8") as f:
            return sum(1 for ln in f if ln.strip())
    rows = ds.spec.get("source", {}).get("rows")
    return rows if isinstance(rows, int) else None


def generation_work(plan) -> list[GenerationWork]:
    """Every generating model's work on every dataset it runs on (a :class:`~genmetrics.plan.
    core.Plan`): jobs, texts and token budget."""
    from genmetrics.data.prompts import max_new_tokens

    out = []
    for name, m in plan.models.items():
        if not m.generates:
            continue
        size = plan.checkpoints[m.checkpoint].params_b
        for ds in m.datasets:
            s = m.generation[ds]
            prompts = prompt_count(plan, ds)
            texts = None if prompts is None else prompts * s.samples_per_prompt * len(m.seeds)
            budget = max_new_tokens(s.words, s.tokens_per_word, s.token_margin)
            out.append(GenerationWork(ds, name, size, len(m.seeds) * s.shards, texts, budget))
    return out
