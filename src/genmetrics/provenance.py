"""Provenance: where a result came from, and digests of the code that made it.

:func:`record` is what a score JSON, a feature file or generation stats carry: the config as
given, the sha256 of every input (model folders by content, model manifests with the content
hash of the weights they point at), package versions, the host / SLURM job / GPUs it ran on
and the git commit of the checkout.

:func:`code_digest` is a Snakemake ``params:`` value: a hash of the *code* (the ``ast`` with
docstrings dropped, so comments, docstrings and formatting do not count) of named modules and
every subpackage module they import, so a rule reruns when that code changes, and only then:
not when a module moves.
"""

from __future__ import annotations

import ast
import atexit
import functools
import hashlib
import importlib.machinery
import importlib.metadata as md
import importlib.util
import json
import os
import platform
import re
import socket
import subprocess
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError, __version__
from genmetrics.data.sources import sha256_file
from genmetrics.models.checkpoints import MANIFEST, folder_sha256, model_fingerprint

#: packages whose versions :func:`record` stores
DEFAULT_PACKAGES = (
    "genmetrics",
    "numpy",
    "scipy",
    "scikit-learn",
    "torch",
    "transformers",
    "accelerate",
)

#: SLURM variables stored by :func:`environment`: record key -> variables, first one set wins
_SLURM_VARS = {
    "job_id": ("SLURM_JOB_ID",),
    "array_job_id": ("SLURM_ARRAY_JOB_ID",),
    "partition": ("SLURM_JOB_PARTITION",),
    "nodelist": ("SLURM_JOB_NODELIST",),
    "gpus": ("SLURM_JOB_GPUS", "SLURM_STEP_GPUS"),
    "cluster": ("SLURM_CLUSTER_NAME",),
}


# ---------------------------------------------------------------------------------------------
# inputs


def _path_digest(key: str, path: str | Path) -> dict[str, Any]:
    """``{"path", "sha256"}`` of one input; model manifests add ``weights_sha256``."""
    p = Path(path)
    if not p.exists():
        raise GenmetricsError(f"inputs.{key}: {p} not found")
    try:
        if p.is_dir():
            if (p / "config.json").is_file():  # an HF model folder: hashed by content
                return {"path": str(path), "sha256": folder_sha256(p)}
            if (p / MANIFEST).is_file():  # a prepared model's folder: its manifest
                return {
                    "path": str(path),
                    "sha256": sha256_file(p / MANIFEST),
                    "weights_sha256": model_fingerprint(p),
                }
            raise GenmetricsError(
                f"inputs.{key}: {p} is a folder but not a model folder (no config.json "
                f"or {MANIFEST}); name its files instead"
            )
        out: dict[str, Any] = {"path": str(path), "sha256": sha256_file(p)}
        if p.name == MANIFEST:
            out["weights_sha256"] = model_fingerprint(p)
        return out
    except GenmetricsError as e:
        if str(e).startswith(f"inputs.{key}:"):
            raise
        raise GenmetricsError(f"inputs.{key}: {p}: {e}") from None
    except (OSError, ValueError, KeyError) as e:  # unreadable file, bad manifest JSON
        raise GenmetricsError(f"inputs.{key}: {p}: {type(e).__name__}: {e}") from None


def input_digests(
    inputs: Mapping[str, str | Path | Sequence[str | Path]],
) -> dict[str, Any]:
    """sha256 of each named input: ``{"path", "sha256"}`` for a path, a list of those for a
    list of paths. An HF model folder (``config.json``) is hashed by
    :func:`genmetrics.models.checkpoints.folder_sha256`; a model manifest (``model.json``, or a folder
    holding one) adds ``weights_sha256``, the content hash of the weights it points at
    (:func:`genmetrics.models.checkpoints.model_fingerprint`). A missing path raises
    :class:`GenmetricsError` naming the key."""
    out: dict[str, Any] = {}
    for key, value in inputs.items():
        if isinstance(value, (str, os.PathLike)):
            out[key] = _path_digest(key, value)
        else:
            out[key] = [_path_digest(f"{key}[{i}]", v) for i, v in enumerate(value)]
    return out


