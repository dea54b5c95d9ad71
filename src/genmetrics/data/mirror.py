"""Study data from its public upstream, or from a data mirror.

A study dataset is an ``upstream`` source (:data:`genmetrics.data.sources.SOURCE_KINDS`): the
rows a study reads (``file``, laid out as in the project's data folder, with their ``rows``
and ``sha256``) and the public ``upstream`` they are made from (a repository at a pinned
commit, its files with their sha256, and the :mod:`genmetrics.data.upstream` reader that makes
the rows). With a data mirror (:func:`data_mirror`: ``$GENMETRICS_DATA_MIRROR`` or the
config's ``data_mirror``) the file is read from the mirror and checked against ``sha256`` and
``rows``; without one, :func:`fetch_upstream` downloads the upstream files, checks each, runs
the reader and checks the rows it made against the same ``sha256``, so both routes give the
same bytes. :func:`resolve_source` is :func:`genmetrics.data.sources.resolve` with this kind.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import urllib.parse
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.data.sources import (
    _cached,
    _finish,
    _staging,
    default_cache,
    fetch_record,
    fetch_url,
    resolve,
    sha256_file,
)
from genmetrics.data.upstream import READERS

#: moves bytes (fetches, unpacks, loads or logs pinned content) without deciding a value: code
#: digests do not follow it (:data:`genmetrics.provenance.BOUNDARY_MARK`)
CODE_DIGEST_BOUNDARY = True

log = logging.getLogger("genmetrics")

#: the environment variable naming the data mirror (a folder laid out like the project's
#: shared data: ``<folder>/<file>``); the config key ``data_mirror`` takes precedence
DATA_MIRROR_ENV = "GENMETRICS_DATA_MIRROR"
#: how a user provides the data mirror (said in every error about a missing study file)
MIRROR_HOW = f"the {DATA_MIRROR_ENV} environment variable or the config key data_mirror"
_GITHUB_RAW = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"


def resolve_source(
    source: Mapping[str, Any], cache: Path | None = None, key: str = "source"
) -> Path:
    """:func:`genmetrics.data.sources.resolve`, and an ``upstream`` source: its rows from the
    data mirror (``mirror_path``, set by the plan, checked by :func:`check_mirror_file`) or
    made from its upstream (:func:`fetch_upstream`)."""
    if source.get("kind") != "upstream":
        return resolve(source, cache, key)
    if source.get("mirror_path"):
        p = check_mirror_file(source, Path(source["mirror_path"]), key)
        log.info("%s: read from the data mirror: %s", key, p)
        return p
    return fetch_upstream(source, cache, key)


def data_mirror(config_value: str | None = None) -> Path | None:
    """The data mirror folder: the config's ``data_mirror`` if set, else
    ``$GENMETRICS_DATA_MIRROR``, else ``None`` (study data is downloaded from its upstream)."""
    value = config_value or os.environ.get(DATA_MIRROR_ENV)
    return Path(value).expanduser() if value else None


def upstream_files(source: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """``{name: {"url", "path", "sha256"}}`` of an upstream source's files (a GitHub file's
    URL is the raw file at the pinned commit)."""
    up = source.get("upstream") or {}
    out = {}
    for name, f in (up.get("files") or {}).items():
        url = f.get("url") or _GITHUB_RAW.format(
            repo=up.get("repo"), commit=up.get("commit"), path=f.get("path")
        )
        out[name] = {"url": url, "path": f.get("path") or url, "sha256": f.get("sha256")}
    return out


def describe_upstream(source: Mapping[str, Any]) -> str:
    """One phrase naming an upstream source's origin: ``owner/repo@commit12 path, path``."""
    up = source.get("upstream") or {}
    where = up.get("repo") or up.get("dataset") or "upstream"
    rev = up.get("commit") or up.get("revision")
    paths = ", ".join(f["path"] for f in upstream_files(source).values())
    return f"{where}@{str(rev)[:12]} {paths}" if rev else f"{where} {paths}"


