"""Prompts (chat vs base templates) and word budgets."""

from __future__ import annotations

import pytest
from conftest import build_tokenizer

from genmetrics import GenmetricsError
from genmetrics.data.prompts import (
    format_prompt,
    load_tokens_per_word,
    make_prompts,
    max_new_tokens,
    tokens_per_word,
)


def test_make_prompts_first_k_words():
    refs = [
        {"id": "a", "text": "w1 w2 w3 w4 w5 w6"},
        {"id": "b", "text": "only three words"},  # not longer than k: skipped
    ]
    rows = make_prompts(refs, words=4)
    assert rows == [
        {"id": "a", "prompt": "w1 w2 w3 w4", "reference": "w1 w2 w3 w4 w5 w6", "reference_id": "a"}
    ]


def test_base_template_is_raw_prefix():
    assert format_prompt("the cat sat on", "base") == "the cat sat on"


def test_chat_template_instruction_and_opener():
    tok = build_tokenizer(chat=True)
    text = format_prompt("the cat sat on", "chat", tok, instruction="Continue:")
    # k-1 words inside the user turn, the k-th word opens the assistant's answer
    assert text == "<|user|> Continue:\n\nthe cat sat <|assistant|> on"
    text = format_prompt("Write a story.", "chat", tok, continuation_mode="instruction")
    assert text == "<|user|> Write a story. <|assistant|> "
    with pytest.raises(GenmetricsError, match="chat template"):
        format_prompt("x y", "chat", build_tokenizer(chat=False))


def test_word_budget():
    assert max_new_tokens(50, 1.35, 1.25) == 85  # ceil(84.375)
    assert max_new_tokens(1, 1.0, 1.0) == 1
    with pytest.raises(GenmetricsError):
        max_new_tokens(0, 1.3)


def test_tokens_per_word_table(tmp_path):
    p = tmp_path / "tpw.tsv"
    p.write_text("tokenizer\ttokens_per_word\n# comment\nllama\t1.4\ndefault\t1.5\n")
    table = load_tokens_per_word(p)
    assert tokens_per_word(table, "llama") == 1.4
    assert tokens_per_word(table, None) == 1.5  # no family: the default row
    with pytest.raises(GenmetricsError, match="'unknown' is not in the tokens-per-word table"):
        tokens_per_word(table, "unknown")  # never a silent default
    p.write_text("tokenizer\ttokens_per_word\nllama\tmany\n")
    with pytest.raises(GenmetricsError, match=r"tpw.tsv: line 2"):
        load_tokens_per_word(p)


def test_shipped_table_has_default_and_default_models():
    from conftest import REPO

    table = load_tokens_per_word(REPO / "resources" / "tokens_per_word.tsv")
    for fam in ("default", "smollm2", "gemma3", "gpt2"):
        assert 1.0 < table[fam] < 2.5


def test_shipped_table_has_le_bronnec_table_b1():
    """Le Bronnec et al. (2024), Table B.1 (tokens per NLTK word on WebText train), and the
    value pr-4-llm's webtext configs imply for Llama-2 (615 tokens where Mistral has 590):
    each budget of their configs is ceil(words × value) with one word count per task."""
    import math

    from conftest import REPO

    table = load_tokens_per_word(REPO / "resources" / "tokens_per_word.tsv")
    assert (table["llama2"], table["mistral"], table["pythia"]) == (1.360, 1.313, 1.183)
    assert table["llama2-pr4llm-webtext"] == 1.368
    wiki = [math.ceil(329 * table[f]) for f in ("llama2", "mistral", "pythia")]
    assert wiki == [448, 432, 390]  # configs/generation/wikipedia_bio/*.yaml
    webtext = [math.ceil(449 * table[f]) for f in ("llama2-pr4llm-webtext", "mistral")]
    assert webtext == [615, 590]  # configs/generation/webtext/*.yaml
    assert math.ceil(449 * table["llama2"]) == 611  # Table B.1's value does not give 615
    rows = (REPO / "resources" / "tokens_per_word.tsv").read_text().splitlines()
    for fam in ("llama2", "mistral", "pythia"):
        row = next(r for r in rows if r.startswith(f"{fam}\t"))
        assert "Le Bronnec et al. (2024) Table B.1: tokens per NLTK word_tokenize word" in row


