"""Test helpers: a tiny random causal LM with a word-level tokenizer, built in memory or saved
as a Hugging Face model folder that a workflow config can use as a ``kind: local`` checkpoint.

    python -m genmetrics.testing.tiny_lm tiny-model OUT_DIR

writes ``config.json``, ``model.safetensors`` and the tokenizer files to ``OUT_DIR`` in a
second or two, with no download: the offline test workflow (``.test/config.yaml``) reads it
from ``$GENMETRICS_TINY_MODEL``. Its numbers mean nothing; it exercises every code path.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: the vocabulary of the unit tests' tokenizer
WORDS = (
    "the a cat dog sat ran on in mat park and then it was happy sad big small red blue "
    "house tree quickly slowly . , ! ?"
).split()

#: the tiny model's vocabulary: common English words (lower case) and punctuation, so that
#: plain English text (the .test data) is mostly known words
TINY_VOCAB = sorted(
    set(WORDS)
    | set(
        """
        i you he she we they me him her us them my your his its our their this that these
        those there here who what when where why how which all some any no not every each
        is are was were be been being am have has had do does did will would can could
        shall should may might must go goes went gone come came see saw seen look looked
        make made take took get got give gave find found think thought know knew say said
        tell told ask asked work worked call called try tried need needed feel felt leave
        left keep kept let begin began seem seemed help helped talk talked turn turned
        start started show showed hear heard play played run move moved live lived
        believe hold held bring brought write wrote sit stand stood lose lost pay paid
        meet met include continue set learn learned change changed lead led understand
        watch watched follow followed stop stopped speak spoke read open opened walk
        walked win won grow grew offer remember love loved wait waited buy bought send
        sent build built stay stayed fall fell cut reach kill remain rained shone
        of to for with at by from up about into over after before under between through
        during without again out down off above near across along around behind
        time year years people way day days man woman women men child children world
        life hand part place case week company system program question government number
        night point home water room mother father area money story fact month lot right
        study book eye eyes job word words business issue side kind head service friend
        friends family power hour hours game line end member law car city town name
        team minute idea kid body information back parent face others level office door
        health person art war history party result morning reason research girl boy
        moment air teacher force education road river sea sun moon rain snow wind storm
        light fire bread food coffee tea milk garden street window village school market
        train bus ship boat farm field forest mountain hill lake bridge letter music song
        dinner lunch breakfast table chair bed kitchen box bag paper news country summer
        winter spring autumn sky star stars bird birds fish horse dogs cats apple
        good new first last long great little own other old big high different small
        large next early young important few public bad same able late hard best better
        sure free full warm cold hot dark bright quiet loud slow fast green white black
        brown yellow gray soft heavy empty clean dry wet deep short tall kind strange
        one two three four five six seven eight ten hundred
        and or but if so because as than too very just only also still even never always
        often sometimes once now then soon later today yesterday tomorrow again away
        together perhaps almost already yet well much more most less many such
        ; : ' " - ( )
        """.split()
    )
)


def build_tokenizer(
    with_bos: bool = True,
    chat: bool = False,
    words: Sequence[str] = WORDS,
    lowercase: bool = False,
):
    """A word-level fast tokenizer over ``words`` (+ specials), built in memory.

    Specials: ``<unk>`` 0, ``<pad>`` 1, ``<s>`` 2 (BOS, prepended when ``with_bos``), ``</s>``
    3 (EOS), ``<|user|>``, ``<|assistant|>``. Texts split on whitespace; with ``lowercase``
    they are lower-cased and punctuation splits from words. ``chat`` adds a chat template.
    """
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    specials = ["<unk>", "<pad>", "<s>", "</s>", "<|user|>", "<|assistant|>"]
    vocab = {w: i for i, w in enumerate(specials + [w for w in words if w not in specials])}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    if lowercase:
        tk.normalizer = normalizers.Lowercase()
        tk.pre_tokenizer = pre_tokenizers.Whitespace()
    else:
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


def build_model(vocab_size: int, seed: int = 0, hidden_size: int = 32, max_positions: int = 128):
    """A 2-layer randomly initialised Llama (fast on CPU), seeded."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=vocab_size,
        hidden_size=hidden_size,
        intermediate_size=2 * hidden_size,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=max_positions,
        bos_token_id=2,
        eos_token_id=3,
        pad_token_id=1,
    )
    model = LlamaForCausalLM(cfg)
    model.eval()
    return model


def tiny_lm(seed: int = 0) -> tuple[Any, Any]:
    """The tiny model of :func:`save_tiny_model`, in memory: (model, tokenizer)."""
    tok = build_tokenizer(with_bos=True, chat=True, words=TINY_VOCAB, lowercase=True)
    return build_model(len(tok), seed=seed, hidden_size=32, max_positions=256), tok


def save_tiny_model(out_dir: str | Path, seed: int = 0) -> Path:
    """Save the tiny model as an HF folder (config.json, model.safetensors, tokenizer files,
    chat template) loadable with ``AutoModelForCausalLM``/``AutoTokenizer``; return it."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model, tok = tiny_lm(seed)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    return out


def write_surprisal_npz(
    path: str | Path,
    seqs: Sequence[Any],
    ids: Sequence[str],
    prompt_ids: Sequence[str] | None = None,
) -> None:
    """A surprisal feature file as the surprisal rule writes it (ragged ``offsets``/``values``,
    ``ids`` and optionally ``prompt_ids``), for tests of what reads such files."""
    import numpy as np

    from genmetrics.npz import ragged_to_arrays, save_npz

    offsets, values = ragged_to_arrays(seqs)
    arrays = {"ids": np.array(ids), "offsets": offsets, "values": values}
    if prompt_ids is not None:
        arrays["prompt_ids"] = np.array(prompt_ids)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    save_npz(path, **arrays)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m genmetrics.testing.tiny_lm", description=__doc__
    )
    sub = parser.add_subparsers(dest="command", required=True)
    tiny = sub.add_parser("tiny-model", help="save the tiny random LM as an HF model folder")
    tiny.add_argument("out_dir", type=Path)
    tiny.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    path = save_tiny_model(args.out_dir, args.seed)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
