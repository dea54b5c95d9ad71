"""What a run will do, before it runs: jobs per rule, generated texts × tokens, and a time.

* :func:`job_counts` reads Snakemake's summary of a dry run (``snakemake -n``: the "Job stats"
  table, ``rule  count``) into ``{rule: jobs}``.
* :func:`generation_work` counts, per (dataset, model), the generate jobs (seeds × shards),
  the texts (prompts × samples per prompt × seeds) and the token budget (texts × max new
  tokens, ``max_new_tokens = ceil(words × tokens/word × token_margin)``: an upper bound).
* :func:`estimate` prices them with measured costs (``resources/plan/job_seconds.tsv``: one
  row per job kind, its unit, the seconds, the largest model (billions of parameters) the
  measurement covers and where the number comes from):

      job-seconds = Σ_rules jobs(rule) × seconds(rule)                        (unit: per job)
                  + Σ_models params_b × (texts × new tokens × seconds(generate)
                                         + texts × prompt tokens × seconds(generate_prompt)) / 1000
                                                                (unit: per 1000 tokens × 1B params)

  Generation is priced per model: a sampled token costs in proportion to the model's
  parameters (every parameter, the output embedding included, takes part in each decoding
  step), and each prompt token costs a measured fraction of a sampled one (the prompt is read
  in one batched pass). A ``1000 tokens`` row (no size scaling, prompts not priced) is still
  read.

  The wall time on ``cores`` cores: a rule's jobs on one thread run ``cores`` at once
  (job-seconds / cores, the cores kept busy: the demo's measured 1,276 job-seconds ran in
  10 min 46 s on 2 cores); a model rule whose jobs take several threads (a study's generate,
  embed and surprisal jobs take every core: ``threads:`` of the dry run, :func:`job_threads`)
  runs one job at a time, :data:`THREADED_SLOWDOWN` times slower than single-thread jobs side
  by side. Both assume idle cores. A rule whose models are larger than any measured row, or
  with no row, is listed as not estimated rather than priced by extrapolation.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from genmetrics import GenmetricsError

#: job kinds whose cost depends on the size of a model (the others: ``any`` size)
MODEL_RULES = ("generate", "embed", "surprisal", "score_with_model", "fetch_model")
PER_JOB, PER_1000_TOKENS = "job", "1000 tokens"
#: generation priced per 1000 tokens of a 1B-parameter model (scaled by the model's size)
PER_1000_TOKENS_1B = "1000 tokens x 1B params"
UNITS = (PER_JOB, PER_1000_TOKENS, PER_1000_TOKENS_1B)
#: the cost of prompt tokens (``resources/plan/job_seconds.tsv``), priced with generate's work
PROMPT_KIND = "generate_prompt"
#: one job on 2 threads against two single-thread jobs side by side on 2 cores, same texts:
#: 1.4x slower (measured with generate jobs on the 2-core VM; the Makefile's LOCAL_THREADS note)
THREADED_SLOWDOWN = 1.4


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
    prompt_tokens: int | None = None  # one prompt's tokens, estimated (None: not known)

    @property
    def tokens(self) -> int | None:
        return None if self.texts is None else self.texts * self.max_new_tokens

    @property
    def prompt_total(self) -> int | None:
        """Prompt tokens of every text (None: the texts or the prompts' length unknown)."""
        if self.texts is None or self.prompt_tokens is None:
            return None
        return self.texts * self.prompt_tokens


@dataclass
class Estimate:
    """Seconds per rule (priced), the rules left unpriced with the reason, the total."""

    seconds: dict[str, float] = field(default_factory=dict)
    not_estimated: dict[str, str] = field(default_factory=dict)
    cores: int = 2
    #: threads per job of a rule (absent: one); see :func:`wall_factor`
    threads: dict[str, int] = field(default_factory=dict)

    @property
    def job_seconds(self) -> float:
        return sum(self.seconds.values())

    def wall_factor(self, rule: str) -> float:
        """Wall seconds per job-second of ``rule``: 1 / cores for single-thread jobs side by
        side; :data:`THREADED_SLOWDOWN` / cores for a model rule whose jobs take several
        threads (they run one after the other, each on every core)."""
        t = min(self.threads.get(rule, 1), self.cores)
        slow = THREADED_SLOWDOWN if t > 1 and rule in MODEL_RULES else 1.0
        return slow / self.cores

    @property
    def wall_seconds(self) -> float:
        return sum(s * self.wall_factor(r) for r, s in self.seconds.items())


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


def dry_run_jobs(dry_run: str) -> list[tuple[str, dict[str, str]]]:
    """Each job a ``snakemake -n`` printout plans: (rule, {field: value}) from the indented
    ``field: value`` lines under its ``rule NAME:`` line (``output``, ``wildcards``,
    ``threads``, ...)."""
    jobs: list[tuple[str, dict[str, str]]] = []
    for line in dry_run.splitlines():
        m = re.fullmatch(r"(?:local)?rule (\w+):", line.strip())
        if m:
            jobs.append((m.group(1), {}))
        elif jobs and line[:1].isspace():
            key, sep, value = line.strip().partition(": ")
            if sep:
                jobs[-1][1][key] = value
    return jobs


def job_threads(dry_run: str) -> dict[str, int]:
    """``{rule: threads}`` from a ``snakemake -n`` output: the largest ``threads:`` of each
    rule's jobs (Snakemake prints it for jobs on more than one thread, already scaled down to
    ``--cores``); rules without one run on one thread and are left out."""
    out: dict[str, int] = {}
    for rule, fields in dry_run_jobs(dry_run):
        if fields.get("threads", "").isdigit():
            out[rule] = max(out.get(rule, 1), int(fields["threads"]))
    return out


def read_costs(path: str | Path) -> list[JobCost]:
    """The rows of a job-cost table (tab-separated: kind, unit, seconds, size_b_max,
    machine, source); errors name the file and line."""
    out = []
    with Path(path).open(encoding="utf-8", newline="") as f:
        rows = csv.DictReader((ln for ln in f if not ln.startswith("#")), delimiter="\t")
        for i, r in enumerate(rows, start=2):
            try:
                unit = r["unit"]
                if unit not in UNITS:
                    raise ValueError(f"unit {unit!r} is not one of {', '.join(map(repr, UNITS))}")
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
    work: Sequence[GenerationWork] | None = None,
    threads: Mapping[str, int] | None = None,
    cores: int = 2,
) -> Estimate:
    """Price the jobs of ``counts`` with ``costs``. ``size_b``: the largest model of the run
    (billions of parameters; it selects the cost rows of :data:`MODEL_RULES`); ``size_b`` may
    be a mapping ``{rule: size}`` (a generate job's model is not its embed job's featurizer).
    Generation: ``work`` (each model's texts, tokens and size) prices a generate row per
    1000 tokens × 1B params (:func:`generation_seconds`); ``generated_tokens`` (the token
    budget of every generate job together) prices a row per 1000 tokens; neither leaves
    generate not estimated. ``threads``: threads per job of each rule (:func:`job_threads`)."""
    if cores < 1:
        raise GenmetricsError(f"cores: {cores} (at least 1)")
    out = Estimate(cores=cores, threads=dict(threads or {}))
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
        if row.unit == PER_1000_TOKENS_1B:
            priced = None if work is None else generation_seconds(work, costs)
            if isinstance(priced, str) or priced is None:
                out.not_estimated[rule] = f"{jobs}: {priced or 'their texts × tokens are unknown'}"
                continue
            out.seconds[rule] = priced
        elif row.unit == PER_1000_TOKENS:
            if generated_tokens is None:
                out.not_estimated[rule] = f"{jobs}: their texts × tokens are unknown"
                continue
            out.seconds[rule] = generated_tokens / 1000 * row.seconds
        else:
            out.seconds[rule] = n * row.seconds
    return out


