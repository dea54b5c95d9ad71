"""Readers that turn a study dataset's upstream files into the rows the workflow reads.

A study config names each dataset's public upstream (``source: {kind: upstream, ...}``,
:func:`genmetrics.data.mirror.fetch_upstream`): a repository at a pinned commit, its files with
their sha256, and the *reader* here that makes the rows. A reader is a function
``(files, options) -> rows``: ``files`` maps each upstream file's name in the config to its
downloaded path, ``options`` are the reader's settings from the config (``upstream.options``).
The rows are written as JSON Lines exactly as the data mirror holds them
(:func:`rows_bytes`), so their sha256 is that of the mirror's copy, which the config records:
a reader that drifts from the recorded rows is an error, not a silent change of a study.

Nothing downloaded is executed or imported: a Python file is parsed (:mod:`ast`), a pickle
goes through :func:`restricted_unpickle` (builtin containers and numpy scalars only), never
:func:`pickle.load`.
"""

from __future__ import annotations

import ast
import io
import json
import pickle
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.data.upstream_detectgpt import (
    detectgpt_human,
    detectgpt_samples,
    face_demo_samples,
)
from genmetrics.data.upstream_judgments import COMPACT_READERS as COMPACT_READERS
from genmetrics.data.upstream_judgments import JUDGMENT_READERS
from genmetrics.data.upstream_text import TEXT_READERS, Reader, Rows, _one, _opt, _text

#: reader name -> function; :func:`reader` looks names up here (the text corpora's readers,
#: :mod:`genmetrics.data.upstream_text`, and Fast-DetectGPT's documents and samples are in it
#: from the start)
READERS: dict[str, Reader] = {
    **TEXT_READERS,
    **JUDGMENT_READERS,
    "detectgpt_human": detectgpt_human,
    "detectgpt_samples": detectgpt_samples,
    "face_demo_samples": face_demo_samples,
}


def _register(name: str) -> Callable[[Reader], Reader]:
    def deco(fn: Reader) -> Reader:
        READERS[name] = fn
        return fn

    return deco


def reader(name: str, key: str = "upstream.reader") -> Reader:
    """The reader called ``name``; an error naming ``key`` and the readers there are."""
    if name not in READERS:
        raise GenmetricsError(f"{key}: unknown reader {name!r} (readers: {', '.join(READERS)})")
    return READERS[name]


def rows_bytes(rows: Rows, compact: bool = False) -> bytes:
    """The rows as the data mirror's JSON Lines: one ``json.dumps(row, ensure_ascii=False)``
    per line (key order as built; ``compact``: no space after ``,`` and ``:``, as the files of
    :data:`COMPACT_READERS` are written), each ending in ``\\n``, UTF-8."""
    seps = (",", ":") if compact else None
    return "".join(json.dumps(r, ensure_ascii=False, separators=seps) + "\n" for r in rows).encode(
        "utf-8"
    )


# ------------------------------------------------------------------ Python list literal


@_register("python_list")
def python_list(files: Mapping[str, Path], options: Mapping[str, Any]) -> Rows:
    """The string list assigned to ``options.variable`` in a Python file (read with
    :func:`ast.literal_eval`, nothing run): ``{"id": f"{id_prefix}{i:02d}", "text",
    "source_index": i}``."""
    path = _one(files, "source")
    var = _opt(options, "variable")
    try:
        tree = ast.parse(_text(path), filename=str(path))
    except SyntaxError as e:
        raise GenmetricsError(f"{path}: line {e.lineno}: not Python ({e.msg})") from None
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == var for t in node.targets
        ):
            try:
                items = ast.literal_eval(node.value)
            except ValueError:
                raise GenmetricsError(
                    f"{path}: line {node.lineno}: {var} is not a literal list"
                ) from None
            if not isinstance(items, list) or not all(isinstance(s, str) for s in items):
                raise GenmetricsError(f"{path}: line {node.lineno}: {var} is not a list of strings")
            width = int(options.get("id_digits", 2))
            prefix = _opt(options, "id_prefix")
            return [
                {"id": f"{prefix}{i:0{width}d}", "text": s, "source_index": i}
                for i, s in enumerate(items)
            ]
    raise GenmetricsError(f"{path}: no assignment to {var!r}")


