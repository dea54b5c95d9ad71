"""The side-by-side tables of Le Bronnec et al. (2024)'s studies: the paper's value
(``resources/papers/<study>.csv``), ours with its interval and n, and whether the direction
agrees (:func:`genmetrics.analysis.paper_comparison.side_by_side`).

Three kinds of row:

* a number the text prints, beside ours (``Row(match=...)``); the direction is the sign of
  a correlation (``versus="zero"``) or of a difference of two cells;
* a number that is only in a figure ("in a figure, not in the text"): ours beside an empty
  value; where the text states the direction in words (§5.2: Q1 lacks diversity; §5.3:
  instruction-tuned models are more precise and less diverse), ``stated`` gives that sign
  and the row compares ours with it (the note names the section);
* a paper cell with no counterpart here (a model the registries do not have): the paper's
  value, ours empty, the note says why (``Row(match=None)``).

One function per study builds its rows from the study's outputs: :func:`biographies`,
:func:`webtext`, :func:`chat_vs_base`, :func:`agnews`, :func:`creative`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from genmetrics import GenmetricsError
from genmetrics.analysis.paper_comparison import (
    SIDE_BY_SIDE_COLUMNS,
    Match,
    paper_tables,
    side_by_side,
)

__all__ = [
    "FIG7_NAMES",
    "Row",
    "agnews",
    "biographies",
    "chat_base_pairs",
    "chat_vs_base",
    "compare",
    "creative",
    "markdown",
    "webtext",
]

Cell = tuple[str, str, str]
#: Fig. 7's names (the paper's) of our :func:`~genmetrics.analysis.run_correlation.run_points`
#: labels, and the score each label is (``<entry>/<value name>``)
FIG7_NAMES = {
    "Precision": "precision",
    "Recall": "recall",
    "MAUVE": "mauve",
    "Self-BLEU": "self_bleu",
    "Distinct-4": "distinct_4",
}
FIG7_SCORES = {
    "precision": "precision_recall/precision",
    "recall": "precision_recall/recall",
    "mauve": "mauve/mauve",
    "self_bleu": "self_bleu/self_bleu",
    "distinct_4": "distinct_n/distinct_4",
}
PR = "precision_recall"


@dataclass(frozen=True)
class Row:
    """One row of a side-by-side table: the paper's ``cell``; ``match`` the rows of our
    table that answer it (None: no counterpart here, ``note`` says why); ``stated`` the
    direction the paper's text states in words ("positive" or "negative") where its number is only in a
    figure, ``section`` where it says so."""

    cell: Cell
    match: Match | None = None
    stated: str | None = None
    section: str = ""
    note: str = ""


def compare(
    paper: str | pd.DataFrame, ours: pd.DataFrame, rows: Sequence[Row], *, root=None
) -> pd.DataFrame:
    """The side-by-side table of ``rows`` (columns
    :data:`~genmetrics.analysis.paper_comparison.SIDE_BY_SIDE_COLUMNS`), in order."""
    ptab = paper_tables(paper, root)
    if not rows:
        return pd.DataFrame(columns=SIDE_BY_SIDE_COLUMNS)
    out = []
    for r in rows:
        if r.match is not None and not _has_value(ours, r.match):
            why = "ours: not defined (constant over the runs, or too few of them)"
            r = Row(r.cell, None, note="; ".join(x for x in (r.match.note, why) if x))
        if r.match is None:
            hit = ptab[
                (ptab["table"] == r.cell[0])
                & (ptab["row"] == r.cell[1])
                & (ptab["column"] == r.cell[2])
            ]
            if len(hit) != 1:
                raise GenmetricsError(f"paper table: no single cell {r.cell}")
            c = hit.iloc[0]
            note = "; ".join(x for x in (str(c["note"] or ""), r.note) if x)
            row = {k: None for k in SIDE_BY_SIDE_COLUMNS}
            row |= {"table": c["table"], "row": c["row"], "column": c["column"]}
            row |= {"paper": c["value"] if isinstance(c["value"], str) else ""}
            row |= {"paper_value": c["number"], "ours": math.nan, "note": note}
            out.append(pd.DataFrame([row], columns=SIDE_BY_SIDE_COLUMNS))
            continue
        side = side_by_side(ptab, ours, [r.match])
        if r.stated is not None:
            ours_dir = side.at[0, "our_direction"]
            side.at[0, "paper_direction"] = r.stated
            side.at[0, "direction_agrees"] = None if ours_dir is None else ours_dir == r.stated
            said = f"direction as the text states it ({r.section})"
            side.at[0, "note"] = "; ".join(x for x in (side.at[0, "note"], said) if x)
        out.append(side)
    df = pd.concat(out, ignore_index=True)
    df["n"] = pd.to_numeric(df["n"], errors="coerce").astype("Int64")
    return df[SIDE_BY_SIDE_COLUMNS]


def _has_value(ours: pd.DataFrame, match: Match) -> bool:
    """Whether some row of ours that ``match`` selects holds a number (a selector naming a
    column ours lacks is left to ``side_by_side``'s error)."""
    if match.value not in ours.columns or any(c not in ours.columns for c in match.ours):
        return True
    keep = pd.Series(True, index=ours.index)
    for col, want in match.ours.items():
        keep &= ours[col].astype(str) == str(want)
    return bool(keep.any()) is False or bool(ours.loc[keep, match.value].notna().any())


# ------------------------------------------------------------------------------ our tables


def score_rows(
    scores: pd.DataFrame, variants: Mapping[str, Mapping[str, object]] | None = None
) -> pd.DataFrame:
    """The tidy ``scores.csv`` as a side-by-side input: ``value``, its interval over prompts
    (``lower``/``upper``), ``n_candidate``, and ``n_examples`` (the number of in-context
    examples of a few-shot variant dataset, from ``variants``; else empty)."""
    d = scores.copy()
    variants = variants or {}
    d["n_examples"] = [str(variants.get(ds, {}).get("n", "")) for ds in d["dataset"]]
    d["reference"] = d["reference"].fillna("").astype(str)
    return d


def _score(model: str, name: str, entry: str = PR, **more) -> dict:
    return {"model": model, "entry": entry, "name": name, **more}


# -------------------------------------------------------------------------- biographies


def fig7_rows(correlation: pd.DataFrame) -> pd.DataFrame:
    """:func:`~genmetrics.analysis.run_correlation.run_correlation`'s table as side-by-side
    input, each pair both ways round (``a``, ``b``), ``value`` = r, ``lower``/``upper`` its
    bootstrap interval over runs, ``n`` the runs."""
    rows = []
    for r in correlation.itertuples(index=False):
        for a, b in ((r.metric_a, r.metric_b), (r.metric_b, r.metric_a)):
            rows.append(
                {"what": "fig7", "method": r.method, "a": a, "b": b, "value": r.r}
                | {"lower": r.low, "upper": r.high, "n": r.n, "interval": r.interval}
            )
    return pd.DataFrame(rows)


def biographies(
    correlation: pd.DataFrame,
    scores: pd.DataFrame,
    variants: Mapping[str, Mapping[str, object]],
    templates: Mapping[str, str],
    paper: str | pd.DataFrame = "biographies",
    *,
    root=None,
) -> pd.DataFrame:
    """Fig. 7 (every pair once, Spearman and Pearson: the text does not say which; the sign
    against 0) and Fig. 8 (only in the figure; §5.4 states: precision grows with n for both
    kinds of model, chat models regain recall with n, pre-trained models have the higher
    recall at every n). ``correlation``: the run correlation; ``scores``: the tidy table;
    ``variants``: few-shot dataset → {dataset, n}; ``templates``: chat or base per model."""
    names = list(FIG7_NAMES)
    fig7 = fig7_rows(correlation)
    rows7: list[Row] = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            for method in ("spearman", "pearson"):
                sel = {"what": "fig7", "method": method, "a": FIG7_NAMES[a]}
                sel["b"] = FIG7_NAMES[b]
                note = f"ours: {method.capitalize()} over the (model, n) runs, seeds averaged"
                m = Match(("Fig. 7", a, b), sel, versus="zero", note=note)
                rows7.append(Row(("Fig. 7", a, b), m))
    rows: list[Row] = []
    ours = score_rows(scores, variants)
    ours = ours[ours["dataset"].isin(list(variants))]
    ns = sorted({int(v["n"]) for v in variants.values()})
    row8 = "each model against the number of in-context examples"
    models = [m for m in templates if m in set(ours["model"])]
    if len(ns) >= 2:
        lo, hi = str(ns[0]), str(ns[-1])
        for model in models:
            for v in ("precision", "recall"):
                cell = ("Fig. 8", row8, v)
                stated = "positive" if v == "precision" or templates[model] == "chat" else None
                m = Match(
                    cell,
                    _score(model, v, n_examples=hi),
                    versus=(cell, _score(model, v, n_examples=lo)),
                    note=f"ours: {model} ({templates[model]}) at n = {hi} against n = {lo}",
                )
                rows.append(Row(cell, m, stated, "§5.4" if stated else ""))
    chats = [m for m in models if templates[m] == "chat"]
    bases = [m for m in models if templates[m] == "base"]
    for n in ns:
        for c in chats:
            for b in bases:
                cell = ("Fig. 8", row8, "recall")
                m = Match(
                    cell,
                    _score(b, "recall", n_examples=str(n)),
                    versus=(cell, _score(c, "recall", n_examples=str(n))),
                    note=f"ours: {b} (base) against {c} (chat) at n = {n}",
                )
                rows.append(Row(cell, m, "positive", "§5.4"))
    side7 = compare(paper, fig7, rows7, root=root)
    return pd.concat([side7, compare(paper, ours, rows, root=root)], ignore_index=True)


# -------------------------------------------------------------------- webtext, chat-vs-base


def chat_base_pairs(templates: Mapping[str, str], checkpoints: Mapping[str, str]) -> dict:
    """Each chat model → the base-format model of the same checkpoint (the paper's chat model
    and "its pre-trained counterpart"); a chat model without one is left out."""
    out = {}
    for chat, t in sorted(templates.items()):
        if t != "chat":
            continue
        base = [
            m
            for m, tb in sorted(templates.items())
            if tb == "base" and checkpoints.get(m) == checkpoints.get(chat)
        ]
        if base:
            out[chat] = base[0]
    return out


def _fig1_rows(models: Sequence[str], pairs: Mapping[str, str], row1: str, rowb2: str):
    """Fig. 1's P and R and Fig. B.2's MAUVE per model; chat against its base (§5.3)."""
    rows = []
    for model in models:
        for v, stated in (("precision", "positive"), ("recall", "negative")):
            cell = ("Fig. 1", row1, v)
            if model in pairs:
                base = pairs[model]
                m = Match(
                    cell,
                    _score(model, v),
                    versus=(cell, _score(base, v)),
                    note=f"ours: {model} (chat) against {base} (base)",
                )
                rows.append(Row(cell, m, stated, "§5.3"))
            else:
                rows.append(Row(cell, Match(cell, _score(model, v), note=f"ours: {model}")))
        cell = ("Fig. B.2", rowb2, "MAUVE")
        m = Match(cell, _score(model, "mauve", entry="mauve"), note=f"ours: {model}")
        rows.append(Row(cell, m))
    return rows


def webtext(
    scores: pd.DataFrame,
    spread: pd.DataFrame,
    sweeps: pd.DataFrame | None,
    pairs: Mapping[str, str],
    paper: str | pd.DataFrame = "webtext",
    *,
    root=None,
) -> pd.DataFrame:
    """Table B.4 (the SD of P and R when re-drawing Q, P or both, averaged over our models
    with a t interval over them; the direction: which re-draw moves the score more), Figs. 1
    and B.2 per model (chat against base as §5.3 states), Fig. 6 (P and R where our N
    sweep ends) and Fig. B.1 (P and R at our largest k against our smallest)."""
    vary = {"Varying Q": "candidate", "Varying P": "reference", "Varying P and Q": "both"}
    sp = spread[spread["metric"] == PR].rename(columns={"std": "value"})
    sp = sp.assign(what="spread")
    rows: list[Row] = []
    other = {
        "sqrt(Var(Precision))": ("Varying P", "Varying Q"),
        "sqrt(Var(Recall))": ("Varying Q", "Varying P"),
    }
    for label, name in (("sqrt(Var(Precision))", "precision"), ("sqrt(Var(Recall))", "recall")):
        for col, mode in vary.items():
            cell = ("Table B.4", label, col)
            sel = {"what": "spread", "value_name": name, "vary": mode}
            big, small = other[label]
            versus = None
            if col == big:
                vsel = {"what": "spread", "value_name": name, "vary": vary[small]}
                versus = ((("Table B.4", label, small)), vsel)
            note = "ours: SD over the runs, mean over our models (t interval over them)"
            rows.append(Row(cell, Match(cell, sel, versus=versus, note=note)))
    sc = score_rows(scores).assign(what="score")
    sc = sc[sc["reference"].isin(["", "references"])]
    models = [m for m in dict.fromkeys(sc["model"]) if m not in ("references", "prompts")]
    row1, rowb2 = "each model (WebText, 2-SD ellipses)", "each model (WebText)"
    sides = [compare(paper, sp, rows, root=root)]
    rows = _fig1_rows(models, pairs, row1, rowb2)
    sides.append(compare(paper, sc, rows, root=root))
    rows, tables = [], []
    if sweeps is not None and len(sweeps):
        sw = sweeps.rename(columns={"value": "at"})
        for axis in ("n", "k"):
            for source, g in sw[sw["sweep"] == axis].groupby("source", sort=False):
                for at, lab in ((g["at"].max(), "end"), (g["at"].min(), "start")):
                    e = g[g["at"] == at].iloc[0]
                    size = at if axis == "n" else e["other"]  # texts per side (the k sweep's N)
                    for v in ("precision", "recall"):
                        tables.append(
                            pd.DataFrame(
                                [
                                    {"what": f"sweep_{axis}_{lab}", "source": source}
                                    | {"name": v, "value": e[v], "lower": e[f"{v}_min"]}
                                    | {"upper": e[f"{v}_max"], "n": size, "runs": e["runs"]}
                                ]
                            )
                        )
        for source in dict.fromkeys(sw["source"]):
            g = sw[(sw["sweep"] == "n") & (sw["source"] == source)]
            if len(g):
                for v in ("precision", "recall"):
                    cell = ("Fig. 6", "Llama-2 7B Chat against N (k = 4)", v)
                    note = f"ours: {source} at N = {int(g['at'].max())} (range over the repeats)"
                    sel = {"what": "sweep_n_end", "source": source, "name": v}
                    rows.append(Row(cell, Match(cell, sel, note=note)))
            g = sw[(sw["sweep"] == "k") & (sw["source"] == source)]
            if len(g) >= 2:
                for v in ("precision", "recall"):
                    cell = ("Fig. B.1", "Llama-2 7B Chat against k (N = 4000)", v)
                    lo, hi = int(g["at"].min()), int(g["at"].max())
                    m = Match(
                        cell,
                        {"what": "sweep_k_end", "source": source, "name": v},
                        versus=(cell, {"what": "sweep_k_start", "source": source, "name": v}),
                        note=f"ours: {source} at k = {hi} against k = {lo}",
                    )
                    rows.append(Row(cell, m, "positive", "§4.2"))
        sides.append(compare(paper, pd.concat(tables, ignore_index=True), rows, root=root))
    return pd.concat(sides, ignore_index=True)


def chat_vs_base(
    scores: pd.DataFrame,
    pairs: Mapping[str, str],
    paper: str | pd.DataFrame = "chat-vs-base",
    *,
    root=None,
) -> pd.DataFrame:
    """Fig. 1's P and R and Fig. B.2's MAUVE of each chat model and its base model; the
    direction of chat against base as §5.3 states it (higher precision, lower recall)."""
    sc = score_rows(scores)
    sc = sc[sc["reference"].isin(["", "references"])]
    models = [m for m in dict.fromkeys(sc["model"]) if m not in ("references", "prompts")]
    row = "each chat model and its base model (WebText)"
    return compare(paper, sc, _fig1_rows(models, pairs, row, row), root=root)


# ------------------------------------------------------------------------------- agnews

#: the paper's sets of Fig. 2 and the models of ``configs/agnews_pr.yaml``
AGNEWS_SETS = {
    "Q1 (World only)": "q1-world",
    "Q2 (World + Sport)": "q2-world-sports",
    "Q3 (four topics)": "q3-all-topics",
}


def agnews(
    scores: pd.DataFrame,
    sets: Mapping[str, str] = AGNEWS_SETS,
    paper: str | pd.DataFrame = "agnews-experiment",
    *,
    root=None,
) -> pd.DataFrame:
    """Fig. 2's P and R of Q1, Q2, Q3 (only in the figure; mean over our resamples with a t
    interval); §5.2 states that Q1 lacks diversity (recall below Q2's) and Q3 lacks quality
    (precision below Q2's)."""
    sc = score_rows(scores)
    rows = []
    q2 = sets["Q2 (World + Sport)"]
    for label, model in sets.items():
        for v in ("precision", "recall"):
            cell = ("Fig. 2", label, v)
            stated = None
            if (label.startswith("Q1") and v == "recall") or (
                label.startswith("Q3") and v == "precision"
            ):
                stated = "negative"
            if stated:
                m = Match(
                    cell,
                    _score(model, v),
                    versus=(("Fig. 2", "Q2 (World + Sport)", v), _score(q2, v)),
                    note=f"ours: {model} against {q2}",
                )
                rows.append(Row(cell, m, stated, "§5.2"))
            else:
                rows.append(Row(cell, Match(cell, _score(model, v), note=f"ours: {model}")))
    return compare(paper, sc, rows, root=root)


# ------------------------------------------------------------------------------ creative


def creative(scores: pd.DataFrame, paper: str | pd.DataFrame = "creative", *, root=None):
    """Table 1: the paper's models are not offline, so each cell has no counterpart except
    the reference against itself (1.00 ± 0.00 in bold): ours is each reference model's other
    seeds against its reference seed (the same model, another draw; mean with a t interval
    over those seeds). Our every-pair table is ``analysis/model_overlap.md``."""
    ptab = paper_tables(paper, root)
    sc = score_rows(scores)
    refs = {}
    for ref in dict.fromkeys(sc["reference"]):
        if "/seed" in ref:
            model, seed = ref.rsplit("/seed", 1)
            refs[ref] = (model, seed)
    rows = []
    for c in ptab.itertuples(index=False):
        cell = (c.table, c.row, c.column)
        if "the reference itself" in str(c.note):
            for ref, (model, seed) in refs.items():
                own = sc[(sc["reference"] == ref) & (sc["model"] == model)]
                own = own[own["seed"].astype(str) != seed]
                if own.empty:
                    continue
                sel = {"reference": ref, "model": model, "name": c.row.lower()}
                d = sc[(sc["reference"] == ref) & (sc["model"] == model)]
                seeds = sorted(set(d["seed"].astype(str)) - {seed})
                note = f"ours: {model}'s seeds {', '.join(seeds)} against its seed {seed}"
                for s in seeds:
                    sel_s = sel | {"seed": s}
                    rows.append(Row(cell, Match(cell, sel_s, note=note)))
        else:
            note = f"no counterpart offline ({c.column} is not on the registries)"
            rows.append(Row(cell, None, note=note))
    return compare(ptab, sc, rows, root=root)


# ------------------------------------------------------------------------------ Markdown


def _cell(x) -> str:
    if x is None or x is pd.NA or (isinstance(x, float) and math.isnan(x)):
        return ""
    if isinstance(x, (float, np.floating)):
        return f"{x:.3f}"
    return str(x).replace("|", "\\|")


def markdown(side: pd.DataFrame, title: str) -> str:
    """``analysis/<study>_side_by_side.md``: the side-by-side table as a pipe table (floats
    to 3 decimals, missing values empty) under ``title``, with the count of directions
    compared and agreeing."""
    cols = ["table", "row", "column", "paper", "ours", "lower", "upper", "n", "interval"]
    cols += ["paper_direction", "our_direction", "direction_agrees", "note"]
    lines = [f"# {title}", ""]
    dirs = side["direction_agrees"].dropna()
    lines.append(
        f"{len(side)} rows; {len(dirs)} directions compared, {int(dirs.astype(bool).sum())} "
        "agree. An empty paper value: the number is in a figure, not in the text, or the "
        "note says why there is no counterpart."
    )
    lines += ["", "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in side[cols].itertuples(index=False):
        lines.append("| " + " | ".join(_cell(x) for x in r) + " |")
    return "\n".join(lines) + "\n"
