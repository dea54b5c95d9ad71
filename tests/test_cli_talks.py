"""``genmetrics score`` as a person meets it: the summary on stderr and ``--format table``,
``--quiet``, ``wall_seconds``, progress bars and notes while texts are featurized, sizes checked
from the files' row counts before any model runs, "did you mean" for names, and FACE and
perplexity from stored per-token NLL files (the ``*.nll_<evaluator>.jsonl`` form of the data
mirror). The models are the tiny test LM (a local checkpoint); no test needs ../shared/data
except the one on the real file, which skips without it."""

from __future__ import annotations

import json
import math
import os
import time

import numpy as np
import pytest

from genmetrics.cli import main
from genmetrics.io import write_jsonl
from genmetrics.metrics import compute
from genmetrics.npz import save_npz
from genmetrics.testing.tiny_lm import write_surprisal_npz

WORDS = "the a cat dog sat ran on in mat park and then it was happy sad big small red blue".split()


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def texts(n: int, seed: int, prefix: str) -> list[dict]:
    rng = np.random.default_rng(seed)
    return [{"id": f"{prefix}{i}", "text": " ".join(rng.choice(WORDS, 8))} for i in range(n)]


@pytest.fixture
def tiny_work(tmp_path, monkeypatch, tiny_model_dir):
    """A folder (the current one) with gen.jsonl and ref.jsonl of 12 texts each and a
    config.yaml naming the tiny LM as featurizer ``tinyf`` and evaluator ``tiny``."""
    write_jsonl(tmp_path / "gen.jsonl", texts(12, 0, "g"))
    write_jsonl(tmp_path / "ref.jsonl", texts(12, 1, "r"))
    cfg = {
        "cache": str(tmp_path / "downloads"),
        "model_cache": str(tmp_path / "models"),
        "feature_cache": str(tmp_path / "features"),
        "datasets": {"web": {"source": {"kind": "local", "path": str(tmp_path / "ref.jsonl")}}},
        "checkpoints": {"tiny": {"source": {"kind": "local", "path": str(tiny_model_dir)}}},
        "models": {
            "m": {"texts": {"source": {"kind": "local", "path": str(tmp_path / "gen.jsonl")}}}
        },
        "featurizers": {"tinyf": {"checkpoint": "tiny", "kind": "causal_lm", "max_tokens": 6}},
        "evaluators": {"tiny": {"checkpoint": "tiny", "max_tokens": 64}},
        "metrics": {"mauve": {"featurizer": "tinyf"}},
    }
    (tmp_path / "config.yaml").write_text(json.dumps(cfg))
    monkeypatch.chdir(tmp_path)
    return tmp_path


# ------------------------------------------------------------------ stored per-token values


def write_nll(path, rows, scorer="gpt2"):
    """A file in the data mirror's exact form: {"id", "scorer", "nll": [nats, 4 decimals]}."""
    lines = [
        {"id": i, **({"scorer": scorer} if scorer else {}), "nll": [round(x, 4) for x in nll]}
        for i, nll in rows
    ]
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in lines))
    return path


def test_perplexity_of_a_stored_nll_file_is_exp_of_the_mean_nll(capsys, tmp_path):
    """perplexity = exp(Σ nll / Σ tokens), pooled; mean_text_perplexity = mean exp(mean nll)
    per text; token_count=sequence counts the unscored first token too (one more per text)."""
    rows = [("wt-0", [1.0, 2.0, 3.0]), ("wt-1", [0.5]), ("wt-2", [0.25, 0.75])]
    path = write_nll(tmp_path / "human.nll_gpt2.jsonl", rows)
    code, out, err = run(capsys, "score", "perplexity", str(path))
    assert code == 0, err
    rec = json.loads(out)
    assert rec["values"]["perplexity"] == pytest.approx(math.exp(7.5 / 6), rel=1e-12)
    want = (math.exp(2.0) + math.exp(0.5) + math.exp(0.5)) / 3
    assert rec["values"]["mean_text_perplexity"] == pytest.approx(want, rel=1e-12)
    assert rec["values"]["mean_surprisal"] == pytest.approx(1.25, rel=1e-12)
    assert rec["n"] == {"candidate": 3, "tokens": 6, "excluded": 0}
    used = rec["inputs"]["candidate"]
    assert used["path"] == str(path) and used["format"] == "jsonl (stored per-token nll)"
    assert used["evaluator"]["name"] == "gpt2" and used["evaluator"]["tokens"] == 6
    assert used["evaluator"]["named_by"] == "the rows' 'scorer' field"
    code, out, _ = run(capsys, "score", "perplexity", str(path), "--param", "token_count=sequence")
    assert json.loads(out)["values"]["perplexity"] == pytest.approx(math.exp(7.5 / 9))
    # the summary marks it "closer to the references", not ↓ (human texts have a perplexity)
    assert f"perplexity: perplexity = {math.exp(7.5 / 6):.4g}  (≥ 1, closer to the refer" in err
    assert "evaluator gpt2 (stored per-token values; the name from the rows' 'scorer'" in err


