"""Property-based fuzzing of every file reader and the config loader (issue 22).

Hypothesis generates malformed, huge, oddly encoded and adversarial inputs (invalid UTF-8,
BOMs, NUL bytes, CRLF, deep nesting, huge integers, NaN constants, ids of every JSON type,
forged or truncated NPZ files, folders named like files). Each reader may end in one of two
ways only: a correct result (the rows read are the rows written) or a :class:`GenmetricsError`
whose message is one line and names the file (and the line or key where that means
something). Any other exception fails the property, and no reader may write a file (the
config loader only under the configured caches).

Budgets: the ``short`` Hypothesis profile (``tests/conftest.py``) runs in ``make test``;
``make test-slow`` selects ``HYPOTHESIS_PROFILE=long``. Every test here is marked ``fuzz``.

What the first runs found is fixed and kept here as properties (huge integers, ``read_json``
failures, messages that named a role instead of the files).
"""

from __future__ import annotations

import contextlib
import copy
import csv
import io
import json
import os
import re
import tempfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from conftest import REPO, placeholder_checkpoint
from hypothesis import example, given
from hypothesis import strategies as st

from genmetrics import GenmetricsError

pytestmark = pytest.mark.fuzz

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


# ------------------------------------------------------------------ helpers


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@contextlib.contextmanager
def scratch(base: Path) -> Iterator[Path]:
    """A fresh folder per example (function-scoped fixtures do not reset between examples)."""
    with tempfile.TemporaryDirectory(dir=base) as d:
        yield Path(d)


def files_under(folder: Path) -> dict[str, tuple[int, int]]:
    out = {}
    for p in folder.rglob("*"):
        with contextlib.suppress(OSError):
            st_ = p.lstat()
            out[str(p.relative_to(folder))] = (st_.st_size, st_.st_mtime_ns)
    return out


def outcome(call: Callable[[], Any], *names: object) -> tuple[bool, Any]:
    """(True, result) or (False, message) for a :class:`GenmetricsError` that is one line and
    names one of ``names``; any other exception propagates (and fails the property)."""
    try:
        return True, call()
    except GenmetricsError as e:
        msg = str(e)
        assert msg and "\n" not in msg and "\r" not in msg, f"not one line: {msg!r}"
        assert any(str(n) in msg for n in names), f"{msg!r} names none of {names}"
        return False, msg


def read_only(folder: Path, call: Callable[[], Any], *names: object) -> tuple[bool, Any]:
    """:func:`outcome`, and the folder holding the inputs is left as it was."""
    before = files_under(folder)
    result = outcome(call, *names)
    assert files_under(folder) == before, "a reader changed or wrote files"
    return result


@pytest.fixture(scope="module", autouse=True)
def _no_write_in_the_checkout():
    """No fuzzed input makes anything write into the checkout (results/ and caches aside)."""

    def status() -> set[str]:
        import subprocess

        out = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=all"],
            cwd=REPO,
            capture_output=True,
            text=True,
            check=False,
        ).stdout
        return set(out.splitlines())

    before = status()
    yield
    assert status() == before


# ------------------------------------------------------------------ JSON values and lines

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**30), max_value=10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
    max_leaves=8,
)
texts = st.text(max_size=40) | st.sampled_from(["", " ", "\u2028", "a\x00b", "\ufeffx", "é" * 50])


def row_line(row: dict[str, Any]) -> bytes:
    return json.dumps(row, ensure_ascii=False).encode("utf-8")


#: ids are strings or integers (io.check_ids): 1.0 and "1" would pair by their printed form
ids_st = st.text(max_size=10) | st.integers(min_value=-(10**30), max_value=10**30)
rows_st = st.fixed_dictionaries(
    {"id": ids_st, "text": texts}, optional={"prompt_id": ids_st, "x": json_values}
)
#: rows whose id is of another JSON type: every reader refuses them, naming the line
bad_id_rows = st.fixed_dictionaries(
    {
        "id": st.none()
        | st.booleans()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.lists(json_scalars, max_size=2)
        | st.dictionaries(st.text(max_size=3), json_scalars, max_size=2),
        "text": texts,
    }
)
#: lines no reader may accept (each must be an error naming its line)
bad_lines = st.one_of(
    st.binary(min_size=1, max_size=30).filter(lambda b: b.strip() and b"\n" not in b),
    st.sampled_from(
        [
            b"\xff\xfe{}",
            b'{"id": 1, "text": "a\xc3"}',  # truncated UTF-8 sequence
            b'{"id": 1, "text": "a\x00"}',  # a raw NUL inside a JSON string
            b'{"id": 1, "text": "a"',  # truncated object
            b'{"id": 1, "text": "a"} {"id": 2}',
            b"[1, 2, 3]",
            b'"just a string"',
            b"42",
            b"null",
            b"[" * 5000 + b"]" * 5000,  # nesting deeper than the recursion limit
            b'{"a": ' * 3000 + b"1" + b"}" * 3000,
            b'{"id": 1, "text": "a", }',
            b'{"id": 1, "text": "a", "x": NaN}',  # non-standard constants, anywhere
            b'{"id": 1, "text": "a", "x": -Infinity}',
            b'{"id": "n", "text": "a", "score": Infinity}',
        ]
    ),
)
#: lines a reader may accept or refuse (refusal naming the line): none left (the NaN
#: constants, once doubtful, are refused: see bad_lines)
doubtful_lines = st.nothing()
#: an integer literal longer than Python's int-from-string limit (4300 digits)
huge_int_line = st.integers(min_value=4301, max_value=6000).map(
    lambda n: b'{"id": ' + b"7" * n + b', "text": "a"}'
)