def generation_seconds(work: Sequence[GenerationWork], costs: list[JobCost]) -> float | str:
    """Job-seconds of every model's generation, priced per 1000 tokens × 1B params:

        Σ_w params_b(w) × (tokens(w) × generate + prompt tokens(w) × generate_prompt) / 1000

    with each model's own cost rows (its size selects them). A model whose size is unknown
    or larger than every measured row, or whose texts are unknown, makes the whole
    generation unpriced: the reason is returned instead. Prompt tokens whose length is
    unknown are not priced (an underestimate, not an error)."""
    total = 0.0
    for w in work:
        if w.tokens is None:
            return f"{w.model} on {w.dataset}: its texts are unknown"
        if w.params_b is None:
            return f"{w.model}: its size (params_b) is unknown"
        row = _cost(costs, "generate", w.params_b)
        if row is None or row.unit != PER_1000_TOKENS_1B:
            return f"{w.model} ({w.params_b:g}B): no measured generation cost at that size"
        seconds = w.tokens * row.seconds
        prompt = _cost(costs, PROMPT_KIND, w.params_b)
        if prompt is not None and w.prompt_total is not None:
            seconds += w.prompt_total * prompt.seconds
        total += w.params_b * seconds / 1000
    return total


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


def prompt_words(plan, dataset: str, template: str) -> float | None:
    """Words of one prompt of ``dataset`` as a model of ``template`` gets it, estimated from
    the config (the chat template's own tokens left out): ``prefix``, its ``words``;
    ``few_shot``, the header, ``n`` examples of at most ``max_example_words`` words each with
    its ``"{instruction} {name}:"`` line (a name counted as 2 words) and the closing
    instruction; ``instruction``, the prompt file's mean words plus the wrap's own words
    (None when no prompt file says how long the instructions are)."""
    from genmetrics.data.prompts import INSTRUCTION_WRAPS

    opts = plan.datasets[dataset].prompts
    mode = opts.get("mode", "prefix")
    if mode == "prefix":
        return float(opts["words"])
    if mode == "few_shot":
        fs = opts["few_shot"]
        header = fs.get("header_chat" if template == "chat" else "header_base") or ""
        instruction = len(str(fs.get("instruction", "")).split())
        example = fs["max_example_words"] + instruction + 2
        return float(len(header.split()) + int(fs.get("n", 0)) * example + instruction)
    file = opts.get("file")
    if not file or not Path(file).is_file():
        return None
    import json

    with Path(file).open(encoding="utf-8") as f:
        lengths = [len(str(json.loads(ln).get("prompt", "")).split()) for ln in f if ln.strip()]
    if not lengths:
        return None
    wrap = INSTRUCTION_WRAPS.get(opts.get("wrap") or "none")
    extra = 0
    if wrap is not None:
        extra = len(wrap["request"].format(prompt="").split())
        if template != "chat":
            extra += len(wrap["base"].format(request="").split())
    return sum(lengths) / len(lengths) + extra


def generation_work(plan) -> list[GenerationWork]:
    """Every generating model's work on every dataset it runs on (a :class:`~genmetrics.plan.
    core.Plan`): jobs, texts, token budget and the estimated tokens of one prompt
    (:func:`prompt_words` × the model's tokens per word)."""
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
            words = prompt_words(plan, ds, s.template)
            prompt = None if words is None else int(math.ceil(words * s.tokens_per_word))
            out.append(
                GenerationWork(ds, name, size, len(m.seeds) * s.shards, texts, budget, prompt)
            )
    return out