# ---------------------------------------------------------------------------------------------
# code digests


def _find_spec(name: str) -> importlib.machinery.ModuleSpec | None:
    """The spec of module ``name``, found on the parents' search paths without importing them
    (an already imported module gives its own spec)."""
    mod = sys.modules.get(name)
    if mod is not None and getattr(mod, "__spec__", None) is not None:
        return mod.__spec__
    parts = name.split(".")
    try:
        spec = importlib.util.find_spec(parts[0])
    except (ImportError, ValueError):
        return None
    for i in range(1, len(parts)):
        if spec is None or spec.submodule_search_locations is None:
            return None
        try:
            spec = importlib.machinery.PathFinder.find_spec(
                ".".join(parts[: i + 1]), list(spec.submodule_search_locations)
            )
        except (ImportError, ValueError):
            return None
    return spec


def _is_package(spec: importlib.machinery.ModuleSpec) -> bool:
    return spec.submodule_search_locations is not None


def _source_file(spec: importlib.machinery.ModuleSpec | None) -> Path | None:
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    return Path(spec.origin)


def _strip_docstrings(tree: ast.AST) -> ast.AST:
    """Drop the docstring of the module and of every class and function (in place)."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                node.body = body[1:]
    return tree


def _imports(tree: ast.AST, name: str, is_package: bool) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of each import in a module (``names`` empty for ``import a.b``),
    relative imports resolved against ``name``."""
    package = name if is_package else name.rpartition(".")[0]
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((alias.name, []) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".") if package else []
                if node.level - 1 >= len(base):
                    continue  # beyond the top-level package
                base = base[: len(base) - (node.level - 1)]
                module = ".".join(base + ([module] if module else []))
            if module:
                found.append((module, [alias.name for alias in node.names]))
    return found


#: a module whose code says ``CODE_DIGEST_BOUNDARY = True`` moves bytes without deciding a value
#: (fetching and unpacking pinned files, progress logs): a digest does not follow it
BOUNDARY_MARK = "CODE_DIGEST_BOUNDARY"


def _followed(module: str, package: str) -> bool:
    """Whether a digest of a module of ``package`` follows an import of ``module``: a module
    of one of the package's subpackages (``genmetrics.metrics.registry``,
    ``genmetrics.data.words``), never a top-level module (``genmetrics.io``,
    ``genmetrics.paths``: the infrastructure every stage shares) nor the package itself."""
    parts = module.split(".")
    if parts[0] != package or len(parts) < 2:
        return False
    if len(parts) == 2:
        spec = _find_spec(module)
        return spec is not None and _is_package(spec)
    return True


class _PathFree(ast.NodeTransformer):
    """Takes the module paths out of the code of a module of ``package``: every import of one
    of the package's modules names the package alone (what it imports keeps its name), and a
    string that is a dotted module name of the package becomes ``<package>.<module>``. The
    imported modules' own code is in the digest, so moving a module to another folder changes
    no digest, and a change of its code still does (renaming one changes the name its
    importers import: a change of their code)."""

    def __init__(self, package: str) -> None:
        self.package = package
        self.dotted = re.compile(rf"{re.escape(package)}(?:\.[A-Za-z_]\w*)+")

    def visit_Import(self, node: ast.Import) -> ast.AST:
        for alias in node.names:
            if alias.name.split(".")[0] == self.package:
                alias.name = self.package
        return node

    def visit_ImportFrom(self, node: ast.ImportFrom) -> ast.AST:
        if node.level or (node.module or "").split(".")[0] == self.package:
            node.module, node.level = self.package, 0
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, str) and self.dotted.fullmatch(node.value):
            node.value = f"{self.package}.<module>"
        return node


