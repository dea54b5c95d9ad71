"""A minimal PEP 503 package-index client: find a project's files and download one, as pip would.

Nothing here installs, builds or imports a package; it only reads index pages and fetches files.

- Where to look follows pip's configuration precedence (:func:`pip_index_config`): the config
  files ``python -m pip config list`` reports (section ``global``, then ``download`` over it),
  then the ``PIP_*`` environment variables over both. ``index-url`` (default
  :data:`DEFAULT_INDEX`), ``extra-index-url``, ``find-links``, ``no-index``, ``cert``, ``proxy``
  and ``timeout`` are honoured; ``PIP_CONFIG_FILE=/dev/null`` disables the config files.
- Index pages are PEP 503 "simple" pages: ``<index>/<canonical name>/``, whose ``<a href>``
  links (resolved against the page and its ``<base>``) name the files, each optionally with a
  ``#sha256=<hex>`` fragment. ``file://`` indexes and find-links folders or files work too.
- Of the files of ``name==version`` (:func:`find_distributions`), a pure wheel is preferred, then
  a wheel for this interpreter, then any other wheel, then the ``.tar.gz`` and ``.zip`` sdists.
- Credentials in a URL (``https://user:pass@host/...``) are sent as basic auth and never shown
  in messages (:func:`redact`).
"""

from __future__ import annotations

import ast
import base64
import functools
import hashlib
import html.parser
import os
import re
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError

#: moves bytes (fetches, unpacks, loads or logs pinned content) without deciding a value: code
#: digests do not follow it (:data:`genmetrics.provenance.BOUNDARY_MARK`)
CODE_DIGEST_BOUNDARY = True

#: pip's default index, used when neither config nor environment names one.
DEFAULT_INDEX = "https://pypi.org/simple"

_CHUNK = 1 << 20
_TRUE = {"1", "true", "yes", "on", "y"}


# ------------------------------------------------------------------ pip configuration


@dataclass(frozen=True)
class IndexConfig:
    """Where pip would look: index pages, find-links locations, TLS and proxy settings."""

    index_urls: tuple[str, ...]
    find_links: tuple[str, ...]
    cert: str | None = None
    proxy: str | None = None
    timeout: float = 60.0


