"""Wall time and peak memory of ``snakemake -n`` on a big config, as a user runs it.

The big config is the repo's ``config.yaml`` with its ``models:`` replaced by ``--models``
copies of the demo's models (cycled: ``<demo model>-<i>``, each with its own sampling
temperature so that no two share settings) and ``generation.seeds`` set to
``0 .. --seeds - 1`` (the per-model ``seeds`` override dropped): the defaults, 100 models ×
5 seeds, give 17,642 jobs with the current config.yaml (one dataset, 33 metric entries). The
demo config itself (185 jobs) is timed too.

Each run is a fresh process, ``snakemake -n --cores 2 --quiet rules --snakefile
<checkout>/Snakefile --directory <tmp> --configfile <tmp>/config.yaml``: nothing is written
in the checkout. The repeats of one config share their temporary directory, as a user's
repeated ``-n`` shares the project's: ``first_s`` is the run that finds no ``.snakemake/`` and
an empty cache (the code digests computed, then remembered in the config's cache), ``best_s``
and ``median_s`` are over every run.
Printed per config: the job count (and the counts per rule with ``--rules``), the best and
median wall seconds of ``--repeat`` runs, and the peak RSS of the snakemake process
(``os.wait4``: that process's own ``ru_maxrss``).

Two parts of the wall time are not the workflow's and are timed apart in the same run:

* ``import snakemake.scheduling.job_scheduler``: collecting the executor plugins; the SLURM
  plugin (``snakemake-executor-plugin-slurm``) runs ``scontrol show config`` while its module
  is imported, which waits up to 10 s when a SLURM client is installed but no controller
  answers (as on this machine outside ``make test-slurm``); with no ``scontrol`` installed,
  or on a cluster, it returns at once;
* the Snakefile's own work (``load_plan`` and the rest of ``rules/common.smk``): printed from
  ``GENMETRICS_TIMING=1`` (the time from the first line of rules/common.smk to the end of the
  Snakefile and the time spent inside the per-job input/params functions).

With ``--baseline <checkout>`` (e.g. a worktree of the main branch) every run is repeated
with that checkout's Snakefile and ``src/`` (``PYTHONPATH``), interleaved with ours (ours,
baseline, ours, ...), and the ratio baseline / ours of the best times is printed.

    .venv/bin/python benchmarks/bench_dry_run.py [--models 100] [--seeds 5] [--repeat 3]
        [--rules] [--no-demo] [--baseline /work/main] [--floor] [--phases]

``--floor``: each config's *replay* (``--write-replay``, written from a dry run of the config
in a fresh process) is timed too, interleaved: a Snakefile with the same rules (output and
log patterns with their wildcard constraints inlined, threads, conda env, ``script:``) and the
same jobs (inputs with their names, outputs, logs, param names; ``tests/test_bench_dry_run.py``)
whose every input/params function is a dict lookup, with no genmetrics code. Its time is
Snakemake's own cost of the DAG: the floor of any wiring that keeps the jobs. Printed:
``ours_over_floor`` (wall) and ``ours_minus_floor_cpu_s`` (genmetrics' part in CPU seconds).

``--phases``: every run goes through ``benchmarks/dry_run_phases.py`` (timers around
Snakemake's phases: DAG edges, needrun, params, ``script:`` checks, printing, resources) and
the best run's split is printed as ``phases_s``.

On a loaded machine compare CPU seconds and interleaved ratios, not single wall times.

``--dump-jobs OUT --configfile C [--workdir W]`` instead writes every job of C's dry run (rule,
wildcards, inputs with their names, outputs, logs, the ``repr`` of every param with its name;
sorted JSON) to OUT, through Snakemake's Python API in this process: the Snakefile of
``--baseline`` if given (else this checkout's), the code of ``PYTHONPATH``. Run it for two
checkouts (``PYTHONPATH=<B>/src ... --baseline <B>``) and compare the files (with the
checkouts' paths replaced) to show that a change leaves every job as it was.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")
PHASES = Path(__file__).resolve().with_name("dry_run_phases.py")
GOAL_S = 10.0


def big_config(models: int, seeds: int) -> dict[str, Any]:
    """``config.yaml`` with ``models`` copies of its models and ``seeds`` generation seeds."""
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    demo = list(config["models"].items())
    out = {}
    for i in range(models):
        base, spec = demo[i % len(demo)]
        spec = copy.deepcopy(spec)
        spec.pop("seeds", None)
        sampling = spec.setdefault("sampling", {})
        # distinct settings per copy: a temperature step of 0.001 (every job's params differ)
        sampling["temperature"] = round(sampling.get("temperature", 1.0) + 0.001 * i, 3)
        out[f"{base}-{i:03d}"] = spec
    config["models"] = out
    config["generation"]["seeds"] = list(range(seeds))
    return config


def run_dry(
    configfile: Path | None,
    workdir: Path,
    repo: Path,
    snakefile: Path | None = None,
    phases: bool = False,
) -> dict[str, Any]:
    """One ``snakemake -n`` of ``repo``'s Snakefile and ``src/`` in a fresh process: wall
    seconds, job counts, the plan's timing (and the phases of Snakemake's work with
    ``phases``). ``snakefile`` (a replay workflow, with no config) instead of the checkout's."""
    # the same command; with phases through benchmarks/dry_run_phases.py (timers only)
    head = [sys.executable, str(PHASES)] if phases else [str(SNAKEMAKE)]
    cmd = [
        *head,
        "-n",
        "--cores",
        "2",
        "--quiet",
        "rules",
        "--snakefile",
        str(snakefile or repo / "Snakefile"),
        "--directory",
        str(workdir),
    ]
    cmd += ["--configfile", str(configfile)] if configfile else ["all"]
    env = dict(os.environ, GENMETRICS_TIMING="1", PYTHONPATH=str(repo / "src"))
    with tempfile.TemporaryFile("w+") as log:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, text=True)
        # this child's own peak RSS (ru_maxrss, KiB on Linux), not the largest child so far
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        log.seek(0)
        text = log.read()
    if proc.returncode != 0:
        sys.exit(f"snakemake -n failed:\n{text[-5000:]}")
    counts = {}
    for line in text.split("Job stats:")[-1].splitlines():
        m = re.match(r"^(\w+)\s+(\d+)$", line.strip())
        if m:
            counts[m[1]] = int(m[2])
    timing = {}
    for m in re.finditer(r"genmetrics timing: (\w+) ([0-9.]+) s", text):
        timing[m[1]] = float(m[2])
    if timing:
        timing["ours"] = round(sum(timing.values()), 3)
    split = {}
    for m in re.finditer(r"^dry-run phase: (.+?) (\d+) ([0-9.]+)$", text, re.M):
        split[m[1]] = float(m[3])
    return {
        "wall": wall,
        "rss_mb": usage.ru_maxrss / 1024,
        "cpu": usage.ru_utime + usage.ru_stime,
        "total": counts.pop("total", None),
        "rules": counts,
        "timing": timing,
        "phases": split,
    }


