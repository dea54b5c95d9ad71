"""Per-token surprisal stored as JSONL: the ``*.nll_<evaluator>.jsonl`` files of the data
mirror, read as the ``surprisal`` kind (:data:`genmetrics.metrics.kinds.KINDS`) that FACE and
perplexity otherwise read from the workflow's ``.npz`` files.

One row per text: ``id`` (the id of the text in its own file), ``scorer`` (the evaluator
that scored it, e.g. ``gpt2``) and ``nll``, a list of numbers in **nats** with
``nll[i] = -ln p(token[i+1] | token[0..i])``: every token but the first, which nothing
predicts (the surprisal rule's ``prepend: none`` convention; its default start token scores
the first token too). Each row's ``nll`` becomes one surprisal sequence, unchanged and in file
order, with the row's ``id`` (and ``prompt_id``/``source_id`` where a row has them) for
pairing; the values are checked as every surprisal is (finite, not negative:
:func:`genmetrics.metrics.kinds.check_surprisal_values`).

The evaluator is the one the file names: every row's ``scorer`` (one name in the whole file),
else the ``<evaluator>`` of the file name ``*.nll_<evaluator>.jsonl``; the two must agree
where both are given. A score's ``inputs`` record the file, its evaluator and where that name
came from. Two sides of one score must be stored values of one evaluator
(:func:`check_same_evaluator`): surprisal under two models, or computed under another
convention, are not one space.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.io import read_jsonl
from genmetrics.metrics.kinds import check_surprisal_values

#: the fields of a stored row: the per-token values, the evaluator that scored them
NLL_FIELD, SCORER_FIELD = "nll", "scorer"
#: ``<name>.nll_<evaluator>.jsonl``: the evaluator as the file name gives it
FILE_NAME = re.compile(r"\.nll_([^/\\]+)\.jsonl$")
#: what a record's ``inputs`` says such a file is (its ``format``)
FORMAT = "jsonl (stored per-token nll)"

Rows = list[dict[str, Any]]


def holds_stored_surprisal(path: str | Path) -> bool:
    """Whether ``path`` is a ``.jsonl`` file whose first row carries ``nll`` values (a stored
    surprisal file, not texts); any file that cannot be read so is not one."""
    p = Path(path)
    if p.suffix.lower() != ".jsonl" or not p.is_file():
        return False
    try:
        with open(p, "rb") as f:
            for raw in f:
                if raw.strip():
                    row = json.loads(raw)
                    return isinstance(row, dict) and NLL_FIELD in row
    except (OSError, ValueError):
        return False
    return False


def file_evaluator(path: str | Path) -> str | None:
    """The evaluator a file name gives (``face_demo_human.nll_gpt2.jsonl`` → ``gpt2``)."""
    m = FILE_NAME.search(Path(path).name)
    return m.group(1) if m else None


def read_stored_surprisal(path: str | Path, what: str) -> tuple[list[np.ndarray], Rows, dict]:
    """The surprisal sequences (float64, nats) of a stored file, its rows (ids for pairing)
    and what a score record says of it (``path``, ``format``, ``evaluator``: its name, where
    the name came from, the convention, texts and tokens). Errors name the file and row."""
    path = Path(path)
    where = f"{path} ({what})"
    rows = read_jsonl(path, required=("id", NLL_FIELD))
    if not rows:
        raise GenmetricsError(f"{where}: no rows")
    seqs: list[np.ndarray] = []
    for i, row in enumerate(rows, start=1):
        values = row[NLL_FIELD]
        if not isinstance(values, list) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in values
        ):
            raise GenmetricsError(
                f"{where}: row {i} (id={row['id']!r}): {NLL_FIELD!r} must be a list of numbers "
                "(per-token NLL in nats)"
            )
        seqs.append(np.asarray(values, dtype=np.float64))
    ids = [str(r["id"]) for r in rows]
    dup = [x for x, n in Counter(ids).items() if n > 1]
    if dup:
        raise GenmetricsError(f"{where}: id {dup[0]!r} occurs more than once")
    check_surprisal_values(seqs, where, ids)
    keep = ("id", "prompt_id", "source_id")
    out_rows = [{k: (str(r[k]) if k == "id" else r[k]) for k in keep if k in r} for r in rows]
    name, named_by = _evaluator(path, rows, where)
    info = {
        "path": str(path),
        "format": FORMAT,
        "evaluator": {
            "name": name,
            "named_by": named_by,
            "values": "stored per-token NLL (nats), the first token of each text unscored",
            "texts": len(seqs),
            "tokens": int(sum(len(s) for s in seqs)),
        },
    }
    return seqs, out_rows, info


def _evaluator(path: Path, rows: Rows, where: str) -> tuple[str, str]:
    scorers = {str(r[SCORER_FIELD]) for r in rows if r.get(SCORER_FIELD) not in (None, "")}
    if len(scorers) > 1:
        raise GenmetricsError(
            f"{where}: rows name {len(scorers)} scorers ({', '.join(sorted(scorers))}); one "
            "file holds the values of one evaluator"
        )
    if scorers and len(scorers) == 1 and any(SCORER_FIELD not in r for r in rows):
        first = next(i for i, r in enumerate(rows, 1) if SCORER_FIELD not in r)
        raise GenmetricsError(f"{where}: row {first} has no {SCORER_FIELD!r}; the others do")
    by_name = file_evaluator(path)
    if scorers:
        scorer = scorers.pop()
        if by_name is not None and by_name != scorer:
            raise GenmetricsError(
                f"{where}: the file name says evaluator {by_name!r}, its rows' scorer {scorer!r}"
            )
        return scorer, f"the rows' {SCORER_FIELD!r} field"
    if by_name is not None:
        return by_name, "the file name (*.nll_<evaluator>.jsonl)"
    raise GenmetricsError(
        f"{where}: which evaluator scored these values? give each row a {SCORER_FIELD!r} "
        "field, or name the file <name>.nll_<evaluator>.jsonl"
    )


def check_same_evaluator(inputs: Mapping[str, Mapping[str, Any]]) -> None:
    """Both sides of a score are stored values of one evaluator (``inputs``: per role, what
    :func:`read_stored_surprisal` or the command line's loader recorded); else an error
    naming both files. A side computed here (``--evaluator``) or read from an ``.npz`` file
    is refused beside a stored one: its convention (start token, cut) may differ."""
    sides = {r: inputs[r] for r in ("candidate", "reference") if r in inputs}
    stored = {r: i for r, i in sides.items() if i.get("format") == FORMAT}
    if len(sides) < 2 or not stored:
        return
    (ra, a), (rb, b) = sides.items()
    if len(stored) == 1:
        role = next(iter(stored))
        other = rb if role == ra else ra
        raise GenmetricsError(
            f"{sides[role]['path']} ({role}) holds stored per-token values and "
            f"{sides[other]['path']} ({other}) does not: give both sides as stored values of "
            "one evaluator, or both as texts with --evaluator NAME"
        )
    x, y = a["evaluator"]["name"], b["evaluator"]["name"]
    if x != y:
        raise GenmetricsError(
            f"{a['path']} ({ra}) and {b['path']} ({rb}): per-token values of different "
            f"evaluators ({x} and {y}); compare values of one evaluator"
        )