@functools.lru_cache(maxsize=8)
def _pip_config_files(python: str, *env_key: str | None) -> dict[str, str]:
    """``pip config list`` (files only; ``:env:`` lines are read from the environment).

    ``env_key`` (the variables that choose the config files) is only part of the cache key.
    """
    try:
        proc = subprocess.run(
            [python, "-m", "pip", "config", "list"],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return {}
    if proc.returncode != 0:  # no pip in this interpreter: the environment variables only
        return {}
    values: dict[str, str] = {}
    for line in proc.stdout.splitlines():
        name, eq, raw = line.partition("=")
        if not eq or name.startswith(":env:"):
            continue
        try:
            values[name.strip()] = str(ast.literal_eval(raw.strip()))
        except (ValueError, SyntaxError):
            values[name.strip()] = raw.strip().strip("'\"")
    return values


def pip_index_config() -> IndexConfig:
    """The user's pip settings for downloads: ``python -m pip config list`` (sections
    ``global`` then ``download``), overridden by ``PIP_INDEX_URL``, ``PIP_EXTRA_INDEX_URL``,
    ``PIP_FIND_LINKS``, ``PIP_NO_INDEX``, ``PIP_CERT``, ``PIP_PROXY``, ``PIP_TIMEOUT`` /
    ``PIP_DEFAULT_TIMEOUT`` as pip does. ``PIP_CONFIG_FILE=/dev/null`` disables config files."""
    env_key = tuple(
        os.environ.get(k) for k in ("PIP_CONFIG_FILE", "VIRTUAL_ENV", "HOME", "XDG_CONFIG_HOME")
    )
    files = _pip_config_files(sys.executable, *env_key)
    merged: dict[str, str] = {}
    for section in ("global", "download"):
        for k, v in files.items():
            if k.startswith(section + "."):
                merged[k.split(".", 1)[1]] = v
    for k, v in os.environ.items():
        if k.startswith("PIP_"):
            merged[k[4:].lower().replace("_", "-")] = v
    index = merged.get("index-url") or DEFAULT_INDEX
    extra = merged.get("extra-index-url", "").split()
    urls = () if merged.get("no-index", "").lower() in _TRUE else (index, *extra)
    timeout = merged.get("timeout") or merged.get("default-timeout") or "60"
    try:
        timeout_s = float(timeout)
    except ValueError:
        timeout_s = 60.0
    return IndexConfig(
        index_urls=tuple(urls),
        find_links=tuple(merged.get("find-links", "").split()),
        cert=merged.get("cert") or None,
        proxy=merged.get("proxy") or None,
        timeout=timeout_s,
    )


# ------------------------------------------------------------------ HTTP / file reads


def redact(url: str) -> str:
    """``url`` without user:password."""
    p = urllib.parse.urlsplit(url)
    if "@" not in p.netloc:
        return url
    return urllib.parse.urlunsplit(p._replace(netloc=p.netloc.rsplit("@", 1)[1]))


def _open(url: str, cfg: IndexConfig | None, accept: str | None = None):
    """``urlopen`` with pip's cert/proxy settings and user:password from the URL as basic auth."""
    url = urllib.parse.urldefrag(url)[0]
    p = urllib.parse.urlsplit(url)
    headers = {"User-Agent": "genmetrics (+https://pypi.org)"}
    if accept:
        headers["Accept"] = accept
    if "@" in p.netloc:
        auth, host = p.netloc.rsplit("@", 1)
        headers["Authorization"] = "Basic " + base64.b64encode(
            urllib.parse.unquote(auth).encode()
        ).decode("ascii")
        url = urllib.parse.urlunsplit(p._replace(netloc=host))
    handlers: list[Any] = []
    if cfg is not None and cfg.cert and p.scheme == "https":
        handlers.append(
            urllib.request.HTTPSHandler(context=ssl.create_default_context(cafile=cfg.cert))
        )
    if cfg is not None and cfg.proxy:
        handlers.append(urllib.request.ProxyHandler({"http": cfg.proxy, "https": cfg.proxy}))
    opener = urllib.request.build_opener(*handlers)
    timeout = cfg.timeout if cfg is not None else 120.0
    return opener.open(urllib.request.Request(url, headers=headers), timeout=timeout)


def download(url: str, target: Path, cfg: IndexConfig | None, attempts: int = 3) -> str:
    """Stream ``url`` to ``target``; return its sha256. Transient network errors are retried.

    ``cfg`` gives pip's cert/proxy/timeout settings; ``None`` for a URL outside the indexes.
    """
    for attempt in range(attempts):
        h = hashlib.sha256()
        try:
            with _open(url, cfg) as r, open(target, "wb") as f:
                for block in iter(lambda: r.read(_CHUNK), b""):
                    h.update(block)
                    f.write(block)
            return h.hexdigest()
        except urllib.error.HTTPError as e:
            if e.code < 500 or attempt == attempts - 1:
                raise
        except (urllib.error.URLError, OSError):
            if attempt == attempts - 1 or url.startswith("file:"):
                raise
        time.sleep(2**attempt)
    raise AssertionError("unreachable")


class _Anchors(html.parser.HTMLParser):
    """``<a href>`` targets of a PEP 503 page, resolved against the page (and ``<base>``)."""

    def __init__(self, base: str) -> None:
        super().__init__()
        self.base = base
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if not href:
            return
        if tag == "base":
            self.base = urllib.parse.urljoin(self.base, href)
        elif tag == "a":
            self.links.append(urllib.parse.urljoin(self.base, href))


def _file_url_path(url: str) -> Path:
    return Path(urllib.request.url2pathname(urllib.parse.urlsplit(url).path))


def _page_links(url: str, cfg: IndexConfig) -> list[str]:
    """The file links on an index page or find-links location (``[]`` if it does not exist).

    ``file://`` folders are read as ``index.html`` if they have one, else listed; plain paths
    (find-links) likewise.
    """
    if "://" not in url:  # a find-links path
        path = Path(url).expanduser()
        url = path.resolve().as_uri() + ("/" if path.is_dir() else "")
    if url.startswith("file:"):
        path = _file_url_path(url)
        if path.is_dir():
            if not (path / "index.html").is_file():
                return [p.resolve().as_uri() for p in sorted(path.iterdir()) if p.is_file()]
            url, path = path.as_uri() + "/index.html", path / "index.html"
        if not path.is_file():
            return []
        if not path.name.endswith((".html", ".htm")) and "." in path.name:
            return [url]  # find-links pointing at one file
        text = path.read_text(encoding="utf-8", errors="replace")
    else:
        try:
            with _open(url, cfg, accept="text/html") as r:
                text = r.read().decode("utf-8", errors="replace")
                url = r.geturl()
        except urllib.error.HTTPError as e:
            if e.code == 404:
                return []
            raise
    parser = _Anchors(url)
    parser.feed(text)
    return parser.links


# ------------------------------------------------------------------ choosing a file


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _same_version(a: str, b: str) -> bool:
    try:
        from packaging.version import InvalidVersion, Version
    except ImportError:  # pragma: no cover - packaging comes with pip and most installs
        return a.lower() == b.lower()
    try:
        return Version(a) == Version(b)
    except InvalidVersion:
        return a.lower() == b.lower()


@dataclass(frozen=True)
class Distribution:
    """One file of a project on an index page (its ``#sha256=`` fragment, if any)."""

    filename: str
    url: str
    index_sha256: str | None  # the index's #sha256= fragment
    rank: int  # 0 pure wheel, 1 wheel for this platform, 2 other wheel, 3 .tar.gz, 4 .zip sdist


_SDIST_EXT = (".tar.gz", ".zip")


def _rank(filename: str, name: str, version: str) -> int | None:
    """Preference of ``filename`` for ``name==version``; ``None`` if it is another project/version."""
    if filename.endswith(".whl"):
        parts = filename[:-4].split("-")
        if len(parts) not in (5, 6):
            return None
        if _canonical(parts[0]) != name or not _same_version(parts[1], version):
            return None
        py, abi, plat = parts[-3:]
        pure = plat == "any" and abi == "none" and any(t.startswith("py3") for t in py.split("."))
        if pure:
            return 0
        here = _supported_tags()
        fits = any(
            f"{p}-{a}-{q}" in here
            for p in py.split(".")
            for a in abi.split(".")
            for q in plat.split(".")
        )
        return 1 if fits else 2
    for i, ext in enumerate(_SDIST_EXT):
        if filename.lower().endswith(ext):
            stem = filename[: -len(ext)]
            for cut in [j for j, c in enumerate(stem) if c == "-"]:  # legacy names have '-'
                if _canonical(stem[:cut]) == name and _same_version(stem[cut + 1 :], version):
                    return 3 + i
    return None


@functools.cache
def _supported_tags() -> frozenset[str]:
    """This interpreter's wheel tags (``py3-none-any`` style), to prefer a wheel that fits."""
    try:
        from packaging.tags import sys_tags
    except ImportError:  # pragma: no cover
        return frozenset()
    return frozenset(str(t) for t in sys_tags())


def find_distributions(
    name: str, version: str, cfg: IndexConfig | None = None
) -> list[Distribution]:
    """Every file of ``name==version`` on the configured indexes and find-links, best first.

    Raises :class:`GenmetricsError` if none is found and some location could not be read.
    """
    cfg = cfg or pip_index_config()
    name = _canonical(name)
    pages = [u.rstrip("/") + f"/{name}/" for u in cfg.index_urls] + list(cfg.find_links)
    found: list[Distribution] = []
    errors: list[str] = []
    for page in pages:
        try:
            links = _page_links(page, cfg)
        except (OSError, urllib.error.URLError, ValueError) as e:
            errors.append(f"{redact(page)}: {e}")
            continue
        for link in links:
            url, frag = urllib.parse.urldefrag(link)
            filename = urllib.parse.unquote(url.rstrip("/").rsplit("/", 1)[-1])
            rank = _rank(filename, name, version)
            if rank is None:
                continue
            algo, _, digest = frag.partition("=")
            sha = digest.lower() if algo == "sha256" and digest else None
            found.append(Distribution(filename, url, sha, rank))
    if not found and errors:
        raise GenmetricsError(f"index unreachable: {'; '.join(errors)}")
    # best kind first; among copies of one file, a local mirror (file://) first
    return sorted(found, key=lambda c: (c.rank, c.filename, not c.url.startswith("file:")))