def test_face_of_stored_nll_files_equals_face_of_the_same_values_as_npz(capsys, tmp_path):
    """The stored form maps onto the workflow's surprisal files: FACE on two .nll_ files
    equals FACE on .npz files of the same arrays and ids; the evaluator named by the file
    name is recorded where rows carry no scorer."""
    rng = np.random.default_rng(0)
    human = [(f"h{i}", rng.gamma(2.0, 1.5, size=40 + i)) for i in range(6)]
    model = [(f"m{i}", rng.gamma(1.5, 1.0, size=35 + 2 * i)) for i in range(5)]
    a = write_nll(tmp_path / "model.nll_gpt2-xl.jsonl", model, scorer=None)
    b = write_nll(tmp_path / "human.nll_gpt2-xl.jsonl", human, scorer="gpt2-xl")
    for name, rows in (("model.npz", model), ("human.npz", human)):
        seqs = [np.round(x, 4) for _, x in rows]
        write_surprisal_npz(tmp_path / name, seqs, [i for i, _ in rows])
    code, out, err = run(capsys, "score", "face", str(a), str(b))
    assert code == 0, err
    stored = json.loads(out)
    code, out, err = run(
        capsys, "score", "face", str(tmp_path / "model.npz"), str(tmp_path / "human.npz")
    )
    assert code == 0, err
    # the .npz files hold float32 values (as the surprisal rule writes them), the stored
    # form its 4 decimals as float64: equal to float32 precision, and exactly the library's
    assert stored["values"] == pytest.approx(json.loads(out)["values"], rel=1e-6)
    want = compute("face", [np.round(x, 4) for _, x in model], [np.round(x, 4) for _, x in human])
    assert stored["values"] == pytest.approx(want.values, rel=1e-12)
    assert stored["n"]["candidate"] == 5 and stored["n"]["reference"] == 6
    cand = stored["inputs"]["candidate"]["evaluator"]
    assert cand["name"] == "gpt2-xl" and cand["named_by"].startswith("the file name")
    assert stored["inputs"]["reference"]["evaluator"]["named_by"] == "the rows' 'scorer' field"


def test_stored_nll_errors_are_one_line_naming_the_file(capsys, tmp_path):
    ok = write_nll(tmp_path / "a.nll_gpt2.jsonl", [("x", [1.0, 2.0])])
    xl = write_nll(tmp_path / "b.nll_gpt2-xl.jsonl", [("y", [1.0, 2.0])], scorer="gpt2-xl")
    cases = [
        (["face", str(ok), str(xl)], "per-token values of different evaluators (gpt2 and gpt2-xl)"),
        (["perplexity", str(ok), "--evaluator", "tiny"], "drop --evaluator"),
    ]
    npz = tmp_path / "c.npz"
    write_surprisal_npz(npz, [np.array([1.0, 2.0, 3.0])], ["z"])
    cases.append((["face", str(ok), str(npz)], "holds stored per-token values and"))
    bad = write_nll(tmp_path / "d.nll_gpt2.jsonl", [("x", [1.0, -2.0])])
    cases.append((["perplexity", str(bad)], "negative values"))
    named = write_nll(tmp_path / "e.nll_opt.jsonl", [("x", [1.0])], scorer="gpt2")
    cases.append((["perplexity", str(named)], "the file name says evaluator 'opt'"))
    anonymous = write_nll(tmp_path / "f.jsonl", [("x", [1.0])], scorer=None)
    cases.append((["perplexity", str(anonymous)], "which evaluator scored these values?"))
    for args, want in cases:
        code, out, err = run(capsys, "score", *args)
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert err.startswith("genmetrics: error: ") and want in err, err


