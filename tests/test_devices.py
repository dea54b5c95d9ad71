"""GPUs and CPUs on a workstation: each GPU job claims its own, each job keeps to its threads
(genmetrics.devices)."""

from __future__ import annotations

import os

import pytest

from genmetrics import GenmetricsError
from genmetrics.devices import claim_gpus, gpus_requested, release_gpus


def test_gpus_requested_reads_gpu_or_gres():
    assert gpus_requested({"gpu": 2, "gpu_model": "a100"}) == 2
    assert gpus_requested({"gres": "gpu:v100:4"}) == 4
    assert gpus_requested({"gres": "gpu:2"}) == 2 and gpus_requested({"gres": "gpu"}) == 1
    assert gpus_requested({"mem_mb": 100}) == 0


def test_jobs_claim_distinct_gpus_until_released(tmp_path):
    first, second, third = {}, {}, {}
    try:
        assert claim_gpus(2, total=3, lock_dir=tmp_path, environ=first) == [0, 1]
        assert first["CUDA_VISIBLE_DEVICES"] == "0,1"
        assert claim_gpus(1, total=3, lock_dir=tmp_path, environ=second) == [2]
        with pytest.raises(GenmetricsError, match="no 1 free GPU"):
            claim_gpus(1, total=3, lock_dir=tmp_path, environ=third, wait_s=0)
        assert "CUDA_VISIBLE_DEVICES" not in third
        with pytest.raises(GenmetricsError, match="asks 4 GPUs but this machine has 3"):
            claim_gpus(4, total=3, lock_dir=tmp_path, environ={})
    finally:
        release_gpus()
    assert claim_gpus(3, total=3, lock_dir=tmp_path, environ=third) == [0, 1, 2]
    release_gpus()


def test_slurm_or_a_set_device_list_is_left_alone(tmp_path):
    assert claim_gpus(1, total=2, lock_dir=tmp_path, environ={"SLURM_JOB_ID": "7"}) is None
    env = {"CUDA_VISIBLE_DEVICES": "1"}
    assert claim_gpus(1, total=2, lock_dir=tmp_path, environ=env) is None
    assert env == {"CUDA_VISIBLE_DEVICES": "1"}
    assert claim_gpus(1, total=0, lock_dir=tmp_path, environ={}) is None  # a CPU machine
    assert claim_gpus(0, total=2, lock_dir=tmp_path, environ={}) is None


def test_array_device_is_cpu_without_a_gpu_and_obeys_the_environment(monkeypatch):
    from genmetrics import GenmetricsError, devices

    def fresh(value):
        devices.array_device.cache_clear()
        if value is None:
            monkeypatch.delenv(devices.ARRAY_DEVICE_ENV, raising=False)
        else:
            monkeypatch.setenv(devices.ARRAY_DEVICE_ENV, value)

    monkeypatch.setattr(devices, "count_gpus", lambda: 0)
    fresh(None)
    assert devices.array_device() == "cpu"
    fresh("cpu")
    assert devices.array_device() == "cpu"
    fresh("tpu")
    with pytest.raises(GenmetricsError, match="GENMETRICS_ARRAY_DEVICE='tpu'"):
        devices.array_device()
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        fresh("cuda")
        with pytest.raises(GenmetricsError, match="no usable GPU"):
            devices.array_device()
    devices.array_device.cache_clear()


def test_available_cpus_keeps_to_the_jobs_threads(monkeypatch):
    """Snakemake sets OMP_NUM_THREADS to a script job's threads: the cap below the affinity."""
    from genmetrics.devices import available_cpus

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert available_cpus() == 8
    for env, want in (("3", 3), ("1", 1), ("16", 8), ("0", 8), ("two", 8), ("", 8)):
        monkeypatch.setenv("OMP_NUM_THREADS", env)
        assert available_cpus() == want, env


def test_omniinput_jobs_set_torch_to_the_jobs_threads(monkeypatch):
    """An OmniInput job's torch threads follow the job's threads, not every core."""
    import torch

    from genmetrics.omniinput import jobs

    before = torch.get_num_threads()
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(4)), raising=False)
    try:
        monkeypatch.setenv("OMP_NUM_THREADS", "1")
        jobs._threads()
        assert torch.get_num_threads() == 1
        monkeypatch.setenv("OMP_NUM_THREADS", "3")
        jobs._threads()
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)
