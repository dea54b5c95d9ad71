"""How stable each ranking of models is across featurizers: Kendall's τ-b by hand, the
percentile interval from the scores' bootstrap replicates (and none without them), "too few",
the plan's grouping of entries that differ only in their featurizer, and the rule in a dry
run. Hand-made score records, hand-computed values."""

from __future__ import annotations

import copy
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import REPO, placeholder_checkpoint

from genmetrics.analysis.featurizer_robustness import (
    COLUMNS,
    NO_REPLICATES,
    robustness_markdown,
    robustness_table,
)
from genmetrics.figures.featurizer_robustness import robustness_figure
from genmetrics.paths import RESULTS
from genmetrics.plan import load_plan

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"

GROUP = {
    "label": "mauve",
    "metric": "mauve",
    "datasets": ["ds"],
    "values": [["mauve", "higher"]],
    "featurizers": ["fa", "fb"],
    "entries": {"fa": "mauve_a", "fb": "mauve_b"},
}


def _record(entry, model, seed, value, replicates=None, name="mauve", dataset="ds"):
    rec = {
        "metric": "mauve",
        "entry": entry,
        "dataset": dataset,
        "source": f"{model}/seed{seed}",
        "reference": "references",
        "values": {name: value},
    }
    if replicates is not None:
        rec["interval"] = {
            "method": "bootstrap",
            "resamples": len(replicates),
            "seed": 0,
            "level": 0.95,
            "unit": "prompt",
            "lower": {name: min(replicates)},
            "upper": {name: max(replicates)},
            "replicates": {name: list(replicates)},
        }
    return rec


def _records(values_a, values_b, reps_a=None, reps_b=None):
    """Records of entries mauve_a (featurizer fa) and mauve_b (fb): ``values_x`` maps model
    to its value (a list: one per seed)."""
    out = []
    for entry, values, reps in (("mauve_a", values_a, reps_a), ("mauve_b", values_b, reps_b)):
        for model, vs in values.items():
            for seed, v in enumerate(vs if isinstance(vs, list) else [vs]):
                r = None if reps is None else reps[model][seed]
                out.append(_record(entry, model, seed, v, r))
    return out


# ---------------------------------------------------------------- τ by hand


def test_tau_b_of_two_rankings_by_hand():
    """a > b > c > d under fa, b > c > a > d under fb: of the 6 pairs, (a, b) and (a, c) are
    discordant, the other 4 concordant: τ = (4 − 2)/6 = 1/3. Exact two-sided p: a permutation
    of 4 has 0..6 inversions 1, 3, 5, 6, 5, 3, 1 times; |S| ≥ 2 for ≤ 2 or ≥ 4 inversions:
    18 of 24 = 0.75. No replicates: no interval, and the table says why."""
    recs = _records(
        {"a": 0.9, "b": 0.8, "c": 0.7, "d": 0.2}, {"a": 0.5, "b": 0.7, "c": 0.6, "d": 0.1}
    )
    table, ranks = robustness_table(recs, [GROUP])
    assert list(table.columns) == COLUMNS and len(table) == 1
    row = table.iloc[0]
    assert row["n_models"] == 4
    assert row["tau"] == pytest.approx(1 / 3)
    assert row["p_value"] == pytest.approx(0.75)
    assert (row["featurizer_a"], row["featurizer_b"]) == ("fa", "fb")
    assert row["ranking_a"] == "a > b > c > d" and row["ranking_b"] == "b > c > a > d"
    assert row["same_top"] in (False,)
    assert (row["top_a"], row["top_b"]) == ("a", "b")
    assert row["interval"] == NO_REPLICATES
    assert np.isnan(row["tau_low"]) and np.isnan(row["tau_high"]) and row["resamples"] == 0
    rank_of = ranks.set_index(["featurizer", "model"])["rank"]
    assert rank_of["fb", "a"] == 3 and rank_of["fa", "a"] == 1


def test_mean_over_seeds_and_the_lower_direction_decide_the_ranking():
    """Model a has two seeds, 0.9 and 0.1: its mean 0.5 ranks it last of a, b (0.8), c (0.7).
    A value where lower is better ranks the other way round; τ is the same."""
    recs = _records({"a": [0.9, 0.1], "b": 0.8, "c": 0.7}, {"a": 0.1, "b": 0.3, "c": 0.2})
    table, ranks = robustness_table(recs, [GROUP])
    row = table.iloc[0]
    assert row["ranking_a"] == "b > c > a"  # 0.8 > 0.7 > 0.5
    assert row["ranking_b"] == "b > c > a"
    assert row["tau"] == pytest.approx(1.0) and row["same_top"]
    assert ranks.set_index(["featurizer", "model"]).loc[("fa", "a"), "n_seeds"] == 2
    lower = {**GROUP, "values": [["mauve", "lower"]]}
    row = robustness_table(recs, [lower])[0].iloc[0]
    assert row["ranking_a"] == "a > c > b" and row["tau"] == pytest.approx(1.0)


