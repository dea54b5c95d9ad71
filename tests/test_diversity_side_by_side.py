"""The summarisation study beside Shaib et al. (2024): the side-by-side table built on a small
hand-made paper table and hand-made scores (values and directions computed by hand), and the
study's MATTR and HD-D entries against the lexical-diversity package on real summaries."""

from __future__ import annotations

import csv
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import REPO

from genmetrics.metrics import compute
from genmetrics.studies.shaib_diversity.side_by_side import (
    MODELS_ROW,
    PAPER_MODELS,
    reference_ranks,
    side_by_side_markdown,
    summary_side_by_side,
    with_model_means,
)

DATA = REPO.parent / "shared" / "data"
NOTE = "hand-made"
COLUMNS = [
    {"label": "cr", "entry": "cr", "name": "compression_ratio", "direction": "lower",
     "cut_entry": "cr_cut"},
    {"label": "mattr", "entry": "mattr", "name": "mattr", "direction": "higher",
     "cut_entry": None},
]  # fmt: skip
SETTINGS = {
    "table": "toy",
    "datasets": {"cnndm": "CNN/DM"},
    "columns": {"cr": "CR", "mattr": "MATTR"},
}
# the six models' printed CR (Table 3), MATTR (Table 3) and cut CR (Table 7)
MODEL_CR = [2.7, 2.5, 2.5, 2.4, 2.4, 2.3]  # mean 2.4667
MODEL_MATTR = [0.79, 0.83, 0.82, 0.85, 0.83, 0.85]  # mean 0.8283
MODEL_CUT = [2.4, 2.3, 2.9, 2.3, 2.3, 2.3]  # mean 2.4167


