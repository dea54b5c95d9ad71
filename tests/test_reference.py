"""BLEU (sacrebleu) and ROUGE (rouge-score) against the reference packages and stored scores."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from genmetrics import GenmetricsError
from genmetrics.metrics import compute

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def _rows(path: Path) -> list[dict]:
    if not path.exists():
        pytest.skip(f"shared data missing: {path}")
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@pytest.fixture(scope="module")
def pairs() -> tuple[list[str], list[str]]:
    """200 GPT-2-XL contrastive-search continuations and their human WikiText references."""
    rows = [
        r for r in _rows(DATA / "contrastive_search" / "wikitext103.jsonl") if r["text"].strip()
    ]
    rows = rows[:200]
    return [r["text"] for r in rows], [r["reference"] for r in rows]


def test_bleu_matches_sacrebleu(pairs):
    import sacrebleu

    hyp, ref = pairs
    res = compute("bleu", hyp, ref)
    assert res.values["bleu"] == pytest.approx(sacrebleu.corpus_bleu(hyp, [ref]).score, abs=1e-12)
    assert res.extras["signature"].startswith(
        "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2."
    )
    low = compute("bleu", hyp, ref, params={"lowercase": True, "tokenize": "intl"})
    expect = sacrebleu.corpus_bleu(hyp, [ref], lowercase=True, tokenize="intl").score
    assert low.values["bleu"] == pytest.approx(expect, abs=1e-12)
    assert "case:lc" in low.extras["signature"] and "tok:intl" in low.extras["signature"]


def test_bleu_hand():
    assert compute("bleu", ["the cat sat on the mat"], ["the cat sat on the mat"]).values[
        "bleu"
    ] == pytest.approx(100.0)
    # 6 tokens vs 6: p1..p4 = 5/6, 3/5, 2/4, 1/3 ("a" ↔ "the"), BP = 1
    expect = 100 * np.exp(np.mean(np.log([5 / 6, 3 / 5, 2 / 4, 1 / 3])))
    got = compute("bleu", ["the cat sat on the mat"], ["the cat sat on a mat"]).values["bleu"]
    assert got == pytest.approx(expect, rel=1e-12)


@pytest.mark.parametrize("stem", [False, True])
def test_rouge_matches_rouge_score(pairs, stem):
    import nltk
    from rouge_score import rouge_scorer

    from genmetrics.data.assets import use_nltk_data

    hyp, ref = pairs
    hyp, ref = hyp[:100], ref[:100]
    res = compute("rouge", hyp, ref, params={"use_stemmer": stem})
    use_nltk_data()
    sc = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"], use_stemmer=stem)
    per = {k: [] for k in ("rouge1", "rouge2", "rougeL", "rougeLsum")}
    prec = {k: [] for k in per}
    for h, r in zip(hyp, ref, strict=True):
        s = sc.score(r, h)
        lsum = sc.score("\n".join(nltk.sent_tokenize(r)), "\n".join(nltk.sent_tokenize(h)))
        s["rougeLsum"] = lsum["rougeLsum"]
        for k in per:
            per[k].append(s[k].fmeasure)
            prec[k].append(s[k].precision)
    for k in per:
        assert res.values[k] == pytest.approx(np.mean(per[k]), abs=1e-12)
        assert res.values[f"{k}_precision"] == pytest.approx(np.mean(prec[k]), abs=1e-12)
        np.testing.assert_allclose(res.extras[k], per[k], atol=1e-15)
    # sentence splitting matters for rougeLsum only
    raw = compute("rouge", hyp, ref, params={"use_stemmer": stem, "split_sentences": False})
    assert raw.values["rouge1"] == res.values["rouge1"]
    assert raw.values["rougeLsum"] != pytest.approx(res.values["rougeLsum"])


def test_rouge_hand():
    same = compute("rouge", ["The cat sat."], ["the cat sat"])
    assert all(
        same.values[k] == pytest.approx(1.0) for k in ("rouge1", "rouge2", "rougeL", "rougeLsum")
    )
    res = compute("rouge", ["a b x d"], ["a b c d"])
    assert res.values["rouge1"] == pytest.approx(0.75)
    assert res.values["rouge2"] == pytest.approx(1 / 3)  # ab ↔ {ab, bc, cd}
    assert res.values["rougeL"] == pytest.approx(0.75)  # LCS a b d


def test_rouge_against_realsumm_stored_scores():
    """REALSumm's stored ROUGE come from another implementation (perl ROUGE-1.5.5 family, with
    stemming); on its own PTB-tokenised, one-sentence-per-line texts rouge-score agrees to the
    stored 5 decimals for most summaries and tracks the rest closely. Measured on all 2,500:
    exact 64.6 % (R1), 77.8 % (R2), 55.8 % (R-L summary level); Pearson .995 / .998 / .961."""
    refs = {r["id"]: r["text"] for r in _rows(DATA / "realsumm" / "references.jsonl")}
    rows = _rows(DATA / "realsumm" / "summaries.jsonl")[::5]  # 500 summaries, all systems
    hyp = [r["text"] for r in rows]
    ref = [refs[r["source_id"]] for r in rows]
    res = compute("rouge", hyp, ref, params={"use_stemmer": True, "split_sentences": False})
    for ours, theirs, min_exact, min_corr in [
        ("rouge1", "rouge_1_f_score", 0.55, 0.99),
        ("rouge2", "rouge_2_f_score", 0.7, 0.99),
        ("rougeLsum", "rouge_l_f_score", 0.45, 0.95),
    ]:
        o = res.extras[ours]
        t = np.array([r["scores"][theirs] for r in rows])
        assert np.mean(np.abs(o - t) < 6e-6) >= min_exact, ours
        assert np.corrcoef(o, t)[0, 1] >= min_corr, ours
        assert abs(o.mean() - t.mean()) < 0.012, ours
    # the stored ROUGE-L is summary-level (rougeLsum), not sentence-level rougeL
    t = np.array([r["scores"]["rouge_l_f_score"] for r in rows])
    assert (
        np.mean(np.abs(res.extras["rougeLsum"] - t)) < np.mean(np.abs(res.extras["rougeL"] - t)) / 3
    )


def test_empty_texts_equal_sacrebleu_and_rouge_score(pairs):
    """An empty hypothesis (or reference) stays in the corpus, scored as the packages do."""
    import sacrebleu
    from rouge_score import rouge_scorer

    hyp, ref = pairs
    hyp, ref = list(hyp[:30]), list(ref[:30])
    hyp[3], hyp[7], ref[11] = "", "   ", ""
    bleu = compute("bleu", hyp, ref)
    assert bleu.values["bleu"] == pytest.approx(sacrebleu.corpus_bleu(hyp, [ref]).score, abs=1e-12)
    assert bleu.values["bleu"] < compute("bleu", pairs[0][:30], pairs[1][:30]).values["bleu"]
    res = compute("rouge", hyp, ref, params={"split_sentences": False})
    sc = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL", "rougeLsum"])
    per = [sc.score(r, h) for h, r in zip(hyp, ref, strict=True)]
    for k in ("rouge1", "rouge2", "rougeL", "rougeLsum"):
        assert res.values[k] == pytest.approx(np.mean([s[k].fmeasure for s in per]), abs=1e-12)
        assert res.extras[k][3] == res.extras[k][7] == res.extras[k][11] == 0.0
    assert res.n["empty_tokens"] == 3
    one = compute("rouge", ["", "a b"], ["a b", ""])  # also with sentence splitting
    assert one.extras["rougeLsum"].tolist() == [0.0, 0.0]


def test_errors_and_non_ascii():
    with pytest.raises(GenmetricsError, match="needs a reference"):
        compute("bleu", ["a b"])
    with pytest.raises(GenmetricsError, match="paired"):
        compute("rouge", ["a b", "c"], ["a b"])
    with pytest.raises(GenmetricsError, match="tokenize"):
        compute("bleu", ["a"], ["a"], params={"tokenize": "nope"})
    # rouge-score keeps only [a-z0-9]: texts without them score 0 and are counted
    res = compute(
        "rouge", ["日本語のテキスト", "café au lait"], ["日本語のテキスト", "café au lait"]
    )
    assert res.n["empty_tokens"] == 1
    assert res.extras["rouge1"].tolist() == [0.0, 1.0]
    # sacrebleu handles non-ASCII (13a splits on punctuation only): identical texts → 100
    assert compute("bleu", ["日本語 の テキスト です 。"], ["日本語 の テキスト です 。"]).values[
        "bleu"
    ] == pytest.approx(100.0)


# ------------------------------------------------------------------ BERTScore


@pytest.fixture(scope="module")
def summary_pairs() -> tuple[list[str], list[str]]:
    """8 REALSumm system summaries (several documents and systems) and their references."""
    refs = {r["id"]: r["text"] for r in _rows(DATA / "realsumm" / "references.jsonl")}
    rows = _rows(DATA / "realsumm" / "summaries.jsonl")[::311][:8]
    return [r["text"] for r in rows], [refs[r["source_id"]] for r in rows]


@pytest.mark.parametrize("idf", [False, True])
def test_bertscore_matches_bert_score(summary_pairs, idf):
    """Per-pair P/R/F1 = ``bert_score.score`` with the same model folder and layer (the offline
    MiniLM, its last layer 6), no baseline rescaling; the values are their plain means."""
    bert_score = pytest.importorskip("bert_score")
    from genmetrics.data.assets import minilm_dir

    hyp, ref = summary_pairs
    res = compute("bertscore", hyp, ref, params={"idf": idf})
    model = str(minilm_dir())
    assert res.extras["model"] == model and res.extras["num_layers"] == 6
    P, R, F = bert_score.score(
        hyp, ref, model_type=model, num_layers=6, idf=idf, lang=None, nthreads=0
    )
    for key, want in (("precision", P), ("recall", R), ("f1", F)):
        got = res.extras[key]
        assert got.shape == (len(hyp),)
        np.testing.assert_allclose(got, want.numpy(), atol=1e-5)
        assert res.values[f"bertscore_{key}"] == pytest.approx(got.mean(), abs=1e-12)
    assert res.n["empty_tokens"] == 0
    assert 0 < res.values["bertscore_f1"] < 1


@pytest.mark.parametrize("idf", [False, True])
def test_bertscore_streamed_blocks_match_bert_score(summary_pairs, idf, monkeypatch):
    """Streamed in blocks of pairs (here batch_size=2 and blocks of ≥ 300 word pieces: about
    a dozen blocks of 1–3 pair batches), with texts repeated across blocks, an empty candidate
    and an empty reference: the per-pair P/R/F1 of one bert_score ``BERTScorer.score`` call
    over all pairs (what ``bert_score.score`` runs; its tokenizer given the empty-text method
    transformers 5 dropped), within 1e-5. bert_score's padding convention (a padded position
    matches with similarity 0) moves pairs 8 and 11 by ~4e-3 between batch sizes 1 and 2, so
    the pair batches must be bert_score's own ones for this to hold."""
    pytest.importorskip("bert_score")
    from bert_score import BERTScorer

    from genmetrics.metrics import reference as reference_module
    from genmetrics.metrics.homogenization import bert_score_tokenizer

    monkeypatch.setattr(reference_module, "_BLOCK_TOKENS", 300)
    hyp, ref = summary_pairs
    short = ["The cat sat on the mat.", "Stocks fell sharply.", "A b c", "rain"]
    hyp = [*hyp, *short, *hyp, *short, *hyp][:40]
    ref = [*ref, *reversed(short), *ref[::-1], *short, *ref][:40]
    hyp[5], ref[21] = "", "  "
    res = compute("bertscore", hyp, ref, params={"idf": idf, "batch_size": 2})
    model = str(res.extras["model"])
    scorer = BERTScorer(
        model_type=model, num_layers=6, idf=idf, lang=None, nthreads=0, batch_size=2
    )
    scorer._tokenizer = bert_score_tokenizer(model)
    if idf:
        scorer.compute_idf(ref)
    P, R, F = scorer.score(hyp, ref, batch_size=2)
    for key, want in (("precision", P), ("recall", R), ("f1", F)):
        np.testing.assert_allclose(res.extras[key], want.double().numpy(), atol=1e-5)
    unpadded = scorer.score(hyp, ref, batch_size=1)[2].double().numpy()
    assert np.abs(unpadded - res.extras["f1"]).max() > 1e-3  # the padding convention acts
    assert res.extras["f1"][5] == res.extras["f1"][21] == 0.0
    assert res.n["empty_tokens"] == 2
    assert res.extras["device"] in ("cpu", "cuda:0")


