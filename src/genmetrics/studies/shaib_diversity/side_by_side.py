"""The summarisation study beside Shaib et al. (2024): their Tables 2-7 next to ours.

The paper scores six instruction-tuned LLMs (Llama-2, GPT-4, FlanT5, StableLM, Mistral,
StableBeluga) and three human rows (the Article, its first three sentences, the Reference
summary); the offline study scores other systems (REALSumm's CNN/DM systems, XSum's
BERTS2S/TranS2S/PtGen/TConvS2S). The cells both can state are:

* Tables 3 and 4 (raw) and 7 and 5 (every text cut to the shortest of its input): the
  **Reference** row, every column the config maps (``analysis.diversity.paper.columns``) and
  the average length; ours is the references' score with its interval over prompts and n. The
  direction compared is the Reference **minus the mean of the models**: in the paper the mean
  of the six models' printed values (computed here, not printed), in ours the mean over the
  systems of the same dataset. Its sign says whether the human summaries score more or less
  diverse than the systems, the paper's question (§6, §8).
* Table 2: each score's correlation between CNN/DM and XSum (the paper: over its sources; the
  coefficient is not stated); ours: Spearman's ρ over the matched sources
  (``analysis.diversity.stability``), n the number of pairs. Direction: its sign.
* Table 6: each score's correlation with length on CNN/DM (the paper: with the total words of
  the concatenated texts; ours: Pearson's r with the mean words per text, the same up to a
  constant since every source has the same number of texts). Direction: its sign.

:func:`reference_ranks` adds the ranking both can state: where the Reference stands among
the sources (the paper: among the Reference and the six models; ours: among the references
and the systems), 1 = the most diverse by that score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from genmetrics import GenmetricsError
from genmetrics.analysis.paper_comparison import (
    SIDE_BY_SIDE_COLUMNS,
    Match,
    paper_tables,
    side_by_side,
)

#: the paper's tables per dataset: raw (Tables 3, 4) and cut to the shortest (Tables 7, 5)
PAPER_TABLES: dict[str, dict[str, str]] = {
    "CNN/DM": {"raw": "Table 3", "cut": "Table 7"},
    "XSUM": {"raw": "Table 4", "cut": "Table 5"},
}
#: the paper's score columns (Tables 2-4, 6), with their direction (higher = more diverse)
PAPER_COLUMNS: dict[str, str] = {
    "CR": "lower",
    "CR: POS": "lower",
    "NGD": "higher",
    "Self-Rep.": "lower",
    "Hom. (R-L)": "lower",
    "Hom. (BERT)": "lower",
    "Self-BLEU": "lower",
    "MATTR": "higher",
    "HD-D": "higher",
}
#: the paper's six models (the rows of Tables 3-5, 7 that are neither human row)
PAPER_MODELS = ("StableLM", "Mistral", "Llama-2", "StableBeluga", "FlanT5", "GPT-4")
REFERENCE_ROW = "Reference"
MODELS_ROW = "mean of the six models"
LENGTH_COLUMN = "Avg. Length"
STABILITY_TABLE = "Table 2"
LENGTH_TABLE = "Table 6"
#: the dataset of Table 6 (the paper prints it for CNN/DM only)
LENGTH_DATASET = "CNN/DM"
#: our group of the sources: the human references, or a system
REFERENCES = "references"
SYSTEMS = "systems"
#: columns added before :data:`SIDE_BY_SIDE_COLUMNS`: which of our rows answers
OURS_COLUMNS = ["dataset", "source", "version"]


def with_model_means(paper: pd.DataFrame) -> pd.DataFrame:
    """The paper table with one more row per (table, column) of Tables 3-5, 7: the mean of the
    six models' printed values (:data:`MODELS_ROW`; computed here, the paper prints none)."""
    tables = {t for d in PAPER_TABLES.values() for t in d.values()}
    sub = paper[paper["table"].isin(tables) & paper["row"].isin(PAPER_MODELS)]
    rows = []
    for (table, column), g in sub.groupby(["table", "column"], sort=True):
        if len(g) != len(PAPER_MODELS) or g["number"].isna().any():
            continue
        mean = float(g["number"].mean())
        rows.append(
            {
                "paper": g["paper"].iloc[0],
                "table": table,
                "row": MODELS_ROW,
                "column": column,
                "value": f"{mean:.4f}",
                "note": "computed here: the mean of the six models' printed values",
                "number": mean,
            }
        )
    return pd.concat([paper, pd.DataFrame(rows, columns=paper.columns)], ignore_index=True)


def grouped_scores(scores: pd.DataFrame, datasets: Sequence[str]) -> pd.DataFrame:
    """The tidy scores of ``datasets`` with ``group``: :data:`REFERENCES` for the human
    references (model ``references``), :data:`SYSTEMS` for every other source."""
    d = scores[scores["dataset"].isin(list(datasets))].copy()
    d["group"] = np.where(d["model"] == REFERENCES, REFERENCES, SYSTEMS)
    return d


