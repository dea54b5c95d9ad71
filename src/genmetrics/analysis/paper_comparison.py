"""A study's numbers beside its paper's: the side-by-side table.

The papers' numbers are data, ``resources/papers/<study>.csv`` (columns :data:`PAPER_COLUMNS`:
the paper, its table or figure, row, column, the value as printed, a note); a number that is
only in a figure has an empty value and the note :data:`FIGURE_NOTE`. :func:`paper_tables`
reads one; :func:`paper_number` reads the number a printed value states.

:func:`side_by_side` puts, for each :class:`Match` (a paper cell and the rows of our table
that answer it), the paper's value beside ours, our interval and n, and whether the direction
agrees: the sign of the paper's value against a second cell (or against 0) and the sign of
ours against the matching second selection. Our table is a results folder's tidy
``scores.csv`` (:mod:`genmetrics.analysis.aggregate`; one row per seed: several rows are
averaged, with a 95% t interval over them) or any study output table with a number column
(``Match.value``) and, where it has them, ``lower``/``upper`` and a size column.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from genmetrics import GenmetricsError

__all__ = [
    "FIGURE_NOTE",
    "PAPER_COLUMNS",
    "SIDE_BY_SIDE_COLUMNS",
    "Match",
    "paper_number",
    "paper_tables",
    "side_by_side",
]

#: the columns of ``resources/papers/<study>.csv``
PAPER_COLUMNS = ["paper", "table", "row", "column", "value", "note"]
#: the note of a number that only a figure shows (its value is empty)
FIGURE_NOTE = "in a figure, not in the text"
#: the columns :func:`side_by_side` returns
SIDE_BY_SIDE_COLUMNS = [
    "table",
    "row",
    "column",
    "paper",
    "paper_value",
    "ours",
    "lower",
    "upper",
    "interval",
    "n",
    "n_rows",
    "paper_direction",
    "our_direction",
    "direction_agrees",
    "note",
]
#: where the papers' tables are, relative to the repository root
PAPERS_DIR = Path("resources") / "papers"
#: size columns of our tables, in order of preference
N_COLUMNS = ("n_candidate", "n", "n_texts")

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)"
_THOUSANDS = r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?"  # 6,594,646


def paper_number(value: str | float | None) -> float:
    """The number a printed value states: ``0.356 (0.053)`` → 0.356 (the SD in parentheses
    left out), ``1.00 ± 0.00`` → 1.0, ``4.159*`` → 4.159, ``41/500`` → 0.082 (a count of a
    total), ``1/6 ≈ 0.167`` → 0.167 (what follows ≈), ``−0.87`` → −0.87, ``84,437`` → 84437
    (thousands separated by commas); NaN for an empty value (a number only in a figure).
    Raises ValueError when the text holds no number."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return math.nan
    text = str(value).strip().replace("−", "-")
    if not text:
        return math.nan
    if "≈" in text:
        text = text.split("≈", 1)[1].strip()
    if re.fullmatch(_THOUSANDS, text):
        return float(text.replace(",", ""))
    frac = re.fullmatch(rf"({_NUMBER})\s*/\s*({_NUMBER})", text)
    if frac:
        return float(frac.group(1)) / float(frac.group(2))
    m = re.match(_NUMBER, text)
    if m is None:
        raise ValueError(f"no number in the printed value {value!r}")
    return float(m.group(0))


def _checkout() -> Path:
    """The checkout this module runs from (the first folder above it with
    ``resources/papers``), else the working directory."""
    here = Path(__file__).resolve()
    return next((p for p in here.parents if (p / PAPERS_DIR).is_dir()), Path.cwd())


def paper_tables(study: str | Path | pd.DataFrame, root: str | Path | None = None) -> pd.DataFrame:
    """A paper table (:data:`PAPER_COLUMNS`, values as printed, an empty value as NaN) with
    ``number`` (:func:`paper_number`) added: ``study`` is a study's name (read from
    ``<root>/resources/papers/<study>.csv``; root: the checkout by default), a path, or a
    table."""
    if isinstance(study, pd.DataFrame):
        df = study.copy()
    else:
        path = Path(study)
        if path.suffix != ".csv":
            path = (Path(root) if root is not None else _checkout()) / PAPERS_DIR / f"{study}.csv"
        if not path.is_file():
            raise GenmetricsError(f"no paper table {path}")
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
        df["value"] = df["value"].replace("", np.nan)
    missing = [c for c in PAPER_COLUMNS if c not in df.columns]
    if missing:
        raise GenmetricsError(f"not a paper table: no column(s) {missing}")
    df["number"] = [paper_number(v) for v in df["value"]]
    return df


Cell = tuple[str, str, str]  # the paper's (table, row, column)


@dataclass(frozen=True)
class Match:
    """One paper cell (``paper``: table, row, column) and the rows of our table that answer
    it (``ours``: column → value, every one must hold; ``value``: the column with our
    number). ``versus`` sets the direction compared: ``"zero"`` (the sign of each value,
    e.g. a correlation), or a second paper cell and our selection for it (the sign of the
    difference, e.g. chat minus base), or None (no direction)."""

    paper: Cell
    ours: Mapping[str, Any]
    versus: str | tuple[Cell, Mapping[str, Any]] | None = None
    value: str = "value"
    note: str = ""


def _paper_cell(paper: pd.DataFrame, cell: Cell) -> pd.Series:
    table, row, column = cell
    hit = paper[(paper["table"] == table) & (paper["row"] == row) & (paper["column"] == column)]
    if len(hit) != 1:
        raise GenmetricsError(
            f"paper table: {len(hit)} cell(s) for table {table!r}, row {row!r}, column "
            f"{column!r} (expected 1)"
        )
    return hit.iloc[0]


