"""The diversity of instruction sets compared with each other: Shaib et al. (2024), §10.2 and
App. A.4-A.5, Tables 9, 12 and 13.

Each *set* is a list of instructions (rows with ``text``). Every score is computed over all
instructions of a set (as the workflow's score jobs do, :func:`genmetrics.scoring.length_control.
score_rows`), three ways:

* ``raw`` — the whole set (Table 9), with its size and words (Table 12);
* ``shortest`` — every set downsampled to the size of the smallest set, then every kept
  instruction cut to the length in words of the shortest kept instruction of all sets (App. A.5:
  "downsampled to the size of the smallest dataset, and truncated to the length of the shortest
  instructions in the remaining data", read literally: one length for all);
* ``aligned`` — the same downsample, then the i-th kept instruction of every set cut to the
  shortest of the i-th instructions (the per-input cut of their Tables 5 and 7, with the draw
  order as the pairing: the other reading of the same sentence).

The downsample draws, per set, a seeded random order of its rows and keeps the first n; the
draw of a set depends on the seed and its name only (adding a set changes no other set's draw,
but can lower n). Words are those of the language (:mod:`genmetrics.data.words`).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from genmetrics import GenmetricsError
from genmetrics.data.words import DEFAULT_LANGUAGE, count_words, truncate_words

#: the versions of the table, in order: the whole sets and the two readings of the cut
CUTS = ("shortest", "aligned")
SIZE_COLUMNS = ["set", "version", "n_instructions", "mean_words", "total_words", "cut_words"]
#: the paper's rows (resources/papers/instruction-sets.csv)
PAPER_ROWS = (
    "Open Assistant",
    "Unnatural Instructions",
    "Alpaca",
    "Super-NaturalInstructions",
    "Dolly",
)
#: the paper's column of each metric (Tables 9 and 13) and of each size column (Table 12)
PAPER_SCORES = {
    "compression_ratio": "CR",
    "pos_compression_ratio": "CR: POS",
    "self_repetition": "Self-Rep.",
}
PAPER_SIZES = {
    "n_instructions": "# Instructions",
    "mean_words": "Avg. # Words",
    "total_words": "Total # Words",
}


def draw(rows: Sequence[Mapping[str, Any]], n: int, seed: int, name: str) -> list[dict]:
    """``n`` rows of ``rows`` without replacement, in a random order seeded by ``seed`` and
    the set's ``name`` (the order is the pairing of the ``aligned`` cut)."""
    if n > len(rows):
        raise GenmetricsError(f"instruction set {name!r}: {len(rows)} rows, cannot draw {n}")
    rng = np.random.default_rng([int(seed), zlib.crc32(name.encode("utf-8"))])
    return [dict(rows[i]) for i in rng.permutation(len(rows))[:n]]


def downsample(
    sets: Mapping[str, Sequence[Mapping[str, Any]]], seed: int, size: int | None = None
) -> dict[str, list[dict]]:
    """Every set drawn down to ``size`` rows (default: the smallest set's size)."""
    if not sets:
        raise GenmetricsError("analysis.instruction_sets: no instruction set")
    empty = [k for k, rows in sets.items() if not rows]
    if empty:
        raise GenmetricsError(f"analysis.instruction_sets: set(s) without instructions: {empty}")
    smallest = min(len(rows) for rows in sets.values())
    n = smallest if size is None else int(size)
    if n > smallest:
        raise GenmetricsError(
            f"analysis.instruction_sets.size: {n} is more than the smallest set's {smallest}"
        )
    return {name: draw(rows, n, seed, name) for name, rows in sets.items()}


def cut(
    sets: Mapping[str, Sequence[Mapping[str, Any]]], how: str, language: str = DEFAULT_LANGUAGE
) -> tuple[dict[str, list[dict]], int | None]:
    """The sets (already of one size) cut ``how`` (``shortest`` or ``aligned``), and the one
    length of ``shortest`` (None for ``aligned``). ``n_words_original`` keeps each uncut length."""
    if how not in CUTS:
        raise GenmetricsError(f"analysis.instruction_sets.cuts: {how!r} is not one of {CUTS}")
    sizes = {len(rows) for rows in sets.values()}
    if len(sizes) != 1:
        raise GenmetricsError(f"instruction sets: cut sets of one size, got sizes {sorted(sizes)}")
    words = {k: [count_words(r["text"], language) for r in rows] for k, rows in sets.items()}
    if how == "shortest":
        length = min(min(w) for w in words.values())
        limits = {k: [length] * len(w) for k, w in words.items()}
    else:
        length = None
        per_position = np.min(np.array(list(words.values())), axis=0)
        limits = {k: per_position.tolist() for k in words}
    out = {
        k: [
            {**r, "n_words_original": w, "text": truncate_words(r["text"], m, language)}
            for r, w, m in zip(rows, words[k], limits[k], strict=True)
        ]
        for k, rows in sets.items()
    }
    return out, length


