r"""Homogenization score (Padmakumar & He 2024; ``diversity.homogenization_score``), fast.

The package computes, for every ordered pair i ≠ j, a similarity (ROUGE-L F-measure of
``rouge_score.RougeScorer(['rougeL'], use_stemmer)`` or BERTScore F1) and returns
``round(Σ_i [Σ_{j≠i} s_ij / (n−1)] / n, 3)``; if that total is exactly 0 it returns 1.0 (a
quirk meant for "all texts identical"; we reproduce it: ``zero_total="package"``, or
``"zero"``, our default, returns 0.0: texts that share no word are not homogeneous). We
return the unrounded mean by default (``round=3`` = package).

ROUGE-L: ``tokenizer="rouge_score"`` is rouge_score's default tokenizer (``lower()``,
``[^a-z0-9]+`` → space, split, optional Porter stemming of tokens longer than 3 characters,
keep ``^[a-z0-9]+$`` tokens). Non-ASCII letters vanish in it, so texts in Greek or Russian
have no tokens, every pair scores 0, and the package's zero-total rule calls them "fully
homogeneous" (1.0). Our default ``tokenizer="unicode"`` is the same rule with letters and
digits of every script (``[\W_]+`` separates, ``str.lower``): identical tokens on ASCII text,
real tokens elsewhere (scripts written without spaces, as Chinese, stay one token per run).
The LCS is computed by the bit-parallel algorithm of Hyyrö (2004) over 64-bit
words in a numba kernel, each unordered pair once (F is exactly symmetric:
P and R swap). A text with no tokens scores 0 against every other text, as rouge_score.

BERTScore: one encoder pass per text (bert_score's own tokenisation/model loading, layer
``num_layers``, idf off: [CLS]/[SEP] weigh 0), then greedy cosine matching for all pairs in
blocks — the F1 of ``bert_score.score`` for the same model/layer, without its O(n²) encoder
passes. bert_score masks padded positions with similarity 0 inside its pair batches; we match
over real tokens only (identical unless every similarity of a token is negative).
"""

from __future__ import annotations

import builtins
import ctypes
import functools
import os
import re
from collections.abc import Sequence

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.devices import openmp_threads_kept
from genmetrics.metrics.registry import LOWER, MetricResult, register
from genmetrics.params import BOOL, STRING, Const, Interval, Options

__all__ = [
    "homogenization",
    "rouge_tokenize",
    "rougel_pair_sums",
    "bertscore_model",
    "bert_score_tokenizer",
    "check_encoder_tokenizer",
    "bertscore_pair_sums",
    "bertscore_truncation",
    "encoder_passes",
    "trim_heap",
]

_NON_ALNUM = re.compile(r"[^a-z0-9]+")
_SPACES = re.compile(r"\s+")
_VALID = re.compile(r"^[a-z0-9]+$")
_NON_WORD = re.compile(r"[\W_]+")
_WORD = re.compile(r"^[^\W_]+$")

prange = range  # replaced by numba.prange when the kernel is compiled


def rouge_tokenize(
    texts: Sequence[str], use_stemmer: bool = False, tokenizer: str = "rouge_score"
) -> list[list[str]]:
    """rouge_score ``DefaultTokenizer(use_stemmer).tokenize`` for each text (stems cached);
    ``tokenizer="unicode"``: the same rule over the letters and digits of every script."""
    sep, valid = (_NON_ALNUM, _VALID) if tokenizer == "rouge_score" else (_NON_WORD, _WORD)
    stem = None
    if use_stemmer:
        from nltk.stem import porter

        stemmer = porter.PorterStemmer()
        stem = functools.lru_cache(maxsize=None)(stemmer.stem)
    out = []
    for text in texts:
        toks = _SPACES.split(sep.sub(" ", text.lower()))
        if stem is not None:
            toks = [stem(x) if len(x) > 3 else x for x in toks]
        out.append([x for x in toks if valid.match(x)])
    return out