line_pieces = st.lists(
    st.one_of(
        rows_st.map(lambda r: ("row", r)),
        rows_st.map(lambda r: ("row", r)),
        st.sampled_from([b"", b"   ", b"\t"]).map(lambda b: ("blank", b)),
        bad_lines.map(lambda b: ("bad", b)),
        bad_id_rows.map(lambda r: ("bad", row_line(r))),
        doubtful_lines.map(lambda b: ("doubt", b)),
    ),
    max_size=8,
)


def jsonl_bytes(pieces, eol: bytes, bom: bool) -> bytes:
    out = []
    for kind, v in pieces:
        out.append(row_line(v) if kind == "row" else v)
    data = eol.join(out) + (eol if out else b"")
    return (b"\xef\xbb\xbf" if bom else b"") + data


def first_problem(pieces, bom: bool) -> tuple[int | None, set[int]]:
    """The line of the first line that must be refused, and the lines that may be."""
    doubtful = {i for i, (k, _) in enumerate(pieces, 1) if k == "doubt"}
    if bom:
        doubtful.add(1)
    bad = [i for i, (k, _) in enumerate(pieces, 1) if k == "bad"]
    return (bad[0] if bad else None), doubtful


def check_rows(ok: bool, result: Any, pieces, bom: bool) -> None:
    """The shared property of a JSONL reader: the rows written, or an error naming the first
    line that had to be refused (or one that may be)."""
    bad, doubtful = first_problem(pieces, bom)
    if ok:
        assert bad is None, f"line {bad} was accepted: {pieces[bad - 1]}"
        kept = [p for p in pieces if p[0] in ("row", "doubt")]
        assert len(result) == len(kept)
        for (k, v), got in zip(kept, result, strict=True):
            if k == "row":
                assert v == got
    else:
        allowed = doubtful | ({bad} if bad else set())
        assert allowed, f"valid rows refused: {result}"
        lines = {int(m) for m in re.findall(r"line (\d+)", result)}
        assert lines & allowed, (result, allowed)


# ------------------------------------------------------------------ io.read_jsonl / read_texts


@given(pieces=line_pieces, eol=st.sampled_from([b"\n", b"\r\n"]), bom=st.booleans())
def test_read_jsonl(base, pieces, eol, bom):
    from genmetrics.io import read_jsonl

    with scratch(base) as d:
        path = d / "rows.jsonl"
        path.write_bytes(jsonl_bytes(pieces, eol, bom))
        ok, result = read_only(d, lambda: read_jsonl(path), path)
        check_rows(ok, result, pieces, bom)


@given(line=huge_int_line)
def test_read_jsonl_huge_integer(base, line):
    from genmetrics.io import read_jsonl

    with scratch(base) as d:
        path = d / "rows.jsonl"
        path.write_bytes(line + b"\n")
        outcome(lambda: read_jsonl(path), f"{path}: line 1")


@given(
    pieces=line_pieces,
    eol=st.sampled_from([b"\n", b"\r\n"]),
    kind=st.sampled_from(["texts", "records"]),
)
def test_kinds_texts_and_records(base, pieces, eol, kind):
    """KINDS[texts|records].load: every row must have a string text (records: a prompt and a
    continuation too); else an error naming the file."""
    from genmetrics.metrics.kinds import KINDS

    with scratch(base) as d:
        path = d / "candidate.jsonl"
        path.write_bytes(jsonl_bytes(pieces, eol, False))
        ok, result = read_only(d, lambda: KINDS[kind].load(path, "candidate"), path)
        if ok:
            data, rows = result
            assert not [p for p in pieces if p[0] == "bad"]
            assert len(rows) == len([p for p in pieces if p[0] in ("row", "doubt")]) > 0
            if kind == "texts":
                assert data == [r["text"] for r in rows]


# ------------------------------------------------------------------ io.read_json

json_docs = st.one_of(
    json_values.map(lambda v: ("ok", json.dumps(v).encode())),
    st.sampled_from([b"", b"{", b'{"a": 1,}', b"[1 2]", b"{'a': 1}", b'"\x00"']).map(
        lambda b: ("bad", b)
    ),
)
#: inputs read_json fails on with the wrong exception (io.py, fixed by another engineer)
json_defects = st.sampled_from(
    [
        b"\xff\xfe{}",  # invalid UTF-8: UnicodeDecodeError
        b"[" * 100000,  # RecursionError
        b"7" * 5000,  # ValueError (int-from-string limit)
        None,  # a folder named like the file: IsADirectoryError
    ]
)