_DIGESTS: dict[tuple[str, int, int], str] = {}


def _digest_cached(path: Path) -> str:
    """sha256 of ``path``, remembered per (path, size, mtime) in this process (a dry run checks
    the same mirror files for several datasets and queries)."""
    st = path.stat()
    k = (str(path), st.st_size, st.st_mtime_ns)
    if k not in _DIGESTS:
        _DIGESTS[k] = sha256_file(path)
    return _DIGESTS[k]


def mirror_path(source: Mapping[str, Any], mirror: Path) -> Path:
    """Where the data mirror holds an upstream source's file."""
    return Path(mirror) / str(source["file"])


def check_mirror_file(source: Mapping[str, Any], path: Path, key: str) -> Path:
    """The mirror's copy of an upstream source, checked: it exists and its sha256 is the
    recorded one (``source.sha256``); errors name the dataset key, the file, the upstream
    and the mirror option."""
    if not path.is_file():
        raise GenmetricsError(
            f"{key}: {source.get('file')} is not in the data mirror ({path} does not exist; "
            f"the mirror is set by {MIRROR_HOW}); it is made from {describe_upstream(source)}: "
            "add it to the mirror, or unset the mirror to download it"
        )
    want = source.get("sha256")
    if want:
        got = _digest_cached(path)
        if got != str(want).lower():
            raise GenmetricsError(
                f"{key}.sha256: the data mirror's {path} has sha256 {got}, not the {want} "
                f"recorded for {source.get('file')} (made from {describe_upstream(source)})"
            )
    return path


def check_rows(source: Mapping[str, Any], n: int, path: Path | str, key: str) -> None:
    """An upstream source's rows counted against its recorded ``rows``."""
    want = source.get("rows")
    if want is not None and int(want) != n:
        raise GenmetricsError(
            f"{key}.rows: {path} has {n} rows, not the {want} recorded for {source.get('file')} "
            f"(made from {describe_upstream(source)})"
        )


def fetch_upstream(
    source: Mapping[str, Any], cache: Path | None = None, key: str = "source"
) -> Path:
    """Download an upstream source's files, make its rows with its reader and return the rows'
    JSON Lines file (cached under ``<cache>/upstream/<sha256 of the rows, 16 hex>/``).

    Each file is fetched as a ``url`` source (its sha256 checked); the rows the reader makes
    must have the recorded ``rows`` and ``sha256`` (the bytes the data mirror holds), else an
    error names the dataset and the upstream.
    """
    from genmetrics.data.upstream import COMPACT_READERS, reader, rows_bytes

    up = source.get("upstream") or {}
    read = reader(up.get("reader"), f"{key}.upstream.reader")
    want = str(source.get("sha256") or "").lower()
    name = Path(str(source.get("file") or "rows.jsonl")).name
    cache = Path(cache or default_cache())
    final = (
        cache
        / "upstream"
        / (want[:16] or hashlib.sha256(repr(sorted(up.items())).encode()).hexdigest()[:16])
    )
    if want and _cached(final, want) and (final / name).is_file():
        return final / name
    files = {}
    for fname, f in upstream_files(source).items():
        fkey = f"{key}.upstream.files.{fname}"
        try:
            folder = fetch_url(f["url"], f["sha256"] or "", cache, fkey)
        except GenmetricsError as e:
            raise GenmetricsError(
                f"{e} [{key}: made from {describe_upstream(source)}; offline, set {MIRROR_HOW} "
                f"to a folder holding {source.get('file')}]"
            ) from None
        rec = fetch_record(folder) or {}
        files[fname] = folder / rec.get("file", Path(urllib.parse.urlsplit(f["url"]).path).name)
    try:
        rows = read(files, up.get("options") or {})
    except GenmetricsError as e:
        raise GenmetricsError(f"{key}.upstream: {e}") from None
    data = rows_bytes(rows, up.get("reader") in COMPACT_READERS)
    got = hashlib.sha256(data).hexdigest()
    check_rows(source, len(rows), f"the rows made from {describe_upstream(source)}", key)
    if want and got != want:
        raise GenmetricsError(
            f"{key}.sha256: the rows made from {describe_upstream(source)} have sha256 {got}, "
            f"not the recorded {want} (the upstream reader {up.get('reader')!r} does not make "
            "the recorded rows)"
        )
    with _staging(final) as tmp:
        (tmp / name).write_bytes(data)
        log.info("%s: %d rows made from %s", key, len(rows), describe_upstream(source))
        return (
            _finish(
                tmp,
                final,
                {
                    "kind": "upstream",
                    "file": name,
                    "upstream": describe_upstream(source),
                    "sha256": got,
                },
            )
            / name
        )


