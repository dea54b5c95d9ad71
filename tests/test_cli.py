"""The command line: list, score on NPZ/JSONL files, one-line errors with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from genmetrics.cli import finite_json, main
from genmetrics.io import write_jsonl
from genmetrics.npz import ragged_to_arrays, save_npz


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def feats(tmp_path):
    rng = np.random.default_rng(0)
    ref, cand = rng.normal(size=(120, 16)), rng.normal(size=(100, 16)) + 0.5
    save_npz(tmp_path / "ref.npz", ids=[f"r{i}" for i in range(120)], emb=ref)
    save_npz(tmp_path / "cand.npz", ids=[f"c{i}" for i in range(100)], emb=cand)
    return tmp_path, ref, cand


def test_list_names_every_family(capsys):
    code, out, _ = run(capsys, "list", "--json")
    assert code == 0
    names = {m["name"] for m in json.loads(out)}
    assert {"precision_recall", "perplexity"} <= names
    pr = next(m for m in json.loads(out) if m["name"] == "precision_recall")
    assert pr["params"]["k"] == {
        "default": 4,
        "accepts": "an integer >= 1",
        "doc": "each point's ball reaches its k-th nearest neighbour",
    }
    assert pr["values"] == {
        "precision": "higher",
        "recall": "higher",
        "density": "higher",
        "coverage": "higher",
    }


def test_list_table_shows_constraints_and_survives_a_closed_pipe():
    proc = subprocess.run(
        f"{sys.executable} -m genmetrics.cli list | head -3",
        shell=True,
        capture_output=True,
        text=True,
    )
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr
    full = subprocess.run(
        [sys.executable, "-m", "genmetrics.cli", "list"], capture_output=True, text=True
    ).stdout
    assert "--param k=4: an integer >= 1." in full
    assert "values: precision ↑, recall ↑, density ↑, coverage ↑" in full
    facts = "family quality/diversity; headline precision, recall; scale 0–1, ≥ 0; feeds pr_plane"
    assert facts + "; sweepable" in full


def test_score_precision_recall_matches_prdc(capsys, feats):
    import prdc

    d, ref, cand = feats
    code, out, _ = run(
        capsys,
        "score",
        "precision_recall",
        "--reference",
        str(d / "ref.npz"),
        "--candidate",
        str(d / "cand.npz"),
        "--param",
        "pca=false",
        "--param",
        "k=5",
    )
    assert code == 0
    rec = json.loads(out)
    want = prdc.compute_prdc(real_features=ref, fake_features=cand, nearest_k=5)
    for key in ("precision", "recall", "density", "coverage"):
        assert rec["values"][key] == pytest.approx(want[key], abs=1e-9)
    assert rec["params"]["k"] == 5 and rec["params"]["pca"] is False
    assert rec["n"]["reference"] == 120 and rec["n"]["candidate"] == 100


def test_score_perplexity_on_ragged_npz(capsys, tmp_path):
    seqs = [np.array([1.0, 2.0]), np.array([3.0])]
    off, val = ragged_to_arrays(seqs)
    save_npz(tmp_path / "s.npz", ids=["a", "b"], offsets=off, values=val)
    code, out, _ = run(capsys, "score", "perplexity", "--candidate", str(tmp_path / "s.npz"))
    assert code == 0
    v = json.loads(out)["values"]
    assert v["perplexity"] == pytest.approx(np.exp(2.0))
    assert v["mean_text_perplexity"] == pytest.approx((np.exp(1.5) + np.exp(3.0)) / 2)


def test_errors_are_one_line_and_exit_2(capsys, feats, tmp_path):
    d, ref, _ = feats
    code, _, err = run(capsys, "score", "no_such_metric", "--candidate", str(d / "cand.npz"))
    assert code == 2 and "unknown metric 'no_such_metric'" in err and err.count("\n") == 1
    code, _, err = run(
        capsys,
        "score",
        "precision_recall",
        "--reference",
        str(d / "ref.npz"),
        "--candidate",
        str(d / "cand.npz"),
        "--param",
        "kk=3",
    )
    assert code == 2 and "unknown parameter(s) kk" in err
    code, _, err = run(capsys, "score", "precision_recall", "--candidate", str(d / "cand.npz"))
    assert code == 2 and "needs --reference" in err
    bad = ref.copy()
    bad[7, 3] = np.nan
    save_npz(tmp_path / "nan.npz", emb=bad)
    code, _, err = run(
        capsys,
        "score",
        "precision_recall",
        "--reference",
        str(tmp_path / "nan.npz"),
        "--candidate",
        str(d / "cand.npz"),
    )
    assert code == 2 and "NaN/inf" in err and "[7]" in err
    save_npz(tmp_path / "few.npz", emb=ref[:4])
    code, _, err = run(
        capsys,
        "score",
        "precision_recall",
        "--reference",
        str(tmp_path / "few.npz"),
        "--candidate",
        str(d / "cand.npz"),
    )
    assert code == 2 and "k" in err  # fewer than k+1 texts
    code, _, err = run(
        capsys,
        "score",
        "precision_recall",
        "--reference",
        str(d / "missing.npz"),
        "--candidate",
        str(d / "cand.npz"),
    )
    assert code == 2 and "missing.npz: file not found" in err


def test_empty_texts_are_scored_and_invalid_utf8_rejected(capsys, tmp_path):
    write_jsonl(tmp_path / "t.jsonl", [{"id": "a", "text": "fine text"}, {"id": "b", "text": " "}])
    code, out, err = run(
        capsys,
        "score",
        "distinct_n",
        "--candidate",
        str(tmp_path / "t.jsonl"),
        "--param",
        "tokenizer=whitespace",
    )
    assert code == 0, err  # real output has empty generations: scored as upstream does
    assert json.loads(out)["values"]["distinct_1"] == 1.0
    (tmp_path / "u.jsonl").write_bytes(b'{"text": "ok"}\n{"text": "\xff"}\n')
    code, _, err = run(capsys, "score", "distinct_n", "--candidate", str(tmp_path / "u.jsonl"))
    assert code == 2 and "u.jsonl: line 2: invalid UTF-8" in err


def test_console_script_is_installed(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "genmetrics.cli", "list"], capture_output=True, text=True, check=True
    )
    assert "precision_recall" in out.stdout


def test_argument_errors_are_one_line(capsys):
    for args, want in [
        ([], "the following arguments are required: command"),
        (["score", "ttr"], "required: --candidate"),
        (["score", "ttr", "--candidate", "x.jsonl", "--param", "a=1", "--param", "a=2"], "twice"),
    ]:
        code, out, err = run(capsys, *args)
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert err.startswith("genmetrics: error: ") and (want in err or "more than once" in err)


def test_parameters_are_checked_before_files_are_read(capsys, tmp_path):
    code, _, err = run(
        capsys, "score", "ttr", "--candidate", str(tmp_path / "missing.jsonl"), "--param", "x=1"
    )
    assert code == 2 and "unknown parameter(s) x" in err


def test_unexpected_failures_are_one_line_with_exit_1(capsys, monkeypatch, tmp_path):
    import genmetrics.scoring.from_files

    def broken(*args, **kwargs):
        raise TypeError("boom\nsecond line")

    monkeypatch.setattr(genmetrics.scoring.from_files, "score_files", broken)
    code, out, err = run(capsys, "score", "ttr", "--candidate", "x.jsonl")
    assert code == 1 and out == "" and err.count("\n") == 1
    assert "internal error" in err and "TypeError: boom\\nsecond line" in err
    monkeypatch.setenv("GENMETRICS_DEBUG", "1")
    with pytest.raises(TypeError):
        main(["score", "ttr", "--candidate", "x.jsonl"])

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path / "x.jsonl"))

    monkeypatch.setattr(genmetrics.scoring.from_files, "score_files", denied)
    code, _, err = run(capsys, "score", "ttr", "--candidate", "x.jsonl")
    assert code == 2 and err == f"genmetrics: error: {tmp_path / 'x.jsonl'}: Permission denied\n"


def test_non_finite_numbers_anywhere_become_null_with_a_note():
    rec = {
        "values": {"a": float("inf"), "b": 1.0, "c": float("nan")},
        "extras": {"curve": np.array([0.5, -np.inf, np.nan]), "ok": [1, 2]},
    }
    out = finite_json(rec)
    assert json.loads(json.dumps(out, allow_nan=False)) == out
    assert out["values"] == {"a": None, "b": 1.0, "c": None}
    assert out["extras"] == {"curve": [0.5, None, None], "ok": [1, 2]}
    assert out["non_finite"] == {"a": "inf", "c": "nan", "extras.curve": "-inf,nan"}


def _texts(path, rows):
    write_jsonl(path, rows)
    return str(path)


def test_bleu_pairs_by_id_and_by_position_only_when_asked(capsys, tmp_path):
    """A candidate file without ids was paired with the references line by line without a
    word: shuffling it moved BLEU from 100 to 62.7, and unrelated files scored 0.63."""
    import random

    import sacrebleu

    words = "the a cat dog sat ran on in mat park today quickly slowly big small red".split()
    rng = random.Random(0)
    refs = [" ".join(rng.choice(words) for _ in range(12)) for _ in range(30)]
    order = list(range(30))
    rng.shuffle(order)
    ref = _texts(tmp_path / "ref.jsonl", [{"id": f"r{i}", "text": t} for i, t in enumerate(refs)])
    plain = _texts(tmp_path / "plain.jsonl", [{"text": refs[i]} for i in order])
    code, out, err = run(capsys, "score", "bleu", "--candidate", plain, "--reference", ref)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "plain.jsonl vs" in err and "but 30 of 30 candidate row(s) have no 'id'" in err
    assert "--pair-by position" in err
    code, out, _ = run(
        capsys, "score", "bleu", "--candidate", plain, "--reference", ref, "--pair-by", "position"
    )
    want = sacrebleu.corpus_bleu([refs[i] for i in order], [refs]).score
    assert code == 0 and json.loads(out)["values"]["bleu"] == pytest.approx(want, abs=1e-9)
    assert want < 90  # the shuffle is a real difference
    # with their ids, the shuffled candidates find their references: BLEU 100
    rows = [{"id": f"r{i}", "text": refs[i]} for i in order]
    ided = _texts(tmp_path / "ided.jsonl", rows)
    code, out, _ = run(capsys, "score", "bleu", "--candidate", ided, "--reference", ref)
    assert code == 0 and json.loads(out)["values"]["bleu"] == pytest.approx(100)
    # two unrelated sets with ids of their own are refused, naming how many and the first
    other = _texts(
        tmp_path / "other.jsonl", [{"id": f"x{i}", "text": t} for i, t in enumerate(refs)]
    )
    code, _, err = run(capsys, "score", "bleu", "--candidate", other, "--reference", ref)
    assert code == 2 and "30 of 30 candidate(s) whose id matches no reference id, first 'x0'" in err
    # position pairing is for paired metrics only, and needs equal counts
    code, _, err = run(capsys, "score", "ttr", "--candidate", plain, "--pair-by", "position")
    assert code == 2 and "metric 'ttr' is not paired" in err
    short = _texts(tmp_path / "short.jsonl", [{"text": t} for t in refs[:29]])
    code, _, err = run(
        capsys, "score", "rouge", "--candidate", short, "--reference", ref, "--pair-by", "position"
    )
    assert code == 2 and "position needs equal counts (30 references vs 29 candidates)" in err
    code, _, err = run(capsys, "score", "bleu", "--candidate", plain, "--pair-by", "order")
    assert code == 2 and "--pair-by: invalid choice: 'order'" in err


def test_help_documents_pair_by(capsys):
    code, out, _ = run(capsys, "score", "--help")
    assert code == 0 and "--pair-by {id,position}" in out and "line by line" in out


def test_a_mean_over_no_text_exits_2_with_one_line(capsys, tmp_path):
    texts = _texts(tmp_path / "t.jsonl", [{"id": str(i), "text": "a b c"} for i in range(40)])
    code, out, err = run(capsys, "score", "mattr", "--candidate", texts)
    assert code == 2 and out == ""
    assert err == (
        f"genmetrics: error: {texts}: mattr: all 40 texts are shorter than window=50 words; lower "
        "window or use short_texts: upstream\n"
    )


@pytest.mark.parametrize(
    ("metric", "params", "message"),
    [
        ("precision_recall", [], "precision_recall: k=4 needs at least 5 texts per set; "),
        ("precision_recall", ["k=1"], "precision_recall: k=1 needs at least 2 texts per set; "),
        ("prd", ["num_buckets=4"], "prd: num_buckets=4 needs at least 2 texts per set; "),
        ("mauve", ["num_buckets=6"], "mauve: num_buckets=6 needs at least 3 texts per set; "),
        # one text is no distribution, whatever the cluster count (auto: 2 clusters)
        ("mauve", [], "mauve: num_buckets=auto needs at least 2 texts per set; "),
        ("prd", [], "prd: num_buckets=auto needs at least 2 texts per set; "),
    ],
)
def test_sizes_are_checked_as_the_workflow_does(capsys, feats, metric, params, message):
    """``min_items(params)``, which the workflow's check_sizes rule uses, holds in the CLI."""
    d, ref, cand = feats
    save_npz(d / "one.npz", ids=["c0"], emb=cand[:1])
    args = [a for p in params for a in ("--param", p)]
    ref_path = str(d / "ref.npz")
    code, _, err = run(
        capsys, "score", metric, "--candidate", str(d / "one.npz"), "--reference", ref_path, *args
    )
    one = str(d / "one.npz")
    assert (
        code == 2
        and err == f"genmetrics: error: {one} vs {ref_path}: {message}the candidate has 1\n"
    )
    code, _, err = run(capsys, "score", metric, "--candidate", ref_path, "--reference", one, *args)
    assert code == 2 and err.startswith(f"genmetrics: error: {ref_path} vs {one}: ")
    assert err.endswith("the reference has 1\n")


