"""``snakemake`` run in this process with timers around the phases of its dry run.

    .venv/bin/python benchmarks/dry_run_phases.py -n --cores 2 --quiet rules ...

takes ``snakemake``'s own arguments. At exit it prints to stderr one line per phase:
``dry-run phase: <name> <calls> <wall seconds>`` (the inclusive wall time of the outermost
calls: a phase called inside itself counts once), and ``dry-run phase: total <wall> <cpu>``.
The timers only measure: each wraps a Snakemake method (same arguments, same result) and
nothing else is changed. ``bench_dry_run.py --phases`` runs its dry runs through this file.

Phases (Snakemake 9.2x's method names):

* ``import snakemake``: its CLI and the modules below (not the executor plugins, which load
  while the CLI's argument parser is built: part of ``total``);
* ``Snakefile``: ``Workflow.include`` of the Snakefile (its includes, genmetrics' plan);
* ``build DAG``: ``Workflow._build_dag``, of which ``edges`` (``DAG.update``: each input
  file's producer found, its job made: ``file2jobs``, ``Rule.expand_input/output/log``),
  ``needrun`` (``DAG.update_needrun``: mtimes, rerun reasons), ``params``
  (``DAG.update_conda_envs``, which is where every job's params are first evaluated),
  ``directory outputs`` and ``check jobs``;
* ``script: checks``: ``ScriptProcessor.process`` (each job's ``script:`` file located and
  read through Snakemake's source cache);
* ``print jobs``: ``Job.log_info`` (the dry-run executor formats every job, whatever
  ``--quiet`` says; ``resources`` is where each job's resources are evaluated).
"""

from __future__ import annotations

import atexit
import functools
import inspect
import sys
import time
from collections.abc import Callable
from typing import Any

_T0 = time.perf_counter()
_C0 = time.process_time()
_SPENT: dict[str, list[float]] = {}
_DEPTH: dict[str, int] = {}


def _timed(owner: Any, name: str, label: str) -> None:
    """Replace ``owner.name`` by a wrapper adding its outermost calls' wall time to ``label``."""
    func: Callable[..., Any] = getattr(owner, name)
    _SPENT.setdefault(label, [0, 0.0])
    _DEPTH.setdefault(label, 0)

    def enter() -> float:
        _DEPTH[label] += 1
        return time.perf_counter()

    def leave(start: float) -> None:
        _DEPTH[label] -= 1
        if _DEPTH[label] == 0:
            _SPENT[label][0] += 1
            _SPENT[label][1] += time.perf_counter() - start

    if inspect.iscoroutinefunction(func):

        @functools.wraps(func)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = enter()
            try:
                return await func(*args, **kwargs)
            finally:
                leave(start)

    else:

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = enter()
            try:
                return func(*args, **kwargs)
            finally:
                leave(start)

    setattr(owner, name, wrapper)


def _report() -> None:
    wall = time.perf_counter() - _T0
    cpu = time.process_time() - _C0
    print(f"dry-run phase: total {wall:.3f} {cpu:.3f}", file=sys.stderr)
    for label, (calls, seconds) in _SPENT.items():
        print(f"dry-run phase: {label} {int(calls)} {seconds:.3f}", file=sys.stderr)


def main() -> None:
    start = time.perf_counter()
    import snakemake.cli
    from snakemake import dag, jobs, rules, workflow

    _SPENT["import snakemake"] = [1, time.perf_counter() - start]
    phases = [
        (workflow.Workflow, "include", "Snakefile"),
        (workflow.Workflow, "_build_dag", "build DAG"),
        (dag.DAG, "update", "edges"),
        (dag.DAG, "file2jobs", "file2jobs"),
        (rules.Rule, "expand_input", "expand_input"),
        (rules.Rule, "expand_output", "expand_output"),
        (rules.Rule, "expand_log", "expand_log"),
        (dag.DAG, "update_needrun", "needrun"),
        (dag.DAG, "update_conda_envs", "params"),
        (dag.DAG, "check_directory_outputs", "directory outputs"),
        (dag.DAG, "check_jobs", "check jobs"),
        (dag.ScriptProcessor, "process", "script: checks"),
        (jobs.Job, "log_info", "print jobs"),
        (rules.Rule, "expand_resources", "resources"),
    ]
    for owner, name, label in phases:
        _timed(owner, name, label)
    atexit.register(_report)
    sys.argv = ["snakemake", *sys.argv[1:]]
    snakemake.cli.main()


if __name__ == "__main__":
    main()