def mirror_in_paths(node: Any, mirror: str | None) -> None:
    """``$GENMETRICS_DATA_MIRROR`` in a path (a reader that takes a folder of the mirror, e.g.
    ``agreement.sets.<name>.path``) is the config's ``data_mirror`` when that is set."""
    if not mirror or not isinstance(node, dict):
        return
    for k, v in node.items():
        if isinstance(v, dict):
            mirror_in_paths(v, mirror)
        elif isinstance(v, str) and DATA_MIRROR_ENV in v:
            for var in (f"${{{DATA_MIRROR_ENV}}}", f"${DATA_MIRROR_ENV}"):
                v = v.replace(var, str(mirror))
            node[k] = v


#: the upstream of each folder of the data mirror that a config may read by path
#: (``$GENMETRICS_DATA_MIRROR/<folder>...``, e.g. an agreement set's ``path``; the shipped
#: configs name these as upstream sources instead), said when the mirror is not set
MIRROR_FOLDERS = {
    "realsumm": "neulab/REALSumm@a5900e3e36c6 scores_dicts/abs.pkl, scores_dicts/ext.pkl",
    "xsum_hallucination": "google-research-datasets/xsum_hallucination_annotations@4abdbb2c807c "
    "hallucination_annotations_xsum_summaries.csv, factuality_annotations_xsum_summaries.csv, "
    "eval_scores_xsum_summaries.csv",
    "hanna": "dig-team/hanna-benchmark-asg@282f27536a5d",
    "contrastive_search": "yxuansu/Contrastive_Search_versus_Contrastive_Decoding@bdca42ddae6e",
    "rankgen_ab": "martiansideofthemoon/rankgen@23a8e7ce2dd6",
    "ag_news/test.jsonl": "suuuch/TransformerClassification@0d9808e1978c data/ag_news_csv/test.csv",
    "ag_news/train_sample.jsonl": "forest-snow/alps@3c7ef2c98249 data/agnews/dev.tsv (without "
    "the descriptions of suuuch/TransformerClassification@0d9808e1978c data/ag_news_csv/test.csv)",
}
_MIRROR_VAR = re.compile(r"\$\{?" + DATA_MIRROR_ENV + r"\}?/*([^\s]*)")