@given(doc=json_docs, bom=st.booleans())
def test_read_json(base, doc, bom):
    from genmetrics.io import read_json

    kind, data = doc
    with scratch(base) as d:
        path = d / "scores.json"
        path.write_bytes(data)
        ok, result = read_only(d, lambda: read_json(path), path)
        if kind == "ok":
            assert ok and result == json.loads(data)
        else:
            assert not ok


@given(data=json_defects)
def test_read_json_defects(base, data):
    from genmetrics.io import read_json

    with scratch(base) as d:
        path = d / "scores.json"
        if data is None:
            path.mkdir()
        else:
            path.write_bytes(data)
        outcome(lambda: read_json(path), path)


# ------------------------------------------------------------------ NPZ files

DTYPES = [
    "<f4",
    "<f8",
    ">f8",
    "<i8",
    "<u2",
    "|b1",
    "<U3",
    "<U0",
    "|S4",
    "|O",
    "|V8",
    "<c8",
    "<M8[s]",
]
MEMBER_NAMES = ["emb", "ids", "prompt_ids", "offsets", "values", "provenance", "x"]
dims = st.one_of(st.integers(0, 6), st.sampled_from([2**31, 10**12, 2**62]))


def npy_bytes(shape, descr: str, data: bytes, version: int) -> bytes:
    buf = io.BytesIO()
    header = {"descr": descr, "fortran_order": False, "shape": tuple(shape)}
    if version == 1:
        np.lib.format.write_array_header_1_0(buf, header)
    else:
        np.lib.format.write_array_header_2_0(buf, header)
    return buf.getvalue() + data


forged_member = st.tuples(
    st.sampled_from(MEMBER_NAMES),
    st.lists(dims, max_size=3),
    st.sampled_from(DTYPES),
    st.binary(max_size=64),
    st.sampled_from([1, 2]),
)


def valid_arrays(draw) -> dict[str, np.ndarray]:
    """A well-formed embeddings or ragged file's arrays."""
    n = draw(st.integers(0, 4))
    ids = np.array(draw(st.lists(st.text(max_size=4), min_size=n, max_size=n)), dtype=str)
    if draw(st.booleans()):
        d = draw(st.integers(1, 3))
        emb = np.array(
            draw(st.lists(st.floats(-1e6, 1e6, width=32), min_size=n * d, max_size=n * d)),
            dtype=np.float32,
        ).reshape(n, d)
        return {"emb": emb, "ids": ids}
    lengths = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    values = np.array(
        draw(st.lists(st.floats(0, 50), min_size=int(offsets[-1]), max_size=int(offsets[-1]))),
        dtype=np.float32,
    )
    return {"offsets": offsets, "values": values, "ids": ids}


@st.composite
def npz_files(draw) -> tuple[str, bytes, dict[str, np.ndarray] | None]:
    """("valid", bytes, arrays) or ("forged"/"corrupt", bytes, None)."""
    kind = draw(st.sampled_from(["valid", "forged", "corrupt", "junk"]))
    if kind == "junk":
        return kind, draw(st.binary(max_size=200)), None
    buf = io.BytesIO()
    arrays = None
    compression = draw(st.sampled_from([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED]))
    if kind in ("valid", "corrupt"):
        arrays = valid_arrays(draw)
        with zipfile.ZipFile(buf, "w", compression) as z:
            for k, v in arrays.items():
                b = io.BytesIO()
                np.save(b, v)
                z.writestr(k + ".npy", b.getvalue())
    else:
        members = draw(st.lists(forged_member, min_size=1, max_size=4))
        with zipfile.ZipFile(buf, "w", compression) as z:
            for name, shape, descr, data, version in members:
                with contextlib.suppress(ValueError):  # a descr numpy will not write
                    z.writestr(name + ".npy", npy_bytes(shape, descr, data, version))
    data = buf.getvalue()
    if kind == "corrupt":
        cut = draw(st.integers(0, len(data)))
        if draw(st.booleans()):
            data = data[:cut]
        else:
            i = min(cut, len(data) - 1)
            data = data[:i] + bytes([data[i] ^ draw(st.integers(1, 255))]) + data[i + 1 :]
    return kind, data, arrays if kind == "valid" else None


@pytest.fixture(scope="module", autouse=True)
def _small_npz_limit():
    """A forged header must be refused from its header: a low byte limit makes an accepted
    forgery fail loudly (MemoryError) instead of allocating a lot on a shared machine."""
    old = os.environ.get("GENMETRICS_MAX_NPZ_BYTES")
    os.environ["GENMETRICS_MAX_NPZ_BYTES"] = str(64 * 2**20)
    yield
    if old is None:
        os.environ.pop("GENMETRICS_MAX_NPZ_BYTES", None)
    else:
        os.environ["GENMETRICS_MAX_NPZ_BYTES"] = old


