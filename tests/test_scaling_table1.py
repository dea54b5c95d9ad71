"""FACE-2's Table 1 layout (genmetrics.studies.face2_scaling.table1) and the workflow's scaling
analysis end to end on synthetic score records (genmetrics.studies.face2_scaling.job)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from genmetrics import GenmetricsError
from genmetrics.metrics import get
from genmetrics.studies.face2_scaling.table1 import (
    PAPER_ROWS,
    RANDOM,
    format_table1,
    paper_row,
    table1,
)
from genmetrics.studies.face2_scaling.valid_cells import CELL_COLUMNS, ensemble_valid
from genmetrics.testing.tiny_lm import write_surprisal_npz


def face(**given):
    return get("face").check_params(given)


def ppl(**given):
    return get("perplexity").check_params(given)


# ---------------------------------------------------------------- paper_row


@pytest.mark.parametrize(
    ("metric", "params", "value", "label", "paper"),
    [
        ("face", face(convention="face1"), "so", "FACE-1 SO", True),
        ("face", face(convention="face1"), "corr", "FACE-1 CORR", False),  # not a paper row
        ("face", face(convention="face2"), "so", "FACE-2 (L2) SO", True),
        ("face", face(convention="face2"), "kl_human_model", "FACE-2 (L2) KL", True),
        (
            "face",
            face(convention="face2", zscore=True),
            "js_eq6",
            "FACE-2 (z + L2) JS (Eq. 6)",
            True,
        ),
        ("face", face(convention="face2", zscore=True), "jsd", "FACE-2 (z + L2) JSD (true)", True),
        ("face", face(convention="face2"), "ensemble3", "Ensemble-3 (L2)", True),
        ("face", face(convention="face2", zscore=True), "ensemble5", "Ensemble-5 (z + L2)", True),
        ("perplexity", ppl(), "mean_surprisal", "Surprisal", True),
        # not the paper's settings: no paper label
        ("face", face(convention="face2", window="hann"), "so", "", False),
        ("face", face(convention="face2-code-zscore", zscore=True), "so", "", False),
        ("face", face(convention="face1", zscore=True), "so", "", False),
        ("face", face(), "so", "", False),  # the FACEScore code
        ("face", face(value="real", zscore=True), "ensemble3", "", False),
        ("perplexity", ppl(token_count="sequence"), "mean_surprisal", "", False),
        ("perplexity", ppl(), "perplexity", "", False),
        ("mauve", get("mauve").check_params({}), "mauve", "", False),
    ],
)
def test_paper_row_from_params(metric, params, value, label, paper):
    got, pos = paper_row(metric, params, value)
    assert got == label
    assert (pos is not None) is paper
    if paper:
        assert PAPER_ROWS[pos] == label


def test_paper_rows_order():
    assert PAPER_ROWS[:3] == ("FACE-1 SO", "FACE-2 (L2) SO", "FACE-2 (L2) CORR")
    i = PAPER_ROWS.index("FACE-2 (L2) JS (Eq. 6)")
    assert PAPER_ROWS[i + 1] == "FACE-2 (L2) JSD (true)"  # beside Eq. 6
    assert PAPER_ROWS.index("FACE-2 (L2) JSD (true)") < PAPER_ROWS.index("FACE-2 (z + L2) SO")
    assert PAPER_ROWS[-5:] == (
        "Ensemble-3 (L2)",
        "Ensemble-3 (z + L2)",
        "Ensemble-5 (L2)",
        "Ensemble-5 (z + L2)",
        "Surprisal",
    )


# ---------------------------------------------------------------- table1

# scaling-row label -> (metric, params, value); the labels are arbitrary strings on purpose:
# rows are recognised from the params, not from the label
ROWS = {
    "r-ppl": ("perplexity", ppl(), "perplexity"),
    "r-so": ("face", face(convention="face2"), "so"),
    "r-hann": ("face", face(convention="face2", window="hann"), "so"),
    "r-jsd-z": ("face", face(convention="face2", zscore=True), "jsd"),
    "r-f1corr": ("face", face(convention="face1"), "corr"),
    "r-mauve": ("mauve", get("mauve").check_params({}), "mauve"),
    "r-ens3": ("face", face(convention="face2"), "ensemble3"),
    "r-f1so": ("face", face(convention="face1"), "so"),
    "r-surprisal": ("perplexity", ppl(), "mean_surprisal"),
    "r-sbleu": ("self_bleu", get("self_bleu").check_params({}), "self_bleu"),
}
META = {k: {"metric": m, "params": p, "value": v} for k, (m, p, v) in ROWS.items()}
# families: A (2 models) on xsum and news; B (3 models) on xsum and pubmed
CELLS_OF = [("A", "xsum", 2), ("B", "xsum", 3), ("A", "news", 2), ("B", "pubmed", 3)]
TASKS = ["xsum", "news", "pubmed"]
LANGUAGES = {"news": "de"}  # xsum and pubmed: en by default


def _cells() -> pd.DataFrame:
    """Judged cells: r-so under e1 (✓✗✓✓) and e2 (✓✓✗✗), self_bleu without an evaluator,
    MAUVE under its featurizer with one skipped cell; every other row valid everywhere under
    e1 and e2."""
    valid = {
        ("r-so", "e1"): [True, False, True, True],
        ("r-so", "e2"): [True, True, False, False],
        ("r-sbleu", None): [True, False, False, True],
        ("r-mauve", "minilm"): [True, True, None, False],
    }
    rows = []
    for key in [k for k in ROWS if k not in {m for m, _ in valid}]:
        valid[key, "e1"] = valid[key, "e2"] = [True] * 4
    for (metric, ev), flags in valid.items():
        for (fam, task, k), ok in zip(CELLS_OF, flags, strict=True):
            rows.append(
                {
                    "metric": metric,
                    "evaluator": ev,
                    "family": fam,
                    "task": task,
                    "members": k,
                    "valid": ok,
                    "missing": "" if ok is not None else "a2",
                }
            )
    return pd.DataFrame(rows, columns=list(CELL_COLUMNS))


@pytest.fixture(scope="module")
def t1() -> pd.DataFrame:
    return table1(_cells(), META, tasks=TASKS, languages=LANGUAGES)


def _cell(t1, row, column):
    got = t1[(t1.row == row) & (t1.column == column)]
    assert len(got) == 1, (row, column)
    return got.iloc[0]


def test_table1_rows_in_the_papers_order_then_baselines_then_variants(t1):
    order = list(dict.fromkeys(t1.sort_values("position").row))
    assert order == [
        "FACE-1 SO",
        "FACE-2 (L2) SO",
        "FACE-2 (z + L2) JSD (true)",
        "Ensemble-3 (L2)",
        "Surprisal",
        "r-sbleu",  # other metrics: their scaling labels, in the cells' order
        "r-mauve",
        "r-ppl",
        "r-hann",  # FACE rows not in the paper's table, in the cells' order
        "FACE-1 CORR",
        RANDOM,
    ]
    sections = dict(zip(t1.row, t1.section, strict=False))
    assert sections["Surprisal"] == "paper" and sections["r-mauve"] == "baseline"
    assert sections["r-hann"] == "variant" and sections[RANDOM] == "random"


def test_table1_columns_grouped_by_language(t1):
    cols = list(dict.fromkeys(t1.column))
    assert cols == ["xsum", "pubmed", "en (all)", "news", "de (all)", "overall"]
    kinds = dict(zip(t1.column, t1.kind, strict=False))
    assert [kinds[c] for c in cols] == ["task", "task", "language", "task", "language", "overall"]


def test_table1_mean_and_sd_over_evaluators_by_hand(t1):
    # FACE-2 (L2) SO: e1 ✓✗ on xsum (0.5), e2 ✓✓ (1.0): mean 0.75, and the population SD
    # |1 - 0.5| / 2 as FACE-2's Table 1 (the sample SD would be |1 - 0.5| / √2)
    c = _cell(t1, "FACE-2 (L2) SO", "xsum")
    assert (c["mean"], c.sd, c.n_evaluators, c.cells) == pytest.approx((0.75, 0.25, 2, 2))
    assert c.text == "0.75 (0.25)" and c.ratios == "e1=0.50; e2=1.00"
    # pubmed: e1 1, e2 0
    c = _cell(t1, "FACE-2 (L2) SO", "pubmed")
    assert (c["mean"], c.sd) == pytest.approx((0.5, 0.5))
    assert c.text == "0.50 (0.50)"
    # en (all) = xsum + pubmed: e1 2/3 (✓✗✓), e2 2/3 (✓✓✗): SD 0
    c = _cell(t1, "FACE-2 (L2) SO", "en (all)")
    assert (c["mean"], c.sd, c.cells) == pytest.approx((2 / 3, 0.0, 3))
    assert c.text == "0.67 (0.00)"
    c = _cell(t1, "FACE-2 (L2) SO", "de (all)")
    assert (c["mean"], c.sd, c.cells) == pytest.approx((0.5, 0.5, 1))
    # overall: e1 3/4, e2 2/4
    c = _cell(t1, "FACE-2 (L2) SO", "overall")
    assert (c["mean"], c.sd, c.cells) == pytest.approx((0.625, 0.125, 4))


def test_table1_single_value_rows_and_skipped_cells(t1):
    # Self-BLEU, no evaluator: one ratio, no SD
    c = _cell(t1, "r-sbleu", "xsum")
    assert (c["mean"], c.n_evaluators, c.text, c.ratios) == (0.5, 1, "0.50", "no LM=0.50")
    assert math.isnan(c.sd)
    # MAUVE under its featurizer: the skipped news cell is not counted
    c = _cell(t1, "r-mauve", "news")
    assert (c.cells, c.n_evaluators, c.text) == (0, 0, "–") and math.isnan(c["mean"])
    c = _cell(t1, "r-mauve", "overall")
    assert (c["mean"], c.cells) == pytest.approx((2 / 3, 3))


def test_table1_random_row(t1):
    # 1/k!: A has 2 models (1/2), B has 3 (1/6)
    assert _cell(t1, RANDOM, "xsum")["mean"] == pytest.approx((1 / 2 + 1 / 6) / 2)
    assert _cell(t1, RANDOM, "news")["mean"] == pytest.approx(1 / 2)
    assert _cell(t1, RANDOM, "en (all)")["mean"] == pytest.approx((1 / 2 + 1 / 6 + 1 / 6) / 3)
    assert _cell(t1, RANDOM, "overall")["mean"] == pytest.approx(1 / 3)
    assert _cell(t1, RANDOM, "overall").cells == 4


def test_format_table1(t1):
    md = format_table1(t1).splitlines()
    header = md[0]
    for col in (
        "xsum (en, 2 cells)",
        "news (de, 1 cell)",
        "en (all) (3 cells)",
        "overall (4 cells)",
    ):
        assert col in header
    rows = [line.split("|")[1].strip() for line in md[2:]]
    assert rows[:5] == list(
        [
            "FACE-1 SO",
            "FACE-2 (L2) SO",
            "FACE-2 (z + L2) JSD (true)",
            "Ensemble-3 (L2)",
            "Surprisal",
        ]
    )
    assert rows[5] == "*other metrics*" and rows[9] == "*FACE rows not in FACE-2's Table 1*"
    assert rows[-1] == RANDOM
    so = next(line for line in md if line.startswith("| FACE-2 (L2) SO "))
    cells = [c.strip() for c in so.split("|")[2:-1]]
    assert cells == [
        "0.75 (0.25)",
        "0.50 (0.50)",
        "0.67 (0.00)",
        "0.50 (0.50)",
        "0.50 (0.50)",
        "0.62 (0.12)",
    ]


def test_table1_errors():
    with pytest.raises(GenmetricsError, match="'r-so' of the cells is not in rows"):
        table1(_cells(), {k: v for k, v in META.items() if k != "r-so"})
    twin = {**META, "r-hann": META["r-so"]}  # two rows with the paper's same settings
    with pytest.raises(GenmetricsError, match="both read as 'FACE-2 \\(L2\\) SO'"):
        table1(_cells(), twin)
    with pytest.raises(GenmetricsError, match=r"\['news'\] of the cells are not in tasks"):
        table1(_cells(), META, tasks=["xsum", "pubmed"])
    with pytest.raises(GenmetricsError, match="cell_validity"):
        table1(_cells().drop(columns="members"), META)


def test_table1_default_columns_one_language():
    t = table1(_cells(), META)
    assert list(dict.fromkeys(t.column)) == ["xsum", "news", "pubmed", "en (all)", "overall"]


# ---------------------------------------------------------------- run_scaling end to end


@pytest.fixture(scope="module")
def synthetic_run(tmp_path_factory):
    """One dataset, family F = small < large, evaluators e1 and e2. Under e1 the large
    model's surprisal is lower than the small one's (perplexity orders them by size), under
    e2 higher (it does not): rows of one label but different evaluators must each resample
    their own evaluator's files."""
    from genmetrics.io import write_json
    from genmetrics.scoring.from_files import score_files

    root = tmp_path_factory.mktemp("scaling")
    rng = np.random.default_rng(0)
    n = 12
    ids = [f"h{i}" for i in range(n)]
    level = {("e1", "small"): 4.0, ("e1", "large"): 2.0, ("e2", "small"): 2.0, ("e2", "large"): 4.0}
    entries, cells = {}, []
    for ev in ("e1", "e2"):
        ref = root / ev / "references.npz"
        write_surprisal_npz(ref, [rng.gamma(2.0, 1.5, 40) for _ in range(n)], ids)
        for model in ("small", "large"):
            cand = root / ev / f"{model}.npz"
            seqs = [rng.gamma(level[ev, model], 1.0, 40) for _ in range(n)]
            write_surprisal_npz(cand, seqs, [f"{model}{i}" for i in range(n)], ids)
            for name, metric, params, variant in (
                (f"face2_{ev}", "face", {"convention": "face2"}, "face (convention=face2)"),
                (f"ppl_{ev}", "perplexity", {}, "perplexity"),
            ):
                full = get(metric).check_params(params)
                rec = score_files(metric, cand, ref if metric == "face" else None, full)
                score = root / "scores" / model / f"{name}.json"
                write_json(score, rec)
                entries[name] = {
                    "metric": metric,
                    "params": full,
                    "evaluator": ev,
                    "variant": variant,
                }
                cells.append(
                    {
                        "entry": name,
                        "dataset": "d",
                        "model": model,
                        "score": str(score),
                        "candidate": str(cand),
                        "reference": str(ref) if metric == "face" else None,
                    }
                )
    # Self-BLEU (no evaluator): the small model repeats itself (high Self-BLEU, lower is
    # better) -> valid
    from genmetrics.io import write_jsonl

    words = [f"w{i}" for i in range(200)]
    for model in ("small", "large"):
        texts = root / f"{model}.jsonl"
        write_jsonl(
            texts,
            [
                {
                    "id": f"{model}{i}",
                    "prompt_id": ids[i],
                    "text": " ".join(
                        ["the cat sat on the mat"] * 3
                        if model == "small"
                        else rng.choice(words, 18).tolist()
                    ),
                }
                for i in range(n)
            ],
        )
        params = get("self_bleu").check_params({"tokenizer": "whitespace"})
        score = root / "scores" / model / "sbleu.json"
        write_json(score, score_files("self_bleu", texts, None, params))
        entries["sbleu"] = {
            "metric": "self_bleu",
            "params": params,
            "evaluator": None,
            "variant": "self_bleu (tokenizer=whitespace)",
        }
        cells.append(
            {
                "entry": "sbleu",
                "dataset": "d",
                "model": model,
                "score": str(score),
                "candidate": str(texts),
                "reference": None,
            }
        )
    settings = {
        "families": {"F": {"small": 1.0, "large": 2.0}},
        "bootstrap": 20,
        "seed": 0,
        "entries": entries,
        "cells": cells,
        "tasks": ["d"],
        "languages": {"d": "en"},
    }
    from genmetrics.studies.face2_scaling.job import run_scaling

    return run_scaling(settings), settings