def test_the_data_mirrors_nll_files_are_accepted(capsys, shared_data):
    """The real files: GPT-2 small NLL of 999 WebText documents (mean 3.09 nats per token, as
    the data README states), and FACE of the upstream GPT-2-XL pair (236 vs 999)."""
    human = shared_data / "webtext" / "face_demo_human.nll_gpt2.jsonl"
    rows = [json.loads(line) for line in human.read_text().splitlines() if line.strip()]
    total = sum(sum(r["nll"]) for r in rows)
    tokens = sum(len(r["nll"]) for r in rows)
    code, out, err = run(capsys, "score", "perplexity", str(human), "--quiet")
    assert code == 0 and err == "", err
    rec = json.loads(out)
    assert rec["values"]["mean_surprisal"] == pytest.approx(total / tokens, rel=1e-12)
    assert rec["values"]["mean_surprisal"] == pytest.approx(3.09, abs=0.005)
    assert rec["n"]["candidate"] == 999 and rec["n"]["tokens"] == tokens
    model = shared_data / "gpt2_generations" / "gpt2-small_pure_face.nll_gpt2-xl.jsonl"
    human_xl = shared_data / "webtext" / "face_demo_human.nll_gpt2-xl.jsonl"
    code, out, err = run(capsys, "score", "face", str(model), str(human_xl), "--quiet")
    assert code == 0, err
    rec = json.loads(out)
    assert rec["n"]["candidate"] == 236 and rec["n"]["reference"] == 999
    assert 0 < rec["values"]["so"] <= 1
    assert rec["inputs"]["reference"]["evaluator"]["name"] == "gpt2-xl"


# ------------------------------------------------------------------ names and sizes


def test_misspelt_names_get_the_closest_known_one_on_one_line(capsys, tiny_work):
    cases = [
        (["mauv", "gen.jsonl", "ref.jsonl"], "unknown metric 'mauv' (did you mean mauve?)"),
        (
            ["mauve", "gen.jsonl", "ref.jsonl", "--param", "scalling=2"],
            "unknown parameter(s) scalling (did you mean scaling?)",
        ),
        (
            ["mauve", "gen.jsonl", "ref.jsonl", "--featurizer", "tinyff"],
            "--featurizer tinyff: not in featurizers of config.yaml (did you mean tinyf?)",
        ),
        (
            ["perplexity", "gen.jsonl", "--evaluator", "tine"],
            "--evaluator tine: not in evaluators of config.yaml (did you mean tiny?)",
        ),
    ]
    for args, want in cases:
        code, out, err = run(capsys, "score", *args)
        assert code == 2 and out == "" and err.count("\n") == 1, err
        assert err.startswith("genmetrics: error: ") and want in err, err
    code, _, err = run(capsys, "score", "zzzzzz", "gen.jsonl")  # nothing close: no guess
    assert code == 2 and "did you mean" not in err and "known metrics: bertscore" in err


def test_sizes_fail_from_the_row_counts_before_any_model_runs(capsys, tiny_work, monkeypatch):
    """k=500 needs 501 texts per set: with 300 and 600 rows it fails at once, naming the
    parameter and both counts; no featurizer is even resolved."""
    from genmetrics.scoring import on_the_fly

    def no_model(*a, **k):
        raise AssertionError("a model was resolved before the size check")

    monkeypatch.setattr(on_the_fly, "resolve_model", no_model)
    write_jsonl(tiny_work / "c300.jsonl", texts(300, 2, "c"))
    (tiny_work / "r600.jsonl").write_text(
        "\n".join(json.dumps(r) + "\n" for r in texts(600, 3, "r"))  # blank lines between
    )
    t0 = time.perf_counter()
    code, out, err = run(
        capsys,
        "score",
        "precision_recall",
        "c300.jsonl",
        "r600.jsonl",
        "--featurizer",
        "tinyf",
        "--param",
        "k=500",
    )
    assert time.perf_counter() - t0 < 10
    assert code == 2 and out == ""
    assert err == (
        "genmetrics: error: c300.jsonl vs r600.jsonl: precision_recall: k=500 needs at least "
        "501 texts per set; the candidate has 300, the reference has 600 rows (counted before "
        "any model runs)\n"
    )
    # enough rows: the check passes and the model is asked for (here: the patched failure)
    code, _, err = run(
        capsys, "score", "precision_recall", "c300.jsonl", "r600.jsonl", "--featurizer", "tinyf"
    )
    assert code == 1 and "a model was resolved before the size check" in err