def plugin_import_seconds() -> float:
    """Seconds to import Snakemake's scheduler (which collects the executor plugins)."""
    code = "import snakemake.scheduling.job_scheduler"
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return time.perf_counter() - start


def summarise(name: str, runs: list[dict[str, Any]], rules: bool) -> dict:
    walls = [r["wall"] for r in runs]
    best = min(runs, key=lambda r: r["wall"])
    out = {
        "config": name,
        "jobs": best["total"],
        "first_s": round(walls[0], 2),
        "best_s": round(min(walls), 2),
        "median_s": round(statistics.median(walls), 2),
        # user + system CPU seconds of the run with the best wall time: less load-dependent
        "cpu_s": round(best["cpu"], 2),
        "peak_rss_mb": round(max(r["rss_mb"] for r in runs)),
        "snakefile_s": best["timing"],
    }
    if best["phases"]:
        out["phases_s"] = best["phases"]
    if rules:
        out["rules"] = best["rules"]
    return out


def measure(
    name: str,
    configfile: Path,
    repeat: int,
    rules: bool,
    baseline: Path | None,
    floor: Path | None = None,
    phases: bool = False,
) -> list[dict[str, Any]]:
    """Best/median of ``repeat`` runs of ours (and of the baseline and of the ``floor``
    replay workflow, interleaved)."""
    repos = {"ours": REPO} | ({"baseline": baseline} if baseline else {})
    if floor:
        repos["floor"] = REPO
    runs: dict[str, list] = {k: [] for k in repos}
    # one working directory per checkout across its repeats, as a user's: the first run finds
    # no .snakemake/ and no $GENMETRICS_CACHE (code digests computed, then remembered)
    workdirs = {k: tempfile.TemporaryDirectory(prefix="genmetrics-dry-") for k in repos}
    for i in range(repeat):
        order = list(repos) if i % 2 == 0 else list(reversed(repos))
        for who in order:
            workdir = Path(workdirs[who].name)
            if who == "floor":
                run = run_dry(None, workdir, REPO, snakefile=floor, phases=phases)
            else:
                run = run_dry(configfile, workdir, repos[who], phases=phases)
            runs[who].append(run)
    for tmp in workdirs.values():
        tmp.cleanup()
    out = []
    for who in repos:
        row = summarise(name, runs[who], rules)
        row["code"] = {"ours": "ours", "floor": "floor (replay)"}.get(who, f"baseline {baseline}")
        out.append(row)
    if baseline:
        out[0]["baseline_over_ours"] = round(out[1]["best_s"] / out[0]["best_s"], 2)
    if floor:
        out[0]["ours_over_floor"] = round(out[0]["best_s"] / out[-1]["best_s"], 2)
        out[0]["ours_minus_floor_cpu_s"] = round(out[0]["cpu_s"] - out[-1]["cpu_s"], 2)
    return out