def test_run_scaling_rows_resample_their_own_evaluator(synthetic_run):
    out, _ = synthetic_run
    t = out["table"].set_index(["metric", "evaluator"])
    e1, e2 = t.loc["perplexity: mean_surprisal", "e1"], t.loc["perplexity: mean_surprisal", "e2"]
    assert (e1.valid, e2.valid) == (1, 0)
    assert (e1.low, e1.high) == (1.0, 1.0)  # e1's own files: valid in every replicate
    assert (e2.low, e2.high) == (0.0, 0.0)
    # a row without an evaluator (read back as NaN) finds its entry too
    sb = out["table"][out["table"].metric == "self_bleu (tokenizer=whitespace): self_bleu"]
    assert len(sb) == 1 and sb.evaluator.isna().all()
    assert (sb.valid.item(), sb.low.item(), sb.high.item()) == (1, 1.0, 1.0)


PAPER_MEMBERS = {
    "ensemble3": ("emd", "kl_human_model", "js_eq6"),
    "ensemble5": ("so", "corr", "emd", "kl_human_model", "js_eq6"),
}


def test_run_scaling_ensemble_rows_from_the_records(synthetic_run):
    from genmetrics.io import read_json
    from genmetrics.metrics.face import ensemble_members

    out, settings = synthetic_run
    t = out["table"].set_index(["metric", "evaluator"])
    for ev in ("e1", "e2"):
        recs = {
            c["model"]: read_json(c["score"])["values"]
            for c in settings["cells"]
            if c["entry"] == f"face2_{ev}"
        }
        for ens in ("ensemble3", "ensemble5"):
            members = ensemble_members(ens, recs["small"])
            assert members == PAPER_MEMBERS[ens]  # the paper's KL and JS under face2
            hib = [get("face").values[m] == "higher" for m in members]
            want = ensemble_valid([[recs[m][v] for v in members] for m in ("small", "large")], hib)
            row = t.loc[f"face (convention=face2): {ens}", ev]
            assert (row.cells, row.valid) == (1, int(want))
            assert np.isfinite(row.low) and 0 <= row.low <= row.high <= 1  # bootstrapped too


