"""File contracts: JSONL texts and JSON scores; atomic writes and validated reads.

Every write goes to a temporary file in the destination folder and is renamed into place,
so an interrupted job never leaves a partial output; written files follow the umask (shared
folders) and are fsynced. :func:`sweep_stale_tmp` removes the temporary files killed writers
left behind.

Reads are bounded and checked before data is loaded: only regular files are read
(:func:`regular_file`), and JSONL lines are at most :data:`MAX_JSONL_LINE_BYTES`. NPZ feature
files (saved through :func:`atomic_path`, read with their bounds) are in :mod:`genmetrics.npz`.

Every CSV table is written through :func:`write_csv` (or :func:`csv_text`, :func:`csv_writer`),
which escape string cells a spreadsheet would run as a formula (:func:`escape_cell`);
:func:`read_csv` reads such a table back with the cells as they were.
"""

from __future__ import annotations

import contextlib
import csv
import json
import math
import os
import re
import stat
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import numpy as np

from genmetrics import GenmetricsError

if TYPE_CHECKING:  # pandas is imported where a table is written (the CLI starts without it)
    import pandas as pd

PathLike = str | os.PathLike


_UMASK_LOCK = threading.Lock()
# mkstemp names: "." + destination name + "." + 8 random characters + suffix containing ".tmp".
_TMP_RE = re.compile(r"^\..+\.[a-z0-9_]{8}(\.[^.]+)*?\.tmp(\.[^.]+)*$")


def current_umask() -> int:
    """The process umask, read without changing it where ``/proc`` allows (Linux >= 4.7)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:  # fallback: set and restore (other threads may see umask 0 briefly)
        mask = os.umask(0o077)
        os.umask(mask)
    return mask


def _fsync_path(path: Path, directory: bool = False) -> None:
    """fsync a file (or folder) by path; folders on filesystems that refuse it are skipped."""
    flags = os.O_RDONLY | (getattr(os, "O_DIRECTORY", 0) if directory else 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        if directory:
            return
        raise
    try:
        os.fsync(fd)
    except OSError:
        if not directory:
            raise
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_path(
    path: PathLike, suffix: str | None = None, *, durable: bool = True
) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` if the block succeeds.

    The result gets mode ``0o666 & ~umask`` (readable by the group on a shared folder, unlike
    mkstemp's 0600). With ``durable`` the file is fsynced before and its folder after the
    rename. On any exception (KeyboardInterrupt included) the temporary file is removed and
    ``path`` is left as it was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.", suffix=suffix or "".join(path.suffixes) + ".tmp"
    )
    tmp_path = Path(tmp)
    done = False
    try:
        os.close(fd)
        yield tmp_path
        # the block may have replaced the file (np.savez, to_csv): fix mode and sync by path
        os.chmod(tmp_path, 0o666 & ~current_umask())
        if durable:
            _fsync_path(tmp_path)
        os.replace(tmp_path, path)
        done = True
        if durable:
            _fsync_path(path.parent, directory=True)
    finally:
        if not done:
            with contextlib.suppress(OSError):
                tmp_path.unlink()


def is_temp_name(name: str) -> bool:
    """True for names of temporary files left by :func:`atomic_path`."""
    return bool(_TMP_RE.match(name))


def sweep_stale_tmp(folder: PathLike, older_than_s: float = 3600, recursive: bool = False) -> int:
    """Delete temporary files of :func:`atomic_path` (``.<name>.XXXXXXXX[...].tmp[...]``) older
    than ``older_than_s`` seconds, left by killed writers; return how many were removed."""
    folder = Path(folder)
    if not folder.is_dir():
        return 0
    cutoff = time.time() - older_than_s
    removed = 0
    for p in folder.rglob(".*") if recursive else folder.glob(".*"):
        if not is_temp_name(p.name):
            continue
        try:
            st = p.lstat()
            if not stat.S_ISREG(st.st_mode) or st.st_mtime > cutoff:
                continue
            p.unlink()
            removed += 1
        except OSError:  # gone already (another sweeper, the writer), or another user's file
            continue

    return removed


def write_text(path: PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_json(path: PathLike, obj: Any) -> None:
    write_text(path, json.dumps(jsonable(obj), indent=2, ensure_ascii=False, allow_nan=True) + "\n")


def read_json(path: PathLike) -> Any:
    """A JSON file (records, manifests); every failure is one line naming the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise GenmetricsError(f"{path}: file not found") from None
    except IsADirectoryError:
        raise GenmetricsError(f"{path}: is a folder, not a JSON file") from None
    except UnicodeDecodeError as e:
        raise GenmetricsError(f"{path}: invalid UTF-8 at byte {e.start}") from None
    except OSError as e:
        raise GenmetricsError(f"{path}: cannot read ({e.strerror or e})") from None
    return _loads(text, path)


