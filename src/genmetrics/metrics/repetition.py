"""Repetition and distinct n-grams: SimCTG rep-n / diversity (Su et al. 2022) and distinct-n.

``rep_n`` reproduces ``measure_repetition_and_diversity`` of yxuansu/SimCTG
(``simctg/evaluation.py``, commit 0b56980), used by SimCTG, Contrastive Decoding and the
contrastive-search papers:

* tokens = ``text.split()`` (whitespace);
* ``eval_text`` loops ``while end_idx < len(tokens)``, so **the last n-gram of every text is
  never counted** (a text of L tokens contributes L − n n-grams, not L − n + 1). Equivalently:
  the n-grams of the text with its last token dropped;
* unique n-grams are counted **per text** and summed over texts (not corpus-level);
* rep-n = round(100 · (1 − Σ unique / Σ total), 2) — a percentage rounded to 2 decimals;
* diversity = Π_{n=2..4} (1 − rep-n / 100) with the **rounded** rep-n, a fraction in [0, 1];
  the papers' tables print round(100 · diversity, 2).

``distinct_n`` is Li et al. (2016) as pr-4-llm's ``SelfBLEUDistinctNScorer`` computes it:
GPT-2 token ids (no special tokens added), n-grams within each text (``nltk.ngrams``), pooled
over the corpus: distinct-n = |unique n-grams| / |n-grams| (0 when there is no n-gram).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics.registry import MetricResult, register


def _ngram_keys(ids: np.ndarray, n: int, base: int) -> np.ndarray:
    """Integer key of every n-gram of one id sequence (``base`` > max id), or an [M, n] array
    when the keys would not fit in int64."""
    m = len(ids) - n + 1
    if m <= 0:
        return np.empty((0,) if base**n < 2**63 else (0, n), dtype=np.int64)
    cols = [ids[i : i + m] for i in range(n)]
    if base**n < 2**63:
        key = np.zeros(m, dtype=np.int64)
        for c in cols:
            key = key * base + c
        return key
    return np.stack(cols, axis=1)


def _n_unique(keys: np.ndarray) -> int:
    if keys.size == 0:
        return 0
    if keys.ndim == 1:
        return int(np.unique(keys).size)
    return int(np.unique(keys, axis=0).shape[0])


def _to_ids(tokenized: Sequence[Sequence[str]]) -> tuple[list[np.ndarray], int]:
    vocab: dict[str, int] = {}
    out = [
        np.asarray([vocab.setdefault(t, len(vocab)) for t in toks], dtype=np.int64)
        for toks in tokenized
    ]
    return out, max(len(vocab), 1)


def simctg_counts(
    texts: Sequence[str], ns: Sequence[int] = (2, 3, 4)
) -> dict[int, tuple[int, int]]:
    """{n: (Σ per-text unique n-grams, Σ n-grams)} with SimCTG's last-n-gram exclusion."""
    ids, base = _to_ids([t.split() for t in texts])
    out: dict[int, tuple[int, int]] = {}
    for n in ns:
        uniq = total = 0
        for seq in ids:
            keys = _ngram_keys(seq[:-1], n, base)  # drop the last token = SimCTG's off-by-one
            uniq += _n_unique(keys)
            total += len(keys)
        out[n] = (uniq, total)
    return out


@register(
    "rep_n",
    input="texts",
    reference="none",
    values=("rep_2", "rep_3", "rep_4", "diversity"),
    params={"rounding": True},
)
def rep_n(candidate: list[str], *, rounding: bool = True) -> MetricResult:
    """SimCTG rep-n (n = 2, 3, 4, in %, rounded to 2 decimals) and diversity Π(1 − rep-n/100).

    Exactly ``simctg.evaluation.measure_repetition_and_diversity`` (commit 0b56980), including
    the excluded last n-gram per text and the rounding before the product; ``rounding=false``
    skips both roundings (not the reference's numbers).
    """
    counts = simctg_counts(candidate)
    values: dict[str, float] = {}
    div = 1.0
    for n, (uniq, total) in counts.items():
        if total == 0:
            raise GenmetricsError(
                f"rep_n: no {n}-gram to count: every text has at most {n} whitespace tokens "
                "(SimCTG ignores the last n-gram of each text)"
            )
        rep = (1 - uniq / total) * 100
        if rounding:
            rep = round(rep, 2)
        values[f"rep_{n}"] = rep
        div *= 1 - rep / 100
    values["diversity"] = div
    return MetricResult(
        values=values,
        extras={
            "unique": {n: u for n, (u, _) in counts.items()},
            "total": {n: t for n, (_, t) in counts.items()},
        },
        n={"candidate": len(candidate)},
    )


def _tokenize(texts: Sequence[str], tokenizer: str) -> tuple[list[np.ndarray], int]:
    if tokenizer == "gpt2":
        from genmetrics.assets import gpt2_encoding

        enc = gpt2_encoding()
        # allowed_special="all": "<|endoftext|>" in a text becomes id 50256, as HF's tokenizer does
        batches = enc.encode_batch(list(texts), allowed_special="all")
        return [np.asarray(b, dtype=np.int64) for b in batches], enc.n_vocab
    if tokenizer == "whitespace":
        return _to_ids([t.split() for t in texts])
    raise GenmetricsError(
        f"distinct_n: tokenizer must be 'gpt2' or 'whitespace', got {tokenizer!r}"
    )


@register(
    "distinct_n",
    input="texts",
    reference="none",
    values=("distinct_1", "distinct_2", "distinct_3", "distinct_4"),
    params={"tokenizer": "gpt2", "n": 4},
)
def distinct_n(candidate: list[str], *, tokenizer: str = "gpt2", n: int = 4) -> MetricResult:
    """Distinct-n for n = 1..``n``: |unique n-grams| / |n-grams| pooled over the corpus.

    As pr-4-llm's ``SelfBLEUDistinctNScorer.get_unique_ngram_fraction``: n-grams never cross
    text boundaries; a corpus with no n-gram of some order scores 0 for it (as upstream).
    ``tokenizer``: ``gpt2`` (GPT-2 BPE ids, the reference) or ``whitespace`` (``str.split``).
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise GenmetricsError(f"distinct_n: parameter 'n' must be an integer >= 1, got {n!r}")
    ids, base = _tokenize(candidate, tokenizer)
    values: dict[str, float] = {}
    uniques: dict[int, int] = {}
    totals: dict[int, int] = {}
    for k in range(1, n + 1):
        keys = [_ngram_keys(seq, k, base) for seq in ids]
        keys = [x for x in keys if len(x)]
        total = sum(len(x) for x in keys)
        uniq = _n_unique(np.concatenate(keys)) if keys else 0
        uniques[k], totals[k] = uniq, total
        values[f"distinct_{k}"] = uniq / total if total > 0 else 0.0
    return MetricResult(
        values=values,
        extras={"unique": uniques, "total": totals},
        n={"candidate": len(candidate), "tokens": int(sum(len(s) for s in ids))},
    )