def test_build_prompts_follows_the_options():
    from genmetrics.data.prompts import build_prompts

    refs = [{"id": "a", "text": "w1 w2 w3 w4 w5 w6"}, {"id": "b", "text": "Write a poem."}]
    prefix = build_prompts(refs, {"words": 2, "mode": "prefix"}, where="datasets.x.prompts")
    assert [r["prompt"] for r in prefix] == ["w1 w2", "Write a"]
    instr = build_prompts(refs, {"words": 10, "mode": "instruction"})
    assert instr == [
        {"id": "a", "prompt": "w1 w2 w3 w4 w5 w6"},
        {"id": "b", "prompt": "Write a poem."},
    ]
    rows = build_prompts(
        refs,
        {"words": 10, "mode": "instruction", "file": "p.jsonl"},
        [{"id": 7, "prompt": "Tell a story.", "genre": "fable"}],
    )
    assert rows == [{"id": "7", "prompt": "Tell a story.", "genre": "fable"}]
    with pytest.raises(GenmetricsError, match=r"^datasets.x.prompts: no prompts"):
        build_prompts(refs, {"words": 10, "mode": "prefix"}, where="datasets.x.prompts")
    with pytest.raises(GenmetricsError, match="mode: must be one of"):
        build_prompts(refs, {"words": 2, "mode": "chat"})


def test_pr4llm_creative_wrap_is_the_authors_creative_formatter():
    """prompts.wrap: pr4llm-creative gives a base model pr-4-llm's CreativeFormatter string
    (pr_llm/generation/preprocessing.py, re-implemented here as the oracle) byte for byte, and
    a chat model the same request as its user turn with the answer opened by "Sure here is a
    proposition:"; without a wrap an instruction is put as it is."""
    from genmetrics.data.prompts import build_prompts, format_prompt

    def creative_formatter(prompt, chat_tokens=None, lo=100, hi=500):  # the authors' code
        prompt = f"{prompt} Your text should be approximately between {lo} and {hi} words."
        if chat_tokens is not None:
            return f"{chat_tokens[0]} {prompt} {chat_tokens[1]} Sure here is a proposition:\n\n"
        return f"Below is a text following the instructions:\n\n{prompt}\n\n### Text:\n\n"

    refs = [{"id": "c1", "text": "Write a story about a lighthouse keeper."}]
    opts = {"mode": "instruction", "words": 10, "wrap": "pr4llm-creative"}
    (row,) = build_prompts(refs, opts)
    assert row["prompt"] == refs[0]["text"]  # the record keeps the instruction itself
    base = format_prompt(row["prompt"], "base", continuation_mode="instruction", wrap=row["wrap"])
    assert base == creative_formatter(refs[0]["text"])

    class ChatTok:  # a chat template in the Llama-2 style, to compare with the authors' string
        chat_template = "llama2"

        def apply_chat_template(self, messages, tokenize, add_generation_prompt):
            return f"[INST] {messages[0]['content']} [/INST] "

    chat = format_prompt(
        row["prompt"], "chat", ChatTok(), continuation_mode="instruction", wrap=row["wrap"]
    )
    assert chat == creative_formatter(refs[0]["text"], ("[INST]", "[/INST]"))
    (plain,) = build_prompts(refs, {**opts, "wrap": "none"})
    assert "wrap" not in plain
    assert (
        format_prompt(plain["prompt"], "base", continuation_mode="instruction") == refs[0]["text"]
    )
    with pytest.raises(GenmetricsError, match="wrap: 'pr4llm-creative' wraps instructions"):
        build_prompts(refs, {**opts, "mode": "prefix", "words": 3})
