"""NPZ feature files: atomic saves and bounded, checked reads.

An ``.npz`` is opened by :class:`NpzReader`, which reads every member's ``.npy`` header
(shape, dtype, order) and checks kinds, ranks, sizes against the zip and the total against
:data:`MAX_NPZ_BYTES` (16 GiB; the environment variable ``GENMETRICS_MAX_NPZ_BYTES``, in
bytes, overrides it) before any array is read. Arrays load with ``allow_pickle=False``.
The feature files built on it: embeddings (``emb`` [N, d]), ragged sequences (``offsets``
[N+1], ``values``) with their ``ids``/``prompt_ids`` links, and the ``provenance`` record
a feature file carries. Writes go through :func:`genmetrics.io.atomic_path`.
"""

from __future__ import annotations

import json
import math
import os
import struct
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.io import PathLike, atomic_path, jsonable, regular_file


def save_npz(path: PathLike, **arrays: np.ndarray) -> None:
    """Save arrays atomically (uncompressed ``.npz``); string arrays are stored as unicode."""
    clean = {}
    for k, v in arrays.items():
        a = np.asarray(v)
        if a.dtype == object:
            a = a.astype(str)
        clean[k] = a
    with atomic_path(path, suffix=".tmp.npz") as tmp:
        np.savez(tmp, **clean)


# ------------------------------------------------------------------ bounded .npz reads

#: the most bytes the arrays read from one ``.npz`` may take in memory, summed from their
#: ``.npy`` headers before any is loaded. The environment variable ``GENMETRICS_MAX_NPZ_BYTES``
#: (an integer number of bytes) overrides it.
MAX_NPZ_BYTES = 16 * 2**30
MAX_NPZ_BYTES_ENV = "GENMETRICS_MAX_NPZ_BYTES"
#: a compressed member larger than 64 MiB may inflate at most this many times (float features
#: hardly compress; a member of zeros that inflates 1000x is a decompression bomb)
MAX_NPZ_INFLATION = 100
_INFLATION_FLOOR = 64 * 2**20
#: the most members an ``.npz`` may list, read from its end record before its directory
MAX_NPZ_MEMBERS = 64
#: how far a dimension may exceed the member's byte count: only arrays of no bytes (a zero
#: dimension, zero-size items) can have such dimensions, and only this small
MAX_EMPTY_DIM = 2**16

_KIND_NAMES = {
    "b": "booleans",
    "i": "integers",
    "u": "unsigned integers",
    "f": "floats",
    "c": "complex numbers",
    "U": "strings",
    "S": "byte strings",
    "O": "Python objects",
    "V": "records",
    "M": "datetimes",
    "m": "timedeltas",
}
_ANY = "biufUS"  # a generic read: never objects or records
_NUMBERS = "iuf"
_LABELS = "iuUS"  # row ids: strings (or integers)


def max_npz_bytes() -> int:
    """The byte limit of one ``.npz`` read: ``GENMETRICS_MAX_NPZ_BYTES`` or :data:`MAX_NPZ_BYTES`."""
    raw = os.environ.get(MAX_NPZ_BYTES_ENV, "").strip()
    if not raw:
        return MAX_NPZ_BYTES
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise GenmetricsError(
            f"{MAX_NPZ_BYTES_ENV}: must be a positive integer (bytes), got {raw!r}"
        )
    return value


@dataclass(frozen=True)
class Member:
    """What one ``.npz`` member must be: dtype kinds (``"iuf"`` numbers, ``"U"`` strings) and
    rank (``None``: any)."""

    kinds: str = _ANY
    ndim: int | None = None


@dataclass(frozen=True)
class NpyHeader:
    """What one ``.npy`` member declares before its data."""

    key: str
    shape: tuple[int, ...]
    dtype: np.dtype
    fortran_order: bool
    nbytes: int


#: the members of an embeddings file and of a surprisal (ragged) file
EMBEDDINGS_NPZ = {
    "emb": Member(_NUMBERS, 2),
    "ids": Member(_LABELS, 1),
    "prompt_ids": Member(_LABELS, 1),
}
SURPRISAL_NPZ = {
    "offsets": Member("iu", 1),
    "values": Member(_NUMBERS, 1),
    "ids": Member(_LABELS, 1),
    "prompt_ids": Member(_LABELS, 1),
}


