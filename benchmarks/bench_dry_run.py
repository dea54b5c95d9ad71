"""Wall time and peak memory of ``snakemake -n`` on a big config, as a user runs it.

The big config is the repo's ``config.yaml`` with its ``models:`` replaced by ``--models``
copies of the demo's models (cycled: ``<demo model>-<i>``, each with its own sampling
temperature so that no two share settings) and ``generation.seeds`` set to
``0 .. --seeds - 1`` (the per-model ``seeds`` override dropped): the defaults, 100 models ×
5 seeds, give 12,609 jobs (one dataset, 33 metric entries, 3 spread entries). The demo config
itself (185 jobs) is timed too.

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
        [--rules] [--no-demo] [--baseline /work/main]

``--dump-jobs OUT --configfile C [--workdir W]`` instead writes every job of C's dry run (rule,
wildcards, inputs with their names, outputs, logs, the ``repr`` of every param with its name;
sorted JSON) to OUT, through Snakemake's Python API in this process: the Snakefile of
``--baseline`` if given (else this checkout's), the code of ``PYTHONPATH``. Run it for two
checkouts (``PYTHONPATH=<B>/src ... --baseline <B>``) and compare the files (with the
checkouts' paths replaced) to show that a change leaves every job as it was.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = Path(sys.executable).with_name("snakemake")
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


def run_dry(configfile: Path, workdir: Path, repo: Path) -> dict[str, Any]:
    """One ``snakemake -n`` of ``repo``'s Snakefile and ``src/`` in a fresh process: wall
    seconds, job counts, the plan's timing."""
    cmd = [
        str(SNAKEMAKE),
        "-n",
        "--cores",
        "2",
        "--quiet",
        "rules",
        "--snakefile",
        str(repo / "Snakefile"),
        "--directory",
        str(workdir),
        "--configfile",
        str(configfile),
    ]
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
    return {
        "wall": wall,
        "rss_mb": usage.ru_maxrss / 1024,
        "cpu": usage.ru_utime + usage.ru_stime,
        "total": counts.pop("total", None),
        "rules": counts,
        "timing": timing,
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
    if rules:
        out["rules"] = best["rules"]
    return out


def measure(
    name: str, configfile: Path, repeat: int, rules: bool, baseline: Path | None
) -> list[dict[str, Any]]:
    """Best/median of ``repeat`` runs of ours (and of the baseline, interleaved)."""
    repos = {"ours": REPO} | ({"baseline": baseline} if baseline else {})
    runs: dict[str, list] = {k: [] for k in repos}
    # one working directory per checkout across its repeats, as a user's: the first run finds
    # no .snakemake/ and no $GENMETRICS_CACHE (code digests computed, then remembered)
    workdirs = {k: tempfile.TemporaryDirectory(prefix="genmetrics-dry-") for k in repos}
    for i in range(repeat):
        order = list(repos) if i % 2 == 0 else list(reversed(repos))
        for who in order:
            runs[who].append(run_dry(configfile, Path(workdirs[who].name), repos[who]))
    for tmp in workdirs.values():
        tmp.cleanup()
    out = []
    for who in repos:
        row = summarise(name, runs[who], rules)
        row["code"] = who if who == "ours" else f"baseline {baseline}"
        out.append(row)
    if baseline:
        out[0]["baseline_over_ours"] = round(out[1]["best_s"] / out[0]["best_s"], 2)
    return out


def dump_jobs(configfile: Path, workdir: Path, out: Path, repo: Path = REPO) -> int:
    """Every job of a dry run of ``configfile`` (``repo``'s Snakefile) as sorted JSON."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import (
        ConfigSettings,
        DAGSettings,
        OutputSettings,
        Quietness,
        ResourceSettings,
    )

    with SnakemakeApi(OutputSettings(quiet={Quietness.ALL}, dryrun=True)) as api:
        wf = api.workflow(
            resource_settings=ResourceSettings(cores=2),
            config_settings=ConfigSettings(configfiles=[configfile.resolve()]),
            snakefile=repo / "Snakefile",
            workdir=workdir,
        )
        wf.dag(DAGSettings()).execute_workflow(executor="dryrun")
        jobs = wf._workflow_store.dag.jobs  # Snakemake's DAG (internal attribute)
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
            for j in jobs
        ]
    rows.sort(key=lambda r: (r["rule"], r["output"]))
    out.write_text(json.dumps(rows, indent=0, sort_keys=True, default=str))
    return len(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--models", type=int, default=100, help="model copies (default 100)")
    ap.add_argument("--seeds", type=int, default=5, help="generation seeds (default 5)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per config; best and median")
    ap.add_argument("--rules", action="store_true", help="print the job count per rule")
    ap.add_argument("--no-demo", action="store_true", help="skip the demo config")
    ap.add_argument("--baseline", type=Path, help="another checkout to time interleaved")
    ap.add_argument("--dump-jobs", type=Path, help="write every job of --configfile's dry run")
    ap.add_argument("--configfile", type=Path, default=REPO / "config.yaml")
    ap.add_argument("--workdir", type=Path, help="for --dump-jobs (default: a temporary one)")
    args = ap.parse_args()
    if args.dump_jobs:
        with tempfile.TemporaryDirectory(prefix="genmetrics-dump-") as tmp:
            workdir = args.workdir or Path(tmp)
            repo = args.baseline or REPO
            n = dump_jobs(args.configfile, workdir, args.dump_jobs.resolve(), repo)
        print(f"{n} jobs -> {args.dump_jobs}")
        return

    load = os.getloadavg()
    plugins = min(plugin_import_seconds() for _ in range(2))
    results = []
    with tempfile.TemporaryDirectory(prefix="genmetrics-bench-") as tmp:
        if not args.no_demo:
            results += measure("demo", REPO / "config.yaml", args.repeat, args.rules, args.baseline)
        big = Path(tmp, "config.yaml")
        big.write_text(yaml.safe_dump(big_config(args.models, args.seeds), sort_keys=False))
        name = f"{args.models} models x {args.seeds} seeds"
        results += measure(name, big, args.repeat, args.rules, args.baseline)
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
    )


if __name__ == "__main__":
    main()
