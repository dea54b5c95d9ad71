"""The annotation CSV of OmniInput samples: out for raters (or with an annotator's scores),
scores read back, and r(z) per bin.

Every bin b of a Wang–Landau run keeps representative samples (``WLResult.samples[b]``, an
int64 array (k_b, L) of token ids). Each sample gets a score s ∈ [0, 1] (1 = the sample is
what the model should output / a good text), and r(z_b) = (1/n_b) Σ s over the n_b scored
samples of bin b (NaN when n_b = 0), which :func:`~genmetrics.omniinput.curves.
precision_recall_curve` turns into precision and recall.

* :func:`export_samples` writes one CSV row per sample, columns :data:`COLUMNS`
  (``bin, z_low, z_high, sample, z, tokens, text, score``); a rater fills ``score``, or an
  automatic annotator's scores (:mod:`genmetrics.omniinput.annotate`) fill it.
* :func:`read_annotations` reads either CSV back; it and the automatic path both compute r
  with :func:`r_from_scores`.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.io import PathLike, atomic_path, csv_writer, regular_file
from genmetrics.omniinput.density import Bins

#: the columns of an annotation CSV, in order
COLUMNS = ("bin", "z_low", "z_high", "sample", "z", "tokens", "text", "score")
#: columns :func:`read_annotations` needs
REQUIRED_COLUMNS = ("bin", "score")
#: bin edges in a CSV must match ``bins.edges`` within this relative tolerance
EDGE_RTOL = 1e-9
#: how many missing bins a :func:`read_annotations` error lists
_LIST_MISSING = 5


@dataclass
class Annotations:
    """Scores read back per bin: ``r`` (n_bins,) mean score (NaN where ``counts`` is 0),
    ``counts`` (n_bins,) int64 number of scored samples, ``scores`` one float64 array per bin."""

    r: np.ndarray
    counts: np.ndarray
    scores: list[np.ndarray]


def check_scores(scores: Any, n: int, what: str) -> np.ndarray:
    """``scores`` as float64 (n,), finite and in [0, 1]; else an error naming ``what``."""
    try:
        s = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise GenmetricsError(f"{what}: scores are not numbers ({e})") from None
    if s.shape != (n,):
        raise GenmetricsError(f"{what}: expected {n} scores (shape ({n},)), got shape {s.shape}")
    bad = np.flatnonzero(~np.isfinite(s) | (s < 0) | (s > 1))
    if len(bad):
        i = int(bad[0])
        raise GenmetricsError(
            f"{what}: score {i} is {float(s[i])!r}; every score must be a finite number in [0, 1] "
            f"({len(bad)} such scores)"
        )
    return s


def r_from_scores(scores: Sequence[np.ndarray], n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """(r, counts) from one score array per bin: r_b = mean of bin b's scores (float64, NaN
    for a bin without scores), counts_b = how many (int64). Scores must be in [0, 1]."""
    if len(scores) != n_bins:
        raise GenmetricsError(f"r_from_scores: {len(scores)} score arrays for {n_bins} bins")
    r = np.full(n_bins, np.nan)
    counts = np.zeros(n_bins, np.int64)
    for b, s in enumerate(scores):
        s = np.asarray(s, dtype=np.float64)
        if s.ndim != 1:
            raise GenmetricsError(f"r_from_scores: bin {b}: scores must be 1-D, got {s.shape}")
        s = check_scores(s, s.size, f"r_from_scores: bin {b}")
        counts[b] = s.size
        if s.size:
            r[b] = float(s.mean())
    return r, counts


def bin_samples(samples: Sequence[np.ndarray], n_bins: int) -> list[np.ndarray]:
    """One int64 array (k, L) of token ids per bin (an empty bin: (0, L) or (0, 0)); else an
    error naming the bin."""
    if len(samples) != n_bins:
        raise GenmetricsError(f"samples: {len(samples)} arrays for {n_bins} bins (one per bin)")
    out = []
    for b, s in enumerate(samples):
        s = np.asarray(s)
        if s.size == 0:
            out.append(np.zeros((0, s.shape[-1] if s.ndim == 2 else 0), np.int64))
            continue
        if s.ndim != 2 or s.dtype.kind not in "iu":
            raise GenmetricsError(
                f"samples: bin {b}: expected integer token ids of shape (k, L), got "
                f"{s.dtype} {s.shape}"
            )
        out.append(s.astype(np.int64, copy=False))
    return out


def _per_bin(values: Sequence[np.ndarray] | None, samples: list[np.ndarray], name: str):
    if values is None:
        return None
    if len(values) != len(samples):
        raise GenmetricsError(f"{name}: {len(values)} arrays for {len(samples)} bins")
    out = []
    for b, (v, s) in enumerate(zip(values, samples, strict=True)):
        v = np.asarray(v, dtype=np.float64)
        if v.size == 0:
            v = v.reshape(0)  # an empty bin's array may be (0,) or (0, 1)
        if name == "scores":
            out.append(check_scores(v, len(s), f"scores: bin {b}"))
            continue
        if v.shape != (len(s),):
            raise GenmetricsError(
                f"{name}: bin {b}: expected shape ({len(s)},) (one per sample), got {v.shape}"
            )
        out.append(v)
    return out


def export_samples(
    path: PathLike,
    samples: Sequence[np.ndarray],
    bins: Bins,
    z: Sequence[np.ndarray] | None = None,
    decode: Callable[[np.ndarray], str] | None = None,
    scores: Sequence[np.ndarray] | None = None,
) -> int:
    """Write the samples as a CSV for raters (atomically, UTF-8, header :data:`COLUMNS`).

    One row per sample: ``bin`` index, its edges ``z_low``/``z_high`` (``repr`` floats, exact),
    ``sample`` index within the bin, the sample's own output ``z`` (empty without ``z``),
    ``tokens`` (ids separated by spaces), ``text`` (``decode(tokens)``; empty without
    ``decode``) and ``score`` (empty for a rater to fill, or ``scores[b][i]``). Bins without
    samples write no rows. Returns the number of rows written.
    """
    samp = bin_samples(samples, bins.n)
    zs = _per_bin(z, samp, "z")
    sc = _per_bin(scores, samp, "scores")
    edges = bins.edges
    rows = 0
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as f:
        w = csv_writer(f)  # the text escaped where a spreadsheet would run it as a formula
        w.writerow(COLUMNS)
        for b, s in enumerate(samp):
            lo, hi = float(edges[b]), float(edges[b + 1])  # written as repr: exact
            for i, toks in enumerate(s):
                text = ""
                if decode is not None:
                    text = decode(toks)
                    if not isinstance(text, str):
                        raise GenmetricsError(
                            f"decode returned {type(text).__name__}, not str (bin {b}, sample {i})"
                        )
                w.writerow(
                    [
                        b,
                        lo,
                        hi,
                        i,
                        "" if zs is None else float(zs[b][i]),
                        " ".join(str(int(t)) for t in toks),
                        text,
                        "" if sc is None else float(sc[b][i]),
                    ]
                )
                rows += 1
    return rows


def _float(cell: str) -> float | None:
    try:
        return float(cell)
    except ValueError:
        return None


def _int(cell: str) -> int | None:
    try:
        return int(cell)
    except ValueError:
        v = _float(cell)  # "3.0" from a spreadsheet
        return int(v) if v is not None and v.is_integer() else None


def read_annotations(
    path: PathLike,
    bins: Bins,
    populated: np.ndarray | None = None,
    allow_missing: bool = False,
) -> Annotations:
    """Read a scored CSV of :func:`export_samples` (by a rater or an automatic annotator).

    Needs columns ``bin`` and ``score``; other columns are ignored, except ``z_low`` and
    ``z_high`` which, when present, must equal ``bins.edges`` within :data:`EDGE_RTOL`
    (relative to the largest of |lo|, |hi|, hi − lo): a CSV made for other bins is refused.
    Every score must be a number in [0, 1]; an empty score is an error unless
    ``allow_missing`` (then the row is skipped). With ``populated`` (bool per bin, e.g.
    ``np.isfinite(result.ln_rho)``) every populated bin needs at least one score. Errors name
    the file and the (1-based, physical) line of the record.
    """
    path = regular_file(path)
    edges = bins.edges
    tol = EDGE_RTOL * max(abs(bins.lo), abs(bins.hi), bins.hi - bins.lo)
    per_bin: list[list[float]] = [[] for _ in range(bins.n)]
    n_rows = 0
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None:
                raise GenmetricsError(
                    f"{path}: the file is empty (expected a header row {','.join(COLUMNS)})"
                )
            header = [h.strip() for h in header]
            missing = [c for c in REQUIRED_COLUMNS if c not in header]
            if missing:
                raise GenmetricsError(
                    f"{path}: line 1: no column {missing[0]!r} in the header (has {header})"
                )
            col = {c: header.index(c) for c in COLUMNS if c in header}
            while True:
                line = reader.line_num + 1
                row = next(reader, None)
                if row is None:
                    break
                if not row:  # a blank line
                    continue
                where = f"{path}: line {line}"
                if len(row) != len(header):
                    raise GenmetricsError(
                        f"{where}: {len(row)} fields, but the header has {len(header)}"
                    )
                n_rows += 1
                cell = row[col["bin"]].strip()
                b = _int(cell)
                if b is None or not 0 <= b < bins.n:
                    raise GenmetricsError(
                        f"{where}: bin {cell!r} is not an integer in 0..{bins.n - 1}"
                    )
                for name, k in (("z_low", b), ("z_high", b + 1)):
                    if name not in col:
                        continue
                    cell = row[col[name]].strip()
                    v = _float(cell)
                    if v is None or not math.isclose(v, edges[k], rel_tol=0, abs_tol=tol):
                        raise GenmetricsError(
                            f"{where}: {name} {cell!r} of bin {b} does not match the bins "
                            f"({name} = {float(edges[k])!r} for {bins.as_dict()}): this CSV "
                            f"was made for other bins"
                        )
                cell = row[col["score"]].strip()
                if not cell:
                    if allow_missing:
                        continue
                    raise GenmetricsError(
                        f"{where}: score is empty — every exported sample needs a score"
                    )
                s = _float(cell)
                if s is None:
                    raise GenmetricsError(f"{where}: score {cell!r} is not a number")
                if math.isnan(s):
                    raise GenmetricsError(f"{where}: score is NaN; scores are numbers in [0, 1]")
                if not 0.0 <= s <= 1.0:
                    raise GenmetricsError(f"{where}: score {cell} is outside [0, 1]")
                per_bin[b].append(s)
    except UnicodeDecodeError as e:
        raise GenmetricsError(f"{path}: invalid UTF-8 at byte {e.start}") from None
    except csv.Error as e:
        raise GenmetricsError(f"{path}: line {reader.line_num}: not valid CSV ({e})") from None
    if n_rows == 0:
        raise GenmetricsError(f"{path}: header only, no sample rows")
    scores = [np.asarray(v, dtype=np.float64) for v in per_bin]
    r, counts = r_from_scores(scores, bins.n)
    if populated is not None:
        pop = np.asarray(populated, dtype=bool)
        if pop.shape != (bins.n,):
            raise GenmetricsError(f"populated: expected shape ({bins.n},), got {pop.shape}")
        lacking = np.flatnonzero(pop & (counts == 0))
        if len(lacking):
            listed = ", ".join(
                f"bin {b} [{float(edges[b])!r}, {float(edges[b + 1])!r}]"
                for b in lacking[:_LIST_MISSING]
            )
            more = (
                f" and {len(lacking) - _LIST_MISSING} more" if len(lacking) > _LIST_MISSING else ""
            )
            raise GenmetricsError(
                f"{path}: {len(lacking)} populated bin(s) have no scored sample: {listed}{more}; "
                f"r(z) is undefined there (export samples for them and score them)"
            )
    return Annotations(r=r, counts=counts, scores=scores)