def test_help_and_list_show_plain_text_not_restructuredtext(capsys):
    """The registered docstrings are reStructuredText; a terminal gets their plain text."""
    from genmetrics.cli import plain_text

    assert plain_text("as ``diversity.compression_ratio`` (see :func:`~a.b.score`)") == (
        "as diversity.compression_ratio (see score)"
    )
    assert plain_text(":mod:`genmetrics.data.words` and ``x``") == "genmetrics.data.words and x"
    code, out, _ = run(capsys, "list")
    assert code == 0 and "self_bleu" in out
    assert "``" not in out and ":func:`" not in out and ":mod:`" not in out
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert "genmetrics list, genmetrics score METRIC" in out and "``" not in out


def test_score_interval_is_the_workflow_records_interval(capsys, tmp_path):
    """``--interval KEY=VALUE...`` gives the record the interval a score job records with the
    same settings (resampled over prompts), and its errors name ``--interval``."""
    from genmetrics.scoring.from_files import score_files
    from genmetrics.scoring.intervals import entry_interval

    rng = np.random.default_rng(0)
    words = "the a cat dog sat ran on under mat log".split()
    rows = [
        {"id": f"t{i}", "prompt_id": f"p{i // 2}", "text": " ".join(rng.choice(words, 12))}
        for i in range(40)
    ]
    path = tmp_path / "texts.jsonl"
    write_jsonl(path, rows)
    args = ("score", "distinct_n", "--candidate", str(path), "--param", "n=2")
    code, out, _ = run(capsys, *args, "--interval", "resamples=50", "seed=3")
    assert code == 0
    rec = json.loads(out)
    settings = entry_interval("metrics.d", {"resamples": 50, "seed": 3})
    want = score_files("distinct_n", path, params={"n": 2}, interval=settings)["interval"]
    assert rec["interval"] == json.loads(json.dumps(want))
    assert rec["interval"]["resamples"] == 50 and rec["interval"]["seed"] == 3
    lo, hi = rec["interval"]["lower"]["distinct_2"], rec["interval"]["upper"]["distinct_2"]
    assert lo < rec["values"]["distinct_2"] < hi
    code, out, _ = run(capsys, *args, "--interval")  # the defaults: 200 half-samples, seed 0
    assert code == 0 and json.loads(out)["interval"]["resamples"] == 200
    code, out, _ = run(capsys, *args)
    assert code == 0 and "interval" not in json.loads(out)
    code, _, err = run(capsys, *args, "--interval", "bogus=1")
    assert code == 2 and err.startswith("genmetrics: error: --interval: unknown key(s) ['bogus']")
    code, _, err = run(capsys, *args, "--interval", "scheme=replacement")  # a set metric
    assert code == 2 and err.startswith(
        "genmetrics: error: --interval.scheme: scheme replacement is refused for metric distinct_n"
    )
    ttr = ("score", "ttr", "--candidate", str(path), "--interval", "scheme=replacement")
    code, out, _ = run(capsys, *ttr)  # a mean over texts takes it
    assert code == 0 and json.loads(out)["interval"]["scheme"] == "replacement"
