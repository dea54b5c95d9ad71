"""Provenance records: file and model digests, code digests that follow code (not comments),
the SLURM / git environment, and the record's shape."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from genmetrics import GenmetricsError, provenance
from genmetrics.models import checkpoints as models
from genmetrics.provenance import (
    DEFAULT_PACKAGES,
    code_digest,
    environment,
    git_commit,
    input_digests,
    package_versions,
    record,
    sha256_file,
)


@pytest.fixture(autouse=True)
def _clear_caches():
    code_digest.cache_clear()
    git_commit.cache_clear()
    yield
    code_digest.cache_clear()
    git_commit.cache_clear()


# --------------------------------------------------------------------------------- files


def test_sha256_file_matches_hashlib_on_multi_mib_file(tmp_path):
    data = os.urandom(3 * (1 << 20) + 12345)  # crosses several 1 MiB blocks, ragged end
    f = tmp_path / "blob.bin"
    f.write_bytes(data)
    assert sha256_file(f) == hashlib.sha256(data).hexdigest()
    assert sha256_file(str(f)) == hashlib.sha256(data).hexdigest()
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert sha256_file(empty) == hashlib.sha256(b"").hexdigest()


def test_input_digests_file_and_list(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.npz"
    a.write_text('{"text": "x"}\n')
    b.write_bytes(b"\x00\x01\x02")
    out = input_digests({"texts": a, "shards": [str(a), b]})
    assert out["texts"] == {"path": str(a), "sha256": hashlib.sha256(a.read_bytes()).hexdigest()}
    assert out["shards"] == [
        {"path": str(a), "sha256": hashlib.sha256(a.read_bytes()).hexdigest()},
        {"path": str(b), "sha256": hashlib.sha256(b"\x00\x01\x02").hexdigest()},
    ]
    json.dumps(out)  # goes into a JSON record as it is


def test_input_digests_missing_names_key_and_path(tmp_path):
    missing = tmp_path / "nope.jsonl"
    with pytest.raises(GenmetricsError, match=r"inputs\.reference: .*nope\.jsonl"):
        input_digests({"reference": missing})
    ok = tmp_path / "ok.txt"
    ok.write_text("x")
    with pytest.raises(GenmetricsError, match=r"inputs\.shards\[1\]: .*nope\.jsonl"):
        input_digests({"shards": [ok, missing]})


def test_input_digests_plain_folder_is_refused(tmp_path):
    d = tmp_path / "results"
    d.mkdir()
    (d / "x.txt").write_text("x")
    with pytest.raises(GenmetricsError, match=r"inputs\.outdir: .*not a model folder"):
        input_digests({"outdir": d})


@pytest.fixture(scope="module")
def tiny_folder(tmp_path_factory) -> Path:
    from genmetrics.testing.tiny_lm import save_tiny_model

    return save_tiny_model(tmp_path_factory.mktemp("prov") / "tiny")


def test_input_digests_model_folder_and_manifest(tiny_folder, tmp_path):
    want = models.folder_sha256(tiny_folder)
    assert len(want) == 64
    out = input_digests({"model": tiny_folder})
    assert out["model"] == {"path": str(tiny_folder), "sha256": want}

    manifest = models.prepare_model(
        "tiny", {"source": {"kind": "local", "path": str(tiny_folder)}}, tmp_path / "models"
    )
    assert manifest.name == models.MANIFEST
    out = input_digests({"model": manifest, "model_dir": manifest.parent})
    assert out["model"] == {
        "path": str(manifest),
        "sha256": hashlib.sha256(manifest.read_bytes()).hexdigest(),
        "weights_sha256": want,
    }
    assert out["model_dir"]["weights_sha256"] == want
    assert out["model_dir"]["sha256"] == out["model"]["sha256"]


def test_manifest_weights_hash_follows_the_weights_not_the_manifest(tiny_folder, tmp_path):
    folder = shutil.copytree(tiny_folder, tmp_path / "copy")
    manifest = models.prepare_model(
        "tiny", {"source": {"kind": "local", "path": str(folder)}}, tmp_path / "models"
    )
    before = input_digests({"m": manifest})["m"]
    weights = folder / "model.safetensors"
    raw = bytearray(weights.read_bytes())
    raw[-1] ^= 0xFF  # change one weight byte in place; the manifest is untouched
    weights.write_bytes(bytes(raw))
    after = input_digests({"m": manifest})["m"]
    assert after["sha256"] == before["sha256"]
    assert after["weights_sha256"] != before["weights_sha256"]
    assert after["weights_sha256"] == models.folder_sha256(folder)


def test_manifest_pointing_at_missing_folder_names_key(tmp_path):
    manifest = tmp_path / models.MANIFEST
    manifest.write_text(json.dumps({"name": "x", "path": str(tmp_path / "gone")}))
    with pytest.raises(GenmetricsError, match=r"inputs\.model: "):
        input_digests({"model": manifest})


# --------------------------------------------------------------------------------- code


A_SRC = '''"""Module a."""
from __future__ import annotations

import json

from pkgx.metrics import _b
from pkgx.util import helper


def score(x):
    """Score."""
    # a comment
    return _b.twice(x) + 1
'''

B_SRC = '''"""Module _b."""


def twice(x):
    return 2 * x
'''


@pytest.fixture
def pkgx(tmp_path, monkeypatch):
    """A throwaway package ``pkgx`` on sys.path: ``pkgx.metrics.{a,_b}`` and ``pkgx.util``."""
    root = tmp_path / "src"
    metrics = root / "pkgx" / "metrics"
    metrics.mkdir(parents=True)
    (root / "pkgx" / "__init__.py").write_text("")
    (root / "pkgx" / "util.py").write_text("def helper():\n    return 1\n")
    (metrics / "__init__.py").write_text('"""Metrics."""\n')
    (metrics / "a.py").write_text(A_SRC)
    (metrics / "_b.py").write_text(B_SRC)
    monkeypatch.syspath_prepend(str(root))
    importlib.invalidate_caches()
    yield metrics
    for name in [m for m in sys.modules if m == "pkgx" or m.startswith("pkgx.")]:
        del sys.modules[name]


def _digest_after(path: Path, text: str) -> str:
    path.write_text(text)
    code_digest.cache_clear()
    return code_digest("pkgx.metrics.a")


def test_code_digest_follows_subpackage_imports_only(pkgx):
    assert "pkgx" not in sys.modules  # found by path, not imported
    assert sorted(provenance._closure("pkgx.metrics.a")) == ["pkgx.metrics._b", "pkgx.metrics.a"]
    base = code_digest("pkgx.metrics.a")
    assert len(base) == 16 and int(base, 16) >= 0
    assert code_digest("pkgx.metrics.a") == base  # cached, same
    assert "pkgx" not in sys.modules

    # comments, docstrings, formatting: same digest
    cosmetic = (
        A_SRC.replace('"""Module a."""', '"""Module a, documented at length."""')
        .replace('"""Score."""', '"""Score x: twice plus one."""')
        .replace("# a comment", "# another comment\n    # and more")
        .replace("return _b.twice(x) + 1", "return (\n        _b.twice( x )\n        + 1\n    )")
    )
    assert _digest_after(pkgx / "a.py", cosmetic) == base
    assert _digest_after(pkgx / "_b.py", B_SRC.replace("Module _b.", "Doubles.")) == base

    # a code change in a or in the imported _b: new digest
    assert _digest_after(pkgx / "a.py", A_SRC.replace("+ 1", "+ 2")) != base
    assert _digest_after(pkgx / "a.py", A_SRC) == base
    assert _digest_after(pkgx / "_b.py", B_SRC.replace("2 * x", "x * 2")) != base
    assert _digest_after(pkgx / "_b.py", B_SRC) == base

    # pkgx.util (outside pkgx.metrics) and json are not followed
    (pkgx.parent / "util.py").write_text("def helper():\n    return 999\n")
    code_digest.cache_clear()
    assert code_digest("pkgx.metrics.a") == base


def test_code_digest_relative_imports_and_function_level_imports(pkgx):
    (pkgx / "a.py").write_text(A_SRC.replace("from pkgx.metrics import _b", "from . import _b"))
    (pkgx / "c.py").write_text("def f(x):\n    from ._b import twice\n\n    return twice(x)\n")
    assert sorted(provenance._closure("pkgx.metrics.a")) == ["pkgx.metrics._b", "pkgx.metrics.a"]
    assert sorted(provenance._closure("pkgx.metrics.c")) == ["pkgx.metrics._b", "pkgx.metrics.c"]
    a0, c0 = code_digest("pkgx.metrics.a"), code_digest("pkgx.metrics.c")
    (pkgx / "_b.py").write_text(B_SRC.replace("2 * x", "3 * x"))
    code_digest.cache_clear()
    assert code_digest("pkgx.metrics.a") != a0
    assert code_digest("pkgx.metrics.c") != c0


def test_code_digest_several_modules_is_order_free(pkgx):
    (pkgx / "c.py").write_text("def f():\n    return 0\n")
    ac = code_digest("pkgx.metrics.a", "pkgx.metrics.c")
    assert code_digest("pkgx.metrics.c", "pkgx.metrics.a") == ac
    assert ac not in (code_digest("pkgx.metrics.a"), code_digest("pkgx.metrics.c"))


def test_code_digest_never_follows_a_top_level_module(pkgx):
    """A top-level module (the shared infrastructure) is in no closure but its own; a root
    follows its subpackage imports wherever it lies."""
    (pkgx.parent / "top.py").write_text("from pkgx.metrics import a\n\nX = 1\n")
    assert sorted(provenance._closure("pkgx.top")) == [
        "pkgx.metrics._b",
        "pkgx.metrics.a",
        "pkgx.top",
    ]
    (pkgx / "c.py").write_text("from pkgx import top\n\n\ndef f():\n    return top.X\n")
    assert sorted(provenance._closure("pkgx.metrics.c")) == ["pkgx.metrics.c"]
    c0 = code_digest("pkgx.metrics.c")
    (pkgx.parent / "top.py").write_text("from pkgx.metrics import a\n\nX = 2\n")
    code_digest.cache_clear()
    assert code_digest("pkgx.metrics.c") == c0


def test_code_digest_stops_at_a_boundary_module(pkgx):
    """A module marked ``CODE_DIGEST_BOUNDARY = True`` is not followed (its own digest still
    covers it); unmarked, the same module is followed."""
    (pkgx.parent / "io").mkdir()
    (pkgx.parent / "io" / "__init__.py").write_text("")
    fetch = pkgx.parent / "io" / "fetch.py"
    fetch.write_text("CODE_DIGEST_BOUNDARY = True\n\n\ndef get():\n    return 1\n")
    (pkgx / "c.py").write_text("from pkgx.io.fetch import get\n\n\ndef f():\n    return get()\n")
    assert sorted(provenance._closure("pkgx.metrics.c")) == ["pkgx.metrics.c"]
    assert sorted(provenance._closure("pkgx.io.fetch")) == ["pkgx.io.fetch"]
    fetch.write_text("def get():\n    return 1\n")
    assert sorted(provenance._closure("pkgx.metrics.c")) == ["pkgx.io.fetch", "pkgx.metrics.c"]


def test_code_digest_is_the_same_after_a_module_moves(pkgx):
    """Moving ``_b`` to another subpackage, its importer's import line changed accordingly and
    a string naming it too: the same digest (renaming the file would change the name its
    importers import, a code change). A code change after the move: a new digest."""
    (pkgx / "c.py").write_text(
        "from pkgx.metrics import _b\n\nNAME = 'pkgx.metrics._b'\n\n\ndef f(x):\n"
        "    return _b.twice(x)\n"
    )
    before = code_digest("pkgx.metrics.c")
    (pkgx.parent / "kernels").mkdir()
    (pkgx.parent / "kernels" / "__init__.py").write_text("")
    (pkgx.parent / "kernels" / "_b.py").write_text((pkgx / "_b.py").read_text())
    (pkgx / "_b.py").unlink()
    (pkgx / "c.py").write_text(
        "from pkgx.kernels import _b\n\nNAME = 'pkgx.kernels._b'\n\n\n"
        "def f(x):\n    return _b.twice(x)\n"
    )
    code_digest.cache_clear()
    assert sorted(provenance._closure("pkgx.metrics.c")) == ["pkgx.kernels._b", "pkgx.metrics.c"]
    assert code_digest("pkgx.metrics.c") == before
    (pkgx.parent / "kernels" / "_b.py").write_text(B_SRC.replace("2 * x", "3 * x"))
    code_digest.cache_clear()
    assert code_digest("pkgx.metrics.c") != before


def test_code_digest_unknown_module():
    with pytest.raises(GenmetricsError, match="no_such_module_xyz"):
        code_digest("genmetrics.metrics.no_such_module_xyz")


def test_code_digest_real_metrics():
    pr = code_digest("genmetrics.metrics.precision_recall")
    assert code_digest("genmetrics.metrics.precision_recall") == pr
    code_digest.cache_clear()
    assert code_digest("genmetrics.metrics.precision_recall") == pr  # recomputed, same
    assert code_digest("genmetrics.metrics.mauve") != pr
    closure = provenance._closure("genmetrics.metrics.precision_recall")
    assert {"genmetrics.metrics._knn_exact", "genmetrics.metrics.registry"} <= set(closure)
    # no top-level module (io, npz, paths, ...) and no boundary module (fetching) is followed
    assert all(m.count(".") >= 2 for m in closure)
    generation = provenance._closure("genmetrics.generation.transformers_backend")
    assert "genmetrics.data.prompts" in generation and "genmetrics.data.words" in generation
    assert not {"genmetrics.data.sources", "genmetrics.models.checkpoints"} & set(generation)


# --------------------------------------------------------------------------------- environment


_SLURM_ENV = (
    "SLURM_JOB_ID",
    "SLURM_ARRAY_JOB_ID",
    "SLURM_JOB_PARTITION",
    "SLURM_JOB_NODELIST",
    "SLURM_JOB_GPUS",
    "SLURM_STEP_GPUS",
    "SLURM_CLUSTER_NAME",
)


def test_environment_outside_and_inside_slurm(monkeypatch):
    for var in _SLURM_ENV:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    env = environment()
    assert set(env) == {
        "host",
        "platform",
        "python",
        "slurm",
        "cuda_visible_devices",
        "gpus",
        "git",
    }
    assert env["slurm"] is None
    assert env["cuda_visible_devices"] == "2,3"
    assert env["python"] == ".".join(map(str, sys.version_info[:3]))
    if "torch" not in sys.modules:
        assert env["gpus"] == []

    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    monkeypatch.setenv("SLURM_JOB_PARTITION", "gpu-a100")
    monkeypatch.setenv("SLURM_STEP_GPUS", "0")
    assert environment()["slurm"] == {"job_id": "4242", "partition": "gpu-a100", "gpus": "0"}


def test_environment_does_not_import_torch():
    code = (
        "import sys; from genmetrics.provenance import environment; e = environment(); "
        "assert 'torch' not in sys.modules, 'torch imported'; assert e['gpus'] == []"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    )
    return done.stdout.strip()


def test_git_commit_in_a_temporary_repo(tmp_path, monkeypatch):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "f.txt").write_text("one\n")
    _git(repo, "add", "f.txt")
    _git(repo, "commit", "-q", "-m", "first")
    head = _git(repo, "rev-parse", "HEAD")
    assert git_commit(repo) == {"commit": head, "dirty": False}

    (repo / "untracked.txt").write_text("not counted\n")
    git_commit.cache_clear()
    assert git_commit(repo) == {"commit": head, "dirty": False}

    (repo / "f.txt").write_text("two\n")
    assert git_commit(repo)["dirty"] is False  # cached per process
    git_commit.cache_clear()
    assert git_commit(str(repo)) == {"commit": head, "dirty": True}

    # the default repo comes from $GENMETRICS_REPO, and environment() carries it
    monkeypatch.setenv("GENMETRICS_REPO", str(repo))
    git_commit.cache_clear()
    assert environment()["git"] == {"commit": head, "dirty": True}

    plain = tmp_path / "plain"
    plain.mkdir()
    git_commit.cache_clear()
    assert git_commit(plain) is None
    assert git_commit(tmp_path / "does-not-exist") is None


def test_git_commit_default_is_this_checkout(monkeypatch):
    monkeypatch.delenv("GENMETRICS_REPO", raising=False)
    root = Path(provenance.__file__).resolve().parents[2]
    if not (root / ".git").exists() or shutil.which("git") is None:
        pytest.skip("genmetrics is not run from a git checkout")
    got = git_commit()
    assert got is not None
    assert got["commit"] == _git(root, "rev-parse", "HEAD")
    assert isinstance(got["dirty"], bool)


# --------------------------------------------------------------------------------- record


def test_package_versions():
    import numpy

    v = package_versions()
    assert v["python"] == ".".join(map(str, sys.version_info[:3]))
    assert v["numpy"] == numpy.__version__
    assert "genmetrics" in v
    assert set(v) <= {"python", *DEFAULT_PACKAGES}
    assert package_versions(("numpy", "surely-not-installed-pkg")) == {
        "python": v["python"],
        "numpy": numpy.__version__,
    }


def test_record(tmp_path):
    f = tmp_path / "gen.jsonl"
    f.write_text("{}\n")
    config = {"metric": "mauve", "params": {"k": 5}}
    before = datetime.now(timezone.utc).replace(microsecond=0)
    rec = record(config=config, inputs={"generations": f}, packages=("numpy",))
    assert set(rec) == {"config", "inputs", "versions", "environment", "time"}
    assert rec["config"] == config
    assert rec["inputs"]["generations"]["sha256"] == hashlib.sha256(b"{}\n").hexdigest()
    assert set(rec["versions"]) == {"python", "numpy"}
    assert set(rec["environment"]) >= {"host", "slurm", "git"}
    t = datetime.fromisoformat(rec["time"])
    assert t.utcoffset() is not None and t.utcoffset().total_seconds() == 0
    assert before <= t <= datetime.now(timezone.utc)
    json.dumps(rec)


def test_script_digest_follows_the_script_code_not_its_docstring(tmp_path):
    """A workflow script's digest (the params value ``script_code``): the same with another
    docstring or comment, another with other code or another imported module."""
    from genmetrics.provenance import script_digest

    script = tmp_path / "s.py"
    body = "from genmetrics.analysis.sample_size import sample_sizes\n\nx = sample_sizes\n"
    script.write_text('"""One docstring."""\n' + body)
    first = script_digest(script)
    script.write_text('"""Another docstring."""\n# a comment\n' + body)
    assert script_digest(script) == first
    script.write_text(body.replace("x = ", "y = "))
    assert script_digest(script) != first
    script.write_text(
        body.replace("analysis.sample_size import sample_sizes", "io import write_csv")
    )
    assert script_digest(script) != first
