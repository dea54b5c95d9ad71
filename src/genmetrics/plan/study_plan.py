"""``make <study>-plan``: what a study will run, what to read after, and how long it takes.

``python -m genmetrics.plan.study_plan <study> [--profile paper] [--cores 2]`` dry-runs the
study's make target (``snakemake -n`` with the same targets and config, plus the profile
``configs/profiles/<study>-<profile>.yaml`` as an overlay) and prints:

* the jobs per rule (Snakemake's "Job stats" summary);
* per generating model: generate jobs, texts × max new tokens (:mod:`~genmetrics.plan.estimate`);
* the outputs to read: the dry run's outputs that are the study's tables, figures and report
  (:func:`outputs_to_read`);
* an estimate on this machine class from measured per-job costs
  (``resources/plan/job_seconds.tsv``, each row with its source), beside the study's recorded
  run time where docs/studies.md has one;
* with a profile: its header (the paper's setting, what this machine lacks) and the compute
  the paper reports for that work (``resources/plan/paper_compute.csv``, with the section).

A study the dry run cannot plan (its data folder missing) is said in one line.
"""

from __future__ import annotations

import argparse
import copy
import csv
import math
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.plan.estimate import (
    THREADED_SLOWDOWN,
    Estimate,
    GenerationWork,
    dry_run_jobs,
    estimate,
    format_duration,
    generation_work,
    job_counts,
    job_threads,
    read_costs,
)


@dataclass(frozen=True)
class Study:
    """A study's make target: its config and Snakemake targets (as the Makefile runs it)."""

    name: str
    config: str | None  # None: the default config.yaml (no --configfile)
    targets: tuple[str, ...] = ()
    paper: str | None = None  # the paper whose compute statements apply (paper_compute.csv)
    recorded: str | None = None  # the run time docs/studies.md records (2 cores, offline)


#: every Snakemake study of the Makefile (tests/test_study_plans.py checks the two agree)
STUDIES: dict[str, Study] = {
    s.name: s
    for s in (
        Study("webtext", "configs/webtext.yaml", ("all", "sweeps"), "pr-llm", "30 min"),
        Study(
            "pr-scale",
            "configs/pr_scale.yaml",
            ("all", "sweeps", "pr_scale_comparison"),
            "pr-llm",
            "7 min",
        ),
        Study("biographies", "configs/biographies.yaml", (), "pr-llm", "35 min"),
        Study("creative", "configs/creative.yaml", (), "pr-llm", "17 min"),
        Study("chat-vs-base", "configs/chat_vs_base.yaml", (), "pr-llm", "6 min"),
        Study("summary-diversity", "configs/summary_diversity.yaml", (), "diversity", "69 min"),
        Study("instruction-diversity", "configs/instruction_diversity.yaml", (), None, "52 min"),
        Study("instruction-sets", "configs/instruction_sets.yaml", (), "diversity", "1.5 min"),
        Study(
            "omniinput-compare",
            "configs/omniinput_compare.yaml",
            ("omniinput",),
            "omniinput",
            "38 min (loaded cores)",
        ),
        Study("agreement", "configs/agreement.yaml", ("agreement",), None, "5 min"),
        Study("agnews-experiment", "configs/agnews_pr.yaml", (), "pr-llm"),
        Study("gpt2-decoding", "configs/gpt2_decoding.yaml"),
        Study("face-scaling", "configs/face_scaling.yaml", (), "face2", "25-30 min"),
        Study("omniinput-toy", None, ("omniinput_toy",), "omniinput"),
        Study("omniinput", None, ("omniinput",), "omniinput"),
    )
}

#: make targets that are studies but not Snakemake runs: what they run instead
NOT_WORKFLOWS = {
    "runtime": "benchmarks/bench_diversity_runtime.py (about 10 min; docs/studies.md)",
    "face-real-data": "pytest tests/test_face_real_data.py (reads ../shared/data)",
    "face-agreement": "pytest -m slow tests/test_face_agreement.py (reads ../shared/data)",
}

