"""Intervals in the tables and figures (issue 27 item 3): the per-seed rows of ``scores.csv``
carry the records' bounds over prompts, the summaries over seeds (``scores_summary.csv``, the
headline) the hierarchical interval (per replicate the mean over seeds drawn with
replacement), on hand-made records; the MAUVE bars draw a single seed's bootstrap interval;
the config's ``interval`` setting reaches the score job's params and its record."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import REPO

from genmetrics import GenmetricsError
from genmetrics.analysis.aggregate import read_scores, write_aggregates
from genmetrics.analysis.seed_means import seed_means
from genmetrics.analysis.statistics import seed_bootstrap
from genmetrics.io import write_jsonl
from genmetrics.plan import load_plan
from genmetrics.scoring.intervals import DEFAULTS
from genmetrics.scoring.job import score_entry

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
B = 200


def record(source: str, metric: str, values: dict, interval: dict | None, **keys) -> dict:
    rec = {
        "metric": metric,
        "entry": keys.get("entry", metric),
        "dataset": "news",
        "source": source,
        "reference": keys.get("reference"),
        "values": values,
        "params": {},
        "n": {"candidate": 40},
    }
    if interval is not None:
        rec["interval"] = interval
    return rec


def interval(replicates: dict[str, list[float]], seed: int = 0) -> dict:
    """A record's interval with these replicates (bounds: their 2.5% and 97.5% quantiles)."""
    q = {v: np.quantile(r, [0.025, 0.975]) for v, r in replicates.items()}
    return {
        "method": "half-sample bootstrap over prompts (a test)",
        "resamples": len(next(iter(replicates.values()))),
        "seed": seed,
        "level": 0.95,
        "unit": "prompt",
        "lower": {v: float(lo) for v, (lo, _) in q.items()},
        "upper": {v: float(hi) for v, (_, hi) in q.items()},
        "replicates": replicates,
    }


def aggregate(tmp_path, records: list[dict]) -> dict:
    paths = []
    for i, rec in enumerate(records):
        paths.append(tmp_path / f"rec{i}.json")
        paths[-1].write_text(json.dumps(rec), encoding="utf-8")
    out = {k: tmp_path / k for k in ("scores", "summary", "headline", "md")}
    write_aggregates(paths, out["scores"], out["summary"], out["headline"], out["md"])
    return {
        "scores": read_scores(out["scores"]),
        "summary": pd.read_csv(out["summary"]),
        "headline": pd.read_csv(out["headline"]),
        "md": out["md"].read_text(encoding="utf-8"),
    }


@pytest.fixture
def tables(tmp_path) -> dict:
    """Model ``two``: seeds whose replicates are all 0.4 and all 0.6 (distinct-n, 0–1) and
    2.0 and 4.0 (rep-n, %); model ``one``: one seed, replicates evenly from 0.1 to 0.3; an
    entry switched off; a record of ``genmetrics score`` (no interval key)."""
    even = np.linspace(0.1, 0.3, B).tolist()
    off = {"method": None, "reason": "not computed: switched off by the config (x)"}
    recs = [
        record("two/seed0", "distinct_n", {"distinct_1": 0.4}, interval({"distinct_1": [0.4] * B})),
        record("two/seed1", "distinct_n", {"distinct_1": 0.6}, interval({"distinct_1": [0.6] * B})),
        record("two/seed0", "rep_n", {"rep_2": 2.0}, interval({"rep_2": [2.0] * B})),
        record("two/seed1", "rep_n", {"rep_2": 4.0}, interval({"rep_2": [4.0] * B})),
        record("one/seed0", "distinct_n", {"distinct_1": 0.2}, interval({"distinct_1": even})),
        record("one/seed0", "self_bleu", {"self_bleu": 0.3}, off),
        record("one/seed0", "ttr", {"ttr": 0.5}, None),
    ]
    return aggregate(tmp_path, recs)


def test_seed_bootstrap_by_hand():
    """Two seeds, replicates all 1 and all 3: each hierarchical replicate is the mean of two
    seeds drawn with replacement, 1, 2 or 3 with chances 1/4, 1/2, 1/4; one seed: its own
    replicates and their percentile interval."""
    reps, low, high = seed_bootstrap(np.array([[1.0] * 4000, [3.0] * 4000]), 0.95, seed=7)
    assert set(reps) == {1.0, 2.0, 3.0} and (low, high) == (1.0, 3.0)
    assert np.mean(reps == 2.0) == pytest.approx(0.5, abs=0.03)
    assert np.mean(reps == 1.0) == pytest.approx(0.25, abs=0.03)
    one = np.linspace(0.0, 1.0, 201)
    reps, low, high = seed_bootstrap(one[None, :], 0.9, seed=7)
    assert np.array_equal(reps, one) and (low, high) == pytest.approx((0.05, 0.95))
    same, *_ = seed_bootstrap(np.array([[1.0] * 50, [3.0] * 50]), 0.95, seed=7)
    again, *_ = seed_bootstrap(np.array([[1.0] * 50, [3.0] * 50]), 0.95, seed=7)
    assert np.array_equal(same, again)


