"""Lexical diversity (TTR, MATTR, HD-D, MTLD) against lexical-diversity 0.1.1 and hand cases."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from genmetrics import GenmetricsError
from genmetrics.metrics import compute
from genmetrics.metrics.lexical import (
    hdd_score,
    ld_lemmatize,
    ld_tokenize,
    mattr_score,
    mtld_score,
    ttr_score,
)

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _lex_div():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pkg_resources deprecation
        return pytest.importorskip("lexical_diversity.lex_div")


def _jsonl_texts(path: Path, n: int) -> list[str]:
    if not path.exists():
        pytest.skip(f"shared data missing: {path}")
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            t = json.loads(line)["text"]
            if t.strip():
                out.append(t)
            if len(out) == n:
                break
    return out


@pytest.fixture(scope="module")
def real_texts() -> list[str]:
    # 200 human WebText documents + 200 GPT-2 1.5B samples (T=0.7), plus the 30 shortest
    # WebText snippets (63 tokens) so that the MATTR<51 and HD-D<42 branches are exercised.
    short = _jsonl_texts(DATA / "webtext" / "webtext_short.jsonl", 30)
    return (
        _jsonl_texts(DATA / "webtext" / "face_demo_human.jsonl", 200)
        + _jsonl_texts(DATA / "gpt2_generations" / "gpt2-1.5b_unconditional_t07.jsonl", 200)
        + short
        + [" ".join(t.split()[:30]) for t in short[:10]]
    )


def test_tokenize_quirks_hand():
    # apostrophes/hyphens vanish inside words, upper-case "SYM" is deleted before lower-casing,
    # edge whitespace gives empty tokens, as lexical_diversity.tokenize does.
    assert ld_tokenize("Don't stop-me, NOW!") == ["dont", "stopme", "now"]
    assert ld_tokenize(" a  b\n") == ["", "a", "b", ""]
    assert ld_tokenize("SYMBOL sym") == ["bol", "sym"]
    assert ld_tokenize("...") == [""]
    assert ld_tokenize("Über Café") == ["über", "café"]


def test_hand_values():
    assert ttr_score(["a", "b", "a", "c"]) == pytest.approx(0.75)
    # 60 tokens alternating a/b: 11 windows of 50, each with 2 types → 2/50
    assert mattr_score(["a", "b"] * 30) == pytest.approx(0.04)
    # 50 tokens (≤ window) → plain TTR
    assert mattr_score(["a", "b"] * 25) == pytest.approx(2 / 50)
    # window 3 on a b a c: windows aba (2/3), bac (1) → 5/6
    assert mattr_score(["a", "b", "a", "c"], window=3) == pytest.approx(5 / 6)
    # HD-D: 42 distinct tokens → each type is surely in a 42-sample → 42 · 1/42 = 1
    assert hdd_score([str(i) for i in range(42)]) == pytest.approx(1.0)
    assert hdd_score([str(i) for i in range(41)]) == 0.0  # < 42 tokens → 0
    # 84 tokens, 2 types of frequency 42: P(absent) = C(42,42)/C(84,42)
    from math import comb

    expect = 2 * (1 - 1 / comb(84, 42)) / 42
    assert hdd_score(["x"] * 42 + ["y"] * 42) == pytest.approx(expect, rel=1e-12)
    # MTLD of 20 identical tokens: a full factor closes at token 10, the last 10 tokens are a
    # partial factor (1 - 0.1) / (1 - 0.72); both directions are equal.
    assert mtld_score(["w"] * 20) == pytest.approx(20 / (1 + 0.9 / 0.28))
    # threshold 0.5 changes the partial factor
    assert mtld_score(["w"] * 20, threshold=0.5) == pytest.approx(20 / (1 + 0.9 / 0.5))


def test_agrees_with_lexical_diversity_per_text(real_texts):
    ld = _lex_div()
    for t in real_texts:
        tok = ld.tokenize(t)
        assert ld_tokenize(t) == tok
        assert mattr_score(tok) == ld.mattr(tok)  # bit-identical
        assert mtld_score(tok) == ld.mtld(tok)  # bit-identical
        assert ttr_score(tok) == ld.ttr(tok)
        assert hdd_score(tok) == pytest.approx(ld.hdd(tok), rel=1e-12, abs=1e-15)
        assert mattr_score(tok, 20) == ld.mattr(tok, window_length=20)
    for t in real_texts[:50]:
        lem = ld.flemmatize(t)
        assert ld_lemmatize(t) == lem
        assert mattr_score(lem) == ld.mattr(lem)


def test_registered_means_match_reference(real_texts):
    ld = _lex_div()
    toks = [ld.tokenize(t) for t in real_texts]
    ref = {
        "ttr": [ld.ttr(t) for t in toks],
        "mattr": [ld.mattr(t) for t in toks],
        "hdd": [ld.hdd(t) for t in toks],
        "mtld": [ld.mtld(t) for t in toks],
    }
    up = {"short_texts": "upstream"}
    for name, vals in ref.items():
        res = compute(name, real_texts, params=up)
        assert res.values[name] == pytest.approx(np.mean(vals), abs=1e-12)
        assert res.values[f"{name}_std"] == pytest.approx(np.std(vals), abs=1e-12)
        assert res.n["candidate"] == len(real_texts)
        np.testing.assert_allclose(res.extras["per_text"], vals, rtol=1e-12, atol=1e-15)
    lem = compute("mattr", real_texts[:40], params={"lemmatize": True, **up}).values["mattr"]
    assert lem == pytest.approx(np.mean([ld.mattr(ld.flemmatize(t)) for t in real_texts[:40]]))
    short = compute("hdd", real_texts, params=up)
    assert short.n["short"] == sum(1 for t in toks if len([w for w in t if w]) < 42) > 0


def test_default_policy_excludes_texts_too_short_to_score(real_texts):
    """HD-D's upstream 0 for short texts is a length effect (Shaib et al. 2024): by default
    those texts leave the mean and are counted; the mean equals the package's mean over the
    long texts only."""
    ld = _lex_div()
    toks = [ld.tokenize(t) for t in real_texts]
    long_ = [t for t in toks if len([w for w in t if w]) >= 42]
    assert 0 < len(long_) < len(toks)
    res = compute("hdd", real_texts)
    assert res.values["hdd"] == pytest.approx(np.mean([ld.hdd(t) for t in long_]), abs=1e-12)
    assert res.n["excluded"] == len(toks) - len(long_) and res.n["scored"] == len(long_)
    upstream = compute("hdd", real_texts, params={"short_texts": "upstream"}).values["hdd"]
    assert upstream < res.values["hdd"]  # the zeros pull the upstream mean down
    w = compute("mattr", real_texts, params={"window": 60})
    assert w.values["mattr"] == pytest.approx(
        np.mean([ld.mattr(t, 60) for t in toks if len([x for x in t if x]) >= 60]), abs=1e-12
    )
    # an empty generation never fails the corpus: excluded and counted
    res = compute("ttr", ["", "a b a", "c d"])
    assert res.values["ttr"] == pytest.approx((2 / 3 + 1) / 2) and res.n["excluded"] == 1
    # every text too short: an error naming the parameter, never a NaN mean over nothing
    with pytest.raises(GenmetricsError, match="^hdd: all 1 texts are shorter than sample=42"):
        compute("hdd", ["a b c"])


@pytest.mark.parametrize(
    ("metric", "params", "message"),
    [
        (
            "mattr",
            {},
            "mattr: all 40 texts are shorter than window=50 words; lower window or use "
            "short_texts: upstream",
        ),
        ("mattr", {"window": 5}, "mattr: all 40 texts are shorter than window=5 words"),
        ("hdd", {"sample": 10}, "hdd: all 40 texts are shorter than sample=10 words"),
    ],
)
def test_a_mean_over_no_text_is_an_error_naming_the_parameter(metric, params, message):
    texts = [f"word{i} and another one" for i in range(40)]  # 4 words each
    with pytest.raises(GenmetricsError, match=f"^{message}"):
        compute(metric, texts, params=params)
    # one text long enough, or the upstream policy, gives the number it should
    longer = compute(metric, [*texts[:-1], " ".join(f"w{i}" for i in range(60))], params=params)
    assert longer.n["excluded"] == 39 and longer.values[metric] > 0.9
    assert compute(metric, texts, params={**params, "short_texts": "upstream"}).n["scored"] == 40


@pytest.mark.parametrize("metric", ["ttr", "mtld"])
def test_texts_with_no_word_only_are_an_error(metric):
    with pytest.raises(GenmetricsError, match=f"^{metric}: all 2 texts have no word; use short"):
        compute(metric, ["", "  "])


def test_params_change_values(real_texts):
    ld = _lex_div()
    texts = real_texts[:20]
    w30 = compute("mattr", texts, params={"window": 30}).values["mattr"]
    assert w30 == pytest.approx(np.mean([ld.mattr(ld.tokenize(t), 30) for t in texts]))
    assert w30 != compute("mattr", texts).values["mattr"]
    assert compute("mtld", texts, params={"threshold": 0.6}).values["mtld"] != pytest.approx(
        compute("mtld", texts).values["mtld"]
    )
    assert compute("hdd", texts, params={"sample": 30}).values["hdd"] != pytest.approx(
        compute("hdd", texts).values["hdd"]
    )


def test_edge_cases():
    up = {"short_texts": "upstream"}
    one = compute("mattr", ["just one short text here"], params=up)
    assert one.values["mattr"] == 1.0 and one.values["mattr_std"] == 0.0
    # punctuation-only text: the package's single empty token, TTR 1 (documented), flagged
    res = compute("ttr", ["...", "a a"], params=up)
    assert res.values["ttr"] == pytest.approx(0.75) and res.n["no_words"] == 1
    # non-ASCII text works and matches the package
    ld = _lex_div()
    text = "Größere Äpfel fallen weit vom Stamm. 日本語 の テキスト です。 " * 5
    assert compute("mattr", [text], params=up).values["mattr"] == ld.mattr(ld.tokenize(text))
    assert compute("mtld", [text]).values["mtld"] == ld.mtld(ld.tokenize(text))
    with pytest.raises(GenmetricsError, match="no texts"):
        compute("mattr", [])
    with pytest.raises(GenmetricsError, match="window"):
        compute("mattr", ["a b"], params={"window": 0})
    with pytest.raises(GenmetricsError, match="threshold"):
        compute("mtld", ["a b"], params={"threshold": 1.5})
    with pytest.raises(GenmetricsError, match="unknown parameter"):
        compute("mattr", ["a b"], params={"windows": 3})


def test_pooled_scores_the_concatenation_by_hand():
    # pool=concatenated: one score on the texts joined by a space (windows cross texts)
    texts = ["a b a", "c a"]  # tokens a b a c a: windows of 3 → aba 2/3, bac 1, aca 2/3
    r = compute("mattr", ["a b a", "c a"], params={"window": 3, "pool": "concatenated"})
    assert r.values["mattr"] == pytest.approx((2 / 3 + 1 + 2 / 3) / 3)
    assert np.isnan(r.values["mattr_std"]) and r.n["tokens"] == 5
    # per text both are shorter than the window + 1: plain TTR under upstream, 2/3 and 1
    per = compute("mattr", texts, params={"window": 3, "short_texts": "upstream"})
    assert per.values["mattr"] == pytest.approx((2 / 3 + 1) / 2)
    # HD-D, sample 2 of the 5 pooled tokens: Σ_types (1 − C(5−f, 2)/C(5, 2)) / 2
    from math import comb

    expect = sum(1 - comb(5 - f, 2) / comb(5, 2) for f in (3, 1, 1)) / 2
    got = compute("hdd", texts, params={"sample": 2, "pool": "concatenated"}).values["hdd"]
    assert got == pytest.approx(expect, rel=1e-12)
    with pytest.raises(GenmetricsError, match="shorter than sample=42"):
        compute("hdd", texts, params={"pool": "concatenated"})


def test_pooled_scores_equal_the_package_on_the_concatenation(real_texts):
    ld = _lex_div()
    for texts in (real_texts[:100], real_texts[400:]):  # long documents; short snippets
        toks = ld.tokenize(" ".join(texts))
        pooled = {"pool": "concatenated"}
        assert compute("mattr", texts, params=pooled).values["mattr"] == ld.mattr(toks)
        got = compute("hdd", texts, params=pooled).values["hdd"]
        assert got == pytest.approx(ld.hdd(toks), rel=1e-12)


def test_pooled_scores_refuse_drawing_with_replacement():
    """A copy of a text changes a pooled score (its words join the concatenation): an
    interval drawing prompts with replacement is refused for it, kept for the per-text mean."""
    from genmetrics.metrics.registry import get
    from genmetrics.scoring.intervals import check_scheme, entry_interval

    for name in ("mattr", "hdd"):
        m = get(name)
        assert not m.duplicates_matter() and not m.duplicates_matter({"pool": "texts"})
        assert m.duplicates_matter({"pool": "concatenated"})
        check_scheme(m, "replacement", "k", {"pool": "texts"})
        with pytest.raises(GenmetricsError, match=f"replacement is refused for metric {name}"):
            entry_interval("metrics.x", {"scheme": "replacement"}, m, {"pool": "concatenated"})
    # a copy of every text changes the pooled HD-D (the per-text mean keeps it)
    texts = [" ".join(f"w{i}{j % 7}" for j in range(30)) for i in range(3)]
    pooled = {"pool": "concatenated"}
    once = compute("hdd", texts, params=pooled).values["hdd"]
    assert compute("hdd", texts * 2, params=pooled).values["hdd"] != pytest.approx(once)
