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

from collections import defaultdict
from collections.abc import Mapping, Sequence

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
    duplicates_change_value=False,  # sums of per-pair n-gram counts and lengths
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

    from genmetrics.data.assets import use_nltk_data

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
    duplicates_change_value=False,  # a mean of per-pair scores
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


#: word pieces (with [CLS]/[SEP]) per block of the streamed BERTScore: a block's distinct texts'
#: token embeddings are what memory holds, 2^16 tokens × 4 bytes × the width (384: 100 MB),
#: whatever the number of pairs (a block is at least one pair batch). 2^16 rather than 2^17:
#: 1,000 pairs of the benchmark (107,000 word pieces) then fill blocks as 4,000 pairs do, so
#: the peak no longer grows from 1,000 to 4,000 pairs with the block (and it is 100 MB lower)
_BLOCK_TOKENS = 1 << 16


def _bertscore_blocks(
    model,
    tokenizer,
    idf_dict: Mapping[int, float],
    candidate: Sequence[str],
    reference: Sequence[str],
    *,
    batch_size: int,
    block_tokens: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``bert_score.utils.bert_cos_score_idf(model, reference, candidate, tokenizer, idf_dict,
    batch_size=batch_size)`` streamed over blocks of pairs, keeping only P, R, F1 per pair.

    A block is a run of bert_score's pair batches (pairs [k·B, (k+1)·B), B = ``batch_size``)
    whose distinct texts reach ``block_tokens`` word pieces (:data:`_BLOCK_TOKENS`), or the
    rest. Per block: each distinct text is encoded once with bert_score's ``sent_encode``
    (``strip()``, special tokens, truncation at ``model_max_length``); the texts are embedded
    as its ``get_bert_embedding`` does (``collate_idf``'s padding with the pad id and idf
    weights, ``bert_encode`` of layer ``num_layers``), sorted by token count, longest first, in
    forward passes of at most B texts and a word-piece budget
    (:func:`~genmetrics.metrics.homogenization.encoder_passes`: texts longer than 64 word
    pieces go fewer to a pass, so the longest text does not set the peak memory), the heap
    trimmed after each pass (bert_score sorts by word count over all texts, in batches of B;
    sorting by tokens pads less — 7% instead of 60% padded positions on short web texts — and
    batch composition moves an embedding by float32 rounding only, attention masking the
    padding out); then the
    block's pair batches are padded as bert_score's ``pad_batch_stats`` pads them (embeddings
    with 2.0, idf with 0, a length mask) and scored by its ``greedy_cos_idf``. As blocks end on
    pair-batch boundaries, every pair is matched in the very batch bert_score matches it in, so
    its padding convention (a padded position matches with similarity 0, which lifts a token's
    best match to 0 when all its cosines are negative) gives the same values. Memory: one
    block's embeddings whatever the number of pairs; a text repeated in two blocks is
    embedded twice.

    Returns ``(prf, lengths)``: float32 [n, 3] (P, R, F1 per pair) and int [n, 2], the word
    piece counts of candidate and reference with [CLS]/[SEP] (= ``len(sent_encode(...))``)."""
    import torch
    from bert_score.utils import bert_encode, greedy_cos_idf, padding, sent_encode
    from torch.nn.utils.rnn import pad_sequence

    from genmetrics.metrics.homogenization import encoder_passes, trim_heap

    block_tokens = _BLOCK_TOKENS if block_tokens is None else block_tokens
    n = len(candidate)
    device = next(model.parameters()).device
    prf = np.zeros((n, 3), np.float32)
    lengths = np.zeros((n, 2), np.int64)

    def pad_batch(sents: Sequence[str], stats: dict) -> tuple:
        """bert_score's ``pad_batch_stats``: embeddings padded with 2.0, idf with 0, a mask."""
        emb, w = zip(*(stats[t] for t in sents), strict=True)
        lens = torch.tensor([e.size(0) for e in emb], dtype=torch.long)
        emb_pad = pad_sequence([e.to(device) for e in emb], batch_first=True, padding_value=2.0)
        idf_pad = pad_sequence([x.to(device) for x in w], batch_first=True)
        base = torch.arange(int(lens.max()), dtype=torch.long).expand(len(lens), -1)
        return emb_pad, (base < lens.unsqueeze(1)).to(device), idf_pad

    def score_block(lo: int, hi: int, ids: dict[str, list[int]]) -> None:
        """Embed the block's texts ``ids`` (text → word piece ids), match pairs [lo, hi)."""
        # longest first; ties keep first-seen order (bert_score's set() order would change
        # with PYTHONHASHSEED, and with it the batches)
        texts = sorted(ids, key=lambda t: len(ids[t]), reverse=True)
        stats: dict[str, tuple] = {}
        # the block's real-token embeddings in one tensor (one allocation, returned to the OS
        # when the block ends; many small copies fragment the heap and RSS creeps up by block)
        store: torch.Tensor | None = None
        at = 0
        for s, e in encoder_passes([len(ids[t]) for t in texts], batch_size):
            batch = texts[s:e]
            arr = [ids[t] for t in batch]
            padded, _, mask = padding(arr, tokenizer.pad_token_id, dtype=torch.long)
            w, _, _ = padding([[idf_dict[i] for i in a] for a in arr], 0, dtype=torch.float)
            emb = bert_encode(model, padded.to(device), attention_mask=mask.to(device)).cpu()
            if store is None:
                store = emb.new_empty((sum(len(a) for a in ids.values()), emb.shape[-1]))
            for i, (t, a) in enumerate(zip(batch, arr, strict=True)):
                store[at : at + len(a)] = emb[i, : len(a)]
                stats[t] = (store[at : at + len(a)], w[i, : len(a)])
                at += len(a)
            del emb, padded, mask
            trim_heap()  # the pass's freed activations back to the OS (passes differ in shape)
        for m in range(lo, hi, batch_size):
            r_stats = pad_batch(reference[m : m + batch_size], stats)
            c_stats = pad_batch(candidate[m : m + batch_size], stats)
            P, R, F = greedy_cos_idf(*r_stats, *c_stats, False)
            prf[m : m + len(P)] = torch.stack((P, R, F), dim=-1).cpu().numpy()
        lengths[lo:hi] = [
            (len(ids[c]), len(ids[r]))
            for c, r in zip(candidate[lo:hi], reference[lo:hi], strict=True)
        ]

    with torch.no_grad():
        ids: dict[str, list[int]] = {}
        lo = tokens = 0
        for m in range(0, n, batch_size):
            hi = min(m + batch_size, n)
            for t in (*reference[m:hi], *candidate[m:hi]):  # bert_score's refs + hyps
                if t not in ids:
                    ids[t] = sent_encode(tokenizer, t)
                    tokens += len(ids[t])
            if tokens >= block_tokens or hi == n:
                score_block(lo, hi, ids)
                ids, lo, tokens = {}, hi, 0
                trim_heap()  # the block's freed memory back to the OS, before the next one
    return prf, lengths


@register(
    "bertscore",
    input="texts",
    paired=True,
    reference="required",
    values={"bertscore_precision": HIGHER, "bertscore_recall": HIGHER, "bertscore_f1": HIGHER},
    family="reference",
    headline=("bertscore_f1",),
    scale="−1–1",  # means of token cosines, no baseline rescaling
    duplicates_change_value=False,  # a mean of per-pair scores
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
    summaries), so they compare with these in rank, not in level.

    The pairs are streamed in blocks (:func:`_bertscore_blocks`): memory holds one block's
    token embeddings and three floats per pair, not every text's embeddings as
    ``bert_score.score`` does; values equal its per-pair P/R/F1 to float32 rounding (≤ 1e-6
    here). ``extras["device"]``: where the encoder ran (bert_score's choice: cuda when torch
    sees a GPU). bert_score cuts every text at the tokenizer's ``model_max_length`` without a
    word; the result's ``truncation`` counts the texts cut, per role (the score record's
    ``truncation`` and ``warnings``)."""
    from bert_score import BERTScorer
    from bert_score.utils import get_idf_dict, sent_encode

    from genmetrics.metrics.homogenization import (
        bert_score_tokenizer,
        bertscore_model,
        bertscore_truncation,
    )

    try:
        model_type, layer = bertscore_model(model, num_layers)
        # a decoder's tokenizer (no model_max_length) is refused here, before the model loads
        tokenizer = bert_score_tokenizer(model_type, "bertscore: model")
        # = bert_score.score(...): the same tokenizer/model loading, idf and matching code
        scorer = BERTScorer(
            model_type=model_type,
            num_layers=layer,
            batch_size=batch_size,
            nthreads=0,
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
    if idf:  # bert_score.score's rule: counted over all M references ([CLS]/[SEP] not zeroed)
        idf_dict = get_idf_dict(reference, tokenizer, nthreads=0)  # no fork after torch threads
    else:
        idf_dict = defaultdict(lambda: 1.0)
        idf_dict[tokenizer.sep_token_id] = 0
        idf_dict[tokenizer.cls_token_id] = 0
    prf, lengths = _bertscore_blocks(
        scorer._model,
        tokenizer,
        idf_dict,
        candidate,
        reference,
        batch_size=batch_size,
    )
    bare = len(sent_encode(tokenizer, ""))  # [CLS] [SEP]
    empty = int(np.sum((lengths[:, 0] <= bare) | (lengths[:, 1] <= bare)))
    per = {
        "precision": prf[:, 0].astype(np.float64),
        "recall": prf[:, 1].astype(np.float64),
        "f1": prf[:, 2].astype(np.float64),
    }
    truncation = {
        role: bertscore_truncation(tokenizer, texts, lengths[:, j])
        for j, (role, texts) in enumerate((("candidate", candidate), ("reference", reference)))
    }
    return MetricResult(
        values={f"bertscore_{k}": float(v.mean()) for k, v in per.items()},
        truncation=truncation,
        extras={
            **per,
            "per_pair": {f"bertscore_{k}": v for k, v in per.items()},
            "model": model_type,
            "num_layers": layer,
            "idf": idf,
            "device": str(next(scorer._model.parameters()).device),
        },
        n={"candidate": len(candidate), "reference": len(reference), "empty_tokens": empty},
    )