def _size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} bytes"


def _kinds(kinds: str) -> str:
    return ", ".join(_KIND_NAMES[k] for k in kinds)


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def _zip_entries(path: Path, size: int) -> int:
    """The member count in the zip end record, read from the file's tail (no directory)."""
    if size == 0:
        raise GenmetricsError(f"{path}: not a .npz file (empty)")
    tail_len = min(size, 22 + 65535)  # end record + the longest comment
    with open(path, "rb") as f:
        f.seek(size - tail_len)
        tail = f.read(tail_len)
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) - at < 22:
        raise GenmetricsError(
            f"{path}: not a .npz file (no zip directory: truncated or another format)"
        )
    return int(struct.unpack_from("<H", tail, at + 10)[0])


class NpzReader:
    """An ``.npz`` opened with the header of every wanted member read and checked; no data yet.

    Before any array is read: the file is a zip of at most :data:`MAX_NPZ_MEMBERS` members;
    every ``required`` member is present; each wanted member (``members``, default: all) has a
    ``.npy`` header (format 1.0 or 2.0) of an allowed dtype kind (never objects: arrays load
    with ``allow_pickle=False``) and rank; the member holds the bytes its header declares (a
    small member whose header claims a huge array is refused); a compressed member inflates
    at most :data:`MAX_NPZ_INFLATION` times past 64 MiB; and the declared sizes sum to at most
    :func:`max_npz_bytes`. Errors name the file and the member. Use as a context manager.
    """

    def __init__(
        self,
        path: PathLike,
        members: Mapping[str, Member] | None = None,
        required: Sequence[str] = (),
    ) -> None:
        self.path = regular_file(path)
        self._file_size = self.path.stat().st_size
        entries = _zip_entries(self.path, self._file_size)
        if entries > MAX_NPZ_MEMBERS:
            raise GenmetricsError(
                f"{self.path}: {entries} members, more than the {MAX_NPZ_MEMBERS} an .npz may hold"
            )
        try:
            self._zip = zipfile.ZipFile(self.path)
        except Exception as e:  # BadZipFile, truncated directory, unsupported zip features
            raise GenmetricsError(
                f"{self.path}: not a readable .npz file ({_one_line(e)})"
            ) from None
        try:
            self._infos = {
                (i.filename[:-4] if i.filename.endswith(".npy") else i.filename): i
                for i in self._zip.infolist()
            }
            missing = [k for k in required if k not in self._infos]
            if missing:
                raise GenmetricsError(
                    f"{self.path}: missing array {missing[0]!r} (has {sorted(self._infos)})"
                )
            wanted = dict(members) if members is not None else dict.fromkeys(self._infos, Member())
            self.headers = {
                k: self._header(k, spec) for k, spec in wanted.items() if k in self._infos
            }
            total = sum(h.nbytes for h in self.headers.values())
            limit = max_npz_bytes()
            if total > limit:
                big = max(self.headers.values(), key=lambda h: h.nbytes)
                raise GenmetricsError(
                    f"{self.path}: its arrays take {_size(total)} ('{big.key}' {big.shape} "
                    f"{big.dtype}), above the limit of {_size(limit)} ({MAX_NPZ_BYTES_ENV})"
                )
        except BaseException:
            self._zip.close()
            raise

    def _header(self, key: str, spec: Member) -> NpyHeader:
        where = f"{self.path}: array {key!r}"
        info = self._infos[key]
        fmt = np.lib.format
        try:
            with self._zip.open(info) as f:
                version = fmt.read_magic(f)
                if version == (1, 0):
                    shape, fortran_order, dtype = fmt.read_array_header_1_0(f)
                elif version == (2, 0):
                    shape, fortran_order, dtype = fmt.read_array_header_2_0(f)
                else:
                    raise GenmetricsError(f"{where}: .npy format {version} is not supported")
                offset = f.tell()
        except GenmetricsError:
            raise
        except Exception as e:  # bad magic or header, zip/zlib errors, encrypted member
            raise GenmetricsError(f"{where}: not a readable .npy array ({_one_line(e)})") from None
        if dtype.hasobject or dtype.kind not in spec.kinds:
            kind = _KIND_NAMES.get(dtype.kind, dtype.kind)
            raise GenmetricsError(
                f"{where}: dtype {dtype} ({kind}) is not allowed; expected {_kinds(spec.kinds)}"
            )
        if any(n < 0 for n in shape):
            raise GenmetricsError(f"{where}: negative shape {shape} in its header")
        if spec.ndim is not None and len(shape) != spec.ndim:
            raise GenmetricsError(f"{where}: must be {spec.ndim}-D, got shape {shape}")
        nbytes = math.prod(shape) * dtype.itemsize
        held = info.file_size - offset
        if nbytes > held:
            raise GenmetricsError(
                f"{where}: header declares shape {shape} {dtype} ({_size(nbytes)}) but the "
                f"member holds {_size(max(held, 0))}: truncated or forged"
            )
        # an array of no bytes (a zero dimension, or zero-size items such as <U0) may still
        # declare a huge other dimension: (10**12, 0) would make 10**12 row ids on load
        if shape and max(shape) > max(held, 0) + MAX_EMPTY_DIM:
            raise GenmetricsError(
                f"{where}: header declares shape {shape} {dtype} but the member holds "
                f"{_size(max(held, 0))}: a dimension that large is forged"
            )
        packed = max(1, min(info.compress_size, self._file_size))
        if (
            info.compress_type != zipfile.ZIP_STORED
            and nbytes > _INFLATION_FLOOR
            and nbytes > MAX_NPZ_INFLATION * packed
        ):
            raise GenmetricsError(
                f"{where}: {_size(packed)} compressed inflate to {_size(nbytes)} (more than "
                f"{MAX_NPZ_INFLATION}x): refused as a decompression bomb"
            )
        return NpyHeader(key, tuple(shape), dtype, bool(fortran_order), nbytes)

    def rows(self, key: str) -> int:
        """The leading dimension of member ``key`` (from its header)."""
        shape = self.headers[key].shape
        return shape[0] if shape else 1

    def check_rows(self, keys: Sequence[str], n: int, what: str) -> None:
        """Members ``keys`` that are present must have ``n`` entries (one per ``what``)."""
        for key in keys:
            if key in self.headers and self.rows(key) != n:
                raise GenmetricsError(
                    f"{self.path}: array {key!r} has {self.rows(key)} entries but there are "
                    f"{n} {what}"
                )

    def read(self, key: str) -> np.ndarray:
        """Load member ``key`` (its header already checked), without pickle."""
        try:
            with self._zip.open(self._infos[key]) as f:
                return np.lib.format.read_array(f, allow_pickle=False)
        except Exception as e:  # data shorter than declared, CRC or zlib errors
            raise GenmetricsError(
                f"{self.path}: array {key!r}: cannot be read ({_one_line(e)})"
            ) from None

    def close(self) -> None:
        self._zip.close()

    def __enter__(self) -> NpzReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def load_npz(path: PathLike, required: Sequence[str] = ()) -> dict[str, np.ndarray]:
    """Load every array of an ``.npz`` (numbers or strings, no pickle), bounded and checked
    from the headers first (:class:`NpzReader`); ``required`` arrays must be present."""
    with NpzReader(path, required=required) as z:
        return {k: z.read(k) for k in z.headers}


