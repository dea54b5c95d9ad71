"""FACE-2's Table 2 and the paper-vs-ours table of the scaling study (Liu et al. 2025, §5.2).

Table 2 of FACE-2 puts, per language, the **best** valid-cell ratio over evaluators of some
FACE-2 distances beside single-value baselines (MAUVE, Zipf, Self-BLEU, BERTScore,
BARTScore). Its FACE-2 EMD for English, 0.600, is the best of Table 7's FACE-2 EMD rows over
both spectra variants and all eight evaluators (only the z-scored row reaches 0.60, under zh1
and zh2; the L2 row's best is 0.45), so a FACE-2 row here is the best over the L2 and z + L2
rows of Table 1 and over their evaluators, and says which it is. Raw surprisal is in Table 1,
not Table 2; it is added here (best over evaluators) so that every baseline is in one table.

* :func:`table2` — the long Table 2 from :func:`~genmetrics.studies.face2_scaling.table1.table1`;
* :func:`format_table2` — its markdown;
* :func:`paper_matches`, :func:`ours_for_paper` — what
  :func:`genmetrics.analysis.paper_comparison.side_by_side` compares with
  ``resources/papers/face-scaling.csv``: each Table 1 row of the paper against our row of the
  same settings (English, mean over evaluators; direction: against surprisal), each Table 2
  row against ours (best over evaluators; direction: against FACE-2 EMD, the paper's best).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from genmetrics import GenmetricsError
from genmetrics.studies.face2_scaling.table1 import LONG_COLUMNS, RANDOM, SURPRISAL

#: Table 2's FACE-2 rows: distance name in Table 1 (both variants are searched)
FACE2_ROWS = ("SO", "CORR", "EMD", "KL", "JS (Eq. 6)", "Ensemble-3", "Ensemble-5")
#: Table 2's baselines: label -> (registered metric, value); BARTScore has no offline weights
BASELINES = (
    ("MAUVE", "mauve", "mauve"),
    ("Zipf", "zipf", "zipf"),
    ("Self-BLEU", "self_bleu", "self_bleu"),
    ("BERTScore", "bertscore", "bertscore_f1"),
    ("BARTScore", "bartscore", "bartscore"),
)
TABLE2_COLUMNS = ("language", "row", "kind", "value", "from", "cells", "note")
#: the paper's name of a language of the Table-1 columns
LANGUAGE_NAMES = {"en": "English", "zh": "Chinese"}
PAPER_TABLE_COLUMN = "valid cell ratio"


def _variants(name: str) -> tuple[str, str]:
    if name.startswith("Ensemble"):
        return f"{name} (L2)", f"{name} (z + L2)"
    return f"FACE-2 (L2) {name}", f"FACE-2 (z + L2) {name}"


def table2(t1: pd.DataFrame, rows: Mapping[str, Mapping[str, Any]]) -> pd.DataFrame:
    """Table 2 per language, one line per (language, row), columns :data:`TABLE2_COLUMNS`.

    ``t1``: :func:`~genmetrics.studies.face2_scaling.table1.table1`'s long table; ``rows``: the
    same mapping of scaling rows to ``{"metric", "params", "value"}`` it was built from (the
    baselines are recognised by their registered metric and value, never by a label).
    ``kind``: ``face2`` (``value`` the best ratio over both variants and their evaluators,
    ``from`` e.g. ``"z + L2, gemma3"``), ``surprisal`` (best over evaluators), ``baseline``
    (the metric's single ratio; several entries of one baseline: one line each, ``from``
    naming the row), ``missing`` (a baseline not scored: value NaN, ``note`` says why) and
    ``random`` (the mean of 1/k! over the language's cells).
    """
    missing = [c for c in LONG_COLUMNS if c not in t1.columns]
    if missing:
        raise GenmetricsError(f"table2: t1 lacks column(s) {missing}; use table1")
    lang_cols = t1[t1["kind"] == "language"]
    out: list[dict[str, Any]] = []
    for lang in dict.fromkeys(lang_cols["language"]):
        here = lang_cols[lang_cols["language"] == lang]
        by_row = {r["row"]: r for _, r in here.iterrows()}

        def add(
            row: str, kind: str, value: float, frm: str, cells: int, note: str = "", lang=lang
        ) -> None:
            out.append(
                {
                    "language": lang,
                    "row": row,
                    "kind": kind,
                    "value": value,
                    "from": frm,
                    "cells": cells,
                    "note": note,
                }
            )

        for name in FACE2_ROWS:
            found = [
                (by_row[v]["best"], v, by_row[v])
                for v in _variants(name)
                if v in by_row and by_row[v]["best"] == by_row[v]["best"]
            ]
            if not found:
                continue
            best, label, r = max(found, key=lambda x: x[0])  # L2 first on a tie
            variant = label[label.index("(") + 1 : label.index(")")]
            add(
                f"FACE-2 {name}",
                "face2",
                float(best),
                f"{variant}, {r['best_evaluator']}",
                int(r["cells"]),
            )
        if SURPRISAL in by_row:
            r = by_row[SURPRISAL]
            add(SURPRISAL, "surprisal", float(r["best"]), str(r["best_evaluator"]), int(r["cells"]))
        for label, metric, value in BASELINES:
            mine = [
                by_row[k]
                for k in by_row
                if (m := rows.get(by_row[k]["metric"])) is not None
                and m["metric"] == metric
                and m["value"] == value
            ]
            if not mine:
                add(label, "missing", math.nan, "", 0, "not scored in this run")
            for r in mine:
                frm = str(r["metric"]) if len(mine) > 1 else str(r["best_evaluator"])
                add(label, "baseline", float(r["best"]), frm, int(r["cells"]))
        if RANDOM in by_row:
            r = by_row[RANDOM]
            add(RANDOM, "random", float(r["mean"]), "", int(r["cells"]))
    return pd.DataFrame(out, columns=list(TABLE2_COLUMNS))


def format_table2(t2: pd.DataFrame, notes: Mapping[str, str] | None = None) -> str:
    """Markdown of :func:`table2`: per language a block of rows (``value``, where it is from,
    the cells); ``notes`` (baseline label → text) replaces the note of a missing baseline
    (e.g. why BARTScore is not scored)."""
    notes = dict(notes or {})
    header = ["language", "row", "valid-cell ratio", "best of", "cells", "note"]
    body = []
    for _, r in t2.iterrows():
        note = notes.get(r["row"], r["note"]) if r["kind"] == "missing" else r["note"]
        value = "–" if r["value"] != r["value"] else f"{r['value']:.3f}"
        body.append([r["language"], r["row"], value, r["from"], str(r["cells"]), note])
    widths = [
        max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(header)
    ]

    def line(cells: list[str]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(header), sep, *(line(b) for b in body)])


#: the paper's Table 1 rows (English) and ours: paper row -> our Table-1 label
TABLE1_PAPER_ROWS = {
    "FACE-1 SO": "FACE-1 SO",
    "FACE-2 EMD (L2)": "FACE-2 (L2) EMD",
    "FACE-2 EMD (z + L2)": "FACE-2 (z + L2) EMD",
    "FACE-2 Ensemble-3 (L2)": "Ensemble-3 (L2)",
    "FACE-2 Ensemble-3 (z + L2)": "Ensemble-3 (z + L2)",
    "FACE-2 Ensemble-5 (L2)": "Ensemble-5 (L2)",
    "FACE-2 Ensemble-5 (z + L2)": "Ensemble-5 (z + L2)",
    "surprisal": SURPRISAL,
}
#: the paper's Table 2 rows (English) and ours
TABLE2_PAPER_ROWS = {
    "FACE-2 EMD": "FACE-2 EMD",
    "FACE-2 Ensemble-3": "FACE-2 Ensemble-3",
    "FACE-2 Ensemble-5": "FACE-2 Ensemble-5",
    "MAUVE": "MAUVE",
    "Zipf": "Zipf",
    "Self-BLEU": "Self-BLEU",
    "BERTScore": "BERTScore",
    "BARTScore": "BARTScore",
}


def ours_for_paper(t1: pd.DataFrame, t2: pd.DataFrame) -> pd.DataFrame:
    """Our numbers named as the paper's rows (``resources/papers/face-scaling.csv``): columns
    ``table, row, column, value, n`` (cells), ``evaluators``: Table 1's English rows (the
    ``en (all)`` mean over evaluators), Table 2's (best over evaluators; a baseline scored
    by several entries: the first), and the random guess of Table 1 (our cells' mean 1/k!)."""
    out = []
    for lang, name in LANGUAGE_NAMES.items():
        col = t1[(t1["kind"] == "language") & (t1["language"] == lang)]
        by_row = {r["row"]: r for _, r in col.iterrows()}
        for paper, mine in TABLE1_PAPER_ROWS.items():
            if mine in by_row and by_row[mine]["mean"] == by_row[mine]["mean"]:
                r = by_row[mine]
                out.append(
                    {
                        "table": "Table 1",
                        "row": f"{name}: {paper}",
                        "column": PAPER_TABLE_COLUMN,
                        "value": float(r["mean"]),
                        "n": int(r["cells"]),
                        "evaluators": int(r["n_evaluators"]),
                    }
                )
        if RANDOM in by_row and lang == "en":
            r = by_row[RANDOM]
            out.append(
                {
                    "table": "Table 1",
                    "row": "random guess",
                    "column": PAPER_TABLE_COLUMN,
                    "value": float(r["mean"]),
                    "n": int(r["cells"]),
                    "evaluators": 0,
                }
            )
        t2l = t2[(t2["language"] == lang) & t2["value"].notna()]
        for paper, mine in TABLE2_PAPER_ROWS.items():
            hit = t2l[t2l["row"] == mine]
            if len(hit):
                r = hit.iloc[0]
                out.append(
                    {
                        "table": "Table 2",
                        "row": f"{name}: {paper}",
                        "column": PAPER_TABLE_COLUMN,
                        "value": float(r["value"]),
                        "n": int(r["cells"]),
                        "evaluators": 0,
                    }
                )
    return pd.DataFrame(out, columns=["table", "row", "column", "value", "n", "evaluators"])


def paper_matches(ours: pd.DataFrame) -> list:
    """The :class:`~genmetrics.analysis.paper_comparison.Match` of every paper row ours has:
    a Table 1 row's direction is against surprisal (does the row beat raw surprisal, in the
    paper and here?), a Table 2 row's against FACE-2 EMD (the paper's best English row: does
    it beat this baseline?), the random guess without a direction."""
    from genmetrics.analysis.paper_comparison import Match

    have = set(zip(ours["table"], ours["row"], strict=True))
    out = []
    for table, versus in (("Table 1", "surprisal"), ("Table 2", "FACE-2 EMD")):
        for _, name in LANGUAGE_NAMES.items():
            base = f"{name}: {versus}"
            rows = TABLE1_PAPER_ROWS if table == "Table 1" else TABLE2_PAPER_ROWS
            for paper in rows:
                row = f"{name}: {paper}"
                if (table, row) not in have:
                    continue
                vs = None
                if paper != versus and (table, base) in have:
                    vs = ((table, base, PAPER_TABLE_COLUMN), {"table": table, "row": base})
                out.append(
                    Match(
                        paper=(table, row, PAPER_TABLE_COLUMN),
                        ours={"table": table, "row": row},
                        versus=vs,
                    )
                )
    if ("Table 1", "random guess") in have:
        out.append(
            Match(
                paper=("Table 1", "random guess", PAPER_TABLE_COLUMN),
                ours={"table": "Table 1", "row": "random guess"},
            )
        )
    return out