@given(npz=npz_files(), reader=st.sampled_from(["load_npz", "embeddings", "ragged", "provenance"]))
def test_npz_readers(base, npz, reader):
    from genmetrics import npz as m

    kind, data, arrays = npz
    call = {
        "load_npz": m.load_npz,
        "embeddings": m.read_embeddings,
        "ragged": m.read_ragged,
        "provenance": m.read_provenance,
    }[reader]
    with scratch(base) as d:
        path = d / "features.npz"
        path.write_bytes(data)
        ok, result = read_only(d, lambda: call(path), path)
        if kind != "valid":
            return
        is_emb = "emb" in arrays
        if reader == "load_npz":
            assert ok and set(result) == set(arrays)
            for k, v in arrays.items():
                np.testing.assert_array_equal(result[k], v)
        elif reader == "provenance":
            assert ok and result is None
        elif (reader == "embeddings") == is_emb:
            assert ok, result
            links, got = result
            assert list(links["ids"]) == list(arrays["ids"])
            if is_emb:
                np.testing.assert_array_equal(got, arrays["emb"])
            else:
                o = arrays["offsets"]
                assert [list(s) for s in got] == [
                    list(arrays["values"][a:b]) for a, b in zip(o[:-1], o[1:], strict=True)
                ]
        else:
            assert not ok


@given(npz=npz_files(), kind=st.sampled_from(["embeddings", "surprisal"]))
def test_kinds_feature_files(base, npz, kind):
    from genmetrics.metrics.kinds import KINDS

    with scratch(base) as d:
        path = d / "reference.npz"
        path.write_bytes(npz[1])
        read_only(d, lambda: KINDS[kind].load(path, "reference"), path)


@given(text=st.one_of(st.text(max_size=30), st.just("[" * 5000), st.just("7" * 5000)))
def test_npz_provenance_that_is_not_json(base, text):
    from genmetrics.npz import read_provenance, save_npz

    with scratch(base) as d:
        path = d / "f.npz"
        save_npz(path, emb=np.zeros((1, 1)), provenance=np.array(text))
        ok, rec = read_only(d, lambda: read_provenance(path), path)
        if ok:
            assert rec == json.loads(text)


# ------------------------------------------------------------------ special files


@pytest.mark.parametrize(
    "reader", ["read_jsonl", "load_npz", "texts", "embeddings", "tokens_per_word", "config"]
)
@pytest.mark.parametrize("what", ["folder", "missing", "dangling link", "link to folder", "fifo"])
def test_files_that_are_not_files(tmp_path, reader, what):
    """A folder, a FIFO, a dangling link or a link to a folder named like a file: an error
    naming it (never a hang on the FIFO, never IsADirectoryError)."""
    from genmetrics.config import check_config_file
    from genmetrics.data.prompts import load_tokens_per_word
    from genmetrics.io import read_jsonl
    from genmetrics.metrics.kinds import KINDS
    from genmetrics.npz import load_npz

    suffix = {
        "load_npz": ".npz",
        "embeddings": ".npz",
        "tokens_per_word": ".tsv",
        "config": ".yaml",
    }
    path = tmp_path / ("input" + suffix.get(reader, ".jsonl"))
    if what == "folder":
        path.mkdir()
    elif what == "dangling link":
        path.symlink_to(tmp_path / "nowhere")
    elif what == "link to folder":
        (tmp_path / "dir").mkdir()
        path.symlink_to(tmp_path / "dir")
    elif what == "fifo":
        os.mkfifo(path)
    call = {
        "read_jsonl": lambda: read_jsonl(path),
        "load_npz": lambda: load_npz(path),
        "texts": lambda: KINDS["texts"].load(path, "candidate"),
        "embeddings": lambda: KINDS["embeddings"].load(path, "candidate"),
        "tokens_per_word": lambda: load_tokens_per_word(path),
        "config": lambda: check_config_file(path),
    }[reader]
    if reader == "config" and what == "fifo":
        pytest.skip("check_config_file reads a FIFO (a process substitution) as Snakemake does")
    ok, _ = outcome(call, path)
    assert not ok


# ------------------------------------------------------------------ the config file (YAML)

yaml_keys = st.text(min_size=1, max_size=8).filter(lambda s: s.strip() == s and s)
yaml_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(allow_nan=False)
    | st.text(max_size=12),
    lambda c: st.lists(c, max_size=3) | st.dictionaries(yaml_keys, c, max_size=3),
    max_leaves=10,
)
yaml_mutations = st.sampled_from(
    [
        "dup",  # a duplicate key
        "octal",  # 010, 0x1F, 1_000, 1:30 as values
        "deep",  # nesting deeper than the recursion limit
        "unhashable",  # a list or a mapping as a key
        "bytes",  # random bytes / invalid UTF-8
        "bom",
        "tab",  # a tab indentation
        "python",  # a python/object tag
        "alias",  # an undefined alias
        "none",
    ]
)