def test_ties_share_a_rank_and_tau_b_corrects_for_them():
    """fa: a = b > c (a tie), fb: a > b > c. Pairs: (a, b) tied in fa, (a, c), (b, c)
    concordant: τ-b = 2/√(2·3) = 0.8165."""
    recs = _records({"a": 0.9, "b": 0.9, "c": 0.1}, {"a": 0.9, "b": 0.5, "c": 0.1})
    row = robustness_table(recs, [GROUP])[0].iloc[0]
    assert row["tau"] == pytest.approx(2 / np.sqrt(6))
    assert row["ranking_a"] == "a = b > c"
    assert row["top_a"] == "a, b" and row["top_b"] == "a" and not row["same_top"]


# ---------------------------------------------------------------- intervals from replicates


def test_interval_from_hand_made_replicates():
    """Four replicates; per replicate the ranking under fb is made to give τ_b = 1, 1/3, −1/3
    and 1 against fa's (always a > b > c). numpy's linear quantiles of the sorted τ_b
    [−1/3, 1/3, 1, 1]: the 2.5% one at position 0.075, −1/3 + 0.075·(2/3) = −0.2833; the
    97.5% one at 2.925: 1."""
    reps_a = {"a": [[3, 3, 3, 3]], "b": [[2, 2, 2, 2]], "c": [[1, 1, 1, 1]]}
    # fb replicate orders: a>b>c (τ 1), b>a>c (1/3), b>c>a (−1/3), a>b>c (1)
    reps_b = {"a": [[3, 2, 0, 3]], "b": [[2, 3, 2, 2]], "c": [[1, 1, 1, 1]]}
    recs = _records({"a": 3, "b": 2, "c": 1}, {"a": 3, "b": 2, "c": 1}, reps_a, reps_b)
    row = robustness_table(recs, [GROUP])[0].iloc[0]
    assert row["tau"] == pytest.approx(1.0)
    assert row["tau_low"] == pytest.approx(-1 / 3 + 0.075 * 2 / 3)
    assert row["tau_high"] == pytest.approx(1.0)
    assert row["resamples"] == 4 and row["level"] == 0.95
    assert row["interval"].startswith("95% percentile interval of τ_b over 4 replicates")
    assert "resampling of their prompts" in row["interval"] and row["method"] == "bootstrap"


def test_a_model_s_seeds_are_drawn_with_replacement_in_each_replicate():
    """Model a has two seeds, both 3 under fa in every replicate, 3 and 0 under fb: its mean
    over seeds is 1.5 (b = 2, c = 1 always), so averaging both seeds in every replicate gives
    b > a > c, τ = 1/3 every time: a degenerate interval. Drawing a's two seeds with
    replacement (the same draw under both featurizers) gives 3 (a > b > c, τ = 1) a quarter
    of the time, 1.5 (τ = 1/3) half, 0 (b > c > a, τ = −1/3) a quarter: over 400 replicates
    the interval is [−1/3, 1]."""
    n = 400
    reps_a = {"a": [[3] * n, [3] * n], "b": [[2] * n], "c": [[1] * n]}
    reps_b = {"a": [[3] * n, [0] * n], "b": [[2] * n], "c": [[1] * n]}
    recs = _records({"a": [3, 3], "b": 2, "c": 1}, {"a": [3, 0], "b": 2, "c": 1}, reps_a, reps_b)
    row = robustness_table(recs, [GROUP])[0].iloc[0]
    assert row["tau"] == pytest.approx(1 / 3)  # the point estimate: a's mean 1.5
    assert row["tau_low"] == pytest.approx(-1 / 3) and row["tau_high"] == pytest.approx(1.0)
    assert "seeds drawn too where a model has several" in row["interval"]


def test_identical_rankings_in_every_replicate_give_a_degenerate_interval(tmp_path):
    """The same order in every replicate: every τ_b is 1, the interval [1, 1] has zero width
    and is reported as degenerate (the table's words, the Markdown, the figure), not as an
    interval."""
    rng = np.random.default_rng(0)
    reps = {m: [list(base + rng.uniform(0, 0.1, 20))] for m, base in (("a", 3), ("b", 2), ("c", 1))}
    recs = _records({"a": 3, "b": 2, "c": 1}, {"a": 3, "b": 2, "c": 1}, reps, reps)
    table, ranks = robustness_table(recs, [GROUP])
    row = table.iloc[0]
    assert row["tau_low"] == row["tau_high"] == 1.0
    assert row["interval"].startswith("degenerate: every replicate gives τ = 1.00")
    md = robustness_markdown(table, ranks)
    assert "degenerate: every replicate gives τ = 1.00 |" in md and "[1.00, 1.00]" not in md
    robustness_figure(table, ranks, tmp_path / "f.png")
    assert (tmp_path / "f.png").stat().st_size > 10_000


