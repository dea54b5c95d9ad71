"""``genmetrics score`` on texts for every metric (featurized on the fly with a featurizer or
evaluator named in the config, through the workflow's feature cache) and ``genmetrics embed``.

The featurizer is all-MiniLM-L6-v2 from its registry wheel (a real small encoder); the texts
are WebText documents and GPT-2 small samples from ../shared/data."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from genmetrics import GenmetricsError
from genmetrics.cli import main
from genmetrics.io import read_jsonl, write_jsonl

N = 20  # texts per set: MAUVE's automatic buckets (2) and P/R's k = 4 both have enough


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def score(capsys, *args):
    code, out, err = run(capsys, "score", *args)
    assert code == 0, err
    return json.loads(out)


def write_config(path, minilm, featurizers=None, evaluators=None, checkpoints=None):
    """A workflow config (it must plan: a dataset, a model, a metric) naming the featurizers
    and evaluators, with its caches beside it."""
    here = path.parent
    featurizers = featurizers or {
        "mini": {"checkpoint": "minilm", "kind": "sentence_encoder", "max_tokens": 64}
    }
    cfg = {
        "cache": str(here / "downloads"),
        "model_cache": str(here / "models"),
        "feature_cache": str(here / "features"),
        "datasets": {"web": {"source": {"kind": "local", "path": str(here / "ref.jsonl")}}},
        "checkpoints": {
            "minilm": {"source": {"kind": "local", "path": str(minilm)}},
            **(checkpoints or {}),
        },
        "models": {
            "gpt2": {"texts": {"source": {"kind": "local", "path": str(here / "gen.jsonl")}}}
        },
        "featurizers": featurizers,
        "evaluators": evaluators or {},
        "metrics": {"mauve": {"featurizer": next(iter(featurizers))}},
    }
    path.write_text(json.dumps(cfg))
    return path


@pytest.fixture
def work(tmp_path, monkeypatch, shared_data, minilm):
    """A folder with ref.jsonl (WebText), gen.jsonl (GPT-2 small) and a config.yaml naming
    the featurizer ``mini``; the current folder, so config.yaml is found by default."""
    for name, src in (
        ("ref.jsonl", shared_data / "webtext" / "face_demo_human.jsonl"),
        ("gen.jsonl", shared_data / "gpt2_generations" / "gpt2-small_pure_face.jsonl"),
    ):
        rows = read_jsonl(src)[:N]
        write_jsonl(tmp_path / name, [{"id": r["id"], "text": r["text"]} for r in rows])
    write_config(tmp_path / "config.yaml", minilm)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def texts_of(path):
    return [r["text"] for r in read_jsonl(path)]


def library_embeddings(texts, minilm):
    """What the library gives, embed_texts called directly (no cache), with mini's settings."""
    from genmetrics.features.embed import embed_texts

    return embed_texts(texts, str(minilm), kind="sentence_encoder", max_tokens=64, batch_size=16)


def test_mauve_and_precision_recall_of_two_jsonl_files_equal_the_library(capsys, work, minilm):
    from genmetrics.features.cache import FeatureCache, settings_digest
    from genmetrics.metrics import compute
    from genmetrics.models.checkpoints import folder_sha256

    cand = library_embeddings(texts_of(work / "gen.jsonl"), minilm)
    ref = library_embeddings(texts_of(work / "ref.jsonl"), minilm)
    for metric in ("mauve", "precision_recall"):
        args = (metric, "--candidate", "gen.jsonl", "--reference", "ref.jsonl")
        rec = score(capsys, *args, "--featurizer", "mini")
        want = compute(metric, cand, ref).values
        assert rec["values"] == pytest.approx(want, abs=1e-9)
        assert rec["n"] == {"candidate": N, "reference": N}
        used = rec["inputs"]["candidate"]["featurizer"]
        assert used["name"] == "mini" and used["config"] == "config.yaml"
        assert used["checkpoint"] == "minilm"
        assert used["checkpoint_sha256"] == folder_sha256(minilm)
        assert used["settings"]["kind"] == "sentence_encoder"
        assert used["settings"]["max_tokens"] == 64
        # the key the record names is the digest of the settings the entries are filed under
        assert used["cache_key"] == settings_digest(used["cache_settings"])
        cache = FeatureCache(work / used["cache_dir"], used["cache_settings"])
        assert all(cache.get(t) is not None for t in texts_of(work / "gen.jsonl"))
        assert rec["inputs"]["reference"]["featurizer"]["cache_key"] == used["cache_key"]
    # the first call (mauve) computed and loaded the model; precision_recall read the cache
    assert used["computed"] == 0 and used["from_cache"] == N and used["model_loaded"] is False


