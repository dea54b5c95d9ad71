"""A text classifier as OmniInput's output function (Liu et al. §3.4): z(x) = the logit of the
positive class for an input x ∈ Ω = V^L of one tokenizer's vocabulary.

The paper samples a sentiment classifier (DistilBERT on SST-2) whose inputs have a fixed
length: texts are padded to that length and the pad tokens are part of the input. SST-2 and
DistilBERT are not offline, so the workflow trains a small classifier on real labelled text
(AG News, one topic vs the rest):

* **Model** (bag of token ids, logistic regression): z(x) = b + (1/L) Σ_{i=1..L} w[x_i], with
  one weight per vocabulary entry (V = the tokenizer's length); p(positive | x) = σ(z).
* **Fixed length, padding as the paper**: a training text is tokenized without special tokens,
  cut to its first L tokens, and right-padded to L with the tokenizer's pad token
  (:func:`pad_tokens`; SmolLM2: ``<|im_end|>``, id 2; its EOS when there is none). The pads
  are positions of the input like any other token: no mask, w[pad] is learnt, and the mean is
  over all L positions. The sampler's inputs are every sequence of L ids (pads anywhere
  included), so training and sampling see the same kind of input.
* **Training**: a seeded, class-balanced draw (equal positives and negatives, so chance is
  0.5) of ``max_train`` texts; full-batch Adam on the binary cross-entropy + l2 ‖w‖²;
  accuracy on a balanced held-out draw (``max_heldout``) of another file.
* **Gradient** for the gradient proposal: ∂z/∂onehot(x)_{i,v} = w[v] / L (exact: z is linear
  in the one-hot input).
* **File**: weights as safetensors (``weight`` (V,), ``bias`` (1,)), settings and accuracy as
  JSON next to it (no pickle).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.omniinput.proposals import check_tokens


def pad_tokens(ids: Sequence[int], length: int, pad_id: int) -> np.ndarray:
    """``ids`` as a fixed-length input: the first ``length`` ids, then ``pad_id`` up to
    ``length`` (the pads are part of the input, as in the paper). int64 (length,)."""
    if int(length) != length or length < 1:
        raise GenmetricsError(f"pad_tokens: length must be a positive integer, got {length!r}")
    out = np.full(int(length), int(pad_id), np.int64)
    head = np.asarray(list(ids)[: int(length)], np.int64)
    out[: len(head)] = head
    return out


def read_labelled(path: str | Path, text_field: str, label_field: str) -> tuple[list[str], list]:
    """Texts and labels of a JSONL file; a row without either field is an error naming it."""
    from genmetrics.io import read_jsonl

    texts, labels = [], []
    for i, row in enumerate(read_jsonl(path)):
        if text_field not in row or label_field not in row:
            raise GenmetricsError(f"{path}: row {i} lacks {text_field!r} or {label_field!r}")
        texts.append(str(row[text_field]))
        labels.append(row[label_field])
    return texts, labels


def balanced_draw(labels: Sequence[Any], positive: Any, n: int, seed: int) -> np.ndarray:
    """Indices of n // 2 positives and n // 2 negatives (fewer when a class is short), drawn
    without replacement with ``seed``, shuffled."""
    y = np.array([lab == positive for lab in labels])
    if not y.any() or y.all():
        raise GenmetricsError(f"positive={positive!r}: the labels need both classes")
    rng = np.random.default_rng(seed)
    half = min(n // 2, int(y.sum()), int((~y).sum()))
    pos = rng.choice(np.flatnonzero(y), half, replace=False)
    neg = rng.choice(np.flatnonzero(~y), half, replace=False)
    return rng.permutation(np.concatenate([pos, neg]))


class BagOfTokens:
    """``z = f(tokens)`` and ``z, g = f.grad(tokens)`` for int64 tokens (n, L): the logit
    b + mean_i w[x_i] (see the module docstring)."""

    def __init__(self, weight: np.ndarray, bias: float, length: int, pad_id: int) -> None:
        self.weight = np.asarray(weight, np.float64)
        self.bias, self.length, self.pad_id = float(bias), int(length), int(pad_id)
        self.vocab_size = len(self.weight)

    def __call__(self, tokens: np.ndarray) -> np.ndarray:
        tokens = self._check(tokens)
        return self.bias + self.weight[tokens].mean(axis=1)

    def grad(self, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        tokens = self._check(tokens)
        g = np.broadcast_to(self.weight / self.length, (len(tokens), self.length, self.vocab_size))
        return self(tokens), np.array(g)

    def encode(self, tokenize: Callable[[str], list[int]], texts: Sequence[str]) -> np.ndarray:
        """Texts as fixed-length inputs (n, L) (:func:`pad_tokens`)."""
        rows = [pad_tokens(tokenize(t), self.length, self.pad_id) for t in texts]
        return np.stack(rows) if rows else np.zeros((0, self.length), np.int64)

    def _check(self, tokens: np.ndarray) -> np.ndarray:
        return check_tokens(tokens, self.length, self.vocab_size)

    def save(self, path: str | Path, meta: Mapping[str, Any]) -> None:
        """Weights as safetensors at ``path`` (atomic), ``meta`` + length/pad as JSON beside."""
        from safetensors.numpy import save_file

        from genmetrics.io import atomic_path, write_json

        tensors = {
            "weight": self.weight.astype(np.float32),
            "bias": np.array([self.bias], np.float32),
        }
        with atomic_path(path) as tmp:
            save_file(tensors, str(tmp))
        write_json(_meta_path(path), {**meta, "length": self.length, "pad_id": self.pad_id})

    @classmethod
    def load(cls, path: str | Path) -> BagOfTokens:
        from safetensors.numpy import load_file

        t = load_file(str(path))
        meta = json.loads(_meta_path(path).read_text())
        return cls(t["weight"], float(t["bias"][0]), meta["length"], meta["pad_id"])


def _meta_path(path: str | Path) -> Path:
    return Path(path).with_suffix(".json")


def pad_id_of(tokenizer: Any) -> int:
    """The tokenizer's pad token, else its EOS (the pads of a fixed-length input)."""
    pad = getattr(tokenizer, "pad_token_id", None)
    if pad is None:
        pad = getattr(tokenizer, "eos_token_id", None)
    if pad is None:
        raise GenmetricsError("the tokenizer has neither a pad nor an EOS token to pad with")
    return int(pad)