def test_per_seed_rows_carry_the_records_bounds_over_prompts(tables):
    s = tables["scores"].set_index(["model", "seed", "name"])
    row = s.loc[("two", 1, "distinct_1")]
    assert (row["lower"], row["upper"], row["level"]) == (0.6, 0.6, 0.95)
    assert (row["resamples"], row["interval"]) == (B, "prompts")
    assert s.loc[("two", 1, "rep_2"), ["lower", "upper"]].tolist() == [4.0, 4.0]  # own scale: %
    one = s.loc[("one", 0, "distinct_1")]
    assert (one["lower"], one["upper"]) == pytest.approx((0.105, 0.295))
    assert s.loc[("one", 0, "self_bleu"), "interval"].startswith("not computed: switched off")
    assert math.isnan(s.loc[("one", 0, "self_bleu"), "lower"])
    ttr = s.loc[("one", 0, "ttr")]
    assert pd.isna(ttr["interval"]) and math.isnan(ttr["lower"]) and pd.isna(ttr["resamples"])


def test_summaries_over_seeds_get_the_hierarchical_interval(tables):
    summary = tables["summary"].set_index(["model", "name"])
    two = summary.loc[("two", "distinct_1")]
    assert (two["mean"], two["lower"], two["upper"]) == pytest.approx((0.5, 0.4, 0.6))
    assert (two["interval"], two["resamples"], two["level"]) == ("prompts, seeds", B, 0.95)
    rep = summary.loc[("two", "rep_2")]  # % → 0–1 in the summary, bounds too
    assert (rep["scale"], rep["lower"], rep["upper"]) == ("0–1", 0.02, 0.04)
    one = summary.loc[("one", "distinct_1")]  # one seed: the interval over prompts alone
    assert (one["lower"], one["upper"], one["interval"]) == (
        pytest.approx(0.105),
        pytest.approx(0.295),
        "prompts",
    )
    assert summary.loc[("one", "self_bleu"), "interval"].startswith("not computed: switched")
    long = tables["headline"].set_index(["model", "value_name"])
    assert long.loc[("two", "distinct_1"), ["lower", "upper"]].tolist() == pytest.approx([0.4, 0.6])
    assert long.loc[("two", "distinct_1"), "interval"] == "prompts, seeds"


def test_headline_cells_show_the_interval_and_the_legend_says_what_it_is(tables):
    md = tables["md"]
    row = next(line for line in md.splitlines() if line.startswith("| news | two |"))
    assert "| 0.5 [0.4, 0.6] |" in row and "| 0.03 [0.02, 0.04] |" in row
    one = next(line for line in md.splitlines() if line.startswith("| news | one |"))
    assert "| 0.2 [0.105, 0.295] |" in one and "| 0.3 |" in one  # self-BLEU: none
    assert "[lower, upper]: the 95% interval of the value from 200 resamples" in md
    assert "Without an interval: self_bleu (not computed: switched off by the config (x))" in md


def test_old_records_without_intervals_keep_the_old_cells(tmp_path):
    recs = [
        record(f"m/seed{s}", "distinct_n", {"distinct_1": v}, None)
        for s, v in enumerate((0.2, 0.4))
    ]
    t = aggregate(tmp_path, recs)
    assert "| 0.3 ± 0.14 |" in t["md"] and "resamples of its prompts" not in t["md"]
    assert t["summary"]["lower"].isna().all() and t["summary"]["interval"].isna().all()


