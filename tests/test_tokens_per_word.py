"""Tokens per word measured on texts (genmetrics.models.tokens_per_word), the `genmetrics
tokens-per-word` command and the config's tokens_per_word_table."""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import REPO, placeholder_checkpoint

from genmetrics import GenmetricsError
from genmetrics.cli import main
from genmetrics.data.prompts import load_tokens_per_word
from genmetrics.models.tokens_per_word import measure_tokens_per_word, row_name
from genmetrics.plan import load_plan

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


class CharPairs:
    """A tokenizer whose tokens are two characters of a whitespace piece ('quickly': 4)."""

    def encode(self, text, add_special_tokens=True):
        assert add_special_tokens is False  # special tokens are never counted
        return [p[i : i + 2] for p in text.split() for i in range(0, len(p), 2)]


def test_a_hand_counted_ratio_is_exact():
    m = measure_tokens_per_word(CharPairs(), ["the cat sat", "a dog ran quickly"])
    # tokens: 2+2+2 and 1+2+2+4 = 15; whitespace words: 3 + 4 = 7
    assert (m.tokens, m.words, m.texts, m.tokens_per_word) == (15, 7, 2, 15 / 7)


def test_special_tokens_of_a_hf_tokenizer_are_not_counted(tiny_lm):
    _, tok = tiny_lm  # word-level, adds BOS when asked to
    assert len(tok.encode("the cat sat on the mat .")) == 8
    m = measure_tokens_per_word(tok, ["the cat sat on the mat ."])
    assert (m.tokens, m.words, m.tokens_per_word) == (7, 7, 1.0)


def test_nltk_words_split_punctuation_and_clitics_whitespace_words_do_not():
    text = "Hello, world! It's fine."
    white = measure_tokens_per_word(CharPairs(), [text])
    nltk = measure_tokens_per_word(CharPairs(), [text], words="nltk")
    # ['Hello', ',', 'world', '!', 'It', "'s", 'fine', '.'] against 4 whitespace words
    assert (white.words, nltk.words) == (4, 8)
    assert white.tokens == nltk.tokens == 11  # 'Hello,' 3, 'world!' 3, "It's" 2, 'fine.' 3
    assert nltk.tokens_per_word == 11 / 8 and white.tokens_per_word == 11 / 4


def test_words_of_a_segmented_language_are_its_words():
    class Chars:
        def encode(self, text, add_special_tokens=True):
            return list(text)

    m = measure_tokens_per_word(Chars(), ["我们去公园散步吧！"], language="zh")
    assert (m.tokens, m.words) == (9, 5)  # jieba: 我们 去 公园 散步 吧 (punctuation no word)
    assert row_name("gpt2", "zh") == "gpt2@zh" and row_name("gpt2", "de") == "gpt2"
    with pytest.raises(GenmetricsError, match="words='nltk' counts words of a whitespace"):
        measure_tokens_per_word(Chars(), ["我们"], words="nltk", language="zh")
    with pytest.raises(GenmetricsError, match="no words in 1 text"):
        measure_tokens_per_word(Chars(), ["   "])