def test_run_scaling_writes_table1(synthetic_run):
    out, _ = synthetic_run
    t1 = out["table1"]
    surprisal = t1[(t1.row == "Surprisal") & (t1.column == "d")].iloc[0]
    # e1 valid, e2 not: mean 0.5, population SD 0.5 (FACE-2's Table 1)
    assert (surprisal["mean"], surprisal.sd, surprisal.n_evaluators) == pytest.approx((0.5, 0.5, 2))
    rows = list(dict.fromkeys(t1.sort_values("position").row))
    assert rows[:2] == ["FACE-2 (L2) SO", "FACE-2 (L2) CORR"]
    assert "Ensemble-3 (L2)" in rows and "Ensemble-5 (L2)" in rows
    assert rows[-1] == RANDOM
    assert "| Surprisal" in out["table1_markdown"]
    assert set(out["cells"].columns) == set(CELL_COLUMNS)
    # Table 2 (best over evaluators) and the paper's numbers beside ours
    t2 = out["table2"].set_index("row")
    assert (t2.loc["Surprisal", "value"], t2.loc["Surprisal", "from"]) == (1.0, "e1")
    assert t2.loc["Self-BLEU", "value"] == 1.0 and t2.loc["BARTScore", "kind"] == "missing"
    paper = out["paper"].set_index(["table", "row"])
    assert paper.loc[("Table 1", "English: surprisal"), "ours"] == 0.5
    assert paper.loc[("Table 1", "English: surprisal"), "paper_value"] == 0.363
    assert "| en " in out["table2_markdown"]
