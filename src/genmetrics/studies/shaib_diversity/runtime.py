"""Run time of scores as the number of texts grows (Shaib et al. 2024, Fig. 3), ours against a
reference implementation on the same texts.

* :class:`ScoreTiming` — one score: our function and the reference's (or why there is none),
  each a function of a list of texts returning the score's value, with a largest N each.
* :func:`sample_texts` — a seed-drawn sample of a JSONL file's texts; each N of the sweep
  takes the first N of it, so both implementations see the same texts and the samples nest.
* :func:`runtime_sweep` — the tidy table: per score, implementation and N, the median wall
  time of ``repeats`` runs (fewer when one run is slow), the value, and |ours − reference|
  at the reference's rounding. An implementation stops growing N past its cap, or after a
  run slower than ``time_limit_s``; :func:`runtime_stops` says where and why.
* :func:`runtime_markdown` — the table as markdown: seconds per N, ours and the reference,
  and their ratio.
* :func:`write_runtime` — the CSV, the markdown and a JSON of the settings and stops, each
  written atomically; the log–log figure is drawn by its caller
  (:func:`genmetrics.figures.runtime.runtime_figure`: the studies never import drawing).
"""

from __future__ import annotations

import math
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from genmetrics import GenmetricsError
from genmetrics.io import read_texts, write_csv, write_json, write_text

__all__ = [
    "COLUMNS",
    "ScoreTiming",
    "agreement_failures",
    "machine",
    "runtime_markdown",
    "runtime_stops",
    "runtime_sweep",
    "sample_texts",
    "time_call",
    "write_runtime",
]

#: the tidy table's columns (one row per score, implementation and number of texts)
COLUMNS = (
    "score",
    "label",
    "implementation",
    "n_texts",
    "seconds",
    "value",
    "repeats",
    "abs_diff",
    "reference",
)
IMPLEMENTATIONS = ("ours", "reference")


@dataclass(frozen=True)
class ScoreTiming:
    """One score of the sweep. ``ours``/``reference``: texts → value; ``reference`` is
    ``None`` when it cannot run, and ``reference_name`` then says why (``"unavailable
    offline (…)"``). ``digits``: the decimals the reference rounds to (agreement is checked
    there; ``None``: unrounded). ``*_max_n``: the largest N timed (``None``: every N)."""

    score: str
    label: str
    ours: Callable[[list[str]], float]
    reference: Callable[[list[str]], float] | None
    reference_name: str
    digits: int | None = 3
    ours_max_n: int | None = None
    reference_max_n: int | None = None

    def runner(self, implementation: str) -> Callable[[list[str]], float] | None:
        return self.ours if implementation == "ours" else self.reference

    def max_n(self, implementation: str) -> int | None:
        return self.ours_max_n if implementation == "ours" else self.reference_max_n

    def tolerance(self) -> float:
        """Largest |ours − reference| accepted: one unit of the reference's last decimal (a
        value on a rounding boundary may round either way), else 1e-9."""
        return 1e-9 if self.digits is None else 10.0**-self.digits + 1e-12


def sample_texts(path: str | Path, n: int, seed: int) -> list[str]:
    """``n`` texts of the JSONL file ``path`` (field ``text``) in a seed-drawn order (a
    permutation by ``numpy.random.default_rng(seed)``): the first N of it are the sweep's N."""
    rows = read_texts(path)
    if n > len(rows):
        raise GenmetricsError(f"{path}: {len(rows)} texts, fewer than the largest N = {n}")
    order = np.random.default_rng(seed).permutation(len(rows))[:n]
    return [rows[i]["text"] for i in order]


def time_call(
    fn: Callable[[list[str]], float],
    texts: list[str],
    repeats: int,
    repeat_limit_s: float = math.inf,
) -> tuple[float, float, int]:
    """(median seconds, value, runs) of ``fn(texts)``: ``repeats`` runs, or fewer once the
    runs so far took ``repeat_limit_s`` together (a slow cell is run once)."""
    if repeats < 1:
        raise GenmetricsError(f"runtime: repeats must be ≥ 1, got {repeats}")
    times: list[float] = []
    value = math.nan
    while len(times) < repeats and (not times or sum(times) < repeat_limit_s):
        t0 = time.perf_counter()
        value = float(fn(texts))
        times.append(time.perf_counter() - t0)
    return statistics.median(times), value, len(times)


def _diff(spec: ScoreTiming, ours: float, ref: float) -> float:
    mine = ours if spec.digits is None else round(ours, spec.digits)
    return abs(mine - ref)