@contextlib.contextmanager
def dry_run_dag(
    configfile: Path | None, workdir: Path, repo: Path = REPO, snakefile: Path | None = None
) -> Iterator[tuple[Any, Any]]:
    """The workflow and DAG of a dry run of ``configfile`` with ``repo``'s Snakefile (or of
    ``snakefile``, a replay, with no config: target ``all``), made in this process through
    Snakemake's Python API (its internal ``_workflow`` and ``_workflow_store.dag``)."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import (
        ConfigSettings,
        DAGSettings,
        OutputSettings,
        Quietness,
        ResourceSettings,
    )

    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL}, dryrun=True)) as api:
        configs = [configfile.resolve()] if configfile else []
        wf = api.workflow(
            resource_settings=ResourceSettings(cores=2),
            config_settings=ConfigSettings(configfiles=configs),
            snakefile=snakefile or repo / "Snakefile",
            workdir=workdir,
        )
        targets = set() if configfile else {"all"}
        wf.dag(DAGSettings(targets=targets)).execute_workflow(executor="dryrun")
        yield wf._workflow, wf._workflow_store.dag


def dump_jobs(
    configfile: Path | None,
    workdir: Path,
    out: Path,
    repo: Path = REPO,
    snakefile: Path | None = None,
) -> int:
    """Every job of a dry run of ``configfile`` (``repo``'s Snakefile, or ``snakefile``) as
    sorted JSON."""
    with dry_run_dag(configfile, workdir, repo, snakefile) as (_, dag):
        rows = [
            {
                "rule": j.rule.name,
                "wildcards": dict(j.wildcards_dict),
                "input": [str(x) for x in j.input],
                "input_names": sorted(j.input._names.items()),
                "output": [str(x) for x in j.output],
                "log": [str(x) for x in j.log],
                "params": [repr(p) for p in j.params],
                "param_names": sorted(j.params._names.items()),
            }
            for j in dag.jobs
        ]
    rows.sort(key=lambda r: (r["rule"], r["output"]))
    out.write_text(json.dumps(rows, indent=0, sort_keys=True, default=str))
    return len(rows)


REPLAY_HEAD = """\
# A replay of genmetrics' dry run (benchmarks/bench_dry_run.py --floor): every rule that
# has jobs, with its output and log patterns (wildcard constraints inlined), threads,
# conda env and script; every input and param of a job looked up in jobs.json.
import json

JOBS = json.load(open({jobs!r}))


def key(wildcards):
    return "|".join(f"{{k}}={{v}}" for k, v in sorted(wildcards.items()))


def named(rule):
    return lambda wildcards: JOBS[rule][key(wildcards)]["named"]


def plain(rule):
    return lambda wildcards: JOBS[rule][key(wildcards)]["plain"]


def param(rule, i):
    return lambda wildcards: JOBS[rule][key(wildcards)]["params"][i]


localrules:
    {local},

"""


def write_replay(configfile: Path, workdir: Path, out: Path, repo: Path = REPO) -> int:
    """Write ``out``/Snakefile and ``out``/jobs.json: a workflow whose dry run (target
    ``all``) schedules the jobs of ``configfile``'s (same rules, wildcards, input and output
    files, logs, number of params), with each input and params function a dict lookup and no
    genmetrics code. Its time is Snakemake's own cost of this DAG: the floor of any wiring
    that keeps the jobs. Differences, all making the floor lower: a param's value is its
    ``repr`` cut to 64 characters (Snakemake does not look inside params in a dry run), named
    inputs come before unnamed ones, threads are the job's (no function) and resources are
    Snakemake's defaults (the GPU rules' are not replayed)."""
    out.mkdir(parents=True, exist_ok=True)
    with dry_run_dag(configfile, workdir, repo) as (workflow, dag):
        jobs: dict[str, dict[str, Any]] = {}
        threads: dict[str, set[int]] = {}
        for j in dag.jobs:
            named: dict[str, Any] = {}
            taken: set[int] = set()
            for name, (start, end) in j.input._names.items():
                if end is None:
                    named[name] = str(j.input[start])
                    taken.add(start)
                else:
                    named[name] = [str(x) for x in j.input[start:end]]
                    taken.update(range(start, end))
            wildcards = "|".join(f"{k}={v}" for k, v in sorted(j.wildcards_dict.items()))
            jobs.setdefault(j.rule.name, {})[wildcards] = {
                "named": named,
                "plain": [str(x) for i, x in enumerate(j.input) if i not in taken],
                "params": [repr(p)[:64] for p in j.params],
                "param_names": [n for n, _ in sorted(j.params._names.items(), key=lambda x: x[1])],
            }
            threads.setdefault(j.rule.name, set()).add(j.threads)
        local = sorted(r for r in jobs if r in workflow._localrules) or ["all"]
        text = REPLAY_HEAD.format(jobs=str(out / "jobs.json"), local=",\n    ".join(local))
        for rule in workflow.rules:
            if rule.name not in jobs:
                continue
            lines = [f"rule {rule.name}:", "    input:"]
            lines += [f"        unpack(named({rule.name!r})),", f"        plain({rule.name!r}),"]
            for section, files in (("output", rule.output), ("log", rule.log)):
                if files:
                    lines += [f"    {section}:"] + [f"        {str(f)!r}," for f in files]
            if len(threads[rule.name]) == 1 and threads[rule.name] != {1}:
                lines.append(f"    threads: {threads[rule.name].pop()}")
            names = next(iter(jobs[rule.name].values()))["param_names"]
            if names:
                lines.append("    params:")
                lines += [f"        {n}=param({rule.name!r}, {i})," for i, n in enumerate(names)]
            if rule.conda_env:
                lines.append(f"    conda:\n        {str(rule.basedir.join(rule.conda_env))!r}")
            if rule.script:
                lines.append(f"    script:\n        {str(rule.basedir.join(rule.script))!r}")
            text += "\n".join(lines) + "\n\n\n"
    (out / "Snakefile").write_text(text)
    (out / "jobs.json").write_text(json.dumps(jobs))
    return sum(len(v) for v in jobs.values())


def replay_of(configfile: Path, out: Path) -> Path:
    """``out``/Snakefile, the replay of ``configfile``'s dry run (:func:`write_replay`), made
    in a fresh process with this checkout's code."""
    cmd = [sys.executable, __file__, "--write-replay", str(out), "--configfile", str(configfile)]
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"writing the replay failed:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return out / "Snakefile"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--models", type=int, default=100, help="model copies (default 100)")
    ap.add_argument("--seeds", type=int, default=5, help="generation seeds (default 5)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per config; best and median")
    ap.add_argument("--rules", action="store_true", help="print the job count per rule")
    ap.add_argument("--no-demo", action="store_true", help="skip the demo config")
    ap.add_argument("--baseline", type=Path, help="another checkout to time interleaved")
    ap.add_argument(
        "--floor",
        action="store_true",
        help="also time each config's replay (Snakemake alone on the same DAG), interleaved",
    )
    ap.add_argument(
        "--phases",
        action="store_true",
        help="run through benchmarks/dry_run_phases.py: print where Snakemake's time goes",
    )
    ap.add_argument("--dump-jobs", type=Path, help="write every job of --configfile's dry run")
    ap.add_argument("--write-replay", type=Path, help="write the replay of --configfile's dry run")
    ap.add_argument("--configfile", type=Path, default=REPO / "config.yaml")
    ap.add_argument("--workdir", type=Path, help="for --dump-jobs (default: a temporary one)")
    args = ap.parse_args()
    if args.dump_jobs or args.write_replay:
        with tempfile.TemporaryDirectory(prefix="genmetrics-dump-") as tmp:
            workdir = args.workdir or Path(tmp)
            if args.write_replay:
                n = write_replay(args.configfile, workdir, args.write_replay.resolve())
                print(f"{n} jobs -> {args.write_replay}/Snakefile")
                return
            repo = args.baseline or REPO
            n = dump_jobs(args.configfile, workdir, args.dump_jobs.resolve(), repo)
        print(f"{n} jobs -> {args.dump_jobs}")
        return

    load = os.getloadavg()
    plugins = min(plugin_import_seconds() for _ in range(2))
    results = []
    with tempfile.TemporaryDirectory(prefix="genmetrics-bench-") as tmp:
        big = Path(tmp, "config.yaml")
        big.write_text(yaml.safe_dump(big_config(args.models, args.seeds), sort_keys=False))
        configs = [] if args.no_demo else [("demo", REPO / "config.yaml")]
        configs.append((f"{args.models} models x {args.seeds} seeds", big))
        for i, (name, configfile) in enumerate(configs):
            floor = replay_of(configfile, Path(tmp, f"replay{i}")) if args.floor else None
            results += measure(
                name, configfile, args.repeat, args.rules, args.baseline, floor, args.phases
            )
    summary = {
        "load_before": [round(x, 2) for x in load],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "import_scheduler_and_plugins_s": round(plugins, 2),
        "results": results,
    }
    print(json.dumps(summary, indent=1))
    last = next(r for r in results if r["config"] != "demo" and r["code"] == "ours")
    net = last["best_s"] - plugins
    print(
        f"dry run of {last['config']}: {last['jobs']} jobs, {last['best_s']:.2f} s "
        f"(best of {args.repeat}; {net:.2f} s without the plugin import), "
        f"{last['peak_rss_mb']} MB peak RSS (goal <= {GOAL_S:g} s)"
        + (f"; baseline / ours {last['baseline_over_ours']}" if args.baseline else "")
        + (
            f"; ours / floor {last['ours_over_floor']} "
            f"(CPU {last['ours_minus_floor_cpu_s']:+.2f} s: genmetrics' part)"
            if args.floor
            else ""
        )
    )


if __name__ == "__main__":
    main()
