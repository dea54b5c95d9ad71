"""No silent wrong number: texts a model truncated are counted (feature files' provenance, the
score record of perplexity on them and of BERTScore), degenerate sets warn (zero k-NN radii,
identical MAUVE histograms, a rank-deficient Fréchet covariance, a value not finite), and the
warnings reach ``scores.csv``, the headline table and the HTML report."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import build_model, build_tokenizer

from genmetrics.analysis import headline
from genmetrics.analysis.aggregate import collect_scores, write_aggregates
from genmetrics.analysis.headline import headline_markdown, headline_scores, headline_table
from genmetrics.features.embed import embed_source, embed_texts
from genmetrics.features.surprisal import surprisal_source, surprisal_texts
from genmetrics.io import write_json
from genmetrics.metrics import compute
from genmetrics.npz import read_provenance, save_npz, with_provenance
from genmetrics.scoring.from_files import score_files, score_loaded

WORDS = "the a cat dog sat ran on in mat park and then it was happy sad big small".split()


def long_texts(n: int = 10, shared: int = 40, rest: int = 20) -> list[str]:
    """``n`` different texts that share their first ``shared`` words (one token each with
    the word-level tiny tokenizer) and differ after them."""
    rng = np.random.default_rng(0)
    head = " ".join(rng.choice(WORDS, shared))
    out = [f"{head} " + " ".join(rng.choice(WORDS, rest)) for _ in range(n)]
    assert len(set(out)) == n
    return out


@pytest.fixture(scope="module")
def lm():
    tok = build_tokenizer(with_bos=True)
    return build_model(len(tok)), tok


# ------------------------------------------------------------------ truncation


def test_embeddings_count_the_texts_their_max_tokens_cut(lm, tmp_path):
    """Ten different texts that differ only after ``max_tokens``: their embeddings are the
    same vector (Vendi 1, "all identical"); the featurizer's stats, the feature file's
    provenance and the Vendi score record say that all ten were cut, at which length."""
    texts = long_texts()
    stats: dict = {}
    emb = embed_texts(texts, lm, kind="causal_lm", max_tokens=32, stats=stats)
    assert stats["truncation"] == {"texts": 10, "truncated": 10, "max_tokens": 32, "longest": 61}
    assert np.allclose(emb, emb[0], atol=1e-6)  # what truncation did to them
    short: dict = {}
    embed_texts(["the cat sat", "a dog"], lm, max_tokens=32, stats=short)
    assert short["truncation"]["truncated"] == 0 and short["truncation"]["longest"] == 4

    rows = [{"id": f"t{i}", "text": t} for i, t in enumerate(texts)]
    stats = {}
    arrays = embed_source(rows, "text", "m", lm, kind="causal_lm", max_tokens=32, stats=stats)
    path = tmp_path / "m.npz"
    save_npz(path, **with_provenance(arrays, {"truncation": stats["truncation"]}))
    assert read_provenance(path)["truncation"]["truncated"] == 10
    rec = score_files("vendi", path)
    assert rec["values"]["vendi"] == pytest.approx(1.0, abs=1e-3)
    assert rec["truncation"] == {"candidate": stats["truncation"]}
    assert rec["warnings"] == [
        "texts truncated: 10 of 10 candidate texts (100%) cut at 32 tokens (longest 61)"
    ]


def test_a_cached_embedding_still_counts_its_truncation(lm, tmp_path):
    """The count comes from the tokenizer, so a run served by the feature cache (the model
    never runs) says the same."""
    texts = long_texts(4)
    first, second = {}, {}
    settings = {"max_tokens": 32, "cache_dir": tmp_path, "cache_key": "tiny"}
    embed_texts(texts, lm, stats=first, **settings)
    embed_texts(texts, lm, stats=second, **settings)
    assert second["computed"] == 0 and second["truncation"] == first["truncation"]
    assert first["truncation"]["truncated"] == 4


def test_perplexity_on_cut_surprisal_says_how_many_texts_were_cut(lm, tmp_path):
    """Surprisal at ``max_tokens`` scores only each text's first tokens: the surprisal stats
    count the cut texts (start token and prompt included, as the evaluator reads them) and a
    perplexity on the file carries the count and a warning."""
    texts = long_texts(5, shared=10, rest=20)  # 31 tokens with the start token
    stats: dict = {}
    values = surprisal_texts([*texts, "the cat"], lm, max_tokens=16, stats=stats)
    assert [len(v) for v in values] == [15] * 5 + [2]
    assert stats["truncation"] == {"texts": 6, "truncated": 5, "max_tokens": 16, "longest": 31}
    rows = [{"id": f"g{i}", "prompt_id": f"p{i}", "prompt": "the cat", "text": t,
             "continuation": t} for i, t in enumerate(texts)]  # fmt: skip
    stats = {}
    arrays = surprisal_source(rows, "continuation", "m", lm, max_tokens=34, stats=stats)
    # start token + 2 prompt tokens + 30 text tokens = 33: all fit in 34
    assert stats["truncation"] == {"texts": 5, "truncated": 0, "max_tokens": 34, "longest": 33}
    arrays = surprisal_source(rows, "continuation", "m", lm, max_tokens=20, stats=stats)
    path = tmp_path / "s.npz"
    save_npz(path, **with_provenance(arrays, {"truncation": stats["truncation"]}))
    rec = score_files("perplexity", path)
    assert rec["truncation"]["candidate"]["truncated"] == 5
    assert "texts truncated: 5 of 5 candidate texts (100%) cut at 20 tokens" in rec["warnings"][0]


def test_bertscore_counts_the_texts_its_encoder_cut():
    """bert_score cuts every text at the tokenizer's ``model_max_length`` (512 word pieces
    for all-MiniLM-L6-v2) without a word; the result counts them per role."""
    long = " ".join(["the cat sat on the mat and then it ran"] * 80)  # ~800 word pieces
    hyp = [long, "The cat sat on the mat."]
    ref = ["The dog sat on the mat.", "A cat is on a mat."]
    res = compute("bertscore", hyp, ref)
    cut = res.truncation["candidate"]
    assert (cut["texts"], cut["truncated"], cut["max_tokens"]) == (2, 1, 512)
    assert cut["longest"] > 512
    assert res.truncation["reference"]["truncated"] == 0
    rows = [{"id": str(i)} for i in range(2)]
    rec = score_loaded("bertscore", hyp, rows, ref, rows)
    assert rec["warnings"] == [
        f"texts truncated: 1 of 2 candidate texts (50%) cut at 512 tokens (longest "
        f"{cut['longest']})"
    ]


def test_homogenization_with_bertscore_counts_the_texts_its_encoder_cut():
    """Homogenization's BERTScore measure encodes each text once, cut at the tokenizer's
    ``model_max_length`` (512 for all-MiniLM-L6-v2) as bert_score cuts it: the result and the
    record count the texts cut; the ROUGE-L measure runs no model and counts nothing."""
    long = " ".join(["the cat sat on the mat and then it ran"] * 80)  # ~800 word pieces
    texts = [long, "The cat sat on the mat.", "A dog ran in the park.", "It was happy."]
    res = compute("homogenization", texts, params={"measure": "bertscore"})
    cut = res.truncation["candidate"]
    assert (cut["texts"], cut["truncated"], cut["max_tokens"]) == (4, 1, 512)
    assert cut["longest"] > 512
    rows = [{"id": str(i), "text": t} for i, t in enumerate(texts)]
    rec = score_loaded("homogenization", texts, rows, params={"measure": "bertscore"})
    assert rec["truncation"] == res.truncation
    assert rec["warnings"] == [
        f"texts truncated: 1 of 4 candidate texts (25%) cut at 512 tokens (longest "
        f"{cut['longest']})"
    ]
    assert compute("homogenization", texts).truncation == {}  # ROUGE-L: no model


# ------------------------------------------------------------------ degenerate sets


def test_precision_recall_of_a_duplicated_set_against_itself_warns():
    """Every text four times over, k = 3: every k-NN radius is 0, so under ``<`` (prdc) every
    ball is empty and P = R = D = C = 0; the result and the record say why."""
    rng = np.random.default_rng(1)
    x = np.repeat(rng.normal(size=(6, 8)), 4, axis=0)
    res = compute("precision_recall", x, x, params={"k": 3, "pca": False})
    assert res.values == {"precision": 0.0, "recall": 0.0, "density": 0.0, "coverage": 0.0}
    assert res.warnings == [
        "zero k-NN radii: 24 of 24 reference points have k=3 or more exact duplicates, "
        "radius 0: empty balls (strict <, as prdc)",
        "zero k-NN radii: 24 of 24 candidate points have k=3 or more exact duplicates, "
        "radius 0: empty balls (strict <, as prdc)",
    ]
    loose = compute("precision_recall", x, x, params={"k": 3, "pca": False, "strict": False})
    assert loose.values["precision"] == 1.0 and "balls of duplicates only" in loose.warnings[0]
    assert compute("precision_recall", x[::4], x[::4], params={"k": 3}).warnings == []


def test_mauve_of_identical_histograms_warns():
    """A set against itself: the same histogram on both sides, MAUVE at mauve-text's tie
    artefact, and a warning that says so; two different sets: no warning."""
    rng = np.random.default_rng(2)
    x = rng.normal(size=(60, 16))
    res = compute("mauve", x, x, params={"kmeans": "sklearn"})
    np.testing.assert_array_equal(res.extras["p_hist"], res.extras["q_hist"])
    assert len(res.warnings) == 1 and res.warnings[0].startswith("identical histograms: ")
    other = compute("mauve", x, rng.normal(2, 1, size=(60, 16)), params={"kmeans": "sklearn"})
    assert other.warnings == []


def test_frechet_with_fewer_texts_than_dimensions_warns():
    rng = np.random.default_rng(3)
    res = compute("frechet", rng.normal(size=(10, 16)), rng.normal(size=(40, 16)))
    assert res.extras["rank_deficient"] is True
    assert res.warnings == [
        "rank-deficient covariance: 10 texts <= 16 dimensions, the distance is biased "
        "upward (compare at equal n, or read KID)"
    ]
    assert compute("frechet", rng.normal(size=(40, 4)), rng.normal(size=(40, 4))).warnings == []


def test_a_value_beyond_the_float_range_warns():
    """Perplexity above the float range is reported as inf: the record says it saturated;
    every record has the ``warnings`` key, empty where nothing is wrong."""
    rows = [{"id": "a"}]
    rec = score_loaded("perplexity", [np.full(3, 800.0, np.float32)], rows)
    assert rec["values"]["perplexity"] == float("inf")
    assert rec["warnings"][0].startswith("saturated value: perplexity is inf")
    assert score_loaded("perplexity", [np.ones(3, np.float32)], rows)["warnings"] == []


# ------------------------------------------------------------------ the tables


def _record(source: str, metric: str, values: dict, warnings: list, truncation=None) -> dict:
    rec = {"metric": metric, "entry": metric, "dataset": "news", "source": source,
           "reference": "references", "values": values, "n": {"candidate": 10},
           "warnings": warnings}  # fmt: skip
    if truncation is not None:
        rec["truncation"] = truncation
    return rec


def _cut(n: int) -> dict:
    return {"candidate": {"texts": 10, "truncated": n, "max_tokens": 128, "longest": 2300}}


@pytest.fixture
def records(tmp_path):
    recs = [
        _record("big/seed0", "frechet", {"frechet": 1.5}, ["rank-deficient covariance: x"]),
        _record("big/seed1", "frechet", {"frechet": 1.7}, []),
        _record(
            "big/seed0",
            "vendi",
            {"vendi": 1.0},
            ["texts truncated: 7 of 10 candidate texts (70%) cut at 128 tokens"],
            _cut(7),
        ),
        _record("small/seed0", "vendi", {"vendi": 4.0}, [], _cut(0)),
        _record(
            "tiny/seed0",
            "vendi",
            {"vendi": 5.0},
            ["texts truncated: 0 of 10"],  # under the flag: not in the headline
            {"candidate": {"texts": 100, "truncated": 3, "max_tokens": 128, "longest": 200}},
        ),
    ]
    paths = []
    for i, r in enumerate(recs):
        write_json(tmp_path / f"{i}.json", r)
        paths.append(tmp_path / f"{i}.json")
    return paths


def test_scores_csv_carries_the_warnings_and_the_share_truncated(records):
    df = collect_scores(records)
    row = df[(df["metric"] == "frechet") & (df["seed"] == 0)].iloc[0]
    assert row["warnings"] == "rank-deficient covariance: x" and pd.isna(row["truncated"])
    assert pd.isna(df[(df["metric"] == "frechet") & (df["seed"] == 1)].iloc[0]["warnings"])
    vendi = df[df["metric"] == "vendi"].set_index("model")
    assert vendi.loc["big", "truncated"] == pytest.approx(0.7)
    assert vendi.loc["small", "truncated"] == 0.0 and pd.isna(vendi.loc["small", "warnings"])
    assert vendi.loc["big", "warnings"].startswith("texts truncated: 7 of 10")


def test_the_headline_flags_warnings_and_a_large_share_truncated(records, tmp_path):
    flag, mark = headline.TRUNCATED_FLAG, headline.WARNING_MARK
    df = collect_scores(records)
    long = headline_scores(df).set_index(["model", "metric"])
    assert long.loc[("big", "frechet"), "warnings"] == "rank-deficient covariance: x"
    assert long.loc[("big", "vendi"), "warnings"] == (
        f"texts truncated: 70% of the texts of a set cut at a model's maximum length "
        f"(flagged above {flag:.0%})"
    )
    assert pd.isna(long.loc[("small", "vendi"), "warnings"])
    assert pd.isna(long.loc[("tiny", "vendi"), "warnings"])  # 3% cut: under the flag
    assert long.loc[("tiny", "vendi"), "truncated"] == pytest.approx(0.03)
    table = headline_table(df)
    cells = table.xs("big", level="model").iloc[0]
    marked = [c for c in cells if isinstance(c, str) and c.endswith(mark)]
    assert len(marked) == 2
    small = table.xs("small", level="model").iloc[0]
    assert not any(isinstance(c, str) and mark in c for c in small)
    md = headline_markdown(table)
    assert f"{mark} news / big / frechet ↓ (≥ 0): rank-deficient covariance: x" in md
    assert "news / big / vendi ↑ (≥ 1): texts truncated: 70%" in md

    from genmetrics.report.html import write_html_report

    scores = tmp_path / "scores.csv"
    write_aggregates(records, scores, tmp_path / "s.csv", tmp_path / "h.csv", tmp_path / "h.md")
    back = pd.read_csv(scores)
    assert list(back.columns[-2:]) == ["truncated", "warnings"]
    assert "rank-deficient covariance: x" in set(back["warnings"].dropna())
    out = tmp_path / "report.html"
    write_html_report(out, scores, figures=[])
    page = out.read_text(encoding="utf-8")
    assert "<li>news / big / frechet ↓ (≥ 0): rank-deficient covariance: x</li>" in page
    assert mark in page
