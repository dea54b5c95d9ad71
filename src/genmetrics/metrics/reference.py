"""Reference-based scores: corpus BLEU (sacrebleu) and ROUGE (rouge-score), deterministic.

* ``bleu``: ``sacrebleu`` 2.x ``BLEU(tokenize=..., lowercase=...).corpus_score(hyps, [refs])`` —
  identical to ``sacrebleu.corpus_bleu(hyps, [refs])``; one reference per hypothesis; 0–100
  scale; the signature (``nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:…``) is
  returned in ``extras["signature"]``.
* ``rouge``: ``rouge_score.rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL",
  "rougeLsum"], use_stemmer)``, ``score(target=reference, prediction=candidate)`` per pair, plain
  mean over pairs (no bootstrap aggregation, unlike HF ``evaluate``'s default). rougeLsum
  splits summaries on ``"\\n"``; with ``split_sentences=true`` (default) the texts are first
  re-joined as one NLTK ``sent_tokenize`` sentence per line (as HF's summarisation scripts do),
  only for rougeLsum. rouge-score's tokenizer keeps only ``[a-z0-9]`` after lower-casing, so a
  text without ASCII letters or digits scores 0 (counted in ``n["empty_tokens"]``).

Empty texts stay in the corpus and are scored as the reference packages score them: in BLEU
an empty hypothesis adds no n-gram and no length while its reference still adds its length
(so the brevity penalty falls); in ROUGE a pair with an empty side scores 0 and counts in the
mean and in ``n["empty_tokens"]``.
"""

from __future__ import annotations

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics.registry import HIGHER, MetricResult, register
from genmetrics.params import BOOL, Options

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


@register(
    "bleu",
    input="texts",
    paired=True,
    reference="required",
    values={"bleu": HIGHER},
    params={
        "tokenize": (
            Options(
                "13a",
                "none",
                "intl",
                "char",
                "zh",
                "ja-mecab",
                "ko-mecab",
                "flores101",
                "flores200",
            ),
            "sacrebleu tokenizer",
        ),
        "lowercase": (BOOL, "lower-case before scoring"),
    },
    upstream="sacrebleu corpus_bleu",
    citation="Papineni et al. (2002); Post (2018)",
)
def bleu(
    candidate: list[str],
    reference: list[str],
    *,
    tokenize: str = "13a",
    lowercase: bool = False,
) -> MetricResult:
    """Corpus BLEU = BP · exp(Σ_n ¼ log p_n) × 100, as ``sacrebleu.corpus_bleu(hyps, [refs])``
    (exp smoothing, 13a tokenisation, mixed case by default). Empty texts are kept and scored
    as sacrebleu scores them."""
    from sacrebleu.metrics import BLEU

    try:
        scorer = BLEU(tokenize=tokenize, lowercase=lowercase)
    except Exception as e:  # e.g. ja-mecab / ko-mecab without their optional packages
        raise GenmetricsError(f"bleu: cannot use tokenize={tokenize!r}: {e}") from None
    out = scorer.corpus_score(candidate, [reference])
    return MetricResult(
        values={"bleu": float(out.score)},
        extras={
            "signature": str(scorer.get_signature()),
            "precisions": [float(p) for p in out.precisions],
            "bp": float(out.bp),
            "sys_len": int(out.sys_len),
            "ref_len": int(out.ref_len),
        },
        n={"candidate": len(candidate), "reference": len(reference)},
    )


def sentence_lines(text: str) -> str:
    """One NLTK ``sent_tokenize`` sentence per line (the input rougeLsum expects)."""
    import nltk

    from genmetrics.assets import use_nltk_data

    use_nltk_data()
    return "\n".join(nltk.sent_tokenize(text))


@register(
    "rouge",
    input="texts",
    paired=True,
    reference="required",
    values={
        "rouge1": HIGHER,
        "rouge2": HIGHER,
        "rougeL": HIGHER,
        "rougeLsum": HIGHER,
        **{f"{t}_{m}": HIGHER for t in ROUGE_TYPES for m in ("precision", "recall")},
    },
    params={
        "use_stemmer": (BOOL, "Porter stemming"),
        "split_sentences": (BOOL, "rougeLsum: one NLTK sentence per line"),
    },
    aggregation="mean of per-pair scores; empty texts score 0 as rouge-score does",
    upstream="rouge-score RougeScorer",
    assets=lambda p: ("nltk_data",) if p["split_sentences"] else (),
    citation="Lin (2004)",
)
def rouge(
    candidate: list[str],
    reference: list[str],
    *,
    use_stemmer: bool = False,
    split_sentences: bool = True,
) -> MetricResult:
    """ROUGE-1/2/L/Lsum F-measure (and precision, recall): mean over pairs of rouge-score's
    per-pair scores, ``RougeScorer(types, use_stemmer).score(reference, candidate)``. A pair
    with an empty side scores 0, as in rouge-score, and counts in the mean."""
    from rouge_score import rouge_scorer, tokenize

    plain = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=use_stemmer)
    lsum = rouge_scorer.RougeScorer(["rougeLsum"], use_stemmer=use_stemmer)
    per: dict[str, list[float]] = {
        f"{t}_{m}": [] for t in ROUGE_TYPES for m in ("fmeasure", "precision", "recall")
    }
    empty = 0
    for hyp, ref in zip(candidate, reference, strict=True):
        if not tokenize.tokenize(hyp, None) or not tokenize.tokenize(ref, None):
            empty += 1
        s = plain.score(ref, hyp)
        if split_sentences:
            s.update(lsum.score(sentence_lines(ref), sentence_lines(hyp)))
        else:
            s.update(lsum.score(ref, hyp))
        for t in ROUGE_TYPES:
            for m in ("fmeasure", "precision", "recall"):
                per[f"{t}_{m}"].append(getattr(s[t], m))
    values: dict[str, float] = {}
    for t in ROUGE_TYPES:
        values[t] = float(np.mean(per[f"{t}_fmeasure"]))
    for t in ROUGE_TYPES:
        for m in ("precision", "recall"):
            values[f"{t}_{m}"] = float(np.mean(per[f"{t}_{m}"]))
    return MetricResult(
        values=values,
        extras={t: np.asarray(per[f"{t}_fmeasure"]) for t in ROUGE_TYPES},
        n={"candidate": len(candidate), "reference": len(reference), "empty_tokens": empty},
    )