# ------------------------------------------------------------------ GPT-2 sample dumps

_SAMPLE = re.compile(r"^=+ SAMPLE (\d+) =+\n", re.M)
_EOT = "<|endoftext|>"


@_register("gpt2_samples")
def gpt2_samples(files: Mapping[str, Path], options: Mapping[str, Any]) -> Rows:
    """openai/gpt-2's ``gpt-2-samples/unconditional*.txt``: split on ``==== SAMPLE n ====``
    lines, each text cut at its first ``<|endoftext|>`` (``cut_at_endoftext``); the line end
    before the next marker is not part of the text (the file's last line end is)."""
    path = _one(files, "samples")
    text = _text(path)
    marks = list(_SAMPLE.finditer(text))
    if not marks:
        raise GenmetricsError(f"{path}: no '==== SAMPLE n ====' line")
    setting = _opt(options, "setting")
    rows = []
    for m, nxt in zip(marks, [*marks[1:], None], strict=True):
        body = text[m.end() : nxt.start() if nxt else len(text)]
        if nxt and body.endswith("\n"):
            body = body[:-1]
        cut = _EOT in body
        n = int(m.group(1))
        rows.append(
            {
                "id": f"{_opt(options, 'id_prefix')}{n:03d}",
                "model": _opt(options, "model"),
                "decoding": _opt(options, "decoding"),
                "setting": setting,
                "sample_index": n,
                "text": body.split(_EOT, 1)[0],
                "cut_at_endoftext": cut,
            }
        )
    return rows


# ------------------------------------------------------------------ gpt-2-output-dataset JSONL


@_register("webtext_jsonl")
def webtext_jsonl(files: Mapping[str, Path], options: Mapping[str, Any]) -> Rows:
    """gpt-2-output-dataset JSON Lines (``{"id", "ended", "length", "text"}``): the first
    ``options.limit`` documents as ``{"id": f"{id_prefix}{n:04d}", "source_id", "text",
    "length", "ended"}``. A last line cut off mid-record (a truncated copy) is dropped; any
    other line that is not JSON is an error naming it."""
    path = _one(files, "documents")
    lines = path.read_bytes().split(b"\n")
    limit = int(_opt(options, "limit"))
    rows = []
    for i, raw in enumerate(lines):
        if len(rows) == limit:
            break
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            if i == len(lines) - 1:  # the truncated copy's last, incomplete line
                break
            raise GenmetricsError(f"{path}: line {i + 1}: not JSON") from None
        rows.append(
            {
                "id": f"{_opt(options, 'id_prefix')}{len(rows):04d}",
                "source_id": obj["id"],
                "text": obj["text"],
                "length": obj["length"],
                "ended": obj["ended"],
            }
        )
    if len(rows) < limit:
        raise GenmetricsError(f"{path}: {len(rows)} documents, fewer than limit {limit}")
    return rows


# ------------------------------------------------------------------ restricted pickles


class _Dtype:
    """What ``numpy.dtype(name, align, copy)`` pickles to: a name (``f8``, ``i8``...) and, once
    its state is set, a byte order; only what :func:`_scalar` needs."""

    _STRUCT = {"f8": "d", "f4": "f", "f2": "e", "i8": "q", "i4": "i", "i2": "h", "i1": "b"}
    _STRUCT |= {"u8": "Q", "u4": "I", "u2": "H", "u1": "B", "b1": "?"}

    def __init__(self, name: Any, align: Any = False, copy: Any = False) -> None:
        if name not in self._STRUCT:
            raise pickle.UnpicklingError(f"numpy dtype {name!r} is not a plain number")
        self.name, self.order = name, "<"

    def __setstate__(self, state: Any) -> None:
        if isinstance(state, tuple) and len(state) > 1 and state[1] in ("<", ">", "|", "="):
            self.order = "<" if state[1] in ("|", "=") else state[1]