def _module_code(
    name: str, files: dict[str, Any] | None = None
) -> tuple[str, tuple[tuple[str, tuple[str, ...]], ...], bool] | None:
    """``(normalised code, imports, boundary)`` of module ``name`` (:func:`_parse_module`), or None when it has no Python source (a name imported from a module).
    The file is read every time; its parse is cached by content (:func:`_parse_module`).
    ``files`` records ``name -> [path, sha256 of the text]`` (None: no source)."""
    spec = _find_spec(name)
    path = _source_file(spec)
    if path is None:
        if files is not None:
            files[name] = None
        return None
    text = path.read_text(encoding="utf-8")
    if files is not None:
        files[name] = [str(path), _sha256_text(text)]
    return _parse_module(name, text, str(path), _is_package(spec))


def _sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=4096)
def _parse_module(
    name: str, text: str, filename: str, is_package: bool
) -> tuple[str, tuple[tuple[str, tuple[str, ...]], ...], bool]:
    """The parse of one module's source ``text``, cached by content (the closures of several
    digests share their modules, and an edited file is parsed again): the code without
    docstrings and module paths (:class:`_PathFree`), its imports, and whether it marks itself
    a boundary (:data:`BOUNDARY_MARK`)."""
    tree = _strip_docstrings(ast.parse(text, filename=filename))
    imports = tuple((m, tuple(n)) for m, n in _imports(tree, name, is_package))
    boundary = any(
        isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == BOUNDARY_MARK for t in node.targets)
        for node in tree.body
    )
    return ast.dump(_PathFree(name.split(".")[0]).visit(tree)), imports, boundary


def _closure(name: str, seen: dict[str, Any] | None = None) -> dict[str, str]:
    """Module name -> normalised code (:func:`_parse_module`) of ``name`` and of every module
    of the package's subpackages it imports (at any depth of the code), recursively, except
    boundary modules (:data:`BOUNDARY_MARK`) and the top-level modules (:func:`_followed`).
    The set depends on the code alone, not on where a module lies among the subpackages.
    ``seen``, when given, collects what the result depends on (:func:`_fingerprint`): each
    module's file and the sha256 of its text, and whether each name probed has a source."""
    package = name.split(".")[0]
    done: dict[str, str] = {}
    todo = [name]
    files = seen.setdefault("files", {}) if seen is not None else {}
    probes = seen.setdefault("probes", {}) if seen is not None else {}
    while todo:
        current = todo.pop()
        if current in done:
            continue
        module_code = _module_code(current, files)
        if module_code is None:
            if current == name:
                raise GenmetricsError(f"code_digest: no Python source found for module {name!r}")
            continue  # a name imported from a module, not a module itself
        code, imports, boundary = module_code
        if boundary and current != name:
            continue
        done[current] = code
        for module, names in imports:
            if not _followed(module, package):
                continue
            # ``from pkg import sub`` follows the submodule, not pkg/__init__.py; a name that
            # is not a submodule (a function, a class) follows the module defining it
            subs = [f"{module}.{n}" for n in names if n != "*"]
            found = [m for m in subs if _probe(m, probes)]
            todo.extend(found)
            if not names or len(found) < len(names):
                todo.append(module)
    return done


def _probe(name: str, probes: dict[str, bool]) -> bool:
    """Whether module ``name`` has a Python source file (recorded in ``probes``)."""
    probes[name] = _source_file(_find_spec(name)) is not None
    return probes[name]


@functools.cache
def code_digest(*modules: str) -> str:
    """sha256 (first 16 hex characters) over the sorted sha256s of the code (``ast.dump``
    without docstrings and module paths: :class:`_PathFree`) of the named modules and,
    recursively, of the subpackages' modules they import (:func:`_closure`). Comments,
    docstrings, formatting and where a module lies do not change it; any code change does
    (names are not hashed: moving or renaming a module reruns nothing). Cached per process, and between processes in
    ``$GENMETRICS_CACHE/code_digests.json`` (:func:`_stored_digest`): a stored digest is used
    only when every file it was computed from still has the same path and sha256, and every
    name probed still resolves the same way (its fingerprint)."""
    if not modules:
        raise GenmetricsError("code_digest: name at least one module")
    stored = _stored_digest(modules)
    if stored is not None:
        return stored
    seen: dict[str, Any] = {}
    code: dict[str, str] = {}
    for name in modules:
        code.update(_closure(name, seen))
    h = hashlib.sha256()
    for module in sorted(_sha256_text(c) for c in code.values()):
        h.update(f"{module}\n".encode())
    digest = h.hexdigest()[:16]
    _store_digest(modules, seen, digest)
    return digest