#: a dry-run output worth reading, relative to the study's results_dir
READ_PATTERN = re.compile(
    r"(report\.html|scores_headline\.md|spread\.csv|figures/[^/]+\.png|analysis/[^/]+\.md"
    r"|analysis/patterns/[^/]+\.md"
    r"|agreement/summary\.md|omniinput/[^/]+/[^/]+/(?:summary\.json|table\.csv|aupr\.csv)"
    r"|omniinput/toy/validation\.json)"
)


def repo_root() -> Path:
    """The checkout: the working directory when it holds a Snakefile (make runs there)."""
    cwd = Path.cwd()
    if (cwd / "Snakefile").is_file():
        return cwd
    raise GenmetricsError(f"{cwd}: no Snakefile here; run from the checkout (make <study>-plan)")


def profile_path(root: Path, study: str, profile: str) -> Path:
    """``configs/profiles/<study>-<profile>.yaml``; an error naming it when absent."""
    path = root / "configs" / "profiles" / f"{study}-{profile}.yaml"
    if not path.is_file():
        known = sorted(p.stem for p in (root / "configs" / "profiles").glob(f"{study}-*.yaml"))
        raise GenmetricsError(
            f"PROFILE={profile}: {path.relative_to(root)} does not exist"
            f" (profiles of {study}: {', '.join(known) or 'none'})"
        )
    return path


def merged_config(paths: list[Path]) -> dict[str, Any]:
    """The config files merged as Snakemake merges ``--configfile a b``: key by key for
    mappings, a later file's value replacing any other (lists included)."""
    import yaml

    from genmetrics.config import check_config_file

    def update(base: dict, new: Mapping) -> dict:
        for key, value in new.items():
            if isinstance(value, Mapping) and isinstance(base.get(key), dict):
                update(base[key], value)
            else:
                base[key] = copy.deepcopy(value)
        return base

    out: dict[str, Any] = {}
    for path in paths:
        check_config_file(path)
        with path.open(encoding="utf-8") as f:
            update(out, yaml.safe_load(f) or {})
    return out


def snakemake_command(root: Path, study: Study, profile: Path | None, cores: int) -> list[str]:
    exe = Path(sys.executable).with_name("snakemake")
    cmd = [str(exe) if exe.is_file() else shutil.which("snakemake") or "snakemake"]
    cmd += ["-n", "--cores", str(cores), *study.targets]
    files = [study.config or "config.yaml"] + ([str(profile.relative_to(root))] if profile else [])
    return cmd + ["--configfile", *files]


def dry_run_outputs(dry_run: str) -> list[str]:
    """Every output path of a ``snakemake -n`` printout (its ``output:`` lines)."""
    out: list[str] = []
    for line in dry_run.splitlines():
        m = re.match(r"\s+output: (.*)$", line)
        if m:
            out += [p.strip() for p in m.group(1).split(", ") if p.strip()]
    return out


def planned_generate_jobs(dry_run: str) -> dict[tuple[str, str], int]:
    """``{(dataset, model): jobs}`` of the ``generate`` jobs a ``snakemake -n`` printout plans
    (each job's ``wildcards:`` line)."""
    out: dict[tuple[str, str], int] = {}
    for rule, fields in dry_run_jobs(dry_run):
        if rule == "generate":
            pairs = fields.get("wildcards", "").split(", ")
            wc = dict(kv.split("=", 1) for kv in pairs if "=" in kv)
            key = (wc.get("dataset", ""), wc.get("model", ""))
            out[key] = out.get(key, 0) + 1
    return out


def planned_work(
    work: list[GenerationWork], planned: dict[tuple[str, str], int]
) -> list[GenerationWork]:
    """The part of each model's generation the dry run plans: a (dataset, model) with no
    planned ``generate`` job leaves (its texts exist, or the study's targets need none); one
    with fewer jobs than its seeds × shards keeps that share of its texts."""
    out = []
    for w in work:
        jobs = planned.get((w.dataset, w.model), 0)
        if jobs == 0:
            continue
        jobs = min(jobs, w.jobs)
        texts = None if w.texts is None else round(w.texts * jobs / w.jobs)
        out.append(replace(w, jobs=jobs, texts=texts))
    return out


