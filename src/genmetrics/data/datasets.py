"""Read raw datasets (JSONL, TXT, CSV, a folder of text files, HF datasets) into uniform rows.

Every row is ``{"id": str, "text": str, **labels}``. Errors name the file and line.
:func:`import_texts` reads texts that already exist (another system's outputs, a labelled
human subset) as a model's generations.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.data.clean import clean_rows
from genmetrics.data.mirror import check_rows, resolve_source
from genmetrics.data.sources import check_hub_revision
from genmetrics.io import check_ids, parse_json_line, regular_file

FORMATS = ("jsonl", "txt", "csv", "folder", "hub")


def load_dataset(
    name: str, spec: Mapping[str, Any], cache: Path | None = None, key: str | None = None
) -> list[dict[str, Any]]:
    """Fetch and read dataset ``name`` as configured under ``datasets.<name>`` (or ``key``)."""
    key = key or f"datasets.{name}"
    source = spec.get("source")
    if not isinstance(source, Mapping):
        raise GenmetricsError(f"{key}.source: required (a mapping with 'kind')")
    fmt = spec.get("format") or _guess_format(source)
    if fmt not in FORMATS:
        raise GenmetricsError(f"{key}.format: must be one of {FORMATS}, got {fmt!r}")
    text_field = spec.get("text_field", "text")
    id_field = spec.get("id_field", "id")
    labels = list(spec.get("label_fields", []))
    if fmt == "hub":
        return _read_hub(source, spec, key, text_field, id_field, labels)
    path = resolve_source(source, cache, f"{key}.source")
    if fmt == "folder":
        if not path.is_dir():
            raise GenmetricsError(
                f"{key}.source: {path} is not a folder (format folder reads a folder of text "
                "files; set format: for a file)"
            )
        return _read_folder(path, spec, key)
    if path.is_dir():
        how = "format" if spec.get("format") else "its suffix says"
        raise GenmetricsError(
            f"{key}.source: {path} is a folder, but {how} {fmt!r} (a file); set format: folder "
            "to read a folder of text files"
        )
    regular_file(path, f"{key}.source")
    if fmt == "jsonl":
        rows = _read_jsonl(path, text_field, id_field, labels)
        if source.get("kind") == "upstream":  # the mirror's copy or the rows made upstream
            check_rows(source, len(rows), path, f"{key}.source")
        return rows
    if fmt == "txt":
        return _read_txt(path)
    return _read_csv(path, text_field, id_field, labels)


def import_texts(
    name: str,
    spec: Mapping[str, Any],
    seed: int,
    cache: Path | None = None,
    prompt_ids: set[str] | None = None,
    exclude_prompt_ids: set[str] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, int]]:
    """Read ``models.<name>.texts`` as the generations of one seed: cleaned, filtered and
    sampled with ``seed`` (so seeds resample the texts), in the generation row format
    ``{"id", "text", "prompt_id", "n_tokens": None, "finish_reason": "imported", ...labels}``.

    ``prompt_id`` is the row's ``prompt_id_field`` when the spec names one, else its id. Rows
    whose file gives no id (a txt file, or no ``id_field``) get ids ``line<N>`` and no
    ``prompt_id``: line numbers never tie them to the references (a paired metric then refuses
    them, and ``match_references`` needs an id).
    ``prompt_ids`` (``match_references``: the dataset's reference ids) keeps only the rows
    whose prompt id is one of them, before cleaning; the stats count the others in
    ``not_in_references``. ``exclude_prompt_ids`` (``exclude_references``) keeps only the
    others: the stats count the rows dropped in ``in_references``. Returns (rows, cleaning
    stats).
    """
    if prompt_ids is not None and exclude_prompt_ids is not None:
        raise GenmetricsError(
            f"models.{name}.texts: match_references and exclude_references exclude each other"
        )
    key = f"models.{name}.texts"
    pid = spec.get("prompt_id_field")
    rows_have_ids = True
    if pid:
        spec = {**spec, "label_fields": list(dict.fromkeys([*spec.get("label_fields", []), pid]))}
    rows = load_dataset(name, spec, cache, key=key)
    if not pid and any(r.get(SYNTHETIC_ID) for r in rows):
        # ids made from line numbers would pair these texts with the references by position
        rows_have_ids = False
        if prompt_ids is not None:
            raise GenmetricsError(
                f"{key}.match_references: the texts have no {spec.get('id_field', 'id')!r} "
                "field, so nothing ties them to the references; set texts.id_field or "
                "texts.prompt_id_field"
            )
        rows = [{**r, "id": f"line{r['id']}"} for r in rows]
    dropped = 0
    if prompt_ids is not None:
        n = len(rows)
        rows = [r for r in rows if str(r[pid] if pid else r["id"]) in prompt_ids]
        dropped = n - len(rows)
        if not rows:
            raise GenmetricsError(
                f"{key}.match_references: none of {n} texts has a prompt id among the "
                f"dataset's {len(prompt_ids)} references"
            )
    apart = 0
    if exclude_prompt_ids is not None:
        if rows_have_ids is False:
            raise GenmetricsError(
                f"{key}.exclude_references: the texts have no {spec.get('id_field', 'id')!r} "
                "field, so nothing ties them to the references; set texts.id_field or "
                "texts.prompt_id_field"
            )
        n = len(rows)
        rows = [r for r in rows if str(r[pid] if pid else r["id"]) not in exclude_prompt_ids]
        apart = n - len(rows)
    kept, stats = clean_rows(rows, {**spec.get("clean", {}), "seed": int(seed)}, where=key)
    if prompt_ids is not None:
        stats = {**stats, "not_in_references": dropped}
    if exclude_prompt_ids is not None:
        stats = {**stats, "in_references": apart}
    out = [
        {
            **r,
            **({"prompt_id": str(r[pid]) if pid else r["id"]} if rows_have_ids else {}),
            "n_tokens": None,
            "finish_reason": "imported",
        }
        for r in kept
    ]
    return out, stats


#: the private key of a row whose id was made from its line number (no id in the file)
SYNTHETIC_ID = "_id_from_line"


def _guess_format(source: Mapping[str, Any]) -> str:
    if source.get("kind") == "hub":
        return "hub"
    p = str(source.get("path", ""))
    for ext, fmt in ((".jsonl", "jsonl"), (".json", "jsonl"), (".txt", "txt"), (".csv", "csv")):
        if p.endswith(ext):
            return fmt
    return "folder"


def _decode_lines(path: Path):
    """(line number, line) of a UTF-8 file; a leading BOM is dropped, CRLF ends are kept."""
    try:
        f = open(path, "rb")
    except OSError as e:
        raise GenmetricsError(f"{path}: cannot be read ({e.strerror or e})") from None
    with f:
        for lineno, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as e:
                raise GenmetricsError(
                    f"{path}: line {lineno}: invalid UTF-8 at byte {e.start}"
                ) from None
            yield lineno, line


def _read_jsonl(
    path: Path, text_field: str, id_field: str, labels: list[str]
) -> list[dict[str, Any]]:
    rows = []
    for lineno, line in _decode_lines(path):
        if not line.strip():
            continue
        obj = parse_json_line(line, path, lineno)
        if isinstance(obj, dict):
            check_ids(obj, path, lineno, (id_field,))
        if not isinstance(obj, dict) or text_field not in obj:
            raise GenmetricsError(f"{path}: line {lineno}: missing text field {text_field!r}")
        if not isinstance(obj[text_field], str):
            raise GenmetricsError(f"{path}: line {lineno}: field {text_field!r} is not a string")
        row = {"id": str(obj.get(id_field, lineno)), "text": obj[text_field], "_line": lineno}
        if id_field not in obj:
            row[SYNTHETIC_ID] = True
        for lab in labels:
            if lab not in obj:
                raise GenmetricsError(f"{path}: line {lineno}: missing label field {lab!r}")
            row[lab] = obj[lab]
        rows.append(row)
    return rows


def _read_txt(path: Path) -> list[dict[str, Any]]:
    """One text per line, without its line end (one ``\n`` or ``\r\n``: a ``\r`` that is
    part of the text stays)."""
    return [
        {"id": str(lineno), "text": _line_end_dropped(line), "_line": lineno, SYNTHETIC_ID: True}
        for lineno, line in _decode_lines(path)
    ]


def _line_end_dropped(line: str) -> str:
    if line.endswith("\n"):
        line = line[:-1]
        if line.endswith("\r"):
            line = line[:-1]
    return line


def _read_csv(
    path: Path, text_field: str, id_field: str, labels: list[str]
) -> list[dict[str, Any]]:
    """Rows of a CSV file (UTF-8, a leading BOM allowed); ``_line`` is the physical line where
    a record starts (a quoted field may span lines). Errors name the file and that line."""
    line = 1
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            reader = csv.DictReader(f)
            if reader.fieldnames is None or text_field not in reader.fieldnames:
                raise GenmetricsError(f"{path}: line 1: no column {text_field!r} in the header")
            rows = []
            n = 0
            while True:
                line = reader.line_num + 1
                rec = next(reader, None)
                if rec is None:
                    return rows
                n += 1
                row = {
                    "id": str(rec.get(id_field) or n),
                    SYNTHETIC_ID: not rec.get(id_field),
                    "text": rec[text_field] or "",
                    "_line": line,
                }
                for lab in labels:
                    row[lab] = rec.get(lab)
                rows.append(row)
    except UnicodeDecodeError as e:
        raise GenmetricsError(f"{path}: invalid UTF-8 at byte {e.start}") from None
    except csv.Error as e:  # a field above csv.field_size_limit(), a NUL in old Pythons
        raise GenmetricsError(f"{path}: line {line}: not valid CSV ({e})") from None
    except OSError as e:
        raise GenmetricsError(f"{path}: cannot be read ({e.strerror or e})") from None


def _read_folder(path: Path, spec: Mapping[str, Any], key: str) -> list[dict[str, Any]]:
    """Each ``*.txt`` file is one text; its parent folder name (relative to ``path``) is the label.

    ``title_line: drop`` removes the first line (BBC News files start with the headline).
    """
    pattern = spec.get("glob", "**/*.txt")
    label_name = spec.get("folder_label", "label")
    drop_title = spec.get("title_line", "keep") == "drop"
    files = sorted(p for p in path.glob(pattern) if p.is_file())
    if not files:
        raise GenmetricsError(f"{key}: no files match {pattern!r} in {path}")
    rows = []
    for p in files:
        try:
            raw = p.read_bytes()
        except OSError as e:
            raise GenmetricsError(f"{p}: cannot be read ({e.strerror or e})") from None
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("latin-1")  # BBC News files are latin-1
        if drop_title:
            text = text.split("\n", 1)[1] if "\n" in text else ""
        rel = p.relative_to(path)
        row: dict[str, Any] = {"id": str(rel.with_suffix("")), "text": text, "_file": str(p)}
        if len(rel.parts) > 1:
            row[label_name] = rel.parts[0]
        rows.append(row)
    return rows


def _read_hub(
    source: Mapping[str, Any],
    spec: Mapping[str, Any],
    key: str,
    text_field: str,
    id_field: str,
    labels: list[str],
) -> list[dict[str, Any]]:
    try:
        import datasets as hf_datasets
    except ImportError:
        raise GenmetricsError(
            f"{key}: a hub dataset needs the 'datasets' package (pip install datasets)"
        ) from None
    check_hub_revision(source["repo"], source.get("revision"), f"{key}.source")
    try:
        ds = hf_datasets.load_dataset(
            source["repo"],
            source.get("config"),
            split=source.get("split", "train"),
            revision=source.get("revision"),
        )
    except Exception as e:
        raise GenmetricsError(
            f"{key}.source: loading {source.get('repo')!r} failed ({e})"
        ) from None
    rows = []
    for i, rec in enumerate(ds):
        row = {"id": str(rec.get(id_field, i)), "text": rec[text_field]}
        if id_field not in rec:
            row[SYNTHETIC_ID] = True
        for lab in labels:
            row[lab] = rec.get(lab)
        rows.append(row)
    return rows
