"""Cluster resources of GPU jobs: derived from the config (genmetrics.plan.gpu_resources), placed by
the rules, kept when a user overrides one key on the command line; the profiles."""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO

from genmetrics import GenmetricsError
from genmetrics.plan import load_plan
from genmetrics.plan.gpu_resources import job_resources

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
CLUSTER = {
    "gpu_request": "gpu",
    "gpu_kind": "a100",
    "gpu_kinds": {
        "a100": {"partition": "a100", "memory_gb": 80, "bf16": True},
        "v100": {"partition": "v100", "memory_gb": 32, "bf16": False},
    },
    "cpus_per_gpu": 4,
    "rules": {},
}


@pytest.mark.parametrize(
    "params_b, dtype, kind, gpus, precision",
    [
        (70, "auto", "a100", 4, "bfloat16"),  # 140 GB × 1.3 / 80 = 2.3 → 3 → 4
        (7, "auto", "a100", 1, "bfloat16"),  # 14 GB
        (7, "auto", "v100", 2, "float32"),  # 28 GB × 1.3 / 32 = 1.1 → 2
        (13, "auto", "v100", 4, "float32"),  # 52 GB × 1.3 / 32 = 2.1 → 3 → 4
        (70, "float32", "a100", 8, "float32"),  # 280 GB × 1.3 / 80 = 4.6 → 5 → 8
        (0.135, "auto", "v100", 1, "float32"),
    ],
)
def test_gpus_follow_the_weights_in_the_job_s_precision(params_b, dtype, kind, gpus, precision):
    res = job_resources(
        "generate", CLUSTER, params_b=params_b, dtype=dtype, overrides=[{"gpu_kind": kind}]
    )
    assert (res.gpus, res.dtype, res.partition) == (gpus, precision, kind)
    assert res.cpus == 4 * gpus
    weights_gb = params_b * (2 if precision == "bfloat16" else 4)
    assert res.mem_mb == 8000 + -(-weights_gb * 1.2 * 1024 // 1)


def test_overrides_apply_from_rule_to_checkpoint_to_model():
    cluster = {**CLUSTER, "rules": {"generate": {"gpu_kind": "v100", "runtime": 100, "cpus": 2}}}
    res = job_resources(
        "generate",
        cluster,
        params_b=7,
        dtype="auto",
        overrides=[{"runtime": 200}, {"gpus": 3, "partition": "big"}],
    )
    assert (res.gpu_kind, res.runtime, res.cpus, res.gpus, res.partition) == (
        "v100",
        200,
        2,
        3,
        "big",
    )
    assert res.snakemake("gpu", attempt=3) == {
        "slurm_partition": "big",
        "gpu": 3,
        "gpu_model": "v100",
        "cpus_per_task": 2,
        "mem_mb": res.mem_mb,
        "runtime": 600,  # × attempt
        "nodes": 1,
    }
    gres = res.snakemake("gres")
    assert gres["gres"] == "gpu:v100:3" and "gpu" not in gres and "gpu_model" not in gres
    with pytest.raises(GenmetricsError, match="x.gpu_kind: .h100. is not in"):
        job_resources(
            "embed", CLUSTER, params_b=1, dtype="auto", overrides=[{"gpu_kind": "h100"}], where="x"
        )


def _config() -> dict:
    return yaml.safe_load((REPO / "config.yaml").read_text())


def test_the_plan_sizes_each_model_and_spreads_big_ones():
    cfg = _config()
    cfg["checkpoints"]["big"] = {
        "source": {"kind": "hub", "repo": "org/big-70b", "revision": "a" * 40},
        "params_b": 70,
        "max_memory": {"gpu": "75GiB"},
    }
    cfg["models"]["big-v100"] = {"checkpoint": "big", "resources": {"gpu_kind": "v100"}}
    cfg["models"]["big-a100"] = {"checkpoint": "big"}
    plan = load_plan(cfg, SCHEMA)
    small = plan.job_resources("generate", "smollm2-pure")
    assert (small.gpus, small.gpu_kind, small.mem_mb) == (1, "a100", 8000 + 332)
    a100 = plan.job_resources("generate", "big-a100")
    v100 = plan.job_resources("generate", "big-v100")
    assert (a100.gpus, a100.dtype) == (4, "bfloat16")
    assert (v100.gpus, v100.dtype, v100.partition) == (16, "float32", "v100")
    gen = plan.models["big-a100"].generation["bbc"]
    assert gen.device_map == "auto" and gen.max_memory == {"gpu": "75GiB"}
    assert plan.models["smollm2-pure"].generation["bbc"].device_map is None
    # features run in fp32 on the checkpoint's GPUs; sizing keys never reach fetch_model
    assert plan.job_resources("embed", "smollm2").dtype == "float32"
    assert "params_b" not in plan.checkpoint_spec("big")
    assert plan.checkpoint_spec("big")["dtype"] == "float32"  # auto is chosen at load time
    bad = copy.deepcopy(cfg)
    bad["checkpoints"]["smollm2-135m"]["max_memory"] = {"gpu": "10GiB"}
    with pytest.raises(GenmetricsError, match="max_memory: needs device_map"):
        load_plan(bad, SCHEMA)


def _dry_run(*args: str, cwd: Path) -> str:
    cmd = [str(Path(sys.executable).parent / "snakemake"), "-s", str(REPO / "Snakefile"), "-n"]
    proc = subprocess.run([*cmd, *args], cwd=cwd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout


def _resources(out: str, rule: str) -> list[dict[str, str]]:
    blocks = re.split(r"^\[\w{3} \w{3} .*\]$", out, flags=re.M)
    found = []
    for b in blocks:
        if re.search(rf"^rule {rule}:", b.strip(), re.M):
            line = re.search(r"^\s*resources: (.*)$", b, re.M)[1]
            found.append(dict(kv.split("=", 1) for kv in line.split(", ")))
    return found


def test_cluster_profile_places_gpu_and_cpu_rules(tmp_path):
    cfg = _config()
    cfg["models"]["smollm2-v100"] = {
        "checkpoint": "smollm2-135m",
        "resources": {"gpu_kind": "v100"},
    }
    cfg["resources"] = {"gpu_request": "gres", "rules": {"surprisal": {"gpu_kind": "v100"}}}
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    out = _dry_run("--profile", str(REPO / "cluster"), "--configfile", str(path), cwd=tmp_path)
    gens = {r["slurm_partition"]: r for r in _resources(out, "generate")}
    assert set(gens) == {"a100", "v100"}
    assert gens["v100"]["gres"] == "gpu:v100:1" and "gpu" not in gens["v100"]
    assert gens["a100"]["gres"] == "gpu:a100:1"
    assert gens["a100"]["cpus_per_task"] == "4" and gens["a100"]["runtime"] == "240"
    assert {r["slurm_partition"] for r in _resources(out, "surprisal")} == {"v100"}
    for rule in ("score", "aggregate", "correlation_heatmap"):
        for r in _resources(out, rule):
            assert r["slurm_partition"] == "cpu" and "gres" not in r and "gpu" not in r
    assert all("tasks" not in r for rule in ("generate", "embed") for r in _resources(out, rule))


def test_a_command_line_override_keeps_the_other_resources(tmp_path):
    """--set-resources replaces a profile's whole set-resources entry; the GPU rules' sizes
    live in the rules, so one key given on the command line leaves the others in place."""
    out = _dry_run(
        "--profile",
        str(REPO / "cluster"),
        "--configfile",
        str(REPO / "config.yaml"),
        "--set-resources",
        "generate:slurm_partition=v100",
        cwd=tmp_path,
    )
    for r in _resources(out, "generate"):
        assert r["slurm_partition"] == "v100"
        assert r["runtime"] == "240" and int(r["mem_mb"]) > 8000 and r["gpu"] == "1"


def test_local_profile_counts_gpus(tmp_path):
    prof = yaml.safe_load((REPO / "profiles" / "local" / "profile.yaml").read_text())
    assert prof["resources"] == {"gpu": 1}
    cluster = yaml.safe_load((REPO / "cluster" / "profile.yaml").read_text())
    assert prof["rerun-triggers"] == cluster["rerun-triggers"]
    assert "code" not in cluster["rerun-triggers"]
    assert cluster["slurm-status-command"] == "squeue" and cluster["retries"] >= 1
    assert "tasks" not in cluster["default-resources"]
    config = str(REPO / "config.yaml")
    out = _dry_run(
        "--profile", str(REPO / "profiles" / "local"), "--configfile", config, cwd=tmp_path
    )
    assert all(r["gpu"] == "1" for r in _resources(out, "generate"))


def test_an_unknown_gpu_kind_stops_the_plan_naming_its_key():
    cfg = _config()
    cfg["checkpoints"]["minilm"]["resources"] = {"gpu_kind": "h100"}
    with pytest.raises(GenmetricsError, match=r"checkpoints\.minilm\.resources\.gpu_kind: 'h100'"):
        load_plan(cfg, SCHEMA)
    cfg = _config()
    cfg["models"]["smollm2-pure"]["resources"] = {"gpu_kind": "h100"}
    with pytest.raises(GenmetricsError, match=r"models\.smollm2-pure\.resources\.gpu_kind"):
        load_plan(cfg, SCHEMA)


def test_gpu_rules_are_listed_once_and_the_schema_agrees():
    """The schema's ``resources.rules`` keys and the rules with ``resources:`` per job are the
    GPU rules of :data:`genmetrics.plan.gpu_resources.GPU_RULES`, whose wildcard each rule has."""
    import re

    import yaml
    from conftest import REPO

    from genmetrics.plan.gpu_resources import GPU_RULES

    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    rules = schema["properties"]["resources"]["properties"]["rules"]
    assert set(rules["propertyNames"]["enum"]) == set(GPU_RULES)
    text = "".join(p.read_text() for p in sorted((REPO / "rules").glob("*.smk")))
    sized = set(re.findall(r"PLAN\.rule_resources\(\"(\w+)\"\)", text))
    assert sized == set(GPU_RULES)
