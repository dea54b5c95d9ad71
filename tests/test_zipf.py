"""Zipf coefficient (degen and mauve-experiments conventions) against hand cases and
independent oracles written from the upstream code (Counter + scipy / sklearn)."""

from __future__ import annotations

import itertools
import json
import math
import operator
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from genmetrics import GenmetricsError
from genmetrics.metrics import compute

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
WS = {"tokenizer": "whitespace"}


# --- oracle 1: ari-holtzman/degen metrics/zipf.py @ 3bbf847 (main(), minus file reading).
def degen_zipf(samples, N=5000):
    from scipy import stats

    cnt = Counter()
    for gen in samples:
        cnt.update(gen)
    xs = np.arange(1, min(len(cnt), N) + 1)
    ys = np.array(sorted(cnt.values(), key=operator.neg)[:N])
    a, b, r, p, std = stats.linregress(np.log(xs), np.log(ys))
    return -a, -r


# --- oracle 2: krishnap25/mauve-experiments src/metrics.py @ 00d97f3, zipf_coeff verbatim.
def mauve_zipf_coeff(samples, min_num=1, max_num=5000, stretch_factor=15):
    from sklearn import linear_model

    counter = Counter()
    for s in samples:
        counter.update(s)
    top_freqs = np.array(sorted(counter.values(), key=operator.neg)[:max_num])
    xs, idxs_u = np.unique(
        np.round(
            stretch_factor
            * np.log(np.arange(min_num, min(len(counter), max_num)).astype(np.float64))
        )
        / stretch_factor,
        return_index=True,
    )
    ys = np.log(top_freqs[idxs_u])
    lr = linear_model.LinearRegression()
    lr.fit(xs.reshape(-1, 1), ys)
    return lr.coef_[0]


def zipf_texts(s: float, n_tokens: int, vocab: int, seed: int, per_text: int = 40) -> list[str]:
    """Words drawn i.i.d. with P(rank r) ∝ r^(−s), r = 1..vocab, cut into texts."""
    rng = np.random.default_rng(seed)
    p = np.arange(1, vocab + 1, dtype=np.float64) ** -s
    words = rng.choice(vocab, size=n_tokens, p=p / p.sum())
    return [
        " ".join(f"w{w}" for w in words[i : i + per_text]) for i in range(0, n_tokens, per_text)
    ]


def _rows(path: Path, n: int) -> list[str]:
    if not path.exists():
        pytest.skip(f"shared data missing: {path}")
    with open(path, encoding="utf-8") as f:
        return [json.loads(line)["text"] for line in itertools.islice(f, n)]


def test_hand_exact_power_law_degen():
    # counts C/r^s with C = 60 (s = 1) and C = 144 (s = 2): the log-log line is exact.
    for s, counts in ((1, [60, 30, 20, 15, 12, 10]), (2, [144, 36, 16, 9])):
        words = [f"t{r}" for r, c in enumerate(counts) for _ in range(c)]
        texts = [" ".join(words[i : i + 7]) for i in range(0, len(words), 7)] + [""]
        res = compute("zipf", texts, params=WS)
        assert res.values["zipf"] == pytest.approx(s, abs=1e-9)
        assert res.values["zipf_slope"] == pytest.approx(-s, abs=1e-9)
        assert res.values["zipf_r"] == pytest.approx(1.0, abs=1e-12)
        assert res.n["tokens"] == sum(counts) and res.n["vocab"] == len(counts)
        assert res.n["candidate"] == len(texts) and res.n["points"] == len(counts)


def test_hand_mauve_bins_and_dropped_last_rank():
    # counts 4, 2, 1 (V = 3): mauve-experiments fits ranks 1..2 only (arange(1, 3)), at
    # x = round(15 ln r)/15 = 0 and 10/15: slope = (ln 2 − ln 4) / (2/3) = −1.5 ln 2.
    res = compute("zipf", ["a a b a", "a b c", ""], params={**WS, "convention": "mauve"})
    assert res.values["zipf"] == pytest.approx(1.5 * math.log(2), abs=1e-12)
    assert res.values["zipf_slope"] == pytest.approx(-1.5 * math.log(2), abs=1e-12)
    assert res.n["ranks"] == 2 and res.n["points"] == 2 and res.n["vocab"] == 3
    # degen keeps the third rank: ln f = (ln 4, ln 2, 0) at ln r = (0, ln 2, ln 3)
    deg = compute("zipf", ["a a b a", "a b c"], params=WS)
    assert deg.values["zipf"] == pytest.approx(degen_zipf([["a"] * 4 + ["b"] * 2 + ["c"]])[0])
    assert deg.values["zipf"] != pytest.approx(res.values["zipf"], abs=1e-3)


@pytest.mark.parametrize("max_rank", [5000, 300])
@pytest.mark.parametrize("seed", [0, 1])
def test_matches_upstream_oracles_whitespace(seed, max_rank):
    texts = zipf_texts(1.1, 30000, 3000, seed)
    docs = [t.split() for t in texts]
    deg = compute("zipf", texts, params={**WS, "max_rank": max_rank})
    z, r = degen_zipf(docs, N=max_rank)
    assert deg.values["zipf"] == pytest.approx(z, abs=1e-9)
    assert deg.values["zipf_r"] == pytest.approx(r, abs=1e-9)
    mv = compute("zipf", texts, params={**WS, "max_rank": max_rank, "convention": "mauve"})
    slope = mauve_zipf_coeff(docs, max_num=max_rank)
    assert mv.values["zipf_slope"] == pytest.approx(slope, abs=1e-9)
    assert mv.values["zipf"] == pytest.approx(-slope, abs=1e-9)
    assert deg.n["vocab"] == mv.n["vocab"] == len(Counter(w for d in docs for w in d))


