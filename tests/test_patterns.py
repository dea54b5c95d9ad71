"""Repeated n-grams and POS patterns (Shaib et al. (2024), Tables 1 and 10): hand-computed
counts, the ``diversity`` 0.3.1 package's ``extract_patterns`` counting, the workflow rule."""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
import types
from pathlib import Path

import pytest
import yaml
from conftest import REPO

from genmetrics import GenmetricsError
from genmetrics.analysis.patterns import (
    Repeated,
    patterns_files,
    patterns_markdown,
    patterns_table,
    repeated_ngrams,
    repeated_pos_patterns,
    sentence_ids,
)


def _rows(reps: list[Repeated]) -> list[tuple[str, int, int]]:
    return [(r.pattern, r.count, r.texts) for r in reps]


# ------------------------------------------------------------------ exact n-grams


def test_repeated_ngrams_counts_occurrences_and_texts_by_hand():
    texts = ["a b c a b c", "a b c d", "x y", ""]
    # trigrams: text 0 has "a b c" twice, "b c a", "c a b"; text 1 "a b c", "b c d";
    # "x y" and "" are shorter than 3 words
    assert _rows(repeated_ngrams(texts, 3, None, sentences=False)) == [("a b c", 3, 2)]
    # bigrams: "a b" 2 + 1, "b c" 2 + 1 (a tie: alphabetical); "c a", "c d", "x y" once: out
    assert _rows(repeated_ngrams(texts, 2, None, sentences=False)) == [
        ("a b", 3, 2),
        ("b c", 3, 2),
    ]
    assert _rows(repeated_ngrams(texts, 2, None, sentences=False, min_count=1))[2:] == [
        ("c a", 1, 1),
        ("c d", 1, 1),
        ("x y", 1, 1),
    ]
    # unigrams: count first, then the text; top cuts after sorting
    assert _rows(repeated_ngrams(texts, 1, 2, sentences=False)) == [("a", 3, 2), ("b", 3, 2)]


def test_repeated_ngrams_ties_and_order_do_not_depend_on_input_order():
    texts = ["q r", "z z z z", "q r", "b c", "b c"]
    expected = [("z z", 3, 1), ("b c", 2, 2), ("q r", 2, 2)]
    assert _rows(repeated_ngrams(texts, 2, None, sentences=False)) == expected
    assert _rows(repeated_ngrams(texts[::-1], 2, None, sentences=False)) == expected


def test_repeated_ngrams_case_short_texts_and_errors():
    texts = ["The cat sat", "the cat sat"]
    # case kept by default: "The cat" and "the cat" differ
    assert _rows(repeated_ngrams(texts, 2, sentences=False)) == [("cat sat", 2, 2)]
    assert _rows(repeated_ngrams(texts, 2, sentences=False, lowercase=True)) == [
        ("cat sat", 2, 2),
        ("the cat", 2, 2),
    ]
    assert repeated_ngrams(["a b", "a b"], 3, sentences=False) == []
    # whitespace words: runs of spaces and newlines are one separator
    assert _rows(repeated_ngrams(["a  b\nc", "a b c"], 3, sentences=False)) == [("a b c", 2, 2)]
    with pytest.raises(GenmetricsError, match="one string"):
        repeated_ngrams("a b c", 2)
    with pytest.raises(GenmetricsError, match="n must be"):
        repeated_ngrams(["a"], 0)
    with pytest.raises(GenmetricsError, match="top must be"):
        repeated_ngrams(["a"], 1, 0)


def test_sentences_keep_ngrams_inside_one_sentence():
    text = "Go home. Go home. Go home."
    assert sentence_ids(text) == [0, 0, 1, 1, 2, 2]
    # across sentences "Go home. Go" and "home. Go home." occur twice; inside: none of 3 words
    assert _rows(repeated_ngrams([text], 3, sentences=False)) == [
        ("Go home. Go", 2, 1),
        ("home. Go home.", 2, 1),
    ]
    assert repeated_ngrams([text], 3, sentences=True) == []
    assert _rows(repeated_ngrams([text], 2, sentences=True)) == [("Go home.", 3, 1)]


# ------------------------------------------------------------------ POS patterns

TEXTS = ["the cat sat", "a dog ran", "the cat sat", "the cat sat the dog ran", "hi"]
TAGS = [["DT", "NN", "VBD"]] * 3 + [["DT", "NN", "VBD", "DT", "NN", "VBD"], ["UH"]]


def test_repeated_pos_patterns_counts_and_examples_by_hand():
    reps = repeated_pos_patterns(TEXTS, TAGS, 3, None, 3, sentences=False)
    # DT NN VBD: once in each of texts 0-2, twice in text 3 -> 5 occurrences in 4 texts;
    # NN VBD DT and VBD DT NN occur once (text 3): left out
    assert reps == [
        Repeated("DT NN VBD", 5, 4, (("the cat sat", 3), ("a dog ran", 1), ("the dog ran", 1)))
    ]
    assert repeated_pos_patterns(TEXTS, TAGS, 3, None, 1, sentences=False)[0].examples == (
        ("the cat sat", 3),
    )
    two = repeated_pos_patterns(TEXTS, TAGS, 2, None, 2, sentences=False)
    assert _rows(two) == [("DT NN", 5, 4), ("NN VBD", 5, 4)]  # a tie: alphabetical
    assert two[0].examples == (("the cat", 3), ("a dog", 1))  # then "the dog" (1) cut
    assert two[1].examples == (("cat sat", 3), ("dog ran", 2))  # texts 1 and 3