def mirror_path_values(node: Any, where: str = "") -> list[tuple[str, str]]:
    """``(key, value)`` of every string in a config that names a path in the data mirror
    (``$GENMETRICS_DATA_MIRROR/...``), in config order."""
    out: list[tuple[str, str]] = []
    if isinstance(node, Mapping):
        for k, v in node.items():
            out += mirror_path_values(v, f"{where}.{k}" if where else str(k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += mirror_path_values(v, f"{where}[{i}]")
    elif isinstance(node, str) and _MIRROR_VAR.search(node):
        out.append((where, node))
    return out


def check_mirror_paths(config: Mapping[str, Any], mirror: Path | None) -> None:
    """A config that reads files of the data mirror by path (an agreement set, an OmniInput
    classifier's texts) stops here when no mirror is set: one line naming the key, the
    folder, its upstream (:data:`MIRROR_FOLDERS`) and how to set the mirror."""
    if mirror:
        return
    for key, value in mirror_path_values(config):
        rel = _MIRROR_VAR.search(value).group(1)
        origin = MIRROR_FOLDERS.get(rel) or MIRROR_FOLDERS.get(rel.split("/")[0])
        made = f"made from {origin}" if origin else "see its README.md in the project's data folder"
        raise GenmetricsError(
            f"{key}: {rel or value} needs the data mirror ({MIRROR_HOW}, a folder laid out like "
            f"the project's data folder), which is not set: {value!r} points nowhere ({made})"
        )


def mirror_needs(config: Mapping[str, Any], where: str = "") -> list[str]:
    """The keys of what a config can only read from the data mirror: its ``upstream`` sources
    whose reader is not in :data:`genmetrics.data.upstream.READERS` (none makes their rows) and
    its paths in the mirror (:func:`mirror_path_values`). Empty: it runs without a mirror."""
    out: list[str] = []
    if isinstance(config, Mapping):
        if config.get("kind") == "upstream":
            if (config.get("upstream") or {}).get("reader") not in READERS:
                out.append(where or "source")
            return out
        for k, v in config.items():
            out += mirror_needs(v, f"{where}.{k}" if where else str(k))
    elif isinstance(config, list):
        for i, v in enumerate(config):
            out += mirror_needs(v, f"{where}[{i}]")
    elif isinstance(config, str) and _MIRROR_VAR.search(config):
        out.append(where)
    return out


def mirror_root(mirror: Path | None) -> dict[str, str]:
    return {"mirror_root": str(mirror)} if mirror else {}


def study_source(
    source: dict[str, Any], key: str, mirror: Path | None, notes: list[str]
) -> dict[str, Any]:
    """An ``upstream`` source checked at plan time: with a data mirror, its file there (it must
    exist and have the recorded sha256), recorded in the source (``mirror_root``,
    ``mirror_path``: the job reads it) and in the run log's notes; without one, a reader must
    make its rows from the upstream (the job downloads them). A missing file stops the dry
    run here, naming the dataset, its upstream and how to set the mirror."""
    if source.get("kind") != "upstream":
        return source
    if mirror:
        path = check_mirror_file(source, mirror_path(source, mirror), key)
        notes.append(f"{key}: {source['file']} from the data mirror {path}")
        return {**source, **mirror_root(mirror), "mirror_path": str(path)}
    reader = (source.get("upstream") or {}).get("reader")
    if reader not in READERS:
        raise GenmetricsError(
            f"{key}: {source.get('file')} needs the data mirror ({MIRROR_HOW}, a folder laid "
            f"out like the project's data folder): no reader makes it from its upstream "
            f"{describe_upstream(source)}"
        )
    notes.append(f"{key}: {source['file']} downloaded from {describe_upstream(source)}")
    return source


def study_files(cfg: dict[str, Any], mirror: Path | None, notes: list[str]) -> None:
    """:func:`study_source` on the upstream sources of a config's other sections, in place: an
    OmniInput classifier's ``train``/``heldout`` ``source`` (its settings get the ``name`` and
    ``cache`` the job reads them with) and an agreement set's ``sources``."""
    for name, c in ((cfg.get("omniinput") or {}).get("classifiers") or {}).items():
        for part in ("train", "heldout"):
            if isinstance(c.get(part), dict) and isinstance(c[part].get("source"), dict):
                key = f"omniinput.classifiers.{name}.{part}.source"
                c[part]["source"] = study_source(c[part]["source"], key, mirror, notes)
                c.update(name=name, cache=str(cfg.get("cache", "")).rstrip("/") or None)
    for name, jset in ((cfg.get("agreement") or {}).get("sets") or {}).items():
        for file, src in (jset.get("sources") or {}).items():
            key = f"agreement.sets.{name}.sources.{file}"
            jset["sources"][file] = study_source(src, key, mirror, notes)