def train_bag_of_tokens(
    train: np.ndarray,
    y: np.ndarray,
    vocab_size: int,
    pad_id: int,
    *,
    epochs: int,
    lr: float,
    l2: float,
    seed: int,
) -> BagOfTokens:
    """Logistic regression z = b + mean_i w[x_i] on fixed-length inputs ``train`` (n, L) with
    0/1 labels ``y``: full-batch Adam, ``epochs`` steps, loss BCE + l2 ‖w‖², torch seeded."""
    import torch

    torch.manual_seed(seed)
    x = torch.from_numpy(np.asarray(train, np.int64))
    t = torch.from_numpy(np.asarray(y, np.float32))
    w = torch.zeros(vocab_size, requires_grad=True)
    b = torch.zeros(1, requires_grad=True)
    opt = torch.optim.Adam([w, b], lr=lr)
    for _ in range(epochs):
        opt.zero_grad()
        z = b + w[x].mean(1)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(z, t) + l2 * (w * w).sum()
        loss.backward()
        opt.step()
    return BagOfTokens(w.detach().numpy(), float(b.detach()[0]), x.shape[1], pad_id)


def train_classifier(
    settings: Mapping[str, Any], tokenizer: Any, out: str | Path
) -> dict[str, Any]:
    """Train the classifier of ``omniinput.classifiers.<name>`` (see the module docstring),
    save it to ``out`` and return its report (held-out accuracy, chance, sizes)."""
    s = settings

    def tokenize(text: str) -> list[int]:
        return list(tokenizer(text, add_special_tokens=False)["input_ids"])

    vocab = len(tokenizer)
    pad = pad_id_of(tokenizer)
    proto = BagOfTokens(np.zeros(vocab), 0.0, s["length"], pad)
    data = {}
    for part, n in (("train", s["max_train"]), ("heldout", s["max_heldout"])):
        texts, labels = read_labelled(s[part]["path"], s["text_field"], s["label_field"])
        idx = balanced_draw(labels, s["positive"], n, s["seed"])
        y = np.array([labels[i] == s["positive"] for i in idx], np.float32)
        data[part] = (proto.encode(tokenize, [texts[i] for i in idx]), y)
    clf = train_bag_of_tokens(
        *data["train"], vocab, pad, epochs=s["epochs"], lr=s["lr"], l2=s["l2"], seed=s["seed"]
    )
    report: dict[str, Any] = {"vocab_size": vocab, "positive": s["positive"]}
    for part, (x, y) in data.items():
        z = clf(x)
        report[f"{part}_accuracy"] = float(np.mean((z > 0) == (y > 0.5)))
        report[f"{part}_n"] = len(y)
        report[f"{part}_positive_share"] = float(y.mean())
        report[f"{part}_logit_range"] = [float(z.min()), float(z.max())]
    report["chance_accuracy"] = float(max(data["heldout"][1].mean(), 1 - data["heldout"][1].mean()))
    clf.save(out, report)
    return report