def test_records_without_replicates_give_no_interval_and_say_why():
    """Replicates under one featurizer only, or a record whose bootstrap was off (method
    null, with its reason): no interval, τ still given."""
    reps = {m: [[1.0, 2.0]] for m in "abc"}
    recs = _records({"a": 3, "b": 2, "c": 1}, {"a": 3, "b": 1, "c": 2}, reps, None)
    row = robustness_table(recs, [GROUP])[0].iloc[0]
    assert row["tau"] == pytest.approx(1 / 3)
    assert row["interval"] == NO_REPLICATES and np.isnan(row["tau_low"])
    recs = _records({"a": 3, "b": 2, "c": 1}, {"a": 3, "b": 1, "c": 2}, reps, reps)
    recs[-1]["interval"] = {"method": None, "reason": "bootstrap: false"}
    row = robustness_table(recs, [GROUP])[0].iloc[0]
    assert row["interval"].startswith(NO_REPLICATES) and "bootstrap: false" in row["interval"]
    assert np.isnan(row["tau_low"])


def test_fewer_than_three_models_are_too_few():
    recs = _records({"a": 0.9, "b": 0.8}, {"a": 0.1, "b": 0.8})
    table, ranks = robustness_table(recs, [GROUP])
    row = table.iloc[0]
    assert row["n_models"] == 2 and np.isnan(row["tau"]) and np.isnan(row["p_value"])
    assert row["interval"] == "too few: 2 models (τ needs at least 3)"
    assert row["same_top"] in (False,)  # still told: a under fa, b under fb
    md = robustness_markdown(table, ranks)
    assert "too few: 2 models" in md


def test_models_scored_under_one_featurizer_only_are_left_out():
    """d has no score under fb, e a null value there: the three others are ranked."""
    recs = _records({"a": 3, "b": 2, "c": 1, "d": 0, "e": 5}, {"a": 3, "b": 2, "c": 1, "e": None})
    row = robustness_table(recs, [GROUP])[0].iloc[0]
    assert row["n_models"] == 3 and row["ranking_a"] == "a > b > c"


def test_a_featurizer_that_ties_every_model_gives_no_tau():
    recs = _records({"a": 1.0, "b": 1.0, "c": 1.0}, {"a": 0.9, "b": 0.5, "c": 0.1})
    row = robustness_table(recs, [GROUP])[0].iloc[0]
    assert np.isnan(row["tau"]) and np.isnan(row["tau_low"])
    assert row["interval"] == "no τ: every model has the same value under fa"
    assert row["ranking_a"] == "a = b = c" and row["same_top"] in (False,)


def test_every_pair_of_three_featurizers_and_every_headline_value():
    group = {
        **GROUP,
        "values": [["precision", "higher"], ["recall", "higher"]],
        "featurizers": ["f1", "f2", "f3"],
        "entries": {"f1": "e1", "f2": "e2", "f3": "e3"},
    }
    recs = []
    for entry, order in (("e1", "abc"), ("e2", "abc"), ("e3", "cba")):
        for i, m in enumerate(order):
            rec = _record(entry, m, 0, float(3 - i), name="precision")
            rec["values"]["recall"] = float(i)
            recs.append(rec)
    table, _ = robustness_table(recs, [group])
    got = {(r.value, r.featurizer_a, r.featurizer_b): r.tau for r in table.itertuples()}
    assert got == pytest.approx(
        {
            ("precision", "f1", "f2"): 1.0,
            ("precision", "f1", "f3"): -1.0,
            ("precision", "f2", "f3"): -1.0,
            ("recall", "f1", "f2"): 1.0,
            ("recall", "f1", "f3"): -1.0,
            ("recall", "f2", "f3"): -1.0,
        }
    )


def test_the_human_references_are_not_ranked(tmp_path):
    recs = _records({"a": 3, "b": 2, "c": 1}, {"a": 3, "b": 2, "c": 1})
    recs.append({**_record("mauve_a", "x", 0, 9.0), "source": "references"})
    table, ranks = robustness_table(recs, [GROUP])
    assert "references" not in set(ranks["model"]) and table.iloc[0]["n_models"] == 3
    empty = robustness_table([], [])
    robustness_figure(*empty, tmp_path / "empty.png")  # "no metric computed under two"
    assert (tmp_path / "empty.png").exists()


# ---------------------------------------------------------------- the plan