def test_encoder_passes_cut_long_texts_into_fewer_rows():
    """Hand-computed with batch_size 64 (rows·L ≤ 64·64, rows·L² ≤ 64·2^13): two texts of 512
    word pieces per pass, six of 277, 32 of 128, 64 of 64 (bert_score's batch); a pass is
    padded to its first (longest) text; batch_size 1 still makes progress."""
    from genmetrics.metrics.homogenization import encoder_passes

    lengths = [512] * 3 + [277] * 7 + [128] * 40 + [64] * 70 + [2] * 5
    assert encoder_passes(lengths, 64) == [(0, 2), (2, 4), (4, 10), (10, 42), (42, 74), (74, 125)]
    assert encoder_passes([512, 512, 3], 1) == [(0, 1), (1, 2), (2, 3)]
    assert encoder_passes([60] * 130, 64) == [(0, 64), (64, 128), (128, 130)]
    assert encoder_passes([], 64) == []


@pytest.mark.parametrize("idf", [False, True])
def test_bertscore_split_passes_match_bert_score(summary_pairs, idf, monkeypatch):
    """With a tight word-piece budget per forward pass (rows·L ≤ 4·24, so most texts go alone
    and short ones two or more to a pass), the per-pair P/R/F1 are still bert_score's own
    (same pair batches of 4) within 1e-5: how texts are grouped for the encoder moves an
    embedding by float32 rounding only."""
    pytest.importorskip("bert_score")
    import bert_score

    from genmetrics.metrics import homogenization as homogenization_module

    monkeypatch.setattr(homogenization_module, "PASS_TOKENS_PER_ROW", 24)
    seen: list[int] = []
    cut = homogenization_module.encoder_passes

    def spy(lengths, batch_size):
        passes = cut(lengths, batch_size)
        seen.extend(e - s for s, e in passes)
        return passes

    monkeypatch.setattr(homogenization_module, "encoder_passes", spy)
    hyp, ref = summary_pairs
    short = ["The cat sat on the mat.", "Stocks fell sharply.", "A b c", "rain"]
    hyp, ref = [*hyp, *short], [*ref, *reversed(short)]
    res = compute("bertscore", hyp, ref, params={"idf": idf, "batch_size": 4})
    assert 1 in seen and max(seen) > 1  # long texts alone, short ones together
    model = str(res.extras["model"])
    P, R, F = bert_score.score(
        hyp, ref, model_type=model, num_layers=6, idf=idf, lang=None, nthreads=0, batch_size=4
    )
    for key, want in (("precision", P), ("recall", R), ("f1", F)):
        np.testing.assert_allclose(res.extras[key], want.double().numpy(), atol=1e-5)


