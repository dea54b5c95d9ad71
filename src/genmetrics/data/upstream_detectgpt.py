"""The readers of Fast-DetectGPT's human documents and model samples (baoguangsheng/fast-detect-gpt
``exp_*/data/{domain}_{model}.raw_data.json``), in :data:`genmetrics.data.upstream.READERS` as ``detectgpt_human`` and ``detectgpt_samples``.

Each upstream file holds its own copy of the human documents (``original``), trimmed to the
length of that file's samples and sometimes in another order; :func:`detectgpt_human` joins the
copies into one row per document, as the project's ``detectgpt_continuations/human.jsonl``
(its README: "How ids map"); :func:`detectgpt_samples` gives one model file's samples with
the ids of those documents and their prompts, rebuilt with the GPT-2 BPE.
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


def _documents(
    copies: list[tuple[str, list[list[str]]]],
) -> tuple[list[tuple[list[str], list[str]]], dict[str, list[int]]]:
    """``(words, models)`` per document of one domain from each model's copies, in model
    order: a copy joins the document it is a word-prefix of (or that is one of it) that has no
    copy of this model yet; a file's longest copies go first, each to the longest such
    document (two postings of one story differ only in their last words); a copy that joins
    none starts a document, in file order. A document keeps its longest copy. Also the
    document of each copy, per model."""
    docs: list[tuple[list[str], list[str]]] = []
    where: dict[str, list[int]] = {}
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
        where[model] = []
        for j, w in enumerate(words):
            if j not in joined:
                joined[j] = len(docs)
                docs.append((w, [model]))
            elif len(w) > len(docs[joined[j]][0]):
                docs[joined[j]] = (w, docs[joined[j]][1])
            where[model].append(joined[j])
    return docs, where


def _check_names(files: Mapping[str, Path], extra: tuple[str, ...] = ()) -> None:
    names = [n for n in files if n not in extra]
    unknown = [n for n in names if "_" not in n or n.split("_", 1)[0] not in DOMAINS]
    unknown += [n for n in names if "_" in n and n.split("_", 1)[1] not in MODELS]
    if unknown:
        raise GenmetricsError(
            f"upstream.files: {unknown[0]!r} is not '<domain>_<model>' ({'/'.join(DOMAINS)}; "
            f"{', '.join(MODELS)})"
        )


def detectgpt_human(files: Mapping[str, Path], options: Mapping[str, Any]) -> Rows:
    """``files`` named ``{domain}_{model}`` (the upstream ``raw_data.json`` files): one row per
    human document, domains in :data:`DOMAINS` order, ``{"id": f"{domain}-{n:04d}", "domain",
    "source" (``options.sources[domain]``), "text" (its longest copy), "models" (the files
    with a copy), "near_duplicate_of"}`` (the ids of the domain's other documents that one of
    them is a word-prefix of, else ``None``)."""
    sources = _opt(options, "sources")
    _check_names(files)
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
        docs, _ = _documents(copies)
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


#: the models whose prompt is the first 30 GPT-2 tokens (OPT: 29, its BOS takes a slot);
#: GPT-NeoX's tokenizer is not at hand (its prompts are the shared prefix); the OpenAI models'
#: prompt drops the last (possibly partial) word of the 30 tokens
_PROMPT_TOKENS = {"gpt2-xl": 30, "gpt-neo-2.7B": 30, "gpt-j-6B": 30, "opt-2.7b": 29}


def _gpt2(path: Path) -> Any:
    """GPT-2's BPE (``tiktoken``) from a ``gpt2.tiktoken`` ranks file (openai/whisper's)."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    from genmetrics.data.assets import GPT2_PAT

    try:
        ranks = load_tiktoken_bpe(str(path))
    except Exception as e:  # noqa: BLE001 - any unreadable ranks file
        raise GenmetricsError(f"{path}: not a tiktoken ranks file ({e})") from None
    return tiktoken.Encoding(
        "gpt2", pat_str=GPT2_PAT, mergeable_ranks=ranks, special_tokens={"<|endoftext|>": 50256}
    )


def _common_prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return a[:n]


def _prompt(original: str, sample: str, domain: str, model: str, enc: Any) -> tuple[str, str]:
    """``(prompt, prompt_kind)`` of one sample (the README's rule): the exact prompt when the
    sample starts with it, else the longest common prefix of the human text and the sample."""
    exact = None
    if domain == "pubmed":
        i = original.find("Answer:")
        exact = original[: i + len("Answer:")] if i >= 0 else None
    elif model in _PROMPT_TOKENS:
        exact = enc.decode(enc.encode(original)[: _PROMPT_TOKENS[model]])
    elif model != "gpt-neox-20b":  # davinci, gpt-3.5-turbo, gpt-4
        tokens = enc.encode(original)
        exact = enc.decode(tokens[:30])
        if len(tokens) > 30 and " " in exact:
            exact = exact[: exact.rfind(" ")]
    if exact is not None and sample.startswith(exact):
        return exact, "exact"
    return _common_prefix(original, sample), "shared-prefix"


