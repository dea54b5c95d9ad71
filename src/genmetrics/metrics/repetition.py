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

from genmetrics import GenmetricsError
from genmetrics.metrics._ngrams import doc_gram_counts, doc_ngrams, n_unique, tokenize
from genmetrics.metrics.registry import HIGHER, LOWER, MetricResult, register
from genmetrics.params import BOOL, Interval, Options


def simctg_counts(
    texts: Sequence[str], ns: Sequence[int] = (2, 3, 4)
) -> dict[int, tuple[int, int]]:
    """{n: (Σ per-text unique n-grams, Σ n-grams)} with SimCTG's last-n-gram exclusion."""
    grams = doc_ngrams([t.split()[:-1] for t in texts], max(ns))  # [:-1]: SimCTG's off-by-one
    out = {}
    for n in ns:
        d, gid = grams[n]
        out[n] = (len(doc_gram_counts(d, gid)[0]), len(gid))  # distinct (text, n-gram) pairs
    return out


@register(
    "rep_n",
    input="texts",
    values={"rep_2": LOWER, "rep_3": LOWER, "rep_4": LOWER, "diversity": HIGHER},
    family="diversity",
    scale={"rep_2": "%", "rep_3": "%", "rep_4": "%", "diversity": "0–1"},
    duplicates_change_value=False,  # sums of each text's own repeated n-grams
    params={"rounding": (BOOL, "round rep-n to 2 decimals before the product, as SimCTG")},
    upstream="SimCTG measure_repetition_and_diversity",
    citation="Su et al. (2022)",
)
def rep_n(candidate: list[str], *, rounding: bool = True) -> MetricResult:
    """SimCTG rep-n (n = 2, 3, 4, in %, rounded to 2 decimals) and diversity Π(1 − rep-n/100).

    Exactly ``simctg.evaluation.measure_repetition_and_diversity`` (commit 0b56980), including
    the excluded last n-gram per text and the rounding before the product; ``rounding=false``
    skips both roundings (not the reference's numbers). An empty text has no n-gram and adds
    nothing to either sum, as in SimCTG; a corpus with no n-gram at all is an error (SimCTG
    divides by zero).
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


@register(
    "distinct_n",
    input="texts",
    values={"distinct_1": HIGHER, "distinct_2": HIGHER, "distinct_3": HIGHER, "distinct_4": HIGHER},
    family="diversity",
    scale="0–1",
    params={
        "tokenizer": (Options("gpt2", "whitespace"), "GPT-2 BPE ids (pr-4-llm) or str.split"),
        "n": (Interval(int, 1, 4), "largest n"),
    },
    upstream="pr-4-llm get_unique_ngram_fraction",
    assets=lambda p: ("gpt2_bpe",) if p["tokenizer"] == "gpt2" else (),
    citation="Li et al. (2016); Le Bronnec et al. (2024)",
)
def distinct_n(candidate: list[str], *, tokenizer: str = "gpt2", n: int = 4) -> MetricResult:
    """Distinct-n for n = 1..``n``: |unique n-grams| / |n-grams| pooled over the corpus.

    As pr-4-llm's ``SelfBLEUDistinctNScorer.get_unique_ngram_fraction``: n-grams never cross
    text boundaries; a corpus with no n-gram of some order scores 0 for it (as upstream); an
    empty text adds no n-gram.
    ``tokenizer``: ``gpt2`` (GPT-2 BPE ids, the reference) or ``whitespace`` (``str.split``).
    """
    docs = tokenize(candidate, tokenizer)
    values: dict[str, float] = {}
    uniques: dict[int, int] = {}
    totals: dict[int, int] = {}
    for k, (_, gid) in doc_ngrams(docs, n).items():  # n-grams never cross texts
        uniques[k], totals[k] = n_unique(gid), len(gid)
        values[f"distinct_{k}"] = uniques[k] / totals[k] if totals[k] else 0.0
    return MetricResult(
        values=values,
        extras={"unique": uniques, "total": totals},
        n={"candidate": len(candidate), "tokens": sum(len(d) for d in docs)},
    )
