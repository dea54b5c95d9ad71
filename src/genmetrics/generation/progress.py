"""Progress of a long job that survives its death: finished units in an fsynced log file.

A generate job writes each finished batch of prompts (a *unit*) to a JSONL file outside its
declared outputs (Snakemake deletes the outputs of a failed job, not this file). The first
line names the job's key (a hash of everything that determines the results: settings, model
weights, inputs, code); each further line is one unit ``{"unit": i, "ids": [...], "rows":
[...]}``, appended and fsynced before the next unit starts. A restarted job with the same key
reads the units back and computes only the others; a torn last line (the job was killed while
writing it) is cut off. A file with another key belongs to other settings and is started
afresh. While a job runs it holds an exclusive lock (``flock``) on ``<file>.lock``, so a second
job on the same shard (a controller restarted while the first job still runs) stops at once
with the holder's host, pid and SLURM job id instead of writing the same file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import socket
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError

#: moves bytes (fetches, unpacks, loads or logs pinned content) without deciding a value: code
#: digests do not follow it (:data:`genmetrics.provenance.BOUNDARY_MARK`)
CODE_DIGEST_BOUNDARY = True

_log = logging.getLogger("genmetrics")
FORMAT = 1


class ProgressLog:
    """Finished units of one job (``path=None``: nothing is kept, every unit is computed)."""

    def __init__(self, path: str | Path | None, key: str):
        self.path = Path(path) if path else None
        self.key = key
        self.done: dict[int, list[dict[str, Any]]] = {}
        self._fh: Any = None
        self._lock_fh: Any = None

    # ---------------------------------------------------------------- lifecycle

    def __enter__(self) -> ProgressLog:
        if self.path is None:
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock()
        good = self._read()
        if good == 0:  # nothing usable: a fresh file with our key
            with open(self.path, "w", encoding="utf-8") as f:
                f.write(json.dumps({"key": self.key, "format": FORMAT}) + "\n")
                f.flush()
                os.fsync(f.fileno())
        else:
            with open(self.path, "r+b") as f:  # cut a torn last line
                f.truncate(good)
        self._fh = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 (closed in __exit__)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        if self._lock_fh is not None:
            self._lock_fh.close()  # releases the flock
            self._lock_fh = None

    # ---------------------------------------------------------------- units

    def get(self, unit: int, ids: Sequence[str]) -> list[dict[str, Any]] | None:
        """The rows of ``unit`` if a previous attempt finished it for exactly these ids."""
        rows = self.done.get(unit)
        if rows is None or [r["id"] for r in rows] != list(ids):
            return None
        return rows

    def put(self, unit: int, ids: Sequence[str], rows: Sequence[Mapping[str, Any]]) -> None:
        """Append one finished unit and fsync it (a few ms per batch of a generation job)."""
        self.done[unit] = [dict(r) for r in rows]
        if self._fh is None:
            return
        line = {"unit": unit, "ids": list(ids), "rows": self.done[unit]}
        self._fh.write(json.dumps(line, ensure_ascii=False) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    # ---------------------------------------------------------------- internals

    def _read(self) -> int:
        """Load the units of a file with our key; return the byte length of its good part
        (0: no usable file)."""
        assert self.path is not None
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return 0
        good = 0
        for n, line in enumerate(data.splitlines(keepends=True)):
            if not line.endswith(b"\n"):
                break  # torn: the job died while writing this line
            try:
                obj = json.loads(line)
            except ValueError:
                break
            if n == 0:
                if obj.get("key") != self.key or obj.get("format") != FORMAT:
                    _log.info("progress %s: written for other settings; starting afresh", self.path)
                    return 0
            elif not _valid_unit(obj):
                break
            else:
                self.done[int(obj["unit"])] = obj["rows"]
            good += len(line)
        if self.done:
            _log.info(
                "progress %s: %d unit(s) done by an earlier attempt", self.path, len(self.done)
            )
        return good

    def _lock(self) -> None:
        assert self.path is not None
        self._lock_fh = hold_lock(self.path, "shard")


def hold_lock(path: Path, what: str = "file") -> Any:
    """Take the exclusive ``flock`` on ``<path>.lock`` for this process (written with the
    holder's host, pid and SLURM job) and return the open lock file: closing it releases the
    lock. A second job on the same ``path`` gets a GenmetricsError naming the holder."""
    lock = _lock_path(Path(path))
    lock.parent.mkdir(parents=True, exist_ok=True)
    fh = open(lock, "a+", encoding="utf-8")  # noqa: SIM115 (kept open while the job runs)
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.seek(0)
        holder = fh.read().strip() or "unknown"
        fh.close()
        raise GenmetricsError(
            f"{path}: another job is working on this {what} ({holder}); wait for it or "
            "cancel it (squeue --me; scancel JOBID) before starting this one again"
        ) from None
    fh.seek(0)
    fh.truncate()
    fh.write(_holder() + "\n")
    fh.flush()
    return fh


def _lock_path(path: Path) -> Path:
    return path.with_name(path.name + ".lock")


def _holder() -> str:
    slurm = os.environ.get("SLURM_JOB_ID")
    who = f"host {socket.gethostname()}, pid {os.getpid()}"
    return who + (f", SLURM job {slurm}" if slurm else "")


def _valid_unit(obj: Any) -> bool:
    if not isinstance(obj, dict) or not isinstance(obj.get("unit"), int):
        return False
    ids, rows = obj.get("ids"), obj.get("rows")
    if not isinstance(ids, list) or not isinstance(rows, list) or len(ids) != len(rows):
        return False
    return all(isinstance(r, dict) and r.get("id") == i for r, i in zip(rows, ids, strict=True))


def drop(path: str | Path | None) -> None:
    """Delete a job's progress log and its lock file, once the job's outputs are written."""
    if path is None:
        return
    path = Path(path)
    for p in (path, _lock_path(path)):
        with contextlib.suppress(FileNotFoundError):
            p.unlink()
