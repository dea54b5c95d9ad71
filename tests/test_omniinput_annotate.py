"""OmniInput annotation: the rater CSV round trip, automatic annotators feeding the same curve
code, clear errors (file and line) for bad CSVs and rules, and the judge-LM annotator against
a manual computation from the model's logits (batched = unbatched: left padding is right)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from genmetrics import GenmetricsError
from genmetrics.omniinput import Bins, precision_recall_curve
from genmetrics.omniinput.annotate import (
    alphabetic_words,
    annotate,
    digit_sum,
    judge_lm_annotator,
    rule_annotator,
)
from genmetrics.omniinput.annotation_csv import (
    COLUMNS,
    export_samples,
    r_from_scores,
    read_annotations,
)

BINS = Bins(0.0, 1.0, 5)
L = 3


def _samples() -> list[np.ndarray]:
    """Bins 0, 2, 3 hold samples; 1 and 4 are empty (0, L)."""
    return [
        np.array([[1, 2, 0], [1, 1, 2]], np.int64),  # digit sums 3, 4
        np.zeros((0, L), np.int64),
        np.array([[0, 0, 0], [2, 2, 2], [4, 0, 1]], np.int64),  # 0, 6, 5
        np.array([[1, 0, 0]], np.int64),  # 1
        np.zeros((0, L), np.int64),
    ]


def _decode(tokens: np.ndarray) -> str:
    # commas, quotes and a newline: the CSV must quote them
    return ", ".join(f'w"{int(t)}' for t in tokens) + "\nend"


def _plain(tokens: np.ndarray) -> str:
    return " ".join(f"w{int(t)}" for t in tokens)


def _ln_rho() -> np.ndarray:
    return np.array([0.5, -np.inf, 3.0, 1.0, -np.inf])


def test_export_fill_read_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "rate.csv"
    z = [np.array([0.1, 0.15]), np.zeros(0), np.array([0.41, 0.5, 0.59]), np.array([0.7]), []]
    n = export_samples(path, _samples(), BINS, z=z, decode=_decode)
    assert n == 6
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == list(COLUMNS)
    assert [r[0] for r in rows[1:]] == ["0", "0", "2", "2", "2", "3"]
    assert rows[3][1:4] == [repr(0.4), repr(0.6000000000000001), "0"]  # linspace edges
    assert float(rows[3][1]) == BINS.edges[2]
    assert rows[4][4:8] == ["0.5", "2 2 2", 'w"2, w"2, w"2\nend', ""]

    # a rater fills the score column with pandas
    df = pd.read_csv(path)
    assert df["text"][0] == _decode(_samples()[0][0])
    given = [0.0, 1.0, 0.5, 0.25, 1.0, 0.2]
    df["score"] = given
    df.to_csv(path, index=False)

    ann = read_annotations(path, BINS, populated=np.isfinite(_ln_rho()))
    np.testing.assert_array_equal(ann.counts, [2, 0, 3, 1, 0])
    np.testing.assert_allclose(
        ann.r, [0.5, np.nan, (0.5 + 0.25 + 1.0) / 3, 0.2, np.nan], rtol=0, atol=1e-15
    )
    np.testing.assert_array_equal(ann.scores[2], [0.5, 0.25, 1.0])
    assert ann.scores[1].shape == (0,)


def test_digit_sum_rule_by_hand() -> None:
    toks = np.array([[1, 2, 0], [1, 1, 2], [0, 0, 0], [2, 2, 2], [4, 0, 1]])
    np.testing.assert_array_equal(digit_sum(toks, [""] * 5, m=3), [1, 0, 1, 1, 0])
    np.testing.assert_array_equal(digit_sum(toks, [""] * 5, m=2), [0, 1, 1, 1, 0])
    ann = rule_annotator("genmetrics.omniinput.annotate:digit_sum", m=3)
    per_bin = annotate(_samples(), ann)
    assert [s.tolist() for s in per_bin] == [[1.0, 0.0], [], [1.0, 1.0, 0.0], [0.0], []]


def test_automatic_and_human_path_give_the_same_curve(tmp_path: Path) -> None:
    ann = rule_annotator("genmetrics.omniinput.annotate:digit_sum", m=3)
    scores = annotate(_samples(), ann, decode=_decode)
    path = tmp_path / "auto.csv"
    assert export_samples(path, _samples(), BINS, decode=_decode, scores=scores) == 6
    back = read_annotations(path, BINS, populated=np.isfinite(_ln_rho()))

    r_direct, counts_direct = r_from_scores(scores, BINS.n)
    np.testing.assert_array_equal(back.r, r_direct)
    np.testing.assert_array_equal(back.counts, counts_direct)
    np.testing.assert_array_equal(r_direct, [0.5, np.nan, 2 / 3, 0.0, np.nan])

    c_csv = precision_recall_curve(_ln_rho(), back.r, BINS)
    c_direct = precision_recall_curve(_ln_rho(), r_direct, BINS)
    for key in ("lambda", "precision", "recall", "log_recall"):
        np.testing.assert_array_equal(c_csv[key], c_direct[key])
    # the curve itself, by hand at λ = 0.6 (bins 0..2): Σ rρ / Σ ρ
    rho = np.exp(_ln_rho())
    want = (0.5 * rho[0] + 2 / 3 * rho[2]) / (rho[0] + rho[2])
    assert c_csv["precision"][2] == pytest.approx(want, rel=1e-12)


def test_alphabetic_words_by_hand() -> None:
    texts = ["The cat sat.", "th3 cat ##", "", "Hello, world!", "a.. b", "don't stop"]
    got = alphabetic_words(np.zeros((6, 0), np.int64), texts)
    np.testing.assert_allclose(got, [1.0, 1 / 3, 0.0, 1.0, 0.5, 0.5])
    np.testing.assert_array_equal(
        alphabetic_words(np.zeros((2, 0)), ["The cat sat.", "a b c d"], min_words=4), [0, 1]
    )
    # through the plug-in path, with decoded texts
    ann = rule_annotator("genmetrics.omniinput.annotate:alphabetic_words")
    per_bin = annotate(_samples(), ann, decode=_plain)
    assert [s.tolist() for s in per_bin] == [[0.0, 0.0], [], [0.0] * 3, [0.0], []]
    per_bin = annotate(_samples(), ann, decode=lambda t: "ok " * int(t[0]) + "7")
    assert per_bin[2].tolist() == [0.0, 2 / 3, 4 / 5]


# ---------------------------------------------------------------------------------------------
# CSV errors: the message names the file and the line


def _scored(tmp_path: Path, name: str = "s.csv") -> tuple[Path, list[list[str]]]:
    """An exported CSV with valid scores (lines 2..7, one line per record) and its rows."""
    path = tmp_path / name
    scores = [np.full(len(s), 0.5) for s in _samples()]
    export_samples(path, _samples(), BINS, decode=_plain, scores=scores)
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    return path, rows


def _rewrite(path: Path, rows: list[list[str]]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as f:
        csv.writer(f).writerows(rows)


def _where(path: Path, line: int) -> str:
    return rf"{re.escape(str(path))}: line {line}\b"


@pytest.mark.parametrize(
    ("value", "what"),
    [
        ("1.5", r"score 1\.5 is outside \[0, 1\]"),
        ("-0.1", r"score -0\.1 is outside \[0, 1\]"),
        ("abc", r"score 'abc' is not a number"),
        ("", r"score is empty — every exported sample needs a score"),
        ("nan", r"score is NaN"),
    ],
)
def test_bad_score(tmp_path: Path, value: str, what: str) -> None:
    path, rows = _scored(tmp_path)
    rows[4][COLUMNS.index("score")] = value  # line 5
    _rewrite(path, rows)
    with pytest.raises(GenmetricsError, match=_where(path, 5) + ".*" + what):
        read_annotations(path, BINS)


def test_empty_score_allowed_when_asked(tmp_path: Path) -> None:
    path, rows = _scored(tmp_path)
    rows[4][COLUMNS.index("score")] = ""  # bin 2, second sample
    _rewrite(path, rows)
    ann = read_annotations(path, BINS, allow_missing=True)
    np.testing.assert_array_equal(ann.counts, [2, 0, 2, 1, 0])


def test_line_numbers_count_multiline_records(tmp_path: Path) -> None:
    path = tmp_path / "multi.csv"
    export_samples(path, _samples(), BINS, decode=_decode)  # every text spans 2 lines
    df = pd.read_csv(path)
    df["score"] = [0.1, 0.2, 0.3, 7.0, 0.5, 0.6]  # record 4 starts on physical line 8
    df.to_csv(path, index=False)
    with pytest.raises(GenmetricsError, match=_where(path, 8) + ".*score 7.0 is outside"):
        read_annotations(path, BINS)


def test_missing_score_column(tmp_path: Path) -> None:
    path, rows = _scored(tmp_path)
    i = COLUMNS.index("score")
    _rewrite(path, [r[:i] + r[i + 1 :] for r in rows])
    with pytest.raises(GenmetricsError, match=_where(path, 1) + ".*no column 'score'"):
        read_annotations(path, BINS)


@pytest.mark.parametrize("value", ["99", "-1", "x", "1.5"])
def test_bad_bin_index(tmp_path: Path, value: str) -> None:
    path, rows = _scored(tmp_path)
    rows[6][0] = value  # line 7
    _rewrite(path, rows)
    with pytest.raises(GenmetricsError, match=_where(path, 7) + f".*bin '{re.escape(value)}'"):
        read_annotations(path, BINS)


def test_csv_for_other_bins_is_refused(tmp_path: Path) -> None:
    path, rows = _scored(tmp_path)
    with pytest.raises(GenmetricsError, match=_where(path, 2) + ".*z_high '0.2'.*other bins"):
        read_annotations(path, Bins(0.0, 1.0, 4))
    with pytest.raises(GenmetricsError, match=_where(path, 2) + ".*z_low '0.0'.*other bins"):
        read_annotations(path, Bins(-1.0, 1.0, 5))
    # one edited z_low (line 6): the first mismatching line is named
    rows[5][1] = "0.5"
    _rewrite(path, rows)
    with pytest.raises(GenmetricsError, match=_where(path, 6) + ".*z_low '0.5' of bin 2"):
        read_annotations(path, BINS)
    # tiny float noise (a spreadsheet round trip) is accepted
    rows[5][1] = repr(0.4 * (1 + 1e-12))
    _rewrite(path, rows)
    assert read_annotations(path, BINS).counts[2] == 3


def test_populated_bin_without_scores(tmp_path: Path) -> None:
    path, _ = _scored(tmp_path)
    populated = np.array([True, True, True, True, False])
    with pytest.raises(GenmetricsError, match=re.escape(str(path))) as e:
        read_annotations(path, BINS, populated=populated)
    assert "1 populated bin(s) have no scored sample: bin 1 [0.2, 0.4]" in str(e.value)
    populated = np.ones(5, bool)
    with pytest.raises(GenmetricsError, match=r"2 populated .*bin 1 \[0\.2, 0\.4\], bin 4 \[0\.8"):
        read_annotations(path, BINS, populated=populated)
    assert read_annotations(path, BINS, populated=np.isfinite(_ln_rho())).counts.sum() == 6


def test_empty_file_and_header_only(tmp_path: Path) -> None:
    path = tmp_path / "empty.csv"
    path.write_text("", encoding="utf-8")
    with pytest.raises(GenmetricsError, match=re.escape(str(path)) + ": the file is empty"):
        read_annotations(path, BINS)
    path.write_text(",".join(COLUMNS) + "\n", encoding="utf-8")
    with pytest.raises(GenmetricsError, match=re.escape(str(path)) + ": header only"):
        read_annotations(path, BINS)
    with pytest.raises(GenmetricsError, match="file not found"):
        read_annotations(tmp_path / "nope.csv", BINS)


def test_export_checks_its_inputs(tmp_path: Path) -> None:
    with pytest.raises(GenmetricsError, match="4 arrays for 5 bins"):
        export_samples(tmp_path / "a.csv", _samples()[:4], BINS)
    bad = [np.full(len(s), 0.5) for s in _samples()]
    bad[2][1] = 1.2
    with pytest.raises(GenmetricsError, match=r"scores: bin 2: score 1 is 1\.2"):
        export_samples(tmp_path / "a.csv", _samples(), BINS, scores=bad)
    assert not (tmp_path / "a.csv").exists()  # nothing half-written


# ---------------------------------------------------------------------------------------------
# rule annotators


def test_rule_annotator_errors(tmp_path: Path, monkeypatch) -> None:
    with pytest.raises(GenmetricsError, match=r"rule 'nosuch\.module:f'.*cannot import"):
        rule_annotator("nosuch.module:f")
    with pytest.raises(GenmetricsError, match=r"has no 'nosuch'"):
        rule_annotator("genmetrics.omniinput.annotate:nosuch")
    with pytest.raises(GenmetricsError, match="expected 'module.path:function'"):
        rule_annotator("genmetrics.omniinput.annotate.digit_sum")
    with pytest.raises(GenmetricsError, match="'DEFAULT_JUDGE_TEMPLATE' is not callable"):
        rule_annotator("genmetrics.omniinput.annotate:DEFAULT_JUDGE_TEMPLATE")
    with pytest.raises(GenmetricsError, match="missing a required argument: 'm'"):
        rule_annotator("genmetrics.omniinput.annotate:digit_sum")

    (tmp_path / "my_rules_for_test.py").write_text(
        "import numpy as np\n"
        "def too_high(tokens, texts):\n    return np.full(len(tokens), 2.0)\n"
        "def short(tokens, texts):\n    return np.zeros(len(tokens) - 1)\n"
        "def half(tokens, texts, k=1):\n    return np.full(len(tokens), 0.5 / k)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    toks = np.zeros((3, L), np.int64)
    with pytest.raises(GenmetricsError, match=r"rule 'my_rules_for_test:too_high'.*is 2\.0"):
        rule_annotator("my_rules_for_test:too_high")(toks, [""] * 3)
    with pytest.raises(GenmetricsError, match=r"rule 'my_rules_for_test:short'.*shape \(2,\)"):
        rule_annotator("my_rules_for_test:short")(toks, [""] * 3)
    np.testing.assert_array_equal(rule_annotator("my_rules_for_test:half", k=2)(toks, []), 0.25)


# ---------------------------------------------------------------------------------------------
# judge LM

TEMPLATE = "{text} . it was"
TEXTS = ["the cat sat on the mat", "a dog ran", "the big red house and the small blue tree"]


def _manual(model, tok, text: str, chat: bool) -> float:
    prompt = TEMPLATE.format(text=text)
    if chat:
        prompt = tok.apply_chat_template(
            [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
        )
    ids = tok(prompt, add_special_tokens=not chat)["input_ids"]
    yes, no = tok.convert_tokens_to_ids(["happy", "sad"])
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0, -1]
    return float(torch.softmax(logits[[yes, no]].double(), -1)[0])


@pytest.mark.parametrize("chat", [False, True])
def test_judge_matches_manual_logits(tiny_lm, chat: bool) -> None:
    model, tok = tiny_lm
    assert tok(" happy", add_special_tokens=False)["input_ids"] == [
        tok.convert_tokens_to_ids("happy")
    ]
    kw = {"template": TEMPLATE, "yes": " happy", "no": " sad", "chat": chat}
    one = judge_lm_annotator(model, tok, batch_size=1, **kw)
    many = judge_lm_annotator(model, tok, batch_size=3, **kw)
    toks = np.zeros((3, L), np.int64)
    r1, r3 = one(toks, TEXTS), many(toks, TEXTS)
    want = [_manual(model, tok, t, chat) for t in TEXTS]
    np.testing.assert_allclose(r1, want, rtol=0, atol=1e-6)
    np.testing.assert_allclose(r3, r1, rtol=0, atol=1e-5)  # left padding is transparent
    assert np.ptp(want) > 1e-4  # the texts matter (a constant would not test anything)
    assert np.all((r3 > 0) & (r3 < 1))


def test_judge_through_annotate(tiny_lm) -> None:
    model, tok = tiny_lm
    judge = judge_lm_annotator(model, tok, template=TEMPLATE, yes=" happy", no=" sad")
    words = ["the", "cat", "sat", "dog", "ran"]

    def decode(t: np.ndarray) -> str:
        return " ".join(words[int(i)] for i in t)

    per_bin = annotate(_samples(), judge, decode=decode)
    assert [len(s) for s in per_bin] == [2, 0, 3, 1, 0]
    assert per_bin[3][0] == pytest.approx(_manual(model, tok, "cat the the", False), abs=1e-6)
    with pytest.raises(GenmetricsError, match="every text is empty"):
        annotate(_samples(), judge)


def test_judge_refuses_bad_yes_no(tiny_lm) -> None:
    model, tok = tiny_lm
    with pytest.raises(GenmetricsError, match=r"yes=' happy sad' encodes to 2 tokens"):
        judge_lm_annotator(model, tok, yes=" happy sad", no=" sad")
    with pytest.raises(GenmetricsError, match=r"no='big red' encodes to 2 tokens"):
        judge_lm_annotator(model, tok, yes=" happy", no="big red")
    with pytest.raises(GenmetricsError, match=r"yes=' yes' encodes to the unknown token"):
        judge_lm_annotator(model, tok)  # " yes" is not in this tokenizer's vocabulary
    with pytest.raises(GenmetricsError, match="same token"):
        judge_lm_annotator(model, tok, yes=" sad", no="sad")
    with pytest.raises(GenmetricsError, match="no {text} field"):
        judge_lm_annotator(model, tok, template="no field", yes=" happy", no=" sad")
