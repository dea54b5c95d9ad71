"""Syntactic templates (Shaib et al. 2024): template rate and templates per token on POS tags,
by hand and against the ``diversity`` 0.3.1 package's ``template_rate`` /
``templates_per_token`` (``template.py``) with its templates from ``extract_patterns``
(``functions.py``), its spaCy tagger replaced by the tags we give (as ``test_patterns.py``
does): exactly equal on one-sentence texts with a context-free tagger."""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from pathlib import Path

import pytest

from genmetrics import GenmetricsError
from genmetrics.metrics import compute, get
from genmetrics.metrics.pos_templates import find_templates


def _templates(tags, **params):
    return compute("pos_templates", tags, params=params)


# ------------------------------------------------------------------ by hand

HAND = [
    ["DT", "NN", "VBD", "IN", "DT", "NN"],
    ["DT", "NN", "VBD"],
    ["PRP", "VBD", "IN", "DT", "NN"],
    [],  # a text with no token
]
# trigrams: DT NN VBD in texts 0, 1 (2 occurrences); NN VBD IN in 0 (1); VBD IN DT in 0, 2
# (2); IN DT NN in 0, 2 (2); PRP VBD IN in 2 (1)


def test_rate_and_per_token_by_hand_with_min_texts():
    r = _templates(HAND, n=3, top=None, min_texts=2)
    # templates: DT NN VBD, VBD IN DT, IN DT NN; texts 0, 1, 2 have one: 3 of 4
    assert r.values["template_rate"] == 0.75
    # starts: text 0 at 0, 2, 3 (3 of 6 tokens); text 1 at 0 (1 of 3); text 2 at 1, 2 (2 of
    # 5); text 3: 0
    assert r.values["templates_per_token"] == pytest.approx((3 / 6 + 1 / 3 + 2 / 5 + 0) / 4)
    assert r.extras["templates"] == [
        {"pattern": "DT NN VBD", "count": 2, "texts": 2},
        {"pattern": "VBD IN DT", "count": 2, "texts": 2},
        {"pattern": "IN DT NN", "count": 2, "texts": 2},
    ]
    assert r.n == {"candidate": 4, "templates": 3, "tokens": 14}


def test_top_keeps_the_most_frequent_ties_by_first_occurrence():
    # three trigrams occur twice; DT NN VBD occurs first (text 0, position 0)
    r = _templates(HAND, n=3, top=1)
    assert [t["pattern"] for t in r.extras["templates"]] == ["DT NN VBD"]
    assert r.values["template_rate"] == 0.5  # texts 0 and 1
    assert r.values["templates_per_token"] == pytest.approx((1 / 6 + 1 / 3) / 4)
    # every trigram (min_texts 1, top large): every text with 3 tags or more has one
    every = _templates(HAND, n=3)
    assert every.n["templates"] == 5 and every.values["template_rate"] == 0.75
    assert every.values["templates_per_token"] == pytest.approx((4 / 6 + 1 / 3 + 3 / 5) / 4)


def test_overlapping_starts_count_and_short_texts_have_none():
    tags = [["X", "X", "X", "X", "X"], ["X", "X"]]
    r = _templates(tags, n=2)
    # X X starts at 4 positions of 5 in text 0; text 1 has one start in 2 tokens
    assert r.values == {"template_rate": 1.0, "templates_per_token": (4 / 5 + 1 / 2) / 2}
    none = _templates([["DT", "NN"], [], ["NN"]], n=4)  # no text has 4 tags: no template
    assert none.values == {"template_rate": 0.0, "templates_per_token": 0.0}
    assert none.n["templates"] == 0


def test_find_templates_order_and_filters():
    docs = [["A", "B", "A", "B"], ["C", "D"], ["C", "D"], ["A", "B"]]
    # A B: 3 occurrences in 2 texts; B A: 1 in 1; C D: 2 in 2
    assert find_templates(docs, 2, None, 1) == [
        (("A", "B"), 3, 2),
        (("C", "D"), 2, 2),
        (("B", "A"), 1, 1),
    ]
    assert find_templates(docs, 2, 2, 1) == [(("A", "B"), 3, 2), (("C", "D"), 2, 2)]
    assert find_templates(docs, 2, None, 2) == [(("A", "B"), 3, 2), (("C", "D"), 2, 2)]
    assert find_templates(docs, 2, 1, 3) == []


def test_parameters_are_checked_and_named():
    m = get("pos_templates")
    assert m.defaults == {"n": 4, "top": 100, "min_texts": 1}
    assert (m.input, m.reference, m.family) == ("pos", "none", "diversity")
    assert m.values == {"template_rate": "lower", "templates_per_token": "lower"}
    assert "Shaib" in m.citation and "template_rate" in m.upstream
    for key, bad in (("n", 0), ("top", 0), ("min_texts", 0)):
        with pytest.raises(GenmetricsError, match=rf"\.{key}: must be"):
            _templates(HAND, **{key: bad})


# ------------------------------------------------------------------ the diversity package


