"""Reference-based scores: corpus BLEU (sacrebleu), ROUGE (rouge-score) and BERTScore
(bert-score), deterministic.

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
* ``bertscore``: ``bert_score.score(cands, refs, model_type, num_layers, idf)`` per pair
  (greedy cosine matching of one encoder layer's token embeddings; F1 = 2PR/(P+R); no baseline
  rescaling), plain mean over pairs. The encoder defaults to the offline all-MiniLM-L6-v2
  (its last layer, 6), shared with BERTScore homogenization.

Empty texts stay in the corpus and are scored as the reference packages score them: in BLEU
an empty hypothesis adds no n-gram and no length while its reference still adds its length
(so the brevity penalty falls); in ROUGE a pair with an empty side scores 0 and counts in the
mean and in ``n["empty_tokens"]``; in BERTScore a pair with an empty side (no word piece
after ``strip()``) gets P = R = F1 = 0, as bert_score sets it, and counts in the mean and in
``n["empty_tokens"]``.
"""

from __future__ import annotations

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics.registry import HIGHER, MetricResult, register
from genmetrics.params import BOOL, STRING, Const, Interval, Options

ROUGE_TYPES = ("rouge1", "rouge2", "rougeL", "rougeLsum")


@register(
    "bleu",
    input="texts",
    paired=True,
    reference="required",
    values={"bleu": HIGHER},
    family="reference",
    scale="0–100",  # sacrebleu's score
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
    family="reference",
    scale="0–1",
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
        extras={
            **{t: np.asarray(per[f"{t}_fmeasure"]) for t in ROUGE_TYPES},
            # one number per pair for every value (genmetrics.agreement.scoring scores judged texts)
            "per_pair": {
                v: np.asarray(per[f"{v}_fmeasure" if v in ROUGE_TYPES else v]) for v in values
            },
        },
        n={"candidate": len(candidate), "reference": len(reference), "empty_tokens": empty},
    )


@register(
    "bertscore",
    input="texts",
    paired=True,
    reference="required",
    values={"bertscore_precision": HIGHER, "bertscore_recall": HIGHER, "bertscore_f1": HIGHER},
    family="reference",
    headline=("bertscore_f1",),
    scale="−1–1",  # means of token cosines, no baseline rescaling
    params={
        "model": ((STRING, Const(None)), "encoder folder or hub id (null: the offline MiniLM)"),
        "num_layers": (
            (Interval(int, 1, None), Const(None)),
            "encoder layer (null: bert_score's table for a hub id, else the last layer)",
        ),
        "batch_size": (Interval(int, 1, None), "bert_score batch size"),
        "idf": (BOOL, "idf-weight word pieces, idf computed over the references"),
    },
    aggregation="mean of per-pair scores; a pair with an empty side scores 0 as bert_score does",
    upstream="bert-score score (no baseline rescaling)",
    assets=lambda p: ("minilm",) if p["model"] is None else (),
    loads_model=lambda p: True,
    citation="Zhang et al. (2020)",
)
def bertscore(
    candidate: list[str],
    reference: list[str],
    *,
    model: str | None = None,
    num_layers: int | None = None,
    batch_size: int = 64,
    idf: bool = False,
) -> MetricResult:
    """BERTScore precision, recall and F1 (Zhang et al. 2020): mean over pairs of
    ``bert_score.score(cands, refs, model_type, num_layers, idf, rescale_with_baseline=False)``.

    Per pair, with x̂ the candidate's and x the reference's L2-normalised token embeddings from
    layer ``num_layers`` and weights w (1, or idf; [CLS]/[SEP] weigh 0), normalised to sum 1:
    P = Σ_j w(x̂_j) max_i x_i·x̂_j, R = Σ_i w(x_i) max_j x_i·x̂_j, F1 = 2PR/(P+R) — bert_score's
    raw F1, no baseline rescaling. ``model`` (HF id or folder) defaults to the offline
    all-MiniLM-L6-v2, ``num_layers`` to bert_score's table for a hub id, else the model's last
    layer (as homogenization). ``idf=true``: idf(t) = log((M+1)/(m_t+1)) over the M references
    (bert_score's rule; so a score depends on the whole reference set). A pair with an empty
    candidate or reference (no word piece after ``strip()``) scores P = R = F1 = 0, as
    bert_score sets it (with a warning on stderr), and counts in the mean. The stored
    BERTScores of REALSumm/XSum come from another encoder (RoBERTa-large) and, by their level,
    with baseline rescaling (REALSumm mean F1 0.30, 0.70 here; Spearman 0.80 over 250
    summaries), so they compare with these in rank, not in level."""
    from bert_score import BERTScorer
    from bert_score.utils import sent_encode

    from genmetrics.metrics.homogenization import bert_score_tokenizer, bertscore_model

    try:
        model_type, layer = bertscore_model(model, num_layers)
        # a decoder's tokenizer (no model_max_length) is refused here, before the model loads
        tokenizer = bert_score_tokenizer(model_type, "bertscore: model")
        # = bert_score.score(...): the same tokenizer/model loading, idf and matching code
        scorer = BERTScorer(
            model_type=model_type,
            num_layers=layer,
            batch_size=batch_size,
            nthreads=0,  # idf counted in this process (no fork after torch started threads)
            idf=idf,
            lang=None,
            rescale_with_baseline=False,
        )
    except GenmetricsError:
        raise
    except (AssertionError, OSError, ValueError) as e:  # no such folder or layer
        raise GenmetricsError(
            f"bertscore: cannot load model={model!r}, num_layers={num_layers!r}: {e}"
        ) from None
    scorer._tokenizer = tokenizer
    if idf:
        scorer.compute_idf(reference)
    P, R, F = scorer.score(candidate, reference, batch_size=batch_size)
    encoded = {t: len(sent_encode(tokenizer, t)) for t in {*candidate, *reference}}
    bare = len(sent_encode(tokenizer, ""))  # [CLS] [SEP]
    empty = sum(
        encoded[c] <= bare or encoded[r] <= bare for c, r in zip(candidate, reference, strict=True)
    )
    per = {
        "precision": P.double().numpy(),
        "recall": R.double().numpy(),
        "f1": F.double().numpy(),
    }
    return MetricResult(
        values={f"bertscore_{k}": float(v.mean()) for k, v in per.items()},
        extras={
            **per,
            "per_pair": {f"bertscore_{k}": v for k, v in per.items()},
            "model": model_type,
            "num_layers": layer,
            "idf": idf,
        },
        n={"candidate": len(candidate), "reference": len(reference), "empty_tokens": empty},
    )