def test_mauve_bars_draw_a_single_seeds_bootstrap_interval(tmp_path, monkeypatch):
    import genmetrics.figures.bars as module

    figs = []
    save = module._save
    monkeypatch.setattr(module, "_save", lambda fig, path: (figs.append(fig), save(fig, path)))
    even = np.linspace(0.5, 0.7, B).tolist()
    recs = [
        record(
            "a/seed0", "mauve", {"mauve": 0.6}, interval({"mauve": even}), reference="references"
        ),
        record("b/seed0", "mauve", {"mauve": 0.8}, None, reference="references"),
    ]
    t = aggregate(tmp_path, recs)
    table = seed_means(t["scores"], ["mauve"], summary=t["summary"])
    a = table.set_index("model").loc["a"]
    assert (a["ci_low"], a["ci_high"], a["interval"]) == (
        pytest.approx(0.505),
        pytest.approx(0.695),
        "prompts",
    )
    module.value_bars(table, tmp_path / "bars.png", "mauve")
    ax = figs[0].axes[0]
    from matplotlib.container import ErrorbarContainer

    (whiskers,) = [c for c in ax.containers if isinstance(c, ErrorbarContainer)]
    segments = whiskers.lines[2][0].get_segments()
    assert sorted(segments[0][:, 1]) == pytest.approx([0.505, 0.695])
    assert np.ptp(segments[1][:, 1]) == 0  # b: one seed, no bootstrap: no whisker
    texts = [x.get_text() for x in ax.texts]
    assert "1 seed" in texts and "1 seed:\nno interval" in texts
    # what the whiskers are: said once, in the figure's title
    assert "bootstrap interval over prompts" in figs[0].get_suptitle()


@pytest.fixture
def plan_config(tmp_path, monkeypatch) -> dict:
    """Imported texts (no model to run) and one entry per interval setting."""
    monkeypatch.setenv("GENMETRICS_REPO", str(REPO))
    texts = REPO / ".test" / "data" / "texts.jsonl"
    source = {"kind": "local", "path": str(texts)}
    return {
        "datasets": {"stories": {"source": source, "format": "jsonl"}},
        "checkpoints": {},
        "models": {"humans": {"texts": {"source": source, "format": "jsonl"}}},
        "metrics": {
            "distinct_n": {},
            "asked": {"metric": "distinct_n", "interval": {"resamples": 50, "seed": 3}},
            "asked_true": {"metric": "distinct_n", "interval": True},
            "off": {"metric": "distinct_n", "interval": False},
        },
    }


def test_the_config_sets_each_entrys_interval_and_it_reaches_the_record(plan_config, tmp_path):
    plan = load_plan(plan_config, SCHEMA)
    got = {e: plan.score_settings("stories", e)["interval"] for e in plan_config["metrics"]}
    assert got["distinct_n"] == {**DEFAULTS, "asked": False}
    assert got["asked"] == {**DEFAULTS, "resamples": 50, "seed": 3, "asked": True}
    assert got["asked_true"] == {**DEFAULTS, "asked": True}
    assert got["off"] == {
        "reason": "not computed: switched off by the config (metrics.off.interval: false)"
    }
    # the seed is a param: a changed seed reruns the score
    plan_config["metrics"]["asked"]["interval"]["seed"] = 4
    assert load_plan(plan_config, SCHEMA).score_settings("stories", "asked") != plan.score_settings(
        "stories", "asked"
    )
    rows = [
        {"id": f"g{i}", "prompt_id": f"p{i:02d}", "text": f"text {i} of words {i % 3}"}
        for i in range(12)
    ]
    path = tmp_path / "gen.jsonl"
    write_jsonl(path, rows)
    for entry in ("asked", "off"):
        rec = score_entry(
            plan.score_settings("stories", entry),
            entry=entry,
            dataset="stories",
            source="humans/seed0",
            candidate=path,
        )
        if entry == "off":
            assert rec["interval"] == got["off"] | {"method": None}
        else:
            assert (rec["interval"]["resamples"], rec["interval"]["seed"]) == (50, 3)


def test_schema_defaults_are_the_intervals_defaults():
    schema = yaml.safe_load(SCHEMA.read_text())
    entry = schema["properties"]["metrics"]["additionalProperties"]["properties"]["interval"]
    props = next(s for s in entry["oneOf"] if s.get("type") == "object")["properties"]
    assert {k: p["default"] for k, p in props.items()} == DEFAULTS
    assert props["scheme"]["enum"] == ["half", "replacement"]


