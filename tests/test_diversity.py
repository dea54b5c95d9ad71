"""Shaib et al. diversity scores vs the ``diversity`` 0.3.1 package (single module files)."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import math
import sys
from pathlib import Path

import pytest

from genmetrics import GenmetricsError
from genmetrics.metrics import compute
from genmetrics.metrics.diversity import _MTIME, compressed_size, pos_compression_ratio

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
CORPORA = [
    "webtext/face_demo_human.jsonl",
    "gpt2_generations/gpt2-small_pure_face.jsonl",
    "webtext/webtext_short.jsonl",
]
# the example corpus of the package's README (compression_ratio there: 1.141)
README = [
    "The quick brown fox jumps over the lazy dog.",
    "The quick brown fox jumps over the lazy dog again.",
    "Suddenly, the quick brown fox leaps swiftly over the sleeping dog.",
]


def _diversity_module(name: str):
    from genmetrics.studies.shaib_diversity.runtime_scores import package_module

    mod = package_module(name)  # the module file alone (the package's __init__ needs spaCy...)
    if mod is None:
        pytest.skip(
            "reference package `diversity` not installed (pip install --no-deps diversity==0.3.1)"
        )
    return mod


def _texts(rel: str, n: int = 200) -> list[str]:
    path = DATA / rel
    if not path.exists():
        pytest.skip(f"shared data not found: {path}")
    with open(path, encoding="utf-8") as f:
        return [json.loads(line)["text"] for _, line in zip(range(n), f, strict=False)]


# ------------------------------------------------------------------ compression ratio


def _package_sizes(pkg, texts, algorithm="gzip") -> tuple[float, int, int]:
    """The package's ratio and its printed original / compressed sizes."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        ref = pkg.compression_ratio(texts, algorithm, verbose=True)
    sizes = dict(line.split(": ") for line in out.getvalue().strip().splitlines())
    return ref, int(sizes["Original Size"]), int(sizes["Compressed Size"])


def _small_corpora() -> dict[str, list[str]]:
    web = _texts("webtext/webtext_short.jsonl", 10)
    return {
        "readme": README,
        "readme_with_empty": README[:2] + [""] + README[2:],
        "two_sentences": ["I like green apples.", "She prefers red grapes and pears."],
        "one_web_text": web[:1],
        "three_web_texts": web[:3],
        "ten_web_texts": web,
    }


def test_compression_ratio_readme_example_equals_package(tmp_path, monkeypatch):
    """The package's own example, against its real clock: 162 bytes → 142, ratio 1.141."""
    pkg = _diversity_module("compression")
    monkeypatch.chdir(tmp_path)  # the package writes its files under a temporary directory
    ours = compute("compression_ratio", README, params={"round": 3})
    assert pkg.compression_ratio(README) == 1.141
    assert ours.values["compression_ratio"] == 1.141
    assert (ours.extras["original_bytes"], ours.extras["compressed_bytes"]) == (162, 142)
    # the old mismatch: an inner header with mtime 0 (the package with its clock at 0 s, what
    # we used to store) deflates 2 bytes smaller, 162 / 140 = 1.157
    monkeypatch.setattr(gzip.time, "time", lambda: 0.5)
    assert _package_sizes(pkg, README) == (1.157, 162, 140)


@pytest.mark.parametrize(
    "name",
    [
        "readme",
        "readme_with_empty",
        "two_sentences",
        "one_web_text",
        "three_web_texts",
        "ten_web_texts",
    ],
)
@pytest.mark.parametrize("algorithm", ["gzip", "xz"])
def test_compression_ratio_small_corpora_equal_package(name, algorithm, tmp_path, monkeypatch):
    """Small corpora, the package on its real clock: same bytes, same rounded ratio.

    (These corpora compress to the same size at every second of 2025-2033; the corpora whose
    size follows the clock are compared with the clock pinned, below.)"""
    pkg = _diversity_module("compression")
    monkeypatch.chdir(tmp_path)
    texts = _small_corpora()[name]
    ref, original, compressed = _package_sizes(pkg, texts, algorithm)
    ours = compute("compression_ratio", texts, params={"algorithm": algorithm})
    assert (ours.extras["original_bytes"], ours.extras["compressed_bytes"]) == (
        original,
        compressed,
    )
    assert ours.values["compression_ratio"] == original / compressed
    rounded = compute("compression_ratio", texts, params={"algorithm": algorithm, "round": 3})
    assert rounded.values["compression_ratio"] == ref


