"""Shaib et al. diversity scores vs the ``diversity`` 0.3.1 package (single module files)."""

from __future__ import annotations

import contextlib
import gzip
import importlib.util
import io
import json
import math
import sys
from pathlib import Path

import pytest

from genmetrics import GenmetricsError
from genmetrics.metrics import compute
from genmetrics.metrics.diversity import compressed_size

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CORPORA = [
    "webtext/face_demo_human.jsonl",
    "gpt2_generations/gpt2-small_pure_face.jsonl",
    "webtext/webtext_short.jsonl",
]


def _diversity_module(name: str):
    spec = importlib.util.find_spec("diversity")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip(
            "reference package `diversity` not installed (pip install --no-deps diversity==0.3.1)"
        )
    path = Path(spec.submodule_search_locations[0]) / f"{name}.py"
    mspec = importlib.util.spec_from_file_location(f"_oracle_diversity_{name}", path)
    mod = importlib.util.module_from_spec(mspec)
    mspec.loader.exec_module(mod)
    return mod


def _texts(rel: str, n: int = 200) -> list[str]:
    path = DATA / rel
    if not path.exists():
        pytest.skip(f"shared data not found: {path}")
    with open(path, encoding="utf-8") as f:
        return [json.loads(line)["text"] for _, line in zip(range(n), f, strict=False)]


# ------------------------------------------------------------------ compression ratio


@pytest.mark.parametrize("rel", CORPORA)
def test_compression_ratio_bytes_equal_package(rel, monkeypatch):
    """With the package's wall clock pinned (int(mtime) = 0, as we store), sizes are identical."""
    pkg = _diversity_module("compression")
    texts = _texts(rel)
    monkeypatch.setattr(gzip.time, "time", lambda: 0.5)  # int(0.5) == 0 but != 0 (no zlib path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ref = pkg.compression_ratio(texts, "gzip", verbose=True)
    monkeypatch.undo()
    sizes = dict(line.split(": ") for line in out.getvalue().strip().splitlines())
    ours = compute("compression_ratio", texts)
    assert ours.extras["original_bytes"] == int(sizes["Original Size"])
    assert ours.extras["compressed_bytes"] == int(sizes["Compressed Size"])
    assert (
        compute("compression_ratio", texts, params={"round": 3}).values["compression_ratio"] == ref
    )


@pytest.mark.parametrize("rel", CORPORA)
@pytest.mark.parametrize("algorithm", ["gzip", "xz"])
def test_compression_ratio_matches_package(rel, algorithm):
    pkg = _diversity_module("compression")
    texts = _texts(rel)
    ref = pkg.compression_ratio(texts, algorithm)
    ours = compute("compression_ratio", texts, params={"algorithm": algorithm})
    raw = ours.values["compression_ratio"]
    # the package rounds to 3 decimals; its inner gzip header holds the wall clock (±1 byte)
    assert abs(raw - ref) <= 0.0005 + 2e-4
    rounded = compute("compression_ratio", texts, params={"algorithm": algorithm, "round": 3})
    assert rounded.values["compression_ratio"] == pytest.approx(ref, abs=1.1e-3)


def test_compression_conventions_hand_computed():
    texts = ["abc abc abc", "abc"]
    data = b"abc abc abc abc"
    single = compute("compression_ratio", texts, params={"convention": "single"})
    assert single.values["compression_ratio"] == len(data) / len(gzip.compress(data, mtime=0))
    double = compute("compression_ratio", texts)
    # double gzip: outer header (10 + len("compressed\0")) + trailer 8 + deflate of the inner
    assert double.extras["compressed_bytes"] == compressed_size(data)
    assert double.extras["compressed_bytes"] > len(gzip.compress(data, mtime=0))
    assert double.values["compression_ratio"] < single.values["compression_ratio"]
    # repetitive corpora compress better than diverse ones
    rep = compute("compression_ratio", ["the cat sat on the mat"] * 50).values["compression_ratio"]
    div = compute("compression_ratio", _texts("webtext/webtext_short.jsonl", 50))
    assert rep > 5 * div.values["compression_ratio"]


def test_compression_non_ascii_counts_utf8_bytes():
    texts = ["Café über naïve", "東京 これは"]
    r = compute("compression_ratio", texts, params={"convention": "single"})
    assert r.extras["original_bytes"] == len(" ".join(texts).encode("utf-8"))
    with pytest.raises(GenmetricsError, match="algorithm"):
        compute("compression_ratio", texts, params={"algorithm": "bz2"})


# ------------------------------------------------------------------ POS compression ratio


