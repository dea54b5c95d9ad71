"""Shared fixtures: the real-data folder, a tiny random causal LM with a word-level tokenizer."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"

# One download cache for the test session (assets, wheels, converted models), inside the repo.
os.environ.setdefault("GENMETRICS_CACHE", str(REPO / ".cache" / "genmetrics"))

WORDS = (
    "the a cat dog sat ran on in mat park and then it was happy sad big small red blue "
    "house tree quickly slowly . , ! ?"
).split()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


def build_tokenizer(with_bos: bool = True, chat: bool = False):
    """A word-level fast tokenizer over WORDS (+ specials), built in memory."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    specials = ["<unk>", "<pad>", "<s>", "</s>", "<|user|>", "<|assistant|>"]
    vocab = {w: i for i, w in enumerate(specials + WORDS)}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    if with_bos:
        tk.post_processor = processors.TemplateProcessing(
            single="<s> $A", special_tokens=[("<s>", vocab["<s>"])]
        )
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk,
        unk_token="<unk>",
        pad_token="<pad>",
        bos_token="<s>" if with_bos else None,
        eos_token="</s>",
    )
    if chat:
        tok.chat_template = (
            "{% for m in messages %}<|user|> {{ m['content'] }} {% endfor %}"
            "{% if add_generation_prompt %}<|assistant|> {% endif %}"
        )
    return tok


def build_model(vocab_size: int, seed: int = 0):
    """A 2-layer randomly initialised Llama (fast on CPU)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=128,
        bos_token_id=2,
        eos_token_id=3,
        pad_token_id=1,
    )
    model = LlamaForCausalLM(cfg)
    model.eval()
    return model


@pytest.fixture(scope="session")
def tiny_lm():
    tok = build_tokenizer(with_bos=True, chat=True)
    return build_model(len(tok)), tok


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory, tiny_lm):
    """The tiny model saved as an HF folder (config.json + safetensors + tokenizer)."""
    model, tok = tiny_lm
    d = tmp_path_factory.mktemp("tiny_model")
    model.save_pretrained(d)
    tok.save_pretrained(d)
    return d
