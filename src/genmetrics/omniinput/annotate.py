"""Annotating OmniInput samples: a CSV for human raters, its reader, and automatic annotators.

Every bin b of a Wang–Landau run keeps representative samples (``WLResult.samples[b]``, an
int64 array (k_b, L) of token ids). Each sample gets a score s ∈ [0, 1] (1 = the sample is
what the model should output / a good text), and r(z_b) = (1/n_b) Σ s over the n_b scored
samples of bin b (NaN when n_b = 0), which :func:`~genmetrics.omniinput.curves.
precision_recall_curve` turns into precision and recall.

Human and automatic annotation share one path:

* :func:`export_samples` writes one CSV row per sample, columns :data:`COLUMNS`
  (``bin, z_low, z_high, sample, z, tokens, text, score``); a rater fills ``score``.
* an automatic :class:`Annotator` (a rule via :func:`rule_annotator`, or a judge LM via
  :func:`judge_lm_annotator`) scores the samples through :func:`annotate`; its scores are
  written with ``export_samples(..., scores=...)``, exactly like a filled human CSV.
* :func:`read_annotations` reads either CSV back; it and the automatic path both compute r
  with :func:`r_from_scores`.
"""

from __future__ import annotations

import csv
import importlib
import inspect
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.io import PathLike, atomic_path, regular_file
from genmetrics.omniinput.density import Bins
from genmetrics.omniinput.toy import digit_sum_rule

#: the columns of an annotation CSV, in order
COLUMNS = ("bin", "z_low", "z_high", "sample", "z", "tokens", "text", "score")
#: columns :func:`read_annotations` needs
REQUIRED_COLUMNS = ("bin", "score")
#: bin edges in a CSV must match ``bins.edges`` within this relative tolerance
EDGE_RTOL = 1e-9
#: the default question for :func:`judge_lm_annotator`
DEFAULT_JUDGE_TEMPLATE = (
    "Is the following text fluent, grammatical English? Text: {text}\nAnswer yes or no:"
)
#: how many missing bins a :func:`read_annotations` error lists
_LIST_MISSING = 5


class Annotator(Protocol):
    """Scores for n samples: int64 tokens (n, L) and their texts (n) → float (n,) in [0, 1]."""

    def __call__(self, tokens: np.ndarray, texts: list[str]) -> np.ndarray: ...


@dataclass
class Annotations:
    """Scores read back per bin: ``r`` (n_bins,) mean score (NaN where ``counts`` is 0),
    ``counts`` (n_bins,) int64 number of scored samples, ``scores`` one float64 array per bin."""

    r: np.ndarray
    counts: np.ndarray
    scores: list[np.ndarray]


# ---------------------------------------------------------------------------------------------
# scores → r


def _check_scores(scores: Any, n: int, what: str) -> np.ndarray:
    """``scores`` as float64 (n,), finite and in [0, 1]; else an error naming ``what``."""
    try:
        s = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise GenmetricsError(f"{what}: scores are not numbers ({e})") from None
    if s.shape != (n,):
        raise GenmetricsError(f"{what}: expected {n} scores (shape ({n},)), got shape {s.shape}")
    bad = np.flatnonzero(~np.isfinite(s) | (s < 0) | (s > 1))
    if len(bad):
        i = int(bad[0])
        raise GenmetricsError(
            f"{what}: score {i} is {float(s[i])!r}; every score must be a finite number in [0, 1] "
            f"({len(bad)} such scores)"
        )
    return s