@pytest.mark.parametrize(
    "texts",
    [
        ["the cat sat on the mat"] * 50,
        ["a", "b"],
        [""],
        ["", "short text here", ""],
        ["DT NN VBZ JJ .", "PRP VBD DT NN IN DT NN .", ""],
    ],
)
def test_compression_ratio_bytes_equal_package_at_our_clock(texts, tmp_path, monkeypatch):
    """Tiny or repetitive corpora, whose double-gzip size follows the package's clock by a
    byte or two: with its clock at our second (``_MTIME``) the sizes are identical."""
    pkg = _diversity_module("compression")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(gzip.time, "time", lambda: _MTIME + 0.5)
    ref, original, compressed = _package_sizes(pkg, texts)
    monkeypatch.undo()
    ours = compute("compression_ratio", texts)
    assert (ours.extras["original_bytes"], ours.extras["compressed_bytes"]) == (
        original,
        compressed,
    )
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
    assert abs(ours.values["compression_ratio"] - ref) <= 0.0005  # the package rounds to 3
    rounded = compute("compression_ratio", texts, params={"algorithm": algorithm, "round": 3})
    assert rounded.values["compression_ratio"] == ref


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


def test_pos_compression_ratio_equals_compression_of_tags(tmp_path):
    pkg = _diversity_module("compression")
    from genmetrics.features.pos import tag_texts

    texts = _texts("webtext/face_demo_human.jsonl", 60)
    tags = tag_texts(texts)
    joined = [" ".join(t) for t in tags]
    ours = compute("pos_compression_ratio", tags)
    assert abs(ours.values["compression_ratio"] - pkg.compression_ratio(joined)) <= 0.0005
    assert ours.extras["original_bytes"] == len(" ".join(joined).encode())
    # the CLI tags a .jsonl of raw texts on the fly (the pos kind's loader): same value
    from genmetrics.io import write_jsonl
    from genmetrics.scoring.from_files import score_files

    path = tmp_path / "t.jsonl"
    write_jsonl(path, [{"id": str(i), "text": t} for i, t in enumerate(texts)])
    assert (
        score_files("pos_compression_ratio", path)["values"]["compression_ratio"]
        == (ours.values["compression_ratio"])
    )
    # POS sequences are far more repetitive than the words
    words = compute("compression_ratio", texts).values["compression_ratio"]
    assert ours.values["compression_ratio"] > words
    with pytest.raises(GenmetricsError, match="list of tag strings"):
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
    with pytest.raises(GenmetricsError):
        compute(name, "a single string")


def test_empty_texts_scored_as_package(tmp_path, monkeypatch):
    """Empty (and whitespace-only) texts stay in the corpus, as in the package."""
    comp = _diversity_module("compression")
    ngram = _diversity_module("ngram_diversity")
    srep = _diversity_module("self_repetition")
    monkeypatch.chdir(tmp_path)
    texts = _texts("webtext/webtext_short.jsonl", 12)
    texts = texts[:4] + [""] + texts[4:8] + ["   ", ""] + texts[8:]
    cr = compute("compression_ratio", texts, params={"round": 3}).values["compression_ratio"]
    assert cr == comp.compression_ratio(texts)
    for num_n in (4, 2):
        ours = compute("ngram_diversity", texts, params={"num_n": num_n, "round": 3})
        assert ours.values["ngram_diversity"] == ngram.ngram_diversity_score(texts, num_n=num_n)
    for n in (4, 1):
        ours = compute("self_repetition", texts, params={"n": n}).values["self_repetition"]
        assert ours == pytest.approx(
            srep.self_repetition_score(texts, n=n, verbose=False), abs=1e-12
        )
    assert compute("self_repetition", texts, params={"n": 1}).values["self_repetition"] > 0
    # POS: an empty text has no tag; the ratio is the package's over the joined tag strings
    from genmetrics.features.pos import tag_texts

    tags = tag_texts(texts)
    assert tags[4] == [] and tags[9] == []
    pos = compute("pos_compression_ratio", tags, params={"round": 3}).values["compression_ratio"]
    assert pos == comp.compression_ratio([" ".join(t) for t in tags])
    # a corpus of one empty text: 0 bytes, ratio 0 (the package's 0 / size)
    assert compute("compression_ratio", [""]).values["compression_ratio"] == 0.0
    assert comp.compression_ratio([""]) == 0.0


def test_one_text_and_non_ascii_corpora():
    one = ["Ein schöner Tag in München, très bien — 東京."]
    assert compute("compression_ratio", one).values["compression_ratio"] > 0
    assert compute("ngram_diversity", one).values["ngram_diversity"] == pytest.approx(4.0)
    assert compute("self_repetition", one).values["self_repetition"] == 0.0
    assert pos_compression_ratio([["NNP", "NN"]]).n == {"candidate": 1}
    assert sys.getdefaultencoding() == "utf-8"