def test_a_second_call_hits_the_cache_and_a_changed_text_or_setting_misses(capsys, work, minilm):
    args = ("mauve", "--candidate", "gen.jsonl", "--reference", "ref.jsonl", "--featurizer")
    first = score(capsys, *args, "mini")
    used = first["inputs"]["candidate"]["featurizer"]
    assert used["computed"] == N and used["model_loaded"] is True
    second = score(capsys, *args, "mini")
    for role in ("candidate", "reference"):
        hit = second["inputs"][role]["featurizer"]
        assert hit["computed"] == 0 and hit["from_cache"] == N and hit["model_loaded"] is False
    assert second["values"] == first["values"]
    # a changed text misses (its chunk is recomputed); the unchanged reference hits
    rows = read_jsonl(work / "gen.jsonl")
    rows[3]["text"] += " One more sentence."
    write_jsonl(work / "gen.jsonl", rows)
    third = score(capsys, *args, "mini")
    assert third["inputs"]["candidate"]["featurizer"]["model_loaded"] is True
    assert third["inputs"]["candidate"]["featurizer"]["computed"] > 0
    assert third["inputs"]["reference"]["featurizer"]["computed"] == 0
    # another setting of the same checkpoint is another key: nothing is read from the first
    short = {"checkpoint": "minilm", "kind": "sentence_encoder", "max_tokens": 16}
    write_config(work / "short.yaml", minilm, {"short": short})
    other = score(capsys, *args, "short", "--config", "short.yaml")
    moved = other["inputs"]["reference"]["featurizer"]
    assert moved["computed"] == N and moved["cache_key"] != used["cache_key"]


def test_the_workflow_embed_job_and_the_cli_share_cache_entries(capsys, work):
    """What the embed rule's script runs (embed_source with the plan's embed_settings) fills
    the cache the CLI reads: no text is embedded twice; and the rule's feature file scores
    against texts embedded on the fly by the same featurizer."""
    from genmetrics.features.embed import embed_source
    from genmetrics.npz import save_npz, with_provenance
    from genmetrics.provenance import record
    from genmetrics.scoring.on_the_fly import load_config_plan, ready_checkpoint

    plan = load_config_plan("config.yaml")
    manifest = ready_checkpoint(plan, "minilm")
    settings = plan.embed_settings("mini")
    for name in ("gen", "ref"):  # as workflow/scripts/embed.py does
        arrays = embed_source(read_jsonl(f"{name}.jsonl"), "text", name, manifest, **settings)
        rec = record(config={"featurizer": settings, "source": name}, inputs={})
        save_npz(work / f"{name}.npz", **with_provenance(arrays, rec))
    args = ("precision_recall", "--candidate", "gen.jsonl", "--featurizer", "mini")
    rec = score(capsys, *args, "--reference", "ref.jsonl")
    for role in ("candidate", "reference"):
        assert rec["inputs"][role]["featurizer"]["computed"] == 0
        assert rec["inputs"][role]["featurizer"]["model_loaded"] is False
    mixed = score(capsys, *args, "--reference", "ref.npz")
    assert mixed["values"] == rec["values"]
    assert mixed["inputs"]["reference"]["featurizer"]["settings"]["max_tokens"] == 64
    files = score(capsys, "precision_recall", "--candidate", "gen.npz", "--reference", "ref.npz")
    assert files["values"] == rec["values"]


