"""Atomic writes: file modes follow the umask, failures leave nothing behind, stale temps."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from genmetrics.io import (
    atomic_path,
    current_umask,
    is_temp_name,
    load_npz,
    read_json,
    read_jsonl,
    save_npz,
    sweep_stale_tmp,
    write_json,
    write_jsonl,
    write_text,
)


@pytest.fixture
def umask() -> Iterator[None]:
    """Restore the process umask after the test, whatever it set."""
    old = os.umask(0o022)
    os.umask(old)
    try:
        yield
    finally:
        os.umask(old)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if is_temp_name(p.name))


def _write_all(folder: Path) -> list[Path]:
    write_json(folder / "a.json", {"x": 1.5})
    write_jsonl(folder / "b.jsonl", [{"id": "0", "text": "hi"}])
    save_npz(folder / "c.npz", emb=np.zeros((2, 3), np.float32))
    with atomic_path(folder / "d.csv") as tmp:  # the writer replaces the file itself
        pd.DataFrame({"a": [1]}).to_csv(tmp, index=False)
    return [folder / n for n in ("a.json", "b.jsonl", "c.npz", "d.csv")]


@pytest.mark.parametrize("mask,expected", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_written_files_follow_umask(tmp_path: Path, umask: None, mask: int, expected: int) -> None:
    os.umask(mask)
    assert current_umask() == mask
    for path in _write_all(tmp_path / "out"):
        assert _mode(path) == expected, path.name
    assert read_json(tmp_path / "out" / "a.json") == {"x": 1.5}
    assert read_jsonl(tmp_path / "out" / "b.jsonl") == [{"id": "0", "text": "hi"}]
    assert load_npz(tmp_path / "out" / "c.npz")["emb"].shape == (2, 3)
    assert _leftovers(tmp_path / "out") == []


def test_created_folders_follow_umask(tmp_path: Path, umask: None) -> None:
    os.umask(0o002)
    write_text(tmp_path / "x" / "y" / "z.txt", "z")
    assert _mode(tmp_path / "x") == 0o775
    assert _mode(tmp_path / "x" / "y") == 0o775


@pytest.mark.parametrize("exc", [RuntimeError, KeyboardInterrupt])
def test_failing_block_leaves_nothing(tmp_path: Path, exc: type[BaseException]) -> None:
    target = tmp_path / "scores.json"
    with pytest.raises(exc), atomic_path(target) as tmp:
        tmp.write_text("partial")
        raise exc("boom")
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_failing_block_keeps_old_content(tmp_path: Path) -> None:
    target = tmp_path / "scores.json"
    write_json(target, {"old": True})
    with pytest.raises(ValueError), atomic_path(target) as tmp:
        tmp.write_text('{"new": tr')
        raise ValueError("boom")
    assert read_json(target) == {"old": True}
    assert [p.name for p in tmp_path.iterdir()] == ["scores.json"]

    emb = tmp_path / "emb.npz"
    save_npz(emb, emb=np.ones((1, 2)))
    with pytest.raises(ValueError), atomic_path(emb, suffix=".tmp.npz") as tmp:
        np.savez(tmp, emb=np.zeros((3, 2)))  # the writer has replaced the file
        raise ValueError("boom")
    assert load_npz(emb)["emb"].shape == (1, 2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["emb.npz", "scores.json"]


def test_failing_rows_generator_keeps_old_file(tmp_path: Path) -> None:
    target = tmp_path / "gen.jsonl"
    write_jsonl(target, [{"id": "0"}])

    def rows() -> Iterator[dict]:
        yield {"id": "1"}
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_jsonl(target, rows())
    assert read_jsonl(target) == [{"id": "0"}]
    assert _leftovers(tmp_path) == []


def test_temp_names_are_recognised(tmp_path: Path) -> None:
    seen: list[str] = []
    for name, suffix in [("s.json", None), ("e.npz", ".tmp.npz"), ("noext", None)]:
        with atomic_path(tmp_path / name, suffix=suffix) as tmp:
            seen.append(tmp.name)
            tmp.write_text("x")
    assert all(is_temp_name(n) for n in seen), seen
    for other in ["s.json", ".hidden", ".cache.tmp12345", "a.tmp", ".nltk_data.tmp1407"]:
        assert not is_temp_name(other), other


def test_sweep_stale_tmp(tmp_path: Path) -> None:
    old = tmp_path / ".scores.json.ab12cd_9.json.tmp"
    old_npz = tmp_path / ".emb.npz.zz99yy88.tmp.npz"
    fresh = tmp_path / ".scores.json.qwertyui.json.tmp"
    unrelated = [
        tmp_path / "scores.json",
        tmp_path / ".hidden",
        tmp_path / ".model.tmp4242",  # sources.fetch_* staging, not ours
        tmp_path / "notes.tmp",
    ]
    for p in [old, old_npz, fresh, *unrelated]:
        p.write_text("x")
    stale = time.time() - 7200
    for p in [old, old_npz, *unrelated]:
        os.utime(p, (stale, stale))
    (tmp_path / ".dir.abcdefgh.tmp").mkdir()  # folders are never removed
    os.utime(tmp_path / ".dir.abcdefgh.tmp", (stale, stale))

    assert sweep_stale_tmp(tmp_path, older_than_s=3600) == 2
    assert not old.exists() and not old_npz.exists()
    assert fresh.exists()
    assert all(p.exists() for p in unrelated)
    assert (tmp_path / ".dir.abcdefgh.tmp").is_dir()
    assert sweep_stale_tmp(tmp_path, older_than_s=3600) == 0
    assert sweep_stale_tmp(tmp_path / "missing") == 0


def test_sweep_stale_tmp_recursive(tmp_path: Path) -> None:
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    old = sub / ".x.json.abcdefgh.json.tmp"
    old.write_text("x")
    stale = time.time() - 100
    os.utime(old, (stale, stale))
    assert sweep_stale_tmp(tmp_path, older_than_s=10) == 0
    assert sweep_stale_tmp(tmp_path, older_than_s=10, recursive=True) == 1
    assert not old.exists()
