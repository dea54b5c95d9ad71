"""Human judgment sets, read into two shapes the agreement analysis scores the same way.

* :class:`JudgedTexts` — texts (or, for HANNA, only stored scores) with per-text human scores:
  one row per (item, system), columns ``item``, ``system``, ``text``, ``reference`` (the human
  text the system is compared with, or None), one column per human criterion and one per
  stored upstream metric (``upstream.<name>``).
* :class:`PairwiseJudgments` — A/B preferences: one row per item with ``prompt``,
  ``system_a``/``text_a``, ``system_b``/``text_b``, ``group`` (a sub-set, e.g. the generating
  model) and ``votes``, the raters' outcomes (``"a"``, ``"b"``, ``"tie"``).

Readers, one per set of ../shared/data (each folder's README gives the upstream and fields):

* ``realsumm`` — Bhandari et al. (2020), REALSumm: 100 CNN/DM documents × 25 systems, human
  LitePyramid recall; ``system`` = ``abs.<name>``/``ext.<name>`` (``bart_out`` is both).
* ``xsum_hallucination`` — Maynez et al. (2020): 500 XSum documents × 4 systems vs the Gold
  summary; human ``faithful`` (share of words outside hallucinated spans) and ``factual``
  (share of "yes" votes).
* ``hanna`` — Chhun et al. (2022), HANNA: 96 prompts × 11 systems, 6 criteria (mean of 3
  raters, 1–5) and 72 stored automatic metrics; no system texts.
* ``contrastive_search_ab`` — Su & Collier (2023): contrastive search vs contrastive decoding,
  4 raters per item; the texts start with the prompt, which is removed.
* ``rankgen_ab`` — Krishna et al. (2022), RankGen: RankGen beam search vs nucleus sampling,
  about 3 writers per item.

:func:`read_judgments` reads a set by kind (:data:`READERS`); :func:`summary_of` counts a
judged set for its record.

Rows a set marks as unjudged (XSum's 2 documents per system without human scores) are kept
out of the table and counted in ``excluded`` with the reason: nothing is dropped silently.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where a table is built: the workflow's plan reads this module
    import pandas as pd

from genmetrics import GenmetricsError
from genmetrics.io import read_jsonl

UPSTREAM = "upstream."


@dataclass(frozen=True)
class JudgedTexts:
    """Per-text human scores (see the module docstring for the columns)."""

    name: str
    table: pd.DataFrame
    criteria: tuple[str, ...]
    upstream: tuple[str, ...]  # column names, each starting with "upstream."
    citation: str
    excluded: Mapping[str, int] = field(default_factory=dict)

    @property
    def has_references(self) -> bool:
        return bool(self.table["reference"].notna().all())


@dataclass(frozen=True)
class PairwiseJudgments:
    """A/B preferences (see the module docstring for the columns)."""

    name: str
    table: pd.DataFrame
    citation: str


def _number(row: Mapping[str, Any], key: str, where: str) -> float:
    v = row.get(key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise GenmetricsError(f"{where}: {key!r} must be a finite number, got {v!r}")
    return float(v)


def _text(row: Mapping[str, Any], key: str, where: str) -> str:
    v = row.get(key)
    if not isinstance(v, str):
        raise GenmetricsError(f"{where}: {key!r} must be a string, got {type(v).__name__}")
    return v


def _id(row: Mapping[str, Any], key: str, where: str) -> str | int:
    """An id field: a string or an integer (a list, object, float or boolean cannot link rows)."""
    v = row.get(key)
    if isinstance(v, bool) or not isinstance(v, (str, int)):
        raise GenmetricsError(
            f"{where}: {key!r} must be a string or an integer, got {type(v).__name__}"
        )
    return v


def read_realsumm(folder: str | Path) -> JudgedTexts:
    """REALSumm ``references.jsonl`` + ``summaries.jsonl`` (LitePyramid recall per summary)."""
    folder = Path(folder)
    refs_path, sums_path = folder / "references.jsonl", folder / "summaries.jsonl"
    refs = {
        _id(r, "id", f"{refs_path}: row {i}"): _text(r, "text", f"{refs_path}: row {i}")
        for i, r in enumerate(read_jsonl(refs_path, required=("id", "text")), 1)
    }
    required = ("id", "source_id", "doc_id", "system", "system_type", "text")
    rows = []
    for line, r in enumerate(read_jsonl(sums_path, required=required), 1):
        where = f"{sums_path}: row {line}"
        if _id(r, "source_id", where) not in refs:
            raise GenmetricsError(f"{where}: source_id {r['source_id']!r} is not in {refs_path}")
        scores = r.get("scores")
        if not isinstance(scores, Mapping):
            raise GenmetricsError(f"{where}: 'scores' must be an object")
        kind = {"abstractive": "abs", "extractive": "ext"}.get(_text(r, "system_type", where))
        if kind is None:
            raise GenmetricsError(f"{where}: system_type {r['system_type']!r} is not abs/ext")
        rows.append(
            {
                "item": str(r["doc_id"]),
                "system": f"{kind}.{r['system']}",
                "text": _text(r, "text", where),
                "reference": refs[r["source_id"]],
                "litepyramid_recall": _number(r, "litepyramid_recall", where),
                **{UPSTREAM + k: _number(scores, k, f"{where}: scores") for k in sorted(scores)},
            }
        )
    import pandas as pd

    table = pd.DataFrame(rows)
    _check_unique(table, sums_path)
    return JudgedTexts(
        name="realsumm",
        table=table,
        criteria=("litepyramid_recall",),
        upstream=tuple(c for c in table.columns if c.startswith(UPSTREAM)),
        citation="Bhandari et al. (2020)",
    )


XSUM_UPSTREAM = ("rouge1_f", "rouge2_f", "rougeL_f", "bertscore", "entailment")


def read_xsum_hallucination(folder: str | Path) -> JudgedTexts:
    """Maynez et al. (2020) ``summaries.jsonl``: 4 systems vs the Gold summary of each doc."""
    path = Path(folder) / "summaries.jsonl"
    rows_in = read_jsonl(path, required=("id", "bbcid", "system", "is_reference", "text"))
    gold: dict[str, str] = {}
    for line, r in enumerate(rows_in, 1):
        if r["is_reference"]:
            gold[str(r["bbcid"])] = _text(r, "text", f"{path}: row {line}")
    rows, unjudged, no_gold = [], 0, 0
    for line, r in enumerate(rows_in, 1):
        if r["is_reference"]:
            continue
        where = f"{path}: row {line}"
        item = str(r["bbcid"])
        if r.get("faithful") is None or r.get("factual") is None:
            unjudged += 1
            continue
        if item not in gold:
            no_gold += 1
            continue
        rows.append(
            {
                "item": item,
                "system": _text(r, "system", where),
                "text": _text(r, "text", where),
                "reference": gold[item],
                "faithful": _number(r, "faithful", where),
                "factual": _number(r, "factual", where),
                **{UPSTREAM + k: _number(r, k, where) for k in XSUM_UPSTREAM},
            }
        )
    import pandas as pd

    table = pd.DataFrame(rows)
    _check_unique(table, path)
    excluded = {"system summaries without human scores": unjudged}
    if no_gold:
        excluded["system summaries whose document has no Gold summary"] = no_gold
    return JudgedTexts(
        name="xsum_hallucination",
        table=table,
        criteria=("faithful", "factual"),
        upstream=tuple(UPSTREAM + k for k in XSUM_UPSTREAM),
        citation="Maynez et al. (2020)",
        excluded=excluded,
    )


HANNA_CRITERIA = ("RE", "CH", "EM", "SU", "EG", "CX")
HANNA_NAMES = {
    "RE": "relevance",
    "CH": "coherence",
    "EM": "empathy",
    "SU": "surprise",
    "EG": "engagement",
    "CX": "complexity",
}


def read_hanna(folder: str | Path) -> JudgedTexts:
    """HANNA ``scores.jsonl``: mean of 3 raters per criterion and the 72 stored metrics.

    Criteria columns are the long names (``relevance``, …, ``complexity``)."""
    path = Path(folder) / "scores.jsonl"
    rows = []
    names: list[str] | None = None
    for line, r in enumerate(read_jsonl(path, required=("id", "system", "prompt_id")), 1):
        where = f"{path}: row {line}"
        human, metrics = r.get("human_mean"), r.get("metrics")
        if not isinstance(human, Mapping) or not isinstance(metrics, Mapping):
            raise GenmetricsError(f"{where}: 'human_mean' and 'metrics' must be objects")
        if names is None:
            names = list(metrics)
        elif list(metrics) != names:
            raise GenmetricsError(f"{where}: its metric names differ from row 1's")
        rows.append(
            {
                "item": _text(r, "prompt_id", where),
                "system": _text(r, "system", where),
                "text": None,
                "reference": None,
                **{
                    HANNA_NAMES[c]: _number(human, c, f"{where}: human_mean")
                    for c in HANNA_CRITERIA
                },
                **{UPSTREAM + k: _number(metrics, k, f"{where}: metrics") for k in names},
            }
        )
    import pandas as pd

    table = pd.DataFrame(rows)
    _check_unique(table, path)
    return JudgedTexts(
        name="hanna",
        table=table,
        criteria=tuple(HANNA_NAMES[c] for c in HANNA_CRITERIA),
        upstream=tuple(UPSTREAM + k for k in names or ()),
        citation="Chhun et al. (2022)",
    )


def _strip_prompt(text: str, prompt: str) -> str:
    return text[len(prompt) :].lstrip() if text.startswith(prompt) else text


def read_contrastive_search_ab(path: str | Path) -> PairwiseJudgments:
    """``contrastive_search/human_ab.jsonl``: the prompt is cut from the front of both texts
    (they are stored as prompt + continuation); ``group`` = the domain."""
    path = Path(path)
    if path.is_dir():
        path = path / "human_ab.jsonl"
    required = ("id", "prompt", "system_a", "text_a", "system_b", "text_b", "annotations")
    rows = []
    for line, r in enumerate(read_jsonl(path, required=required), 1):
        where = f"{path}: row {line}"
        ann = r["annotations"]
        if not isinstance(ann, Mapping) or not ann:
            raise GenmetricsError(f"{where}: 'annotations' must be a non-empty object")
        votes = list(ann.values())
        bad = [v for v in votes if v not in ("a", "b", "tie")]
        if bad:
            raise GenmetricsError(f"{where}: annotation {bad[0]!r} is not 'a', 'b' or 'tie'")
        prompt = _text(r, "prompt", where)
        rows.append(
            {
                "item": _id(r, "id", where),
                "group": str(r.get("domain", "all")),
                "prompt": prompt,
                "system_a": _text(r, "system_a", where),
                "text_a": _strip_prompt(_text(r, "text_a", where), prompt),
                "system_b": _text(r, "system_b", where),
                "text_b": _strip_prompt(_text(r, "text_b", where), prompt),
                "votes": votes,
            }
        )
    import pandas as pd

    table = pd.DataFrame(rows)
    _check_unique(table, path, keys=("item",))
    return PairwiseJudgments("contrastive_search_ab", table, "Su & Collier (2023)")


def read_rankgen_ab(folder: str | Path) -> PairwiseJudgments:
    """``rankgen_ab/items.jsonl`` + ``judgments.jsonl`` (``preferred`` 1 or 2 → "a"/"b");
    ``group`` = the generating model. An item nobody judged is an error."""
    folder = Path(folder)
    items_path, judg_path = folder / "items.jsonl", folder / "judgments.jsonl"
    required = ("id", "prompt", "text_1", "system_1", "text_2", "system_2")
    items = read_jsonl(items_path, required=required)
    votes: dict[str | int, list[str]] = {}
    for line, j in enumerate(read_jsonl(judg_path, required=("item_id", "preferred")), 1):
        pref = j["preferred"]
        outcome = None if isinstance(pref, bool) or not isinstance(pref, int) else pref
        outcome = {1: "a", 2: "b"}.get(outcome)  # type: ignore[arg-type]
        if outcome is None:
            raise GenmetricsError(
                f"{judg_path}: row {line}: 'preferred' must be 1 or 2, got {pref!r:.60}"
            )
        votes.setdefault(_id(j, "item_id", f"{judg_path}: row {line}"), []).append(outcome)
    known = {_id(r, "id", f"{items_path}: row {i}") for i, r in enumerate(items, 1)}
    stray = sorted(set(votes) - known)
    if stray:
        raise GenmetricsError(f"{judg_path}: item_id {stray[0]!r} is not in {items_path}")
    rows = []
    for line, r in enumerate(items, 1):
        if r["id"] not in votes:
            raise GenmetricsError(f"{items_path}: row {line}: item {r['id']!r} has no judgment")
        where = f"{items_path}: row {line}"
        rows.append(
            {
                "item": r["id"],
                "group": str(r.get("model", "all")),
                "prompt": _text(r, "prompt", where),
                "system_a": _text(r, "system_1", where),
                "text_a": _text(r, "text_1", where),
                "system_b": _text(r, "system_2", where),
                "text_b": _text(r, "text_2", where),
                "votes": votes[r["id"]],
            }
        )
    import pandas as pd

    table = pd.DataFrame(rows)
    _check_unique(table, items_path, keys=("item",))
    return PairwiseJudgments("rankgen_ab", table, "Krishna et al. (2022)")


def _check_unique(table: pd.DataFrame, path: Path, keys: tuple[str, ...] = ("item", "system")):
    if table.empty:
        raise GenmetricsError(f"{path}: no judged rows")
    dup = table.duplicated(list(keys))
    if dup.any():
        first = table.loc[dup, list(keys)].iloc[0].tolist()
        raise GenmetricsError(f"{path}: {dict(zip(keys, first, strict=True))} appears twice")


READERS: dict[str, Callable[[str | Path], JudgedTexts | PairwiseJudgments]] = {
    "realsumm": read_realsumm,
    "xsum_hallucination": read_xsum_hallucination,
    "hanna": read_hanna,
    "contrastive_search_ab": read_contrastive_search_ab,
    "rankgen_ab": read_rankgen_ab,
}
PAIRWISE_KINDS = ("contrastive_search_ab", "rankgen_ab")
#: sets whose texts each have a human reference; sets that ship scores but no texts
REFERENCE_KINDS = ("realsumm", "xsum_hallucination")
TEXTLESS_KINDS = ("hanna",)
#: the human criteria of each set of judged texts
CRITERIA: dict[str, tuple[str, ...]] = {
    "realsumm": ("litepyramid_recall",),
    "xsum_hallucination": ("faithful", "factual"),
    "hanna": tuple(HANNA_NAMES[c] for c in HANNA_CRITERIA),
}


def read_judgments(kind: str, path: str | Path) -> JudgedTexts | PairwiseJudgments:
    """The judgment set of ``kind`` (one of :data:`READERS`) at ``path``."""
    if kind not in READERS:
        raise GenmetricsError(f"judgment set kind {kind!r} is not one of {sorted(READERS)}")
    return READERS[kind](path)


def summary_of(judged: JudgedTexts) -> dict[str, Any]:
    """Counts of a judged set for its record."""
    t = judged.table
    return {
        "set": judged.name,
        "citation": judged.citation,
        "texts": len(t),
        "items": int(t["item"].nunique()),
        "systems": int(t["system"].nunique()),
        "criteria": list(judged.criteria),
        "excluded": dict(judged.excluded),
    }