def mutate_yaml(text: str, how: str, draw) -> tuple[str | bytes, bool]:
    """(new text, whether it must be refused)."""
    if how == "dup":
        return "k: 1\n" + text + "k: 2\n", True
    if how == "octal":
        lit = draw(st.sampled_from(["010", "0x1F", "1_000", "1:30", "-07", "0b101", "+0x_1"]))
        return text + f"zz: {lit}\n", True
    if how == "deep":
        n = draw(st.integers(1000, 5000))
        return "a: " + "[" * n + "]" * n + "\n", False
    if how == "unhashable":
        return text + draw(st.sampled_from(["? [a, b]\n: 1\n", "{[a]: 1}: 2\n", "[1]: 2\n"])), True
    if how == "bytes":
        return text.encode() + draw(st.binary(min_size=1, max_size=20)), False
    if how == "bom":
        return "\ufeff" + text, False
    if how == "tab":
        return "a:\n\tb: 1\n", True
    if how == "python":
        return "a: !!python/object/apply:os.system ['true']\n", True
    if how == "alias":
        return "a: *nowhere\n", True
    return text, False


@given(data=st.data(), doc=st.dictionaries(yaml_keys, yaml_values, max_size=5), how=yaml_mutations)
def test_config_file(base, data, doc, how):
    """A dumped mapping is accepted; a duplicate key, a surprising integer, an unhashable key or
    broken YAML is one line naming the file (and, where YAML marks one, the line)."""
    from genmetrics.config import check_config_file

    text, must_fail = mutate_yaml(yaml.safe_dump(doc, allow_unicode=True), how, data.draw)
    with scratch(base) as d:
        path = d / "config.yaml"
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        ok, msg = read_only(d, lambda: check_config_file(path), path)
        if how in ("none", "bom"):
            assert ok, msg
        if must_fail:
            assert not ok
            if how in ("dup", "octal"):
                assert re.search(rf"{re.escape(str(path))}:\d+: ", msg), msg


# ------------------------------------------------------------------ load_plan on mutated configs

ODD_NAMES = [
    "",
    " ",
    "a b",
    "a/b",
    "../x",
    "x.y",
    "é",
    "名前",
    "a\nb",
    "a{b}",
    "*",
    "-",
    "1",
    "a" * 300,
]
odd_values = st.one_of(
    json_values,
    st.sampled_from([10**30, -1, 0, 2**63, float("inf"), float("nan"), "", "\x00", {}, []]),
    st.sampled_from(ODD_NAMES),
)


def config_paths(cfg: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix] if prefix else []
    if isinstance(cfg, dict):
        for k, v in cfg.items():
            out += config_paths(v, (*prefix, k))
    elif isinstance(cfg, list):
        for i, v in enumerate(cfg):
            out += config_paths(v, (*prefix, i))
    return out


def mutate_config(cfg: dict, draw) -> tuple[dict, tuple]:
    cfg = copy.deepcopy(cfg)
    where = draw(st.sampled_from(config_paths(cfg)))
    parent = cfg
    for k in where[:-1]:
        parent = parent[k]
    last = where[-1]
    how = draw(st.sampled_from(["value", "delete", "rename", "add", "empty", "deep"]))
    if how == "value":
        parent[last] = draw(odd_values)
    elif how == "delete":
        del parent[last]
    elif how == "rename" and isinstance(parent, dict):
        new = draw(st.sampled_from(ODD_NAMES) | st.text(max_size=10))
        parent[new] = parent.pop(last)
    elif how == "add" and isinstance(parent[last], dict):
        parent[last][draw(st.sampled_from(ODD_NAMES))] = draw(odd_values)
    elif how == "empty":
        parent[last] = type(parent[last])() if isinstance(parent[last], dict | list) else None
    elif how == "deep":
        v: Any = 1
        for _ in range(draw(st.integers(50, 400))):
            v = {"a": v}
        parent[last] = v
    return cfg, where


BASE_CONFIGS = {
    name: yaml.safe_load((REPO / name).read_text()) for name in (".test/config.yaml", "config.yaml")
}


@given(data=st.data(), name=st.sampled_from(sorted(BASE_CONFIGS)))
def test_load_plan_on_mutated_configs(base, data, name):
    """load_plan: a Plan or one line naming a config key ("key.path: what"); it writes
    nothing but under its caches and results/."""
    from genmetrics.plan import load_plan

    cfg, where = mutate_config(BASE_CONFIGS[name], data.draw)
    with scratch(base) as d, contextlib.ExitStack() as stack:
        ck = placeholder_checkpoint(d / "ckpt")
        before = files_under(d)
        env = {"GENMETRICS_REPO": str(REPO), "GENMETRICS_TINY_MODEL": str(ck)}
        stack.enter_context(_env(env))
        stack.enter_context(_chdir(d))
        try:
            plan = load_plan(cfg, SCHEMA)
        except GenmetricsError as e:
            msg = str(e)
            assert msg and "\n" not in msg and "\r" not in msg, f"not one line: {msg!r}"
            assert re.match(r"^[^ ]*?[^ ]: |^config: ", msg) or ": " in msg, msg
        else:
            assert plan is not None
        written = set(files_under(d)) - set(before)
        roots = ("results", ".cache", str(cfg.get("cache", "")), str(cfg.get("model_cache", "")))
        stray = [p for p in written if not any(p.startswith(r) for r in roots if r)]
        assert not stray, (where, stray)


@contextlib.contextmanager
def _chdir(folder: Path):
    old = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(old)


