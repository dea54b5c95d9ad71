"""``distinct_k``/``utility_k`` with ``equivalence=classifier`` on a folder that holds no pair
classifier: one error naming the folder, never transformers' exception or a number read off
the wrong output."""

from __future__ import annotations

from pathlib import Path

import pytest

from genmetrics import GenmetricsError
from genmetrics.cli import main
from genmetrics.io import write_jsonl
from genmetrics.metrics import compute

#: two prompts, three long answers each (longer than 5 words: the classifier is asked)
GROUPS = {
    "p0": ["the cat sat on the mat today", "a dog ran in the park then", "the cat sat here now ok"],
    "p1": ["it was a big red house there", "then it was happy and sad", "the big red house was it"],
}


def _rows() -> list[dict]:
    return [
        {"id": f"{p}~{j}", "prompt_id": p, "prompt": f"Prompt {p}.", "continuation": t}
        for p, texts in GROUPS.items()
        for j, t in enumerate(texts)
    ]


def _score(folder: Path) -> None:
    rows = _rows()
    compute(
        "distinct_k",
        rows,
        params={"equivalence": "classifier", "model": str(folder)},
        prompt_ids=[r["prompt_id"] for r in rows],
    )


def _save(folder: Path, num_labels: int = 2, specials: bool = True, weights: bool = True) -> Path:
    """A tiny BERT pair classifier and a word-level tokenizer saved in ``folder``."""
    pytest.importorskip("torch")
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast

    words = sorted({w for texts in GROUPS.values() for t in texts for w in t.split()})
    vocab = {w: i for i, w in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *words])}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    named = {"cls_token": "[CLS]", "sep_token": "[SEP]"} if specials else {}
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk, unk_token="[UNK]", pad_token="[PAD]", **named
    )
    cfg = BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        num_labels=num_labels,
    )
    model = BertForSequenceClassification(cfg).eval()
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    if not weights:
        for f in folder.glob("*.safetensors"):
            f.unlink()
    return folder


def test_an_empty_folder(tmp_path):
    with pytest.raises(GenmetricsError, match=r"model '.*' is not a pair classifier .*no config"):
        _score(tmp_path)


def test_a_config_that_is_not_json(tmp_path):
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(GenmetricsError, match="transformers cannot load it: OSError"):
        _score(tmp_path)


def test_a_folder_without_weights(tmp_path):
    _save(tmp_path, weights=False)
    with pytest.raises(GenmetricsError, match="transformers cannot load it"):
        _score(tmp_path)


def test_a_classifier_of_three_labels_gives_no_number(tmp_path):
    """P(label 1) of a three-way classifier is no P(equivalent): refused, not used."""
    _save(tmp_path, num_labels=3)
    with pytest.raises(GenmetricsError, match=r"3 labels, not 2"):
        _score(tmp_path)


def test_a_tokenizer_without_cls_and_sep(tmp_path):
    _save(tmp_path, specials=False)
    with pytest.raises(GenmetricsError, match=r"no \[CLS\] or no \[SEP\]"):
        _score(tmp_path)


def test_a_good_tiny_classifier_still_scores(tmp_path):
    rows = _rows()
    res = compute(
        "distinct_k",
        rows,
        params={"equivalence": "classifier", "model": str(_save(tmp_path / "ok"))},
        prompt_ids=[r["prompt_id"] for r in rows],
    )
    assert 1 <= res.values["distinct_k"] <= 3


def test_cli_exit_2_naming_the_folder(tmp_path, capsys):
    gens = tmp_path / "gens.jsonl"
    write_jsonl(gens, [{**r, "text": f"{r['prompt']} {r['continuation']}"} for r in _rows()])
    folder = tmp_path / "not_a_model"
    folder.mkdir()
    (folder / "notes.txt").write_text("weights to come")
    args = ["score", "distinct_k", "--candidate", str(gens), "--param", "equivalence=classifier"]
    code = main([*args, "--param", f"model={folder}"])
    out, err = capsys.readouterr()
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert f"model '{folder}' is not a pair classifier" in err and "internal" not in err
