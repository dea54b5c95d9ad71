"""The reader of Fast-DetectGPT's human documents (baoguangsheng/fast-detect-gpt
``exp_*/data/{domain}_{model}.raw_data.json``), in :data:`genmetrics.data.upstream.READERS` as ``detectgpt_human``.

Each upstream file holds its own copy of the human documents (``original``), trimmed to the
length of that file's samples and sometimes in another order; :func:`detectgpt_human` joins the
copies into one row per document, as the project's ``detectgpt_continuations/human.jsonl``
(its README: "How ids map"). The model files (``sampled``, with the prompts rebuilt with the
GPT-2 BPE) have no reader yet: they need the data mirror.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.data.upstream_text import Rows, _opt, _text

#: the domains and the models, in the order the documents are numbered and ``models`` listed
DOMAINS = ["xsum", "writing", "squad", "pubmed"]
MODELS = [
    "gpt2-xl",
    "opt-2.7b",
    "gpt-neo-2.7B",
    "gpt-j-6B",
    "gpt-neox-20b",
    "davinci",
    "gpt-3.5-turbo",
    "gpt-4",
]


def _originals(path: Path) -> list[list[str]]:
    try:
        data = json.loads(_text(path))
    except ValueError as e:
        raise GenmetricsError(f"{path}: not JSON ({e})") from None
    if not isinstance(data, dict) or not all(isinstance(s, str) for s in data.get("original", 0)):
        raise GenmetricsError(f"{path}: no 'original' list of strings")
    return [s.split(" ") for s in data["original"]]


def _compatible(a: list[str], b: list[str]) -> bool:
    n = min(len(a), len(b))
    return a[:n] == b[:n]


def _documents(copies: list[tuple[str, list[list[str]]]]) -> list[tuple[list[str], list[str]]]:
    """``(words, models)`` per document of one domain from each model's copies, in model
    order: a copy joins the document it is a word-prefix of (or that is one of it) that has no
    copy of this model yet; a file's longest copies go first, each to the longest such
    document (two postings of one story differ only in their last words); a copy that joins
    none starts a document, in file order. A document keeps its longest copy."""
    docs: list[tuple[list[str], list[str]]] = []
    for model, words in copies:
        joined: dict[int, int] = {}
        for j in sorted(range(len(words)), key=lambda j: -len(words[j])):
            best = None
            for d, (text, models) in enumerate(docs):
                if model not in models and _compatible(text, words[j]):
                    if best is None or len(text) > len(docs[best][0]):
                        best = d
            if best is not None:
                joined[j] = best
                docs[best][1].append(model)
        for j, w in enumerate(words):
            if j not in joined:
                docs.append((w, [model]))
            elif len(w) > len(docs[joined[j]][0]):
                docs[joined[j]] = (w, docs[joined[j]][1])
    return docs


def detectgpt_human(files: Mapping[str, Path], options: Mapping[str, Any]) -> Rows:
    """``files`` named ``{domain}_{model}`` (the upstream ``raw_data.json`` files): one row per
    human document, domains in :data:`DOMAINS` order, ``{"id": f"{domain}-{n:04d}", "domain",
    "source" (``options.sources[domain]``), "text" (its longest copy), "models" (the files
    with a copy), "near_duplicate_of"}`` (the ids of the domain's other documents that one of
    them is a word-prefix of, else ``None``)."""
    sources = _opt(options, "sources")
    unknown = [n for n in files if n.rsplit("_", 1)[0] not in DOMAINS or "_" not in n]
    unknown += [n for n in files if "_" in n and n.split("_", 1)[1] not in MODELS]
    if unknown:
        raise GenmetricsError(
            f"upstream.files: {unknown[0]!r} is not '<domain>_<model>' ({'/'.join(DOMAINS)}; "
            f"{', '.join(MODELS)})"
        )
    rows: Rows = []
    for domain in DOMAINS:
        copies = [
            (m, _originals(Path(files[f"{domain}_{m}"])))
            for m in MODELS
            if f"{domain}_{m}" in files
        ]
        if not copies:
            continue
        if domain not in sources:
            raise GenmetricsError(f"upstream.options.sources.{domain}: required (its source)")
        docs = _documents(copies)
        ids = [f"{domain}-{i:04d}" for i in range(len(docs))]
        for i, (words, models) in enumerate(docs):
            near = [
                ids[k] for k, (other, _) in enumerate(docs) if k != i and _compatible(words, other)
            ]
            rows.append(
                {
                    "id": ids[i],
                    "domain": domain,
                    "source": sources[domain],
                    "text": " ".join(words),
                    "models": models,
                    "near_duplicate_of": near or None,
                }
            )
    return rows