def test_embed_then_score_the_npz_gives_the_same_value(capsys, work, minilm):
    from genmetrics.npz import read_embeddings, read_provenance

    for name in ("gen", "ref"):
        code, out, err = run(
            capsys,
            "embed",
            "--texts",
            f"{name}.jsonl",
            "--featurizer",
            "mini",
            "--out",
            f"{name}.npz",
        )
        assert code == 0, err
        done = json.loads(out)
        assert done["n"] == N and done["dim"] == 384 and done["name"] == "mini"
    links, emb = read_embeddings(work / "gen.npz")
    assert list(links["ids"]) == [r["id"] for r in read_jsonl(work / "gen.jsonl")]
    assert np.array_equal(emb, library_embeddings(texts_of(work / "gen.jsonl"), minilm))
    assert read_provenance(work / "gen.npz")["features"]["checkpoint"] == "minilm"
    pairs = {"npz": ("gen.npz", "ref.npz"), "texts": ("gen.jsonl", "ref.jsonl")}
    values = {}
    for how, (cand, ref) in pairs.items():
        extra = ("--featurizer", "mini") if how == "texts" else ()
        rec = score(capsys, "mauve", "--candidate", cand, "--reference", ref, *extra)
        values[how] = rec["values"]
        cut = rec["truncation"]["candidate"]  # WebText-long texts, max_tokens 64
        assert cut["max_tokens"] == 64 and 0 < cut["truncated"] <= cut["texts"] == N
        assert cut == read_provenance(work / "gen.npz")["truncation"]
        assert any(w.startswith("texts truncated: ") for w in rec["warnings"])
    assert values["npz"] == values["texts"]
    npz_rec = score(capsys, "mauve", "--candidate", "gen.npz", "--reference", "ref.npz")
    assert npz_rec["inputs"]["candidate"]["featurizer"]["name"] == "mini"
    # a reference embedded by another featurizer is another space: refused
    short = {"checkpoint": "minilm", "kind": "sentence_encoder", "max_tokens": 16}
    write_config(work / "short.yaml", minilm, {"short": short})
    args = ("--featurizer", "short", "--config", "short.yaml", "--out", "short.npz")
    assert run(capsys, "embed", "--texts", "ref.jsonl", *args)[0] == 0
    code, _, err = run(
        capsys, "score", "mauve", "--candidate", "gen.npz", "--reference", "short.npz"
    )
    assert code == 2 and "gen.npz (candidate) and short.npz (reference): embeddings of " in err
    assert "differ in settings (max_tokens: 64 vs 16): make both with the same featurizer" in err


def test_a_txt_folder_and_a_csv_column_give_the_texts_of_the_jsonl(capsys, work):
    from genmetrics.scoring.text_inputs import read_text_rows

    rows = read_jsonl(work / "gen.jsonl")
    folder = work / "gen_txt"
    folder.mkdir()
    for r in rows:  # a text file ends with a line ending, which is not part of the text
        (folder / f"{r['id']}.txt").write_text(r["text"] + "\n", encoding="utf-8")
    with open(work / "gen.csv", "w", encoding="utf-8", newline="") as f:
        w = csv.writer(f)
        w.writerow(["story", "id", "model"])
        w.writerows([r["text"], r["id"], "gpt2"] for r in rows)
    want = [(r["id"], r["text"]) for r in rows]
    assert [(r["id"], r["text"]) for r in read_text_rows(folder)] == want
    assert [(r["id"], r["text"]) for r in read_text_rows(work / "gen.csv", "story")] == want
    inputs = {
        "jsonl": ["gen.jsonl"],
        "folder": ["gen_txt"],
        "csv": ["gen.csv", "--column", "story"],
    }
    for metric in ("distinct_n", "mauve"):
        got = {}
        for how, given in inputs.items():
            extra = (
                ["--reference", "ref.jsonl", "--featurizer", "mini"] if metric == "mauve" else []
            )
            if how == "csv" and metric == "mauve":
                extra += ["--reference-field", "text"]
            rec = score(capsys, metric, "--candidate", *given, *extra)
            got[how] = rec["values"]
            if metric == "mauve" and how != "jsonl":  # the same texts: read from the cache
                assert rec["inputs"]["candidate"]["featurizer"]["computed"] == 0
        assert got["folder"] == got["jsonl"] and got["csv"] == got["jsonl"]
    code, _, err = run(capsys, "score", "ttr", "--candidate", "gen.csv")
    assert code == 2 and "gen.csv: no column 'text' (choose one with --field: 'story'" in err


