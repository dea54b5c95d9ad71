"""Each P/R-paper study's side-by-side table (and omniinput-compare's) builds from small
hand-made outputs, with the values, intervals and directions those imply."""

import numpy as np
import pandas as pd
import pytest

from genmetrics.studies.omniinput_compare import side_by_side as omni
from genmetrics.studies.pr_llm import side_by_side as pr

COLS = ["dataset", "model", "seed", "reference", "metric", "entry", "name", "value"]


def _scores(rows) -> pd.DataFrame:
    d = pd.DataFrame(rows, columns=COLS)
    d["n_candidate"] = 50
    return d


def _pr(dataset, model, seed, p, r, mauve=None, reference="references", entry="precision_recall"):
    out = [
        [dataset, model, seed, reference, "precision_recall", entry, "precision", p],
        [dataset, model, seed, reference, "precision_recall", entry, "recall", r],
    ]
    if mauve is not None:
        out.append([dataset, model, seed, reference, "mauve", "mauve", "mauve", mauve])
    return out


def _row(side, table, column, note_part=""):
    hit = side[(side["table"] == table) & (side["column"] == column)]
    hit = hit[hit["note"].str.contains(note_part, regex=False)]
    assert len(hit) == 1, hit
    return hit.iloc[0]


def test_biographies_fig7_and_fig8():
    names = list(pr.FIG7_NAMES.values())
    corr = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            for m in ("spearman", "pearson"):
                r = -0.5 if (a, b) == ("recall", "self_bleu") else 0.3
                corr.append(
                    {"method": m, "metric_a": a, "metric_b": b, "r": r, "low": r - 0.4}
                    | {"high": r + 0.4, "n": 6, "interval": "bootstrap over runs"}
                )
    variants = {f"bios-n{n}": {"dataset": "bios", "n": n} for n in (0, 1, 3)}
    rows = []
    for n, (pc, rc, pb, rb) in {0: (0.8, 0.7, 0.9, 0.68), 1: (0.85, 0.93, 0.93, 0.81)}.items():
        for seed in (0, 1):
            rows += _pr(f"bios-n{n}", "chat", seed, pc, rc) + _pr(
                f"bios-n{n}", "base", seed, pb, rb
            )
    for seed in (0, 1):  # n = 3: chat precision falls, base recall above chat
        rows += _pr("bios-n3", "chat", seed, 0.75 + seed * 0.02, 0.90)
        rows += _pr("bios-n3", "base", seed, 0.95, 0.92)
    side = pr.biographies(
        pd.DataFrame(corr), _scores(rows), variants, {"chat": "chat", "base": "base"}
    )
    fig7 = side[side["table"] == "Fig. 7"]
    assert len(fig7) == 20  # 10 pairs x 2 methods
    rs = fig7[(fig7["row"] == "Recall") & (fig7["column"] == "Self-BLEU")]
    assert rs["paper_value"].tolist() == [-0.87, -0.87]
    assert rs["ours"].tolist() == [-0.5, -0.5] and rs["direction_agrees"].tolist() == [True, True]
    ps = fig7[(fig7["row"] == "Precision") & (fig7["column"] == "Self-BLEU")].iloc[0]
    assert ps["direction_agrees"]  # 0.02 and 0.3: both positive
    assert (ps["lower"], ps["upper"], ps["n"]) == (pytest.approx(-0.1), pytest.approx(0.7), 6)
    p_chat = _row(side, "Fig. 8", "precision", "chat (chat) at n = 3")
    # chat precision: mean over seeds 0.76 at n = 3 against 0.80 at n = 0: down, the text: up
    assert p_chat["ours"] == pytest.approx(0.76)
    assert (p_chat["paper_direction"], p_chat["our_direction"]) == ("positive", "negative")
    assert not p_chat["direction_agrees"] and "§5.4" in p_chat["note"]
    r_base = _row(side, "Fig. 8", "recall", "base (base) at n = 3")
    assert r_base["paper_direction"] is None and r_base["direction_agrees"] is None
    at0 = _row(side, "Fig. 8", "recall", "against chat (chat) at n = 0")
    assert at0["ours"] == pytest.approx(0.68) and at0["direction_agrees"] is False
    at3 = _row(side, "Fig. 8", "recall", "against chat (chat) at n = 3")
    assert at3["direction_agrees"] is True
    assert pd.isna(at3["paper_value"])  # only in the figure
    assert "# biographies" in pr.markdown(side, "biographies")