@contextlib.contextmanager
def _env(values: dict[str, str]):
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# ------------------------------------------------------------------ datasets


@given(pieces=line_pieces, eol=st.sampled_from([b"\n", b"\r\n"]), bom=st.booleans())
def test_dataset_jsonl(base, pieces, eol, bom):
    """The jsonl format: rows {"id": str(id), "text"}; an id that is an object, an array, a
    boolean or null, a text that is not a string, broken lines: one line naming the line."""
    from genmetrics.data.datasets import load_dataset

    with scratch(base) as d:
        path = d / "data.jsonl"
        path.write_bytes(jsonl_bytes(pieces, eol, bom))
        spec = {"source": {"kind": "local", "path": str(path)}}
        ok, result = read_only(d, lambda: load_dataset("x", spec), path)
        if ok:
            # each accepted row has a string text and a scalar id
            for (_, v), got in zip([p for p in pieces if p[0] == "row"], result, strict=False):
                assert got["text"] == v["text"] and got["id"] == str(v["id"])
            assert not [p for p in pieces if p[0] == "bad"]
        else:
            refusable = {
                i
                for i, (k, v) in enumerate(pieces, 1)
                if k in ("bad", "doubt")
                or (
                    k == "row"
                    and (not isinstance(v["id"], str | int | float) or isinstance(v["id"], bool))
                )
                or (k == "row" and not isinstance(v["text"], str))
            }
            lines = {int(m) for m in re.findall(r"line (\d+)", result)}
            assert lines & refusable, (result, refusable)


@given(
    rows=st.lists(
        st.tuples(st.text(max_size=6), st.text(max_size=30) | st.just("x" * 200_000)), max_size=5
    ),
    bom=st.booleans(),
    eol=st.sampled_from(["\n", "\r\n"]),
)
def test_dataset_csv(base, rows, bom, eol):
    """CSV rows come back as written (quoted newlines, NULs, a BOM); a field above the csv
    module's size limit is an error naming the line."""
    from genmetrics.data.datasets import load_dataset

    with scratch(base) as d:
        path = d / "data.csv"
        buf = io.StringIO(newline="")
        # with "\n" ends a bare "\r" in a field is not quoted (so it reads as a line break)
        quoting = csv.QUOTE_MINIMAL if eol == "\r\n" else csv.QUOTE_ALL
        w = csv.writer(buf, lineterminator=eol, quoting=quoting)
        w.writerow(["id", "text"])
        starts = []  # the physical line of each record (quoted fields may hold line breaks)
        for row in rows:
            starts.append(1 + len(re.findall(r"\r\n|\r|\n", buf.getvalue())))
            w.writerow(row)
        path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + buf.getvalue().encode())
        spec = {"source": {"kind": "local", "path": str(path)}}
        ok, result = read_only(d, lambda: load_dataset("x", spec), path)
        huge = [
            s for s, (_, t) in zip(starts, rows, strict=True) if len(t) > csv.field_size_limit()
        ]
        if huge:
            assert not ok and f"line {huge[0]}:" in result, result[:300]
            return
        assert ok, result
        assert [r["_line"] for r in result] == starts
        assert ok, result
        assert [r["text"] for r in result] == [t for _, t in rows]
        assert [r["id"] for r in result] == [i or str(n) for n, (i, _) in enumerate(rows, 1)]


@given(lines=st.lists(st.binary(max_size=20).filter(lambda b: b"\n" not in b), max_size=6))
@example(lines=[b"\r", b"a\r"])  # a text's own \r before the CRLF stays (found by this test)
def test_dataset_txt(base, lines):
    from genmetrics.data.datasets import load_dataset

    with scratch(base) as d:
        path = d / "data.txt"
        path.write_bytes(b"".join(line + b"\r\n" for line in lines))
        spec = {"source": {"kind": "local", "path": str(path)}}
        ok, result = read_only(d, lambda: load_dataset("x", spec), path)
        try:
            want = [line.decode("utf-8") for line in lines]
        except UnicodeDecodeError:
            assert not ok
            return
        if want and want[0].startswith("\ufeff"):
            want[0] = want[0][1:]
        assert ok and [r["text"] for r in result] == want


@given(
    name=st.sampled_from(["texts.jsonl", "data.txt", "table.csv", "corpus.json"]),
    fmt=st.sampled_from([None, "jsonl", "txt", "csv"]),
)
def test_dataset_folder_named_like_a_file(base, name, fmt):
    """Issue 22 item 9b: a folder whose name says a file (``texts.jsonl``) is an error naming
    it, never read as a folder of text files; format: folder on a file is one too."""
    from genmetrics.data.datasets import load_dataset

    with scratch(base) as d:
        folder = d / name
        folder.mkdir()
        (folder / "a.txt").write_text("a text in a file")
        spec: dict[str, Any] = {"source": {"kind": "local", "path": str(folder)}}
        if fmt:
            spec["format"] = fmt
        ok, msg = read_only(d, lambda: load_dataset("x", spec), folder)
        assert not ok and "folder" in msg
        ok, rows = outcome(lambda: load_dataset("x", {**spec, "format": "folder"}), folder)
        assert ok and [r["text"] for r in rows] == ["a text in a file"]
        ok, msg = outcome(
            lambda: load_dataset(
                "x",
                {"source": {"kind": "local", "path": str(folder / "a.txt")}, "format": "folder"},
            ),
            folder / "a.txt",
        )
        assert not ok


