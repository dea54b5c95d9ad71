"""The readers of the human-judgment sets' upstreams that no other study reads (in
:data:`genmetrics.data.upstream.READERS`): the A/B annotations of Su & Xu (2022), contrastive
search vs contrastive decoding (``contrastive_search_ab``), and RankGen's human evaluation,
RankGen beam search vs nucleus sampling (``rankgen_ab``), and HANNA's human ratings and stored
metric scores per story (``hanna_scores``).

Each makes, from the pinned upstream file, the rows of the project's data folder byte for byte
(the folder's README describes the processing; ``tests/test_upstream_readers.py`` checks the
rows against it). Nothing downloaded is run: JSON and CSV only.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.data.upstream_text import Reader, Rows, _one, _opt, _text

#: the readers of this module (:data:`genmetrics.data.upstream.READERS` holds them all)
JUDGMENT_READERS: dict[str, Reader] = {}
#: readers whose rows our copy writes as compact JSON (``separators=(",", ":")``):
#: :func:`genmetrics.data.upstream.rows_bytes` with ``compact``
COMPACT_READERS = {"hanna_scores"}

#: an annotator's upstream sentence -> our choice
_AB_CHOICE = {
    "system a is more human-like.": "a",
    "system b is more human-like.": "b",
    "two systems are comparable.": "tie",
}
#: upstream domain names that our ``domain`` field spells otherwise (ids keep upstream's)
_AB_DOMAINS = {"wikitext": "wikitext103"}


def _json(path: Path) -> Any:
    try:
        return json.loads(_text(path))
    except json.JSONDecodeError as e:
        raise GenmetricsError(f"{path}: line {e.lineno}: not JSON ({e.msg})") from None


def contrastive_search_ab(files: Mapping[str, Path], options: Mapping[str, Any]) -> Rows:
    """yxuansu/Contrastive_Search_versus_Contrastive_Decoding
    ``human_evaluation_annotations/human_evaluation_annotations.json`` (file ``annotations``):
    one row per item in upstream order, ``{"id": f"csab-{domain}-{i:02d}"`` (``i`` counted per
    upstream domain), ``"domain"`` (``wikitext`` as ``wikitext103``), ``"model"``
    (``options.model``, default ``gpt2-xl``), ``"prompt"``, ``"system_a"``, ``"text_a"``,
    ``"system_b"``, ``"text_b"`` (the texts include the prompt), ``"annotations"`` (each
    annotator's ``a``, ``b`` or ``tie``) and ``"votes"`` (their counts)}``."""
    path = _one(files, "annotations")
    items = _json(path)
    if not isinstance(items, list):
        raise GenmetricsError(f"{path}: not a JSON list of A/B items")
    rows: Rows = []
    seen: dict[str, int] = {}
    for n, r in enumerate(items):
        try:
            domain = r["domain"]
            ann = {k: _AB_CHOICE[v] for k, v in r["human_annotation"].items()}
            i = seen[domain] = seen.get(domain, -1) + 1
            rows.append(
                {
                    "id": f"csab-{domain}-{i:02d}",
                    "domain": _AB_DOMAINS.get(domain, domain),
                    "model": options.get("model", "gpt2-xl"),
                    "prompt": r["prompt"],
                    "system_a": r["system_a_name"],
                    "text_a": r["system_a_result"],
                    "system_b": r["system_b_name"],
                    "text_b": r["system_b_result"],
                    "annotations": ann,
                    "votes": {c: sum(v == c for v in ann.values()) for c in ("a", "b", "tie")},
                }
            )
        except KeyError as e:
            raise GenmetricsError(f"{path}: item {n}: no key or choice {e.args[0]!r}") from None
        except (TypeError, AttributeError):
            raise GenmetricsError(f"{path}: item {n}: not an A/B item") from None
    return rows


JUDGMENT_READERS["contrastive_search_ab"] = contrastive_search_ab


#: RankGen's upstream files -> (our id's model part, our model name), in the order read
_RANKGEN_MODELS = {"gpt2_medium": ("gpt2m", "gpt2-medium"), "t5_xxl_c4": ("t5xxl", "t5-xxl-c4")}
_RANKGEN_SYSTEMS = {"beam": "rankgen-beam", "nucleus": "nucleus"}
_RANKGEN_COLUMNS = (
    "HITId",
    "WorkerId",
    "WorkTimeInSeconds",
    "Input.Prefix",
    "Input.First",
    "Input.Second",
    "Input.Order",
    "Input.Dataset",
    "Answer.utterance",
    "Scarecrow",
)
#: the reason's first words name the preferred text ("Text 1 - ...", "text 2. ...")
_RANKGEN_CHOICE = re.compile(r"\s*text\s*([12])", re.IGNORECASE)


def rankgen_ab(files: Mapping[str, Path], options: Mapping[str, Any]) -> Rows:
    """martiansideofthemoon/rankgen ``human-eval-data/{gpt2_medium,t5_xxl_c4}.csv`` (files of
    those names, read in that order). ``options.output`` ``items``: one row per HIT in order of
    first appearance, ``{"id": f"rankgen-{gpt2m|t5xxl}-{i:03d}", "model", "dataset",
    "prompt", "text_1", "system_1", "text_2", "system_2"}`` (``Input.Order`` names the systems
    of First and Second: ``beam`` is ``rankgen-beam``); ``judgments``: one row per CSV row,
    ``{"id": f"{item}.{worker without spaces}.{n:04d}"`` (``n`` counted over both files),
    ``"item_id", "annotator", "preferred"`` (1 or 2, from the reason's leading "Text 1"/"Text
    2"), ``"preferred_system", "reason", "error_labels"`` (``Scarecrow``), ``"work_time_s"}``."""
    output = _opt(options, "output")
    if output not in ("items", "judgments"):
        raise GenmetricsError(f"upstream.options.output: 'items' or 'judgments', got {output!r}")
    items: Rows = []
    judgments: Rows = []
    for name, (short, model) in _RANKGEN_MODELS.items():
        path = _one(files, name)
        rows = list(csv.DictReader(io.StringIO(_text(path), newline="")))
        missing = [c for c in _RANKGEN_COLUMNS if c not in (rows[0] if rows else {})]
        if missing:
            raise GenmetricsError(f"{path}: no column {', '.join(missing)}")
        hits: dict[str, str] = {}
        for line, r in enumerate(rows, 2):
            order = r["Input.Order"].split(",")
            if sorted(order) != sorted(_RANKGEN_SYSTEMS):
                raise GenmetricsError(f"{path}: line {line}: Input.Order {r['Input.Order']!r}")
            systems = [_RANKGEN_SYSTEMS[o] for o in order]
            if r["HITId"] not in hits:
                hits[r["HITId"]] = item = f"rankgen-{short}-{len(hits):03d}"
                items.append(
                    {
                        "id": item,
                        "model": model,
                        "dataset": r["Input.Dataset"],
                        "prompt": r["Input.Prefix"],
                        "text_1": r["Input.First"],
                        "system_1": systems[0],
                        "text_2": r["Input.Second"],
                        "system_2": systems[1],
                    }
                )
            item = hits[r["HITId"]]
            choice = _RANKGEN_CHOICE.match(r["Answer.utterance"])
            if not choice:
                raise GenmetricsError(
                    f"{path}: line {line}: the reason does not start with Text 1 or Text 2"
                )
            preferred = int(choice.group(1))
            worker = r["WorkerId"].replace(" ", "")
            judgments.append(
                {
                    "id": f"{item}.{worker}.{len(judgments):04d}",
                    "item_id": item,
                    "annotator": r["WorkerId"],
                    "preferred": preferred,
                    "preferred_system": systems[preferred - 1],
                    "reason": r["Answer.utterance"],
                    "error_labels": r["Scarecrow"],
                    "work_time_s": int(r["WorkTimeInSeconds"]),
                }
            )
    return items if output == "items" else judgments


JUDGMENT_READERS["rankgen_ab"] = rankgen_ab


#: HANNA's criteria: our key, the upstream column of the mean of its 3 raters
_HANNA_CRITERIA = [
    ("RE", "Relevance"),
    ("CH", "Coherence"),
    ("EM", "Empathy"),
    ("SU", "Surprise"),
    ("EG", "Engagement"),
    ("CX", "Complexity"),
]


def hanna_scores(files: Mapping[str, Path], options: Mapping[str, Any]) -> Rows:
    """dig-team/hanna-benchmark-asg ``hanna_metric_scores_llm.csv`` (file ``scores``): one
    row per system (``Model``), each cell a list over its ``options.prompts`` (96) stories.
    One row per story, systems in upstream order and story ``96 * system + prompt``:
    ``{"id": f"hanna-s{story:04d}", "story_id", "system", "prompt_id": f"hanna-p{p:02d}",
    "text_available"`` (the Human stories only), ``"human_mean"`` (the criteria columns),
    ``"human_raters"`` (``Human {1,2,3} <key>``), ``"metrics"`` (the columns from ``BLEU`` to
    the raters', their trailing category mark cut)``}``; the leave-one-out ``Human Avg`` and
    the LLM-judge columns are left out. Written compact (:data:`COMPACT_READERS`)."""
    path = _one(files, "scores")
    rows = list(csv.DictReader(io.StringIO(_text(path), newline="")))
    cols = list(rows[0]) if rows else []
    need = ["Model", *(c for _, c in _HANNA_CRITERIA), "BLEU Ξ§", "Human 1 RE", "Human Avg 1 RE"]
    missing = [c for c in need if c not in cols]
    if missing:
        raise GenmetricsError(f"{path}: no column {', '.join(missing)}")
    metrics = cols[cols.index("BLEU Ξ§") : cols.index("Human 1 RE")]
    n = int(options.get("prompts", 96))
    out: Rows = []
    for block, r in enumerate(rows):
        try:
            vals = {c: json.loads(r[c]) for c in cols[1 : cols.index("Human Avg 1 RE")]}
        except json.JSONDecodeError as e:
            raise GenmetricsError(f"{path}: {r['Model']}: a cell is not JSON ({e.msg})") from None
        short = [c for c, v in vals.items() if not isinstance(v, list) or len(v) != n]
        if short:
            raise GenmetricsError(f"{path}: {r['Model']}: {short[0]} is not a list of {n}")
        for p in range(n):
            story = n * block + p
            out.append(
                {
                    "id": f"hanna-s{story:04d}",
                    "story_id": story,
                    "system": r["Model"],
                    "prompt_id": f"hanna-p{p:02d}",
                    "text_available": r["Model"] == "Human",
                    "human_mean": {k: vals[c][p] for k, c in _HANNA_CRITERIA},
                    "human_raters": {
                        k: [vals[f"Human {i} {k}"][p] for i in (1, 2, 3)]
                        for k, _ in _HANNA_CRITERIA
                    },
                    "metrics": {c.rsplit(" ", 1)[0]: vals[c][p] for c in metrics},
                }
            )
    return out


JUDGMENT_READERS["hanna_scores"] = hanna_scores