def test_repeated_pos_patterns_lowercase_and_misaligned_tags():
    reps = repeated_pos_patterns(
        ["The cat", "the cat"], [["DT", "NN"]] * 2, 2, lowercase=True, sentences=False
    )
    assert reps == [Repeated("DT NN", 2, 2, (("the cat", 2),))]
    with pytest.raises(GenmetricsError, match="text 1 has 2 whitespace words but 3 tags"):
        repeated_pos_patterns(["a b", "a b"], [["X", "Y"], ["X", "Y", "Z"]], 2)
    with pytest.raises(GenmetricsError, match="2 texts but 1 tag lists"):
        repeated_pos_patterns(["a b", "a b"], [["X", "Y"]], 2)


def test_patterns_table_and_markdown():
    table = patterns_table(
        {"references": TEXTS, "m/seed0": ["x y z"]},
        {"references": TAGS, "m/seed0": [["X", "Y", "Z"]]},
        n=[2],
        pos_n=[3],
        top=2,
        examples=2,
        sentences=False,
    )
    assert list(table.columns) == [
        "source",
        "kind",
        "n",
        "rank",
        "pattern",
        "count",
        "texts",
        "examples",
    ]
    refs = table[table.source == "references"]
    assert refs[["kind", "n", "rank", "pattern", "count", "texts"]].values.tolist() == [
        ["ngram", 2, 1, "cat sat", 3, 3],
        ["ngram", 2, 2, "the cat", 3, 3],
        ["pos", 3, 1, "DT NN VBD", 5, 4],
    ]
    assert json.loads(refs.examples.iloc[2]) == [["the cat sat", 3], ["a dog ran", 1]]
    assert table[table.source == "m/seed0"].empty  # nothing repeated
    md = patterns_markdown(table, "toy", {"references": 5, "m/seed0": 1})
    assert "## exact 2-grams" in md and "## POS 3-grams" in md
    assert "| references | 1 | `DT NN VBD` | 5 | 4 | `the cat sat` (3); `a dog ran` (1) |" in md
    assert "| m/seed0 | – | (nothing repeated) |  |  |  |" in md
    with pytest.raises(GenmetricsError, match="need the sources' tags"):
        patterns_table({"a": ["x"]}, None, pos_n=[5])


def test_patterns_files_checks_that_tags_belong_to_the_texts(tmp_path):
    texts = tmp_path / "texts.jsonl"
    pos = tmp_path / "pos.jsonl"
    texts.write_text(
        "".join(json.dumps({"id": f"t{i}", "text": t}) + "\n" for i, t in enumerate(TEXTS))
    )
    rows = [{"id": f"t{i}", "tags": t} for i, t in enumerate(TAGS)]
    pos.write_text("".join(json.dumps(r) + "\n" for r in rows))
    opts = {"n": [3], "pos_n": [3], "top": 5, "examples": 1, "sentences": False}
    table, md = patterns_files("toy", ["references"], [str(texts)], [str(pos)], opts)
    assert table.columns[0] == "dataset" and set(table.dataset) == {"toy"}
    assert table[["kind", "pattern", "count", "texts"]].values.tolist() == [
        ["ngram", "the cat sat", 3, 3],
        ["pos", "DT NN VBD", 5, 4],
    ]
    assert "(of references: 5)" in md
    pos.write_text("".join(json.dumps(r) + "\n" for r in rows[::-1]))
    with pytest.raises(GenmetricsError, match="ids are not those"):
        patterns_files("toy", ["references"], [str(texts)], [str(pos)], opts)


# ------------------------------------------------------------------ the diversity package


@pytest.fixture
def package_functions(monkeypatch):
    """``diversity/functions.py`` (extract_patterns) and ``patterns/`` of the installed
    package, imported as a bare package (its ``__init__`` needs sentence-transformers and
    more); spaCy, imported at the top of ``part_of_speech.py``, is replaced by an empty module
    when absent: its ``get_pos`` is replaced by each test's tagger."""
    spec = importlib.util.find_spec("diversity")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("reference package `diversity` not installed (pip install --no-deps)")
    pytest.importorskip("tqdm")
    pkg = types.ModuleType("_oracle_diversity_pkg")
    pkg.__path__ = [str(Path(spec.submodule_search_locations[0]))]
    monkeypatch.setitem(sys.modules, "_oracle_diversity_pkg", pkg)
    if importlib.util.find_spec("spacy") is None:
        monkeypatch.setitem(sys.modules, "spacy", types.ModuleType("spacy"))
    for sub in ("patterns", "patterns.Token", "patterns.part_of_speech", "functions"):
        monkeypatch.delitem(sys.modules, f"_oracle_diversity_pkg.{sub}", raising=False)
    from genmetrics.data.assets import use_nltk_data

    use_nltk_data()  # extract_patterns' sent_tokenize needs punkt
    return importlib.import_module("_oracle_diversity_pkg.functions")