def outputs_to_read(outputs: list[str], results_dir: str) -> list[str]:
    """The study's tables, figures and report among ``outputs`` (:data:`READ_PATTERN` under
    ``results_dir``), in a stable order: report first, then tables, then figures."""
    prefix = results_dir.rstrip("/") + "/"
    picked = {
        p for p in outputs if p.startswith(prefix) and READ_PATTERN.fullmatch(p[len(prefix) :])
    }

    def order(p: str) -> tuple[int, str]:
        kind = 0 if p.endswith(".html") else 2 if p.endswith(".png") else 1
        return kind, p

    return sorted(picked, key=order)


def planning_error(text: str) -> str:
    """The one line that says why a dry run failed."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if "invalid config:" in ln or ln.startswith("genmetrics:") and "error" in ln.lower():
            return ln
    for ln in lines:
        if "Error" in ln or "error:" in ln:
            return ln
    return lines[-1] if lines else "snakemake -n failed with no output"


def read_paper_compute(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _nearest(rows: list[dict[str, str]], size_b: float) -> dict[str, str] | None:
    sized = [r for r in rows if r["size_b"]]
    if not sized:
        return None
    return min(sized, key=lambda r: abs(math.log(float(r["size_b"]) / size_b)))


def paper_gpu_hours(
    work: list[GenerationWork], rows: list[dict[str, str]], per_texts: int = 4000
) -> tuple[float | None, list[str]]:
    """GPU-hours of ``work`` at the paper's stated rate (Le Bronnec et al., App. B: GPU-hours
    per ``per_texts`` generated texts for the nearest model size): Σ texts / per_texts ×
    gpu_hours(size). None when a model's size or texts are unknown or no row has a rate."""
    rated = [r for r in rows if r["gpu_hours"] and r["size_b"]]
    total, lines = 0.0, []
    for w in work:
        row = _nearest(rated, w.params_b) if w.params_b and rated else None
        if row is None or w.texts is None:
            return None, []
        hours = w.texts / per_texts * float(row["gpu_hours"])
        total += hours
        lines.append(
            f"{w.model}: {w.texts:,} texts × {float(row['gpu_hours']):g} GPU-h per {per_texts:,} "
            f"({row['size_b']}B row) = {hours:,.0f} GPU-h"
        )
    return total, lines