def _select(ours: pd.DataFrame, selector: Mapping[str, Any], value: str) -> pd.DataFrame:
    if value not in ours.columns:
        raise GenmetricsError(f"our table has no column {value!r}")
    keep = pd.Series(True, index=ours.index)
    for col, want in selector.items():
        if col not in ours.columns:
            raise GenmetricsError(f"our table has no column {col!r} (selector {dict(selector)})")
        keep &= ours[col].astype(str) == str(want)
    rows = ours[keep & ours[value].notna()]
    if rows.empty:
        raise GenmetricsError(f"our table has no value of {value!r} where {dict(selector)}")
    return rows


def _ours(ours: pd.DataFrame, selector: Mapping[str, Any], value: str, level: float) -> dict:
    """Our value for ``selector``: one row as it is (its interval and size), several rows
    (seeds) averaged with a t interval over them (cut to the rows' ``scale`` where it is
    bounded, :data:`~genmetrics.scoring.intervals.RANGES`: with 3 seeds t is 4.3 and the
    interval of a mean near 1 reaches past 1) and the fewest texts of any."""
    from genmetrics.analysis.statistics import t_interval
    from genmetrics.scoring.intervals import RANGES

    rows = _select(ours, selector, value)
    vals = rows[value].astype(float).to_numpy()
    ncol = next((c for c in N_COLUMNS if c in rows.columns), None)
    sizes = pd.to_numeric(rows[ncol], errors="coerce") if ncol else pd.Series(dtype=float)
    n = float(sizes.min()) if sizes.notna().any() else math.nan
    if vals.size == 1:
        row = rows.iloc[0]
        lower = float(row["lower"]) if "lower" in rows.columns else math.nan
        upper = float(row["upper"]) if "upper" in rows.columns else math.nan
        has = "interval" in rows.columns and pd.notna(row["interval"])
        over = str(row["interval"]) if has else ""
        if not over and not (math.isnan(lower) and math.isnan(upper)):
            over = "as given"
        return dict(ours=float(vals[0]), lower=lower, upper=upper, interval=over, n=n, n_rows=1)
    mean, std = float(vals.mean()), float(vals.std(ddof=1))
    lower, upper = t_interval(mean, std, vals.size, level)
    over = f"{level:.0%} t over {vals.size} rows"
    scale = str(rows["scale"].iloc[0]) if "scale" in rows.columns else ""
    if scale in RANGES:  # the mean of values on a bounded scale stays on it
        lo, hi = RANGES[scale]
        if lower < lo or upper > hi:
            lower, upper = max(lower, lo), min(upper, hi)
            over += f", cut to its scale {scale}"
    return dict(ours=mean, lower=lower, upper=upper, interval=over, n=n, n_rows=int(vals.size))


def _sign(x: float) -> str | None:
    if x is None or math.isnan(x):
        return None
    return "positive" if x > 0 else "negative" if x < 0 else "zero"


def side_by_side(
    paper: str | Path | pd.DataFrame,
    ours: str | Path | pd.DataFrame,
    matches: Sequence[Match],
    *,
    level: float = 0.95,
    root: str | Path | None = None,
) -> pd.DataFrame:
    """The study's table beside its paper's, one row per match (columns
    :data:`SIDE_BY_SIDE_COLUMNS`): the paper's value as printed and as a number, ours with
    its interval (``interval`` says over what: the scores table's ``prompts``, or a t
    interval over several rows such as seeds), n (the fewest texts, from the first of
    :data:`N_COLUMNS` our table has) and ``n_rows`` (how many of our rows were averaged), and
    the direction: ``paper_direction`` / ``our_direction`` are "positive", "negative" or "zero" (words:
    a CSV cell starting with "+" or "-" would be escaped as a formula) and
    ``direction_agrees`` is True/False, or None where there is no direction to compare (no
    ``versus``, or the paper's number is only in a figure).

    ``paper`` is a study name, a path or a table (:func:`paper_tables`); ``ours`` a path of a
    tidy ``scores.csv`` (read with :func:`genmetrics.analysis.aggregate.read_scores`), any
    other CSV, or a table.
    """
    ptab = paper_tables(paper, root)
    if isinstance(ours, pd.DataFrame):
        otab = ours
    else:
        from genmetrics.analysis.aggregate import COLUMNS, read_scores

        head = pd.read_csv(ours, nrows=0).columns
        otab = read_scores(ours) if set(COLUMNS) <= set(head) else pd.read_csv(ours)
    out = []
    for m in matches:
        cell = _paper_cell(ptab, m.paper)
        got = _ours(otab, m.ours, m.value, level)
        p_dir = o_dir = None
        if m.versus == "zero":
            p_dir, o_dir = _sign(cell["number"]), _sign(got["ours"])
        elif m.versus is not None:
            vcell, vsel = m.versus
            base = _paper_cell(ptab, vcell)
            p_dir = _sign(cell["number"] - base["number"])
            o_dir = _sign(got["ours"] - _ours(otab, vsel, m.value, level)["ours"])
        agrees = None if p_dir is None or o_dir is None else p_dir == o_dir
        note = "; ".join(x for x in (str(cell["note"] or ""), m.note) if x)
        out.append(
            {
                "table": cell["table"],
                "row": cell["row"],
                "column": cell["column"],
                "paper": cell["value"] if isinstance(cell["value"], str) else "",
                "paper_value": cell["number"],
                **got,
                "paper_direction": p_dir,
                "our_direction": o_dir,
                "direction_agrees": agrees,
                "note": note,
            }
        )
    df = pd.DataFrame(out, columns=SIDE_BY_SIDE_COLUMNS)
    df["n"] = df["n"].astype(float).astype("Int64")  # a count; <NA> where our table has none
    return df
