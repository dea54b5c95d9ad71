"""SimCTG rep-n / diversity and distinct-n against verbatim reference code and hand cases."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from genmetrics import GenmetricsError
from genmetrics.metrics import compute

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


# --- oracle 1: yxuansu/SimCTG simctg/evaluation.py @ 0b569808e606556dbd03e499ff8c150b97616035,
# reproduced verbatim (only the unused unique-token set is dropped).
def _simctg_eval_text(text, ngram):
    token_list = text.strip().split()
    start_idx, end_idx = 0, ngram
    total_num = 0
    ngram_set = set()
    while end_idx < len(token_list):
        one_ngram_list = token_list[start_idx:end_idx]
        assert len(one_ngram_list) == ngram
        one_ngram = " ".join(one_ngram_list)
        total_num += 1
        ngram_set.add(one_ngram)
        start_idx += 1
        end_idx += 1
    return len(ngram_set), total_num


def simctg_measure_repetition_and_diversity(text_list):
    ngram_list = [2, 3, 4]
    pred_res_dict = {n: {"unique": 0, "total": 0} for n in ngram_list}
    for text in text_list:
        text = text.strip("\n").strip()
        for n in ngram_list:
            n_unique, n_total = _simctg_eval_text(text, n)
            pred_res_dict[n]["unique"] += n_unique
            pred_res_dict[n]["total"] += n_total
    pred_seq_2 = 1 - (pred_res_dict[2]["unique"] / pred_res_dict[2]["total"])
    pred_seq_2 = round(pred_seq_2 * 100, 2)
    pred_seq_3 = 1 - (pred_res_dict[3]["unique"] / pred_res_dict[3]["total"])
    pred_seq_3 = round(pred_seq_3 * 100, 2)
    pred_seq_4 = 1 - (pred_res_dict[4]["unique"] / pred_res_dict[4]["total"])
    pred_seq_4 = round(pred_seq_4 * 100, 2)
    pred_div = (1 - pred_seq_2 / 100) * (1 - pred_seq_3 / 100) * (1 - pred_seq_4 / 100)
    return pred_seq_2, pred_seq_3, pred_seq_4, pred_div


# --- oracle 2: AlexVerine/pr-4-llm pr_llm/evaluate/scores.py @ 2f0d9b3,
# SelfBLEUDistinctNScorer.get_ngram_freqs / get_unique_ngram_fraction.
def pr4llm_distinct(samples, n_lst=(1, 2, 3, 4)):
    from nltk.util import ngrams as ngrams_fn_nltk

    results = {}
    for n in n_lst:
        ngram_freq = Counter()
        for sen in samples:
            ngram_freq.update(ngrams_fn_nltk(sen, n))
        a, b = len(ngram_freq), sum(ngram_freq.values())
        results[f"distinct_{n}"] = a * 1.0 / b if b > 0 else 0
    return results


def _rows(path: Path, n: int | None = None) -> list[dict]:
    if not path.exists():
        pytest.skip(f"shared data missing: {path}")
    with open(path, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    return rows if n is None else rows[:n]


@pytest.fixture(scope="module")
def real_texts() -> list[str]:
    human = [r["text"] for r in _rows(DATA / "webtext" / "face_demo_human.jsonl", 200)]
    gpt2 = [
        r["text"]
        for r in _rows(DATA / "gpt2_generations" / "gpt2-1.5b_unconditional_t07.jsonl", 200)
    ]
    return human + gpt2


def test_rep_n_hand():
    # "a b a b a": SimCTG counts 2-grams at positions 0..2 only (ab, ba, ab) → rep-2 = 1/3;
    # 3-grams aba, bab → 0; one 4-gram → 0.
    res = compute("rep_n", ["a b a b a"])
    assert res.values["rep_2"] == 33.33
    assert res.values["rep_3"] == 0.0 and res.values["rep_4"] == 0.0
    assert res.values["diversity"] == pytest.approx(1 - 0.3333)
    raw = compute("rep_n", ["a b a b a"], params={"rounding": False})
    assert raw.values["rep_2"] == pytest.approx(100 / 3)
    assert raw.values["diversity"] == pytest.approx(2 / 3)
    # the last n-gram is excluded: "x y x y z" counts xy, yx, xy (not yz) → 1/3 repeated
    assert compute("rep_n", ["x y x y z"]).values["rep_2"] == pytest.approx(100 / 3, abs=0.005)
    # unique counts are per text: two identical texts are no more repetitive than one
    assert compute("rep_n", ["p q r s t u"] * 2).values["rep_2"] == 0.0


def test_rep_n_matches_simctg(real_texts):
    for texts in (real_texts, real_texts[:1], real_texts[200:]):
        res = compute("rep_n", texts)
        r2, r3, r4, div = simctg_measure_repetition_and_diversity(texts)
        assert (res.values["rep_2"], res.values["rep_3"], res.values["rep_4"]) == (r2, r3, r4)
        assert res.values["diversity"] == pytest.approx(div, abs=1e-15)


@pytest.mark.parametrize(
    ("domain", "expect_id"),
    [
        ("wikitext103", "wikitext.contrastive_k_5_alpha_0.6"),
        ("book", "book.contrastive_k_6_alpha_0.6"),
    ],
)
def test_rep_n_reproduces_published_diversity(domain, expect_id):
    """Upstream-reported diversity (×100, 2 decimals) of contrastive search and of the human
    references (computed on the raw WikiText form) in Su & Xu's comparison repo."""
    rows = _rows(DATA / "contrastive_search" / f"{domain}.jsonl")
    expected = {r["id"]: r for r in _rows(DATA / "contrastive_search" / "expected_metrics.jsonl")}
    exp = expected[expect_id]
    texts = [r["text"] for r in rows]  # wikitext103 has an empty one: no n-gram, as in SimCTG
    assert round(compute("rep_n", texts).values["diversity"] * 100, 2) == exp["diversity"]
    refs = [r.get("reference_raw", r["reference"]) for r in rows]
    assert round(compute("rep_n", refs).values["diversity"] * 100, 2) == exp["reference_diversity"]