def test_row_counts_of_each_text_format(tmp_path):
    from genmetrics.scoring.text_inputs import count_rows

    (tmp_path / "t.csv").write_text('id,text\n1,"two\nlines"\n2,b\n\n3,c\n')
    folder = tmp_path / "txt"
    (folder / "sub").mkdir(parents=True)
    for name in ("a.txt", "b.txt", "sub/c.txt", "notes.md"):
        (folder / name).write_text("x")
    (tmp_path / "t.jsonl").write_text('{"text": "a"}\n\n{"text": "b"}\n  \n')
    assert count_rows(tmp_path / "t.csv") == 3
    assert count_rows(folder) == 3
    assert count_rows(tmp_path / "t.jsonl") == 2
    assert count_rows(tmp_path / "x.npz") is None
    os.mkfifo(tmp_path / "f.jsonl")  # not opened (it would wait for a writer): its loader says
    assert count_rows(tmp_path / "f.jsonl") is None


# ------------------------------------------------------------------ what a person reads


@pytest.fixture
def feats(tmp_path):
    rng = np.random.default_rng(0)
    save_npz(tmp_path / "cand.npz", ids=[f"c{i}" for i in range(30)], emb=rng.normal(size=(30, 4)))
    save_npz(tmp_path / "ref.npz", ids=[f"r{i}" for i in range(30)], emb=rng.normal(1, 1, (30, 4)))
    return tmp_path / "cand.npz", tmp_path / "ref.npz"


def test_summary_on_stderr_names_values_directions_and_n(capsys, feats):
    cand, ref = feats
    code, out, err = run(capsys, "score", "precision_recall", str(cand), str(ref))
    assert code == 0
    rec = json.loads(out)  # stdout: the record alone
    p, r = rec["values"]["precision"], rec["values"]["recall"]
    lines = err.splitlines()
    assert lines[0] == f"precision_recall: precision = {p:.4g}  (0–1, ↑ higher is better)"
    assert lines[1] == f"precision_recall: recall = {r:.4g}  (0–1, ↑ higher is better)"
    assert lines[2] == f"  n: 30 candidate ({cand}), 30 reference ({ref})"
    assert lines[-1].startswith(f"  took {rec['wall_seconds']:.1f} s (the metric itself")
    # the same from FILE arguments as from --candidate/--reference
    code, out2, _ = run(capsys, "score", "precision_recall", "--candidate", str(cand),
                        "--reference", str(ref))  # fmt: skip
    assert json.loads(out2)["values"] == rec["values"]
    code, _, err = run(capsys, "score", "precision_recall", str(cand), str(ref), str(ref))
    assert code == 2 and "at most two files" in err


def test_wall_seconds_is_the_whole_command_and_seconds_the_metric(capsys, feats, monkeypatch):
    """A command that spends 0.4 s before the metric: wall_seconds counts it, seconds not."""
    from genmetrics.scoring import on_the_fly

    real = on_the_fly.score_texts

    def slow(*a, **k):
        time.sleep(0.4)
        return real(*a, **k)

    monkeypatch.setattr(on_the_fly, "score_texts", slow)
    cand, ref = feats
    code, out, _ = run(capsys, "score", "frechet", str(cand), str(ref))
    rec = json.loads(out)
    assert code == 0 and rec["wall_seconds"] >= 0.4 > rec["seconds"]
    assert list(rec)[list(rec).index("seconds") + 1] == "wall_seconds"


def test_table_format_and_quiet(capsys, feats):
    cand, ref = feats
    code, out, err = run(capsys, "score", "mauve", str(cand), str(ref), "--format", "table")
    assert code == 0 and err == ""  # the table says it all: no summary beside it
    lines = out.splitlines()
    assert lines[0] == "mauve"
    header, first = lines[1].split(), lines[2].split()
    assert header == ["value", "better", "scale"]
    code, js, _ = run(capsys, "score", "mauve", str(cand), str(ref), "--quiet")
    rec = json.loads(js)
    assert first == ["mauve", f"{rec['values']['mauve']:.4g}", "↑", "0–1"]
    fi = next(line.split() for line in lines if line.startswith("frontier_integral "))
    assert fi == ["frontier_integral", f"{rec['values']['frontier_integral']:.4g}", "↓", "0–1"]
    assert "n: 30 candidate" in out and "seconds:" in out
    # --quiet: nothing on stderr on success, the record unchanged
    code, js, err = run(capsys, "score", "mauve", str(cand), str(ref), "--quiet")
    assert code == 0 and err == "" and json.loads(js)["values"] == rec["values"]


