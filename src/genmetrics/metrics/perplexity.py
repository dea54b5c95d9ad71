"""Perplexity from per-token surprisal (nats).

With s_it the surprisal of token t of text i (the T_i tokens the evaluator scored) and N_i the
token count of text i (``token_count``): ``perplexity`` = exp(Σ_i Σ_t s_it / Σ_i N_i)
(token-weighted over the corpus); ``mean_text_perplexity`` = mean_i exp(Σ_t s_it / N_i);
``mean_surprisal`` = Σ s / Σ N. Texts with no scored token (an empty generation) are left out
and counted; a corpus with no scored token at all is an error. A text longer than the
surprisal rule's ``max_tokens`` (start token and prompt included) is scored on its first
tokens only, as every evaluator here and HF evaluate (``max_length``) do: the surprisal file
counts such texts, and a perplexity score on it carries the count (``truncation``) and a line
in ``warnings`` (:func:`genmetrics.scoring.from_files.file_truncation`).

Two published conventions, as ``token_count``:

* ``"scored"`` (default): N_i = T_i, the scored tokens. ``mean_text_perplexity`` is then HF
  ``evaluate``'s ``mean_perplexity`` (the mean over texts of exp(mean NLL of the text's
  scored tokens); evaluate prepends BOS by default, ``add_start_token=True``, as the surprisal
  rule's default ``prepend="auto"`` does, so every text token is scored); ``perplexity`` pools
  tokens over texts as the transformers perplexity guide does (which, unlike here, scores one
  concatenated stream with a sliding window).
* ``"sequence"``: N_i = T_i + 1: every token of the sequence the evaluator read, its first one
  included although nothing predicts it, as krishnap25/mauve-experiments
  ``get_perplexity_from_samples`` counts (``src/model_utils.py::get_log_probs_of_ds``: tokens
  2..L of each text scored, ``num_tokens += L``). On surprisal computed without a start token
  (``prepend="none"``, mauve-experiments' GPT-2 convention: the first token unscored) it gives
  mauve-experiments' number exactly; with the default ``"scored"`` the two agree only when
  every token counted is a scored one; on the same surprisal ``"scored"`` divides by fewer
  tokens, so its perplexity is the higher (the more so, the shorter the texts). One more
  difference: a text with no scored value (one token read without a start token) is left out
  here, where mauve-experiments counts it as one token of NLL 0.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics.registry import LOWER, MetricResult, register
from genmetrics.params import Options

__all__ = ["perplexity", "text_mean_surprisal"]


def text_mean_surprisal(candidate: Sequence[np.ndarray], metric: str) -> np.ndarray:
    """mean_t s_it of every text with at least one scored token (float64), in input order.

    The per-text statistic of ``perplexity`` and ``coherence_logprob``; texts without a token
    are left out (the caller counts them), and a corpus with none scored is an error.
    """
    means = np.array([np.mean(s, dtype=np.float64) for s in candidate if len(s)])
    if means.size == 0:
        raise GenmetricsError(f"{metric}: no text has a scored token")
    return means


@register(
    "perplexity",
    input="surprisal",
    values={"perplexity": LOWER, "mean_text_perplexity": LOWER, "mean_surprisal": LOWER},
    family="surprisal",
    scale={"perplexity": "≥ 1", "mean_text_perplexity": "≥ 1", "mean_surprisal": "nats"},
    duplicates_change_value=False,  # sums and means of per-text surprisals
    # human texts have a perplexity too: one below theirs is further from them, not better
    closer_to_references=("perplexity", "mean_text_perplexity", "mean_surprisal"),
    params={
        "token_count": (
            Options("scored", "sequence"),
            "tokens per text: the scored ones, or +1 for the unscored first (mauve-experiments)",
        ),
    },
    aggregation=(
        "perplexity pools tokens over texts; mean_text_perplexity averages per-text values "
        "over texts with at least one token (the others counted in n.excluded)"
    ),
    upstream=(
        "HF evaluate perplexity mean_perplexity (= mean_text_perplexity); mauve-experiments "
        "get_perplexity_from_samples (= perplexity with token_count=sequence on surprisal "
        "with prepend=none)"
    ),
    citation="Jelinek et al. (1977)",
)
def perplexity(candidate: Sequence[np.ndarray], *, token_count: str = "scored") -> MetricResult:
    """Corpus perplexity exp(total surprisal / total tokens), the mean per-text perplexity and
    the mean surprisal (nats per token); ``token_count`` says what a text's tokens are (module
    docstring): ``"scored"`` (default; HF evaluate) or ``"sequence"`` (one more per text, the
    first, unscored token: mauve-experiments).

    Texts with no scored token (an empty generation) add nothing to the pooled values and are
    left out of ``mean_text_perplexity`` under both conventions; ``n["excluded"]`` counts them.
    Values above the float range are reported as ``inf`` (written as ``null`` in JSON).
    """
    text_mean_surprisal(candidate, "perplexity")  # the no-token error
    kept = [np.asarray(s, dtype=np.float64) for s in candidate if len(s)]
    extra = 1 if token_count == "sequence" else 0
    sums = np.array([s.sum() for s in kept])
    counts = np.array([len(s) + extra for s in kept], dtype=np.float64)
    mean_s = float(sums.sum() / counts.sum())
    lengths = np.array([len(s) for s in candidate])
    with np.errstate(over="ignore"):
        per_text = np.exp(sums / counts)
        ppl = float(np.exp(mean_s))
    return MetricResult(
        values={
            "perplexity": ppl,
            "mean_text_perplexity": float(per_text.mean()),
            "mean_surprisal": mean_s,
        },
        n={
            "candidate": len(candidate),
            "tokens": int(lengths.sum()),
            "excluded": int((lengths == 0).sum()),
        },
    )