def score_set(
    rows: Sequence[Mapping[str, Any]],
    columns: Sequence[Mapping[str, Any]],
    language: str = DEFAULT_LANGUAGE,
) -> dict[str, float]:
    """Each column's value (``label`` → the ``name`` value of ``metric`` with ``params``) on
    the rows, as a score job computes it."""
    from genmetrics.scoring.length_control import score_rows

    out = {}
    for c in columns:
        record = score_rows(c["metric"], rows, None, c.get("params") or {}, language)
        out[c["label"]] = float(record["values"][c["name"]])
    return out


def instruction_table(
    sets: Mapping[str, Sequence[Mapping[str, Any]]],
    columns: Sequence[Mapping[str, Any]],
    *,
    seed: int = 0,
    cuts: Sequence[str] = CUTS,
    size: int | None = None,
    language: str = DEFAULT_LANGUAGE,
) -> pd.DataFrame:
    """One row per (set, version): ``raw`` then each of ``cuts``; columns
    :data:`SIZE_COLUMNS` (``cut_words``: the one length of ``shortest``) and one per column
    label. Sets keep their given order."""
    if not columns:
        raise GenmetricsError("analysis.instruction_sets.entries: no score")
    versions: list[tuple[str, dict[str, list], int | None]] = [("raw", dict(sets), None)]
    if cuts:
        drawn = downsample(sets, seed, size)
        versions += [(how, *cut(drawn, how, language)) for how in cuts]
    rows = []
    for version, texts, length in versions:
        for name, items in texts.items():
            words = [count_words(r["text"], language) for r in items]
            rows.append(
                {
                    "set": name,
                    "version": version,
                    "n_instructions": len(items),
                    "mean_words": float(np.mean(words)) if words else np.nan,
                    "total_words": int(np.sum(words)),
                    "cut_words": length,
                    **score_set(items, columns, language),
                }
            )
    table = pd.DataFrame(rows, columns=[*SIZE_COLUMNS, *(c["label"] for c in columns)])
    table["cut_words"] = table["cut_words"].astype("Int64")
    return table


def paper_matches(
    paper_rows: Mapping[str, str],
    columns: Sequence[Mapping[str, Any]],
    cuts: Sequence[str] = CUTS,
) -> list:
    """The :class:`~genmetrics.analysis.paper_comparison.Match` es of the side-by-side table:
    for each set named in ``paper_rows`` (set → the paper's row), Table 12's sizes and
    Table 9's scores beside our whole set, and Table 13's beside each of our ``cuts``, with the
    direction of the cut (Table 13 against Table 9, ours cut against ours whole). Table 9's
    direction is each set against the first set named, where two or more are."""
    from genmetrics.analysis.paper_comparison import Match

    matches = []
    named = list(paper_rows.items())
    scores = [
        (c["label"], PAPER_SCORES[c["metric"]]) for c in columns if c["metric"] in PAPER_SCORES
    ]
    for i, (name, row) in enumerate(named):
        if row not in PAPER_ROWS:
            raise GenmetricsError(
                f"analysis.instruction_sets.paper_rows.{name}: {row!r} is not a row of the "
                f"paper's tables {list(PAPER_ROWS)}"
            )
        whole = {"set": name, "version": "raw"}
        note = f"ours: the set {name}"
        for ours, col in PAPER_SIZES.items():
            matches.append(Match(("Table 12", row, col), whole, value=ours, note=note))
        for label, col in scores:
            versus = None
            if i > 0:
                first, first_row = named[0]
                versus = (("Table 9", first_row, col), {"set": first, "version": "raw"})
            matches.append(Match(("Table 9", row, col), whole, versus, label, note))
            for how in cuts:
                matches.append(
                    Match(
                        ("Table 13", row, col),
                        {"set": name, "version": how},
                        (("Table 9", row, col), whole),
                        label,
                        f"{note}, cut {how!r}; direction: cut minus whole",
                    )
                )
    return matches


def paper_table(
    table: pd.DataFrame,
    paper_rows: Mapping[str, str],
    columns: Sequence[Mapping[str, Any]],
    cuts: Sequence[str] = CUTS,
    study: str = "instruction-sets",
) -> pd.DataFrame:
    """:func:`~genmetrics.analysis.paper_comparison.side_by_side` of :func:`paper_matches`
    (n: the set's instructions), with ``set`` and ``version``: which of our rows answers."""
    from genmetrics.analysis.paper_comparison import SIDE_BY_SIDE_COLUMNS, side_by_side

    matches = paper_matches(paper_rows, columns, cuts)
    if not matches:
        return pd.DataFrame(columns=["set", "version", *SIDE_BY_SIDE_COLUMNS])
    out = side_by_side(study, table.assign(n=table["n_instructions"]), matches)
    out.insert(0, "version", [m.ours["version"] for m in matches])
    out.insert(0, "set", [m.ours["set"] for m in matches])
    return out