def _rougel_kernel(tok, off, vocab_size, nchunks):  # pragma: no cover - compiled by numba
    """Row sums of the ROUGE-L F matrix (zero diagonal). Texts must be sorted by length,
    longest first, so that in each pair (i < j) text i is the longer one (the bit side)."""
    n = off.shape[0] - 1
    acc = np.zeros((nchunks, n))
    for c in prange(nchunks):
        pos = np.full(vocab_size, -1, np.int64)
        rows = np.empty(0, np.int64)
        for i in range(c, n, nchunks):
            a0 = off[i]
            m = off[i + 1] - a0
            if m == 0:
                continue
            W = (m + 63) // 64
            rows = np.empty(m, np.int64)
            nu = 0
            for p in range(m):
                t = tok[a0 + p]
                if pos[t] < 0:
                    pos[t] = nu
                    rows[nu] = t
                    nu += 1
            M = np.zeros((nu, W), np.uint64)
            for p in range(m):
                r = pos[tok[a0 + p]]
                M[r, p >> 6] |= np.uint64(1) << np.uint64(p & 63)
            V = np.empty(W, np.uint64)
            last = m - (W - 1) * 64
            lastmask = np.uint64(0xFFFFFFFFFFFFFFFF)
            if last < 64:
                lastmask = (np.uint64(1) << np.uint64(last)) - np.uint64(1)
            for j in range(i + 1, n):
                b0 = off[j]
                lb = off[j + 1] - b0
                if lb == 0:
                    continue
                for w in range(W):
                    V[w] = np.uint64(0xFFFFFFFFFFFFFFFF)
                for q in range(lb):
                    r = pos[tok[b0 + q]]
                    if r < 0:
                        continue
                    carry = np.uint64(0)
                    for w in range(W):
                        v = V[w]
                        u = v & M[r, w]
                        s1 = v + u
                        c1 = np.uint64(1) if s1 < v else np.uint64(0)
                        s2 = s1 + carry
                        c2 = np.uint64(1) if s2 < s1 else np.uint64(0)
                        carry = c1 | c2
                        V[w] = s2 | (v ^ u)
                zeros = 0
                for w in range(W):
                    x = ~V[w]
                    if w == W - 1:
                        x &= lastmask
                    # popcount
                    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
                    x = (x & np.uint64(0x3333333333333333)) + (
                        (x >> np.uint64(2)) & np.uint64(0x3333333333333333)
                    )
                    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
                    zeros += np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))
                if zeros == 0:
                    continue
                prec = zeros / lb
                rec = zeros / m
                f = 2 * prec * rec / (prec + rec)
                acc[c, i] += f
                acc[c, j] += f
            for r in range(nu):
                pos[rows[r]] = -1
    return acc.sum(axis=0)


@functools.cache
def _compiled_kernel():
    import numba

    g = _rougel_kernel.__globals__
    g["prange"] = numba.prange
    return numba.njit(parallel=True, cache=True, nogil=True)(_rougel_kernel)


def _n_threads(n_jobs: int | None) -> int:
    import numba

    top = int(numba.config.NUMBA_NUM_THREADS)
    return top if n_jobs is None else max(1, min(n_jobs, top))


def rougel_pair_sums(
    texts: Sequence[str],
    use_stemmer: bool = False,
    n_jobs: int | None = 2,
    tokenizer: str = "rouge_score",
) -> np.ndarray:
    """Σ_{j≠i} ROUGE-L F(i, j) for each text i (rouge_score F-measure; tokens as
    :func:`rouge_tokenize`)."""
    import numba

    docs = rouge_tokenize(texts, use_stemmer, tokenizer)
    vocab: dict[str, int] = {}
    lens = np.fromiter((len(d) for d in docs), dtype=np.int64, count=len(docs))
    order = np.argsort(-lens, kind="stable")
    tok = np.fromiter(
        (vocab.setdefault(t, len(vocab)) for i in order for t in docs[i]),
        dtype=np.int64,
        count=int(lens.sum()),
    )
    off = np.zeros(len(docs) + 1, np.int64)
    np.cumsum(lens[order], out=off[1:])
    threads = _n_threads(n_jobs)
    kernel = _compiled_kernel()
    # numba's omp layer leaves OpenMP's thread count (torch's too) at its own: put it back
    with openmp_threads_kept():
        prev = numba.get_num_threads()
        numba.set_num_threads(threads)
        try:
            sums_sorted = kernel(tok, off, max(len(vocab), 1), threads)
        finally:
            numba.set_num_threads(prev)
    sums = np.empty(len(docs))
    sums[order] = sums_sorted
    return sums


