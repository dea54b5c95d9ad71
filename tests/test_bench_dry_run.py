"""benchmarks/bench_dry_run.py's floor: the replay workflow it times (``--floor``) schedules
the same jobs as genmetrics' own dry run (rules, wildcards, input files with their names,
outputs, logs, param names), so the difference between the two times is genmetrics' part."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from bench_dry_run import big_config  # noqa: E402

BENCH = REPO / "benchmarks" / "bench_dry_run.py"


def _run(*args: str) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    proc = subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def _jobs(path: Path) -> dict[tuple, dict]:
    """The dump's jobs by (rule, outputs): inputs as a set, names, logs, param names."""
    out = {}
    for row in json.loads(path.read_text()):
        inputs = set(row["input"])
        names = {}
        for name, (start, end) in row["input_names"]:
            names[name] = sorted(
                row["input"][start:end] if end is not None else [row["input"][start]]
            )
        out[(row["rule"], tuple(row["output"]))] = {
            "wildcards": row["wildcards"],
            "input": inputs,
            "input_names": names,
            "log": row["log"],
            "param_names": sorted(name for name, _ in row["param_names"]),
        }
    return out


@pytest.mark.slow  # benchmark tooling (three Snakemake starts on a 4 × 2 config): make test-slow
def test_replay_schedules_the_jobs_of_the_workflow(tmp_path):
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(big_config(4, 2), sort_keys=False))
    replay = tmp_path / "replay"
    _run(str(BENCH), "--write-replay", str(replay), "--configfile", str(config))
    ours = tmp_path / "ours.json"
    _run(str(BENCH), "--dump-jobs", str(ours), "--configfile", str(config))
    floor = tmp_path / "floor.json"
    code = (
        "import sys; from pathlib import Path; sys.path.insert(0, sys.argv[1]); "
        "import bench_dry_run as b; "
        "b.dump_jobs(None, Path(sys.argv[2]), Path(sys.argv[3]), snakefile=Path(sys.argv[4]))"
    )
    workdir = tmp_path / "wd"
    workdir.mkdir()
    args = [str(REPO / "benchmarks"), str(workdir), str(floor), str(replay / "Snakefile")]
    _run("-c", code, *args)
    expected, got = _jobs(ours), _jobs(floor)
    assert len(expected) > 200  # every rule of the demo, 4 models x 2 seeds
    assert got.keys() == expected.keys()
    for key, job in expected.items():
        assert got[key] == job, key
