"""Automatic annotators of OmniInput samples: a rule, or a judge LM.

Every bin b of a Wang–Landau run keeps representative samples (``WLResult.samples[b]``, an
int64 array (k_b, L) of token ids). Each sample gets a score s ∈ [0, 1] (1 = the sample is
what the model should output / a good text). Human and automatic annotation share one path
(:mod:`genmetrics.omniinput.annotation_csv`): raters fill the CSV of
:func:`~genmetrics.omniinput.annotation_csv.export_samples`; an automatic :class:`Annotator`
(a rule via :func:`rule_annotator`, or a judge LM via :func:`judge_lm_annotator`) scores the
samples through :func:`annotate`, and its scores are written with ``export_samples(...,
scores=...)``, exactly like a filled human CSV, then read back by
:func:`~genmetrics.omniinput.annotation_csv.read_annotations`.

Built-in rules (``"module.path:function"`` specs of :func:`rule_annotator`, named in
configs): ``genmetrics.omniinput.annotate:digit_sum`` and
``genmetrics.omniinput.annotate:alphabetic_words``.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.omniinput.annotation_csv import bin_samples, check_scores
from genmetrics.omniinput.toy import digit_sum_rule

#: the default question for :func:`judge_lm_annotator`
DEFAULT_JUDGE_TEMPLATE = (
    "Is the following text fluent, grammatical English? Text: {text}\nAnswer yes or no:"
)


class Annotator(Protocol):
    """Scores for n samples: int64 tokens (n, L) and their texts (n) → float (n,) in [0, 1]."""

    def __call__(self, tokens: np.ndarray, texts: list[str]) -> np.ndarray: ...


def annotate(
    samples: Sequence[np.ndarray],
    annotator: Annotator,
    decode: Callable[[np.ndarray], str] | None = None,
) -> list[np.ndarray]:
    """Scores per bin from ``annotator`` (an empty array for a bin without samples); texts are
    ``decode(tokens)`` per sample, or ``""`` without ``decode``. The samples of all bins go
    to the annotator in one call when they share L (it batches itself)."""
    samp = bin_samples(samples, len(samples))
    full = [b for b, s in enumerate(samp) if len(s)]
    widths = {samp[b].shape[1] for b in full}
    groups = [full] if len(widths) <= 1 else [[b] for b in full]
    out = [np.zeros(0, np.float64) for _ in samp]
    for group in groups:
        if not group:
            continue
        tokens = np.concatenate([samp[b] for b in group])
        texts = [decode(t) for t in tokens] if decode is not None else [""] * len(tokens)
        name = getattr(annotator, "name", None) or repr(annotator)
        scores = check_scores(annotator(tokens, texts), len(tokens), f"annotator {name}")
        cuts = np.cumsum([len(samp[b]) for b in group])[:-1]
        for b, s in zip(group, np.split(scores, cuts), strict=True):
            out[b] = s
    return out


def digit_sum(tokens: np.ndarray, texts: list[str], m: int) -> np.ndarray:
    """Toy rule (texts unused): 1.0 where Σ_i tokens_i is divisible by ``m``, else 0.0
    (:func:`~genmetrics.omniinput.toy.digit_sum_rule`)."""
    return digit_sum_rule(tokens, m)


_ALPHA_WORD = re.compile(r"[A-Za-z]+[.,;:!?]?")


def alphabetic_words(tokens: np.ndarray, texts: list[str], min_words: int = 1) -> np.ndarray:
    """A crude well-formedness rule, not a judgment of quality: the fraction of the
    whitespace-separated words of each text made of ASCII letters only (optionally followed by
    one of ``.,;:!?``); a text with fewer than ``min_words`` words (or none) scores 0."""
    if int(min_words) != min_words or min_words < 0:
        raise GenmetricsError(
            f"alphabetic_words: min_words must be a non-negative integer, got {min_words!r}"
        )
    out = np.zeros(len(texts), np.float64)
    for i, text in enumerate(texts):
        words = str(text).split()
        if words and len(words) >= min_words:
            out[i] = sum(bool(_ALPHA_WORD.fullmatch(w)) for w in words) / len(words)
    return out


class _RuleAnnotator:
    """``function(tokens=..., texts=..., **kwargs)`` with its scores checked."""

    def __init__(self, spec: str, fn: Callable[..., Any], kwargs: dict[str, Any]) -> None:
        self.name, self.fn, self.kwargs = f"rule {spec!r}", fn, kwargs

    def __call__(self, tokens: np.ndarray, texts: list[str]) -> np.ndarray:
        tokens = np.asarray(tokens, np.int64)
        out = self.fn(tokens=tokens, texts=list(texts), **self.kwargs)
        return check_scores(out, len(tokens), self.name)

    def __repr__(self) -> str:
        return f"<{self.name} {self.kwargs}>"


def rule_annotator(spec: str, **kwargs: Any) -> Annotator:
    """An :class:`Annotator` from ``"module.path:function"``: the function is imported and
    called as ``function(tokens=..., texts=..., **kwargs)``; its scores must be (n,), finite
    and in [0, 1]. Built-in rules: ``genmetrics.omniinput.annotate:digit_sum`` (``m=``) and
    ``genmetrics.omniinput.annotate:alphabetic_words`` (``min_words=``)."""
    if not isinstance(spec, str) or spec.count(":") != 1 or not all(spec.split(":")):
        raise GenmetricsError(f"rule {spec!r}: expected 'module.path:function'")
    module_name, attr = spec.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise GenmetricsError(
            f"rule {spec!r}: cannot import module {module_name!r} ({e})"
        ) from None
    fn: Any = module
    for part in attr.split("."):
        if not hasattr(fn, part):
            raise GenmetricsError(f"rule {spec!r}: module {module_name!r} has no {attr!r}")
        fn = getattr(fn, part)
    if not callable(fn):
        raise GenmetricsError(f"rule {spec!r}: {attr!r} is not callable")
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):  # builtins without a signature: checked when called
        sig = None
    if sig is not None:
        try:
            sig.bind(tokens=None, texts=None, **kwargs)
        except TypeError as e:
            raise GenmetricsError(
                f"rule {spec!r}: cannot be called as f(tokens=..., texts=..., "
                f"{', '.join(f'{k}=...' for k in kwargs)}): {e}"
            ) from None
    return _RuleAnnotator(spec, fn, dict(kwargs))


def _single_token(tokenizer: Any, word: str, what: str) -> int:
    ids = list(tokenizer(word, add_special_tokens=False)["input_ids"])
    if len(ids) != 1:
        raise GenmetricsError(
            f"judge_lm_annotator: {what}={word!r} encodes to {len(ids)} tokens {ids}; it must "
            f"be exactly one token (try it with or without a leading space)"
        )
    unk = getattr(tokenizer, "unk_token_id", None)
    if unk is not None and ids[0] == unk:
        raise GenmetricsError(
            f"judge_lm_annotator: {what}={word!r} encodes to the unknown token {unk}; pick a "
            f"word in the tokenizer's vocabulary"
        )
    return int(ids[0])


class _JudgeAnnotator:
    """r = p(yes) / (p(yes) + p(no)) of a judge LM after a prompt (see judge_lm_annotator)."""

    def __init__(self, model, tokenizer, template, yes, no, batch_size, chat) -> None:
        self.model, self.tokenizer = model, tokenizer
        self.template, self.batch_size, self.chat = template, batch_size, chat
        self.yes_id = _single_token(tokenizer, yes, "yes")
        self.no_id = _single_token(tokenizer, no, "no")
        if self.yes_id == self.no_id:
            raise GenmetricsError(
                f"judge_lm_annotator: yes={yes!r} and no={no!r} are the same token {self.yes_id}"
            )
        self.name = f"judge LM (yes={yes!r}, no={no!r})"
        pad = getattr(tokenizer, "pad_token_id", None)
        if pad is None:
            pad = getattr(tokenizer, "eos_token_id", None)
        self.pad_id = int(pad) if pad is not None else 0
        params = inspect.signature(model.forward).parameters
        self.position_ids = "position_ids" in params

    def prompt(self, text: str) -> str:
        """The judge's input text for one sample text."""
        question = self.template.format(text=text)
        if not self.chat:
            return question
        return self.tokenizer.apply_chat_template(
            [{"role": "user", "content": question}], tokenize=False, add_generation_prompt=True
        )

    def __call__(self, tokens: np.ndarray, texts: list[str]) -> np.ndarray:
        import torch

        texts = list(texts)
        if texts and not any(texts):
            raise GenmetricsError(
                f"{self.name}: every text is empty; pass decode= to annotate() so the judge "
                f"sees the decoded samples"
            )
        # chat text already holds the template's special tokens; a plain prompt gets BOS etc.
        encoded = [
            list(self.tokenizer(self.prompt(t), add_special_tokens=not self.chat)["input_ids"])
            for t in texts
        ]
        if any(len(e) == 0 for e in encoded):
            i = next(i for i, e in enumerate(encoded) if not e)
            raise GenmetricsError(f"{self.name}: the prompt for text {i} encodes to no tokens")
        device = next(self.model.parameters()).device
        out = np.empty(len(texts), np.float64)
        for start in range(0, len(encoded), self.batch_size):
            batch = encoded[start : start + self.batch_size]
            width = max(len(e) for e in batch)
            ids = torch.full((len(batch), width), self.pad_id, dtype=torch.long)
            mask = torch.zeros((len(batch), width), dtype=torch.long)
            for r, e in enumerate(batch):  # left padding: the last column is real for every row
                ids[r, width - len(e) :] = torch.tensor(e, dtype=torch.long)
                mask[r, width - len(e) :] = 1
            kw: dict[str, Any] = {"input_ids": ids.to(device), "attention_mask": mask.to(device)}
            if self.position_ids:  # positions count real tokens only, as without padding
                kw["position_ids"] = (mask.cumsum(-1) - 1).clamp(min=0).to(device)
            with torch.no_grad():
                logits = self.model(**kw).logits[:, -1, :].double()
            diff = logits[:, self.yes_id] - logits[:, self.no_id]
            out[start : start + len(batch)] = torch.sigmoid(diff).cpu().numpy()
        return out

    def __repr__(self) -> str:
        return f"<{self.name}>"