def test_chat_vs_base_pairs_by_checkpoint_and_compares_with_the_text():
    pairs = pr.chat_base_pairs(
        {"chat": "chat", "raw": "base", "gemma": "base"},
        {"chat": "smollm2", "raw": "smollm2", "gemma": "gemma"},
    )
    assert pairs == {"chat": "raw"}
    rows = []
    for seed, (pc, rc, pb, rb) in enumerate([(0.92, 0.80, 0.87, 0.94), (0.90, 0.82, 0.88, 0.92)]):
        rows += _pr("webtext", "chat", seed, pc, rc, mauve=0.91)
        rows += _pr("webtext", "raw", seed, pb, rb, mauve=0.92)
    side = pr.chat_vs_base(_scores(rows), pairs)
    p = _row(side, "Fig. 1", "precision", "chat (chat)")
    assert p["ours"] == pytest.approx(0.91) and p["n_rows"] == 2
    assert p["our_direction"] == "positive" and p["direction_agrees"]
    r = _row(side, "Fig. 1", "recall", "chat (chat)")
    assert r["paper_direction"] == "negative" and r["direction_agrees"]
    # a t interval over the two seeds: 0.81 ± t(0.975, 1) * 0.01414 / sqrt(2)
    assert r["lower"] == pytest.approx(0.81 - 12.706 * 0.01, abs=1e-3)
    base = _row(side, "Fig. 1", "recall", "ours: raw")
    assert base["direction_agrees"] is None
    assert len(side[side["table"] == "Fig. B.2"]) == 2


def test_webtext_table_b4_and_the_sweeps():
    spread = []
    for model, sds in (
        ("a", (0.01, 0.03, 0.02, 0.02, 0.01, 0.02)),
        ("b", (0.02, 0.05, 0.03, 0.04, 0.02, 0.03)),
    ):
        for (name, vary), sd in zip(
            [(v, m) for v in ("precision", "recall") for m in ("candidate", "reference", "both")],
            sds,
            strict=True,
        ):
            spread.append(
                {"dataset": "webtext", "model": model, "entry": "precision_recall"}
                | {"metric": "precision_recall", "value_name": name, "vary": vary, "std": sd}
                | {"n_candidate": 80}
            )
    sweeps = pd.DataFrame(
        [
            {"sweep": s, "source": "webtext/a/seed0", "value": v, "precision": p, "recall": r}
            | {"runs": 3, "other": 4, "precision_min": p - 0.01, "precision_max": p + 0.01}
            | {"recall_min": r - 0.01, "recall_max": r + 0.01}
            for s, v, p, r in [("n", 10, 0.9, 0.8), ("n", 80, 0.92, 0.85)]
            + [("k", 1, 0.6, 0.5), ("k", 30, 0.99, 0.98)]
        ]
    )
    rows = _pr("webtext", "a", 0, 0.9, 0.8, mauve=0.9) + _pr(
        "webtext", "b", 0, 0.91, 0.85, mauve=0.93
    )
    side = pr.webtext(_scores(rows), pd.DataFrame(spread), sweeps, {})
    b4 = side[side["table"] == "Table B.4"]
    assert len(b4) == 6
    vp = b4[(b4["row"] == "sqrt(Var(Precision))") & (b4["column"] == "Varying P")].iloc[0]
    assert vp["ours"] == pytest.approx(0.04) and vp["n_rows"] == 2 and vp["n"] == 80
    assert vp["paper_direction"] == "positive" and vp["direction_agrees"]  # 0.04 > 0.015
    vq = b4[(b4["row"] == "sqrt(Var(Recall))") & (b4["column"] == "Varying Q")].iloc[0]
    assert vq["ours"] == pytest.approx(0.03) and vq["direction_agrees"]  # 0.03 > 0.015
    k = _row(side, "Fig. B.1", "precision")
    assert k["ours"] == pytest.approx(0.99) and k["direction_agrees"] and "§4.2" in k["note"]
    n = _row(side, "Fig. 6", "recall")
    assert (n["ours"], n["lower"], n["n"]) == (pytest.approx(0.85), pytest.approx(0.84), 80)


def test_agnews_directions_from_section_5_2():
    rows = []
    vals = {
        "q1-world": (0.95, 0.55),
        "q2-world-sports": (0.93, 0.90),
        "q3-all-topics": (0.60, 0.92),
    }
    for model, (p, r) in vals.items():
        for seed in (0, 1, 2):
            rows += _pr("agnews", model, seed, p + 0.01 * seed, r)
    side = pr.agnews(_scores(rows))
    assert len(side) == 6
    q1r = side[(side["row"] == "Q1 (World only)") & (side["column"] == "recall")].iloc[0]
    assert q1r["ours"] == pytest.approx(0.55) and q1r["direction_agrees"]
    q3p = side[(side["row"] == "Q3 (four topics)") & (side["column"] == "precision")].iloc[0]
    assert q3p["ours"] == pytest.approx(0.61) and q3p["n_rows"] == 3 and q3p["direction_agrees"]
    assert side["direction_agrees"].notna().sum() == 2


