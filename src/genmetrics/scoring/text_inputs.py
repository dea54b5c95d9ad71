"""Texts given on the command line: one field of a JSONL file's rows, a folder of ``.txt``
files, or one column of a CSV file.

Each becomes rows as the workflow's text files have them: the text under the field the
metric reads (``into``: ``text``, ``continuation``, or ``prompt`` for a prompts reference)
and the ids that pair rows (``id``, ``prompt_id``, ``source_id``) where the input has them:

- **JSONL** (``.jsonl``): every row as read (:func:`genmetrics.io.read_jsonl`), its text
  taken from ``field``;
- **a folder**: each ``*.txt`` file in it or below is one text (UTF-8; one final line
  ending is not part of the text), its ``id`` the path below the folder without ``.txt``
  (as the workflow's ``format: folder`` datasets name rows), in path order;
- **CSV** (``.csv``, a header row, UTF-8): the text from the column ``field``; ``id``,
  ``prompt_id`` and ``source_id`` from the columns of those names where there are such.

No id is ever made up from a position: rows without ids cannot be paired by id
(:func:`genmetrics.metrics.kinds.pair_rows`).
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from genmetrics import GenmetricsError
from genmetrics.io import ID_FIELDS, read_jsonl

if TYPE_CHECKING:
    from genmetrics.metrics.registry import Metric

#: the text formats, by what a path looks like (:func:`text_format`)
TEXT_FORMATS = ("jsonl", "txt folder", "csv")
#: the CSV field size limit while reading (the csv module's default, 128 KiB, cuts long texts)
MAX_CSV_FIELD = 64 * 2**20

Rows = list[dict[str, Any]]


def text_format(path: str | Path) -> str | None:
    """``jsonl`` or ``csv`` by the suffix, else ``txt folder`` for a folder; None for any
    other path (a feature file, say; a folder named like a file is a misnamed file)."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix in (".jsonl", ".csv"):
        return suffix[1:]
    return "txt folder" if p.is_dir() and suffix != ".npz" else None


def read_text_rows(path: str | Path, field: str = "text", into: str = "text") -> Rows:
    """Rows of the texts at ``path`` (a JSONL file, a folder of .txt files or a CSV file),
    each with its text (the JSONL field or CSV column ``field``) under ``into``. Errors name
    the file and line (or the file of a folder)."""
    fmt = text_format(path)
    if fmt == "jsonl":
        return _jsonl_rows(Path(path), field, into)
    if fmt == "txt folder":
        return _folder_rows(Path(path), into)
    if fmt == "csv":
        return _csv_rows(Path(path), field, into)
    if not Path(path).exists():
        raise GenmetricsError(f"{path}: file not found")
    raise GenmetricsError(
        f"{path}: not a text input (a .jsonl file, a folder of .txt files or a .csv file)"
    )


def count_rows(path: str | Path) -> int | None:
    """How many rows an input file holds, without reading its texts: the non-blank lines of
    a ``.jsonl`` file (texts, records or stored per-token values), the ``.txt`` files of a
    folder, the rows below a ``.csv`` header; None for any other path, a file that is not a
    regular file (a FIFO) or one that cannot be read (its loader then says why)."""
    p = Path(path)
    fmt = text_format(p)
    if fmt in ("jsonl", "csv") and not p.is_file():  # a FIFO would block: its loader says why
        return None
    try:
        if fmt == "jsonl":
            with open(p, "rb") as f:
                return sum(1 for line in f if line.strip())
        if fmt == "txt folder":
            return sum(1 for f in p.glob("**/*.txt") if f.is_file())
        if fmt == "csv":
            limit = csv.field_size_limit()
            csv.field_size_limit(MAX_CSV_FIELD)
            try:
                with open(p, encoding="utf-8-sig", newline="") as f:
                    return max(sum(1 for values in csv.reader(f) if values) - 1, 0)
            finally:
                csv.field_size_limit(limit)
    except (OSError, UnicodeDecodeError, csv.Error):
        return None
    return None


def _jsonl_rows(path: Path, field: str, into: str) -> Rows:
    rows = read_jsonl(path, required=(field,))
    out = []
    for i, row in enumerate(rows, start=1):
        if not isinstance(row[field], str):
            raise GenmetricsError(
                f"{path}: row {i} (id={row.get('id')!r}): field {field!r} is not a string"
            )
        out.append({**row, into: row[field]})
    if not out:
        raise GenmetricsError(f"{path}: no rows")
    return out