def _scalar(dtype: Any, data: Any = None) -> Any:
    """``numpy.core.multiarray.scalar(dtype, bytes)`` as a Python int/float/bool."""
    import struct

    if not isinstance(dtype, _Dtype) or not isinstance(data, bytes):
        raise pickle.UnpicklingError("a numpy scalar without a number dtype and its bytes")
    try:
        return struct.unpack(dtype.order + _Dtype._STRUCT[dtype.name], data)[0]
    except struct.error as e:
        raise pickle.UnpicklingError(f"numpy scalar {dtype.name}: {e}") from None


class _Restricted(pickle.Unpickler):
    """Builtin containers and numbers only, plus numpy number scalars (read here, numpy is not
    imported): any other global is refused."""

    _ALLOWED = {
        ("numpy", "dtype"): _Dtype,
        ("numpy.core.multiarray", "scalar"): _scalar,
        ("numpy._core.multiarray", "scalar"): _scalar,
    }

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in self._ALLOWED:
            return self._ALLOWED[(module, name)]
        raise pickle.UnpicklingError(
            f"refused global {module}.{name} (only builtin containers and numpy number "
            "scalars are read)"
        )


def restricted_unpickle(path: Path) -> Any:
    """A pickle's content, read without running its code: builtin containers, strings and
    numbers, and numpy number scalars (as Python numbers). Anything else (a class, a function,
    an array) is a :class:`GenmetricsError` naming the file."""
    try:
        return _Restricted(io.BytesIO(Path(path).read_bytes())).load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError) as e:
        raise GenmetricsError(f"{path}: not read ({e})") from None


# ------------------------------------------------------------------ REALSumm

_TAG = re.compile(r"<t>(.*?)(?:</t>|\Z)", re.S)


def _sentences(tagged: str) -> str:
    """``<t> a . </t>  <t> b . </t>`` -> ``a .\\nb .``: spaces in a sentence collapsed, one
    sentence a line (a last sentence may lack its ``</t>``)."""
    return "\n".join(" ".join(s.split()) for s in _TAG.findall(tagged) if s.strip())


@_register("realsumm_pickles")
def realsumm_pickles(files: Mapping[str, Path], options: Mapping[str, Any]) -> Rows:
    """neulab/REALSumm ``scores_dicts/{abs,ext}.pkl`` (restricted reader): ``options.output``
    ``references`` gives ``{"id": "realsumm-NNN", "doc_id", "text"}`` per document,
    ``summaries`` one row per (document, system) with the human ``litepyramid_recall`` and
    the stored ``scores``; documents in id order, abstractive systems then extractive, each
    by name. Texts lose their ``<t>`` tags, one sentence per line."""
    output = _opt(options, "output")
    if output not in ("references", "summaries"):
        raise GenmetricsError(
            f"upstream.options.output: 'references' or 'summaries', got {output!r}"
        )
    tables = {kind: restricted_unpickle(_one(files, kind)) for kind in ("abs", "ext")}
    for kind, table in tables.items():
        if not isinstance(table, dict) or not all(isinstance(v, dict) for v in table.values()):
            raise GenmetricsError(f"{files[kind]}: not a mapping of documents")
    rows = []
    for doc in sorted(tables["abs"]):
        entry = tables["abs"][doc]
        did = f"realsumm-{int(entry['doc_id']):03d}"
        if output == "references":
            rows.append(
                {"id": did, "doc_id": entry["doc_id"], "text": _sentences(entry["ref_summ"])}
            )
            continue
        for kind, long in (("abs", "abstractive"), ("ext", "extractive")):
            systems = tables[kind][doc]["system_summaries"]
            for name in sorted(systems):
                system = name.removesuffix(".txt")
                s = systems[name]
                scores = {k: v for k, v in s["scores"].items() if k != "litepyramid_recall"}
                rows.append(
                    {
                        "id": f"{did}.{kind}.{system}",
                        "source_id": did,
                        "doc_id": entry["doc_id"],
                        "system": system,
                        "system_type": long,
                        "text": _sentences(s["system_summary"]),
                        "litepyramid_recall": s["scores"]["litepyramid_recall"],
                        "scores": scores,
                    }
                )
    return rows