def detectgpt_samples(files: Mapping[str, Path], options: Mapping[str, Any]) -> Rows:
    """One model's samples on one domain (``options.model``, ``options.domain``), in file
    order: ``{"id": f"{source_id}.{model}", "source_id" (the :func:`detectgpt_human` id of its
    document, so every ``{domain}_{model}`` file of the domain is read), "domain", "model",
    "decoding" (``options.decoding``), "prompt", "prompt_kind", "text" (the sample, verbatim),
    "human_trim_words" (the words of this file's human copy)}``. ``gpt2_bpe`` is GPT-2's
    ``gpt2.tiktoken`` ranks file."""
    domain, model = _opt(options, "domain"), _opt(options, "model")
    decoding = _opt(options, "decoding")
    _check_names(files, ("gpt2_bpe",))
    name = f"{domain}_{model}"
    if name not in files:
        raise GenmetricsError(f"upstream.files: {name!r} is required (options domain, model)")
    needs_bpe = domain != "pubmed" and model != "gpt-neox-20b"
    if needs_bpe and "gpt2_bpe" not in files:
        raise GenmetricsError(
            f"upstream.files: 'gpt2_bpe' (GPT-2's gpt2.tiktoken) is required for {name}'s prompts"
        )
    enc = _gpt2(Path(files["gpt2_bpe"])) if needs_bpe else None
    copies = [
        (m, _originals(Path(files[f"{domain}_{m}"]))) for m in MODELS if f"{domain}_{m}" in files
    ]
    _, where = _documents(copies)
    data = json.loads(_text(Path(files[name])))
    originals, samples = data["original"], data.get("sampled")
    if not isinstance(samples, list) or len(samples) != len(originals):
        raise GenmetricsError(f"{files[name]}: 'sampled' is not a list as long as 'original'")
    rows: Rows = []
    for j, (original, sample) in enumerate(zip(originals, samples, strict=True)):
        prompt, kind = _prompt(original, sample, domain, model, enc)
        sid = f"{domain}-{where[model][j]:04d}"
        rows.append(
            {
                "id": f"{sid}.{model}",
                "source_id": sid,
                "domain": domain,
                "model": model,
                "decoding": decoding,
                "prompt": prompt,
                "prompt_kind": kind,
                "text": sample,
                "human_trim_words": len(original.split(" ")),
            }
        )
    return rows


def face_demo_samples(files: Mapping[str, Path], options: Mapping[str, Any]) -> Rows:
    """FACE's demo draw of GPT-2 117M pure samples (CLCS-SUSTech/FACE ``data/demo_model.txt``,
    1,000 lines, each a sample of gpt-2-output-dataset's ``small-117M`` test (lines 0–499) or
    valid (500–999) file with its newlines replaced by spaces): each line stripped; a line empty
    or a bare "." is left out (FACE's later commit removed those four); ``{"id":
    "g2s-face-NNNN" (NNNN its line), "model", "decoding" (``options``), "split", "text",
    "n_tokens_gpt2" (its GPT-2 BPE count; ``gpt2_bpe`` is GPT-2's ``gpt2.tiktoken``)}``."""
    _check_names_only(files, ("samples", "gpt2_bpe"))
    enc = _gpt2(Path(files["gpt2_bpe"]))
    model, decoding = _opt(options, "model"), _opt(options, "decoding")
    rows: Rows = []
    for i, line in enumerate(_text(Path(files["samples"])).split("\n")):
        text = line.strip()
        if text in ("", "."):
            continue
        rows.append(
            {
                "id": f"g2s-face-{i:04d}",
                "model": model,
                "decoding": decoding,
                "split": "test" if i < 500 else "valid",
                "text": text,
                "n_tokens_gpt2": len(enc.encode(text)),
            }
        )
    return rows


def _check_names_only(files: Mapping[str, Path], names: tuple[str, ...]) -> None:
    """``files`` names exactly ``names`` (an error naming what is missing or extra)."""
    if set(files) != set(names):
        raise GenmetricsError(
            f"upstream.files: needs exactly {', '.join(names)}, got {', '.join(sorted(files))}"
        )
