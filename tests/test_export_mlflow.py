"""``genmetrics export mlflow``: a results folder in a local MLflow file store, read back
through ``MlflowClient``; a second export updates the same runs and makes none.

The results folder is a real one in miniature: score records made by the scoring code
(``score_loaded``: kNN precision/recall on seeded random features with an interval over
prompts, n-gram diversity on texts) for 2 models x 2 seeds and the human texts, written where
the workflow writes them, with the workflow's ``scores.csv`` (``write_aggregates``)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("mlflow")

from genmetrics.analysis.aggregate import read_scores, write_aggregates  # noqa: E402
from genmetrics.analysis.headline import headline_rows  # noqa: E402
from genmetrics.cli import main  # noqa: E402
from genmetrics.io import read_json, write_csv, write_json  # noqa: E402
from genmetrics.paths import RESULTS  # noqa: E402
from genmetrics.report.export_mlflow import CONTENT_TAG, RUN_TAG, export_mlflow  # noqa: E402
from genmetrics.scoring.from_files import score_loaded  # noqa: E402

WORDS = "the a cat dog sat ran on in mat park and then it was happy sad big small".split()
#: a PNG of 1 x 1 pixel (the figures' folder is exported as it is)
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)


def _records(root, rng) -> list:
    """Score records of 2 entries for models a, b (seeds 0, 1) and of n-gram diversity for
    the references, as the score rule writes them (entry, dataset, source, provenance)."""
    paths = RESULTS.under(str(root))
    n = 24
    ref_x = rng.normal(size=(n, 8))
    ref_rows = [{"id": f"r{i}", "prompt_id": f"p{i}"} for i in range(n)]
    out = []

    def write(entry, source, rec, settings, upstream):
        rec = {"entry": entry, "dataset": "stories", "source": source, **settings, **rec}
        rec["provenance"] = {"config": {"entry": settings, "upstream": upstream}}
        path = paths.score.format(dataset="stories", source=source, entry=entry)
        write_json(path, rec)
        out.append(path)

    def texts(shift):
        return [" ".join(rng.choice(WORDS[: 12 + shift], 10)) for _ in range(n)]

    interval = {"resamples": 20, "level": 0.9, "seed": 0, "scheme": "half"}
    featurizer = {"featurizer": {"name": "tiny", "settings": {"max_tokens": 64}}}
    for model, shift in (("a", 0.3), ("b", 1.0)):
        generation = {"model": model, "settings": {"sampling": {"temperature": shift}}}
        for seed in (0, 1):
            source = f"{model}/seed{seed}"
            x = rng.normal(size=(n, 8)) + shift
            rows = [{"id": f"{model}{i}", "prompt_id": f"p{i}"} for i in range(n)]
            pr = {"metric": "precision_recall", "reference": "references"}
            pr |= {"length_control": "none", "params": {"k": 3}}
            rec = score_loaded(
                "precision_recall", x, rows, ref_x, ref_rows, {"k": 3}, interval=interval
            )
            write("pr", source, rec, pr, featurizer | {"candidate_generation": generation})
            t = texts(int(shift * 4))
            trows = [
                {"id": f"{model}{i}", "prompt_id": f"p{i}", "text": s} for i, s in enumerate(t)
            ]
            nd = {"metric": "ngram_diversity", "reference": None, "length_control": "none"}
            rec = score_loaded("ngram_diversity", t, trows, params={})
            write(
                "ngd",
                source,
                rec,
                nd | {"params": rec["params"]},
                {"candidate_generation": generation},
            )
    t = texts(6)
    rec = score_loaded("ngram_diversity", t, [{"id": str(i), "text": s} for i, s in enumerate(t)])
    nd = {"metric": "ngram_diversity", "reference": None, "length_control": "none"}
    write("ngd", "references", rec, nd | {"params": rec["params"]}, {})
    return out


@pytest.fixture
def results(tmp_path):
    root = tmp_path / "results"
    records = _records(root, np.random.default_rng(0))
    p = RESULTS.under(str(root))
    write_aggregates(records, p.scores, p.scores_summary, p.headline_table, p.headline_markdown)
    (root / "figures").mkdir()
    (root / "figures" / "mauve_bars.png").write_bytes(PNG)
    config = tmp_path / "config.yaml"
    config.write_text("datasets: {stories: {}}\n")
    return root, config


@pytest.fixture(autouse=True)
def _reader(monkeypatch):
    """The export sets ``MLFLOW_ALLOW_FILE_STORE`` itself (unset here); reading the store
    back sets it for the test only."""
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    return monkeypatch


def _runs(store, experiment, reader):
    from mlflow.tracking import MlflowClient

    reader.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    client = MlflowClient(tracking_uri=store)
    eid = client.get_experiment_by_name(experiment).experiment_id
    return client, {r.data.tags[RUN_TAG]: r for r in client.search_runs([eid])}


def _expected(root) -> dict:
    """Per run key, the headline values of scores.csv and their interval bounds."""
    df = headline_rows(read_scores(RESULTS.under(str(root)).scores))
    out: dict = {}
    for r in df.itertuples(index=False):
        seed = "none" if pd.isna(r.seed) else int(r.seed)
        m = out.setdefault(f"{r.dataset}/{r.model}/seed{seed}", {})
        m[f"{r.entry}/{r.name}"] = r.value
        for bound in ("lower", "upper"):
            if not pd.isna(getattr(r, bound)):
                m[f"{r.entry}/{r.name}.{bound}"] = getattr(r, bound)
    return out


def test_export_logs_one_run_per_dataset_model_seed_with_the_csv_values(results, tmp_path, _reader):
    root, config = results
    store = (tmp_path / "mlruns").as_uri()
    done = export_mlflow(root, store, experiment="demo", config=config)
    assert (done["runs"], done["created"], done["updated"], done["unchanged"]) == (5, 5, 0, 0)
    client, runs = _runs(store, "demo", _reader)
    want = _expected(root)
    assert sorted(runs) == sorted(want) == [
        "stories/a/seed0", "stories/a/seed1", "stories/b/seed0", "stories/b/seed1",
        "stories/references/seednone",
    ]  # fmt: skip
    for key, run in runs.items():
        assert run.data.metrics == pytest.approx(want[key], rel=1e-12), key
    a0 = runs["stories/a/seed0"].data
    # precision/recall's headline and its interval; n-gram diversity's headline only
    assert {"pr/precision.lower", "pr/recall.upper", "ngd/ngram_diversity"} <= set(a0.metrics)
    assert "ngd/mean_words" not in a0.metrics  # not a headline value
    assert done["metrics"] == sum(len(m) for m in want.values())
    p = a0.params
    assert (p["dataset"], p["model"], p["seed"]) == ("stories", "a", "0")
    assert (p["pr/featurizer"], p["pr/params/k"], p["pr/metric"]) == (
        "tiny",
        "3",
        "precision_recall",
    )
    assert p["generation/sampling/temperature"] == "0.3"
    assert runs["stories/references/seednone"].data.params["seed"] == "none"
    run_id = runs["stories/a/seed0"].info.run_id
    files = {
        f.path for d in ("config", "figures", "scores") for f in client.list_artifacts(run_id, d)
    }
    assert files == {
        "config/config.yaml",
        "figures/mauve_bars.png",
        "scores/ngd.json",
        "scores/pr.json",
    }
    got = json.loads((tmp_path / "mlruns").joinpath(
        runs["stories/a/seed0"].info.experiment_id, run_id, "artifacts", "scores", "pr.json"
    ).read_text())  # fmt: skip
    assert got == read_json(
        RESULTS.under(str(root)).score.format(dataset="stories", source="a/seed0", entry="pr")
    )


def test_a_second_export_updates_the_same_runs(results, tmp_path, _reader):
    root, config = results
    store = (tmp_path / "mlruns").as_uri()
    export_mlflow(root, store, experiment="demo", config=config)
    _, first = _runs(store, "demo", _reader)
    again = export_mlflow(root, store, experiment="demo", config=config)
    assert (again["unchanged"], again["created"], again["metrics"]) == (5, 0, 0)
    _, second = _runs(store, "demo", _reader)
    assert {k: r.info.run_id for k, r in second.items()} == {
        k: r.info.run_id for k, r in first.items()
    }
    # a changed value in scores.csv: that run updated, the value read back is the new one
    scores = RESULTS.under(str(root)).scores
    df = pd.read_csv(scores)
    at = (
        (df["model"] == "b")
        & (df["seed"] == 1)
        & (df["entry"] == "pr")
        & (df["name"] == "precision")
    )
    assert at.sum() == 1
    df.loc[at, "value"] = 0.123456
    write_csv(scores, df)
    changed = export_mlflow(root, store, experiment="demo", config=config)
    assert (changed["updated"], changed["unchanged"], changed["created"]) == (1, 4, 0)
    client, third = _runs(store, "demo", _reader)
    assert len(third) == 5 and third.keys() == first.keys()
    b1 = third["stories/b/seed1"]
    assert b1.info.run_id == first["stories/b/seed1"].info.run_id
    assert b1.data.metrics["pr/precision"] == 0.123456
    assert [m.value for m in client.get_metric_history(b1.info.run_id, "pr/precision")] == [
        first["stories/b/seed1"].data.metrics["pr/precision"],
        0.123456,
    ]
    assert b1.data.tags[CONTENT_TAG] != first["stories/b/seed1"].data.tags[CONTENT_TAG]
    assert third["stories/a/seed0"].data.metrics == first["stories/a/seed0"].data.metrics


def test_a_changed_param_replaces_the_run_and_keeps_one(results, tmp_path, _reader):
    """MLflow never changes a logged param: the run is deleted and made anew, one per key."""
    root, config = results
    store = (tmp_path / "mlruns").as_uri()
    export_mlflow(root, store, experiment="demo")
    _, first = _runs(store, "demo", _reader)
    path = RESULTS.under(str(root)).score.format(dataset="stories", source="a/seed1", entry="pr")
    rec = read_json(path)
    rec["params"]["k"] = 5
    write_json(path, rec)
    done = export_mlflow(root, store, experiment="demo")
    assert (done["replaced"], done["unchanged"]) == (1, 4)
    _, runs = _runs(store, "demo", _reader)
    assert len(runs) == 5
    assert runs["stories/a/seed1"].data.params["pr/params/k"] == "5"
    assert runs["stories/a/seed1"].info.run_id != first["stories/a/seed1"].info.run_id


def test_the_cli_exports_and_names_a_missing_scores_csv(results, tmp_path, capsys):
    """``genmetrics export mlflow``: the summary as JSON; bad input, one line and status 2."""
    root, config = results
    store = (tmp_path / "mlruns").as_uri()
    assert main(["export", "mlflow", str(root), "--tracking-uri", store]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["experiment"], out["runs"], out["created"]) == ("genmetrics/results", 5, 5)
    for where, uri, message in (
        (tmp_path / "none", store, "none/scores.csv: no scores.csv in "),
        (root, "nosuch://host", "--tracking-uri nosuch://host: "),
    ):
        assert main(["export", "mlflow", str(where), "--tracking-uri", uri]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and message in err, err
