"""Faults, stale results and shared folders, with real processes and real signals.

- a checkpoint's weights changed under the same name: the feature cache recomputes;
- an embed job SIGKILLed mid-way: the rerun computes only the chunks that were not finished
  and writes the same bytes as a run that was never stopped;
- a generate job SIGKILLed by Snakemake's side mid-way: the rerun resumes from its progress
  log (fewer batches) and writes the same bytes as a run that was never stopped;
- two users (two non-root uids sharing a group) read and extend one feature cache;
- temporary files left by killed writers are swept when a workflow starts.
"""

from __future__ import annotations

import logging
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
import traceback
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import REPO

from genmetrics.features.embed import embed_texts
from genmetrics.features.surprisal import surprisal_texts
from genmetrics.io import atomic_path
from genmetrics.plan import load_plan
from genmetrics.testing.tiny_lm import TINY_VOCAB, save_tiny_model

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


def _texts(n: int, words: int = 30, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(TINY_VOCAB, size=words)) for _ in range(n)]


def _cache_entries(root: Path) -> int:
    return sum(1 for _ in root.rglob("*.npy")) if root.exists() else 0


# ------------------------------------------------------------------ 1. content-addressed


def test_new_weights_under_the_same_name_are_recomputed(tmp_path):
    """The cache key is the model's content, not its name: the same folder and the same
    cache_key with other weights gives the other model's vectors and surprisal."""
    model = tmp_path / "checkpoint"
    cache = tmp_path / "features"
    texts = _texts(6)
    save_tiny_model(model, seed=0)
    emb0 = embed_texts(texts, model, cache_dir=cache, cache_key="my-model")
    sur0 = surprisal_texts(texts, model, cache_dir=cache / "s", cache_key="my-model")
    assert _cache_entries(cache) == 12
    # a rerun with the same weights reads the cache: same bytes, nothing new written
    assert np.array_equal(embed_texts(texts, model, cache_dir=cache, cache_key="my-model"), emb0)
    assert _cache_entries(cache) == 12

    save_tiny_model(model, seed=1)  # fine-tuned copy: same path, same name, other weights
    emb1 = embed_texts(texts, model, cache_dir=cache, cache_key="my-model")
    sur1 = surprisal_texts(texts, model, cache_dir=cache / "s", cache_key="my-model")
    assert _cache_entries(cache) == 24
    fresh = embed_texts(texts, model)  # no cache at all
    assert np.array_equal(emb1, fresh)
    assert not np.allclose(emb0, emb1)
    assert not all(np.allclose(a, b) for a, b in zip(sur0, sur1, strict=True))


# ------------------------------------------------------------------ 10. faults keep work

_EMBED_JOB = textwrap.dedent(
    """
    import logging, sys
    import numpy as np
    from genmetrics.features.embed import embed_texts
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(message)s")
    model, cache, out, n = sys.argv[1:5]
    rng = np.random.default_rng(0)
    from genmetrics.testing.tiny_lm import TINY_VOCAB
    texts = [" ".join(rng.choice(TINY_VOCAB, size=30)) for _ in range(int(n))]
    emb = embed_texts(texts, model, batch_size=8, cache_dir=cache, cache_key="tiny")
    np.save(out, emb)
    """
)


