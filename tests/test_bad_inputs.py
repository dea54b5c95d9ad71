"""Bad inputs through the real CLI: a table generated from the metric registry.

Every declared parameter of every registered metric gets ill-typed, out-of-range and
non-finite values built from its own constraints; every input kind gets broken files (missing,
a directory or a FIFO named like the file, empty, binary garbage, bad JSONL lines, NPZ files
with wrong members, float offsets, short ids, forged headers, decompression bombs). Each must
end with exit status 2 and exactly one line on stderr that names the parameter or the file.
Successful runs print strict JSON (no NaN/Infinity). The table runs ``cli.main`` in-process
(the same code path as the console script); a few cases run the console script in a
subprocess: a closed pipe, a traceback-free exit 2, and a forged NPZ under an address-space
limit.
"""

from __future__ import annotations

import io
import json
import os
import resource
import subprocess
import sys
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from genmetrics import GenmetricsError
from genmetrics.cli import main, parse_param
from genmetrics.io import write_jsonl
from genmetrics.metrics.kinds import KINDS
from genmetrics.metrics.registry import all_metrics
from genmetrics.npz import ragged_to_arrays, save_npz
from genmetrics.params import BOOL, STRING, Const, Interval, Options, Param

METRICS = all_metrics()
#: the metric that stands for each input kind in the file cases (both roles when it has a
#: reference)
FILE_METRIC = {
    "texts": "rouge",
    "records": "distinct_k",
    "embeddings": "precision_recall",
    "surprisal": "perplexity",
    "pos": "pos_compression_ratio",
}


def _refuse_constant(name: str) -> None:
    raise ValueError(f"non-strict JSON constant {name}")


