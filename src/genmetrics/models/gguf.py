"""GGUF checkpoints converted once: the chunks joined, the file dequantized by transformers
and saved as safetensors (``{model dir}/hf``), and the folder reused while the GGUF's content
and the dtype stay the same (:func:`gguf_identity`, recorded in ``hf/.complete``)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.data.sources import sha256_file
from genmetrics.io import atomic_path, write_json

#: moves bytes (fetches, unpacks, loads or logs pinned content) without deciding a value: code
#: digests do not follow it (:data:`genmetrics.provenance.BOUNDARY_MARK`)
CODE_DIGEST_BOUNDARY = True

#: dtypes a GGUF checkpoint is dequantized to (once, when it is converted)
GGUF_DTYPES = ("float32", "bfloat16")


def _joined_gguf(files: list[Path], source: Mapping[str, Any], key: str, work_dir: Path) -> Path:
    """One GGUF file: the only match, or the chunks concatenated into ``work_dir``; checked
    against ``source.sha256`` when the config gives it."""
    if len(files) == 1:
        target = files[0]
    else:  # chunks: concatenate in name order
        target = work_dir / "assembled.gguf"
        with atomic_path(target) as tmp, open(tmp, "wb") as out:
            for m in files:
                with open(m, "rb") as f:
                    shutil.copyfileobj(f, out, 1 << 24)
    want = source.get("sha256")
    if want:
        h = hashlib.sha256()
        with open(target, "rb") as f:
            for block in iter(lambda: f.read(1 << 24), b""):
                h.update(block)
        if h.hexdigest() != want.lower():
            raise GenmetricsError(
                f"{key}.sha256: the joined GGUF {target} has sha256 {h.hexdigest()}, "
                f"expected {want}"
            )
    return target


def check_gguf_dtype(name: str, spec: Mapping[str, Any]) -> None:
    """A GGUF checkpoint is dequantized to one of :data:`GGUF_DTYPES`; refuse others early."""
    source = spec.get("source") or {}
    is_gguf = bool(source.get("gguf")) or str(source.get("path", "")).endswith(".gguf")
    dtype = spec.get("dtype", "float32")
    if is_gguf and dtype not in (*GGUF_DTYPES, "auto"):
        raise GenmetricsError(
            f"checkpoints.{name}.dtype: {dtype!r} is not available for a GGUF checkpoint "
            f"(it is dequantized once, to {' or '.join(GGUF_DTYPES)})"
        )


def gguf_identity(
    files: list[Path], dtype: str, known: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """What a converted folder is made from: each GGUF file's name, size, mtime and sha256, and
    the stored dtype (``auto`` is stored as float32). The sha256 of a file whose (name, size,
    mtime) ``known`` (an earlier identity) lists is taken from it instead of read again."""
    fields = ("name", "size", "mtime_ns", "sha256")
    seen = {
        (k["name"], k["size"], k["mtime_ns"]): k["sha256"]
        for k in (known or {}).get("gguf", [])
        if isinstance(k, dict) and all(f in k for f in fields)
    }
    ids = []
    for f in files:
        st = f.stat()
        digest = seen.get((f.name, st.st_size, st.st_mtime_ns)) or sha256_file(f)
        ids.append(
            {"name": f.name, "size": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": digest}
        )
    return {"gguf": ids, "dtype": "float32" if dtype == "auto" else dtype}


def _same_conversion(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Same GGUF content (names, sizes, sha256) and dtype; dates and folders may differ."""

    def key(x: Mapping[str, Any]) -> Any:
        return x["dtype"], [(g["name"], g["size"], g["sha256"]) for g in x["gguf"]]

    try:
        return key(a) == key(b)
    except (KeyError, TypeError):  # a damaged marker: convert again
        return False


def _marker(hf: Path) -> dict[str, Any] | None:
    try:
        marker = json.loads((hf / ".complete").read_text())
    except (OSError, ValueError):
        return None
    return marker if isinstance(marker, dict) else None


def _legacy_marker_matches(
    hf: Path, marker: Mapping[str, Any], files: list[Path], dtype: str
) -> bool:
    """A marker written before identities were recorded names one GGUF path only: it stands for
    the same file name (``assembled.gguf`` for chunks) converted to the dtype its config.json
    states."""
    want = files[0].name if len(files) == 1 else "assembled.gguf"
    try:
        config = json.loads((hf / "config.json").read_text())
    except (OSError, ValueError):
        return False
    stored = config.get("dtype") or config.get("torch_dtype")
    return Path(str(marker.get("gguf", ""))).name == want and stored == dtype


def convert_gguf(
    files: list[Path], out_dir: Path, spec: Mapping[str, Any], source: Mapping[str, Any], key: str
) -> Path:
    """Dequantize a GGUF with transformers and save it as safetensors in ``out_dir/hf``.

    A folder converted from the same file content to the same dtype is reused (wherever the
    cache has moved); any other GGUF (a new file under the same name, other chunks) or dtype
    converts again, so the folder never holds weights other than the config's."""
    hf = out_dir / "hf"
    marker = _marker(hf)
    known = marker if marker and isinstance(marker.get("gguf"), list) else None
    identity = gguf_identity(files, spec.get("dtype", "float32"), known)
    reuse = known is not None and _same_conversion(known, identity)
    if marker and known is None and _legacy_marker_matches(hf, marker, files, identity["dtype"]):
        reuse = True  # an earlier version's marker: record the identity from now on
    if reuse:
        if known != identity:  # the same files with other dates, or an old marker
            write_json(hf / ".complete", identity)
        (out_dir / "assembled.gguf").unlink(missing_ok=True)  # left by earlier versions
        return hf
    import safetensors.torch
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf = _joined_gguf(files, source, key, out_dir)
    dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[identity["dtype"]]
    with _gguf_read_once():
        model = AutoModelForCausalLM.from_pretrained(
            str(gguf.parent), gguf_file=gguf.name, dtype=dtype
        )
        tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    tmp = out_dir / ".hf.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.config.save_pretrained(tmp)
    if model.generation_config is not None:
        model.generation_config.save_pretrained(tmp)
    safetensors.torch.save_model(model, str(tmp / "model.safetensors"))
    tok.save_pretrained(tmp)
    (tmp / ".complete").write_text(json.dumps(identity) + "\n")
    shutil.rmtree(hf, ignore_errors=True)
    tmp.rename(hf)
    assembled = out_dir / "assembled.gguf"
    if assembled.exists():
        assembled.unlink()  # the converted folder is what we keep
    return hf


@contextlib.contextmanager
def _gguf_read_once() -> Iterator[None]:
    """transformers reads a GGUF's header once for the config, once for the tokenizer and once
    for the weights, each time parsing every metadata field in Python (Gemma-3's 262k-token
    vocabulary: about 8 s a time on one core), and builds gguf's tensor-name map again for
    every submodule (397 times for SmolLM2: 4 s). Inside the block, one ``GGUFReader`` per
    file and one map per (architecture, layers), shared read-only: the same objects the
    separate calls would build, so the same weights and tokenizer."""
    import gguf

    reader, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    readers: dict[tuple[str, str], Any] = {}

    def read_once(path: os.PathLike[str] | str, mode: str = "r") -> Any:
        key = (os.path.realpath(path), mode)
        if mode != "r":  # a writable map is not shared
            return reader(path, mode)
        if key not in readers:
            readers[key] = reader(path, mode)
        return readers[key]

    gguf.GGUFReader, gguf.get_tensor_name_map = read_once, functools.cache(name_map)
    try:
        yield
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = reader, name_map