def r_from_scores(scores: Sequence[np.ndarray], n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """(r, counts) from one score array per bin: r_b = mean of bin b's scores (float64, NaN
    for a bin without scores), counts_b = how many (int64). Scores must be in [0, 1]."""
    if len(scores) != n_bins:
        raise GenmetricsError(f"r_from_scores: {len(scores)} score arrays for {n_bins} bins")
    r = np.full(n_bins, np.nan)
    counts = np.zeros(n_bins, np.int64)
    for b, s in enumerate(scores):
        s = np.asarray(s, dtype=np.float64)
        if s.ndim != 1:
            raise GenmetricsError(f"r_from_scores: bin {b}: scores must be 1-D, got {s.shape}")
        s = _check_scores(s, s.size, f"r_from_scores: bin {b}")
        counts[b] = s.size
        if s.size:
            r[b] = float(s.mean())
    return r, counts


# ---------------------------------------------------------------------------------------------
# CSV export and import


def _bin_samples(samples: Sequence[np.ndarray], n_bins: int) -> list[np.ndarray]:
    if len(samples) != n_bins:
        raise GenmetricsError(f"samples: {len(samples)} arrays for {n_bins} bins (one per bin)")
    out = []
    for b, s in enumerate(samples):
        s = np.asarray(s)
        if s.size == 0:
            out.append(np.zeros((0, s.shape[-1] if s.ndim == 2 else 0), np.int64))
            continue
        if s.ndim != 2 or s.dtype.kind not in "iu":
            raise GenmetricsError(
                f"samples: bin {b}: expected integer token ids of shape (k, L), got "
                f"{s.dtype} {s.shape}"
            )
        out.append(s.astype(np.int64, copy=False))
    return out


def _per_bin(values: Sequence[np.ndarray] | None, samples: list[np.ndarray], name: str):
    if values is None:
        return None
    if len(values) != len(samples):
        raise GenmetricsError(f"{name}: {len(values)} arrays for {len(samples)} bins")
    out = []
    for b, (v, s) in enumerate(zip(values, samples, strict=True)):
        v = np.asarray(v, dtype=np.float64)
        if v.size == 0:
            v = v.reshape(0)  # an empty bin's array may be (0,) or (0, 1)
        if name == "scores":
            out.append(_check_scores(v, len(s), f"scores: bin {b}"))
            continue
        if v.shape != (len(s),):
            raise GenmetricsError(
                f"{name}: bin {b}: expected shape ({len(s)},) (one per sample), got {v.shape}"
            )
        out.append(v)
    return out


def export_samples(
    path: PathLike,
    samples: Sequence[np.ndarray],
    bins: Bins,
    z: Sequence[np.ndarray] | None = None,
    decode: Callable[[np.ndarray], str] | None = None,
    scores: Sequence[np.ndarray] | None = None,
) -> int:
    """Write the samples as a CSV for raters (atomically, UTF-8, header :data:`COLUMNS`).

    One row per sample: ``bin`` index, its edges ``z_low``/``z_high`` (``repr`` floats, exact),
    ``sample`` index within the bin, the sample's own output ``z`` (empty without ``z``),
    ``tokens`` (ids separated by spaces), ``text`` (``decode(tokens)``; empty without
    ``decode``) and ``score`` (empty for a rater to fill, or ``scores[b][i]``). Bins without
    samples write no rows. Returns the number of rows written.
    """
    samp = _bin_samples(samples, bins.n)
    zs = _per_bin(z, samp, "z")
    sc = _per_bin(scores, samp, "scores")
    edges = bins.edges
    rows = 0
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for b, s in enumerate(samp):
            lo, hi = repr(float(edges[b])), repr(float(edges[b + 1]))
            for i, toks in enumerate(s):
                text = ""
                if decode is not None:
                    text = decode(toks)
                    if not isinstance(text, str):
                        raise GenmetricsError(
                            f"decode returned {type(text).__name__}, not str (bin {b}, sample {i})"
                        )
                w.writerow(
                    [
                        b,
                        lo,
                        hi,
                        i,
                        "" if zs is None else repr(float(zs[b][i])),
                        " ".join(str(int(t)) for t in toks),
                        text,
                        "" if sc is None else repr(float(sc[b][i])),
                    ]
                )
                rows += 1
    return rows


def _float(cell: str) -> float | None:
    try:
        return float(cell)
    except ValueError:
        return None


def _int(cell: str) -> int | None:
    try:
        return int(cell)
    except ValueError:
        v = _float(cell)  # "3.0" from a spreadsheet
        return int(v) if v is not None and v.is_integer() else None


def read_annotations(
    path: PathLike,
    bins: Bins,
    populated: np.ndarray | None = None,
    allow_missing: bool = False,
) -> Annotations:
    """Read a scored CSV of :func:`export_samples` (by a rater or an automatic annotator).

    Needs columns ``bin`` and ``score``; other columns are ignored, except ``z_low`` and
    ``z_high`` which, when present, must equal ``bins.edges`` within :data:`EDGE_RTOL`
    (relative to the largest of |lo|, |hi|, hi − lo): a CSV made for other bins is refused.
    Every score must be a number in [0, 1]; an empty score is an error unless
    ``allow_missing`` (then the row is skipped). With ``populated`` (bool per bin, e.g.
    ``np.isfinite(result.ln_rho)``) every populated bin needs at least one score. Errors name
    the file and the (1-based, physical) line of the record.
    """
    path = regular_file(path)
    edges = bins.edges
    tol = EDGE_RTOL * max(abs(bins.lo), abs(bins.hi), bins.hi - bins.lo)
    per_bin: list[list[float]] = [[] for _ in range(bins.n)]
    n_rows = 0
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            reader = csv.reader(f)
            header = next(reader, None)
            if header is None:
                raise GenmetricsError(
                    f"{path}: the file is empty (expected a header row {','.join(COLUMNS)})"
                )
            header = [h.strip() for h in header]
            missing = [c for c in REQUIRED_COLUMNS if c not in header]
            if missing:
                raise GenmetricsError(
                    f"{path}: line 1: no column {missing[0]!r} in the header (has {header})"
                )
            col = {c: header.index(c) for c in COLUMNS if c in header}
            while True:
                line = reader.line_num + 1
                row = next(reader, None)
                if row is None:
                    break
                if not row:  # a blank line
                    continue
                where = f"{path}: line {line}"
                if len(row) != len(header):
                    raise GenmetricsError(
                        f"{where}: {len(row)} fields, but the header has {len(header)}"
                    )
                n_rows += 1
                cell = row[col["bin"]].strip()
                b = _int(cell)
                if b is None or not 0 <= b < bins.n:
                    raise GenmetricsError(
                        f"{where}: bin {cell!r} is not an integer in 0..{bins.n - 1}"
                    )
                for name, k in (("z_low", b), ("z_high", b + 1)):
                    if name not in col:
                        continue
                    cell = row[col[name]].strip()
                    v = _float(cell)
                    if v is None or not math.isclose(v, edges[k], rel_tol=0, abs_tol=tol):
                        raise GenmetricsError(
                            f"{where}: {name} {cell!r} of bin {b} does not match the bins "
                            f"({name} = {float(edges[k])!r} for {bins.as_dict()}): this CSV "
                            f"was made for other bins"
                        )
                cell = row[col["score"]].strip()
                if not cell:
                    if allow_missing:
                        continue
                    raise GenmetricsError(
                        f"{where}: score is empty — every exported sample needs a score"
                    )
                s = _float(cell)
                if s is None:
                    raise GenmetricsError(f"{where}: score {cell!r} is not a number")
                if math.isnan(s):
                    raise GenmetricsError(f"{where}: score is NaN; scores are numbers in [0, 1]")
                if not 0.0 <= s <= 1.0:
                    raise GenmetricsError(f"{where}: score {cell} is outside [0, 1]")
                per_bin[b].append(s)
    except UnicodeDecodeError as e:
        raise GenmetricsError(f"{path}: invalid UTF-8 at byte {e.start}") from None
    except csv.Error as e:
        raise GenmetricsError(f"{path}: line {reader.line_num}: not valid CSV ({e})") from None
    if n_rows == 0:
        raise GenmetricsError(f"{path}: header only, no sample rows")
    scores = [np.asarray(v, dtype=np.float64) for v in per_bin]
    r, counts = r_from_scores(scores, bins.n)
    if populated is not None:
        pop = np.asarray(populated, dtype=bool)
        if pop.shape != (bins.n,):
            raise GenmetricsError(f"populated: expected shape ({bins.n},), got {pop.shape}")
        lacking = np.flatnonzero(pop & (counts == 0))
        if len(lacking):
            listed = ", ".join(
                f"bin {b} [{float(edges[b])!r}, {float(edges[b + 1])!r}]"
                for b in lacking[:_LIST_MISSING]
            )
            more = (
                f" and {len(lacking) - _LIST_MISSING} more" if len(lacking) > _LIST_MISSING else ""
            )
            raise GenmetricsError(
                f"{path}: {len(lacking)} populated bin(s) have no scored sample: {listed}{more}; "
                f"r(z) is undefined there (export samples for them and score them)"
            )
    return Annotations(r=r, counts=counts, scores=scores)


# ---------------------------------------------------------------------------------------------
# automatic annotators


def annotate(
    samples: Sequence[np.ndarray],
    annotator: Annotator,
    decode: Callable[[np.ndarray], str] | None = None,
) -> list[np.ndarray]:
    """Scores per bin from ``annotator`` (an empty array for a bin without samples); texts are
    ``decode(tokens)`` per sample, or ``""`` without ``decode``. The samples of all bins go
    to the annotator in one call when they share L (it batches itself)."""
    samp = _bin_samples(samples, len(samples))
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
        scores = _check_scores(annotator(tokens, texts), len(tokens), f"annotator {name}")
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
        return _check_scores(out, len(tokens), self.name)

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
