"""GPUs for a job on a workstation: Snakemake counts them (``--resources gpu=N``) but does not
say which; SLURM does (``CUDA_VISIBLE_DEVICES``).

:func:`claim_gpus` runs at the start of a GPU job's script, before torch touches CUDA. Under
SLURM, or when ``CUDA_VISIBLE_DEVICES`` is already set, it does nothing. Otherwise it takes
the first ``n`` GPUs that no other job holds, each by an exclusive ``flock`` on
``<lock_dir>/gpu<i>.lock`` (held until the process exits, also when it is killed), and sets
``CUDA_VISIBLE_DEVICES`` to them, so two jobs that Snakemake runs at once never share a GPU.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import logging
import os
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError

_log = logging.getLogger("genmetrics")
_HELD: list[Any] = []  # open lock files: the claim lasts as long as the process


def gpus_requested(resources: Mapping[str, Any]) -> int:
    """GPUs a job asked for: resource ``gpu`` or the count in ``gres: gpu[:KIND]:N``."""
    if resources.get("gpu"):
        return int(resources["gpu"])
    gres = str(resources.get("gres") or "")
    for part in gres.split(","):
        fields = part.strip().split(":")
        if fields[0] == "gpu":
            return int(fields[-1]) if len(fields) > 1 and fields[-1].isdigit() else 1
    return 0


def count_gpus() -> int:
    """GPUs on this machine (``nvidia-smi -L``; 0 without it), without initialising CUDA."""
    import shutil
    import subprocess  # here: a CPU job that never asks pays no import (bench_precision_recall)

    smi = shutil.which("nvidia-smi")
    if smi is None:
        return 0
    try:
        out = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return sum(line.startswith("GPU ") for line in out.splitlines())


def claim_gpus(
    n: int,
    *,
    total: int | None = None,
    lock_dir: str | Path | None = None,
    wait_s: float = 3600,
    environ: Any = os.environ,
) -> list[int] | None:
    """Set ``CUDA_VISIBLE_DEVICES`` to ``n`` GPUs no other job holds; return their indices
    (``None``: nothing to do — no GPU asked or present, under SLURM, or already set)."""
    if n <= 0 or "SLURM_JOB_ID" in environ or "CUDA_VISIBLE_DEVICES" in environ:
        return None
    total = count_gpus() if total is None else total
    if total == 0:
        return None
    if n > total:
        raise GenmetricsError(f"the job asks {n} GPUs but this machine has {total}")
    import tempfile

    folder = Path(lock_dir or Path(tempfile.gettempdir()) / "genmetrics-gpus")
    folder.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait_s
    while True:
        held = []
        for i in range(total):
            fh = open(folder / f"gpu{i}.lock", "a+")  # noqa: SIM115 (kept open: the claim)
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.close()
                continue
            held.append((i, fh))
            if len(held) == n:
                break
        if len(held) == n:
            _HELD.extend(fh for _, fh in held)
            gpus = [i for i, _ in held]
            environ["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, gpus))
            _log.info("claimed GPU(s) %s (locks in %s)", environ["CUDA_VISIBLE_DEVICES"], folder)
            return gpus
        for _, fh in held:  # not enough free: give back what was taken, try again
            fh.close()
        if time.monotonic() > deadline:
            raise GenmetricsError(f"no {n} free GPU(s) of {total} within {wait_s:g} s ({folder})")
        time.sleep(2)


def release_gpus() -> None:
    """Give back every GPU this process claimed (tests; a job's claim ends with it)."""
    while _HELD:
        _HELD.pop().close()


def available_cpus() -> int:
    """CPUs this process should use: its affinity (a SLURM job's or taskset's share), capped by
    ``OMP_NUM_THREADS`` when that is a positive integer. Snakemake sets ``OMP_NUM_THREADS``
    to a job's ``threads`` for every script job, so a job on a workstation keeps to the
    threads it was scheduled with instead of sharing every core with the jobs beside it."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        n = os.cpu_count() or 1
    env = os.environ.get("OMP_NUM_THREADS", "").strip()
    if env.isdigit() and int(env) > 0:
        n = min(n, int(env))
    return max(1, n)


def _libgomp():
    """GNU OpenMP, where this process has already loaded it (torch's wheel bundles it, numba's
    ``omp`` threading layer loads it); None otherwise (and off Linux)."""
    import ctypes

    try:
        return ctypes.CDLL("libgomp.so.1", mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except (OSError, AttributeError):
        return None


@contextlib.contextmanager
def openmp_threads_kept() -> Iterator[None]:
    """Put OpenMP's thread count (``omp_get_max_threads``) back as it was after the block.
    numba's ``omp`` threading layer calls ``omp_set_num_threads`` when it launches a parallel
    kernel and leaves it there; in a process that also holds torch (one libgomp, one
    setting) that silently changes ``torch.get_num_threads()``, e.g. a job's one thread to
    every core. Where OpenMP was not loaded before the block, the value put back is
    :func:`available_cpus` (OpenMP's own default, ``OMP_NUM_THREADS`` else the CPUs, within
    the process's affinity)."""
    lib = _libgomp()
    before = lib.omp_get_max_threads() if lib is not None else None
    try:
        yield
    finally:
        lib = lib or _libgomp()
        if lib is not None:
            lib.omp_set_num_threads(available_cpus() if before is None else before)


ARRAY_DEVICE_ENV = "GENMETRICS_ARRAY_DEVICE"


@functools.cache
def array_device() -> str:
    """Where a metric's array work runs (exact kNN distances, MAUVE's k-means): ``"cuda"``
    when torch is installed and sees a GPU, else ``"cpu"``. ``GENMETRICS_ARRAY_DEVICE=cpu``
    (or ``cuda``) forces the choice; ``cuda`` without a usable GPU is an error. torch is
    imported only where ``nvidia-smi`` lists a GPU (or ``cuda`` is asked), so a CPU-only
    machine pays nothing for the check. A record states the device it used; the values do
    not depend on it (the GPU paths recheck near-ties on the CPU in float64)."""
    asked = os.environ.get(ARRAY_DEVICE_ENV, "").strip().lower()
    if asked not in ("", "auto", "cpu", "cuda"):
        raise GenmetricsError(f"{ARRAY_DEVICE_ENV}={asked!r}: expected cpu, cuda or auto")
    if asked == "cpu" or (asked in ("", "auto") and count_gpus() == 0):
        return "cpu"
    try:
        import torch

        usable = bool(torch.cuda.is_available())
    except ImportError:
        usable = False
    if usable:
        return "cuda"
    if asked == "cuda":
        raise GenmetricsError(f"{ARRAY_DEVICE_ENV}=cuda, but torch sees no usable GPU")
    return "cpu"
