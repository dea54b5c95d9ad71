"""The OmniInput toy with a ground truth (Liu et al., §3.2 of "Evaluation of human-model
prediction difference on the Internet Scale of Data"): a tiny GPT-2 trained on fixed-length digit
sequences whose digit sum is divisible by ``m``, small enough that every input can be enumerated.

* Input space Ω = {0..V−1}^L (V digits, token id = digit), |Ω| = V^L.
* The model is autoregressive over exactly the V digit tokens, after a BOS token (id V): the
  softmax is taken over the digit logits only, so Σ_{x∈Ω} p(x) = 1 exactly.
* Output z(x) = −(1/L) Σ_t ln p(x_t | BOS, x_<t), the mean NLL in nats per digit (low: the model
  likes x). The paper used V = 10, L = 8, m = 30 (10^8 inputs; the valid sums 30 and 60 lie
  near the most common sum, 36). The defaults here, L = 6 and m = 27 (10^6 inputs, valid sums
  0, 27 and 54, 27 being the most common sum: 5.5 % valid), enumerate on 2 CPU cores in about
  30 s. (With m = 9 the rule is a sum modulo 9, which a 2-layer model does not learn in a few
  thousand steps: its loss stays at ln 10.)
* Training data: uniform draws from the valid set (rejection sampling from Ω, seeded), AdamW on
  the digit cross-entropy. Same seed and thread count → the same weights.
* ``grad``: ∂z/∂onehot(x) of shape (L, V), through the input embeddings (one-hot @ wte) and the
  targets (z = −(1/L) Σ_t Σ_v onehot_{t,v} log p_{t,v}), for the gradient (GWG) proposal.

The model is saved as a Hugging Face folder (``config.json`` + ``model.safetensors``) plus
``toy.json`` with the spec and the training log; no pickle.
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from genmetrics import GenmetricsError

_log = logging.getLogger("genmetrics")
SPEC_FILE = "toy.json"


@dataclass(frozen=True)
class DigitToySpec:
    """The toy: input space, rule and the tiny GPT-2 with its training schedule."""

    vocab_size: int = 10
    length: int = 6
    modulus: int = 27
    layers: int = 2
    d_model: int = 64
    heads: int = 4
    steps: int = 1500
    batch_size: int = 256
    lr: float = 3e-3
    seed: int = 0

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "lr":
                if not (isinstance(v, (int, float)) and 0 < v < 1):
                    raise GenmetricsError(f"omniinput.toy.lr must be in (0, 1), got {v!r}")
            elif f.name == "seed":
                if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                    raise GenmetricsError(f"omniinput.toy.seed must be an integer ≥ 0, got {v!r}")
            elif not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise GenmetricsError(
                    f"omniinput.toy.{f.name} must be a positive integer, got {v!r}"
                )
        if self.vocab_size < 2:
            raise GenmetricsError(f"omniinput.toy.vocab_size must be ≥ 2, got {self.vocab_size}")
        if self.d_model % self.heads:
            raise GenmetricsError(
                f"omniinput.toy.d_model ({self.d_model}) must be a multiple of heads ({self.heads})"
            )

    @property
    def space_size(self) -> int:
        return self.vocab_size**self.length

    def valid_fraction(self) -> float:
        """|{x : Σ x ≡ 0 (mod m)}| / V^L, exactly (a convolution of digit-sum counts)."""
        counts = np.ones(1, dtype=object)
        for _ in range(self.length):
            counts = np.convolve(counts, np.ones(self.vocab_size, dtype=object))
        valid = sum(counts[:: self.modulus])
        return float(valid) / self.space_size


def _torch():
    import torch

    return torch


def train_valid_batch(spec: DigitToySpec, rng: np.random.Generator, n: int) -> np.ndarray:
    """``n`` uniform draws from the valid set (rejection sampling from Ω), int64 (n, L)."""
    out = np.empty((0, spec.length), np.int64)
    frac = max(spec.valid_fraction(), 1e-9)
    while len(out) < n:
        m = int(math.ceil((n - len(out)) / frac * 1.2)) + 16
        x = rng.integers(0, spec.vocab_size, size=(m, spec.length), dtype=np.int64)
        out = np.concatenate([out, x[x.sum(axis=1) % spec.modulus == 0]])
    return out[:n]


class DigitLM:
    """The toy model as OmniInput's output function: ``z = lm(tokens)``, ``z, g = lm.grad(tokens)``."""

    def __init__(self, model: Any, spec: DigitToySpec, batch_size: int = 4096) -> None:
        self.model, self.spec, self.batch_size = model.eval(), spec, batch_size
        self.vocab_size, self.length = spec.vocab_size, spec.length

    # ---------------------------------------------------------------- construction
    @classmethod
    def build(cls, spec: DigitToySpec) -> DigitLM:
        """An untrained model with ``spec``'s shape, initialised from ``spec.seed``."""
        torch = _torch()
        from transformers import GPT2Config, GPT2LMHeadModel

        torch.manual_seed(spec.seed)
        config = GPT2Config(
            vocab_size=spec.vocab_size + 1,  # digits + BOS
            n_positions=spec.length,
            n_embd=spec.d_model,
            n_layer=spec.layers,
            n_head=spec.heads,
            resid_pdrop=0.0,
            embd_pdrop=0.0,
            attn_pdrop=0.0,
            bos_token_id=spec.vocab_size,
            eos_token_id=spec.vocab_size,
        )
        return cls(GPT2LMHeadModel(config), spec)

    @classmethod
    def train(cls, spec: DigitToySpec, progress: bool = False) -> tuple[DigitLM, dict[str, Any]]:
        """Train the toy (see the module docstring): warm-up then cosine learning rate.

        Returns the model and a training log (the loss every 100 steps and the last one)."""
        torch = _torch()
        from tqdm.auto import tqdm

        lm = cls.build(spec)
        model = lm.model.train()
        opt = torch.optim.AdamW(model.parameters(), lr=spec.lr, weight_decay=0.0)
        rng = np.random.default_rng(spec.seed)
        losses = []
        for step in tqdm(range(spec.steps), desc="train digit toy", disable=not progress):
            lr = (
                spec.lr
                * min(1.0, (step + 1) / 100)
                * 0.5
                * (1 + math.cos(math.pi * step / spec.steps))
            )
            for group in opt.param_groups:
                group["lr"] = lr
            x = torch.from_numpy(train_valid_batch(spec, rng, spec.batch_size))
            loss = -lm._log_probs(x).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % 100 == 0 or step == spec.steps - 1:
                losses.append([step, float(loss.detach())])
        model.eval()
        return lm, {"losses": losses, "final_loss": losses[-1][1]}

    def save(self, folder: str | Path, log: dict[str, Any] | None = None) -> None:
        """config.json + model.safetensors + toy.json (spec and training log)."""
        from genmetrics.io import write_json

        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        self.model.save_pretrained(folder, safe_serialization=True)
        write_json(folder / SPEC_FILE, {"spec": asdict(self.spec), "training": log or {}})

    @classmethod
    def load(cls, folder: str | Path) -> DigitLM:
        from transformers import GPT2LMHeadModel

        folder = Path(folder)
        try:
            meta = json.loads((folder / SPEC_FILE).read_text(encoding="utf-8"))
            spec = DigitToySpec(**meta["spec"])
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise GenmetricsError(f"{folder / SPEC_FILE}: not a digit toy spec ({e})") from None
        model = GPT2LMHeadModel.from_pretrained(folder, use_safetensors=True)
        return cls(model, spec)

    # ---------------------------------------------------------------- outputs
    def _log_probs(self, x: Any, onehot: Any = None) -> Any:
        """ln p(x_t | BOS, x_<t) per position (n, L); with ``onehot`` (n, L, V) the inputs are
        one-hot @ wte and the targets are selected by the one-hot, so autograd reaches it."""
        torch = _torch()
        wte = self.model.transformer.wte.weight
        v = self.vocab_size
        n = x.shape[0]
        if onehot is None:
            onehot = torch.nn.functional.one_hot(x, v).to(wte.dtype)
        bos = wte[v].expand(n, 1, -1)
        emb = torch.cat([bos, onehot[:, :-1] @ wte[:v]], dim=1)
        logits = self.model(inputs_embeds=emb).logits[..., :v]
        return (torch.log_softmax(logits.float(), dim=-1) * onehot).sum(-1)

    def __call__(self, tokens: np.ndarray) -> np.ndarray:
        """z for every sequence: mean NLL in nats per digit, float64 (n,)."""
        torch = _torch()
        tokens = self._check(tokens)
        out = np.empty(len(tokens), np.float64)
        with torch.no_grad():
            for s in range(0, len(tokens), self.batch_size):
                x = torch.from_numpy(tokens[s : s + self.batch_size])
                out[s : s + len(x)] = (-self._log_probs(x).mean(-1)).double().numpy()
        return out

    def grad(self, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(z (n,), ∂z/∂onehot (n, L, V)) by one forward and one backward pass."""
        torch = _torch()
        tokens = self._check(tokens)
        x = torch.from_numpy(tokens)
        onehot = torch.nn.functional.one_hot(x, self.vocab_size).float().requires_grad_(True)
        z = -self._log_probs(x, onehot).mean(-1)
        (g,) = torch.autograd.grad(z.sum(), onehot)
        return z.detach().double().numpy(), g.double().numpy()

    def _check(self, tokens: np.ndarray) -> np.ndarray:
        tokens = np.ascontiguousarray(tokens, dtype=np.int64)
        if tokens.ndim != 2 or tokens.shape[1] != self.length:
            raise GenmetricsError(
                f"digit toy: tokens must have shape (n, {self.length}), got {tokens.shape}"
            )
        if tokens.size and (tokens.min() < 0 or tokens.max() >= self.vocab_size):
            raise GenmetricsError(f"digit toy: tokens must be digits 0..{self.vocab_size - 1}")
        return tokens

    def rule(self, tokens: np.ndarray) -> np.ndarray:
        """The annotator of this toy: 1 where the digit sum is divisible by m."""
        from genmetrics.omniinput.toy import digit_sum_rule

        return digit_sum_rule(tokens, self.spec.modulus)