def runtime_sweep(
    specs: Sequence[ScoreTiming],
    texts: Sequence[str],
    ns: Sequence[int],
    repeats: int = 3,
    time_limit_s: float = 60.0,
    repeat_limit_s: float = 10.0,
    warmup: int = 5,
    log: Callable[[str], None] | None = None,
) -> tuple[pd.DataFrame, list[dict]]:
    """Time every score of ``specs`` on the first N of ``texts`` for each N of ``ns``.

    Each implementation first runs once on ``warmup`` texts, untimed (numba compiles, the
    tagger and the package modules load). Returns (the tidy table of :data:`COLUMNS`, the
    stops: per score and implementation that did not reach the largest N, after which N
    and why). ``abs_diff`` is |ours rounded to ``digits`` − reference| where both ran."""
    ns = sorted({int(n) for n in ns})
    if not ns or ns[0] < 2:
        raise GenmetricsError(f"runtime: every N must be ≥ 2, got {list(ns)}")
    if ns[-1] > len(texts):
        raise GenmetricsError(f"runtime: {len(texts)} texts, fewer than the largest N {ns[-1]}")
    texts = list(texts)
    rows: list[dict] = []
    stops: list[dict] = []
    for spec in specs:
        values: dict[tuple[str, int], float] = {}
        for impl in IMPLEMENTATIONS:
            fn = spec.runner(impl)
            if fn is None:  # the reference column says why
                continue
            fn(texts[: max(2, min(warmup, len(texts)))])
            cap = spec.max_n(impl)
            last = None
            for n in ns:
                if cap is not None and n > cap:
                    stops.append(_stop(spec, impl, last, f"cap: N ≤ {cap}"))
                    break
                if last is not None and rows[-1]["seconds"] > time_limit_s:
                    why = f"N = {last} took {rows[-1]['seconds']:.1f} s > {time_limit_s:g} s"
                    stops.append(_stop(spec, impl, last, why))
                    break
                seconds, value, runs = time_call(fn, texts[:n], repeats, repeat_limit_s)
                values[impl, n] = value
                rows.append(
                    {
                        "score": spec.score,
                        "label": spec.label,
                        "implementation": impl,
                        "n_texts": n,
                        "seconds": seconds,
                        "value": value,
                        "repeats": runs,
                        "abs_diff": math.nan,
                        "reference": spec.reference_name,
                    }
                )
                last = n
                if log is not None:
                    log(f"{spec.score:<26} {impl:<9} N={n:<6} {seconds:10.4f} s  value {value:.6g}")
        for row in rows:
            if row["score"] == spec.score:
                key = ("ours", row["n_texts"]), ("reference", row["n_texts"])
                if all(k in values for k in key):
                    row["abs_diff"] = _diff(spec, values[key[0]], values[key[1]])
    return pd.DataFrame(rows, columns=list(COLUMNS)), stops


def _stop(spec: ScoreTiming, impl: str, after: int | None, why: str) -> dict:
    return {"score": spec.score, "implementation": impl, "last_n": after, "why": why}


def runtime_stops(stops: Sequence[dict]) -> list[str]:
    """One line per stop: which implementation of which score ended where, and why."""
    out = []
    for s in stops:
        where = "not run" if s["last_n"] is None else f"stopped after N = {s['last_n']}"
        out.append(f"{s['score']} ({s['implementation']}): {where}: {s['why']}")
    return out


def agreement_failures(table: pd.DataFrame, specs: Sequence[ScoreTiming]) -> pd.DataFrame:
    """The reference rows whose |ours − reference| is above the score's tolerance."""
    tol = table["score"].map({s.score: s.tolerance() for s in specs})
    bad = (table["implementation"] == "reference") & (table["abs_diff"] > tol)
    return table[bad]


def _seconds(x: float) -> str:
    if not np.isfinite(x):
        return "—"
    return f"{x:.3g}" if x < 100 else f"{x:,.0f}"


def _ratio(r: float) -> str:
    """A ratio of times: one decimal from 1 up, two significant digits below (0.013×)."""
    return f"{r:,.1f}×" if r >= 1 else f"{r:.2g}×"


def runtime_markdown(table: pd.DataFrame, stops: Sequence[dict] = ()) -> str:
    """Seconds per score and N: a row for ours, one for the reference and one for the ratio
    (reference / ours); the largest |ours − reference| per score; then the references and
    the stops."""
    ns = sorted(table["n_texts"].unique())
    head = "| score | implementation | " + " | ".join(f"N = {n}" for n in ns) + " | max Δ |"
    lines = [head, "|---|---|" + "---:|" * len(ns) + "---:|"]
    for _, g in table.groupby("score", sort=False):
        label = g["label"].iloc[0]
        sec = {
            impl: g[g["implementation"] == impl].set_index("n_texts")["seconds"]
            for impl in IMPLEMENTATIONS
        }
        diff = g["abs_diff"].max()
        dtext = "—" if not np.isfinite(diff) else f"{diff:.1g}"
        for impl in IMPLEMENTATIONS:
            cells = [_seconds(sec[impl].get(n, math.nan)) for n in ns]
            lines.append(f"| {label} | {impl} (s) | " + " | ".join(cells) + f" | {dtext} |")
        ratio = [
            _ratio(sec["reference"][n] / sec["ours"][n])
            if n in sec["reference"] and n in sec["ours"]
            else "—"
            for n in ns
        ]
        lines.append(f"| {label} | reference / ours | " + " | ".join(ratio) + " | |")
    lines.append("")
    lines.append("References:")
    refs = table.drop_duplicates("score")[["label", "reference"]]
    lines += [f"- {r.label}: {r.reference}" for r in refs.itertuples()]
    if stops:
        lines += ["", "Not timed at every N:"]
        lines += [f"- {line}" for line in runtime_stops(stops)]
    return "\n".join(lines) + "\n"


def machine() -> str:
    """The CPUs this process may use, e.g. ``"2 CPU cores (x86_64, Linux)"``."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return f"{cores} CPU cores ({platform.machine()}, {platform.system()})"


def write_runtime(
    table: pd.DataFrame,
    stops: Sequence[dict],
    folder: str | Path,
    title: str,
    settings: dict,
) -> dict[str, Path]:
    """Write ``runtime.csv`` (the tidy table), ``runtime.md`` (``title``, then
    :func:`runtime_markdown`) and ``runtime.json`` (``settings``, the stops) into ``folder``;
    return their paths by suffix, with ``png``: where the caller draws the figure
    (:func:`genmetrics.figures.runtime.runtime_figure`, ``note`` under its axes)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {ext: folder / f"runtime.{ext}" for ext in ("csv", "md", "json", "png")}
    write_csv(paths["csv"], table)
    md = f"# {title}\n\n" + runtime_markdown(table, stops)
    write_text(paths["md"], md)
    write_json(paths["json"], {**settings, "stops": list(stops)})
    return paths