def script_digest(path: str | Path) -> str:
    """sha256 (first 16 hex characters) of a workflow script's code (docstrings left out) and
    of :func:`code_digest` of the ``genmetrics`` modules it imports (``from P import m``: module
    ``P.m`` where it is one): a rule's params value, so a code change reruns its jobs and a
    module's move does not."""
    tree = _strip_docstrings(ast.parse(Path(path).read_text(encoding="utf-8")))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("genmetrics"):
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("genmetrics"))
    modules = sorted(m for m in found if _source_file(_find_spec(m)) is not None)
    h = hashlib.sha256(ast.dump(tree).encode())
    h.update(code_digest(*modules).encode() if modules else b"")
    return h.hexdigest()[:16]


#: the file of remembered code digests, under ``$GENMETRICS_CACHE``
DIGEST_STORE = "code_digests.json"


@functools.cache
def _digest_context() -> str:
    """What every stored digest also depends on: the Python version (``ast.dump``'s format)
    and this module's own code (the digest's algorithm)."""
    own = Path(__file__).read_text(encoding="utf-8")
    return _sha256_text(f"{sys.version}\0{own}")


def _store_path() -> Path | None:
    cache = os.environ.get("GENMETRICS_CACHE")
    return Path(cache, DIGEST_STORE) if cache else None


_store: dict[str, Any] | None = None  # the store as read (once per process), with our entries
_store_dirty = False


def _load_store() -> dict[str, Any]:
    global _store
    if _store is None:
        path = _store_path()
        _store = {}
        if path is not None and path.is_file():
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                data = None  # a damaged store is recomputed, never trusted
            if isinstance(data, dict) and data.get("context") == _digest_context():
                entries = data.get("digests")
                _store = entries if isinstance(entries, dict) else {}
    return _store


def _fingerprint_holds(entry: Any) -> bool:
    """Whether the files and probes a stored digest was computed from are unchanged."""
    try:
        for name, recorded in entry["files"].items():
            path = _source_file(_find_spec(name))
            if recorded is None or path is None:
                if recorded is not None or path is not None:
                    return False
                continue
            if str(path) != recorded[0]:
                return False
            if _sha256_text(path.read_text(encoding="utf-8")) != recorded[1]:
                return False
        for name, has_source in entry["probes"].items():
            if (_source_file(_find_spec(name)) is not None) != has_source:
                return False
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OSError):
        return False
    return True


def _stored_digest(modules: tuple[str, ...]) -> str | None:
    if _store_path() is None:
        return None
    entry = _load_store().get("\0".join(modules))
    if isinstance(entry, dict) and isinstance(entry.get("digest"), str):
        if _fingerprint_holds(entry):
            return entry["digest"]
    return None


def _store_digest(modules: tuple[str, ...], seen: dict[str, Any], digest: str) -> None:
    """Remember a computed digest with its fingerprint; the store is written when the
    process exits (once, atomically; a concurrent writer's entries may be lost, which only
    costs their recomputation)."""
    global _store_dirty
    if _store_path() is None:
        return
    _load_store()["\0".join(modules)] = {**seen, "digest": digest}
    if not _store_dirty:
        _store_dirty = True
        atexit.register(_write_store)


def _write_store() -> None:
    global _store_dirty
    path = _store_path()
    if path is None or not _store_dirty:
        return
    from genmetrics.io import write_text

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = {"context": _digest_context(), "digests": _store}
        write_text(path, json.dumps(payload, sort_keys=True) + "\n")
    except OSError:
        pass  # a read-only cache: digests are computed again next time
    _store_dirty = False