def write_jsonl(path: PathLike, rows: Iterable[Mapping[str, Any]]) -> int:
    """Write rows atomically, one JSON object per line; return the number of rows. NaN is
    written as ``null``; an infinity is an error (``read_jsonl`` refuses the non-standard
    ``Infinity``, so a file this writes can always be read back)."""
    n = 0
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as f:
        for row in rows:
            try:
                line = json.dumps(jsonable(row), ensure_ascii=False, allow_nan=False)
            except ValueError:
                raise GenmetricsError(
                    f"{path}: row {n + 1}: an infinite number cannot be written to JSONL"
                ) from None
            f.write(line + "\n")
            n += 1
    return n


#: the longest JSONL line read (bytes); a longer line is refused, not read into memory
MAX_JSONL_LINE_BYTES = 64 * 2**20


def regular_file(path: PathLike, what: str = "") -> Path:
    """``path`` as a Path if it is an existing regular file (or a link to one); else an error
    naming it: missing, a directory, or something that cannot be read to its end (a FIFO, a
    device such as /dev/zero)."""
    path = Path(path)
    label = f"{path}: {what} " if what else f"{path}: "
    try:
        st = path.stat()
    except FileNotFoundError:
        raise GenmetricsError(f"{path}: file not found") from None
    except OSError as e:
        raise GenmetricsError(f"{label}cannot be read ({e.strerror or e})") from None
    if stat.S_ISDIR(st.st_mode):
        raise GenmetricsError(f"{label}is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise GenmetricsError(f"{label}is not a regular file (a FIFO or a device?)")
    return path


#: the fields that name or link a row; each must be a string or an integer where present
ID_FIELDS = ("id", "prompt_id", "source_id")


class _NonStandard(Exception):
    """A ``NaN``/``Infinity``/``-Infinity`` constant, which is not JSON (Python writes it)."""


def _refuse_constant(name: str) -> Any:
    raise _NonStandard(name)


def parse_json_line(line: str, path: PathLike, lineno: int) -> Any:
    """One line of JSON, strictly: the non-standard constants ``NaN``, ``Infinity`` and
    ``-Infinity`` (which Python's json writes and reads by default) are refused, naming the
    file and line, so a NaN id never becomes the string ``"nan"``."""
    return _loads(line, path, lineno)


def _loads(text: str, path: PathLike, lineno: int | None = None) -> Any:
    """``json.loads`` with every failure one ``GenmetricsError`` naming the file and line:
    ``lineno`` is that of one JSONL line (strict: ``NaN``/``Infinity`` refused); without it
    ``text`` is a whole JSON file (the parser's line is given)."""
    where = f"{path}: line {lineno}" if lineno is not None else str(path)
    try:
        return json.loads(text, parse_constant=_refuse_constant if lineno is not None else None)
    except _NonStandard as e:
        raise GenmetricsError(
            f"{where}: {e} is not valid JSON (write null, a number or a string)"
        ) from None
    except json.JSONDecodeError as e:
        line = "" if lineno is not None else f": line {e.lineno}"
        raise GenmetricsError(f"{where}{line}: invalid JSON ({e.msg})") from None
    except RecursionError:
        raise GenmetricsError(f"{where}: JSON nested too deeply") from None
    except ValueError as e:  # an integer of more than 4300 digits (int-from-string limit)
        msg = " ".join(str(e).split())[:200]
        raise GenmetricsError(f"{where}: invalid JSON ({msg})") from None


def check_ids(
    row: Mapping[str, Any], path: PathLike, lineno: int, fields: Sequence[str] = ID_FIELDS
) -> None:
    """Each of ``fields`` present in ``row`` is a string or an integer (not a float, a bool,
    null or a list: ``1.0`` and ``"1"`` would be paired by their printed form)."""
    for key in fields:
        if key in row:
            v = row[key]
            if isinstance(v, bool) or not isinstance(v, (str, int)):
                shown = repr(v) if len(repr(v)) <= 40 else repr(v)[:37] + "..."
                raise GenmetricsError(
                    f"{path}: line {lineno}: {key!r} must be a string or an integer, "
                    f"got {type(v).__name__} {shown}"
                )


def read_jsonl(
    path: PathLike, required: Sequence[str] = (), ids: Sequence[str] = ID_FIELDS
) -> list[dict[str, Any]]:
    """Read a JSONL file strictly: UTF-8, one object per line, ``required`` keys present,
    the ``ids`` fields strings or integers where present (:func:`check_ids`); no ``NaN`` or
    ``Infinity`` (:func:`parse_json_line`).

    Errors name the file and the 1-based line. Blank lines are skipped; a line longer than
    :data:`MAX_JSONL_LINE_BYTES` is refused before it is read whole.
    """
    path = regular_file(path)
    rows: list[dict[str, Any]] = []
    try:
        f = open(path, "rb")
    except OSError as e:
        raise GenmetricsError(f"{path}: cannot be read ({e.strerror or e})") from None
    with f:
        lineno = 0
        while raw := f.readline(MAX_JSONL_LINE_BYTES + 1):
            lineno += 1
            if len(raw) > MAX_JSONL_LINE_BYTES:
                raise GenmetricsError(
                    f"{path}: line {lineno}: longer than {MAX_JSONL_LINE_BYTES} bytes"
                )
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise GenmetricsError(
                    f"{path}: line {lineno}: invalid UTF-8 at byte {e.start}"
                ) from None
            if not line.strip():
                continue
            row = parse_json_line(line, path, lineno)
            if not isinstance(row, dict):
                raise GenmetricsError(f"{path}: line {lineno}: expected a JSON object")
            for key in required:
                if key not in row:
                    raise GenmetricsError(f"{path}: line {lineno}: missing field {key!r}")
            check_ids(row, path, lineno, ids)
            rows.append(row)
    return rows


def read_texts(
    path: PathLike, field: str = "text", allow_empty: bool = False
) -> list[dict[str, Any]]:
    """Read JSONL rows that carry a text in ``field``; reject empty or whitespace-only texts."""
    rows = read_jsonl(path, required=(field,))
    for i, row in enumerate(rows, start=1):
        text = row[field]
        if not isinstance(text, str):
            raise GenmetricsError(f"{path}: row {i}: field {field!r} is not a string")
        if not allow_empty and not text.strip():
            raise GenmetricsError(
                f"{path}: row {i} (id={row.get('id')!r}): empty or whitespace-only text"
            )
    return rows


def jsonable(obj: Any) -> Any:
    """``obj`` as plain JSON values: mappings (string keys), lists, numbers, strings; numpy
    arrays and scalars unwrapped, NaN as ``null`` (infinities kept), paths as strings."""
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        return jsonable(obj.item())
    if isinstance(obj, float) and not math.isfinite(obj):
        return None if math.isnan(obj) else obj
    if isinstance(obj, Path):
        return str(obj)
    return obj


# ------------------------------------------------------------------ CSV tables

#: first characters that make a spreadsheet read a cell as a formula (OWASP "CSV injection":
#: ``=``, ``+``, ``-``, ``@``, tab, carriage return)
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
# a cell to escape: any quotes, then a formula start (a cell escaped before gets one more
# quote, so that read_csv gives back exactly the cell written)
_FORMULA = re.compile(r"'*[=+\-@\t\r]")
_ESCAPED = re.compile(r"'+[=+\-@\t\r]")
# a plain decimal number ("-0.5", "+3", "-1e-05"), which a spreadsheet reads as that number
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def escape_cell(value: Any) -> Any:
    """``value`` as a CSV cell no spreadsheet runs as a formula: a string starting with one of
    :data:`FORMULA_STARTS` (after any single quotes) gets a single quote in front, as OWASP
    advises (``=HYPERLINK(...)`` → ``'=HYPERLINK(...)``); a string that is a plain decimal
    number (``-0.5``) and every non-string (numbers stay numbers) are returned as they are."""
    if not isinstance(value, str):
        return value
    if _FORMULA.match(value) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def unescape_cell(value: Any) -> Any:
    """The inverse of :func:`escape_cell`: ``unescape_cell(escape_cell(s)) == s``."""
    if isinstance(value, str) and _ESCAPED.match(value):
        return value[1:]
    return value


def _label(value: Any) -> Any:
    """A column or index label as written: strings escaped, other labels as they are."""
    return escape_cell(value) if isinstance(value, str) else value


def _safe_values(values: pd.Series) -> pd.Series:
    """A column's cells escaped: strings (and objects, as they print) that would be formulas."""
    import pandas as pd

    if pd.api.types.is_numeric_dtype(values.dtype) or pd.api.types.is_bool_dtype(values.dtype):
        return values  # numbers stay numbers: -0.5 and -inf are written as numbers

    def cell(v: Any) -> Any:
        if isinstance(v, str):
            return escape_cell(v)
        if v is None or isinstance(v, (bool, int, float, np.generic)) or v is pd.NA:
            return v
        text = str(v)  # a list, a path, another object: escaped as the CSV prints it
        escaped = escape_cell(text)
        return escaped if escaped != text else v

    return values.astype(object).map(cell)


def csv_safe(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose string cells, column labels and index labels are escaped
    (:func:`escape_cell`); numeric columns are kept as they are."""
    out = df.copy()
    for i in range(out.shape[1]):
        out.isetitem(i, _safe_values(out.iloc[:, i]))
    out = out.rename(columns=_label)
    if not _is_numbers(out.index):
        out = out.rename(index=_label)
    out.columns = out.columns.set_names([_label(n) for n in out.columns.names])
    out.index = out.index.set_names([_label(n) for n in out.index.names])
    return out


def _is_numbers(index: pd.Index) -> bool:
    import pandas as pd

    return not isinstance(index, pd.MultiIndex) and pd.api.types.is_numeric_dtype(index.dtype)


def _line_end(df: pd.DataFrame, index: bool) -> str:
    """``"\n"``, or ``"\r\n"`` where a string cell or label holds a carriage return: the
    csv module quotes a cell only for the characters of the line end, and an unquoted CR
    splits the row for every reader."""
    labels = [*df.columns.to_flat_index(), *df.columns.names]
    if index:
        labels += [*df.index.to_flat_index(), *df.index.names]
    cells = (v for col in df.columns for v in df[col] if isinstance(v, str))
    for v in (*labels, *cells):
        texts = v if isinstance(v, tuple) else (v,)
        if any(isinstance(t, str) and "\r" in t for t in texts):
            return "\r\n"
    return "\n"


def _to_csv(df: pd.DataFrame, target: Any, index: bool) -> str | None:
    safe = csv_safe(df)
    return safe.to_csv(target, index=index, lineterminator=_line_end(safe, index))


def csv_text(df: pd.DataFrame, *, index: bool = False) -> str:
    """``df`` as CSV text, cells escaped (:func:`csv_safe`); lines end in ``\n`` (``\r\n``
    where a cell holds a carriage return, so that it is quoted)."""
    text = _to_csv(df, None, index)
    assert text is not None
    return text


def write_csv(path: PathLike, df: pd.DataFrame, *, index: bool = False) -> None:
    """Write ``df`` as a CSV table atomically (:func:`atomic_path`) as :func:`csv_text` writes
    it: every table of the workflow is written here."""
    with atomic_path(path) as tmp:
        _to_csv(df, tmp, index)


def read_csv(path: PathLike, **kwargs: Any) -> pd.DataFrame:
    """A table written by :func:`write_csv`, its string cells and labels unescaped
    (``pandas.read_csv`` with ``kwargs``)."""
    import pandas as pd

    df = pd.read_csv(path, **kwargs)
    for i in range(df.shape[1]):
        col = df.iloc[:, i]
        if _text_dtype(col.dtype):
            df.isetitem(i, col.map(unescape_cell))
    df = df.rename(columns=unescape_cell)
    if _text_dtype(df.index.dtype):  # index_col given
        df = df.rename(index=unescape_cell)
    df.index = df.index.set_names([unescape_cell(n) for n in df.index.names])
    return df


def _text_dtype(dtype: Any) -> bool:
    """Whether a column of ``dtype`` may hold strings (object, or pandas' string dtype)."""
    import pandas as pd

    return pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype)


class CsvWriter:
    """``csv.writer`` whose string cells are escaped (:func:`escape_cell`)."""

    def __init__(self, f: IO[str], **kwargs: Any) -> None:
        self._writer = csv.writer(f, **kwargs)

    def writerow(self, row: Iterable[Any]) -> Any:
        return self._writer.writerow([escape_cell(v) for v in row])

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        for row in rows:
            self.writerow(row)


def csv_writer(f: IO[str], **kwargs: Any) -> CsvWriter:
    """A CSV writer on the open file ``f`` (``csv.writer``'s ``kwargs``) that escapes string
    cells (:func:`escape_cell`), for tables written row by row."""
    return CsvWriter(f, **kwargs)
