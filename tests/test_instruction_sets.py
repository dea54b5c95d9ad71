"""Instruction sets compared with each other (Shaib et al. (2024), §10.2, App. A.4-A.5,
Tables 9, 12, 13): the downsample, both readings of the cut, the table on hand-built sets
(hand-computed values; compression ratios against the ``diversity`` package), the paper cells
beside ours, and the plan's section (errors naming their key)."""

from __future__ import annotations

import copy
import math

import pandas as pd
import pytest
import yaml
from conftest import REPO

from genmetrics import GenmetricsError
from genmetrics.analysis.paper_comparison import side_by_side
from genmetrics.plan import load_plan
from genmetrics.studies.shaib_diversity.instruction_sets import (
    cut,
    downsample,
    instruction_markdown,
    instruction_table,
    paper_matches,
    paper_table,
    size_departures,
)

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
COLUMNS = [
    {"label": "compression_ratio", "metric": "compression_ratio", "params": {},
     "name": "compression_ratio", "direction": "lower"},
    {"label": "self_repetition", "metric": "self_repetition", "params": {},
     "name": "self_repetition", "direction": "lower"},
]  # fmt: skip


def _set(*texts: str, prefix: str = "t") -> list[dict]:
    return [{"id": f"{prefix}{i}", "text": t} for i, t in enumerate(texts)]


def test_the_literal_cut_is_one_length_for_all_the_aligned_cut_one_per_position():
    sets = {
        "a": _set("one two three four", "x y"),
        "b": _set("p q r", "s t u v w"),
    }
    short, length = cut(sets, "shortest")
    assert length == 2  # "x y": the shortest instruction of both sets
    assert [r["text"] for r in short["a"]] == ["one two", "x y"]
    assert [r["text"] for r in short["b"]] == ["p q", "s t"]
    assert [r["n_words_original"] for r in short["b"]] == [3, 5]
    aligned, none = cut(sets, "aligned")
    assert none is None
    # position 0: min(4, 3) = 3 words; position 1: min(2, 5) = 2 words
    assert [r["text"] for r in aligned["a"]] == ["one two three", "x y"]
    assert [r["text"] for r in aligned["b"]] == ["p q r", "s t"]
    with pytest.raises(GenmetricsError, match="cut sets of one size"):
        cut({"a": _set("x"), "b": _set("y", "z")}, "aligned")
    with pytest.raises(GenmetricsError, match="analysis.instruction_sets.cuts"):
        cut(sets, "longest")


def test_the_downsample_keeps_the_smallest_size_and_each_sets_draw_is_its_own():
    sets = {"big": _set(*(f"w{i}" for i in range(50))), "small": _set("a", "b", "c")}
    drawn = downsample(sets, seed=0)
    assert {k: len(v) for k, v in drawn.items()} == {"big": 3, "small": 3}
    assert len({r["id"] for r in drawn["big"]}) == 3  # without replacement
    assert drawn == downsample(sets, seed=0)  # seeded
    # a set's draw depends on the seed and its name, not on the other sets
    more = downsample({**sets, "other": _set("d", "e", "f")}, seed=0)
    assert more["big"] == drawn["big"]
    assert downsample(sets, seed=1)["big"] != drawn["big"]
    # two sets of one size are not drawn in the same order (the order pairs the aligned cut)
    twins = downsample({"a": sets["big"], "b": sets["big"]}, seed=0, size=10)
    assert [r["id"] for r in twins["a"]] != [r["id"] for r in twins["b"]]
    assert [len(v) for v in downsample(sets, 0, size=2).values()] == [2, 2]
    with pytest.raises(GenmetricsError, match="analysis.instruction_sets.size: 4 is more"):
        downsample(sets, 0, size=4)
    with pytest.raises(GenmetricsError, match="without instructions"):
        downsample({"a": [], "b": _set("x")}, 0)