def test_bertscore_hand_and_ordering(summary_pairs):
    """Identical texts score 1; each summary scores higher against its own reference than
    against another document's."""
    same = ["The cat sat on the mat.", "Stocks fell sharply in early trading on Monday."]
    res = compute("bertscore", same, same)
    for key in ("precision", "recall", "f1"):
        np.testing.assert_allclose(res.extras[key], 1.0, atol=1e-5)
    hyp, ref = summary_pairs
    own = compute("bertscore", hyp, ref)
    shuffled = compute("bertscore", hyp, ref[1:] + ref[:1])
    assert np.all(own.extras["f1"] > shuffled.extras["f1"])
    assert own.values["bertscore_f1"] > shuffled.values["bertscore_f1"]


def test_bertscore_empty_texts_and_errors(summary_pairs):
    """A pair with an empty side scores 0 (bert_score's rule), counts in the mean and in
    ``n["empty_tokens"]``; a length mismatch is refused naming the metric."""
    hyp, ref = summary_pairs
    hyp, ref = list(hyp[:4]), list(ref[:4])
    hyp[1], ref[2] = "", "   "
    res = compute("bertscore", hyp, ref)
    for key in ("precision", "recall", "f1"):
        assert res.extras[key][1] == res.extras[key][2] == 0.0
        assert res.values[f"bertscore_{key}"] == pytest.approx(res.extras[key].mean(), abs=1e-12)
    assert res.n["empty_tokens"] == 2
    full = compute("bertscore", summary_pairs[0][:4], summary_pairs[1][:4])
    np.testing.assert_allclose(res.extras["f1"][[0, 3]], full.extras["f1"][[0, 3]], atol=1e-5)
    with pytest.raises(GenmetricsError, match="'bertscore' is paired"):
        compute("bertscore", ["a b", "c"], ["a b"])
    with pytest.raises(GenmetricsError, match="bertscore.*num_layers"):
        compute("bertscore", ["a b"], ["a b"], params={"num_layers": 99})