def test_creative_has_the_reference_against_itself_and_says_what_has_no_counterpart():
    rows = []
    for seed in (0, 1):
        for model in ("t1", "t07"):
            rows += _pr(
                "creative",
                model,
                seed,
                0.8 if model == "t1" else 0.5,
                0.9,
                reference="t1/seed0",
                entry="pr_vs_t1",
            )
    side = pr.creative(_scores(rows))
    matched = side[side["ours"].notna()]
    # the bold 1.00 cells of Table 1 (a) and (b): t1's seed 1 against its seed 0 (2 each)
    assert len(matched) == 4 and set(matched["ours"].round(3)) == {0.8, 0.9}
    unmatched = side[side["ours"].isna()]
    assert len(unmatched) == 16
    assert unmatched["note"].str.contains("no counterpart offline").all()


def test_omniinput_compare_bins_and_aupr():
    compare = {
        "L25": pd.DataFrame(
            {"model": ["small", "large"], "length": [25, 25], "aupr_mean": [0.13, 0.23]}
            | {"aupr_t95_low": [0.1, 0.2], "aupr_t95_high": [0.16, 0.27], "n_seeds": [3, 3]}
        ),
        "L100": pd.DataFrame(
            {"model": ["small", "large"], "length": [100, 100], "aupr_mean": [0.10, 0.17]}
            | {"aupr_t95_low": [0.1, 0.14], "aupr_t95_high": [0.11, 0.22], "n_seeds": [3, 3]}
        ),
    }
    variance = {
        "fluency": pd.DataFrame(
            {"bin": [0, 1], "z_low": [2.0, 4.0], "z_high": [4.0, 6.0], "n": [6, 5]}
            | {"r_a": [0.2, 0.9], "r_b": [0.4, 0.1], "difference": [-0.2, 0.8]}
        )
    }
    ours = omni.ours_table(compare, variance)
    side = omni.omniinput_compare(ours, {"small": 0.135, "large": 0.27})
    t1 = side[side["table"] == "Table 1"]
    # [3.5, 3.6) ... [3.9, 4.0) lie in our bin [2, 4); [4.0, 4.1) in [4, 6)
    assert len(t1) == 6 and t1["ours"].notna().all()
    first, last = t1.iloc[0], t1.iloc[-1]
    assert (first["ours"], first["lower"], first["upper"], first["n"]) == (
        pytest.approx(0.3),
        0.2,
        0.4,
        6,
    )
    assert last["ours"] == pytest.approx(0.5) and last["n"] == 5
    b = side[side["table"] == "Fig. 3 (b)"].iloc[0]
    assert b["ours"] == pytest.approx(0.17) and b["direction_agrees"] and "§3.3" in b["note"]
    a = side[side["table"] == "Fig. 3 (a)"].iloc[0]
    assert a["our_direction"] == "positive" and a["direction_agrees"] is None
    logit = omni.omniinput_compare(ours, {"small": 0.135, "large": 0.27}, nll=[])
    t1 = logit[logit["table"] == "Table 1"]  # a classifier's logit bins answer no NLL bin
    assert t1["ours"].isna().all() and t1["note"].str.contains("no bin of ours").all()
    c = side[side["table"] == "Fig. 3 (c)"].iloc[0]
    assert np.isnan(c["ours"]) and "no counterpart" in c["note"]


def test_biographies_from_scores_to_fig7_through_the_run_pooling():
    """Six (model, n) runs with two seeds each: recall rises with n, Self-BLEU falls as
    recall rises, so their rank correlation over the runs is -1 (the paper: -0.87)."""
    from genmetrics.analysis.run_correlation import run_correlation, run_points

    variants = {f"bios-n{n}": {"dataset": "bios", "n": n} for n in (0, 1, 3)}
    rows = []
    for n in (0, 1, 3):
        for i, model in enumerate(("chat", "base")):
            for seed in (0, 1):
                recall = 0.5 + 0.1 * n + 0.05 * i + 0.01 * seed
                ds = f"bios-n{n}"
                rows += _pr(ds, model, seed, 0.9 - 0.01 * ((n * 7 + i * 3) % 5), recall, mauve=0.8)
                rows.append(
                    [ds, model, seed, "references", "self_bleu", "self_bleu"]
                    + ["self_bleu", 1 - recall]
                )
                rows.append(
                    [ds, model, seed, "references", "distinct_n", "distinct_n"]
                    + ["distinct_4", recall]
                )
    scores = _scores(rows)
    points = run_points(scores, pr.FIG7_SCORES, variants)
    assert len(points) == 6 and (points["n_seeds"] == 2).all()
    corr = run_correlation(points, n_boot=300, seed=1)
    side = pr.biographies(corr, scores, variants, {"chat": "chat", "base": "base"})
    rs = side[(side["row"] == "Recall") & (side["column"] == "Self-BLEU")]
    assert rs["ours"].tolist() == pytest.approx([-1.0, -1.0]) and rs["n"].tolist() == [6, 6]
    assert rs["direction_agrees"].tolist() == [True, True]
    mauve = side[(side["row"] == "Precision") & (side["column"] == "MAUVE")]
    assert mauve["ours"].isna().all()  # MAUVE is constant over the runs: no correlation