@pytest.fixture
def package(monkeypatch):
    """``diversity/template.py`` and ``functions.py`` of the installed package, imported as
    a bare package (its ``__init__`` needs sentence-transformers and more); spaCy, imported at
    the top of ``patterns/part_of_speech.py``, is replaced by an empty module when absent: its
    ``get_pos`` is replaced by the test's tagger."""
    spec = importlib.util.find_spec("diversity")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("reference package `diversity` not installed (pip install --no-deps)")
    pytest.importorskip("tqdm")
    pkg = types.ModuleType("_oracle_templates_pkg")
    pkg.__path__ = [str(Path(spec.submodule_search_locations[0]))]
    monkeypatch.setitem(sys.modules, "_oracle_templates_pkg", pkg)
    if importlib.util.find_spec("spacy") is None:
        monkeypatch.setitem(sys.modules, "spacy", types.ModuleType("spacy"))
    subs = ("patterns", "patterns.Token", "patterns.part_of_speech", "functions", "template")
    for sub in subs:
        monkeypatch.delitem(sys.modules, f"_oracle_templates_pkg.{sub}", raising=False)
    from genmetrics.data.assets import use_nltk_data

    use_nltk_data()  # extract_patterns' sent_tokenize needs punkt
    functions = importlib.import_module("_oracle_templates_pkg.functions")
    template = importlib.import_module("_oracle_templates_pkg.template")
    monkeypatch.setattr(functions, "get_pos", _package_get_pos)
    yield types.SimpleNamespace(functions=functions, template=template)
    for sub in subs:
        sys.modules.pop(f"_oracle_templates_pkg.{sub}", None)


LEXICON = {"the": "DT", "a": "DT", "her": "PRP$", "on": "IN", "by": "IN", "under": "IN"}
LEXICON |= {"sat": "VBD", "slept": "VBD", "ran": "VBD", "barked": "VBD", "and": "CC"}
LEXICON |= {"old": "JJ", "small": "JJ", "quietly": "RB", "she": "PRP", "it": "PRP"}


def _lexicon_tags(words: list[str]) -> list[str]:
    """A context-free tagger (one tag per word form): the same tags whether a word is tagged
    within its sentence (the package) or its text (us)."""
    return [LEXICON.get(w.lower().strip("."), "NN") for w in words]


def _package_get_pos(data):
    """The package's ``get_pos`` shape (joined tags, (word, tag) tuples per sentence) with
    whitespace words and :func:`_lexicon_tags`."""
    tuples = [list(zip(s.split(), _lexicon_tags(s.split()), strict=True)) for s in data]
    return [" ".join(t for _, t in tu) for tu in tuples], tuples


# one sentence per text (the package's punkt split of the joined corpus is then the texts);
# no word ends with another word, so a surface string matches only at word starts; one empty
# text, short texts, and structures that repeat across and within texts
CORPUS = [
    "The cat sat on the mat.",
    "A dog slept under the old table.",
    "The cat sat on the mat by the door.",
    "She ran and the dog barked quietly.",
    "",
    "Her cat slept.",
    "The small dog sat on a rug by the window and it slept on the rug.",
    "It barked.",
    "A cat ran under the table and the dog sat on the mat.",
    "The old cat slept quietly on her mat.",
]


# top 3, 1, 5: the cut falls inside a tie of counts (trigram counts 8, 7, 6 | 6; 4-grams
# 6 | 6; bigrams 14, 9, 9, 7, 3 | 3, 3): the first to occur is kept, as the package keeps it
@pytest.mark.parametrize(("n", "top"), [(4, 100), (3, 100), (5, 100), (3, 3), (4, 1), (2, 5)])
def test_equals_the_package(package, n, top):
    f, t = package.functions, package.template
    patterns = f.extract_patterns(CORPUS, n=n, top_n=top)
    rate = t.template_rate(CORPUS, templates=patterns)
    per_text = t.templates_per_token(CORPUS, templates=patterns)
    ours = _templates([_lexicon_tags(s.split()) for s in CORPUS], n=n, top=top)
    # the same templates, in the package's order (its sort is stable over first occurrence)
    assert [x["pattern"] for x in ours.extras["templates"]] == list(patterns)
    assert ours.values["template_rate"] == rate
    assert ours.values["templates_per_token"] == pytest.approx(
        sum(per_text) / len(per_text), rel=1e-12
    )
    assert 0 < rate < 1  # the case separates texts with and without a template


def test_equals_the_package_by_default_on_its_defaults(package):
    """The package's compute_all_metrics: extract_patterns(corpus) (n=5, top_n=100)."""
    f, t = package.functions, package.template
    patterns = f.extract_patterns(CORPUS)
    per_text = t.templates_per_token(CORPUS, templates=patterns)
    ours = _templates([_lexicon_tags(s.split()) for s in CORPUS], n=5)
    assert ours.values["template_rate"] == t.template_rate(CORPUS, templates=patterns)
    assert ours.values["templates_per_token"] == pytest.approx(sum(per_text) / len(per_text))