def test_interval_resamples_show_a_progress_bar_unless_quiet(capsys, tmp_path):
    rows = [{**r, "prompt_id": f"p{i // 2}"} for i, r in enumerate(texts(40, 4, "t"))]
    write_jsonl(tmp_path / "t.jsonl", rows)
    args = ("score", "distinct_n", str(tmp_path / "t.jsonl"), "--interval", "resamples=30")
    code, out, err = run(capsys, *args)
    # distinct-n is a set statistic: 30 draws of half the prompts, 30 of a quarter
    assert code == 0 and "interval resamples: 100%" in err and "60/60" in err
    lo, hi = (json.loads(out)["interval"][k]["distinct_1"] for k in ("lower", "upper"))
    assert f"[95% interval {lo:.4g}–{hi:.4g}]" in err
    code, _, err = run(capsys, *args, "--quiet")
    assert code == 0 and err == ""


def test_featurizing_texts_talks_and_quiet_silences_it(capsys, tiny_work):
    """Texts embedded on the fly: a note per side, the embed bar (on any stderr, a log too),
    the featurizer and its truncation in the summary; --quiet: nothing at all."""
    args = ("score", "mauve", "gen.jsonl", "ref.jsonl", "--featurizer", "tinyf")
    code, out, err = run(capsys, *args)
    assert code == 0, err
    rec = json.loads(out)
    assert "genmetrics: embedding the candidate's 12 texts (gen.jsonl) with featurizer tinyf" in err
    assert "genmetrics: embedding the reference's 12 texts (ref.jsonl) with featurizer tinyf" in err
    assert "embed: 100%" in err
    assert "  featurizer tinyf (24 texts computed, 0 from the cache)" in err
    # 8 words > max_tokens 6: every text is cut, and the summary says so
    cut = rec["truncation"]["candidate"]
    assert cut["truncated"] == 12 and cut["max_tokens"] == 6
    assert "  texts truncated: 12 of 12 candidate texts (100%) cut at 6 tokens" in err
    code, out, err = run(capsys, *args, "--quiet")
    assert code == 0 and err == ""
    assert json.loads(out)["values"] == rec["values"]
    assert json.loads(out)["inputs"]["candidate"]["featurizer"]["from_cache"] == 12


def test_closer_to_the_references_is_a_registered_fact(capsys):
    """Perplexity's values are better closer to the references' own value (registered with
    the metric); the list and the summaries read it; an undirected value cannot be one."""
    from genmetrics.metrics import get
    from genmetrics.metrics.registry import CLOSER, HIGHER, LOWER, register

    ppl = get("perplexity")
    assert ppl.better("perplexity") == CLOSER and ppl.values["perplexity"] == LOWER
    assert get("mauve").better("mauve") == HIGHER and get("mauve").better("nope") is None
    assert ppl.describe()["closer_to_references"] == [
        "perplexity",
        "mean_text_perplexity",
        "mean_surprisal",
    ]
    code, out, _ = run(capsys, "list")
    assert code == 0 and "values: perplexity (closer to the references), mean_text_perp" in out
    with pytest.raises(ValueError, match="closer_to_references"):
        register("x_closer", input="texts", values={"v": None}, closer_to_references=("v",))


@pytest.mark.parametrize("what", ["embed", "surprisal"])
def test_one_bar_over_all_texts_however_many_cache_chunks(capsys, tiny_lm, tmp_path, what):
    """300 distinct texts are two cache chunks (256 + 44): one bar counts all 300 texts (not a
    bar of batches per chunk); a second call served from the cache draws no bar; and
    ``progress=False`` draws nothing."""
    from genmetrics.features.embed import embed_texts
    from genmetrics.features.surprisal import surprisal_texts

    fn = embed_texts if what == "embed" else surprisal_texts
    many = [f"{t['text']} {i}" for i, t in enumerate(texts(300, 5, "c"))]
    kw = dict(batch_size=64, max_tokens=8, cache_dir=tmp_path, cache_key="tiny")
    fn(many, tiny_lm, progress=True, **kw)
    err = capsys.readouterr().err
    finals = [s for s in err.replace("\r", "\n").splitlines() if "100%" in s]
    assert finals and all("300/300" in s for s in finals), err
    assert f"{what}:" in err and "text/s" in err and "/256" not in err and "/44 " not in err
    fn(many, tiny_lm, progress=True, **kw)  # every text cached
    assert capsys.readouterr().err == ""
    fn(many[:5], tiny_lm, progress=False, batch_size=4, max_tokens=8)
    assert capsys.readouterr().err == ""