def _column_entries(
    columns: Sequence[Mapping[str, Any]], mapped: Mapping[str, str]
) -> list[tuple[str, Mapping[str, Any]]]:
    by_label = {c["label"]: c for c in columns}
    out = []
    for label, paper_col in mapped.items():
        if label not in by_label:
            raise GenmetricsError(
                f"analysis.diversity.paper.columns: {label!r} is not a column of the tables"
            )
        out.append((paper_col, by_label[label]))
    return out


def score_matches(
    settings: Mapping[str, Any], columns: Sequence[Mapping[str, Any]], paper: pd.DataFrame
) -> list[Match]:
    """The Reference cells of Tables 3-5, 7 that the paper table has, against our references'
    scores (raw entry, or its truncated twin for Tables 5 and 7); versus the models' mean."""
    have = set(zip(paper["table"], paper["row"], paper["column"], strict=True))
    out = []
    for ours, theirs in settings["datasets"].items():
        tables = PAPER_TABLES[theirs]
        pairs = _column_entries(columns, settings["columns"])
        first = pairs[0][1] if pairs else None
        cells = [(col, c["entry"], c["name"], c.get("cut_entry")) for col, c in pairs]
        if first is not None:
            cells.insert(0, (LENGTH_COLUMN, first["entry"], "mean_words", None))
        for version in ("raw", "cut"):
            table = tables[version]
            for col, entry, name, cut_entry in cells:
                use = entry if version == "raw" else cut_entry
                if use is None or (table, REFERENCE_ROW, col) not in have:
                    continue
                sel = {"dataset": ours, "entry": use, "name": name}
                versus = None
                if (table, MODELS_ROW, col) in have:
                    versus = ((table, MODELS_ROW, col), {**sel, "group": SYSTEMS})
                note = f"ours: the references of {ours}, entry {use}; direction: minus the models"
                out.append(Match((table, REFERENCE_ROW, col), {**sel, "group": REFERENCES}, versus,
                                 note=note))  # fmt: skip
    return out


def _correlation_matches(
    settings: Mapping[str, Any],
    columns: Sequence[Mapping[str, Any]],
    paper: pd.DataFrame,
    table: str,
    ours: Mapping[str, Any],
    value: str,
    note: str,
) -> list[Match]:
    have = set(zip(paper["table"], paper["column"], strict=True))
    rows = dict(zip(paper["table"], paper["row"], strict=False))
    out = []
    for col, c in _column_entries(columns, settings["columns"]):
        if (table, col) in have:
            sel = {**ours, "score": c["label"], "version": "raw"}
            out.append(Match((table, rows[table], col), sel, "zero", value, note))
    return out


def summary_side_by_side(
    scores: pd.DataFrame,
    stable: pd.DataFrame,
    length: pd.DataFrame,
    settings: Mapping[str, Any],
    columns: Sequence[Mapping[str, Any]],
    *,
    root: str | None = None,
) -> pd.DataFrame:
    """The side-by-side table (:data:`OURS_COLUMNS` + :data:`SIDE_BY_SIDE_COLUMNS`): the
    Reference cells of Tables 3-5, 7 against our references' scores (``scores``: the tidy
    scores.csv), Table 2 against ``stable`` (the stability table; Spearman's ρ) and Table 6
    against ``length`` (the length correlations; Pearson's r on our dataset mapped to CNN/DM).
    ``settings``: ``analysis.diversity.paper`` as the plan checked it (``table``, ``datasets``:
    ours → the paper's, ``columns``: our column label → the paper's)."""
    paper = with_model_means(paper_tables(settings["table"], root))
    datasets = list(settings["datasets"])
    parts = []
    matches = score_matches(settings, columns, paper)
    if matches:
        got = side_by_side(paper, grouped_scores(scores, datasets), matches)
        cut_tables = {t["cut"] for t in PAPER_TABLES.values()}
        got.insert(0, "version", ["cut" if m.paper[0] in cut_tables else "raw" for m in matches])
        got.insert(0, "source", REFERENCES)
        got.insert(0, "dataset", [m.ours["dataset"] for m in matches])
        parts.append(got)
    if not stable.empty:
        pairs = int(stable["n"].max())
        note = f"ours: Spearman ρ over {pairs} matched sources (analysis.diversity.stability)"
        ms = _correlation_matches(settings, columns, paper, STABILITY_TABLE, {}, "spearman", note)
        if ms:
            got = side_by_side(paper, stable, ms)
            parts.append(got.assign(dataset=" vs ".join(datasets), source="all", version="raw"))
    length_ds = [ours for ours, theirs in settings["datasets"].items() if theirs == LENGTH_DATASET]
    if length_ds and not length.empty:
        note = "ours: Pearson r with the mean words per text, across the sources"
        sel = {"dataset": length_ds[0]}
        ms = _correlation_matches(settings, columns, paper, LENGTH_TABLE, sel, "pearson", note)
        if ms:
            got = side_by_side(paper, length, ms)
            parts.append(got.assign(dataset=length_ds[0], source="all", version="raw"))
    if not parts:
        return pd.DataFrame(columns=[*OURS_COLUMNS, *SIDE_BY_SIDE_COLUMNS])
    out = pd.concat(parts, ignore_index=True)
    return out[[*OURS_COLUMNS, *SIDE_BY_SIDE_COLUMNS]]


