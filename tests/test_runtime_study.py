"""The runtime study (Shaib et al. 2024, Fig. 3; `make runtime`): the sweep at tiny size through
the benchmark's entry point, the sweep's rules (median, caps, time limit, agreement), the
markdown table and the figure."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pandas as pd
import pytest

from genmetrics import GenmetricsError
from genmetrics.figures.runtime import runtime_figure
from genmetrics.studies.shaib_diversity.runtime import (
    COLUMNS,
    ScoreTiming,
    agreement_failures,
    runtime_markdown,
    runtime_stops,
    runtime_sweep,
    sample_texts,
    time_call,
)
from genmetrics.studies.shaib_diversity.runtime_scores import SCORES, shaib_scores

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_diversity_runtime.py"

#: hand-made texts sharing 4-grams (self-repetition > 0) and words (homogenization > 0)
TEXTS = [
    "The cat sat on the mat and looked at the door for a long time.",
    "A dog ran in the park while the cat sat on the mat near the window.",
    "Rain fell all day, so the children stayed inside and read their books.",
    "The children read their books by the fire while the rain fell outside.",
    "Stock markets rose on Monday after the central bank held interest rates.",
    "The central bank held interest rates steady, and markets rose sharply.",
    "She walked to the station, bought a ticket and waited for the train.",
    "He waited for the train for an hour before he walked back home.",
    "Scientists found water on the moon, which could help future missions.",
    "Future missions to the moon could use the water that scientists found.",
    "The team won the final match after a long and tiring season of games.",
    "After a long season the team won the final match in extra time.",
]


def _write_texts(path: Path, texts: list[str]) -> Path:
    with open(path, "w", encoding="utf-8") as f:
        for i, t in enumerate(texts):
            f.write(json.dumps({"id": f"t{i}", "text": t}) + "\n")
    return path


def _bench():
    spec = importlib.util.spec_from_file_location("bench_diversity_runtime", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


#: every Fig. 3 score but the BERTScore homogenization (an encoder: seconds per call; it has
#: no reference offline, and tests/test_homogenization.py checks its values)
FAST = [s for s in SCORES if s != "homogenization_bertscore"]


def test_runtime_study_tiny_through_the_benchmark(tmp_path):
    """`make runtime`'s entry point at N = 5, 10, one repeat: each score timed (positive), the
    package's values equal ours at its rounding, the CSV, markdown, JSON and figure written."""
    if importlib.util.find_spec("diversity") is None:
        pytest.skip("reference package `diversity` not installed (make install-test)")
    data = _write_texts(tmp_path / "texts.jsonl", TEXTS)
    out = tmp_path / "runtime"
    argv = ["--data", str(data), "--ns", "5", "10", "--repeats", "1", "--out", str(out)]
    assert _bench().main([*argv, "--scores", *FAST]) == 0
    table = pd.read_csv(out / "runtime.csv")
    assert list(table.columns) == list(COLUMNS)
    assert set(table["score"]) == set(FAST)
    ours = table[table["implementation"] == "ours"]
    ref = table[table["implementation"] == "reference"]
    assert len(ours) == len(ref) == 2 * len(FAST)  # every score at both N, both sides
    assert (table["seconds"] > 0).all() and (table["repeats"] == 1).all()
    assert sorted(set(table["n_texts"])) == [5, 10]
    # the values agree: to 3 decimals where the package rounds, to 1e-9 where it does not
    assert ref["abs_diff"].notna().all()
    rounded = ref[ref["score"].isin(["compression_ratio", "ngram_diversity"])]
    assert (rounded["abs_diff"] <= 1e-3 + 1e-12).all()
    exact = ref[ref["score"].isin(["self_repetition", "self_bleu"])]
    assert (exact["abs_diff"] <= 1e-9).all()
    srep = ours[ours["score"] == "self_repetition"].set_index("n_texts")["value"]
    assert srep[10] > 0  # texts 1-2 share "the cat sat on the mat": a real value, not 0
    merged = ours.merge(ref, on=["score", "n_texts"], suffixes=("_ours", "_ref"))
    both = merged[merged["score"] != "self_bleu"]
    assert ((both["value_ours"].round(3) - both["value_ref"]).abs() <= 1e-3 + 1e-12).all()
    png = (out / "runtime.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000
    md = (out / "runtime.md").read_text(encoding="utf-8")
    assert "| N = 5 | N = 10 |" in md and "| Hom. (ROUGE-L) | reference / ours |" in md
    settings = json.loads((out / "runtime.json").read_text(encoding="utf-8"))
    assert settings["ns"] == [5, 10] and settings["seed"] == 0


def test_scores_without_an_offline_reference_say_why():
    """The BERTScore homogenization is timed alone; the reference column says why, as it says
    which stand-ins replace the package where its version cannot run offline."""
    specs = {
        s.score: s for s in shaib_scores(caps={"self_bleu:reference": 7, "ngram_diversity": 9})
    }
    assert list(specs) == list(SCORES)
    bert = specs["homogenization_bertscore"]
    assert bert.reference is None and bert.reference_name.startswith("unavailable offline (")
    assert "evaluate" in bert.reference_name and "hub" in bert.reference_name
    assert specs["self_bleu"].reference_name.startswith("nltk sentence_bleu loop")
    assert "spaCy" in specs["pos_compression_ratio"].reference_name
    assert (specs["self_bleu"].reference_max_n, specs["self_bleu"].ours_max_n) == (7, None)
    assert specs["ngram_diversity"].ours_max_n == specs["ngram_diversity"].reference_max_n == 9
    assert specs["self_repetition"].digits is None and specs["compression_ratio"].digits == 3
    with pytest.raises(GenmetricsError, match="unknown score"):
        shaib_scores(scores=["mattr"])


def _len_spec(**kw) -> ScoreTiming:
    """ours = N/3 unrounded, reference = the same rounded to 3 (as the package)."""
    base = dict(
        score="length",
        label="Len.",
        ours=lambda x: len(x) / 3,
        reference=lambda x: round(len(x) / 3, 3),
        reference_name="rounded",
    )
    return ScoreTiming(**{**base, **kw})


def test_sweep_caps_time_limit_and_agreement():
    texts = [f"text {i}" for i in range(20)]
    table, stops = runtime_sweep([_len_spec(ours_max_n=5)], texts, [10, 5, 20], repeats=2)
    got = table.groupby("implementation")["n_texts"].apply(list).to_dict()
    assert got == {"ours": [5], "reference": [5, 10, 20]}  # ns sorted, ours capped at 5
    assert (table["value"][table["implementation"] == "ours"] == 5 / 3).all()
    assert table.loc[table["implementation"] == "reference", "abs_diff"].iloc[0] == 0.0
    assert math.isnan(table.loc[table["n_texts"] == 10, "abs_diff"].iloc[0])  # ours not run
    assert runtime_stops(stops) == ["length (ours): stopped after N = 5: cap: N ≤ 5"]
    assert agreement_failures(table, [_len_spec()]).empty
    # a reference that is off by 0.01 is caught
    wrong = _len_spec(reference=lambda x: round(len(x) / 3, 3) + 0.01)
    table, _ = runtime_sweep([wrong], texts, [5, 10], repeats=1)
    assert len(agreement_failures(table, [wrong])) == 2
    # a time limit of 0 s stops every implementation after its first N
    table, stops = runtime_sweep([_len_spec()], texts, [5, 10], repeats=1, time_limit_s=0)
    assert list(table["n_texts"]) == [5, 5]
    assert all(s["last_n"] == 5 and "took" in s["why"] for s in stops)
    # no reference: ours alone, the reference column saying why
    alone = _len_spec(reference=None, reference_name="unavailable offline (test)")
    table, stops = runtime_sweep([alone], texts, [5], repeats=1)
    assert list(table["implementation"]) == ["ours"] and not stops
    with pytest.raises(GenmetricsError, match="fewer than the largest N"):
        runtime_sweep([_len_spec()], texts, [5, 50])


def test_time_call_repeats_and_median():
    calls = []

    def fn(x):
        calls.append(1)
        return 2.5

    seconds, value, runs = time_call(fn, ["a"], repeats=3)
    assert (value, runs, len(calls)) == (2.5, 3, 3) and seconds > 0
    _, _, runs = time_call(fn, ["a"], repeats=5, repeat_limit_s=0.0)
    assert runs == 1  # one run already over the limit: not repeated
    with pytest.raises(GenmetricsError):
        time_call(fn, ["a"], repeats=0)


def test_sample_texts_is_seeded_and_nested(tmp_path):
    path = _write_texts(tmp_path / "t.jsonl", TEXTS)
    a, b = sample_texts(path, 10, seed=3), sample_texts(path, 6, seed=3)
    assert a[:6] == b and len(set(a)) == 10 and set(a) <= set(TEXTS)
    assert sample_texts(path, 10, seed=4) != a
    with pytest.raises(GenmetricsError, match="fewer than the largest N"):
        sample_texts(path, 13, seed=0)


def _table() -> pd.DataFrame:
    rows = []
    for label, score, ref in (("CR", "cr", True), ("Hom. (BERTScore)", "hb", False)):
        for n, s in ((10, 0.5), (100, 5.0)):
            rows.append(
                (
                    score,
                    label,
                    "ours",
                    n,
                    s,
                    1.0,
                    3,
                    0.0 if ref else math.nan,
                    "pkg" if ref else "none",
                )
            )
            if ref:
                rows.append((score, label, "reference", n, 4 * s, 1.0, 3, 0.0, "pkg"))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def test_markdown_rows_and_ratio():
    stop = {"score": "cr", "implementation": "reference", "last_n": 100, "why": "cap: N ≤ 100"}
    md = runtime_markdown(_table(), [stop])
    assert "| CR | ours (s) | 0.5 | 5 | 0 |" in md
    assert "| CR | reference (s) | 2 | 20 | 0 |" in md
    assert "| CR | reference / ours | 4.0× | 4.0× | |" in md
    assert "| Hom. (BERTScore) | reference (s) | — | — | — |" in md
    assert "- cr (reference): stopped after N = 100: cap: N ≤ 100" in md


def test_runtime_figure_from_a_hand_made_table(tmp_path):
    path = tmp_path / "fig" / "runtime.png"
    path.parent.mkdir()
    runtime_figure(_table(), path, "2 CPU cores; hand-made table", note="Dashed: the package")
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5_000
    assert not list(path.parent.glob("*.tmp*"))  # written atomically