def _labels(z: NpzReader, key: str) -> np.ndarray:
    a = z.read(key)
    if a.dtype.kind == "S":
        try:
            return np.char.decode(a, "utf-8")
        except UnicodeDecodeError:
            raise GenmetricsError(f"{z.path}: array {key!r}: invalid UTF-8") from None
    return a.astype(str)


def _links(z: NpzReader) -> dict[str, np.ndarray]:
    """``ids`` and ``prompt_ids``, as strings, each when stored: ids are never made up from
    row numbers here, so rows without ids cannot be paired "by id" (by position in disguise)."""
    return {k: _labels(z, k) for k in ("ids", "prompt_ids") if k in z.headers}


def _ids_or_rows(links: Mapping[str, np.ndarray], n: int) -> np.ndarray:
    """The stored ``ids``, else the row numbers (for callers that only label rows)."""
    return links["ids"] if "ids" in links else np.arange(n).astype(str)


def read_embeddings(path: PathLike) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """(links, emb) from an embedding NPZ: ``emb`` numbers [N, d]; links ``ids`` [N] and
    ``prompt_ids`` [N], each when stored. Checked from the headers first."""
    with NpzReader(path, EMBEDDINGS_NPZ, required=("emb",)) as z:
        n = z.rows("emb")
        z.check_rows(("ids", "prompt_ids"), n, "rows in 'emb'")
        return _links(z), z.read("emb")