def test_gpt2_on_webtext_train(shared_data):
    """GPT-2's BPE (offline, from the openai-whisper sdist) on 1,407 WebText train documents:
    1.342 tokens per whitespace word (the shipped gpt2 row: 1.243 on BBC News) and 1.158 per
    NLTK word, the unit of Le Bronnec et al.'s Table B.1."""
    from genmetrics.data.assets import gpt2_encoding
    from genmetrics.io import read_jsonl

    texts = [r["text"] for r in read_jsonl(shared_data / "webtext" / "webtext_train_1407.jsonl")]
    white = measure_tokens_per_word(gpt2_encoding(), texts)
    nltk = measure_tokens_per_word(gpt2_encoding(), texts, words="nltk")
    assert (white.texts, white.tokens, white.words) == (1407, 818_985, 610_146)
    assert (nltk.tokens, nltk.words) == (818_985, 707_420)
    assert round(white.tokens_per_word, 3) == 1.342 and round(nltk.tokens_per_word, 3) == 1.158


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def texts(tmp_path):
    path = tmp_path / "mine.jsonl"
    rows = [{"id": 1, "text": "the cat sat on the mat ."}, {"id": 2, "text": "a dog ran , quickly"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize("words", ["whitespace", "nltk"])
def test_the_command_s_row_reads_back(capsys, tmp_path, texts, tiny_model_dir, words):
    code, out, err = run(
        capsys,
        *("tokens-per-word", "--tokenizer", str(tiny_model_dir), "--texts", str(texts)),
        *("--family", "tiny", "--words", words, "--header"),
    )
    assert code == 0, err
    (tmp_path / "mine.tsv").write_text(out)
    header, row = out.splitlines()
    assert header == "tokenizer\ttokens_per_word\tmeasured_on"
    # 12 tokens; 12 whitespace words; NLTK: the same 12 words (the tiny vocabulary has none
    # that NLTK splits)
    assert load_tokens_per_word(tmp_path / "mine.tsv") == {"tiny": 1.0}
    name, value, note = row.split("\t")
    assert note.startswith("mine.jsonl: 2 texts, 12 tokens (tokenizer of ")
    assert ("NLTK word_tokenize words" if words == "nltk" else "12 whitespace words (en)") in note


def test_the_command_refuses_what_it_cannot_measure(capsys, texts):
    code, _, err = run(capsys, "tokens-per-word", "--tokenizer", "nowhere", "--texts", str(texts))
    assert code == 2 and err.count("\n") == 1 and "--tokenizer nowhere: no such folder" in err
    code, _, err = run(
        capsys, "tokens-per-word", "--tokenizer", "gpt2", "--texts", str(texts), "--family", "a b"
    )
    assert code == 2 and "family 'a b': a row name is" in err


def config_with_table(table: str | None) -> dict:
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    if table is not None:
        cfg["tokens_per_word_table"] = table
    return cfg


def test_a_user_table_adds_rows_and_replaces_shipped_ones_with_a_note(monkeypatch, tmp_path):
    monkeypatch.setenv("GENMETRICS_REPO", str(REPO))
    monkeypatch.setenv("GENMETRICS_TINY_MODEL", str(placeholder_checkpoint(tmp_path / "tiny")))
    monkeypatch.setenv("MINE", str(tmp_path))
    (tmp_path / "mine.tsv").write_text(
        "tokenizer\ttokens_per_word\tmeasured_on\n"
        "smollm2\t1.414\tWebText train (genmetrics tokens-per-word)\n"
        "gemma3-webtext\t1.5\tmine\n"
    )
    cfg = config_with_table("$MINE/mine.tsv")
    cfg["checkpoints"]["gemma3-270m"]["tokenizer_family"] = "gemma3-webtext"
    plan = load_plan(cfg, SCHEMA)
    assert plan.models["smollm2-pure"].generation["bbc"].tokens_per_word == 1.414
    assert plan.models["gemma3-nucleus"].generation["bbc"].tokens_per_word == 1.5
    assert any(
        "tokens_per_word_table: row 'smollm2'" in n and "replaces the shipped value 1.309" in n
        for n in plan.notes
    )
    shipped = load_plan(config_with_table(None), SCHEMA)
    assert shipped.models["smollm2-pure"].generation["bbc"].tokens_per_word == 1.309
    assert not any("tokens_per_word_table" in n for n in shipped.notes)
    # the values are the jobs' params, not the file: the same values elsewhere rerun nothing
    (tmp_path / "moved.tsv").write_text((tmp_path / "mine.tsv").read_text())
    cfg["tokens_per_word_table"] = str(tmp_path / "moved.tsv")
    moved = load_plan(cfg, SCHEMA)
    assert moved.generation_settings("bbc", "smollm2-pure") == plan.generation_settings(
        "bbc", "smollm2-pure"
    )
    with pytest.raises(GenmetricsError, match=r"^tokens_per_word_table: .*nope\.tsv"):
        load_plan(config_with_table(str(tmp_path / "nope.tsv")), SCHEMA)
    (tmp_path / "bad.tsv").write_text("tokenizer\ttokens_per_word\nx\tmany\n")
    with pytest.raises(GenmetricsError, match=r"^tokens_per_word_table: .*bad\.tsv: line 2"):
        load_plan(config_with_table(str(tmp_path / "bad.tsv")), SCHEMA)