def test_the_table_on_hand_built_sets():
    from genmetrics.studies.shaib_diversity.runtime_scores import package_module

    compression = package_module("compression")  # the module alone (__init__ needs spaCy)
    if compression is None:
        pytest.skip("reference package `diversity` not installed (pip install --no-deps)")
    sets = {
        # 4-grams: "a b c d" is in both texts -> each text log(1 + 1); mean log 2
        "rep": _set("a b c d e", "a b c d f"),
        # no 4-gram shared -> 0
        "div": _set("the quick brown fox jumps", "over lazy dogs and cats", "x y z"),
    }
    table = instruction_table(sets, COLUMNS, seed=0, cuts=["shortest", "aligned"])
    assert list(table["version"]) == ["raw", "raw", "shortest", "shortest", "aligned", "aligned"]
    raw = table[table["version"] == "raw"].set_index("set")
    assert raw.loc["rep", "n_instructions"] == 2 and raw.loc["div", "n_instructions"] == 3
    assert raw.loc["rep", "total_words"] == 10 and raw.loc["div", "total_words"] == 13
    assert raw.loc["div", "mean_words"] == pytest.approx(13 / 3)
    assert raw.loc["rep", "self_repetition"] == pytest.approx(math.log(2))
    assert raw.loc["div", "self_repetition"] == 0.0
    for name, rows in sets.items():  # the paper's own package on the same texts
        want = compression.compression_ratio([r["text"] for r in rows], "gzip")
        assert raw.loc[name, "compression_ratio"] == pytest.approx(want, abs=5e-4)  # it rounds
    short = table[table["version"] == "shortest"].set_index("set")
    # both sets drawn down to 2; every kept text cut to the shortest kept one
    assert set(short["n_instructions"]) == {2}
    assert set(short["cut_words"]) == {int(short["mean_words"].min())}
    assert short["cut_words"].iloc[0] <= 5
    # no text keeps more words than the cut length: the words of the cut are all it has
    assert (short["total_words"] == 2 * short["cut_words"]).all()
    aligned = table[table["version"] == "aligned"].set_index("set")
    assert aligned["cut_words"].isna().all()
    # each position cut to its shortest: the two sets have the same total words
    assert aligned.loc["rep", "total_words"] == aligned.loc["div", "total_words"]
    md = instruction_markdown(table, COLUMNS)
    # sets ordered by total words, largest first (as the paper orders by size)
    assert md.index("| div | 3 | 4.33 | 13 |") < md.index("| rep | 2 | 5.00 | 10 |")
    assert "each cut to" in md and "(as Table 13, the per-input reading)" in md


def test_departures_from_the_order_by_size():
    table = pd.DataFrame(
        [
            {"set": "big", "version": "raw", "total_words": 100, "cr": 2.0, "ngd": 3.0},
            {"set": "mid", "version": "raw", "total_words": 50, "cr": 2.5, "ngd": 3.5},
            {"set": "small", "version": "raw", "total_words": 10, "cr": 1.0, "ngd": 2.0},
            {"set": "big", "version": "shortest", "total_words": 5, "cr": 9.0, "ngd": 0.0},
        ]
    )
    cols = [{"label": "cr", "direction": "lower"}, {"label": "ngd", "direction": "higher"}]
    dep = size_departures(table, cols)
    # CR (lower = more diverse): mid (2.5) is less diverse than the larger big (2.0);
    # NGD (higher = more diverse): small (2.0) is less diverse than big (3.0) and mid (3.5)
    assert dep.values.tolist() == [
        ["cr", "mid", "big"], ["ngd", "small", "big"], ["ngd", "small", "mid"],
    ]  # fmt: skip


def test_raw_only_without_cuts():
    sets = {"a": _set("x y z w", "x y z w"), "b": _set("q")}
    table = instruction_table(sets, COLUMNS[1:], cuts=[])
    assert list(table["version"]) == ["raw", "raw"]
    assert table.set_index("set").loc["a", "self_repetition"] == pytest.approx(math.log(2))


def _ours(cr_raw: float, cr_cut: float, n: int = 188) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"set": "oasst", "version": "raw", "n_instructions": n, "mean_words": 25.8,
             "total_words": 4851, "compression_ratio": cr_raw},
            {"set": "oasst", "version": "shortest", "n_instructions": 80, "mean_words": 3.0,
             "total_words": 240, "compression_ratio": cr_cut},
        ]
    )  # fmt: skip