def _embed_job(model: Path, cache: Path, out: Path, n: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", _EMBED_JOB, str(model), str(cache), str(out), str(n)],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )


def _chunks_computed(stderr: str) -> tuple[int, int]:
    m = re.search(r"computing (\d+) of (\d+) chunks", stderr)
    assert m, stderr
    return int(m[1]), int(m[2])


def test_a_killed_embed_job_resumes_with_the_same_bytes(tmp_path):
    model = save_tiny_model(tmp_path / "model")
    n = 3 * 256  # three cache chunks

    # the run that is never stopped, in a cache of its own
    whole = _embed_job(model, tmp_path / "cache_whole", tmp_path / "whole.npy", n)
    _, err = whole.communicate(timeout=600)
    assert whole.returncode == 0, err
    assert _chunks_computed(err) == (3, 3)

    # the run that is killed once its first chunk is in the cache
    cache = tmp_path / "cache"
    job = _embed_job(model, cache, tmp_path / "killed.npy", n)
    deadline = time.monotonic() + 600
    while _cache_entries(cache) < 256:
        assert job.poll() is None, "the job ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.02)
    job.send_signal(signal.SIGKILL)
    job.communicate(timeout=60)
    assert job.returncode == -signal.SIGKILL
    assert not (tmp_path / "killed.npy").exists()
    kept = _cache_entries(cache)
    assert 256 <= kept < n

    rerun = _embed_job(model, cache, tmp_path / "rerun.npy", n)
    _, err = rerun.communicate(timeout=600)
    assert rerun.returncode == 0, err
    todo, total = _chunks_computed(err)
    assert total == 3 and todo == 3 - kept // 256  # only the unfinished chunks
    whole_bytes = np.load(tmp_path / "whole.npy", allow_pickle=False)
    assert np.load(tmp_path / "rerun.npy", allow_pickle=False).tobytes() == whole_bytes.tobytes()


def _generate_config(work: Path, model: Path) -> Path:
    """The offline test config cut to one model, one seed, one shard and batches of one prompt
    (32 batches), for a generate job that can be killed between batches."""
    cfg = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
    cfg["models"] = {"tiny-pure": cfg["models"]["tiny-pure"]}
    cfg["generation"].update(seeds=[0], shards=1, batch_size=1, words=40)
    cfg["checkpoints"]["tiny"]["source"]["path"] = str(model)
    cfg["datasets"]["stories"]["source"]["path"] = str(REPO / ".test" / "data" / "texts.jsonl")
    path = work / "config.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


SHARD = "results/generations/stories/tiny-pure/shards/seed0.0"


def _snakemake_generate(work: Path, config: Path) -> subprocess.Popen:
    cmd = [str(Path(sys.executable).parent / "snakemake"), "-s", str(REPO / "Snakefile")]
    cmd += ["--configfile", str(config), "--cores", "1", "--rerun-incomplete", SHARD + ".jsonl"]
    return subprocess.Popen(
        cmd,
        cwd=work,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # killed as a group: Snakemake and its job
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )


def test_a_killed_generate_job_resumes_with_the_same_bytes(tmp_path):
    import json

    model = save_tiny_model(tmp_path / "model")
    # the run that is never stopped
    (tmp_path / "whole").mkdir()
    whole = _snakemake_generate(tmp_path / "whole", _generate_config(tmp_path / "whole", model))
    out, _ = whole.communicate(timeout=600)
    assert whole.returncode == 0, out
    whole_stats = json.loads((tmp_path / "whole" / f"{SHARD}.stats.json").read_text())
    assert whole_stats["batches_generated"] == whole_stats["batches"] == 32
    assert not (tmp_path / "whole" / f"{SHARD}.progress.jsonl").exists()  # dropped when done

    # the run killed (Snakemake and its job, SIGKILL) once two batches are in its log
    work = tmp_path / "killed"
    work.mkdir()
    config = _generate_config(work, model)
    log = work / f"{SHARD}.progress.jsonl"
    job = _snakemake_generate(work, config)
    deadline = time.monotonic() + 600
    while not log.exists() or len(log.read_bytes().splitlines()) < 3:  # key line + 2 batches
        assert job.poll() is None, "the job ended before it could be killed"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.killpg(job.pid, signal.SIGKILL)
    job.communicate(timeout=60)
    assert not (work / f"{SHARD}.jsonl").exists()
    kept = len(log.read_bytes().splitlines()) - 1
    assert 2 <= kept < 32

    # the rerun (after --unlock, as after any dead controller) resumes
    subprocess.run(
        [str(Path(sys.executable).parent / "snakemake"), "-s", str(REPO / "Snakefile")]
        + ["--configfile", str(config), "--unlock"],
        cwd=work,
        check=True,
        capture_output=True,
    )
    rerun = _snakemake_generate(work, config)
    out, _ = rerun.communicate(timeout=600)
    assert rerun.returncode == 0, out
    stats = json.loads((work / f"{SHARD}.stats.json").read_text())
    assert stats["batches_resumed"] >= kept - 1  # a line torn by the kill is redone
    assert stats["batches_generated"] == 32 - stats["batches_resumed"] < 32
    got = (work / f"{SHARD}.jsonl").read_bytes()
    assert got == (tmp_path / "whole" / f"{SHARD}.jsonl").read_bytes()
    assert not log.exists()


# ------------------------------------------------------------------ 3. shared folders


def _as_user(uid: int, gid: int, log: Path, work) -> None:
    """Run ``work()`` in a forked child as ``uid`` (group ``gid``, umask 002) and wait for it.

    Forked, not exec'd: the interpreter may live where other users cannot run it (a root-only
    pyenv); every module the work needs is imported by the parent first."""
    pid = os.fork()
    if pid == 0:  # the child: become the other user, do the work, never return
        code = 1
        try:
            os.setgroups([gid])
            os.setgid(gid)
            os.setuid(uid)
            os.umask(0o002)
            handler = logging.FileHandler(log)
            logging.getLogger("genmetrics").addHandler(handler)
            logging.getLogger("genmetrics").setLevel(logging.INFO)
            work()
            handler.flush()
            code = 0
        except BaseException:  # noqa: BLE001 - reported through the log, then exit 1
            with open(log, "a") as f:
                traceback.print_exc(file=f)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, log.read_text()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to run processes as other uids")
def test_two_users_share_one_feature_cache(tmp_path_factory):
    """On a group-writable, setgid shared folder with umask 002 (the README's cluster advice),
    user A's entries are readable by user B, who adds its own, which A then reads."""
    import torch

    gid = 4242
    shared = Path(tmp_path_factory.mktemp("shared", numbered=True))
    for p in [shared, *shared.parents]:  # pytest's temp base is private to root: let others in
        if p == Path("/"):
            break
        os.chmod(p, os.stat(p).st_mode | 0o011)
    os.chown(shared, 0, gid)
    os.chmod(shared, 0o2775)
    model = save_tiny_model(shared / "model")
    for p in model.iterdir():
        os.chmod(p, 0o644)
    cache = shared / "features"
    texts = _texts(40, words=12)
    embed_texts(texts[:1], model)  # import everything the children use
    torch.set_num_threads(1)
    out: dict[str, Path] = {}

    def user(uid: int, name: str, first: int, n: int) -> str:
        log = shared / f"{name}.log"
        out[name] = shared / f"{name}.npy"

        def work() -> None:
            emb = embed_texts(texts[first : first + n], model, cache_dir=cache, cache_key="t")
            np.save(out[name], emb)

        _as_user(uid, gid, log, work)
        return log.read_text()

    assert "computing 1 of 1 chunks (20 texts)" in user(60001, "a", 0, 20)  # A: texts 0-19
    entries = list(cache.rglob("*.npy"))
    assert len(entries) == 20
    assert all(e.stat().st_uid == 60001 for e in entries)
    assert all(e.stat().st_mode & 0o060 == 0o060 and e.stat().st_gid == gid for e in entries)
    # B: texts 10-39; its one chunk is not all cached, so B computes it and writes 20 new
    assert "computing 1 of 1 chunks (30 texts)" in user(60002, "b", 10, 30)
    assert len(list(cache.rglob("*.npy"))) == 40
    assert "computing" not in user(60001, "a2", 10, 30)  # A reads B's entries
    assert np.array_equal(np.load(out["a2"]), np.load(out["b"]))


def test_atomic_writes_follow_the_umask(tmp_path):
    old = os.umask(0o002)
    try:
        with atomic_path(tmp_path / "x.json") as tmp:
            tmp.write_text("{}")
    finally:
        os.umask(old)
    assert (tmp_path / "x.json").stat().st_mode & 0o777 == 0o664
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "scores.json"
    target.write_text("old")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("half")
        raise RuntimeError("killed")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["scores.json"]


def test_a_killed_writer_s_temporary_file_is_swept_at_start(tmp_path, monkeypatch):
    """A SIGKILLed writer leaves its temporary file; the workflow's start sweeps files of that
    shape older than an hour from results/ and the caches, and nothing else."""
    monkeypatch.chdir(tmp_path)
    writer = textwrap.dedent(
        """
        import os, signal, sys
        from genmetrics.io import atomic_path
        with atomic_path(sys.argv[1]) as tmp:
            tmp.write_text("partial")
            os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    out = tmp_path / "results" / "scores" / "x.json"
    proc = subprocess.run([sys.executable, "-c", writer, str(out)])
    assert proc.returncode == -signal.SIGKILL
    (left,) = out.parent.iterdir()
    assert left.name.startswith(".x.json.") and not out.exists()
    keep = out.parent / "kept.json"
    keep.write_text("{}")
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    cfg.update(cache=str(tmp_path / "c"), model_cache=str(tmp_path / "m"))
    cfg["feature_cache"] = str(tmp_path / "f")
    plan = load_plan(cfg, SCHEMA)
    assert plan.sweep_temp_files() == 0  # younger than an hour: a writer may still own it
    old = time.time() - 7200
    os.utime(left, (old, old))
    os.utime(keep, (old, old))
    assert plan.sweep_temp_files() == 1
    assert [p.name for p in out.parent.iterdir()] == ["kept.json"]