def size_departures(table: pd.DataFrame, columns: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """Where a whole set is less diverse than a set with more words (the departures from the
    order by size that the paper reads, §10.2: a larger set is expected to score less
    diverse): one row per (score, smaller set, larger set)."""
    raw = table[table["version"] == "raw"].sort_values("total_words", ascending=False)
    rows = []
    for c in columns:
        sign = 1.0 if c["direction"] == "lower" else -1.0  # lower = more diverse
        vals = list(zip(raw["set"], raw["total_words"], sign * raw[c["label"]], strict=True))
        for i, (big, big_words, big_v) in enumerate(vals):
            for small, small_words, small_v in vals[i + 1 :]:
                if small_words < big_words and small_v > big_v:
                    rows.append([c["label"], small, big])
    return pd.DataFrame(rows, columns=["score", "smaller", "larger"])


# ---------------------------------------------------------------- Markdown


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None or v is pd.NA or (isinstance(v, float) and not np.isfinite(v)):
        return "–"
    if isinstance(v, (int, np.integer)):
        return f"{int(v):,}"
    return f"{float(v):.{digits}f}"


def _line(cells: Sequence[Any]) -> str:
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def instruction_markdown(
    table: pd.DataFrame,
    columns: Sequence[Mapping[str, Any]],
    paper: pd.DataFrame | None = None,
) -> str:
    """Tables 12, 9 and 13 in the paper's shape (sets ordered by total words, largest first,
    as the paper orders its datasets by size), then the side-by-side table if given."""
    arrows = {c["label"]: "↑" if c["direction"] == "higher" else "↓" for c in columns}
    labels = [c["label"] for c in columns]
    raw = table[table["version"] == "raw"].sort_values("total_words", ascending=False)
    order = list(raw["set"])
    lines = [
        "# Diversity of instruction sets (Shaib et al. 2024, §10.2, App. A.4-A.5)",
        "",
        "Each score over all instructions of a set (↑ higher = more diverse, ↓ lower = more "
        "diverse). Sets ordered by total words, largest first (the paper orders its datasets "
        "by size and reads only departures from that order).",
        "",
        "## Sizes (as Table 12)",
        "",
        _line(["set", "# instructions", "avg # words", "total # words"]),
        _line(["---", "---:", "---:", "---:"]),
    ]
    for _, r in raw.iterrows():
        cells = [r["set"], _fmt(r["n_instructions"]), _fmt(r["mean_words"], 2)]
        lines.append(_line([*cells, _fmt(r["total_words"])]))
    titles = {
        "raw": "## Whole sets (as Table 9)",
        "shortest": "## Downsampled, every instruction cut to the shortest kept one "
        "(as Table 13, the literal reading)",
        "aligned": "## Downsampled, the i-th instructions of the sets cut to their shortest "
        "(as Table 13, the per-input reading)",
    }
    for version in table["version"].drop_duplicates():
        sub = table[table["version"] == version].set_index("set").reindex(order)
        lines += ["", titles.get(version, f"## {version}"), ""]
        if version != "raw":
            n = int(sub["n_instructions"].iloc[0])
            length = sub["cut_words"].iloc[0]
            said = f"{n} instructions per set"
            said += f", each cut to {int(length)} words" if version == "shortest" else ""
            said += f"; mean words after the cut {_fmt(sub['mean_words'].mean(), 2)}"
            lines += [said, ""]
        lines += [_line(["set", *(f"{lab} {arrows[lab]}" for lab in labels)])]
        lines += [_line(["---"] + ["---:"] * len(labels))]
        for name, r in sub.iterrows():
            lines.append(_line([name, *(_fmt(r[lab]) for lab in labels)]))
    dep = size_departures(table, columns)
    lines += ["", "## Departures from the order by size (whole sets)", ""]
    if dep.empty:
        lines.append("None: every smaller set is at least as diverse as every larger one.")
    for label, sub in dep.groupby("score", sort=False):
        pairs = ", ".join(f"{a} < {b}" for a, b in zip(sub["smaller"], sub["larger"], strict=True))
        lines.append(f"- {label}: less diverse than a larger set: {pairs}")
    if paper is not None and not paper.empty:
        lines += ["", "## Beside the paper", ""]
        head = ["table", "row", "column", "paper", "ours", "set", "version", "n"]
        head += ["paper dir.", "our dir.", "agrees"]
        align = ["---"] * 3 + ["---:"] * 2 + ["---"] * 2 + ["---:"] + ["---"] * 3
        lines += [_line(head), _line(align)]
        for _, r in paper.iterrows():
            agree = r["direction_agrees"]
            agree = "–" if agree is None or pd.isna(agree) else ("yes" if agree else "no")
            n = "–" if pd.isna(r["n"]) else str(int(r["n"]))
            dirs = ["–" if pd.isna(d) else d for d in (r["paper_direction"], r["our_direction"])]
            ours = r["ours"]
            ours = (
                _fmt(int(ours))
                if r["column"] in ("# Instructions", "Total # Words")
                else _fmt(ours)
            )
            cells = [r["table"], r["row"], r["column"], r["paper"], ours, r["set"], r["version"], n]
            lines.append(_line([*cells, *dirs, agree]))
        lines += [
            "",
            "Direction: Table 9, each set against the first set named; Table 13, the cut "
            "against the whole set (Table 13 minus Table 9 in the paper, ours likewise).",
        ]
    return "\n".join(lines) + "\n"
