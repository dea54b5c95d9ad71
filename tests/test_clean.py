"""Dataset reading and cleaning: normalisation, dedupe, length filters, truncation, sampling."""

from __future__ import annotations

import json

import pytest

from genmetrics import GenmetricsError
from genmetrics.data.clean import clean_rows, normalize_text, truncate_words
from genmetrics.data.datasets import load_dataset


def test_normalize_whitespace_and_unicode():
    # NFC composes e + combining acute; NBSP and tabs collapse; control chars dropped
    assert normalize_text("Cafe\u0301\u00a0 au\tlait\x07\n\nok ") == "Café au lait ok"
    assert normalize_text("a  b\n\n\n c", keep_newlines=True) == "a b\nc"


def test_truncate_words_keeps_prefix():
    assert truncate_words("one two  three four", 2) == "one two"
    assert truncate_words("one two", 5) == "one two"


def test_clean_rows_order_of_operations():
    rows = [
        {"id": "a", "text": "  "},  # empty
        {"id": "b", "text": "one two three four five"},
        {"id": "c", "text": "one  two three four five"},  # duplicate after normalisation
        {"id": "d", "text": "short"},  # too short
        {"id": "e", "text": " ".join(["w"] * 50)},  # too long
        {"id": "f", "text": "six seven eight nine ten eleven", "label": "x"},
    ]
    kept, stats = clean_rows(rows, {"min_words": 3, "max_words": 20, "truncate_words": 4})
    assert [r["id"] for r in kept] == ["b", "f"]
    assert kept[1] == {"id": "f", "text": "six seven eight nine", "label": "x"}
    assert stats == {
        "input": 6,
        "empty": 1,
        "duplicate": 1,
        "too_short": 1,
        "too_long": 1,
        "output": 2,
    }


def test_sample_is_seeded_and_keeps_order():
    rows = [{"id": str(i), "text": f"text number {i}"} for i in range(100)]
    a, _ = clean_rows(rows, {"sample": 10, "seed": 1})
    b, _ = clean_rows(rows, {"sample": 10, "seed": 1})
    c, _ = clean_rows(rows, {"sample": 10, "seed": 2})
    assert [r["id"] for r in a] == [r["id"] for r in b]
    assert [r["id"] for r in a] != [r["id"] for r in c]
    assert [int(r["id"]) for r in a] == sorted(int(r["id"]) for r in a)


def test_clean_errors_name_the_key():
    with pytest.raises(GenmetricsError, match=r"datasets.x.clean: unknown option"):
        clean_rows([{"id": "1", "text": "a"}], {"min_word": 3}, where="datasets.x")
    with pytest.raises(GenmetricsError, match="no texts left"):
        clean_rows([{"id": "1", "text": " "}], {}, where="datasets.x")


def test_read_formats(tmp_path):
    (tmp_path / "d.jsonl").write_text(
        json.dumps({"id": 1, "body": "hello world", "topic": "t"})
        + "\n\n"
        + json.dumps({"id": 2, "body": "bye", "topic": "u"})
        + "\n"
    )
    rows = load_dataset(
        "d",
        {
            "source": {"kind": "local", "path": str(tmp_path / "d.jsonl")},
            "text_field": "body",
            "label_fields": ["topic"],
        },
    )
    assert [(r["id"], r["text"], r["topic"]) for r in rows] == [
        ("1", "hello world", "t"),
        ("2", "bye", "u"),
    ]
    (tmp_path / "d.txt").write_text("first line\nsecond line\n")
    rows = load_dataset("d", {"source": {"kind": "local", "path": str(tmp_path / "d.txt")}})
    assert [r["text"] for r in rows] == ["first line", "second line"]
    (tmp_path / "d.csv").write_text('id,text\n7,"a, b"\n8,c\n')
    rows = load_dataset("d", {"source": {"kind": "local", "path": str(tmp_path / "d.csv")}})
    assert [(r["id"], r["text"]) for r in rows] == [("7", "a, b"), ("8", "c")]
    folder = tmp_path / "f"
    (folder / "sport").mkdir(parents=True)
    (folder / "sport" / "001.txt").write_text("Title\nBody text here.")
    rows = load_dataset(
        "f",
        {
            "source": {"kind": "local", "path": str(folder)},
            "title_line": "drop",
            "folder_label": "topic",
        },
    )
    assert rows[0]["text"] == "Body text here." and rows[0]["topic"] == "sport"


def test_read_errors_name_file_and_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"text": "ok"}\n{"text": "caf\xe9"}\n')
    with pytest.raises(GenmetricsError, match=r"bad.jsonl: line 2: invalid UTF-8"):
        load_dataset("d", {"source": {"kind": "local", "path": str(bad)}})
    bad.write_text('{"text": "ok"}\n{"txt": "no"}\n')
    with pytest.raises(GenmetricsError, match=r"line 2: missing text field 'text'"):
        load_dataset("d", {"source": {"kind": "local", "path": str(bad)}})
    with pytest.raises(GenmetricsError, match=r"datasets.d.source.path: .*does not exist"):
        load_dataset("d", {"source": {"kind": "local", "path": str(tmp_path / "nope.jsonl")}})


def test_a_sample_larger_than_what_cleaning_kept_is_refused():
    rows = [{"id": str(i), "text": f"text number {i}"} for i in range(5)]
    rows.append({"id": "5", "text": "text number 4"})  # a duplicate, dropped
    with pytest.raises(GenmetricsError, match=r"datasets\.d\.clean\.sample: 6 texts asked.* 5 "):
        clean_rows(rows, {"sample": 6}, where="datasets.d")
    assert len(clean_rows(rows, {"sample": 5}, where="datasets.d")[0]) == 5


def test_check_sizes_names_the_entry_and_its_parameter():
    from genmetrics.data.clean import check_sizes

    needs = [
        {"entry": "pr", "key": "metrics.pr.params.k", "needs": 5, "why": "k=4 needs at least 5"},
        {"entry": "mv", "key": "metrics.mv.params.num_buckets", "needs": 3, "why": "..."},
    ]
    check_sizes(5, needs, "tiny")
    with pytest.raises(GenmetricsError) as e:
        check_sizes(3, needs, "tiny")
    assert str(e.value).startswith("metrics.pr.params.k: k=4 needs at least 5 (5 in all), but")
    assert "datasets.tiny has 3 after cleaning" in str(e.value)
    with pytest.raises(GenmetricsError, match="metrics.mv.params.num_buckets"):
        check_sizes(2, needs[1:], "tiny")