def read_provenance(path: PathLike) -> dict[str, Any] | None:
    """The ``provenance`` record a feature ``.npz`` carries (a JSON string), or ``None``."""
    with NpzReader(path, {"provenance": Member("U", 0)}) as z:
        if "provenance" not in z.headers:
            return None
        text = str(z.read("provenance"))
    try:
        rec = json.loads(text)
    except (ValueError, RecursionError) as e:  # JSONDecodeError, huge integers, deep nesting
        raise GenmetricsError(
            f"{z.path}: array 'provenance' is not a JSON record ({_one_line(e)})"
        ) from None
    if not isinstance(rec, dict):
        raise GenmetricsError(
            f"{z.path}: array 'provenance' is not a JSON record (a {type(rec).__name__})"
        )
    return rec


def with_provenance(arrays: Mapping[str, Any], rec: Mapping[str, Any]) -> dict[str, Any]:
    """``arrays`` plus ``provenance``: ``rec`` as a 0-d JSON string (no pickle)."""
    return {**arrays, "provenance": np.array(json.dumps(jsonable(rec), sort_keys=True))}


def read_ragged(path: PathLike) -> tuple[dict[str, np.ndarray], list[np.ndarray]]:
    """(links, sequences) from a ragged NPZ: integer ``offsets`` [N+1] from 0 to len(values),
    non-decreasing, and numeric ``values``; links as :func:`read_embeddings`. The offsets are
    checked against the header of ``values`` before ``values`` is loaded."""
    with NpzReader(path, SURPRISAL_NPZ, required=("offsets", "values")) as z:
        n = z.rows("offsets") - 1
        if n < 0:
            raise GenmetricsError(f"{z.path}: array 'offsets' is empty (it holds N+1 positions)")
        z.check_rows(("ids", "prompt_ids"), n, "sequences in 'offsets'")
        n_values = z.rows("values")
        offsets = z.read("offsets")
        if offsets[0] != 0 or offsets[-1] != n_values:
            raise GenmetricsError(
                f"{z.path}: array 'offsets' must start at 0 and end at len(values) = "
                f"{n_values}, got {offsets[0]} ... {offsets[-1]}"
            )
        if np.any(offsets[1:] < offsets[:-1]):
            first = int(np.flatnonzero(offsets[1:] < offsets[:-1])[0]) + 1
            raise GenmetricsError(
                f"{z.path}: array 'offsets' must be non-decreasing (position {first})"
            )
        links = _links(z)
        values = z.read("values")
    cuts = offsets[1:-1].astype(np.int64)
    return links, (np.split(values, cuts) if n else [])


def load_embeddings(path: PathLike) -> tuple[np.ndarray, np.ndarray]:
    """Return (ids, emb) from an embedding NPZ (``ids`` str [N], ``emb`` numbers [N, d])."""
    links, emb = read_embeddings(path)
    return _ids_or_rows(links, emb.shape[0]), emb


def load_ragged(path: PathLike) -> tuple[np.ndarray, list[np.ndarray]]:
    """Return (ids, sequences) from a ragged NPZ (``offsets`` int [N+1], ``values``)."""
    links, seqs = read_ragged(path)
    return _ids_or_rows(links, len(seqs)), seqs


def ragged_to_arrays(seqs: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Pack sequences as (offsets int64 [N+1], values float32)."""
    lengths = np.array([len(s) for s in seqs], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    values = (
        np.concatenate([np.asarray(s, dtype=np.float32) for s in seqs])
        if len(seqs)
        else np.zeros(0, np.float32)
    )
    return offsets, values