def _folder_rows(folder: Path, into: str) -> Rows:
    files = sorted(p for p in folder.glob("**/*.txt") if p.is_file())
    if not files:
        raise GenmetricsError(f"{folder}: no .txt files in this folder (one text per file)")
    rows = []
    for f in files:
        try:
            text = f.read_bytes().decode("utf-8-sig")
        except UnicodeDecodeError as e:
            raise GenmetricsError(f"{f}: invalid UTF-8 at byte {e.start}") from None
        except OSError as e:
            raise GenmetricsError(f"{f}: cannot be read ({e.strerror or e})") from None
        text = text[:-2] if text.endswith("\r\n") else text[:-1] if text.endswith("\n") else text
        rows.append({"id": str(f.relative_to(folder).with_suffix("")), into: text})
    return rows


def _csv_rows(path: Path, column: str, into: str) -> Rows:
    limit = csv.field_size_limit()
    csv.field_size_limit(MAX_CSV_FIELD)
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            return _read_csv(csv.reader(f), path, column, into)
    except UnicodeDecodeError as e:
        raise GenmetricsError(f"{path}: invalid UTF-8 at byte {e.start}") from None
    except FileNotFoundError:
        raise GenmetricsError(f"{path}: file not found") from None
    except OSError as e:
        raise GenmetricsError(f"{path}: cannot be read ({e.strerror or e})") from None
    finally:
        csv.field_size_limit(limit)


def _read_csv(reader: Any, path: Path, column: str, into: str) -> Rows:
    try:
        header = next(reader, None)
        if not header:
            raise GenmetricsError(f"{path}: empty file (a CSV with a header row)")
        dup = sorted({h for h in header if header.count(h) > 1})
        if dup:
            raise GenmetricsError(f"{path}: line 1: column {dup[0]!r} occurs more than once")
        if column not in header:
            raise GenmetricsError(
                f"{path}: no column {column!r} (choose one with --field: "
                f"{', '.join(repr(h) for h in header)})"
            )
        at = {h: header.index(h) for h in (column, *ID_FIELDS) if h in header}
        rows = []
        for values in reader:
            if not values:
                continue  # a blank line
            if len(values) != len(header):
                raise GenmetricsError(
                    f"{path}: line {reader.line_num}: {len(values)} fields, the header has "
                    f"{len(header)}"
                )
            row = {k: values[i] for k, i in at.items() if k != column}
            row[into] = values[at[column]]
            rows.append(row)
    except csv.Error as e:
        raise GenmetricsError(f"{path}: line {reader.line_num}: not valid CSV ({e})") from None
    if not rows:
        raise GenmetricsError(f"{path}: no rows below the header")
    return rows


def check_row_counts(
    metric: Metric,
    params: Mapping[str, Any] | None,
    candidate: str | Path,
    reference: str | Path | None,
) -> None:
    """The metric's ``min_items(params)`` (what the workflow's ``check_sizes`` rule checks)
    against the row counts of the input files (:func:`count_rows`),
    before any file is featurized: ``k=500`` on 300 texts fails at once, not after the
    embedding (the command line checks so where a model will run). Files whose rows cannot be
    counted so (``.npz``, empty files) are checked once loaded."""
    merged = metric.check_params(params or {})
    least, param = metric.min_items(merged)
    if least <= 1:
        return
    paths = {"candidate": candidate} | ({} if reference is None else {"reference": reference})
    counts = {role: count_rows(p) for role, p in paths.items()}
    counts = {role: n for role, n in counts.items() if n}  # an empty file: its loader says so
    short = [role for role, n in counts.items() if n is not None and n < least]
    if not short:
        return
    why = f"{param}={merged[param]} needs" if param in merged else "needs"
    have = ", ".join(f"the {role} has {n}" for role, n in counts.items() if n is not None)
    where = f"{candidate} vs {reference}" if reference is not None else str(candidate)
    raise GenmetricsError(
        f"{where}: {metric.name}: {why} at least {least} texts per set; {have} rows "
        "(counted before any model runs)"
    )