def test_help_states_every_metrics_input_kind_with_an_example(capsys):
    from genmetrics.metrics import all_metrics
    from genmetrics.metrics.kinds import FROM_TEXTS

    code, out, _ = run(capsys, "score", "--help")
    assert code == 0
    lines = out.splitlines()
    for name, m in all_metrics().items():
        row = next(i for i, line in enumerate(lines) if line.split()[:1] == [name])
        assert lines[row].split()[1].rstrip(";") == m.input, lines[row]
        example = lines[row + 1].strip()
        assert example.startswith(f"genmetrics score {name} --candidate ")
        assert ("--reference" in example) == (m.reference != "none")
        option = FROM_TEXTS.get(m.input, ("", None))[1]
        assert (f"--{option} NAME" in example) if option else ("NAME" not in example)
    flat = " ".join(out.split())
    assert "a folder of .txt files" in flat and "--column" in flat


def test_texts_given_to_a_metric_of_features_say_what_to_pass(capsys, work):
    from genmetrics.metrics import compute

    code, out, err = run(
        capsys, "score", "mauve", "--candidate", "gen.jsonl", "--reference", "ref.jsonl"
    )
    assert code == 2 and out == "" and err.count("\n") == 1
    assert (
        "gen.jsonl: the candidate is texts, and mauve reads embeddings: give --featurizer NAME"
        in err
    )
    assert "featurizers: in config.yaml: mini" in err and "genmetrics embed writes them" in err
    code, _, err = run(
        capsys,
        "score",
        "mauve",
        "--candidate",
        "gen.jsonl",
        "--reference",
        "ref.jsonl",
        "--featurizer",
        "nope",
    )
    assert (
        code == 2 and "--featurizer nope: not in featurizers of config.yaml (it names: mini)" in err
    )
    code, _, err = run(
        capsys,
        "score",
        "bleu",
        "--candidate",
        "gen.jsonl",
        "--reference",
        "ref.jsonl",
        "--featurizer",
        "mini",
    )
    assert code == 2 and "bleu reads texts, not embeddings (drop --featurizer)" in err
    code, _, err = run(
        capsys, "score", "mauve", "--candidate", "gen.txt", "--reference", "ref.jsonl"
    )
    assert code == 2 and "gen.txt: file not found" in err
    with pytest.raises(GenmetricsError, match=r"reads embeddings, not texts .*embed_texts\(texts"):
        compute("mauve", ["a text", "another"], ["a reference", "another"])


def test_perplexity_and_pos_metrics_read_texts_too(capsys, work, minilm, tiny_model_dir):
    """An evaluator (the tiny test LM as a local checkpoint) scores surprisal on the fly, as
    surprisal_texts does; a POS metric tags the texts of a .txt folder on load."""
    from genmetrics.features.surprisal import surprisal_texts
    from genmetrics.metrics import compute

    texts = ["the cat sat on the mat .", "a dog ran in the park and then it was happy ."]
    texts += ["the big red house", "it was a small blue tree"]
    write_jsonl(work / "lm.jsonl", [{"id": str(i), "text": t} for i, t in enumerate(texts)])
    tiny = {"tiny": {"source": {"kind": "local", "path": str(tiny_model_dir)}}}
    evaluators = {"tiny": {"checkpoint": "tiny", "max_tokens": 64}}
    write_config(work / "lm.yaml", minilm, evaluators=evaluators, checkpoints=tiny)
    args = ("perplexity", "--candidate", "lm.jsonl", "--evaluator", "tiny", "--config", "lm.yaml")
    rec = score(capsys, *args)
    want = compute("perplexity", surprisal_texts(texts, str(tiny_model_dir), max_tokens=64))
    assert rec["values"] == pytest.approx(want.values, abs=1e-9)
    assert rec["inputs"]["candidate"]["evaluator"]["checkpoint"] == "tiny"
    assert score(capsys, *args)["inputs"]["candidate"]["evaluator"]["model_loaded"] is False
    folder = work / "lm_txt"
    folder.mkdir()
    for i, t in enumerate(texts):
        (folder / f"{i}.txt").write_text(t, encoding="utf-8")
    by_folder = score(capsys, "pos_compression_ratio", "--candidate", "lm_txt")
    by_jsonl = score(capsys, "pos_compression_ratio", "--candidate", "lm.jsonl")
    assert by_folder["values"] == by_jsonl["values"]
    assert by_folder["inputs"]["candidate"]["tagged"] == "nltk"