@pytest.fixture
def demo(monkeypatch):
    monkeypatch.setenv("GENMETRICS_REPO", str(REPO))
    return yaml.safe_load((REPO / "config.yaml").read_text())


def test_the_demo_compares_mauve_and_precision_recall_under_two_featurizers(demo):
    plan = load_plan(demo, SCHEMA)
    groups = {g["label"]: g for g in plan.robustness}
    assert set(groups) == {"mauve", "precision_recall"}
    assert groups["mauve"]["entries"] == {"minilm": "mauve_minilm", "smollm2": "mauve"}
    assert groups["precision_recall"]["values"] == [["precision", "higher"], ["recall", "higher"]]
    for path in (
        RESULTS.featurizer_robustness_table,
        RESULTS.featurizer_robustness_markdown,
        RESULTS.featurizer_robustness_figure,
    ):
        assert path in plan.targets.all
    assert RESULTS.featurizer_robustness_figure in plan.targets.figures
    inputs = plan.robustness_scores()
    # every model and seed (smollm2-pure has two), both entries, no references' score
    assert len(inputs) == 2 * 2 * 4 and not any("/references/" in p for p in inputs)
    assert (
        RESULTS.score.format(dataset="bbc", source="smollm2-pure/seed1", entry="mauve_minilm")
        in inputs
    )


def _edit(cfg, **entries):
    cfg = copy.deepcopy(cfg)
    cfg["metrics"] = {k: v for k, v in cfg["metrics"].items() if k not in entries}
    cfg["metrics"].update({k: v for k, v in entries.items() if v is not None})
    return cfg


@pytest.mark.parametrize(
    ("entries", "labels"),
    [
        # params differ: not the same score under two featurizers
        ({"precision_recall_minilm": {"metric": "precision_recall", "featurizer": "minilm",
          "params": {"k": 5}}, "mauve_minilm": None}, set()),
        # the same featurizer twice: one score, no pair
        ({"precision_recall_minilm": None, "mauve_minilm": {"metric": "mauve",
          "featurizer": "smollm2"}}, set()),
        # an entry alone
        ({"precision_recall_minilm": None, "mauve_minilm": None}, set()),
        # a diversity score on embeddings under two featurizers is compared too
        ({"precision_recall_minilm": None, "mauve_minilm": None,
          "vendi_lm": {"metric": "vendi", "featurizer": "smollm2"}}, {"vendi"}),
        # another reference (the human texts vs a model): not matched
        ({"precision_recall_minilm": None, "mauve_minilm": {"metric": "mauve",
          "featurizer": "minilm", "reference": {"model": "smollm2-nucleus"}}}, set()),
    ],
)  # fmt: skip
def test_only_entries_differing_in_their_featurizer_alone_are_matched(demo, entries, labels):
    plan = load_plan(_edit(demo, **entries), SCHEMA)
    assert {g["label"] for g in plan.robustness or []} == labels
    made = RESULTS.featurizer_robustness_table in plan.targets.all
    assert made == bool(labels)


def test_the_switch_turns_the_analysis_off(demo):
    cfg = copy.deepcopy(demo)
    cfg.setdefault("analysis", {})["featurizer_robustness"] = False
    plan = load_plan(cfg, SCHEMA)
    assert plan.robustness is None
    assert RESULTS.featurizer_robustness_table not in plan.targets.all


# ---------------------------------------------------------------- the rule in a dry run


def _dry_run_counts(cfg: dict, tmp_path) -> dict[str, int]:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    env = {
        **os.environ,
        "GENMETRICS_REPO": str(REPO),
        "GENMETRICS_TINY_MODEL": str(placeholder_checkpoint(tmp_path / "tiny")),
    }
    snakemake = Path(sys.executable).parent / "snakemake"
    cmd = [str(snakemake), "-s", str(REPO / "Snakefile"), "-n", "--cores", "1"]
    cmd += ["--configfile", str(path)]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    table = proc.stdout.split("Job stats:")[1].split("total")[0]
    return {m[0]: int(m[1]) for m in re.findall(r"^(\w+)\s+(\d+)\s*$", table, re.M)}


def test_a_dry_run_schedules_the_rule_with_two_featurizers_only(tmp_path):
    """The offline test config (one featurizer) has no such rule; with a second featurizer
    and MAUVE under it, one featurizer_robustness job reads the scores of both entries."""
    cfg = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
    assert "featurizer_robustness" not in _dry_run_counts(cfg, tmp_path)
    cfg["featurizers"]["tiny-short"] = {**cfg["featurizers"]["tiny"], "max_tokens": 32}
    cfg["metrics"]["mauve_short"] = {"metric": "mauve", "featurizer": "tiny-short"}
    counts = _dry_run_counts(cfg, tmp_path)
    assert counts["featurizer_robustness"] == 1
    assert counts["all"] == 1