def _paper_root(tmp_path: Path) -> Path:
    rows = [
        ["Table 3", "Reference", "Avg. Length", "51.78"],
        ["Table 3", "Reference", "CR", "2.277"],
        ["Table 3", "Reference", "MATTR", "0.875"],
        ["Table 7", "Reference", "CR", "2.189"],
        ["Table 2", "CNN/DM vs XSUM", "CR", "0.83"],
        ["Table 2", "CNN/DM vs XSUM", "MATTR", "0.799"],
        ["Table 6", "correlation with total words (CNN/DM)", "CR", "0.867"],
        ["Table 6", "correlation with total words (CNN/DM)", "MATTR", "0.79"],
    ]
    for model, cr, mattr, cut in zip(PAPER_MODELS, MODEL_CR, MODEL_MATTR, MODEL_CUT, strict=True):
        rows += [
            ["Table 3", model, "CR", str(cr)],
            ["Table 3", model, "MATTR", str(mattr)],
            ["Table 3", model, "Avg. Length", "100"],
            ["Table 7", model, "CR", str(cut)],
        ]
    folder = tmp_path / "resources" / "papers"
    folder.mkdir(parents=True)
    with (folder / "toy.csv").open("w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["paper", "table", "row", "column", "value", "note"])
        w.writerows(["diversity", *r, NOTE] for r in rows)
    return tmp_path


def _scores() -> pd.DataFrame:
    """cnndm: the references and two systems; each score with its interval and n."""
    rows = []
    for model, cr, cut, mattr, words in [
        ("references", 2.0, 2.1, 0.88, 50.0),
        ("a", 2.6, 2.5, 0.80, 90.0),
        ("b", 2.2, 2.3, 0.84, 70.0),
    ]:
        for entry, name, value, length in [
            ("cr", "compression_ratio", cr, words),
            ("cr_cut", "compression_ratio", cut, 20.0),
            ("mattr", "mattr", mattr, words),
        ]:
            for n, v in ((name, value), ("mean_words", length)):
                rows.append({"dataset": "cnndm", "model": model, "seed": 0, "entry": entry,
                             "name": n, "value": v, "lower": v - 0.1, "upper": v + 0.1,
                             "interval": "prompts", "n_candidate": 100})  # fmt: skip
    return pd.DataFrame(rows)


STABLE = pd.DataFrame(
    {"score": ["cr", "mattr"], "version": ["raw", "raw"], "kendall_tau": [0.2, -0.3],
     "kendall_p": [0.9, 0.9], "spearman": [0.4, -0.2], "spearman_p": [0.8, 0.9], "n": [4, 4]}
)  # fmt: skip
LENGTH = pd.DataFrame(
    {"dataset": ["cnndm", "cnndm"], "score": ["cr", "mattr"], "version": ["raw", "raw"],
     "pearson": [0.95, -0.9], "spearman": [1.0, -1.0], "n": [3, 3]}
)  # fmt: skip


def test_model_means_are_the_mean_of_the_six_printed_values(tmp_path):
    from genmetrics.analysis.paper_comparison import paper_tables

    paper = with_model_means(paper_tables("toy", _paper_root(tmp_path)))
    got = paper[(paper["row"] == MODELS_ROW)].set_index(["table", "column"])["number"]
    assert got[("Table 3", "CR")] == pytest.approx(np.mean(MODEL_CR))
    assert got[("Table 7", "CR")] == pytest.approx(np.mean(MODEL_CUT))
    assert got[("Table 3", "Avg. Length")] == pytest.approx(100.0)
    assert ("Table 2", "CR") not in got.index  # not a table of models


def test_the_side_by_side_table_by_hand(tmp_path):
    root = _paper_root(tmp_path)
    out = summary_side_by_side(_scores(), STABLE, LENGTH, SETTINGS, COLUMNS, root=str(root))
    cell = out.set_index(["table", "column"])
    assert len(out) == 8  # Table 3: length, CR, MATTR; Table 7: CR; Tables 2 and 6: 2 each
    # Table 3, CR: the paper's Reference 2.277 vs its models' mean 2.4667 → "negative";
    # ours 2.0 vs the systems' mean (2.6 + 2.2) / 2 = 2.4 → "negative": agree
    r = cell.loc[("Table 3", "CR")]
    assert r["paper_value"] == 2.277 and r["ours"] == 2.0
    assert (r["lower"], r["upper"], r["n"]) == (pytest.approx(1.9), pytest.approx(2.1), 100)
    assert (
        r["paper_direction"] == "negative"
        and r["our_direction"] == "negative"
        and r["direction_agrees"]
    )
    assert r["dataset"] == "cnndm" and r["source"] == "references" and r["version"] == "raw"
    # MATTR: the paper's 0.875 > 0.8283 ("positive"), ours 0.88 > 0.82 ("positive")
    assert cell.loc[("Table 3", "MATTR"), "direction_agrees"]
    # average length: ours the references' mean words (50) below the systems' (80)
    r = cell.loc[("Table 3", "Avg. Length")]
    assert (
        r["ours"] == 50.0
        and r["paper_direction"] == "negative"
        and r["our_direction"] == "negative"
    )
    # Table 7 (cut): the paper 2.189 < 2.4167 ("negative"); ours 2.1 < (2.5 + 2.3) / 2 ("negative")
    r = cell.loc[("Table 7", "CR")]
    assert r["ours"] == 2.1 and r["version"] == "cut" and r["direction_agrees"]
    # Table 2: Spearman ρ against the printed correlation, sign against sign
    assert cell.loc[("Table 2", "CR"), "ours"] == 0.4
    assert cell.loc[("Table 2", "CR"), "n"] == 4 and cell.loc[("Table 2", "CR"), "direction_agrees"]
    # MATTR: printed 0.799 ("positive"), ours −0.2 ("negative"): the direction differs
    assert not cell.loc[("Table 2", "MATTR"), "direction_agrees"]
    # Table 6: Pearson r; MATTR printed positive (0.79), ours −0.9: the sign differs
    assert cell.loc[("Table 6", "MATTR"), "ours"] == -0.9
    assert cell.loc[("Table 6", "MATTR"), "our_direction"] == "negative"
    assert not cell.loc[("Table 6", "MATTR"), "direction_agrees"]
    assert cell.loc[("Table 6", "CR"), "direction_agrees"]


def test_reference_ranks_and_markdown_by_hand(tmp_path):
    root = str(_paper_root(tmp_path))
    table = (
        _scores()
        .query("name != 'mean_words' and entry != 'cr_cut'")
        .pivot_table(index=["dataset", "model"], columns="entry", values="value")
    )
    ranks = reference_ranks(table, SETTINGS, COLUMNS, root=root).set_index("column")
    # CR (lower = more diverse): the paper's Reference 2.277 beats every model: 1 of 7;
    # ours 2.0 beats 2.2 and 2.6: 1 of 3
    assert ranks.loc["CR", ["paper_rank", "paper_of", "our_rank", "our_of"]].tolist() == [
        1,
        7,
        1,
        3,
    ]
    # MATTR (higher = more diverse): 0.875 above every model: 1 of 7; ours 0.88: 1 of 3
    assert ranks.loc["MATTR", "paper_rank"] == 1 and ranks.loc["MATTR", "our_rank"] == 1
    out = summary_side_by_side(_scores(), STABLE, LENGTH, SETTINGS, COLUMNS, root=root)
    md = side_by_side_markdown(out, ranks.reset_index())
    assert (
        "| Table 3 | Reference | CR | cnndm | 2.277 | 2.000 [1.900, 2.100] | 100 | negative | negative | yes |"
        in md
    )
    assert "| cnndm | CR | 1 of 7 | 1 of 3 |" in md
    assert "Directions agree in 6 of 8 cells." in md
    assert "nan" not in md and "None" not in md


# ---------------------------------------------------------------- real texts


def _texts(path: Path, **where) -> list[str]:
    if not path.exists():
        pytest.skip(f"shared data missing: {path}")
    rows = [json.loads(line) for line in path.open(encoding="utf-8")]
    return [r["text"] for r in rows if all(r.get(k) == v for k, v in where.items())]


@pytest.mark.parametrize(
    ("path", "where"),
    [
        ("realsumm/references.jsonl", {}),
        ("realsumm/summaries.jsonl", {"system": "t5_out_11B"}),
        ("xsum_hallucination/summaries.jsonl", {"system": "Gold"}),  # ~21 words a text
    ],
)
def test_the_study_mattr_and_hdd_equal_the_package_on_real_summaries(path, where):
    """The study's entries (one score on each source's concatenated texts, the package's
    window 50 and sample 42) against lex_div on the same concatenation: MATTR bit-identical,
    HD-D within 1e-12 relative (our grouped terms sum in another order)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pkg_resources deprecation
        ld = pytest.importorskip("lexical_diversity.lex_div")
    cfg = yaml.safe_load((REPO / "configs" / "summary_diversity.yaml").read_text())
    texts = _texts(DATA / path, **where)
    assert len(texts) >= 100
    tokens = ld.tokenize(" ".join(texts))
    mattr = compute("mattr", texts, params=cfg["metrics"]["mattr"]["params"]).values["mattr"]
    assert mattr == ld.mattr(tokens)
    hdd = compute("hdd", texts, params=cfg["metrics"]["hdd"]["params"]).values["hdd"]
    assert hdd == pytest.approx(ld.hdd(tokens), rel=1e-12)
    # per text, the package gives XSum's short summaries HD-D 0 (< 42 tokens): the pooled
    # score is the paper's (Table 4's Reference HD-D 0.888 is not a mean over zeros)
    assert 0.8 < hdd < 1.0 and 0.8 < mattr < 1.0
