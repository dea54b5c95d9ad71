"""The papers' numbers shipped as data (``resources/papers/<study>.csv``): their shape, and
every value against the full text of its paper.

* shape: the columns ``paper, table, row, column, value, note``; one row per cell; a known
  paper; an empty value exactly where the number is only in a figure (note "in a figure, not
  in the text"); every value a number :func:`paper_number` reads; every file a study of the
  Makefile, and every study of ``make studies`` that reproduces a paper has its file;
* text: every value is printed in the full text (``../shared/docs/papers/text/``), and the
  values of one row of one table stand in that order on one line of it (a swapped column or
  a value copied from another row fails); the table or figure is named in the text. Skipped,
  with the reason, where the texts are not beside the checkout.
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from pathlib import Path

import pytest

from genmetrics.analysis.paper_comparison import FIGURE_NOTE, paper_number, paper_tables

REPO = Path(__file__).resolve().parents[1]
TABLES = REPO / "resources" / "papers"
TEXTS = REPO.parent / "shared" / "docs" / "papers" / "text"
#: the full text of each paper (the digests' README names them)
PAPERS = {
    "pr-llm": "000_a890a2afd9ff6ae7.txt",
    "diversity": "002_741f9ac162d16ff7.txt",
    "face2": "003_fc6f10e3940d1043.txt",
    "omniinput": "004_530689dd8de6dcee.txt",
}
COLUMNS = ["paper", "table", "row", "column", "value", "note"]
#: studies of `make studies` that are this project's own, not a paper's experiment
OWN_STUDIES = {"instruction-diversity"}


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def _files() -> list[Path]:
    return sorted(TABLES.glob("*.csv"))


def _make_targets() -> tuple[set[str], list[str]]:
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][a-z0-9-]*):", text, re.M))
    studies = re.search(r"^studies:(.*)$", text, re.M).group(1).split()
    return targets, studies


# ---------------------------------------------------------------- shape


def test_every_study_that_reproduces_a_paper_ships_its_table():
    targets, studies = _make_targets()
    names = {p.stem for p in _files()}
    assert names, "no resources/papers/*.csv"
    assert names <= targets, f"not a study of the Makefile: {sorted(names - targets)}"
    assert set(studies) - OWN_STUDIES <= names, sorted(set(studies) - OWN_STUDIES - names)
    assert not names & OWN_STUDIES


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.stem)
def test_shape(path):
    with path.open(encoding="utf-8", newline="") as f:
        assert next(csv.reader(f)) == COLUMNS
    rows = _rows(path)
    assert rows
    seen = set()
    for i, r in enumerate(rows, start=2):
        where = f"{path.name}:{i}"
        assert r["paper"] in PAPERS, where
        assert r["table"] and r["row"] and r["column"], where
        key = (r["paper"], r["table"], r["row"], r["column"])
        assert key not in seen, f"{where}: a second row for {key}"
        seen.add(key)
        assert r["value"] == r["value"].strip(), where
        if r["value"]:
            assert FIGURE_NOTE not in r["note"], where
            assert paper_number(r["value"]) == paper_number(r["value"]), f"{where}: not a number"
        else:
            assert r["note"] == FIGURE_NOTE, where
            assert r["table"].startswith("Fig."), where


def test_the_reader_gives_the_same_rows():
    for path in _files():
        df = paper_tables(path)
        assert list(df.columns[: len(COLUMNS)]) == COLUMNS
        assert df["value"].fillna("").tolist() == [r["value"] for r in _rows(path)]


# ---------------------------------------------------------------- against the full texts


def normalise(text: str) -> str:
    """The text's markup taken out: HTML tags, TeX ``$``, ``\\pm``, ``\\approx``, the
    minus sign, tabs and repeated spaces."""
    text = re.sub(r"</?[a-zA-Z]+[^>]*>", "", text)
    text = text.replace("\\pm", "±").replace("\\approx", "≈").replace("$", "")
    text = text.replace("−", "-").replace("\t", " ")
    return re.sub(r" +", " ", text)


def _value_pattern(value: str) -> str:
    """``value`` as a whole number: not part of a longer one (0.3 is not in 0.35)."""
    return r"(?<![\d.])" + re.escape(normalise(value)) + r"(?!\.?\d)"


def mismatches(rows: list[dict[str, str]], text: str) -> list[str]:
    """What of ``rows`` (one paper's) the ``text`` does not print: a value nowhere in it, or
    the values of one (table, row) not in that order on any one line; a table not named."""
    lines = normalise(text).splitlines()
    whole = "\n".join(lines)
    out = []
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for r in rows:
        if r["value"]:
            groups[(r["table"], r["row"])].append(r["value"])
            if not re.search(_value_pattern(r["value"]), whole):
                out.append(
                    f"{r['table']} / {r['row']} / {r['column']}: {r['value']} not in the text"
                )
        name = re.match(r"(Table|Fig\.) ([A-Z]?\.?\d+)", r["table"])
        label = (name.group(1).replace("Fig.", "Fig(?:ure|\\.)"), name.group(2)) if name else None
        if label is None or not re.search(rf"{label[0]}\s*{re.escape(label[1])}\b", whole):
            out.append(f"{r['table']}: not named in the text")
    for (table, row), values in groups.items():
        pattern = ".*?".join(_value_pattern(v) for v in values)
        if not any(re.search(pattern, ln) for ln in lines):
            out.append(f"{table} / {row}: {values} not in this order on one line")
    return sorted(set(out))


def _text(paper: str) -> str:
    path = TEXTS / PAPERS[paper]
    if not path.is_file():
        pytest.skip(f"the papers' full texts are not beside this checkout ({path} is absent)")
    return path.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.stem)
def test_every_value_is_printed_in_its_papers_text(path):
    by_paper = defaultdict(list)
    for r in _rows(path):
        by_paper[r["paper"]].append(r)
    for paper, rows in by_paper.items():
        assert mismatches(rows, _text(paper)) == [], paper


def test_the_text_check_fails_on_a_wrong_value_a_swap_and_a_wrong_table():
    text = _text("diversity")
    rows = [r for r in _rows(TABLES / "summary-diversity.csv") if r["table"] == "Table 2"]
    assert mismatches(rows, text) == []
    wrong = [dict(r) for r in rows]
    wrong[0]["value"] = "0.867"  # Table 6's CR, printed elsewhere in the text
    values = [r["value"] for r in wrong]
    assert mismatches(wrong, text) == [
        f"Table 2 / CNN/DM vs XSUM: {values} not in this order on one line"
    ]
    swapped = [dict(r) for r in rows]
    swapped[0]["value"], swapped[1]["value"] = rows[1]["value"], rows[0]["value"]
    assert len(mismatches(swapped, text)) == 1  # both values are printed, not in this order
    missing = [dict(rows[0], value="0.8301")]
    assert mismatches(missing, text) == [
        "Table 2 / CNN/DM vs XSUM / CR: 0.8301 not in the text",
        "Table 2 / CNN/DM vs XSUM: ['0.8301'] not in this order on one line",
    ]
    renamed = [dict(rows[0], table="Table 19")]
    assert mismatches(renamed, text) == ["Table 19: not named in the text"]


# ---------------------------------------------------------------- the papers' compute statements

COMPUTE = REPO / "resources" / "plan" / "paper_compute.csv"


def _compute_rows() -> list[dict[str, str]]:
    return _rows(COMPUTE)


def test_the_compute_table_has_its_shape():
    with COMPUTE.open(encoding="utf-8", newline="") as f:
        assert next(csv.reader(f)) == [
            "paper", "section", "work", "size_b", "time", "gpus", "gpu_hours", "quote"
        ]  # fmt: skip
    rows = _compute_rows()
    assert {r["paper"] for r in rows} == set(PAPERS)  # every paper: its statement or "not stated"
    for r in rows:
        assert r["paper"] in PAPERS and r["section"] and r["work"] and r["quote"], r
        if r["gpu_hours"] and r["time"]:
            # a derived GPU-hours value: the stated hours × the stated GPUs
            hours = float(re.match(r"[\d.]+", r["time"]).group())
            assert float(r["gpu_hours"]) == hours * int(r["gpus"]), r
        if not r["gpu_hours"] and not (r["time"] and r["gpus"]):
            assert "not stated" in r["work"] or not r["gpus"], r


@pytest.mark.parametrize("row", _compute_rows(), ids=lambda r: f"{r['paper']}-{r['work'][:30]}")
def test_every_compute_statement_is_quoted_from_its_papers_text(row):
    """The quote stands in the paper's full text; the time, GPU count and a GPU-hours value
    the paper prints (not one derived here) stand in the quote; the section is named."""
    text = normalise(_text(row["paper"]))
    quote = normalise(row["quote"])
    assert quote in text, f"{row['quote']!r} is not in the text of {row['paper']}"
    if row["time"]:
        assert normalise(row["time"]).replace(" ", "") in quote.replace(" ", ""), row
    if row["gpus"] and row["paper"] == "pr-llm" and row["time"]:
        assert re.search(rf"\b{row['gpus']} A100", quote), row
    if row["gpu_hours"] and not row["time"]:
        assert re.search(_value_pattern(row["gpu_hours"]) + r" GPU hours", quote), row
    section = re.match(r"(App\. [A-Z](?:\.\d+)?|§\d+(?:\.\d+)?)", row["section"]).group(1)
    number = section.split()[-1].lstrip("§")
    heading = re.compile(rf"^(#+ )?{re.escape(number)}\b", re.M)
    assert heading.search(text) or f"Table {number}" in text, f"{section} not a heading"


def test_the_quote_check_fails_on_a_changed_number():
    row = next(r for r in _compute_rows() if r["gpu_hours"] == "4200")
    text = normalise(_text("pr-llm"))
    assert normalise(row["quote"]) in text
    assert normalise(row["quote"].replace("4200", "4300")) not in text