def test_rep_n_errors():
    with pytest.raises(GenmetricsError, match="no 4-gram"):
        compute("rep_n", ["a b c d", "e f"])
    with pytest.raises(GenmetricsError, match="no texts"):
        compute("rep_n", [])


def test_empty_texts_scored_as_simctg_and_pr4llm(real_texts):
    """Empty texts stay in the corpus: no n-gram, as SimCTG and pr-4-llm count them."""
    texts = real_texts[:50] + ["", "   "] + real_texts[50:80] + ["", "one"]
    res = compute("rep_n", texts)
    r2, r3, r4, div = simctg_measure_repetition_and_diversity(texts)
    assert (res.values["rep_2"], res.values["rep_3"], res.values["rep_4"]) == (r2, r3, r4)
    assert res.values["diversity"] == pytest.approx(div, abs=1e-15)
    assert compute("rep_n", ["a b a b a", ""]).values == compute("rep_n", ["a b a b a"]).values
    ws = compute("distinct_n", texts, params={"tokenizer": "whitespace"})
    for k, v in pr4llm_distinct([t.split() for t in texts]).items():
        assert ws.values[k] == pytest.approx(v, abs=1e-15)
    from genmetrics.data.assets import gpt2_encoding

    enc = gpt2_encoding()
    ids = [enc.encode(t, allowed_special="all") for t in texts]
    for k, v in pr4llm_distinct(ids).items():
        assert compute("distinct_n", texts).values[k] == pytest.approx(v, abs=1e-15)


def test_distinct_n_hand_whitespace():
    res = compute("distinct_n", ["a b a", "a b"], params={"tokenizer": "whitespace"})
    assert res.values["distinct_1"] == pytest.approx(2 / 5)
    assert res.values["distinct_2"] == pytest.approx(2 / 3)  # ab, ba, ab (not across texts)
    assert res.values["distinct_3"] == 1.0
    assert res.values["distinct_4"] == 0.0  # no 4-gram at all: 0, as pr-4-llm
    assert res.extras["total"][4] == 0
    two = compute("distinct_n", ["a b a"], params={"tokenizer": "whitespace", "n": 2})
    assert set(two.values) == {"distinct_1", "distinct_2"}


def test_distinct_n_matches_pr4llm(real_texts):
    from genmetrics.data.assets import gpt2_encoding

    enc = gpt2_encoding()
    texts = real_texts + ["naïve café – 日本語のテキスト 🙂", "end <|endoftext|> marker"]
    ids = [enc.encode(t, allowed_special="all") for t in texts]
    assert ids[-1][2] == 50256  # the special token is one id, as HF's GPT-2 tokenizer gives
    res = compute("distinct_n", texts)
    for k, v in pr4llm_distinct(ids).items():
        assert res.values[k] == pytest.approx(v, abs=1e-15)
    ws = compute("distinct_n", texts, params={"tokenizer": "whitespace"})
    for k, v in pr4llm_distinct([t.split() for t in texts]).items():
        assert ws.values[k] == pytest.approx(v, abs=1e-15)


def test_distinct_n_errors():
    with pytest.raises(GenmetricsError, match="tokenizer"):
        compute("distinct_n", ["a b"], params={"tokenizer": "bpe"})
    with pytest.raises(GenmetricsError, match=r"params\.n"):
        compute("distinct_n", ["a b"], params={"n": 0})