@given(labels=st.lists(json_values, min_size=1, max_size=4))
def test_dataset_label_filter_on_any_label(base, labels):
    """clean.filter on label values of every JSON type: kept, dropped, or an error naming the
    row (never TypeError: unhashable)."""
    from genmetrics.data.datasets import import_texts

    with scratch(base) as d:
        path = d / "data.jsonl"
        rows = [{"id": i, "text": f"text number {i}", "topic": v} for i, v in enumerate(labels)]
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        spec = {
            "source": {"kind": "local", "path": str(path)},
            "label_fields": ["topic"],
            "clean": {"filter": {"topic": ["a"]}},
        }
        read_only(d, lambda: import_texts("m", spec, seed=0), "models.m.texts")


# ------------------------------------------------------------------ tokens-per-word table

tpw_values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["", "many", "1,5", "0", "-1", "1e400", "nan"]),
)
tpw_names = st.text(max_size=8).filter(lambda s: "\t" not in s and "\n" not in s and "\r" not in s)


@given(
    rows=st.lists(st.tuples(tpw_names, tpw_values), max_size=5),
    header=st.sampled_from(
        ["tokenizer\ttokens_per_word", "tokenizer\ttokens_per_word\tnote", "a\tb", ""]
    ),
    bom=st.booleans(),
    eol=st.sampled_from(["\n", "\r\n"]),
    junk=st.binary(max_size=8),
)
def test_tokens_per_word_table(base, rows, header, bom, eol, junk):
    from genmetrics.data.prompts import load_tokens_per_word

    with scratch(base) as d:
        path = d / "tokens_per_word.tsv"
        text = eol.join([header] + [f"{n}\t{v}" for n, v in rows]) + eol
        data = (b"\xef\xbb\xbf" if bom else b"") + text.encode() + junk
        path.write_bytes(data)
        ok, result = read_only(d, lambda: load_tokens_per_word(path), path)
        if not ok:
            return
        assert header.startswith("tokenizer\ttokens_per_word")
        for v in result.values():
            assert 0 < v < float("inf")
        kept = [(n.strip(), float(v)) for n, v in rows if n.strip() and not n.startswith("#")]
        assert len({n for n, _ in kept}) == len(kept)
        for n, v in kept:
            assert result[n] == v


# ------------------------------------------------------------------ judgment sets

JUDGMENT_ROWS = {
    "rankgen_ab": {
        "items.jsonl": {
            "id": "i1",
            "prompt": "p",
            "text_1": "a",
            "system_1": "s1",
            "text_2": "b",
            "system_2": "s2",
        },
        "judgments.jsonl": {"item_id": "i1", "preferred": 1},
    },
    "realsumm": {
        "references.jsonl": {"id": "r1", "text": "ref"},
        "summaries.jsonl": {
            "id": "s1",
            "source_id": "r1",
            "doc_id": 1,
            "system": "bart",
            "system_type": "abstractive",
            "text": "t",
            "litepyramid_recall": 0.5,
            "scores": {"rouge": 0.1},
        },
    },
    "xsum_hallucination": {
        "summaries.jsonl": {
            "id": "x1",
            "bbcid": 1,
            "system": "Gold",
            "is_reference": True,
            "text": "gold",
        },
    },
    "contrastive_search_ab": {
        "human_ab.jsonl": {
            "id": "c1",
            "prompt": "p",
            "system_a": "a",
            "text_a": "p a",
            "system_b": "b",
            "text_b": "p b",
            "annotations": {"r1": "a"},
        }
    },
    "hanna": {
        "scores.jsonl": {
            "id": "h1",
            "system": "s",
            "prompt_id": "p1",
            "human_mean": {c: 3.0 for c in ("RE", "CH", "EM", "SU", "EG", "CX")},
            "metrics": {"bleu": 0.1},
        }
    },
}
XSUM_SYSTEM_ROW = {
    "id": "x2",
    "bbcid": 1,
    "system": "TConvS2S",
    "is_reference": False,
    "text": "t",
    "faithful": 0.5,
    "factual": 1.0,
    **{k: 0.1 for k in ("rouge1_f", "rouge2_f", "rougeL_f", "bertscore", "entailment")},
}


@given(
    kind=st.sampled_from(sorted(JUDGMENT_ROWS)),
    data=st.data(),
    value=st.one_of(json_values, st.sampled_from([float("nan"), float("inf"), [1], {"a": 1}])),
    drop=st.booleans(),
)
def test_judgment_sets(base, kind, data, value, drop):
    """One field of a valid set set to a value of any JSON type (or dropped): the set reads,
    or one line naming the file."""
    from genmetrics.agreement.judgment_sets import read_judgments

    with scratch(base) as d:
        files = copy.deepcopy(JUDGMENT_ROWS[kind])
        contents = {name: [row] for name, row in files.items()}
        if kind == "xsum_hallucination":
            contents["summaries.jsonl"].append(dict(XSUM_SYSTEM_ROW))
        name = data.draw(st.sampled_from(sorted(contents)))
        row = data.draw(st.sampled_from(contents[name]))
        field = data.draw(st.sampled_from(sorted(row)))
        if drop:
            del row[field]
        else:
            row[field] = value
        for fname, rows in contents.items():
            (d / fname).write_text("".join(json.dumps(r) + "\n" for r in rows))
        read_only(d, lambda: read_judgments(kind, d), d)