# ---------------------------------------------------------------------------------------------
# environment


def _default_repo() -> Path | None:
    """``$GENMETRICS_REPO``, else the first folder above this file that holds ``.git``."""
    env = os.environ.get("GENMETRICS_REPO")
    if env:
        return Path(env)
    for parent in Path(__file__).resolve().parents:
        if (parent / ".git").exists():
            return parent
    return None


def _git(repo: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(repo), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


@functools.cache
def git_commit(repo: str | Path | None = None) -> dict[str, Any] | None:
    """``{"commit", "dirty"}`` of the checkout at ``repo`` (default: ``$GENMETRICS_REPO``, else
    the checkout holding the genmetrics source); dirty means tracked files changed. ``None``
    when git is missing or ``repo`` is not a git checkout. Cached per process."""
    path = Path(repo) if repo is not None else _default_repo()
    if path is None:
        return None
    head = _git(path, "rev-parse", "HEAD")
    if not head:
        return None
    status = _git(path, "status", "--porcelain", "--untracked-files=no")
    return {"commit": head.strip(), "dirty": bool(status.strip()) if status is not None else None}


def _slurm() -> dict[str, str] | None:
    out = {}
    for key, names in _SLURM_VARS.items():
        value = next((os.environ[n] for n in names if os.environ.get(n)), None)
        if value is not None:
            out[key] = value
    return out or None


def _gpu_names() -> list[str]:
    """Names of the CUDA devices, only when torch is already imported (never imports it)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return []
    try:
        if not torch.cuda.is_available():
            return []
        return [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    except Exception:  # a broken driver must not fail the job that records it
        return []


def environment() -> dict[str, Any]:
    """Where this process runs: host, platform, Python, SLURM job (``None`` outside SLURM),
    ``CUDA_VISIBLE_DEVICES``, GPU names (when torch is loaded) and the git commit."""
    return {
        "host": socket.gethostname(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "slurm": _slurm(),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES"),
        "gpus": _gpu_names(),
        "git": git_commit(),
    }


def package_versions(packages: Sequence[str] = DEFAULT_PACKAGES) -> dict[str, str]:
    """Installed versions of ``packages`` (missing ones skipped) and of Python."""
    out = {"python": platform.python_version()}
    for pkg in packages:
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            if pkg == "genmetrics":  # run from a source tree that is not installed
                out[pkg] = __version__
    return out


#: reference packages a metric may run (import name -> distribution); a score records the
#: versions of those its job imported (:func:`loaded_packages`)
REFERENCE_PACKAGES = {
    "sacrebleu": "sacrebleu",
    "rouge_score": "rouge-score",
    "nltk": "nltk",
    "faiss": "faiss-cpu",
    "sklearn": "scikit-learn",
    "scipy": "scipy",
    "bert_score": "bert-score",
    "sentence_transformers": "sentence-transformers",
    "mauve": "mauve-text",
    "prdc": "prdc",
    "lexical_diversity": "lexical-diversity",
    "diversity": "diversity",
    "tiktoken": "tiktoken",
    "pynndescent": "pynndescent",
    "hnswlib": "hnswlib",
}


def loaded_packages(candidates: Mapping[str, str] = REFERENCE_PACKAGES) -> list[str]:
    """Distributions of ``candidates`` whose module this process has imported (what a job
    actually ran), sorted."""
    return sorted({dist for mod, dist in candidates.items() if mod in sys.modules})


def record(
    *,
    config: Mapping[str, Any],
    inputs: Mapping[str, str | Path | Sequence[str | Path]],
    packages: Sequence[str] = DEFAULT_PACKAGES,
) -> dict[str, Any]:
    """The provenance of a result: config as given, input digests, package versions,
    environment and the UTC time (ISO 8601) it was recorded."""
    return {
        "config": dict(config),
        "inputs": input_digests(inputs),
        "versions": package_versions(packages),
        "environment": environment(),
        "time": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