def reference_ranks(
    table: pd.DataFrame,
    settings: Mapping[str, Any],
    columns: Sequence[Mapping[str, Any]],
    *,
    root: str | None = None,
) -> pd.DataFrame:
    """Where the Reference ranks by each mapped score (1 = the most diverse; ties share the
    best rank): in the paper among the Reference and the six models of the raw table, in ours
    among the references and the systems of the dataset (``table``: the diversity table,
    indexed by dataset and model). Columns: ``dataset, column, paper_rank, paper_of,
    our_rank, our_of``."""
    paper = paper_tables(settings["table"], root)
    rows = []
    for ours, theirs in settings["datasets"].items():
        ptab = PAPER_TABLES[theirs]["raw"]
        for col, c in _column_entries(columns, settings["columns"]):
            higher = PAPER_COLUMNS.get(col, c["direction"]) == "higher"
            p = paper[(paper["table"] == ptab) & (paper["column"] == col)]
            p = p[p["row"].isin([REFERENCE_ROW, *PAPER_MODELS])].set_index("row")["number"]
            p_rank = _rank(p, REFERENCE_ROW, higher)
            o = table.loc[ours, c["label"]] if ours in table.index.get_level_values(0) else None
            o_rank = _rank(o.dropna(), REFERENCES, higher) if o is not None else np.nan
            rows.append(
                [ours, col, p_rank, len(p), o_rank, 0 if o is None else int(o.notna().sum())]
            )
    return pd.DataFrame(rows, columns=["dataset", "column", "paper_rank", "paper_of",
                                       "our_rank", "our_of"])  # fmt: skip


def _rank(values: pd.Series, who: str, higher: bool) -> float:
    if who not in values.index or values.empty:
        return np.nan
    v = values[who]
    return float(1 + ((values > v) if higher else (values < v)).sum())


# ---------------------------------------------------------------- Markdown


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None or v is pd.NA or (isinstance(v, float) and not np.isfinite(v)):
        return "–"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return f"{float(v):.{digits}f}"


def _line(cells: Sequence[Any]) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def side_by_side_markdown(table: pd.DataFrame, ranks: pd.DataFrame | None = None) -> str:
    """The side-by-side table in Markdown (the paper's value, ours [interval], n, the two
    directions and whether they agree), then the Reference's rank in both."""
    lines = [
        "# Beside the paper (Shaib et al. 2024, Tables 2-7)",
        "",
        "The paper's systems (six instruction-tuned LLMs) are not ours, so only the rows both "
        "have are compared: the Reference summaries (Tables 3-5, 7), the stability between "
        "the datasets (Table 2) and the correlation with length (Table 6). Direction: for "
        "the Reference rows, the Reference minus the mean of the models (the paper's six, "
        "ours all systems of the dataset); for Tables 2 and 6, the sign of the correlation. "
        "The paper's Article and Lead-3 rows have no counterpart: the offline data has no "
        "source article of these documents.",
        "",
    ]
    head = ["table", "row", "column", "dataset", "paper", "ours [interval]", "n"]
    head += ["paper dir.", "our dir.", "agrees"]
    lines += [_line(head), _line(["---"] * 4 + ["---:"] * 3 + ["---"] * 3)]
    for _, r in table.iterrows():
        ours = _fmt(r["ours"])
        if pd.notna(r["lower"]) and pd.notna(r["upper"]):
            ours += f" [{_fmt(r['lower'])}, {_fmt(r['upper'])}]"
        agree = r["direction_agrees"]
        agree = "–" if agree is None or pd.isna(agree) else ("yes" if agree else "no")
        dirs = [
            "–" if d is None or pd.isna(d) else d
            for d in (r["paper_direction"], r["our_direction"])
        ]
        n = "–" if pd.isna(r["n"]) else str(int(r["n"]))
        cells = [r["table"], r["row"], r["column"], r["dataset"], r["paper"], ours, n]
        lines.append(_line([*cells, *dirs, agree]))
    known = table["direction_agrees"].dropna()
    if len(known):
        lines += ["", f"Directions agree in {int(known.sum())} of {len(known)} cells."]
    if ranks is not None and not ranks.empty:
        lines += [
            "",
            "## Where the Reference ranks (1 = the most diverse)",
            "",
            "The paper: among the Reference and its six models (raw tables); ours: among the "
            "references and the systems of the dataset.",
            "",
            _line(["dataset", "column", "paper", "ours"]),
            _line(["---", "---", "---:", "---:"]),
        ]
        for r in ranks.itertuples(index=False):
            p = f"{_fmt(r.paper_rank, 0)} of {r.paper_of}"
            o = f"{_fmt(r.our_rank, 0)} of {r.our_of}"
            lines.append(_line([r.dataset, r.column, p, o]))
    return "\n".join(lines) + "\n"