# ------------------------------------------------------------------ OmniInput annotation CSV

csv_cells = st.one_of(
    st.integers(-3, 5).map(str),
    st.sampled_from(["", "0.5", "1", "0", "nan", "inf", "-0", "1e400", "3.0", "x", "9" * 5000]),
    st.text(max_size=6),
)


@given(
    header=st.lists(
        st.sampled_from(["bin", "z_low", "z_high", "score", "text", "bin "]), max_size=5
    ),
    rows=st.lists(st.lists(csv_cells, max_size=6), max_size=5),
    raw=st.binary(max_size=10),
    allow_missing=st.booleans(),
)
def test_annotation_csv(base, header, rows, raw, allow_missing):
    from genmetrics.omniinput.annotation_csv import read_annotations
    from genmetrics.omniinput.density import Bins

    bins = Bins(-2.0, 2.0, 4)
    with scratch(base) as d:
        path = d / "annotations.csv"
        buf = io.StringIO(newline="")
        w = csv.writer(buf)
        w.writerow(header)
        w.writerows(rows)
        path.write_bytes(buf.getvalue().encode() + raw)
        ok, result = read_only(
            d, lambda: read_annotations(path, bins, allow_missing=allow_missing), path
        )
        if ok:
            for s in result.scores:
                assert ((s >= 0) & (s <= 1)).all()


# ------------------------------------------------------------------ the CLI


def run_cli(*args: str) -> tuple[int, str, str]:
    from genmetrics.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def cli_property(path: Path, code: int, out: str, err: str) -> None:
    if code == 0:
        json.loads(out, parse_constant=lambda c: pytest.fail(f"non-strict JSON {c}"))
        return
    assert code == 2, (code, err)
    assert err.count("\n") == 1 and err.startswith("genmetrics: error: "), err
    assert str(path) in err, err


@given(pieces=line_pieces, eol=st.sampled_from([b"\n", b"\r\n"]))
def test_cli_score_texts(base, pieces, eol):
    """``genmetrics score`` on a fuzzed candidate file: JSON, or exit 2 and one line naming
    the file."""
    with scratch(base) as d:
        cand, ref = d / "cand.jsonl", d / "ref.jsonl"
        cand.write_bytes(jsonl_bytes(pieces, eol, False))
        ref.write_text('{"id": "1", "text": "a reference text"}\n')
        before = files_under(d)
        code, out, err = run_cli(
            "score", "distinct_n", "--candidate", str(cand), "--param", "tokenizer=whitespace"
        )
        assert files_under(d) == before
        cli_property(cand, code, out, err)


@given(npz=npz_files())
def test_cli_score_features(base, npz):
    with scratch(base) as d:
        cand, ref = d / "cand.npz", d / "ref.npz"
        cand.write_bytes(npz[1])
        np.savez(ref, emb=np.random.default_rng(0).normal(size=(6, 2)).astype(np.float32))
        code, out, err = run_cli(
            "score",
            "precision_recall",
            "--candidate",
            str(cand),
            "--reference",
            str(ref),
            "--param",
            "k=2",
        )
        cli_property(cand, code, out, err)


@given(line=huge_int_line)
def test_cli_score_huge_integer(base, line):
    with scratch(base) as d:
        cand = d / "cand.jsonl"
        cand.write_bytes(line + b"\n")
        code, out, err = run_cli(
            "score", "distinct_n", "--candidate", str(cand), "--param", "tokenizer=whitespace"
        )
        cli_property(cand, code, out, err)


def test_cli_dimension_mismatch_names_the_files(tmp_path):
    cand, ref = tmp_path / "cand.npz", tmp_path / "ref.npz"
    np.savez(cand, emb=np.zeros((6, 3), np.float32) + np.arange(6)[:, None])
    np.savez(ref, emb=np.zeros((6, 2), np.float32) + np.arange(6)[:, None])
    code, out, err = run_cli(
        "score", "precision_recall", "--candidate", str(cand), "--reference", str(ref)
    )
    cli_property(cand, code, out, err)


def test_cli_too_few_points_names_the_file(tmp_path):
    cand, ref = tmp_path / "cand.npz", tmp_path / "ref.npz"
    np.savez(cand, emb=np.zeros((1, 2), np.float32))
    np.savez(ref, emb=np.random.default_rng(0).normal(size=(6, 2)).astype(np.float32))
    code, out, err = run_cli(
        "score", "precision_recall", "--candidate", str(cand), "--reference", str(ref)
    )
    cli_property(cand, code, out, err)