def describe(
    study: Study,
    counts: dict[str, int],
    work: list[GenerationWork],
    reads: list[str],
    est: Estimate,
    *,
    command: list[str],
    profile_header: str | None = None,
    compute: list[dict[str, str]] | None = None,
    load: float | None = None,
) -> str:
    """The printout of one study's plan (``load``: the machine's 1-minute load average)."""
    out = [f"{study.name}: {' '.join(command)}"]
    if profile_header:
        out += ["", "Profile:", *(f"  {ln}" for ln in profile_header.splitlines())]
    out += ["", f"Jobs per rule ({sum(counts.values())} jobs, from snakemake -n):"]
    width = max((len(r) for r in counts), default=4)
    out += [f"  {rule:<{width}}  {n:>6}" for rule, n in counts.items()]
    if work:
        out += ["", "Generation (texts = prompts × samples per prompt × seeds; tokens: budget):"]
        out += [f"  {line}" for line in generation_lines(work)]
    else:
        out += ["", "Generation: none planned (the texts exist, or the targets generate none)"]
    out += ["", "Outputs to read:", *(f"  {p}" for p in reads or ["(none of the usual tables)"])]
    out += [
        "",
        f"Estimate on this machine class (2-core VM, no GPU; {est.cores} cores; "
        "resources/plan/job_seconds.tsv: the demo's measured job-seconds per job kind,",
        "on 160 texts a side or fewer: jobs on larger sets take longer):",
    ]
    small = {r: s for r, s in est.seconds.items() if s < 10}
    for rule, s in sorted(est.seconds.items(), key=lambda kv: -kv[1]):
        if rule not in small:
            out.append(f"  {rule:<{width}}  {format_duration(s):>9}")
    if small:
        jobs = sum(counts[r] for r in small)
        out.append(
            f"  {jobs} job(s) of {len(small)} other rule(s)  {format_duration(sum(small.values()))}"
        )
    out.append(
        f"  total {format_duration(est.job_seconds)} of job time, about "
        f"{format_duration(est.wall_seconds)} on {est.cores} cores"
        + (" for the priced jobs" if est.not_estimated else "")
    )
    threaded = sorted(r for r in est.seconds if est.wall_factor(r) > 1 / est.cores)
    if threaded:
        out.append(
            f"  ({', '.join(threaded)}: jobs on {est.cores} threads, one at a time, "
            f"{THREADED_SLOWDOWN:g}x slower than single-thread jobs side by side)"
        )
    for rule, why in est.not_estimated.items():
        out.append(f"  not estimated: {rule}: {why}")
    if load is not None:
        out.append(
            f"  for idle cores: the load average is {load:.1f} now; other processes on "
            "these cores make the run longer"
        )
    if study.recorded and not profile_header:
        out.append(f"  recorded (docs/studies.md, make {study.name}): {study.recorded}")
    if compute is not None:
        if not work:  # nothing generated: the paper's generation costs are not this work's
            compute = [r for r in compute if not r["work"].startswith("generat")]
        out += ["", "The paper's compute for this work:"]
        if not compute:
            out.append("  not stated")
        for r in compute:
            gpus = f" on {r['gpus']} GPU(s)" if r["gpus"] else ""
            gh = f"{r['gpu_hours']} GPU-h" if r["gpu_hours"] else gpu_hours_range(r)
            if r["time"]:
                gh = f" = {gh}" if gh else ""
                time = f": {r['time']}{gpus}{gh}"
            else:
                time = f": {gh}" if gh else ""
            out.append(f"  {r['section']}: {r['work']}{time}")
        if study.paper == "pr-llm" and work:
            total, lines = paper_gpu_hours(work, compute)
            if total is not None:
                out.append("  at App. B's rates, this profile's generation:")
                out += [f"    {ln}" for ln in lines]
                out.append(f"    total ≈ {total:,.0f} GPU-h")
    return "\n".join(out)


def generation_lines(work: list[GenerationWork]) -> list[str]:
    """One line per model: its generate jobs, texts and tokens over every dataset it runs on
    (the datasets named when more than one)."""
    lines = []
    for model in dict.fromkeys(w.model for w in work):
        ws = [w for w in work if w.model == model]
        size = "?" if ws[0].params_b is None else f"{ws[0].params_b:g}B"
        jobs = sum(w.jobs for w in ws)
        unknown = any(w.texts is None for w in ws)
        texts = "?" if unknown else f"{sum(w.texts for w in ws):,}"
        tokens = "?" if unknown else f"{sum(w.tokens for w in ws):,}"
        budgets = "/".join(str(b) for b in dict.fromkeys(w.max_new_tokens for w in ws))
        prompts = dict.fromkeys(w.prompt_tokens for w in ws)
        read = (
            ""
            if None in prompts
            else f"; prompts of ~{'/'.join(str(p) for p in prompts)} tokens to read"
        )
        where = (
            ws[0].dataset
            if len(ws) == 1
            else f"{len(ws)} datasets ({', '.join(w.dataset for w in ws)})"
        )
        lines.append(
            f"{model} ({size}) on {where}: {jobs} generate jobs, {texts} texts × {budgets} "
            f"tokens = {tokens} tokens{read}"
        )
    return lines


def gpu_hours_range(row: Mapping[str, str]) -> str:
    """GPU-hours of a row that states a run time and a GPU count (``10min~20min`` on 1 GPU:
    ``0.17-0.33 GPU-h``); empty when either is missing."""
    if not row.get("time") or not row.get("gpus"):
        return ""
    hours = []
    for value, unit in re.findall(r"(\d+(?:\.\d+)?)\s*(min|h)\b", row["time"]):
        hours.append(float(value) / (60 if unit == "min" else 1) * int(row["gpus"]))
    if not hours:
        return ""
    low, high = min(hours), max(hours)
    return f"{low:.2g} GPU-h" if low == high else f"{low:.2g}-{high:.2g} GPU-h"