def test_pos_compression_ratio_equals_compression_of_tags():
    pkg = _diversity_module("compression")
    from genmetrics.features.pos import tag_texts

    texts = _texts("webtext/face_demo_human.jsonl", 60)
    tags = tag_texts(texts)
    joined = [" ".join(t) for t in tags]
    ours = compute("pos_compression_ratio", tags)
    assert abs(ours.values["compression_ratio"] - pkg.compression_ratio(joined)) <= 0.0005 + 2e-4
    assert ours.extras["original_bytes"] == len(" ".join(joined).encode())
    # raw texts are tagged on the fly: same value
    assert compute("pos_compression_ratio", texts).values == ours.values
    # POS sequences are far more repetitive than the words
    words = compute("compression_ratio", texts).values["compression_ratio"]
    assert ours.values["compression_ratio"] > words
    with pytest.raises(GenmetricsError, match="not a list of tag strings"):
        compute("pos_compression_ratio", [["DT", 3]])


# ------------------------------------------------------------------ n-gram diversity


@pytest.mark.parametrize("rel", CORPORA)
def test_ngram_diversity_matches_package(rel):
    pkg = _diversity_module("ngram_diversity")
    texts = _texts(rel)
    for num_n in (4, 2):
        ref = pkg.ngram_diversity_score(texts, num_n=num_n)
        ours = compute("ngram_diversity", texts, params={"num_n": num_n}).values
        assert abs(ours["ngram_diversity"] - ref) <= 0.0005 + 1e-12
        rounded = compute("ngram_diversity", texts, params={"num_n": num_n, "round": 3}).values
        assert rounded["ngram_diversity"] == ref
        assert ours["ngram_diversity"] == pytest.approx(
            sum(ours[f"ngram_diversity_{k}"] for k in range(1, num_n + 1)), abs=1e-12
        )


def test_ngram_diversity_hand_computed():
    # tokens a b a b (joined across texts): 1-grams 2/4, 2-grams {ab, ba} 2/3, 3-grams 2/2, 4: 1/1
    v = compute("ngram_diversity", ["a b", "a b"]).values
    assert v["ngram_diversity_1"] == 0.5
    assert v["ngram_diversity_2"] == pytest.approx(2 / 3)
    assert v["ngram_diversity"] == pytest.approx(0.5 + 2 / 3 + 1 + 1)
    # single-space split keeps empty tokens, as the package: "a  b" → [a, '', b]
    v = compute("ngram_diversity", ["a  a"], params={"num_n": 1}).values
    assert v["ngram_diversity_1"] == pytest.approx(2 / 3)
    with pytest.raises(GenmetricsError, match="fewer than num_n"):
        compute("ngram_diversity", ["one two"])


# ------------------------------------------------------------------ self-repetition


@pytest.mark.parametrize("rel", CORPORA)
def test_self_repetition_matches_package(rel):
    pkg = _diversity_module("self_repetition")
    texts = _texts(rel)
    for n in (4, 2):
        ref = pkg.self_repetition_score(texts, n=n, verbose=False)
        ours = compute("self_repetition", texts, params={"n": n}).values["self_repetition"]
        assert ours == pytest.approx(ref, abs=1e-9)


def test_self_repetition_hand_computed():
    texts = ["a b c d e", "a b c d x", "q r s t u", "tiny"]
    # 4-gram "a b c d" is in 2 texts → texts 0 and 1 have Σ(df−1) = 1; others 0
    v = compute("self_repetition", texts).values["self_repetition"]
    assert v == pytest.approx(2 * math.log(2) / 4)
    # the package on the same input
    pkg = _diversity_module("self_repetition")
    assert v == pytest.approx(pkg.self_repetition_score(texts, verbose=False), abs=1e-12)
    # a one-text corpus repeats nothing across texts
    assert compute("self_repetition", ["a b c d a b c d"]).values["self_repetition"] == 0.0


# ------------------------------------------------------------------ registry / bad input


@pytest.mark.parametrize(
    "name", ["compression_ratio", "pos_compression_ratio", "ngram_diversity", "self_repetition"]
)
def test_registry_bad_input(name):
    with pytest.raises(GenmetricsError):
        compute(name, [])
    if name != "pos_compression_ratio":
        with pytest.raises(GenmetricsError, match="empty"):
            compute(name, ["fine text", "   "])
    with pytest.raises(GenmetricsError):
        compute(name, "a single string")


def test_one_text_and_non_ascii_corpora():
    one = ["Ein schöner Tag in München, très bien — 東京."]
    assert compute("compression_ratio", one).values["compression_ratio"] > 0
    assert compute("ngram_diversity", one).values["ngram_diversity"] == pytest.approx(4.0)
    assert compute("self_repetition", one).values["self_repetition"] == 0.0
    assert compute("pos_compression_ratio", one).n == {"candidate": 1}
    assert sys.getdefaultencoding() == "utf-8"
