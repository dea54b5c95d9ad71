"""Per-prompt diversity of NoveltyBench (Zhang et al. 2025): ``distinct_k`` and ``utility_k``.

A model can be diverse across prompts and repetitive within each: corpus scores (distinct-n,
self-BLEU) pool every text, NoveltyBench draws k samples per prompt and counts the distinct
ones. Matched against novelty-bench/novelty-bench, commit 5b22b53 (``src/partition.py``,
``src/score.py``, ``src/summarize.py``):

* **Samples.** A prompt's samples are the candidate rows with its ``prompt_id`` (the workflow's
  ``generation.samples_per_prompt``: ids ``<prompt id>~<j>``), in file order (the generation
  file lists j = 0 .. s-1). ``k``: null takes every prompt's samples, which must be equally
  many; a number takes each prompt's first k. A prompt with fewer than k samples is refused
  (``short_prompts: refuse``) or left out and counted (``exclude``: ``n.excluded_prompts``);
  samples beyond the k-th are counted in ``n.unscored_samples``. Never a silent drop.
* **Partition** (``partition_responses``): greedy. Sample i, if not yet in a class, opens class
  c and is its representative; every later unassigned sample j equivalent to *sample i* (not
  to the other members) joins c. Classes are numbered in order of their first sample.
* **Equivalence** (``equivalence``; each its own default ``threshold``, a preset):

  - ``ngram``: ROUGE-n F-measure of the two samples' tokens > threshold; n = 1 and 0.458 are
    NoveltyBench's ``equivalence_check_unigram`` (``rouge_score.RougeScorer(["rouge1"])``,
    no stemming). ``tokenizer: rouge_score`` is that scorer's ASCII tokenizer,
    ``unicode`` (default) the same rule over the letters of every script (identical on ASCII
    text, see :mod:`genmetrics.metrics.homogenization`). ``reflexive: true`` (ours) also makes
    answers equal after ``strip()`` equivalent: rouge_score gives two texts without an n-gram
    F = 0, so NoveltyBench counts k empty answers, or k copies of one emoji (its own
    example submission answers "Pick an emoji at random." with 🔮 nine times and 🌟 once:
    10 classes), as k distinct ones (with it: 1 and 2); ``reflexive: false`` is
    NoveltyBench's check alone. Answers with an n-gram are unchanged by it (equal texts
    have F = 1).
  - ``embedding``: cosine of the two samples' embeddings (the workflow's embed rule, a
    featurizer on each generation's continuation) > threshold. Not in NoveltyBench; 0.9 is
    our default (near-paraphrases under a sentence encoder), not a published value.
  - ``classifier``: NoveltyBench's ``equivalence_check_classifier``: samples of at most 5
    lowercased whitespace words on both sides are equivalent when they share at least half
    of the longer one's words (``maybe_test_equality``); others when the classifier's
    P(equivalent) > 0.102, for the input ``[CLS] a [SEP] b [SEP]`` (each side truncated to
    128 tokens, token types 0 up to the first [SEP]), a = the representative. The samples
    the classifier read with more than 128 tokens are counted (the result's ``truncation``:
    the score record's ``truncation`` and a line in its ``warnings``). The classifier
    (hub ``yimingzhang/deberta-v3-large-generation-similarity`` with the
    ``microsoft/deberta-v3-large`` tokenizer) is on no package registry: ``model`` must be a
    local folder holding both; genmetrics downloads none. Pairs run in padded batches with an
    attention mask (NoveltyBench runs one unpadded pair at a time: equal up to float error).

* **distinct_k** (``summarize.py``: ``mean(len(partition_scores))``): the number of classes of
  each prompt's k samples, averaged over prompts. (``partition.py``'s ``distinct`` field is
  ``max(partition)`` = classes − 1; the example leaderboard submission's ``summary.json``
  averages that field, 0.83 where the classes average 1.83.)
* **utility_k** (``score.py``): per prompt, g_i = q_i if sample i opens a new class, else 0;
  utility = Σ_i p^i g_i / Σ_i p^i (i = 0 .. k−1, ``np.average`` with weights p^i, patience p
  = 0.8 by default), averaged over prompts. NoveltyBench's q_i is a reward model's score
  mapped to 1..10; here ``quality`` names a numeric field of each record (a bool counts 0/1,
  e.g. a few-shot generation's ``parsed``), and null gives q_i = 1 (the discounted share of
  samples that open a class, between 0 and 1). ``quality_threshold`` gates it: q_i = 1 when
  the value is at least the threshold, else 0.

Texts compared are each generation's ``continuation`` (the model's answer; a prefix prompt
shared by the k samples would otherwise count as overlap), so the human references, one per
prompt, are not scored.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics.registry import HIGHER, MetricResult, Preset, register
from genmetrics.params import BOOL, STRING, Const, Interval, Options

__all__ = [
    "classifier_score",
    "distinct_k",
    "partition",
    "quick_equality",
    "rouge_n_f",
    "utility",
    "utility_k",
]

#: what a pair's similarity must exceed, per equivalence (the presets of ``equivalence``)
EQUIVALENCES = {
    "ngram": Preset(
        "NoveltyBench's unigram check: ROUGE-1 F > 0.458 (partition.py, 5b22b53)",
        defaults={"threshold": 0.458},
    ),
    "embedding": Preset(
        "cosine of the featurizer's embeddings > 0.9 (ours; NoveltyBench has no such check)",
        defaults={"threshold": 0.9},
    ),
    "classifier": Preset(
        "NoveltyBench's DeBERTa classifier: P(equivalent) > 0.102 (partition.py, 5b22b53)",
        defaults={"threshold": 0.102},
    ),
}
#: the parameters each equivalence reads (the others must keep their defaults)
_ONLY_FOR = {
    "n": "ngram",
    "tokenizer": "ngram",
    "use_stemmer": "ngram",
    "reflexive": "ngram",
    "model": "classifier",
    "batch_size": "classifier",
}
_CLASSIFIER = "yimingzhang/deberta-v3-large-generation-similarity"
_MAX_TOKENS = 128  # per side of a classifier pair (partition.py)

Same = Callable[[int, list[int]], Sequence[bool]]


# ---------------------------------------------------------------- partition and utility


def partition(n: int, same: Same) -> list[int]:
    """NoveltyBench's greedy partition of n samples: ``same(i, js)`` says, for each unassigned
    later sample j, whether it is equivalent to sample i (the representative of i's class).
    Class labels are 0, 1, ... in order of each class's first sample."""
    labels = [-1] * n
    classes = 0
    for i in range(n):
        if labels[i] >= 0:
            continue
        labels[i] = classes
        rest = [j for j in range(i + 1, n) if labels[j] < 0]
        if rest:
            for j, s in zip(rest, same(i, rest), strict=True):
                if s:
                    labels[j] = classes
        classes += 1
    return labels


def utility(labels: Sequence[int], quality: Sequence[float], patience: float) -> float:
    """NoveltyBench's cumulative utility of one prompt (score.py): Σ p^i g_i / Σ p^i with
    g_i = quality_i where sample i opens a new class, else 0."""
    seen: set[int] = set()
    gains = []
    for c, q in zip(labels, quality, strict=True):
        gains.append(0.0 if c in seen else float(q))
        seen.add(c)
    return float(np.average(gains, weights=patience ** np.arange(len(gains))))


# ---------------------------------------------------------------- equivalences


def rouge_n_f(a: Counter, b: Counter) -> float:
    """rouge_score's n-gram F-measure of two n-gram counts (``_score_ngrams``; symmetric):
    overlap / max(count, 1) each way, F = 2PR / (P + R), 0 when P + R = 0."""
    overlap = sum(min(c, b[g]) for g, c in a.items() if g in b)
    precision = overlap / max(sum(b.values()), 1)
    recall = overlap / max(sum(a.values()), 1)
    return 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0


def _ngram_same(
    texts: Sequence[str], n: int, threshold: float, tokenizer: str, stem: bool, reflexive: bool
) -> Same:
    from genmetrics.metrics.homogenization import rouge_tokenize

    toks = rouge_tokenize(texts, use_stemmer=stem, tokenizer=tokenizer)
    stripped = [t.strip() for t in texts]
    grams = [Counter(tuple(t[s : s + n]) for s in range(len(t) - n + 1)) for t in toks]

    def same(i: int, js: list[int]) -> list[bool]:
        return [
            (reflexive and stripped[i] == stripped[j]) or rouge_n_f(grams[i], grams[j]) > threshold
            for j in js
        ]

    return same


def _embedding_same(emb: np.ndarray, threshold: float) -> Same:
    x = np.asarray(emb, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    unit = x / np.where(norms > 0, norms, 1.0)  # a zero vector has cosine 0 with everything

    def same(i: int, js: list[int]) -> list[bool]:
        return list(unit[js] @ unit[i] > threshold)

    return same


def quick_equality(a: str, b: str) -> bool | None:
    """NoveltyBench's ``maybe_test_equality``: for answers of at most 5 lowercased
    whitespace words, equal when they share at least half of the longer one's words; None
    (ask the classifier) otherwise."""
    wa, wb = a.strip().lower().split(), b.strip().lower().split()
    longest = max(len(wa), len(wb))
    if longest <= 5:
        return len(set(wa) & set(wb)) * 2 >= longest
    return None


@functools.lru_cache(maxsize=2)
def _classifier(folder: str, device: str) -> tuple[Any, Any]:
    """The tokenizer and the pair classifier saved in ``folder``; a folder that holds no such
    pair (no config, no weights, no tokenizer, not two labels, no [CLS]/[SEP]) is an error
    naming it, not transformers' own exception."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    def refuse(reason: str) -> GenmetricsError:
        return GenmetricsError(
            f"equivalence=classifier: model {folder!r} is not a pair classifier with its "
            f"tokenizer ({reason}); it needs NoveltyBench's classifier ({_CLASSIFIER}) and "
            "its tokenizer, saved with save_pretrained"
        )

    if not (Path(folder) / "config.json").is_file():
        raise refuse("no config.json")
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder)
        model = AutoModelForSequenceClassification.from_pretrained(folder)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        first = " ".join(str(e).split())[:200]
        raise refuse(f"transformers cannot load it: {type(e).__name__}: {first}") from None
    if model.config.num_labels != 2:
        raise refuse(f"{model.config.num_labels} labels, not 2 (different, equivalent)")
    if tokenizer.cls_token_id is None or tokenizer.sep_token_id is None:
        raise refuse("its tokenizer has no [CLS] or no [SEP] token")
    model = model.to(device)
    model.eval()
    return tokenizer, model


def _check_folder(model: str | None) -> str:
    if model is None or not Path(model).is_dir():
        got = "none given" if model is None else f"{model!r} is not a folder"
        raise GenmetricsError(
            f"equivalence=classifier needs model: a local folder with NoveltyBench's classifier "
            f"({_CLASSIFIER}) and its tokenizer (microsoft/deberta-v3-large), saved with "
            f"save_pretrained; genmetrics downloads no classifier ({got})"
        )
    return str(model)


def classifier_score(
    pairs: Sequence[tuple[str, str]],
    model: str,
    batch_size: int = 32,
    device: str | None = None,
    lengths: dict[str, int] | None = None,
) -> np.ndarray:
    """P(equivalent) = softmax(logits)[1] of NoveltyBench's classifier for each (a, b), from
    ``[CLS] a [SEP] b [SEP]`` with each side cut to 128 tokens, token types 0 through the first
    [SEP] and 1 after (partition.py ``classifier_score``); padded batches with a mask.
    ``lengths``, when given, gets each text's whole token count (before the cut, no special
    tokens): a text with more than 128 was read from its first 128 only."""
    import torch

    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    tokenizer, net = _classifier(_check_folder(model), device)

    @functools.cache
    def encode(s: str) -> list[int]:
        ids = tokenizer.encode(s, truncation=True, max_length=_MAX_TOKENS, add_special_tokens=False)
        if lengths is not None:  # a text that kept the maximum is counted whole: cut or fit?
            whole = len(ids)
            if whole >= _MAX_TOKENS:
                whole = len(tokenizer.encode(s, add_special_tokens=False))
            lengths[s] = whole
        return ids

    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    out = np.zeros(len(pairs))
    for s in range(0, len(pairs), batch_size):
        rows, types = [], []
        for a, b in pairs[s : s + batch_size]:
            first = [cls, *encode(a), sep]
            rows.append(first + [*encode(b), sep])
            types.append([0] * len(first) + [1] * (len(rows[-1]) - len(first)))
        width = max(map(len, rows))
        ids = torch.full((len(rows), width), pad, dtype=torch.int64)
        tt = torch.zeros((len(rows), width), dtype=torch.int64)
        mask = torch.zeros((len(rows), width), dtype=torch.int64)
        for r, (row, typ) in enumerate(zip(rows, types, strict=True)):
            ids[r, : len(row)] = torch.tensor(row)
            tt[r, : len(row)] = torch.tensor(typ)
            mask[r, : len(row)] = 1
        with torch.inference_mode():
            logits = net(
                input_ids=ids.to(device),
                token_type_ids=tt.to(device),
                attention_mask=mask.to(device),
            ).logits
        out[s : s + len(rows)] = logits.float().softmax(-1)[:, 1].cpu().numpy()
    return out


def _classifier_same(
    texts: Sequence[str],
    model: str,
    threshold: float,
    batch_size: int,
    lengths: dict[str, int] | None = None,
) -> Same:
    """The classifier's equivalence among ``texts``; ``lengths`` gets the whole token count
    of each text the classifier read (:func:`classifier_score`)."""
    _check_folder(model)

    def same(i: int, js: list[int]) -> list[bool]:
        quick = [quick_equality(texts[i], texts[j]) for j in js]
        ask = [j for j, q in zip(js, quick, strict=True) if q is None]
        pairs = [(texts[i], texts[j]) for j in ask]
        scores = iter(classifier_score(pairs, model, batch_size, lengths=lengths))
        return [bool(next(scores) > threshold) if q is None else q for q in quick]

    return same


# ---------------------------------------------------------------- grouping by prompt


def _groups(
    prompt_ids: Sequence[str], k: int | None, short_prompts: str, what: str
) -> tuple[list[tuple[str, list[int]]], int, dict[str, int]]:
    """Each prompt's sample indices (file order), cut to k; (groups, k, counts)."""
    by_prompt: dict[str, list[int]] = {}
    for i, p in enumerate(prompt_ids):
        by_prompt.setdefault(p, []).append(i)
    sizes = Counter(len(v) for v in by_prompt.values())
    want = k if k is not None else max(sizes)
    if want < 2:
        raise GenmetricsError(
            f"{what}: every prompt has 1 sample; it needs at least 2 per prompt "
            "(generation.samples_per_prompt)"
        )
    short = [(p, len(v)) for p, v in by_prompt.items() if len(v) < want]
    if short and short_prompts == "refuse":
        how = "k" if k is not None else "the most any prompt has"
        raise GenmetricsError(
            f"{what}: {len(short)} of {len(by_prompt)} prompt(s) have fewer than {want} samples "
            f"({how}), first {short[0][0]!r} with {short[0][1]} (samples per prompt: "
            f"{dict(sorted(sizes.items()))}); set k, or short_prompts: exclude"
        )
    groups = [(p, v[:want]) for p, v in by_prompt.items() if len(v) >= want]
    if not groups:
        raise GenmetricsError(f"{what}: no prompt has {want} samples (k); lower k")
    counts = {
        "prompts": len(groups),
        "excluded_prompts": len(short),
        "unscored_samples": sum(len(v) - want for _, v in by_prompt.items() if len(v) > want),
    }
    return groups, want, counts


def _check_unused(what: str, params: Mapping[str, Any], defaults: Mapping[str, Any]) -> None:
    eq = params["equivalence"]
    for name, owner in _ONLY_FOR.items():
        if owner != eq and params[name] != defaults[name]:
            raise GenmetricsError(
                f"{what}: {name} applies to equivalence={owner} only, not {eq} "
                f"(got {name}={params[name]!r})"
            )


def _partitions(
    what: str, candidate: Any, prompt_ids: Sequence[str], params: Mapping[str, Any]
) -> tuple[list[tuple[str, list[int]]], list[list[int]], int, dict[str, int], dict]:
    """The samples of each prompt, their partition under ``params``' equivalence, k, the
    counts and the ``truncation`` of the classifier (``{}`` for the other equivalences):
    :func:`~genmetrics.metrics.kinds.truncation_record` over the samples it read, each side
    of a pair cut to 128 tokens."""
    from genmetrics.metrics.kinds import truncation_record

    eq, thr = params["equivalence"], params["threshold"]
    groups, k, counts = _groups(prompt_ids, params["k"], params["short_prompts"], what)
    texts = [] if eq == "embedding" else [r["continuation"] for r in candidate]
    lengths: dict[str, int] = {}  # whole token counts of the texts the classifier read

    def same_for(idx: list[int]) -> Same:  # the equivalence among one prompt's samples
        if eq == "embedding":
            return _embedding_same(np.asarray(candidate)[idx], thr)
        mine = [texts[i] for i in idx]
        if eq == "ngram":
            p = params
            return _ngram_same(mine, p["n"], thr, p["tokenizer"], p["use_stemmer"], p["reflexive"])
        return _classifier_same(mine, params["model"], thr, params["batch_size"], lengths)

    labels = [partition(len(idx), same_for(idx)) for _, idx in groups]
    truncation = {}
    if eq == "classifier":  # each sample the classifier read, counted once per sample
        read = [lengths[texts[i]] for _, idx in groups for i in idx if texts[i] in lengths]
        truncation = {"candidate": truncation_record(read, _MAX_TOKENS)}
    return groups, labels, k, counts, truncation


_PARAMS = {
    "equivalence": (
        Options(*EQUIVALENCES),
        "when two samples are the same: ngram, embedding, classifier",
    ),
    "threshold": (Interval(float, -1, 1), "equivalent when the similarity exceeds it (preset)"),
    "k": ((Interval(int, 2, None), Const(None)), "samples per prompt (null: all, equally many)"),
    "short_prompts": (Options("refuse", "exclude"), "prompts with fewer than k samples"),
    "n": (Interval(int, 1, None), "ngram: ROUGE-n order (1: NoveltyBench's unigram check)"),
    "tokenizer": (Options("unicode", "rouge_score"), "ngram: words of every script, or ASCII"),
    "use_stemmer": (BOOL, "ngram: Porter stemming (NoveltyBench: none)"),
    "reflexive": (BOOL, "ngram: answers equal after strip() are equivalent (empty ones too)"),
    "model": ((STRING, Const(None)), "classifier: local folder of NoveltyBench's classifier"),
    "batch_size": (Interval(int, 1, None), "classifier: pairs per forward pass"),
}
_FACTS: dict[str, Any] = {
    "by_prompt": True,
    "part": "continuation",
    "input_by": {"equivalence": {"embedding": "embeddings"}},
    "presets": {"equivalence": EQUIVALENCES},
    "family": "diversity",
    "loads_model": lambda p: p["equivalence"] == "classifier",
    "min_items": lambda p: (p["k"], "k") if p["k"] else (2, ""),
    "citation": "Zhang et al. (2025)",
    "duplicates_change_value": False,  # a mean over prompts of each prompt's own samples
}


@register(
    "distinct_k",
    input="records",
    values={
        "distinct_k": HIGHER,
        "distinct_k_median": HIGHER,
        "distinct_k_min": HIGHER,
        "prompts": None,
        "k": None,
    },
    scale={
        "distinct_k": "≥ 1",
        "distinct_k_median": "≥ 1",
        "distinct_k_min": "≥ 1",
        "prompts": "count",
        "k": "count",
    },
    params=_PARAMS,
    aggregation="mean over prompts of the classes among each prompt's k samples",
    upstream="NoveltyBench 5b22b53 partition_responses, summarize mean_distinct",
    **_FACTS,
)
def distinct_k(
    candidate: Any,
    prompt_ids: Sequence[str],
    *,
    equivalence: str = "ngram",
    threshold: float = 0.458,
    k: int | None = None,
    short_prompts: str = "refuse",
    n: int = 1,
    tokenizer: str = "unicode",
    use_stemmer: bool = False,
    reflexive: bool = True,
    model: str | None = None,
    batch_size: int = 32,
) -> MetricResult:
    """Distinct_k (NoveltyBench): per prompt, the number of equivalence classes among its k
    samples (greedy partition, each sample compared with each class's first sample), averaged
    over prompts; also its median and minimum over prompts (module doc: conventions)."""
    params = dict(locals())
    _check_unused("distinct_k", params, distinct_k.__kwdefaults__)
    groups, labels, k, counts, cut = _partitions("distinct_k", candidate, prompt_ids, params)
    classes = np.array([max(lab) + 1 for lab in labels], dtype=np.float64)
    return MetricResult(
        values={
            "distinct_k": float(classes.mean()),
            "distinct_k_median": float(np.median(classes)),
            "distinct_k_min": float(classes.min()),
            "prompts": float(len(groups)),
            "k": float(k),
        },
        extras={
            "per_prompt": {
                "prompt_ids": [p for p, _ in groups],
                "distinct": classes.astype(int).tolist(),
                "partitions": labels,
            }
        },
        n={"candidate": len(prompt_ids), **counts},
        truncation=cut,
    )


def _quality(
    candidate: Any, idx: Sequence[int], field: str | None, gate: float | None, what: str
) -> list[float]:
    """Each sample's quality: 1 (no field), the field's number (a bool: 0/1), or the gate's
    0/1; a missing, non-numeric, non-finite or negative value is an error naming the row."""
    if field is None:
        return [1.0] * len(idx)
    out = []
    for i in idx:
        row = candidate[i]
        v = row.get(field)
        if isinstance(v, bool):
            v = float(v)
        if not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise GenmetricsError(
                f"{what}: record {i} (id {row.get('id', '?')!r}) has quality field {field!r} = "
                f"{v!r}; it must be a finite number >= 0 or a bool (map raw rewards to ratings "
                "first, as NoveltyBench maps its reward model's to 1-10)"
            )
        out.append(float(v) if gate is None else float(v >= gate))
    return out


@register(
    "utility_k",
    input="records",
    values={"utility_k": HIGHER, "utility_k_median": HIGHER, "prompts": None, "k": None},
    scale={"utility_k": "≥ 0", "utility_k_median": "≥ 0", "prompts": "count", "k": "count"},
    params={
        **_PARAMS,
        "patience": (
            Interval(float, 0, 1, closed="right"),
            "discount p: sample i weighs p^i (NoveltyBench's --patience)",
        ),
        "quality": ((STRING, Const(None)), "record field of each sample's quality (null: 1)"),
        "quality_threshold": (
            (Interval(float), Const(None)),
            "quality gate: 1 where the field is at least it, else 0 (null: the value)",
        ),
    },
    aggregation="mean over prompts of the discounted quality of each new class's first sample",
    upstream="NoveltyBench 5b22b53 score.py utility, summarize mean_utility",
    **_FACTS,
)
def utility_k(
    candidate: Any,
    prompt_ids: Sequence[str],
    *,
    equivalence: str = "ngram",
    threshold: float = 0.458,
    k: int | None = None,
    short_prompts: str = "refuse",
    n: int = 1,
    tokenizer: str = "unicode",
    use_stemmer: bool = False,
    reflexive: bool = True,
    model: str | None = None,
    batch_size: int = 32,
    patience: float = 0.8,
    quality: str | None = None,
    quality_threshold: float | None = None,
) -> MetricResult:
    """Utility_k (NoveltyBench's cumulative utility): per prompt Σ_i p^i g_i / Σ_i p^i over its
    k samples, g_i = the quality of sample i where it opens a new class, else 0; averaged over
    prompts. Quality: a record field (null: 1 each), optionally gated by a threshold."""
    params = dict(locals())
    _check_unused("utility_k", params, utility_k.__kwdefaults__)
    if quality_threshold is not None and quality is None:
        raise GenmetricsError("utility_k: quality_threshold gates the quality field; set quality")
    if quality is not None and equivalence == "embedding":
        raise GenmetricsError(
            "utility_k: quality is read from the records; with equivalence=embedding the input "
            "is the embeddings file, which has no per-text fields"
        )
    groups, labels, k, counts, cut = _partitions("utility_k", candidate, prompt_ids, params)
    per = np.array(
        [
            utility(
                lab, _quality(candidate, idx, quality, quality_threshold, "utility_k"), patience
            )
            for (_, idx), lab in zip(groups, labels, strict=True)
        ]
    )
    return MetricResult(
        values={
            "utility_k": float(per.mean()),
            "utility_k_median": float(np.median(per)),
            "prompts": float(len(groups)),
            "k": float(k),
        },
        extras={
            "per_prompt": {
                "prompt_ids": [p for p, _ in groups],
                "utility": per.tolist(),
                "partitions": labels,
            }
        },
        n={"candidate": len(prompt_ids), **counts},
        truncation=cut,
    )
