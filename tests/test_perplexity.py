"""Perplexity against its two references, re-implemented as their code computes on a tiny
random Llama: HF ``evaluate``'s perplexity metric (``mean_perplexity``: the mean over texts of
exp(mean NLL), BOS prepended) and krishnap25/mauve-experiments ``get_perplexity_from_samples``
(summed NLL of tokens 2..L over Σ L: each text's first, unscored token counted)."""

from __future__ import annotations

import numpy as np
import pytest

from genmetrics import GenmetricsError
from genmetrics.metrics import compute
from genmetrics.testing.tiny_lm import WORDS


def _texts(n: int = 25, seed: int = 0) -> list[str]:
    """n synthetic texts of 2..12 words (every text has a scored token without a BOS)."""
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(2, 13)))) for _ in range(n)]


def _hf_evaluate_mean_perplexity(model, tok, texts: list[str]) -> float:
    """evaluate 0.4 ``metrics/perplexity/perplexity.py`` ``_compute`` (add_start_token=True),
    one text per batch: BOS + tokens, CrossEntropyLoss on shifted logits masked by the
    attention mask, exp(sum / mask sum) per text, then ``np.mean`` of the perplexities."""
    import torch
    from torch.nn import CrossEntropyLoss

    loss_fct = CrossEntropyLoss(reduction="none")
    ppls = []
    for text in texts:
        enc = tok([text], add_special_tokens=False, return_tensors="pt")
        batch = torch.cat([torch.tensor([[tok.bos_token_id]]), enc["input_ids"]], dim=1)
        attn = torch.ones_like(batch)
        with torch.no_grad():
            logits = model(batch, attention_mask=attn).logits.double()
        shift_logits, shift_labels = logits[..., :-1, :], batch[..., 1:]
        mask = attn[..., 1:]
        nll = (loss_fct(shift_logits.transpose(1, 2), shift_labels) * mask).sum(1) / mask.sum(1)
        ppls += torch.exp(nll).tolist()
    return float(np.mean(ppls))


def _mauve_experiments_perplexity(model, tok, texts: list[str]) -> float:
    """mauve-experiments ``src/metrics.py::get_perplexity_from_samples`` with
    ``src/model_utils.py::get_log_probs_of_ds`` (@00d97f3): GPT-2-style token ids, no start
    token; log p of tokens 2..L summed per text; ``num_tokens += sen.view(-1).shape[0]`` (L);
    ``exp(-Σ logp / num_tokens)``."""
    import torch

    total, num_tokens = 0.0, 0
    for text in texts:
        sen = tok([text], add_special_tokens=False, return_tensors="pt")["input_ids"]
        num_tokens += sen.view(-1).shape[0]
        with torch.no_grad():
            logp = torch.log_softmax(model(input_ids=sen).logits.double(), dim=2)
        total += float(logp[0, torch.arange(sen.shape[1] - 1), sen[0, 1:]].sum())
    return float(np.exp(-total / num_tokens))


@pytest.fixture(scope="module")
def tiny(tiny_model_dir):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    return (
        AutoModelForCausalLM.from_pretrained(tiny_model_dir).eval(),
        AutoTokenizer.from_pretrained(tiny_model_dir),
    )


def test_mean_text_perplexity_is_hf_evaluate_mean_perplexity(tiny, tiny_model_dir):
    from genmetrics.features.surprisal import surprisal_texts

    texts = _texts()
    seqs = surprisal_texts(texts, str(tiny_model_dir), prepend="bos", batch_size=4)
    res = compute("perplexity", seqs)
    expect = _hf_evaluate_mean_perplexity(*tiny, texts)
    assert res.values["mean_text_perplexity"] == pytest.approx(expect, rel=1e-5)
    # evaluate returns no token-pooled value: the corpus perplexity is another number
    assert res.values["perplexity"] != pytest.approx(expect, rel=1e-3)


def test_sequence_token_count_is_mauve_experiments_perplexity(tiny, tiny_model_dir):
    """Equal on surprisal without a start token (mauve-experiments' convention); the default
    ``scored`` count divides by one token fewer per text, so it reads higher."""
    from genmetrics.features.surprisal import surprisal_texts

    texts = _texts()
    seqs = surprisal_texts(texts, str(tiny_model_dir), prepend="none", batch_size=4)
    expect = _mauve_experiments_perplexity(*tiny, texts)
    seq = compute("perplexity", seqs, params={"token_count": "sequence"})
    assert seq.values["perplexity"] == pytest.approx(expect, rel=1e-5)
    scored = compute("perplexity", seqs).values["perplexity"]
    assert scored > expect * 1.01, (scored, expect)
    n_tokens = sum(len(s) + 1 for s in seqs)
    assert seq.values["mean_surprisal"] == pytest.approx(np.log(expect), rel=1e-5)
    assert seq.n["tokens"] == n_tokens - len(texts)  # the scored values, as before


def test_token_counts_by_hand():
    seqs = [np.array([1.0, 3.0]), np.array([], np.float32), np.array([2.0])]
    scored = compute("perplexity", seqs)
    assert scored.values["perplexity"] == pytest.approx(np.exp(6.0 / 3))
    assert scored.values["mean_text_perplexity"] == pytest.approx((np.exp(2.0) + np.exp(2.0)) / 2)
    assert scored.n == {"candidate": 3, "tokens": 3, "excluded": 1}
    seq = compute("perplexity", seqs, params={"token_count": "sequence"})
    assert seq.values["perplexity"] == pytest.approx(np.exp(6.0 / 5))
    assert seq.values["mean_text_perplexity"] == pytest.approx((np.exp(4 / 3) + np.exp(1.0)) / 2)
    assert seq.values["mean_surprisal"] == pytest.approx(6.0 / 5)
    assert seq.n == scored.n
    with pytest.raises(GenmetricsError, match="no text has a scored token"):
        compute("perplexity", [np.array([])], params={"token_count": "sequence"})
