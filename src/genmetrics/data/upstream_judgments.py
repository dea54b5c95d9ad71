"""The readers of the human-judgment sets' upstreams that no other study reads (in
:data:`genmetrics.data.upstream.READERS`): the A/B annotations of Su & Xu (2022), contrastive
search vs contrastive decoding (``contrastive_search_ab``).

Each makes, from the pinned upstream file, the rows of the project's data folder byte for byte
(the folder's README describes the processing; ``tests/test_upstream_readers.py`` checks the
rows against it). Nothing downloaded is run: JSON only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.data.upstream_text import Reader, Rows, _one, _text

#: the readers of this module (:data:`genmetrics.data.upstream.READERS` holds them all)
JUDGMENT_READERS: dict[str, Reader] = {}

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
