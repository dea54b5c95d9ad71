"""A fake of vLLM's offline interface (``LLM``, ``SamplingParams``, ``RequestOutput``,
``CompletionOutput``) for CPU-only tests of the vLLM backend (:mod:`genmetrics.generation.vllm_backend`).

Select it with ``GENMETRICS_VLLM_MODULE=genmetrics.testing.fake_vllm``. ``LLM(model=<folder>)``
loads only the folder's tokenizer; ``LLM.generate`` draws each completion's tokens from a
``random.Random`` seeded by sha256 of (the request's seed, its prompt token ids, the sample
index): the same request gives the same tokens whatever else is in the call, another seed
other tokens; ``temperature`` 0 (greedy) ignores the seed. A draw stops with the first stop
token (the tokenizer's EOS or ``stop_token_ids``, kept in ``token_ids`` as vLLM keeps them;
never before ``min_tokens``) or at ``max_tokens``. Its texts mean nothing: it exercises the
backend's files, ids, seeds and resuming, not a language model.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__version__ = "fake"

#: the keyword arguments of every ``LLM`` made in this process (tests read them)
CREATED: list[dict[str, Any]] = []

#: chance that a drawn token is a stop token once ``min_tokens`` are out
STOP_CHANCE = 0.15


@dataclass
class SamplingParams:
    """The ``vllm.SamplingParams`` fields the backend sets (an unknown keyword is a
    ``TypeError``, as in vLLM)."""

    n: int = 1
    seed: int | None = None
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    repetition_penalty: float = 1.0
    max_tokens: int | None = 16
    min_tokens: int = 0
    stop_token_ids: list[int] | None = None
    skip_special_tokens: bool = True


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: list[int]
    finish_reason: str | None = None  # "stop" | "length"
    stop_reason: int | None = None  # a stop token other than the EOS
    cumulative_logprob: float | None = None


@dataclass
class RequestOutput:
    request_id: str
    prompt: str | None
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput] = field(default_factory=list)
    finished: bool = True


class LLM:
    """``vllm.LLM``'s constructor and ``generate`` on a tokenizer alone (no weights run)."""

    def __init__(self, model: str, tokenizer: str | None = None, **kwargs: Any) -> None:
        from transformers import AutoTokenizer

        CREATED.append({"model": model, "tokenizer": tokenizer, **kwargs})
        self.seed = int(kwargs.get("seed") or 0)
        self.tokenizer = AutoTokenizer.from_pretrained(
            tokenizer or model,
            revision=kwargs.get("revision"),
            trust_remote_code=bool(kwargs.get("trust_remote_code", False)),
        )
        special = set(self.tokenizer.all_special_ids)
        self.words = [i for i in range(len(self.tokenizer)) if i not in special]
        self.requests = 0

    def generate(
        self,
        prompts: Sequence[Mapping[str, Any] | str],
        sampling_params: SamplingParams | Sequence[SamplingParams] | None = None,
        use_tqdm: bool = True,
    ) -> list[RequestOutput]:
        """One ``RequestOutput`` per prompt (``{"prompt_token_ids": [...]}`` or a string), in
        order; ``sampling_params`` one for all or one per prompt."""
        if sampling_params is None:
            sampling_params = SamplingParams()
        if isinstance(sampling_params, SamplingParams):
            sampling_params = [sampling_params] * len(prompts)
        if len(sampling_params) != len(prompts):
            raise ValueError("The lengths of prompts and sampling_params must be the same.")
        out = []
        for prompt, params in zip(prompts, sampling_params, strict=True):
            if isinstance(prompt, str):
                ids, text = list(self.tokenizer(prompt)["input_ids"]), prompt
            else:
                ids, text = list(prompt["prompt_token_ids"]), None
            completions = [self._complete(ids, params, k) for k in range(params.n)]
            out.append(RequestOutput(str(self.requests), text, ids, completions))
            self.requests += 1
        return out

    def _complete(self, prompt_ids: list[int], params: SamplingParams, k: int) -> CompletionOutput:
        seed = self.seed + self.requests if params.seed is None else params.seed
        if params.temperature == 0:
            seed = 0  # greedy: the prompt alone decides
        digest = hashlib.sha256(json.dumps([seed, prompt_ids, k]).encode()).digest()
        rng = random.Random(int.from_bytes(digest[:8], "big"))
        eos = self.tokenizer.eos_token_id
        stops = [eos, *(params.stop_token_ids or [])] if eos is not None else []
        stops = list(dict.fromkeys(t for t in stops if t is not None)) or [self.words[0]]
        tokens: list[int] = []
        finish, stop_reason = "length", None
        for _ in range(params.max_tokens or 16):
            if len(tokens) >= params.min_tokens and rng.random() < STOP_CHANCE:
                t = rng.choice(stops)
                tokens.append(t)
                finish, stop_reason = "stop", (None if t == eos else t)
                break
            tokens.append(rng.choice(self.words))
        text = self.tokenizer.decode(tokens, skip_special_tokens=params.skip_special_tokens)
        return CompletionOutput(k, text, tokens, finish, stop_reason)