def test_matches_upstream_oracles_gpt2_real_text():
    try:
        from genmetrics.data.assets import gpt2_encoding

        enc = gpt2_encoding()
    except Exception as e:  # the asset cannot load offline here
        pytest.skip(f"GPT-2 BPE asset unavailable: {e}")
    texts = _rows(DATA / "webtext" / "face_demo_human.jsonl", 200)
    texts += _rows(DATA / "gpt2_generations" / "gpt2-1.5b_unconditional_t07.jsonl", 200)
    texts += ["", "end <|endoftext|> marker"]
    ids = [enc.encode(t, allowed_special="all") for t in texts]
    assert len(Counter(i for d in ids for i in d)) > 5000  # the N = 5000 cut is exercised
    deg = compute("zipf", texts, params={"tokenizer": "gpt2"})
    z, r = degen_zipf(ids)
    assert deg.values["zipf"] == pytest.approx(z, abs=1e-9)
    assert deg.values["zipf_r"] == pytest.approx(r, abs=1e-9)
    assert deg.values == compute("zipf", texts).values  # gpt2 and degen are the defaults
    mv = compute("zipf", texts, params={"convention": "mauve"})
    assert mv.values["zipf_slope"] == pytest.approx(mauve_zipf_coeff(ids), abs=1e-9)
    assert deg.n["tokens"] == sum(len(d) for d in ids)


def test_max_rank_truncates_only_a_larger_vocabulary():
    texts = zipf_texts(1.2, 20000, 2000, 3)
    for convention in ("degen", "mauve"):
        p = {**WS, "convention": convention}
        full = compute("zipf", texts, params=p)
        vocab = full.n["vocab"]
        assert 200 < vocab < 5000
        same = compute("zipf", texts, params={**p, "max_rank": vocab + 10})
        assert same.values == full.values
        cut = compute("zipf", texts, params={**p, "max_rank": 200})
        assert cut.n["ranks"] == 200 - (convention == "mauve")
        assert abs(cut.values["zipf"] - full.values["zipf"]) > 1e-3


@pytest.mark.parametrize("convention", ["degen", "mauve"])
def test_steeper_law_scores_higher(convention):
    p = {**WS, "convention": convention}
    flat = compute("zipf", zipf_texts(1.0, 20000, 2000, 4), params=p).values["zipf"]
    steep = compute("zipf", zipf_texts(1.5, 20000, 2000, 5), params=p).values["zipf"]
    assert steep > flat + 0.2, (steep, flat)


def test_degenerate_corpora_raise():
    with pytest.raises(GenmetricsError, match=r"zipf: 1 distinct token.*at least 2 distinct"):
        compute("zipf", ["the the the", "the"], params=WS)
    with pytest.raises(GenmetricsError, match=r"zipf: 0 distinct token"):
        compute("zipf", ["", "  ", "\n"], params=WS)
    with pytest.raises(GenmetricsError, match=r"zipf: 0 distinct token"):
        compute("zipf", ["", ""])  # gpt2 tokenizer too
    # mauve-experiments drops the last rank: 2 distinct tokens leave 1 bin
    with pytest.raises(GenmetricsError, match=r"mauve convention.*1 bin"):
        compute("zipf", ["a b a"], params={**WS, "convention": "mauve"})
    with pytest.raises(GenmetricsError, match=r"max_rank=2"):
        compute("zipf", ["a b a c"], params={**WS, "convention": "mauve", "max_rank": 2})
    with pytest.raises(GenmetricsError, match=r"max_rank: must be"):
        compute("zipf", ["a b a c"], params={**WS, "max_rank": 1})
    # two distinct tokens suffice for degen: equal frequencies give a flat line (r = 0)
    flat = compute("zipf", ["a b"], params=WS).values
    assert flat == {"zipf": 0.0, "zipf_r": 0.0, "zipf_slope": 0.0}


@pytest.mark.parametrize("convention", ["degen", "mauve"])
def test_equal_frequencies_slope_as_upstream_r_zero_where_scipy_is_nan(convention):
    """The one documented difference from degen: every fitted frequency equal. The slope is 0
    as scipy's linregress and sklearn's LinearRegression give it; scipy's r is NaN (0/0), and
    zipf_r is 0 by choice (module docstring), never NaN."""
    texts = ["a b c d e f", "g h i j"]  # ten tokens, each once
    docs = [t.split() for t in texts]
    res = compute("zipf", texts, params={**WS, "convention": convention}).values
    if convention == "degen":
        z, r = degen_zipf(docs)
        assert res["zipf"] == pytest.approx(z, abs=0) and math.isnan(r)
    else:
        assert res["zipf_slope"] == pytest.approx(mauve_zipf_coeff(docs), abs=1e-12)
    assert res == {"zipf": 0.0, "zipf_r": 0.0, "zipf_slope": 0.0}
    assert all(math.copysign(1.0, v) == 1.0 for v in res.values())  # +0.0, not −0.0