def _package_batch_max(lengths: np.ndarray, batch_size: int) -> np.ndarray:
    """BM[i, k] = longest token length in the k-th batch of hypotheses that the package's
    loop sends to bert_score for reference i (the other texts in order, ``batch_size`` each)."""
    n = len(lengths)
    nb = max(1, -(-(n - 1) // batch_size))
    bm = np.zeros((n, nb), np.int64)
    for i in range(n):
        others = np.delete(lengths, i)
        starts = np.arange(0, len(others), batch_size)
        bm[i, : len(starts)] = np.maximum.reduceat(others, starts)
    return bm


def bertscore_model(
    model: str | os.PathLike | None = None, num_layers: int | None = None
) -> tuple[str, int]:
    """The BERTScore encoder and layer to use: ``model`` (HF id or folder; ``None``: the offline
    all-MiniLM-L6-v2 folder, :func:`genmetrics.data.assets.minilm_dir`) and ``num_layers`` (``None``:
    bert_score's ``model2layers`` entry for the id, else the model's last layer)."""
    if model is None:
        from genmetrics.data.assets import minilm_dir

        model_type = str(minilm_dir())
    else:
        model_type = str(model)
    if num_layers is None:
        from bert_score.utils import model2layers

        num_layers = model2layers.get(model_type)
        if num_layers is None:
            from transformers import AutoConfig

            num_layers = int(AutoConfig.from_pretrained(model_type).num_hidden_layers)
    return model_type, int(num_layers)


#: a ``model_max_length`` at or above this is transformers' "no maximum set" (``int(1e30)``)
_UNSET_MAX_LENGTH = 10**18


def check_encoder_tokenizer(tokenizer, model_type: str, where: str) -> None:
    """Refuse, naming ``where`` (e.g. ``bertscore: model``), a checkpoint whose tokenizer states
    no usable maximum input length: bert_score truncates every text to
    ``tokenizer.model_max_length``, and transformers' "unset" value (``int(1e30)``, what most
    decoder / causal-LM checkpoints save) ends in an ``OverflowError`` inside the tokenizer.
    A decoder whose tokenizer does state a length (GPT-2: 1024) is accepted, as bert_score
    accepts it (its layer table lists GPT-2 models)."""
    length = getattr(tokenizer, "model_max_length", None)
    if isinstance(length, int) and 0 < length < _UNSET_MAX_LENGTH:
        return
    what = "no maximum input length" if length is None else f"model_max_length={length:.3g}"
    why = ""
    try:
        from transformers import AutoConfig

        config = AutoConfig.from_pretrained(model_type)
        archs = list(getattr(config, "architectures", None) or [])
        if getattr(config, "is_decoder", False) or any("CausalLM" in a for a in archs):
            why = (
                f"; its config declares {', '.join(archs) or 'is_decoder'}: a decoder (causal "
                "LM), not the encoder BERTScore is defined on"
            )
    except Exception:  # noqa: BLE001 - the length alone says what is wrong
        pass
    raise GenmetricsError(
        f"{where}={model_type!r} cannot be BERTScore's encoder: its tokenizer states {what} "
        "(transformers' 'unset' value), and bert_score truncates every text to that length"
        f"{why}. Give an encoder checkpoint (BERT, RoBERTa, DeBERTa, MiniLM...), or set "
        "model_max_length in its tokenizer_config.json"
    )


def bert_score_tokenizer(model_type: str, where: str = "bertscore: model"):
    """bert_score's ``get_tokenizer(model_type)``, able to encode an empty text: bert_score
    0.3.12 encodes one as ``tokenizer.build_inputs_with_special_tokens([])`` ([CLS] [SEP]), a
    method transformers 5 tokenizers no longer have; the tokenizer gets the same ids back.
    A tokenizer without a usable maximum length is an error naming ``where``
    (:func:`check_encoder_tokenizer`)."""
    from bert_score.utils import get_tokenizer

    tokenizer = get_tokenizer(model_type, False)
    check_encoder_tokenizer(tokenizer, model_type, where)
    if not hasattr(tokenizer, "build_inputs_with_special_tokens"):
        bare = list(tokenizer.encode("", add_special_tokens=True))

        def build(token_ids_0: list[int], token_ids_1: list[int] | None = None) -> list[int]:
            if token_ids_0 or token_ids_1:  # bert_score only asks for the empty text
                raise NotImplementedError("only the empty text is supported")
            return list(bare)

        tokenizer.build_inputs_with_special_tokens = build
    return tokenizer


def bertscore_truncation(tokenizer, texts: Sequence[str], kept: Sequence[int]) -> dict:
    """How many of ``texts`` bert_score's ``sent_encode`` cut at the tokenizer's
    ``model_max_length`` (``kept``: the word pieces each kept, [CLS]/[SEP] included): a text
    that kept the maximum is counted whole (``strip()``, special tokens) to tell a cut from an
    exact fit (:func:`genmetrics.metrics.kinds.truncation_record`)."""
    from genmetrics.metrics.kinds import truncation_record

    limit = int(tokenizer.model_max_length)
    whole = [
        len(tokenizer(t.strip(), verbose=False)["input_ids"]) if k >= limit else int(k)
        for t, k in zip(texts, kept, strict=True)
    ]
    return truncation_record(whole, limit)


def trim_heap() -> None:
    """glibc's ``malloc_trim(0)``: return freed heap pages to the OS (a no-op elsewhere).
    Without it the peak RSS of the streamed BERTScore creeps up pass after pass and block after
    block: glibc keeps the freed activations (tensors under its 32 MB dynamic mmap threshold,
    a different shape each pass) in its arenas, fragmented — +300 MB over one 1,000-pair
    block measured, against the block's 165 MB of embeddings."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass


#: a forward pass of the BERTScore encoder holds at most ``batch_size`` × this many word pieces
#: (padding included) — the activations grow with rows × L …
PASS_TOKENS_PER_ROW = 64
#: … and at most ``batch_size`` × this much rows × L² (the attention scores grow with it): with
#: batch_size 64, a pass costs no more memory than 64 texts of 64 word pieces or 32 of 128
#: (about +110 MB of activations with MiniLM), however long the longest text (512: 2 rows)
PASS_ATTENTION_PER_ROW = 1 << 13


def encoder_passes(lengths: Sequence[int], batch_size: int) -> list[tuple[int, int]]:
    """Cut texts sorted by word-piece count, longest first, into forward passes ``[s, e)``:
    rows ``e − s`` ≤ ``batch_size``, rows · L ≤ ``batch_size`` · :data:`PASS_TOKENS_PER_ROW` and
    rows · L² ≤ ``batch_size`` · :data:`PASS_ATTENTION_PER_ROW`, with L = ``lengths[s]`` (the
    pass is padded to its first text's length); at least one row per pass. Texts of up to 64
    word pieces keep bert_score's batches of ``batch_size``; longer ones go in fewer rows, so
    the peak memory of a pass does not grow with the longest text. Batch composition moves an
    embedding by float32 rounding only (attention masks the padding out)."""
    passes: list[tuple[int, int]] = []
    s, n = 0, len(lengths)
    while s < n:
        L = max(int(lengths[s]), 1)
        rows = min(
            batch_size,
            batch_size * PASS_TOKENS_PER_ROW // L,
            batch_size * PASS_ATTENTION_PER_ROW // (L * L),
        )
        e = min(n, s + max(rows, 1))
        passes.append((s, e))
        s = e
    return passes


def bertscore_pair_sums(
    texts: Sequence[str],
    model: str | os.PathLike | None = None,
    num_layers: int | None = None,
    batch_size: int = 64,
    padding: str = "bert_score",
    device: str | None = None,
    block: int = 32,
    stats: dict | None = None,
) -> np.ndarray:
    """Σ_{j≠i} BERTScore-F1(ref i, hyp j) for each text i, with one encoder pass per text.

    ``padding="bert_score"`` reproduces the package loop exactly: for reference i, bert_score
    pads each batch of ``batch_size`` hypotheses to its longest one and fills padded
    similarities with 0, so a reference token's best match is max(0, ·) whenever hypothesis j
    is shorter than the longest in its batch. ``"none"``: plain greedy matching (symmetric).
    Every text is cut at the tokenizer's ``model_max_length`` (bert_score's ``sent_encode``);
    ``stats``, when given, gets ``truncation``: how many were cut
    (:func:`bertscore_truncation`).
    """
    import torch
    from bert_score.utils import get_model

    if padding not in ("bert_score", "none"):
        raise GenmetricsError(
            f"homogenization: padding must be 'bert_score' or 'none', got {padding!r}"
        )
    model_type, num_layers = bertscore_model(model, num_layers)
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    tokenizer = bert_score_tokenizer(model_type, "homogenization: model")
    enc = get_model(model_type, num_layers, False).to(device)
    from collections import defaultdict

    idf = defaultdict(lambda: 1.0)
    idf[tokenizer.sep_token_id] = 0
    idf[tokenizer.cls_token_id] = 0

    n = len(texts)
    # each text encoded once as bert_score's collate_idf does (sent_encode: strip, special
    # tokens, truncation), embedded sorted by word-piece count, longest first, in forward passes
    # of at most batch_size texts and a word-piece budget (encoder_passes: a long text does not
    # set the peak memory; bert_score batches by word count, and batch composition moves an
    # embedding by float32 rounding only); each text's normalised embeddings go straight into
    # E (no second, per-text copy), the heap trimmed after each pass
    from bert_score.utils import bert_encode, sent_encode
    from bert_score.utils import padding as pad_ids

    ids = [sent_encode(tokenizer, t) for t in texts]
    lengths = np.array([len(a) for a in ids], dtype=np.int64)
    if stats is not None:  # bert_score cuts at model_max_length without a word: count them
        stats["truncation"] = bertscore_truncation(tokenizer, texts, lengths)
    order = sorted(range(n), key=lambda i: int(lengths[i]), reverse=True)  # stable
    Lmax = int(lengths.max())
    E: torch.Tensor | None = None
    valid = torch.zeros(n, Lmax, dtype=torch.bool, device=device)
    Wt = torch.zeros(n, Lmax, device=device)
    with torch.no_grad():
        for s, e in encoder_passes(lengths[order], batch_size):
            arr = [ids[i] for i in order[s:e]]
            padded_ids, _, mask = pad_ids(arr, tokenizer.pad_token_id, dtype=torch.long)
            emb = bert_encode(enc, padded_ids.to(device), attention_mask=mask.to(device))
            if E is None:
                E = torch.zeros(n, Lmax, emb.shape[-1], device=device)
            for k, i in enumerate(order[s:e]):
                L = int(lengths[i])
                v = emb[k, :L].float()
                E[i, :L] = v / v.norm(dim=-1, keepdim=True)
                valid[i, :L] = True
                w = torch.tensor([idf[t] for t in ids[i]], dtype=torch.float, device=device)
                tot = w.sum()
                if tot > 0:  # a text with only [CLS][SEP] scores 0 (bert_score's empty-text rule)
                    Wt[i, :L] = w / tot
            del emb, padded_ids, mask
            trim_heap()
    bm = _package_batch_max(lengths, batch_size) if padding == "bert_score" else None
    len_t = torch.from_numpy(lengths)
    neg = torch.tensor(float("-inf"), device=device)
    sums = torch.zeros(n, dtype=torch.float64)

    def f1(p: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        return torch.nan_to_num(2 * p * r / (p + r), nan=0.0)

    def padded(refs: torch.Tensor, hyps: torch.Tensor) -> torch.Tensor:
        """[len(refs), len(hyps)]: is hyp j padded in reference i's bert_score batch?"""
        if bm is None:
            return torch.zeros(len(refs), len(hyps), dtype=torch.bool)
        pos = hyps[None, :] - (hyps[None, :] > refs[:, None]).long()
        batch = (pos // batch_size).clamp(0, bm.shape[1] - 1)  # (i == j entries are unused)
        batch_max = torch.from_numpy(bm)[refs[:, None], batch]
        return len_t[hyps][None, :] < batch_max

    with torch.no_grad():
        for a in range(0, n, block):
            ia = torch.arange(a, min(a + block, n))
            ea, va, wa = E[ia], valid[ia], Wt[ia]
            for b in range(a, n, block):
                ib = torch.arange(b, min(b + block, n))
                eb, vb, wb = E[ib], valid[ib], Wt[ib]
                sim = torch.einsum("ild,jmd->ijlm", ea, eb)
                sim = torch.where(va[:, None, :, None] & vb[None, :, None, :], sim, neg)
                ma = torch.where(va[:, None, :], sim.max(dim=3).values, 0.0)  # a-token vs b
                mb = torch.where(vb[None, :, :], sim.max(dim=2).values, 0.0)  # b-token vs a
                A = (ma * wa[:, None, :]).sum(-1).cpu()
                A0 = (ma.clamp_min(0) * wa[:, None, :]).sum(-1).cpu()
                B = (mb * wb[None, :, :]).sum(-1).cpu()
                B0 = (mb.clamp_min(0) * wb[None, :, :]).sum(-1).cpu()
                # reference i in a, hypothesis j in b: P = B (hyp tokens), R = A / A0 if padded
                f_ab = f1(B, torch.where(padded(ia, ib), A0, A)).double()
                # reference j in b, hypothesis i in a: P = A, R = B / B0 if padded
                f_ba = f1(A, torch.where(padded(ib, ia).T, B0, B)).double()
                off = ia[:, None] != ib[None, :]
                f_ab = torch.where(off, f_ab, torch.zeros_like(f_ab))
                sums[ia] += f_ab.sum(1)
                if b != a:
                    sums[ib] += f_ba.sum(0)
    return sums.numpy()


@register(
    "homogenization",
    input="texts",
    values={"homogenization": LOWER},
    family="diversity",
    scale="0–1",  # a mean pair ROUGE-L F (default measure) or BERTScore F1
    params={
        "measure": (Options("rougel", "bertscore"), "pair similarity: ROUGE-L F or BERTScore F1"),
        "use_stemmer": (BOOL, "ROUGE-L: Porter stemming"),
        "tokenizer": (
            Options("unicode", "rouge_score"),
            "ROUGE-L: words of every script, or rouge_score's ASCII-only tokens",
        ),
        "model": ((STRING, Const(None)), "BERTScore encoder folder or hub id (null: MiniLM)"),
        "num_layers": ((Interval(int, 1, None), Const(None)), "BERTScore layer (null: default)"),
        "batch_size": (Interval(int, 1, None), "BERTScore batch size"),
        "n_jobs": (Interval(int, 1, None), "ROUGE-L worker processes"),
        "round": ((Interval(int, 0, None), Const(None)), "decimals (3 = the package's rounding)"),
        "zero_total": (Options("zero", "package"), "all pairs 0: zero gives 0, package gives 1.0"),
        "padding": (Options("bert_score", "none"), "BERTScore: the package's batch padding"),
    },
    assets=lambda p: ("minilm",) if p["measure"] == "bertscore" and p["model"] is None else (),
    loads_model=lambda p: p["measure"] == "bertscore",
    upstream="diversity 0.3.1 homogenization_score",
    citation="Shaib et al. (2024)",
)
def homogenization(
    candidate: list[str],
    *,
    measure: str = "rougel",
    use_stemmer: bool = False,
    tokenizer: str = "unicode",
    model: str | None = None,
    num_layers: int | None = None,
    batch_size: int = 64,
    n_jobs: int = 2,
    round: int | None = None,  # noqa: A002 (stable parameter name)
    zero_total: str = "zero",
    padding: str = "bert_score",
) -> MetricResult:
    """Homogenization = mean over ordered pairs i≠j of ROUGE-L F (``measure="rougel"``) or
    BERTScore F1 (``"bertscore"``; ``model`` = HF id or folder, default the offline MiniLM,
    ``num_layers`` default bert_score's table or the model's last layer), as
    ``diversity.homogenization_score``: ``tokenizer="rouge_score", zero_total="package",
    round=3`` reproduce it exactly; the defaults differ only where it misreads text (non-ASCII
    words, sets sharing no word). An empty text scores 0 against every other text (ROUGE-L:
    so does one without letters or digits; BERTScore: bert_score's empty-text rule) and
    counts in the mean, as in the package. BERTScore cuts every text at its tokenizer's
    ``model_max_length``: the result's ``truncation`` counts the texts cut (the score record's
    ``truncation`` and ``warnings``)."""
    n = len(candidate)
    if n < 2:
        raise GenmetricsError("homogenization: needs at least 2 texts (pairs i ≠ j)")
    stats: dict = {}
    if measure == "rougel":
        sums = rougel_pair_sums(candidate, use_stemmer, n_jobs, tokenizer)
    else:
        sums = bertscore_pair_sums(candidate, model, num_layers, batch_size, padding, stats=stats)
    per_text = sums / (n - 1)
    total = float(per_text.sum())
    value = total / n
    if total == 0 and zero_total == "package":
        value = 1.0
    if round is not None:
        value = builtins.round(value, round)
    return MetricResult(
        values={"homogenization": value},
        extras={"per_text": per_text},
        n={"candidate": n},
        truncation={"candidate": stats["truncation"]} if "truncation" in stats else {},
    )