def test_the_paper_cells_beside_ours_with_the_direction_of_the_cut():
    cols = [{**COLUMNS[0]}]
    matches = paper_matches({"oasst": "Open Assistant"}, cols, ["shortest"])
    assert [m.paper for m in matches] == [
        ("Table 12", "Open Assistant", "# Instructions"),
        ("Table 12", "Open Assistant", "Avg. # Words"),
        ("Table 12", "Open Assistant", "Total # Words"),
        ("Table 9", "Open Assistant", "CR"),
        ("Table 13", "Open Assistant", "CR"),
    ]
    out = side_by_side("instruction-sets", _ours(3.0, 2.5), matches).set_index(["table", "column"])
    assert out.loc[("Table 12", "# Instructions"), "paper_value"] == 84437
    assert out.loc[("Table 12", "# Instructions"), "ours"] == 188
    assert out.loc[("Table 9", "CR"), "paper_value"] == 2.886
    assert out.loc[("Table 9", "CR"), "direction_agrees"] is None  # one set: nothing to compare
    # the paper's cut lowers Open Assistant's CR (2.886 -> 2.370); ours 3.0 -> 2.5 too
    row = out.loc[("Table 13", "CR")]
    assert (row["paper_direction"], row["our_direction"], row["direction_agrees"]) == (
        "negative",
        "negative",
        True,
    )
    up = side_by_side("instruction-sets", _ours(3.0, 3.5), matches).set_index(["table", "column"])
    assert up.loc[("Table 13", "CR"), "direction_agrees"] is False
    both = paper_table(_ours(3.0, 2.5), {"oasst": "Open Assistant"}, cols, ["shortest"])
    assert both["n"].tolist() == [188, 188, 188, 188, 80]  # the set's instructions
    assert both["version"].tolist() == ["raw"] * 4 + ["shortest"]
    md = instruction_markdown(_ours(3.0, 2.5).assign(cut_words=3), cols, both)
    assert "| Table 12 | Open Assistant | # Instructions | 84,437 | 188 | oasst | raw |" in md
    assert (
        "| Table 13 | Open Assistant | CR | 2.370 | 2.500 | oasst | shortest | 80 | negative | negative | yes |"
        in md
    )
    with pytest.raises(GenmetricsError, match="paper_rows.oasst: 'OASST' is not a row"):
        paper_matches({"oasst": "OASST"}, cols)


def test_two_named_sets_compare_table_9_against_the_first():
    cols = [{**COLUMNS[0]}]
    matches = paper_matches({"oasst": "Open Assistant", "dolly": "Dolly"}, cols, [])
    ours = pd.concat([_ours(3.0, 2.5), _ours(2.0, 2.0).assign(set="dolly")], ignore_index=True)
    out = side_by_side("instruction-sets", ours, matches)
    dolly = out[(out["table"] == "Table 9") & (out["row"] == "Dolly")].iloc[0]
    # paper: Dolly 2.578 < Open Assistant 2.886; ours 2.0 < 3.0
    assert (dolly["paper_direction"], dolly["our_direction"]) == ("negative", "negative")


@pytest.fixture
def study(monkeypatch):
    monkeypatch.setenv("GENMETRICS_REPO", str(REPO))
    return yaml.safe_load((REPO / "configs" / "instruction_sets.yaml").read_text())


def test_the_plan_of_the_study(study):
    plan = load_plan(study, SCHEMA)
    s = plan.instruction_sets
    assert s["dataset"] == "alpaca_eval"
    assert s["sets"] == ["oasst", "selfinstruct", "koala", "helpful_base", "vicuna"]
    assert [c["label"] for c in s["columns"]] == [
        "compression_ratio", "pos_compression_ratio", "self_repetition", "ngram_diversity",
    ]  # fmt: skip
    assert s["cuts"] == ["shortest", "aligned"] and s["paper_rows"] == {"oasst": "Open Assistant"}
    inputs = plan.instruction_sets_inputs()
    assert inputs["texts"][0] == plan.results.texts("alpaca_eval", "oasst/seed0")
    assert inputs["assets"]  # CR: POS tags the cut texts in the job
    assert plan.results.instruction_sets_paper in plan.targets.all


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: c["analysis"]["instruction_sets"].update(dataset="nope"),
         r"analysis.instruction_sets.dataset: 'nope' is not in datasets"),
        (lambda c: c["analysis"]["instruction_sets"].update(sets=["oasst", "nope"]),
         r"analysis.instruction_sets.sets\[1\]: 'nope' is not a model on 'alpaca_eval'"),
        (lambda c: c["analysis"]["instruction_sets"].update(sets=["oasst"]),
         "analysis.instruction_sets.sets: two or more"),
        (lambda c: c["analysis"]["instruction_sets"].update(entries=["nope"]),
         r"analysis.instruction_sets.entries\[0\]: 'nope' is not in metrics"),
        (lambda c: c["analysis"]["instruction_sets"].update(paper_rows={"dolly": "Dolly"}),
         "analysis.instruction_sets.paper_rows: 'dolly' is not one of the sets"),
    ],
)  # fmt: skip
def test_bad_settings_name_their_key(study, edit, message):
    cfg = copy.deepcopy(study)
    edit(cfg)
    with pytest.raises(GenmetricsError, match=message):
        load_plan(cfg, SCHEMA)