def test_few_shot_lines_take_the_summarys_intervals(tmp_path, monkeypatch):
    import genmetrics.figures.bars as module
    from genmetrics.analysis.seed_means import few_shot_table

    figs = []
    save = module._save
    monkeypatch.setattr(module, "_save", lambda fig, path: (figs.append(fig), save(fig, path)))
    even = np.linspace(0.4, 0.6, B).tolist()
    recs = [
        record(
            "m/seed0",
            "precision_recall",
            {"precision": 0.5, "recall": 0.5},
            interval({"precision": even, "recall": even}),
            reference="references",
        )
    ]
    for r, ds in zip(recs * 2, ("bios-n0", "bios-n2"), strict=True):
        r = dict(r, dataset=ds)
        (tmp_path / f"{ds}.json").write_text(json.dumps(r), encoding="utf-8")
    out = {k: tmp_path / k for k in ("scores", "summary", "headline", "md")}
    paths = [tmp_path / "bios-n0.json", tmp_path / "bios-n2.json"]
    write_aggregates(paths, out["scores"], out["summary"], out["headline"], out["md"])
    variants = {"bios-n0": {"dataset": "bios", "n": 0}, "bios-n2": {"dataset": "bios", "n": 2}}
    table = few_shot_table(
        read_scores(out["scores"]), variants, summary=pd.read_csv(out["summary"])
    )
    assert table["ci_low"].tolist() == pytest.approx([0.405] * 4)
    assert set(table["interval"]) == {"prompts"}
    module.few_shot_lines(table, tmp_path / "fs.png")
    assert "bootstrap interval over prompts" in " ".join(figs[0].axes[0].get_title().split())


def test_scores_csv_states_each_intervals_scheme_and_a_bound_that_would_miss_the_value(tmp_path):
    """``scheme`` is a column of scores.csv (and of the summaries): the record's, or, in a
    record written before it was stated, read from its method; the headline legend says how
    each scheme drew the prompts. A value the record left without bounds (its percentile
    interval missed the point) has its reason in ``interval``; a read-back row whose bounds
    miss its value gets none either."""
    rep = interval({"ttr": np.linspace(0.4, 0.6, B).tolist()}) | {
        "method": "bootstrap over prompts: 200 draws of the 40 prompts with replacement",
        "scheme": "replacement",
    }
    old = interval({"distinct_1": np.linspace(0.1, 0.3, B).tolist()})  # no "scheme" key
    why = "not computed: the point estimate 0.9 lies outside the percentile interval"
    missed = interval({"mattr": [0.5] * B}) | {"reasons": {"mattr": why}}
    missed["lower"]["mattr"] = missed["upper"]["mattr"] = None
    recs = [
        record("m/seed0", "ttr", {"ttr": 0.5}, rep),
        record("m/seed0", "distinct_n", {"distinct_1": 0.2}, old),
        record("m/seed0", "mattr", {"mattr": 0.9}, missed),
    ]
    t = aggregate(tmp_path, recs)
    s = t["scores"].set_index("name")
    intervals = ["lower", "upper", "level", "resamples", "scheme", "interval"]
    assert list(s.columns[-8:]) == [*intervals, "truncated", "warnings"]  # then the warnings
    assert (s.loc["ttr", "scheme"], s.loc["distinct_1", "scheme"]) == ("replacement", "half")
    assert s.loc["mattr", "interval"] == why and math.isnan(s.loc["mattr", "lower"])
    summary = t["summary"].set_index("name")
    assert summary.loc["ttr", "scheme"] == "replacement"
    assert summary.loc["mattr", "interval"] == why
    assert "all the prompts drawn with replacement (scheme replacement)" in t["md"]
    assert "each half of the prompts without replacement" in t["md"]
    # a table read back (no replicates): bounds that miss the value are dropped, with why
    from genmetrics.analysis.units import seed_intervals

    back = t["scores"].copy()
    back.loc[back["name"] == "ttr", ["lower", "upper"]] = [0.55, 0.6]
    row = seed_intervals(back).set_index("name").loc["ttr"]
    assert math.isnan(row["lower"]) and row["interval"].startswith("not computed: the value 0.5")


def test_drawing_with_replacement_is_refused_for_a_set_metric_when_the_config_is_read(plan_config):
    """A set metric (distinct-n reads a copied text as repetition) refuses the scheme when
    the plan is loaded, naming the key, the metric and the scheme; a mean over texts (TTR)
    takes it."""
    plan_config["metrics"]["rep"] = {"metric": "distinct_n", "interval": {"scheme": "replacement"}}
    with pytest.raises(GenmetricsError) as e:
        load_plan(plan_config, SCHEMA)
    assert str(e.value).startswith(
        "metrics.rep.interval.scheme: scheme replacement is refused for metric distinct_n"
    )
    plan_config["metrics"]["rep"]["metric"] = "ttr"
    plan = load_plan(plan_config, SCHEMA)
    assert plan.score_settings("stories", "rep")["interval"]["scheme"] == "replacement"