def _package_get_pos(tag_words):
    """A ``get_pos`` of the package's shape (joined tags, (word, tag) tuples per sentence)
    with whitespace words, as the package's ≤ 0.1.22 ``nltk.pos_tag(x.split())``."""

    def get_pos(data):
        tuples = [list(zip(s.split(), tag_words(s.split()), strict=True)) for s in data]
        return [" ".join(t for _, t in tu) for tu in tuples], tuples

    return get_pos


# every text ends a sentence, so the package's punkt split of the joined corpus and ours per
# text agree; words repeat across texts, inside a text and inside a sentence
CORPUS = [
    "The cat sat on the mat. The dog sat on the rug.",
    "A cat sat on a mat. The cat sat on the mat again.",
    "It rained all day. The cat sat on the mat.",
    "Dogs bark at night and cats sleep on the mat.",
]
LEXICON = {"the": "DT", "a": "DT", "on": "IN", "at": "IN", "and": "CC", "it": "PRP"}
LEXICON |= {"sat": "VBD", "rained": "VBD", "bark": "VBP", "sleep": "VBP", "all": "DT"}


def _lexicon_tags(words):
    """A context-free tagger (one tag per word form): the same tags whether a word is tagged
    within its sentence (the package) or its text (us)."""
    return [LEXICON.get(w.lower().strip("."), "NNS" if w.endswith("s") else "NN") for w in words]


def test_pos_patterns_match_the_package_counting(package_functions, monkeypatch):
    f = package_functions
    monkeypatch.setattr(f, "get_pos", _package_get_pos(_lexicon_tags))
    for n in (3, 5):
        ours = repeated_pos_patterns(
            CORPUS, [_lexicon_tags(t.split()) for t in CORPUS], n, None, 1000, min_count=1
        )
        theirs = f.extract_patterns(CORPUS, n=n, top_n=10_000)
        # the same patterns, each with the same set of surface strings
        assert {r.pattern: {s for s, _ in r.examples} for r in ours} == theirs
        # the same counts (the package's token_patterns on its sentence-split POS strings)
        joined, _ = f.get_pos(f.sent_tokenize(" ".join(CORPUS)))
        counts = dict(f.token_patterns(joined, n, 10_000))
        assert {r.pattern: r.count for r in ours} == counts
        assert max(counts.values()) >= 3  # the case repeats something


def test_pos_patterns_match_the_package_with_the_nltk_tagger(package_functions, monkeypatch):
    """With our real tags (NLTK's perceptron on whitespace words, the pos features) and the
    package tagging each sentence with ``nltk.pos_tag(s.split())``: one-sentence texts, so
    both taggers see the same context."""
    import nltk

    from genmetrics.features.pos import tag_texts

    f = package_functions
    monkeypatch.setattr(f, "get_pos", _package_get_pos(lambda ws: [t for _, t in nltk.pos_tag(ws)]))
    texts = [s for t in CORPUS for s in nltk.sent_tokenize(t)]
    ours = repeated_pos_patterns(texts, tag_texts(texts), 4, None, 1000, min_count=1)
    assert {r.pattern: {s for s, _ in r.examples} for r in ours} == f.extract_patterns(
        texts, n=4, top_n=10_000
    )


def test_ngrams_match_the_package_token_patterns(package_functions):
    f = package_functions
    for n in (2, 4):
        ours = repeated_ngrams(CORPUS, n, None, sentences=False, min_count=1)
        assert {r.pattern: r.count for r in ours} == dict(f.token_patterns(CORPUS, n, 10_000))


# ------------------------------------------------------------------ the workflow


def test_dry_run_lists_repeated_patterns_only_when_asked(tmp_path):
    from test_workflow import job_blocks, job_counts, snakemake

    data = REPO / ".test" / "data" / "texts.jsonl"
    source = {"source": {"kind": "local", "path": str(data)}, "format": "jsonl"}
    cfg = {
        "cache": str(tmp_path / "cache"),
        "datasets": {"stories": {**source, "clean": {"min_words": 12}}},
        "checkpoints": {},
        "models": {"imported": {"texts": source}},
        "metrics": {"distinct": {"metric": "distinct_n"}},
    }
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    out = snakemake("-n", "--cores", "2", "--configfile", str(path), cwd=tmp_path).stdout
    assert "repeated_patterns" not in job_counts(out)
    cfg["analysis"] = {"patterns": {"n": [4], "pos_n": [5]}}
    path.write_text(yaml.safe_dump(cfg))
    out = snakemake("-n", "--cores", "2", "--configfile", str(path), cwd=tmp_path).stdout
    (block,) = job_blocks(out, "repeated_patterns")
    assert "results/analysis/patterns/stories.md" in block
    for src in ("references", "imported/seed0"):
        assert f"results/features/pos/stories/{src}.jsonl" in block
    assert "results/data/stories/references.jsonl" in block
    assert "results/generations/stories/imported/seed0.jsonl" in block