def judge_lm_annotator(
    model: Any,
    tokenizer: Any,
    template: str = DEFAULT_JUDGE_TEMPLATE,
    yes: str = " yes",
    no: str = " no",
    batch_size: int = 16,
    chat: bool = False,
) -> Annotator:
    """An :class:`Annotator` asking a judge LM (a loaded transformers causal LM and its
    tokenizer) about each text: r = p(yes) / (p(yes) + p(no)) = σ(ℓ_yes − ℓ_no), from the
    next-token logits ℓ after the prompt ``template.format(text=text)`` (with ``chat``: that
    prompt as the user turn of ``tokenizer.apply_chat_template(..., add_generation_prompt=
    True)``, encoded without extra special tokens; otherwise encoded with them, e.g. BOS).

    ``yes`` and ``no`` must each encode to exactly one known token. Prompts are batched
    ``batch_size`` at a time with left padding, an attention mask and position ids counting
    real tokens only; the logits are taken at the last (real) position, under
    ``torch.no_grad()``. The model is put in eval mode. Texts come from ``annotate(...,
    decode=...)``; all-empty texts are refused.
    """
    if int(batch_size) != batch_size or batch_size < 1:
        raise GenmetricsError(
            f"judge_lm_annotator: batch_size must be a positive integer, got {batch_size!r}"
        )
    try:
        template.format(text="")
    except (KeyError, IndexError, ValueError) as e:
        raise GenmetricsError(
            f"judge_lm_annotator: template {template!r} must have one field {{text}} and no "
            f"other braces (double them: {{{{ }}}}): {e!r}"
        ) from None
    if "\x00" not in template.format(text="\x00"):
        raise GenmetricsError(f"judge_lm_annotator: template {template!r} has no {{text}} field")
    if chat and not getattr(tokenizer, "chat_template", None):
        raise GenmetricsError(
            "judge_lm_annotator: chat=True needs a tokenizer with a chat template"
        )
    model.eval()
    return _JudgeAnnotator(model, tokenizer, template, yes, no, int(batch_size), chat)
