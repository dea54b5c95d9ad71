"""Atomic writes (file modes follow the umask, failures leave nothing behind, stale temps) and
bounded reads (NPZ headers checked before any data, regular files only)."""

from __future__ import annotations

import io
import os
import re
import stat
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from genmetrics import GenmetricsError
from genmetrics.io import (
    atomic_path,
    current_umask,
    is_temp_name,
    read_json,
    read_jsonl,
    read_texts,
    regular_file,
    sweep_stale_tmp,
    write_json,
    write_jsonl,
    write_text,
)
from genmetrics.npz import (
    EMBEDDINGS_NPZ,
    NpzReader,
    load_embeddings,
    load_npz,
    load_ragged,
    ragged_to_arrays,
    read_embeddings,
    read_ragged,
    save_npz,
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


# ------------------------------------------------------------------ bounded reads


def test_npz_headers_are_read_before_any_data(tmp_path: Path) -> None:
    emb = np.asfortranarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    save_npz(tmp_path / "e.npz", emb=emb, ids=["a", "b", "c"])
    with NpzReader(tmp_path / "e.npz", EMBEDDINGS_NPZ, required=("emb",)) as z:
        h = z.headers["emb"]
        assert (h.shape, h.dtype, h.fortran_order, h.nbytes) == ((3, 4), np.float32, True, 48)
        assert z.headers["ids"].shape == (3,) and z.headers["ids"].dtype.kind == "U"
        assert np.array_equal(z.read("emb"), emb)
    links, got = read_embeddings(tmp_path / "e.npz")
    assert links["ids"].tolist() == ["a", "b", "c"] and "prompt_ids" not in links
    save_npz(tmp_path / "n.npz", emb=emb)  # no ids: row numbers
    assert load_embeddings(tmp_path / "n.npz")[0].tolist() == ["0", "1", "2"]


def test_npz_refuses_pickles_forgeries_and_sizes_from_headers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    np.savez(tmp_path / "o.npz", emb=np.array([[1, "a"]], dtype=object))  # pickled
    with pytest.raises(GenmetricsError, match=r"o.npz: array 'emb': dtype object"):
        load_npz(tmp_path / "o.npz")
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f8", "fortran_order": False, "shape": (1 << 30, 64)}
    )
    with zipfile.ZipFile(tmp_path / "f.npz", "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("emb.npy", header.getvalue() + bytes(64))
    with pytest.raises(GenmetricsError, match=r"f.npz: array 'emb': header declares shape"):
        load_npz(tmp_path / "f.npz")
    save_npz(tmp_path / "ok.npz", emb=np.ones((10, 10)))  # 800 bytes of data
    monkeypatch.setenv("GENMETRICS_MAX_NPZ_BYTES", "799")
    with pytest.raises(GenmetricsError, match=r"above the limit of 799 bytes"):
        load_npz(tmp_path / "ok.npz")
    monkeypatch.setenv("GENMETRICS_MAX_NPZ_BYTES", "800")
    assert load_npz(tmp_path / "ok.npz")["emb"].shape == (10, 10)


def test_ragged_offsets_are_checked_before_values(tmp_path: Path) -> None:
    off, val = ragged_to_arrays([np.array([1.0, 2.0]), np.zeros(0), np.array([3.0])])
    save_npz(
        tmp_path / "s.npz", ids=["a", "b", "c"], prompt_ids=["p", "p", "q"], offsets=off, values=val
    )
    links, seqs = read_ragged(tmp_path / "s.npz")
    assert [s.tolist() for s in seqs] == [[1.0, 2.0], [], [3.0]]
    assert links["prompt_ids"].tolist() == ["p", "p", "q"]
    save_npz(tmp_path / "e.npz", offsets=np.zeros(1, np.int64), values=np.zeros(0))
    assert load_ragged(tmp_path / "e.npz")[1] == []
    for name, offsets, match in [
        ("f", off.astype(float), "'offsets': dtype float64"),
        ("d", np.array([0, 3, 2, 3]), "non-decreasing"),
        ("l", np.array([0, 1, 2, 4]), r"end at len\(values\) = 3"),
    ]:
        save_npz(tmp_path / f"{name}.npz", offsets=offsets, values=val)
        with pytest.raises(GenmetricsError, match=match):
            read_ragged(tmp_path / f"{name}.npz")


def test_reads_refuse_what_is_not_a_regular_file(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "p.jsonl")  # opening it would block forever
    with pytest.raises(GenmetricsError, match="p.jsonl: is not a regular file"):
        read_jsonl(tmp_path / "p.jsonl")
    (tmp_path / "d.npz").mkdir()
    with pytest.raises(GenmetricsError, match="d.npz: is a directory"):
        load_npz(tmp_path / "d.npz")
    with pytest.raises(GenmetricsError, match="m.jsonl: file not found"):
        regular_file(tmp_path / "m.jsonl")


@pytest.mark.parametrize("const", ["NaN", "Infinity", "-Infinity"])
@pytest.mark.parametrize(
    "row",
    [
        '{"id": %s, "text": "a b"}',
        '{"id": "g1", "prompt_id": %s, "text": "a b"}',
        '{"id": "g1", "text": "a b", "score": %s}',
        '{"id": "g1", "text": "a b", "meta": {"a": [1, %s]}}',
    ],
)
def test_jsonl_refuses_nan_and_infinity_anywhere(tmp_path: Path, const: str, row: str) -> None:
    """Python's json writes and reads ``NaN``; a NaN ``prompt_id`` became the string "nan" and
    paired with a reference of that id (BLEU 53.7)."""
    (tmp_path / "x.jsonl").write_text('{"id": "g0", "text": "ok"}\n\n' + row % const + "\n")
    with pytest.raises(GenmetricsError, match=rf"x.jsonl: line 3: {const} is not valid JSON"):
        read_jsonl(tmp_path / "x.jsonl")


@pytest.mark.parametrize(
    ("key", "raw", "shown"),
    [
        ("id", "1.0", "float 1.0"),
        ("id", "true", "bool True"),
        ("id", "null", "NoneType None"),
        ("prompt_id", '["a"]', "list ['a']"),
        ("source_id", '{"a": 1}', "dict {'a': 1}"),
    ],
)
def test_ids_must_be_strings_or_integers(tmp_path: Path, key: str, raw: str, shown: str) -> None:
    ok = [{"id": "a", "text": "x"}, {"id": 2, "prompt_id": -3, "source_id": "s", "text": "y"}]
    write_jsonl(tmp_path / "ok.jsonl", ok)
    assert read_texts(tmp_path / "ok.jsonl") == ok
    (tmp_path / "b.jsonl").write_text(
        f'{{"id": "a", "text": "x"}}\n{{"{key}": {raw}, "text": "y"}}\n'
    )
    want = f"b.jsonl: line 2: '{key}' must be a string or an integer, got {shown}"
    with pytest.raises(GenmetricsError, match=re.escape(want)):
        read_texts(tmp_path / "b.jsonl")


def test_dataset_jsonl_refuses_nan_and_float_ids(tmp_path: Path) -> None:
    from genmetrics.data.datasets import _read_jsonl

    path = tmp_path / "d.jsonl"
    path.write_text('{"doc": 1, "body": "a"}\n{"doc": NaN, "body": "b"}\n')
    with pytest.raises(GenmetricsError, match="d.jsonl: line 2: NaN is not valid JSON"):
        _read_jsonl(path, "body", "doc", [])
    path.write_text('{"doc": 1, "body": "a"}\n{"doc": 2.5, "body": "b"}\n')
    with pytest.raises(GenmetricsError, match="line 2: 'doc' must be a string or an integer"):
        _read_jsonl(path, "body", "doc", [])
    path.write_text('{"doc": 1, "body": "a"}\n{"body": "b"}\n')
    assert [r["id"] for r in _read_jsonl(path, "body", "doc", [])] == ["1", "2"]


def test_write_jsonl_never_writes_what_read_jsonl_refuses(tmp_path):
    """NaN becomes null and reads back; an infinity is refused by the writer, before the file
    exists, rather than written as the Infinity the reader refuses."""
    from genmetrics.io import read_jsonl, write_jsonl

    p = tmp_path / "rows.jsonl"
    write_jsonl(p, [{"id": "a", "x": float("nan")}])
    assert read_jsonl(p) == [{"id": "a", "x": None}]
    with pytest.raises(GenmetricsError, match=r"rows2\.jsonl: row 2: an infinite number"):
        write_jsonl(tmp_path / "rows2.jsonl", [{"id": "a"}, {"id": "b", "x": float("inf")}])
    assert not (tmp_path / "rows2.jsonl").exists()