def rule_sizes(plan) -> dict[str, float | None]:
    """The largest model (billions of parameters) each model-loading rule runs: generate and
    fetch_model the generators' (and every checkpoint's), embed the featurizers', surprisal
    the evaluators'; None where a checkpoint states no ``params_b``."""

    def largest(names) -> float | None:
        sizes = [plan.checkpoints[n].params_b for n in names]
        return None if not sizes or None in sizes else max(sizes)

    gens = {m.checkpoint for m in plan.models.values() if m.generates}
    return {
        "generate": largest(gens),
        "fetch_model": largest(plan.checkpoints),
        "embed": largest({f.checkpoint for f in plan.featurizers.values()}),
        "surprisal": largest({e.checkpoint for e in plan.evaluators.values()}),
        "score_with_model": largest(plan.checkpoints),
    }


def profile_header(path: Path) -> str:
    """The comment block that opens a profile file (the paper's setting, what is missing)."""
    lines = []
    for ln in path.read_text(encoding="utf-8").splitlines():
        if not ln.startswith("#"):
            break
        lines.append(ln[1:].strip())
    return "\n".join(lines)


def plan_study(name: str, profile: str | None = None, cores: int = 2) -> str:
    """Dry-run study ``name`` (with ``configs/profiles/<name>-<profile>.yaml``) and describe
    it; a one-line text when it is not a workflow or cannot be planned here."""
    root = repo_root()
    if name in NOT_WORKFLOWS:
        return f"{name}: not a Snakemake study; `make {name}` runs {NOT_WORKFLOWS[name]}"
    if name not in STUDIES:
        raise GenmetricsError(
            f"STUDY={name}: not a study of the Makefile (known: {', '.join(STUDIES)})"
        )
    study = STUDIES[name]
    prof = profile_path(root, name, profile) if profile else None
    command = snakemake_command(root, study, prof, cores)
    env = dict(os.environ)
    env.setdefault("GENMETRICS_REPO", str(root))
    run = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=False)
    text = run.stdout + run.stderr
    shown = ["snakemake", *command[1:]]
    if run.returncode != 0:
        return f"{name}: cannot plan here: {planning_error(text)}"
    config = merged_config([root / (study.config or "config.yaml"), *([prof] if prof else [])])
    os.environ.setdefault("GENMETRICS_REPO", str(root))
    from genmetrics.plan import load_plan

    plan = load_plan(
        config,
        root / "workflow" / "schemas" / "config.schema.yaml",
        tokens_per_word_table=root / "resources" / "tokens_per_word.tsv",
    )
    counts = job_counts(text)
    work = planned_work(generation_work(plan), planned_generate_jobs(text))
    sizes = rule_sizes(plan)
    tokens = sum(w.tokens for w in work) if all(w.tokens is not None for w in work) else None
    est = estimate(
        counts,
        read_costs(root / "resources" / "plan" / "job_seconds.tsv"),
        size_b=sizes,
        generated_tokens=tokens,
        work=work,
        threads=job_threads(text),
        cores=cores,
    )
    reads = outputs_to_read(dry_run_outputs(text), str(config.get("results_dir", "results")))
    compute = None
    if prof is not None:
        rows = read_paper_compute(root / "resources" / "plan" / "paper_compute.csv")
        compute = [r for r in rows if r["paper"] == study.paper]
    return describe(
        study,
        counts,
        work,
        reads,
        est,
        command=shown,
        profile_header=profile_header(prof) if prof else None,
        compute=compute,
        load=os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m genmetrics.plan.study_plan", description=__doc__.splitlines()[0]
    )
    parser.add_argument("study", help="a study's make target, e.g. webtext")
    parser.add_argument("--profile", help="configs/profiles/<study>-<profile>.yaml, e.g. paper")
    parser.add_argument("--cores", type=int, default=2)
    args = parser.parse_args(argv)
    try:
        print(plan_study(args.study, args.profile or None, args.cores))
    except GenmetricsError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
