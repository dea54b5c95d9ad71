"""A causal language model as OmniInput's output function over Ω = V^L (Liu et al.).

x is any sequence of L token ids from the tokenizer's vocabulary (ids 0..V−1, V = the smaller
of the tokenizer's length and the embedding rows; special tokens included, as the input space
is every sequence). The model reads ``start`` (BOS, or EOS for tokenizers without one, as
SmolLM2) and then x; z(x) = −(1/L) Σ_t ln p(x_t | start, x_<t) is the mean NLL in nats per
token, the softmax taken over the model's whole output vocabulary. Low z: the model likes x.

``grad`` gives ∂z/∂onehot(x), shape (L, V), for the gradient (Gibbs-with-Gradients) proposal:
the input embeddings are onehot @ E and the targets are selected by the same one-hot, so one
backward pass reaches both uses of each token.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.omniinput.proposals import check_tokens


class CausalLMOutput:
    """``z = f(tokens)`` and ``z, g = f.grad(tokens)`` for int64 tokens (n, L)."""

    def __init__(self, model: Any, tokenizer: Any, length: int, batch_size: int = 64) -> None:
        if int(length) != length or length < 1:
            raise GenmetricsError(f"length must be a positive integer, got {length!r}")
        self.model, self.tokenizer = model.eval(), tokenizer
        self.length, self.batch_size = int(length), int(batch_size)
        emb = model.get_input_embeddings()
        self.vocab_size = int(min(len(tokenizer), emb.num_embeddings))
        start = tokenizer.bos_token_id
        if start is None:
            start = tokenizer.eos_token_id
        if start is None:
            raise GenmetricsError("the tokenizer has neither a BOS nor an EOS token to start from")
        self.start = int(start)
        self.device = emb.weight.device

    def _log_probs(self, x: Any, onehot: Any = None) -> Any:
        import torch

        E = self.model.get_input_embeddings().weight
        n = x.shape[0]
        if onehot is None:
            inputs = self.model.get_input_embeddings()(x[:, :-1])
        else:
            inputs = onehot[:, :-1].to(E.dtype) @ E[: self.vocab_size]
        start = E[self.start].expand(n, 1, -1)
        emb = torch.cat([start, inputs], dim=1)
        logp = torch.log_softmax(self.model(inputs_embeds=emb).logits.float(), dim=-1)
        if onehot is None:
            return logp.gather(-1, x[..., None])[..., 0]
        return (logp[..., : self.vocab_size] * onehot).sum(-1)

    def __call__(self, tokens: np.ndarray) -> np.ndarray:
        import torch

        tokens = self._check(tokens)
        out = np.empty(len(tokens), np.float64)
        with torch.no_grad():
            for s in range(0, len(tokens), self.batch_size):
                x = torch.from_numpy(tokens[s : s + self.batch_size]).to(self.device)
                out[s : s + len(x)] = (-self._log_probs(x).mean(-1)).double().cpu().numpy()
        return out

    def grad(self, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        import torch

        tokens = self._check(tokens)
        zs, gs = [], []
        for s in range(0, len(tokens), self.batch_size):
            x = torch.from_numpy(tokens[s : s + self.batch_size]).to(self.device)
            onehot = torch.nn.functional.one_hot(x, self.vocab_size).float()
            onehot.requires_grad_(True)
            with torch.enable_grad():
                z = -self._log_probs(x, onehot).mean(-1)
                (g,) = torch.autograd.grad(z.sum(), onehot)
            zs.append(z.detach().double().cpu().numpy())
            gs.append(g.double().cpu().numpy())
        return np.concatenate(zs), np.concatenate(gs)

    def decode(self, tokens: np.ndarray) -> str:
        """The text of one sequence, special tokens written out (they are part of Ω)."""
        return self.tokenizer.decode([int(t) for t in tokens], skip_special_tokens=False)

    def _check(self, tokens: np.ndarray) -> np.ndarray:
        return check_tokens(tokens, self.length, self.vocab_size)