def strict_json(text: str) -> object:
    """``json.loads`` that refuses NaN, Infinity and -Infinity."""
    return json.loads(text, parse_constant=_refuse_constant)


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run ``genmetrics *args`` in-process: (exit status, stdout, stderr)."""
    try:
        code = main(list(args))
    except SystemExit as e:  # argparse's own exits (--help)
        code = e.code if isinstance(e.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_error(code: int, out: str, err: str, *names: str) -> None:
    assert code == 2, (code, err)
    assert out == ""
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert err.startswith("genmetrics: error: ") and "Traceback" not in err, err
    for name in names:
        assert name in err, (name, err)


# ------------------------------------------------------------------ good inputs

WORDS = "the river ran past old mills and quiet fields while children laughed near a bridge"


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path | None]]:
    """(candidate, reference) files of every kind, small and valid."""
    d = tmp_path_factory.mktemp("good")
    rng = np.random.default_rng(0)
    words = WORDS.split()
    # 60 words: longer than MATTR's window (50) and HD-D's sample (42), whose default policy
    # excludes shorter texts (every text excluded is an error, no longer a null)
    refs = [{"id": f"p{i}", "text": " ".join(rng.choice(words, 60))} for i in range(30)]
    cands = [
        {"id": f"g{i}", "prompt_id": f"p{i}", "text": " ".join(rng.choice(words, 60))}
        for i in range(30)
    ]
    write_jsonl(d / "ref.jsonl", refs)
    write_jsonl(d / "cand.jsonl", cands)
    # generations with 3 samples per prompt (ids <prompt id>~<j>): the per-prompt metrics
    samples = [
        {**c, "id": f"p{i // 3}~{i % 3}", "prompt_id": f"p{i // 3}", "prompt": "Once",
         "continuation": c["text"]}
        for i, c in enumerate(cands)
    ]  # fmt: skip
    write_jsonl(d / "records.jsonl", samples)
    save_npz(d / "ref.npz", ids=[r["id"] for r in refs], emb=rng.normal(size=(30, 8)))
    save_npz(
        d / "cand.npz",
        ids=[c["id"] for c in cands],
        prompt_ids=[c["prompt_id"] for c in cands],
        emb=rng.normal(size=(30, 8)) + 0.3,
    )
    off, val = ragged_to_arrays([rng.gamma(2.0, 1.5, size=12) for _ in range(30)])
    save_npz(
        d / "surprisal.npz",
        ids=[c["id"] for c in cands],
        prompt_ids=[c["prompt_id"] for c in cands],
        offsets=off,
        values=val,
    )
    off, val = ragged_to_arrays([rng.gamma(2.0, 1.5, size=14) for _ in range(30)])
    save_npz(d / "ref_surprisal.npz", ids=[r["id"] for r in refs], offsets=off, values=val)
    tags = ["DT", "NN", "VBD", "IN", "JJ"]
    write_jsonl(
        d / "pos.jsonl", [{"id": f"g{i}", "tags": list(rng.choice(tags, 12))} for i in range(30)]
    )
    from genmetrics.omniinput.curves import Density, write_density
    from genmetrics.omniinput.density import Bins

    counts = rng.integers(1, 1000, size=6).astype(float)
    write_density(
        d / "density.npz",
        Density(Bins(0.0, 6.0, 6), np.log(counts), rng.uniform(0, 1, 6), np.full(6, 5), 9.0),
    )
    return {
        "density": (d / "density.npz", None),
        "texts": (d / "cand.jsonl", d / "ref.jsonl"),
        "records": (d / "records.jsonl", None),
        "embeddings": (d / "cand.npz", d / "ref.npz"),
        "surprisal": (d / "surprisal.npz", d / "ref_surprisal.npz"),
        "pos": (d / "pos.jsonl", None),
    }


def score_args(name: str, good: dict[str, tuple[Path, Path | None]]) -> list[str]:
    m = METRICS[name]
    cand, ref = good[m.input]
    args = ["score", name, "--candidate", str(cand)]
    if m.reference != "none" and ref is not None:
        args += ["--reference", str(ref)]
    return args


# ------------------------------------------------------------------ parameters

#: refused by every parameter, whatever its constraints (YAML lists, maps, non-finite floats)
ALWAYS_BAD = {"list": "[1, 2]", "map": "{a: 1}", ".inf": ".inf", "-.inf": "-.inf", ".nan": ".nan"}


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def bad_values(param: Param) -> dict[str, str]:
    """CLI texts a parameter must refuse, built from its constraints: ill-typed, out of range,
    non-finite, non-integral for integers. Texts some constraint of the union accepts (``x``
    for a string parameter) are left out, read exactly as the CLI reads them."""
    cands = {"x": "x", **ALWAYS_BAD, "nan": "nan", "inf": "inf", "-inf": "-inf", "empty": ""}
    for i, c in enumerate(param.constraints):
        if isinstance(c, Interval):
            cands |= {"true": "true", "false": "false", "1e400": "1.0e400"}
            if c.type is int:
                cands |= {"2.7": "2.7", "2**63": str(2**63), "10**400": "1" + "0" * 400}
            step = 1 if c.type is int else 0.5
            if c.left is not None:
                inside = c.closed in ("both", "left")
                cands[f"below{i}"] = _fmt(c.left - step if inside else c.left)
            if c.right is not None:
                inside = c.closed in ("both", "right")
                cands[f"above{i}"] = _fmt(c.right + step if inside else c.right)
        elif isinstance(c, Options):
            cands |= {"other": f"{c.values[0]}_x", "upper": c.values[0].upper(), "number": "1"}
        elif c is BOOL:
            cands |= {"2": "2", "0": "0", "maybe": "maybe", "[true]": "[true]"}
        elif c is STRING:
            cands |= {"blank": " ", "number": "3"}
        else:
            assert isinstance(c, Const), f"{param.name}: no bad values known for {c!r}"
    out = {}
    for label, text in cands.items():
        _, value = parse_param(f"{param.name}={text}")
        try:
            param.check(value, param.name)
        except GenmetricsError:
            out[label] = text
    return out


PARAM_CASES = [
    pytest.param(name, pname, text, id=f"{name}-{pname}-{label}")
    for name, m in METRICS.items()
    for pname, p in m.params.items()
    for label, text in bad_values(p).items()
]


def test_every_parameter_gets_the_always_bad_values():
    for name, m in METRICS.items():
        for pname, p in m.params.items():
            bad = bad_values(p)
            assert set(ALWAYS_BAD) <= set(bad), (name, pname, sorted(bad))
            if any(isinstance(c, Interval) for c in p.constraints):
                # "inf" is refused unless the parameter names it as an option (vendi's q)
                named = any(isinstance(c, Options) and "inf" in c.values for c in p.constraints)
                want = {"true", "1e400"} | (set() if named else {"inf"})
                assert want <= set(bad), (name, pname)
            if any(isinstance(c, Interval) and c.type is int for c in p.constraints):
                assert {"2.7", "10**400"} <= set(bad), (name, pname)
    assert len(PARAM_CASES) > 400


@pytest.mark.parametrize("name,pname,text", PARAM_CASES)
def test_bad_parameter_exits_2_naming_it(capsys, good, name, pname, text):
    code, out, err = cli(capsys, *score_args(name, good), "--param", f"{pname}={text}")
    assert_one_line_error(code, out, err, f"{name} params.{pname}: must be")


@pytest.mark.parametrize(
    "args,expect",
    [
        ([], "required: command"),
        (["frobnicate"], "invalid choice"),
        (["score", "precision_recall"], "required: --candidate"),
        (["score", "bleu", "--candidate", "c.jsonl", "--param", "novalue"], "expected KEY=VALUE"),
        (["score", "no_such_metric", "--candidate", "c.jsonl"], "unknown metric"),
        (["score", "ttr", "--candidate", "c.jsonl", "--param", "kk=1"], "unknown parameter(s) kk"),
        (
            [
                "score",
                "ttr",
                "--candidate",
                "c",
                "--param",
                "lemmatize=1",
                "--param",
                "lemmatize=0",
            ],
            "--param lemmatize: given more than once",
        ),
        (["score", "precision_recall", "--candidate", "c.npz"], "needs --reference"),
        (
            ["score", "precision_recall", "--candidate", "c.npz", "--param", "k=" + "[" * 5000],
            "params.k: must be",
        ),
    ],
    ids=["none", "command", "candidate", "keyvalue", "metric", "param", "twice", "ref", "deep"],
)
def test_bad_arguments_exit_2_on_one_line(capsys, args, expect):
    assert_one_line_error(*cli(capsys, *args), expect)


# ------------------------------------------------------------------ files

FileMaker = Callable[[Path], None]


def _text(content: str | bytes) -> FileMaker:
    data = content.encode() if isinstance(content, str) else content
    return lambda p: p.write_bytes(data)


def _npz(**arrays: object) -> FileMaker:
    def make(p: Path) -> None:
        with open(p, "wb") as f:  # np.savez keeps object arrays (pickle) as given
            np.savez(f, **arrays)

    return make


def npy_header(shape: tuple[int, ...], descr: str = "<f4") -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": descr, "fortran_order": False, "shape": shape}
    )
    return buf.getvalue()


def _add(z: zipfile.ZipFile, arrays: dict[str, np.ndarray]) -> None:
    for k, v in arrays.items():
        buf = io.BytesIO()
        np.save(buf, v)
        z.writestr(f"{k}.npy", buf.getvalue())


def _forged(
    member: str, shape: tuple[int, ...], descr: str = "<f4", **others: np.ndarray
) -> FileMaker:
    """A deflated member whose header claims ``shape`` and which holds no data."""

    def make(p: Path) -> None:
        with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr(f"{member}.npy", npy_header(shape, descr))
            _add(z, others)

    return make


def deflate_bomb(p: Path, member: str, mib: int = 128, ndim: int = 2, **others: np.ndarray) -> None:
    """A real bomb: ``mib`` MiB of float32 zeros, deflated (about 1000x smaller)."""
    n = mib * 2**20 // 4
    shape = (n // 1024, 1024) if ndim == 2 else (n,)
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z:
        with z.open(f"{member}.npy", "w", force_zip64=True) as f:
            f.write(npy_header(shape))
            chunk = bytes(16 * 2**20)
            for _ in range(mib // 16):
                f.write(chunk)
        _add(z, others)


def _npy(p: Path) -> None:
    with open(p, "wb") as f:
        np.save(f, EMB)


def _many_members(p: Path) -> None:
    np.savez(p, **{f"a{i}": np.zeros(1) for i in range(100)})


def _truncated(p: Path) -> None:
    save_npz(p, emb=np.ones((30, 8)))
    p.write_bytes(p.read_bytes()[:300])


rng = np.random.default_rng(1)
EMB = rng.normal(size=(30, 8))
IDS = np.array([f"g{i}" for i in range(30)])
OFF, VAL = ragged_to_arrays([rng.gamma(2.0, 1.5, size=5) for _ in range(30)])

# (label, maker or None for "missing", expected fragment besides the file name)
COMMON = [
    ("missing", None, "file not found"),
    ("directory", lambda p: p.mkdir(), "is a directory"),
    ("fifo", lambda p: os.mkfifo(p), "not a regular file"),
]
JSONL_CASES = [
    ("empty", _text(""), "no "),
    ("blank_lines", _text("\n \n\n"), "no "),
    ("garbage", _text(bytes(rng.integers(0, 256, 4096, dtype=np.uint8))), "line "),
    ("bad_line", _text('{"id": "a", "text": "ok"}\n{"id": "b", "text": \n'), "line 2"),
    ("not_object", _text('{"id": "a", "text": "ok"}\n[1, 2]\n'), "line 2"),
    ("deep_nesting", _text("[" * 100_000 + "\n"), "line 1"),
    ("invalid_utf8", _text(b'{"text": "ok"}\n{"text": "\xff"}\n'), "invalid UTF-8"),
    ("nan_literal", _text('{"text": NaN}\n'), "line 1: NaN is not valid JSON"),
    ("nan_id", _text('{"id": "a", "text": "x"}\n{"id": NaN, "text": "y"}\n'), "line 2: NaN"),
    ("infinity_field", _text('{"id": "a", "text": "x", "p": -Infinity}\n'), "-Infinity is not"),
    ("float_id", _text('{"id": 1.5, "text": "x"}\n'), "line 1: 'id' must be a string or an"),
    ("bool_prompt_id", _text('{"id": "a", "prompt_id": true, "text": "x"}\n'), "'prompt_id' m"),
]
JSONL_BY_KIND = {
    "texts": [
        ("missing_text", _text('{"id": "a"}\n'), "missing field 'text'"),
        ("text_not_string", _text('{"id": "a", "text": 5}\n'), "not a string"),
        ("text_is_list", _text('{"id": "a", "text": ["a"]}\n'), "not a string"),
    ],
    "pos": [
        ("tags_string", _text('{"id": "a", "tags": "NN"}\n'), "'tags'"),
        ("tags_numbers", _text('{"id": "a", "tags": [1, 2]}\n'), "'tags'"),
        ("tags_number", _text('{"id": "a", "tags": 5}\n'), "'tags'"),
        ("no_tags_no_text", _text('{"id": "a"}\n'), "missing field 'text'"),
    ],
    "records": [
        ("no_continuation", _text('{"id": "a", "text": "t", "prompt": "p"}\n'), "continuation"),
        (
            "prompt_number",
            _text('{"id": "a", "text": "t", "prompt": 1, "continuation": "c"}\n'),
            "prompt",
        ),
    ],
}
NPZ_COMMON = [
    ("empty", _text(b""), "not a .npz file"),
    ("garbage", _text(bytes(rng.integers(0, 256, 4096, dtype=np.uint8))), "not a .npz file"),
    ("npy_not_npz", _npy, "not a .npz file"),
    ("truncated", _truncated, "not a .npz file"),
    ("many_members", _many_members, "members"),
    ("zip_of_text", _forged("x", (1,)), "missing array"),
]
NPZ_BY_KIND = {
    "embeddings": [
        ("wrong_member", _npz(embeddings=EMB), "missing array 'emb'"),
        ("object_emb", _npz(emb=np.array([[1, "a"]], dtype=object)), "'emb': dtype object"),
        ("string_emb", _npz(emb=EMB.astype(str)), "'emb': dtype <U"),
        ("complex_emb", _npz(emb=EMB + 1j), "'emb': dtype complex128"),
        ("bool_emb", _npz(emb=EMB > 0), "'emb': dtype bool"),
        ("record_emb", _npz(emb=np.zeros(3, dtype=[("a", "f8")])), "'emb': dtype"),
        ("emb_1d", _npz(emb=EMB[0]), "'emb': must be 2-D"),
        ("emb_3d", _npz(emb=EMB[None]), "'emb': must be 2-D"),
        ("emb_no_rows", _npz(emb=np.zeros((0, 8))), "empty feature matrix"),
        ("emb_no_cols", _npz(emb=np.zeros((30, 0))), "empty feature matrix"),
        ("nan_row", _npz(emb=np.where(np.arange(30)[:, None] == 7, np.nan, EMB)), "[7]"),
        ("inf_row", _npz(emb=np.where(np.arange(30)[:, None] == 3, np.inf, EMB)), "[3]"),
        ("huge_values", _npz(emb=EMB * 1e19), "too large for float32"),
        ("huge_ints", _npz(emb=(EMB * 2**61).astype(np.int64)), "too large for float32"),
        ("ids_shorter", _npz(emb=EMB, ids=IDS[:5]), "'ids' has 5 entries"),
        ("ids_longer", _npz(emb=EMB, ids=np.concatenate([IDS, IDS])), "'ids' has 60"),
        ("prompt_ids_shorter", _npz(emb=EMB, ids=IDS, prompt_ids=IDS[:1]), "'prompt_ids'"),
        ("ids_2d", _npz(emb=EMB, ids=IDS[:, None]), "'ids': must be 1-D"),
        ("ids_floats", _npz(emb=EMB, ids=np.arange(30.0)), "'ids': dtype float64"),
        ("ids_objects", _npz(emb=EMB, ids=IDS.astype(object)), "'ids': dtype object"),
        ("huge_declared_shape", _forged("emb", (1 << 21, 1024)), "truncated or forged"),
        ("huge_declared_ids", _forged("ids", (1 << 40,), "<U8", emb=EMB), "truncated or forged"),
        ("negative_shape", _forged("emb", (-5, 8)), "'emb'"),
        ("deflate_bomb", lambda p: deflate_bomb(p, "emb"), "decompression bomb"),
    ],
    "surprisal": [
        ("wrong_member", _npz(offsets=OFF, vals=VAL), "missing array 'values'"),
        ("float_offsets", _npz(offsets=OFF.astype(float), values=VAL), "'offsets': dtype float64"),
        ("offsets_2d", _npz(offsets=OFF[None], values=VAL), "'offsets': must be 1-D"),
        ("offsets_empty", _npz(offsets=OFF[:0], values=VAL), "'offsets' is empty"),
        ("offsets_start", _npz(offsets=OFF + 1, values=VAL), "must start at 0"),
        ("offsets_end", _npz(offsets=OFF[:-1], values=VAL), "end at len(values)"),
        (
            "offsets_decreasing",
            _npz(offsets=np.array([0, 100, 5, len(VAL)], dtype=np.uint64), values=VAL),
            "non-decreasing",
        ),
        ("values_2d", _npz(offsets=OFF, values=VAL[None]), "'values': must be 1-D"),
        ("values_strings", _npz(offsets=OFF, values=VAL.astype(str)), "'values': dtype"),
        ("values_nan", _npz(offsets=OFF, values=np.where(VAL > 3, np.nan, VAL)), "NaN/inf"),
        ("values_negative", _npz(offsets=OFF, values=-VAL, ids=IDS), "first id 'g0'"),
        ("ids_shorter", _npz(offsets=OFF, values=VAL, ids=IDS[:2]), "'ids' has 2 entries"),
        ("huge_declared_values", _forged("values", (1 << 33,), offsets=OFF), "forged"),
        (
            "deflate_bomb",
            lambda p: deflate_bomb(p, "values", ndim=1, offsets=np.array([0, 2**25])),
            "decompression bomb",
        ),
    ],
}


def _file_cases() -> list:
    out = []
    for kind in ("texts", "pos", "records", "embeddings", "surprisal"):
        suffix = KINDS[kind].suffix
        kind_cases = COMMON + [("wrong_suffix", _text("{}"), f"must be a {suffix} file")]
        if suffix == ".jsonl":
            kind_cases += JSONL_CASES + JSONL_BY_KIND[kind]
        else:
            kind_cases += NPZ_COMMON + NPZ_BY_KIND[kind]
        metric = FILE_METRIC.get(kind)
        roles = ["candidate"]
        if metric and METRICS[metric].reference != "none":
            roles.append("reference")
        for role in roles:
            for label, make, expect in kind_cases:
                out.append(pytest.param(kind, role, make, expect, id=f"{kind}-{role}-{label}"))
    return out


FILE_CASES = _file_cases()


@pytest.mark.parametrize("kind,role,make,expect", FILE_CASES)
def test_bad_file_exits_2_naming_it(capsys, good, tmp_path, kind, role, make, expect):
    suffix = KINDS[kind].suffix
    name = f"bad_{role}{suffix}"
    if expect.startswith("must be a"):
        name = f"bad_{role}.txt"
    path = tmp_path / name
    if make is not None:
        make(path)
    metric = FILE_METRIC.get(kind)
    if metric is None:  # a kind no metric reads yet: its loader, the same checks
        with pytest.raises(GenmetricsError) as e:
            KINDS[kind].load(path, role)
        assert name in str(e.value) and expect in str(e.value), str(e.value)
        return
    args = score_args(metric, good)
    args[args.index(f"--{role}") + 1] = str(path)
    assert_one_line_error(*cli(capsys, *args), name, expect)


def test_long_jsonl_line_is_refused_before_it_is_read(capsys, good, tmp_path, monkeypatch):
    import genmetrics.io

    monkeypatch.setattr(genmetrics.io, "MAX_JSONL_LINE_BYTES", 1000)
    (tmp_path / "long.jsonl").write_text('{"text": "' + "a " * 1000 + '"}\n')
    args = ["score", "ttr", "--candidate", str(tmp_path / "long.jsonl")]
    assert_one_line_error(*cli(capsys, *args), "long.jsonl: line 1: longer than 1000 bytes")


def test_npz_byte_limit_comes_from_the_environment(capsys, good, monkeypatch):
    args = score_args("precision_recall", good)
    monkeypatch.setenv("GENMETRICS_MAX_NPZ_BYTES", "1000")
    assert_one_line_error(*cli(capsys, *args), "cand.npz", "GENMETRICS_MAX_NPZ_BYTES")
    monkeypatch.setenv("GENMETRICS_MAX_NPZ_BYTES", "lots")
    assert_one_line_error(*cli(capsys, *args), "GENMETRICS_MAX_NPZ_BYTES: must be a positive")
    monkeypatch.setenv("GENMETRICS_MAX_NPZ_BYTES", str(10**9))
    assert cli(capsys, *args)[0] == 0


def test_decompression_bomb_is_refused_without_allocating(capsys, good, tmp_path):
    deflate_bomb(tmp_path / "bomb.npz", "emb", mib=128)
    args = score_args("precision_recall", good)
    args[args.index("--candidate") + 1] = str(tmp_path / "bomb.npz")
    tracemalloc.start()
    try:
        code, out, err = cli(capsys, *args)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert_one_line_error(code, out, err, "bomb.npz", "'emb'", "decompression bomb")
    assert peak < 16 * 2**20, peak  # numpy reports its buffers to tracemalloc


# ------------------------------------------------------------------ successful runs


@pytest.mark.parametrize("name", sorted(METRICS))
def test_every_metric_prints_strict_json(capsys, good, name):
    code, out, err = cli(capsys, *score_args(name, good))
    assert code == 0, err
    assert out.count("\n") == 1
    rec = strict_json(out)
    assert rec["metric"] == name
    assert set(rec["values"]) <= {*METRICS[name].values, "mean_words"}
    for k, v in rec["values"].items():
        assert v is None or isinstance(v, (int, float)), (k, v)
        if v is None:
            assert k in rec["non_finite"], rec


def test_overflowing_perplexity_is_null_with_a_note(capsys, tmp_path):
    save_npz(tmp_path / "s.npz", offsets=np.array([0, 2]), values=np.array([800.0, 900.0]))
    code, out, err = cli(capsys, "score", "perplexity", "--candidate", str(tmp_path / "s.npz"))
    assert code == 0, err
    rec = strict_json(out)
    assert rec["values"]["perplexity"] is None and rec["values"]["mean_surprisal"] == 850.0
    assert rec["non_finite"]["perplexity"] == "inf"


# ------------------------------------------------------------------ real subprocesses


def _console() -> list[str]:
    script = Path(sys.executable).with_name("genmetrics")
    return [str(script)] if script.exists() else [sys.executable, "-m", "genmetrics.cli"]


def test_closed_pipe_is_quiet():
    r, w = os.pipe()
    os.close(r)  # the reader is gone before anything is written
    try:
        proc = subprocess.run([*_console(), "list"], stdout=w, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(w)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    head = subprocess.run(
        f"set -o pipefail; {' '.join(_console())} list --json | head -1",
        shell=True,
        executable="/bin/bash",
        capture_output=True,
        text=True,
    )
    assert head.returncode == 0 and head.stderr == "" and head.stdout == "[\n"


def _limit_memory() -> None:
    cap = 2 * 2**30  # far above this process's needs, far below what the forged header claims
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def test_console_script_bad_file_and_forged_npz_under_a_memory_cap(good, tmp_path):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\n{"text": oops}\n')
    proc = subprocess.run(
        [*_console(), "score", "ttr", "--candidate", str(bad)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert proc.returncode == 2 and proc.stdout == "", proc.stderr
    assert proc.stderr == f"genmetrics: error: {bad}: line 2: invalid JSON (Expecting value)\n"

    _forged("emb", (1 << 22, 1024))(tmp_path / "forged.npz")  # claims 16 GiB, holds nothing
    proc = subprocess.run(
        [
            *_console(),
            "score",
            "precision_recall",
            "--candidate",
            str(tmp_path / "forged.npz"),
            "--reference",
            str(good["embeddings"][1]),
        ],
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=_limit_memory,
    )
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "forged.npz: array 'emb'" in proc.stderr and "truncated or forged" in proc.stderr
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr


@pytest.mark.parametrize(
    ("metric", "params", "names"),
    [
        ("bertscore", [], ("bertscore: model=",)),
        ("homogenization", ["--param", "measure=bertscore"], ("homogenization: model=",)),
    ],
)
def test_a_decoder_as_bertscore_encoder_is_a_clear_error(
    capsys, tmp_path, tiny_model_dir, metric, params, names
):
    """A causal LM given as BERTScore's encoder: its tokenizer has no model_max_length (1e30,
    transformers' unset value), which ended in an OverflowError inside the tokenizer."""
    texts = [{"id": str(i), "text": t} for i, t in enumerate(("a cat sat", "a dog ran", "cats"))]
    write_jsonl(tmp_path / "c.jsonl", texts)
    args = ["score", metric, "--candidate", str(tmp_path / "c.jsonl")]
    if metric == "bertscore":
        args += ["--reference", str(tmp_path / "c.jsonl")]
    code, out, err = cli(capsys, *args, *params, "--param", f"model={tiny_model_dir}")
    assert_one_line_error(code, out, err, *names)
    assert "model_max_length" in err and "LlamaForCausalLM" in err and "decoder" in err
    assert "OverflowError" not in err


def test_a_decoder_tokenizer_with_a_maximum_length_is_accepted(tiny_model_dir):
    """The check is on the length bert_score truncates to, not on the architecture: a decoder
    whose tokenizer states one (GPT-2: 1024) passes, as bert_score accepts GPT-2 models."""
    from types import SimpleNamespace

    from genmetrics.metrics.homogenization import check_encoder_tokenizer

    check_encoder_tokenizer(SimpleNamespace(model_max_length=1024), str(tiny_model_dir), "m")
    # (a local folder: a hub name would wait for the hub's timeouts here)
    unset = SimpleNamespace(model_max_length=int(1e30))
    with pytest.raises(GenmetricsError, match=r"^m='.*' cannot be BERTScore's encoder.*a decoder"):
        check_encoder_tokenizer(unset, str(tiny_model_dir), "m")
