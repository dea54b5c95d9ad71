"""The run plan (genmetrics.plan): defaults from the schema, checks naming the key path, and
per-model isolation of every job's params: the properties that make partial reruns cheap."""

from __future__ import annotations

import copy
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO, placeholder_checkpoint

from genmetrics import GenmetricsError
from genmetrics.paths import RESULTS
from genmetrics.plan import canonical, load_plan, split_part

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    monkeypatch.setenv("GENMETRICS_REPO", str(REPO))
    monkeypatch.setenv("GENMETRICS_TINY_MODEL", str(placeholder_checkpoint(tmp_path / "tiny")))


def config(name: str = "config.yaml") -> dict:
    return yaml.safe_load((REPO / name).read_text())


def plan_of(cfg: dict):
    return load_plan(cfg, SCHEMA)


def wildcards(pattern: str, path: str, plan) -> dict[str, str]:
    """The wildcards of ``path`` under a result ``pattern`` (the plan's constraints)."""
    cons = plan.wildcard_constraints()
    regex, pos = "", 0
    for m in re.finditer(r"\{(\w+)\}", pattern):
        regex += re.escape(pattern[pos : m.start()]) + f"(?P<{m[1]}>{cons.get(m[1], '.+')})"
        pos = m.end()
    match = re.fullmatch(regex + re.escape(pattern[pos:]), path)
    assert match, (pattern, path)
    return match.groupdict()


def jobs(plan) -> dict[tuple, object]:
    """Every per-job (params, inputs) the plan gives, keyed by (rule, wildcards)."""
    out: dict[tuple, object] = {}
    for ds in plan.datasets:
        out["fetch_dataset", ds] = (plan.dataset_spec(ds), plan.dataset_files(ds))
        out["clean_dataset", ds] = plan.clean_options(ds)
        out["make_prompts", ds] = (plan.prompt_options(ds), plan.prompt_files(ds))
    for ck in plan.checkpoints:
        key = plan.model_key(ck)  # fetch_model's wildcard: the checkpoint's content, not its name
        out["fetch_model", key] = (plan.fetch_spec(key), plan.keyed_checkpoint(key))
        out["checkpoint", ck] = (plan.checkpoint_spec(ck), plan.manifest(ck))
    for name, m in plan.models.items():
        for ds in m.datasets:
            for seed in m.seeds:
                if m.generates:
                    out["generate", ds, name, seed] = (
                        plan.generation_settings(ds, name),
                        plan.generation_model(name),
                        plan.shard_files(ds, name, str(seed)),
                    )
                else:
                    out["import_texts", ds, name, seed] = (
                        plan.imported_texts(ds, name),
                        plan.imported_files(ds, name),
                    )
    for f in plan.featurizers:
        out["embed", f] = (plan.embed_settings(f), plan.featurizer_model(f))
    for e in plan.evaluators:
        out["surprisal", e] = (plan.surprisal_settings(e), plan.evaluator_model(e))
    for path in plan.targets.scores:
        w = wildcards(RESULTS.score, path, plan)
        inputs = plan.score_inputs(**w)
        if plan.entries[w["entry"]].length_control != "none":
            inputs.pop("group")  # by design: the shortest text among every source
        out[("score", *w.values())] = (plan.score_settings(w["dataset"], w["entry"]), inputs)
    for path in plan.targets.spreads:
        w = wildcards(RESULTS.spread, path, plan)
        out[("spread", *w.values())] = (plan.spread_settings(w["entry"]), plan.spread_inputs(**w))
    for path in plan.targets.sweeps:
        w = wildcards(RESULTS.sweep, path, plan)
        out[("sweep", *w.values())] = (plan.sweep_settings(w["entry"]), plan.sweep_inputs(**w))
    return out


def all_targets(plan) -> dict[str, set[str]]:
    t = plan.targets
    return {
        name: set(getattr(t, name))
        for name in (
            "scores",
            "generation_stats",
            "spreads",
            "sweeps",
            "pr_curves_scores",
            "spectra_scores",
        )
    }


# ------------------------------------------------------------------ defaults and names


def test_schema_defaults_fill_the_plan():
    plan = plan_of(config())
    assert plan.datasets["bbc"].prompts == {"words": 10, "mode": "prefix", "wrap": "none"}
    assert plan.prompt_options("bbc") == {"mode": "prefix", "words": 10}  # params as before
    gen = plan.models["smollm2-pure"].generation["bbc"]
    assert gen.dtype == "auto" and gen.template == "chat"  # the checkpoint's template
    assert gen.token_margin == 1.25 and gen.instruction is None
    assert plan.models["gemma3-nucleus"].generation["bbc"].template == "base"
    assert plan.models["smollm2-pure"].seeds == (0, 1)  # its own
    assert plan.models["smollm2-nucleus"].seeds == (0,)  # generation.seeds
    e = plan.entries["self_bleu"]
    assert e.length_control == "none" and e.score_references and e.reference is None
    # every parameter as the metric runs with it, the config's values included
    assert plan.entries["precision_recall"].params["k"] == 4
    assert plan.entries["precision_recall"].params["pca"] == 0.9
    assert plan.entries["self_bleu"].params["tokenizer"] == "gpt2"
    assert plan.entries["precision_recall"].reference == "references"
    assert plan.report == {
        "correlation": "spearman",
        "cluster": True,
        "bootstrap": 1000,
        "seed": 0,
        "heatmap_values": None,
    }


def test_the_config_argument_is_not_changed():
    cfg = config()
    before = copy.deepcopy(cfg)
    plan_of(cfg)
    assert cfg == before


def test_input_paths_follow_the_kinds():
    plan = plan_of(config())
    ins = plan.score_inputs("bbc", "smollm2-pure/seed0", "coherence")
    assert ins == {
        "candidate": "results/features/embed/minilm/bbc/smollm2-pure/seed0.continuation.npz",
        "reference": "results/features/embed/minilm/bbc/prompts.npz",
    }
    assert plan.score_inputs("bbc", "references", "perplexity") == {
        "candidate": "results/features/surprisal/smollm2/bbc/references.npz"
    }
    rouge = plan.score_inputs("bbc", "gemma3-nucleus/seed0", "rouge")
    assert rouge["candidate"] == "results/generations/bbc/gemma3-nucleus/seed0.jsonl"
    assert rouge["reference"] == "results/data/bbc/references.jsonl"
    # offline assets the metric declares are fetched before the job (fetch_asset)
    assets = [plan.asset_manifest(a) for a in plan.entries["rouge"].assets]
    assert rouge.get("assets", []) == assets
    assert split_part("m.v2/seed0.continuation") == ("m.v2/seed0", "continuation")
    assert (
        plan.source_texts("bbc", "m/seed3.continuation") == "results/generations/bbc/m/seed3.jsonl"
    )
    assert plan.source_texts("bbc", "prompts") == "results/data/bbc/prompts.jsonl"
    # a reference-free metric scores the references too; one with a reference does not
    assert "results/scores/bbc/references/self_bleu.json" in plan.targets.scores
    assert "results/scores/bbc/references/coherence.json" not in plan.targets.scores


def test_reordering_the_config_changes_no_job():
    cfg = config()
    rev = copy.deepcopy(cfg)
    for section in ("models", "metrics", "checkpoints"):
        rev[section] = dict(reversed(list(rev[section].items())))
    for m in rev["models"].values():
        m["sampling"] = dict(reversed(list(m["sampling"].items())))
    assert jobs(plan_of(rev)) == jobs(plan_of(cfg))


# ------------------------------------------------------------------ partial reruns


@pytest.mark.parametrize("name", ["config.yaml", ".test/config.yaml"])
def test_adding_a_model_adds_only_its_targets(name):
    cfg = config(name)
    old = plan_of(cfg)
    ck = next(iter(cfg["checkpoints"]))
    cfg["models"]["new-greedy"] = {"checkpoint": ck, "sampling": {"do_sample": False}}
    new = plan_of(cfg)
    old_t, new_t = all_targets(old), all_targets(new)
    for kind in old_t:
        assert old_t[kind] <= new_t[kind], kind  # nothing removed or renamed
        added = new_t[kind] - old_t[kind]
        assert all("new-greedy" in t for t in added), (kind, added)
    assert (
        new_t["scores"] - old_t["scores"] and new_t["generation_stats"] - old_t["generation_stats"]
    )
    old_jobs, new_jobs = jobs(old), jobs(new)
    for key, value in old_jobs.items():
        assert new_jobs[key] == value, key  # no existing job's params or inputs change
    assert all("new-greedy" in str(k) for k in set(new_jobs) - set(old_jobs))


def test_changing_one_entrys_params_changes_only_that_entry():
    cfg = config()
    old = plan_of(cfg)
    cfg["metrics"]["precision_recall"]["params"]["k"] = 5
    new = plan_of(cfg)
    assert all_targets(old) == all_targets(new)
    old_jobs, new_jobs = jobs(old), jobs(new)
    assert old_jobs.keys() == new_jobs.keys()
    changed = {k for k in old_jobs if old_jobs[k] != new_jobs[k]}
    # its score jobs and, with a spread, its spread jobs (the same entry, resampled)
    assert changed and all(
        k[0] in ("score", "spread") and k[-1] == "precision_recall" for k in changed
    )
    assert new.entries["precision_recall"].params["k"] == 5
    for name, m in old.models.items():
        assert new.models[name].generation == m.generation


# ------------------------------------------------------------------ errors name the key


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda c: c["metrics"].update(
                pr_k50={
                    "metric": "precision_recall",
                    "featurizer": "smollm2",
                    "params": {"k": "four"},
                }
            ),
            "metrics.pr_k50.params.k: must be an integer >= 1, got 'four'",
        ),
        (
            lambda c: c["metrics"]["mauve"].update(params={"scalling": 5}),
            "metrics.mauve.params: unknown parameter(s) scalling",
        ),
        (lambda c: c["metrics"].update(nope={}), "metrics.nope.metric: unknown metric 'nope'"),
        (
            lambda c: c["metrics"]["prd"].pop("featurizer"),
            "metrics.prd.featurizer: required for this metric (embeddings)",
        ),
        (
            lambda c: c["metrics"]["self_bleu"].update(featurizer="smollm2"),
            "metrics.self_bleu.featurizer: not used by self_bleu, which reads texts",
        ),
        (
            lambda c: c["metrics"]["mauve"].update(reference={"model": "smollm2-pure", "seed": 3}),
            "metrics.mauve.reference.seed: 3 is not a seed of model 'smollm2-pure'",
        ),
        (
            lambda c: c["metrics"]["perplexity"].update(length_control="shortest"),
            "metrics.perplexity.length_control: only for metrics on texts, not surprisal",
        ),
        (
            lambda c: c["models"]["smollm2-pure"].update(checkpoint="nope"),
            "models.smollm2-pure.checkpoint: 'nope' is not in checkpoints",
        ),
        (
            lambda c: c.update(analysis={"sweep": {"metric": "mauve"}}),
            "analysis.sweep.metric: 'mauve' runs mauve, which cannot be swept (sweepable metrics: precision_recall)",
        ),
        (lambda c: c["datasets"]["bbc"].update(clen={}), "datasets.bbc: unknown key(s) 'clen'"),
        (
            lambda c: c["checkpoints"]["gemma3-270m"].update(dtype="float16"),
            "checkpoints.gemma3-270m.dtype: 'float16' is not one of ['auto', 'float32', 'bfloat16']",
        ),
        (
            lambda c: c["datasets"]["bbc"]["source"].update(
                kind="local", path="$NOT_SET_ANYWHERE/x"
            ),
            "datasets.bbc.source.path: environment variable NOT_SET_ANYWHERE is not set",
        ),
    ],
)
def test_errors_name_the_key_path(edit, message):
    cfg = config()
    edit(cfg)
    with pytest.raises(GenmetricsError) as e:
        plan_of(cfg)
    assert str(e.value).startswith(message), str(e.value)


def _named_sections(schema: dict) -> list[str]:
    """Top-level sections that map user-chosen names to entries (every such name is a path)."""
    return [
        key
        for key, sub in schema["properties"].items()
        if sub.get("type") == "object" and isinstance(sub.get("additionalProperties"), dict)
    ]


@pytest.mark.parametrize("bad", ["../escape", "a/b", ".hidden", "-x", "x" * 101, "sp ace", ""])
def test_every_name_that_becomes_a_path_follows_one_rule(bad):
    """One rule for every name-bearing section, found by walking the schema, so a section
    added later is covered too: a bad name fails naming the section, before any job runs."""
    schema = yaml.safe_load(SCHEMA.read_text())
    sections = _named_sections(schema)
    assert set(sections) >= {
        "datasets",
        "checkpoints",
        "models",
        "featurizers",
        "evaluators",
        "metrics",
    }
    for section in sections:
        assert schema["properties"][section]["propertyNames"]["$ref"] == "#/definitions/name"
        cfg = config()
        entries = cfg.setdefault(section, {})
        entry = next(iter(entries.values())) if entries else {}
        entries[bad] = copy.deepcopy(entry)
        with pytest.raises(GenmetricsError) as e:
            plan_of(cfg)
        assert str(e.value).startswith(f"{section}:"), (section, str(e.value))
        assert repr(bad) in str(e.value) or bad == "x" * 101, str(e.value)


@pytest.mark.parametrize(
    "edit, key",
    [
        (lambda c: c["generation"].update(seeds=[-1]), "generation.seeds.0"),
        (lambda c: c["generation"].update(seeds=[10**15]), "generation.seeds.0"),
        (lambda c: c["datasets"]["bbc"]["clean"].update(seed=2**32), "datasets.bbc.clean.seed"),
        (
            lambda c: c["models"]["smollm2-pure"].update(seeds=[0, -3]),
            "models.smollm2-pure.seeds.1",
        ),
    ],
)
def test_seeds_outside_the_range_of_numpy_and_torch_fail_early(edit, key):
    cfg = config()
    cfg.setdefault("generation", {})
    edit(cfg)
    with pytest.raises(GenmetricsError, match=re.escape(key)):
        plan_of(cfg)


def test_size_requirements_follow_the_metric_and_the_spread():
    cfg = config()
    cfg["metrics"]["mauve"]["params"] = {"num_buckets": 25}
    cfg["metrics"]["pr_spread"] = {
        "metric": "precision_recall",
        "featurizer": "smollm2",
        "params": {"k": 7},
        "spread": {"fraction": 0.5},
    }
    needs = {r["entry"]: r for r in plan_of(cfg).size_requirements("bbc")}
    assert needs["mauve"]["needs"] == 13 and needs["mauve"]["key"].endswith("num_buckets")
    assert needs["pr_spread"]["needs"] == 16  # k + 1 = 8 per set, half kept by the spread
    assert needs["pr_spread"]["key"] == "metrics.pr_spread.params.k"
    assert "self_bleu" not in needs  # no minimum beyond one text


def test_a_redraw_spread_reads_each_draw_of_the_references():
    """references: redraw: the spread job reads the features of the references drawn again
    with sample seeds seed + i (the draw_references rule: the dataset's cleaning, another
    seed) and their cleaning stats; no fraction, so the size check needs the whole set."""
    cfg = config()
    cfg["datasets"]["bbc"]["clean"]["sample"] = 40
    cfg["metrics"]["precision_recall"]["spread"] = {
        "references": "redraw",
        "reference_resamples": 2,
        "seed": 7,
    }
    plan = plan_of(cfg)
    inputs = plan.spread_inputs("bbc", "smollm2-nucleus", "precision_recall")
    res = plan.results
    assert inputs["draws"] == [
        res.embeddings.format(featurizer="smollm2", dataset="bbc", source=f"references/draw{s}")
        for s in (7, 8)
    ]
    assert inputs["draw_stats"] == [
        res.reference_draw_stats.format(dataset="bbc", draw=s) for s in (7, 8)
    ]
    assert "reference" not in inputs
    assert res.texts("bbc", "references/draw8") == res.reference_draw.format(dataset="bbc", draw=8)
    assert re.fullmatch(plan.wildcard_constraints()["source"], "references/draw8")
    draw = plan.reference_draw_options("bbc", "8")
    assert draw == {**plan.clean_options("bbc"), "seed": 8}
    needs = {r["entry"]: r for r in plan.size_requirements("bbc")}
    assert needs["precision_recall"]["needs"] == 5  # k + 1: a draw has all clean.sample texts
    assert plan.spread_settings("precision_recall")["spread"]["references"] == "redraw"


@pytest.mark.parametrize(
    "spread, edit, key",
    [
        (
            {"references": "redraw"},
            lambda c: c["datasets"]["bbc"]["clean"].pop("sample", None),
            "datasets.bbc.clean.sample is not set",
        ),
        (
            {"references": "redraw", "fraction": 0.8},
            lambda c: None,
            "metrics.precision_recall.spread.fraction",
        ),
    ],
)
def test_a_redraw_spread_refuses_what_it_cannot_draw(spread, edit, key):
    cfg = config()
    cfg["datasets"]["bbc"]["clean"]["sample"] = 40
    cfg["metrics"]["precision_recall"]["spread"] = spread
    edit(cfg)
    with pytest.raises(GenmetricsError, match=re.escape(key)):
        plan_of(cfg)


def test_environment_changes_to_config_paths_are_announced(monkeypatch, tmp_path):
    monkeypatch.setenv("SCRATCH", str(tmp_path))
    monkeypatch.setenv("GENMETRICS_CACHE", str(tmp_path / "other"))
    cfg = config()
    cfg["feature_cache"] = "$SCRATCH/features"
    notes = plan_of(cfg).notes
    assert f"feature_cache: '$SCRATCH/features' -> '{tmp_path}/features'" in notes[0]
    assert notes[1].startswith(f"GENMETRICS_CACHE={tmp_path / 'other'} in the environment is not")
    monkeypatch.setenv("GENMETRICS_CACHE", cfg["cache"])
    assert len(plan_of(cfg).notes) == 1


def test_a_bad_param_value_fails_the_dry_run_before_the_dag(tmp_path):
    cfg = config()
    cfg["metrics"]["pr_k50"] = {
        "metric": "precision_recall",
        "featurizer": "smollm2",
        "params": {"k": "four"},
    }
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(cfg))
    cmd = [str(Path(sys.executable).parent / "snakemake"), "-s", str(REPO / "Snakefile")]
    proc = subprocess.run(
        [*cmd, "-n", "--configfile", str(path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, "GENMETRICS_REPO": str(REPO)},
    )
    assert proc.returncode != 0
    # Snakemake logs the error to stdout when it is not a terminal
    assert "metrics.pr_k50.params.k: must be an integer >= 1, got 'four'" in (
        proc.stdout + proc.stderr
    )
    # the config is checked when the Snakefile is parsed, before any job is planned
    assert "Building DAG of jobs" not in proc.stdout + proc.stderr


def test_canonical_sorts_keys_recursively():
    assert list(canonical({"b": 1, "a": {"d": 2, "c": (3,)}})) == ["a", "b"]
    assert canonical({"a": {"d": 2, "c": (3,)}}) == {"a": {"c": [3], "d": 2}}


def test_an_entry_that_runs_an_encoder_gets_its_own_gpu_rule(tmp_path):
    """BERTScore homogenization runs an encoder: its job is `score_with_model` (GPU, the MiniLM
    asset as an input); every other score job stays a `score` job that loads no model."""
    cfg = config()
    cfg["metrics"]["homog_bert"] = {"metric": "homogenization", "params": {"measure": "bertscore"}}
    plan = plan_of(cfg)
    assert plan.entries_loading_models(True) == ["homog_bert"]
    assert "homogenization" in plan.entries_loading_models(False)
    assert plan.entries["homog_bert"].assets == ("minilm",)
    cfg["metrics"]["homog_bert"]["params"]["model"] = "bert-base-uncased"  # a hub id
    with pytest.raises(GenmetricsError, match=r"metrics\.homog_bert\.params\.model: .* never"):
        plan_of(cfg)
    del cfg["metrics"]["homog_bert"]["params"]["model"]
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(cfg))
    out = subprocess.run(
        [
            str(Path(sys.executable).parent / "snakemake"),
            "-s",
            str(REPO / "Snakefile"),
            "-n",
            "--cores",
            "1",
            "--configfile",
            str(path),
            "--directory",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    text = out.stdout + out.stderr
    jobs = re.split(r"^\[\w{3} \w{3} .*\]$", text, flags=re.M)
    bert = [b for b in jobs if "homog_bert" in b and re.search(r"rule score_with_model:", b)]
    assert bert and all("gpu=1" in b and "minilm" in b for b in bert)
    assert not [
        b for b in jobs if re.search(r"^rule score:", b.strip(), re.M) and "homog_bert" in b
    ]


def test_imported_texts_name_one_file_per_dataset(tmp_path):
    """``{dataset}`` in a texts path: one model, a file per dataset (e.g. a domain each)."""
    cfg = config()
    cfg["datasets"]["bbc2"] = copy.deepcopy(cfg["datasets"]["bbc"])
    path = str(tmp_path / "{dataset}.sys.jsonl")
    for ds in ("bbc", "bbc2"):
        (tmp_path / f"{ds}.sys.jsonl").write_text("")
    cfg["models"]["sys"] = {"texts": {"source": {"kind": "local", "path": path}}}
    plan = plan_of(cfg)
    assert plan.imported_files("bbc", "sys") == {"texts": [str(tmp_path / "bbc.sys.jsonl")]}
    assert plan.imported_files("bbc2", "sys") == {"texts": [str(tmp_path / "bbc2.sys.jsonl")]}
    cfg["models"]["sys"]["texts"]["match_references"] = True  # the dataset's references too
    files = plan_of(cfg).imported_files("bbc2", "sys")
    assert files["references"] == "results/data/bbc2/references.jsonl"
    # exclude_references reads them too (to keep the texts apart); not with match_references
    cfg["models"]["sys"]["texts"]["exclude_references"] = True
    with pytest.raises(GenmetricsError, match=r"models\.sys\.texts: match_references and excl"):
        plan_of(cfg)
    cfg["models"]["sys"]["texts"]["match_references"] = False
    files = plan_of(cfg).imported_files("bbc2", "sys")
    assert files["references"] == "results/data/bbc2/references.jsonl"
    spec = plan.imported_texts("bbc2", "sys")
    assert spec["source"]["path"] == str(tmp_path / "bbc2.sys.jsonl")
    # a missing file stops the DAG naming the key that named it (not only the path)
    (tmp_path / "bbc2.sys.jsonl").unlink()
    with pytest.raises(GenmetricsError, match=r"models\.sys\.texts\.source\.path \(dataset bbc2\)"):
        plan.imported_files("bbc2", "sys")


def test_a_missing_local_dataset_file_names_its_config_key(tmp_path):
    cfg = config()
    cfg["datasets"]["bbc"]["source"] = {"kind": "local", "path": str(tmp_path / "no.jsonl")}
    cfg["datasets"]["bbc"]["format"] = "jsonl"
    cfg["datasets"]["bbc"]["prompts"] = {"file": str(tmp_path / "prompts.jsonl")}
    plan = plan_of(cfg)
    with pytest.raises(GenmetricsError, match=r"datasets\.bbc\.source\.path: .*no\.jsonl does"):
        plan.dataset_files("bbc")
    with pytest.raises(GenmetricsError, match=r"datasets\.bbc\.prompts\.file: .*prompts\.jsonl"):
        plan.prompt_files("bbc")
    (tmp_path / "no.jsonl").write_text("")
    assert plan.dataset_files("bbc") == [str(tmp_path / "no.jsonl")]


def test_scaling_settings_name_each_cell_and_refuse_bad_keys():
    cfg = config()
    cfg["metrics"]["face"] = {"evaluator": "smollm2", "params": {"value": "real"}}
    cfg["analysis"] = {
        "scaling": {
            "families": {"f": {"smollm2-pure": 1, "gemma3-nucleus": 2}},
            "metrics": ["face"],
        }
    }
    s = plan_of(cfg).scaling_settings()
    assert s["bootstrap"] == 200 and s["seed"] == 0  # schema defaults
    assert s["entries"]["face"]["variant"] == "face (value=real)"
    assert s["entries"]["face"]["evaluator"] == "smollm2"
    assert s["directions"] == {} and s["notes"] == {}  # schema defaults
    given = copy.deepcopy(cfg)
    given["analysis"]["scaling"]["directions"] = {"zipf": "lower"}
    given["analysis"]["scaling"]["notes"] = {"BARTScore": "no weights"}
    got = plan_of(given).scaling_settings()
    assert (got["directions"], got["notes"]) == ({"zipf": "lower"}, {"BARTScore": "no weights"})
    given["analysis"]["scaling"]["directions"] = {"zipf": "smaller"}
    with pytest.raises(GenmetricsError, match="smaller"):
        plan_of(given)
    cells = {(c["dataset"], c["model"]): c for c in s["cells"]}
    assert set(cells) == {("bbc", "smollm2-pure"), ("bbc", "gemma3-nucleus")}
    c = cells["bbc", "smollm2-pure"]
    assert c["score"] == "results/scores/bbc/smollm2-pure/seed0/face.json"
    assert c["reference"] == "results/features/surprisal/smollm2/bbc/references.npz"
    bad = copy.deepcopy(cfg)
    bad["analysis"]["scaling"]["families"]["f"]["nobody"] = 3
    with pytest.raises(GenmetricsError, match=r"analysis.scaling.families.f: 'nobody' is not"):
        plan_of(bad)
    bad = copy.deepcopy(cfg)
    bad["analysis"]["scaling"]["families"]["f"]["gemma3-nucleus"] = 1
    with pytest.raises(GenmetricsError, match="sizes must differ"):
        plan_of(bad)
    bad = copy.deepcopy(cfg)
    bad["analysis"]["scaling"]["metrics"] = ["nope"]
    with pytest.raises(
        GenmetricsError, match=r"analysis.scaling.metrics: 'nope' is not in metrics"
    ):
        plan_of(bad)


def test_scaling_table1_languages_and_the_spectra_entry():
    cfg = config()
    cfg["metrics"]["face_code"] = {"metric": "face", "evaluator": "smollm2"}
    cfg["metrics"]["face2_l2"] = {
        "metric": "face",
        "evaluator": "smollm2",
        "params": {"convention": "face2"},
    }
    cfg["metrics"]["face2_z"] = {
        "metric": "face",
        "evaluator": "smollm2",
        "params": {"convention": "face2", "zscore": True},
    }
    scaling = {
        "families": {"f": {"smollm2-pure": 1, "gemma3-nucleus": 2}},
        "metrics": ["face_code", "face2_l2", "face2_z", "perplexity"],
    }
    cfg["analysis"] = {"scaling": scaling}
    plan = plan_of(cfg)
    s = plan.scaling_settings()
    assert s["tasks"] == ["bbc"] and s["languages"] == {"bbc": "en"}  # the default language
    # the figure's entry: the first face2 entry with zscore, not the first face entry
    assert plan.scaling["spectra_entry"] == "face2_z"
    fig = plan.scaling_spectra_settings()
    assert fig["entry"] == "face2_z" and fig["params"]["zscore"] is True
    assert fig["evaluator"] == "smollm2" and fig["tasks"] == ["bbc"]
    assert {c["model"] for c in fig["cells"]} == {"smollm2-pure", "gemma3-nucleus"}
    assert plan.scaling_spectra_inputs() == sorted(
        {c[k] for c in fig["cells"] for k in ("candidate", "reference")}
    )
    assert "results/features/surprisal/smollm2/bbc/references.npz" in plan.scaling_spectra_inputs()
    assert RESULTS.scaling_spectra_figure in plan.targets.all
    assert RESULTS.scaling_table1 in plan.targets.all
    # without a zscore face2 entry: the first face2 one; without face2: the first face entry
    scaling["metrics"] = ["face_code", "face2_l2", "perplexity"]
    assert plan_of(cfg).scaling["spectra_entry"] == "face2_l2"
    scaling["metrics"] = ["perplexity", "face_code"]
    assert plan_of(cfg).scaling["spectra_entry"] == "face_code"
    scaling["metrics"] = ["perplexity"]  # no face entry: no figure
    plan = plan_of(cfg)
    assert plan.scaling["spectra_entry"] is None
    assert RESULTS.scaling_spectra_figure not in plan.targets.all
    scaling["spectra_entry"] = "face_code"  # named: need not be a scaling row
    scaling["languages"] = {"bbc": "de"}
    plan = plan_of(cfg)
    assert plan.scaling["spectra_entry"] == "face_code"
    assert plan.scaling_settings()["languages"] == {"bbc": "de"}
    for key, value, match in (
        ("spectra_entry", "nope", r"analysis.scaling.spectra_entry: 'nope' is not in metrics"),
        ("spectra_entry", "perplexity", r"spectra_entry: 'perplexity' runs perplexity"),
        ("languages", {"nope": "en"}, r"analysis.scaling.languages: 'nope' is not in datasets"),
        ("languages", {"bbc": "e n"}, "languages"),
    ):
        bad = copy.deepcopy(cfg)
        bad["analysis"]["scaling"][key] = value
        with pytest.raises(GenmetricsError, match=match):
            plan_of(bad)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "models:\n  a: {checkpoint: x}\nmodels:\n  b: {checkpoint: y}\n",
            ":3: duplicate key 'models' (first at line 1)",
        ),
        (
            "models:\n  a: {checkpoint: x}\n  a: {checkpoint: y}\n",
            ":3: duplicate key 'a' (first at line 2)",
        ),
        ("generation:\n  words: 010\n", ":2: 010 is read as 8 by YAML 1.1"),
        ("generation:\n  words: 0x10\n", ":2: 0x10 is read as 16 by YAML 1.1"),
        ("generation:\n  seeds: [1_000]\n", ":2: 1_000 is read as 1000 by YAML 1.1"),
    ],
)
def test_config_file_duplicate_keys_and_surprising_integers_name_the_line(tmp_path, text, message):
    """Snakemake's YAML reader keeps the last of two keys and reads 010 as 8 without a word;
    the workflow reads each config file strictly first (rules/common.smk)."""
    from genmetrics.config import check_config_file

    path = tmp_path / "cfg.yaml"
    path.write_text(text)
    with pytest.raises(GenmetricsError) as err:
        check_config_file(path)
    assert str(err.value).startswith(f"{path}{message}")


def test_config_file_strict_reading_keeps_what_yaml_means(tmp_path):
    """Quoted '010', decimals, floats, 0 and merge keys that override are all fine."""
    from genmetrics.config import check_config_file

    path = tmp_path / "cfg.yaml"
    path.write_text("a: &x {k: 1, j: 2}\nb:\n  <<: *x\n  k: 3\nc: ['010', 10, 0, -3, 0.5]\n")
    check_config_file(path)
    for config in [REPO / "config.yaml", *sorted((REPO / "configs").glob("*.yaml"))]:
        check_config_file(config)


def test_a_name_with_a_trailing_newline_is_refused():
    """``$`` matches before a final newline in Python; the name rule ends with ``\\Z``, so a
    model named ``"m\\n"`` cannot make a folder ``results/.../m\\n/``."""
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    cfg["models"]["smollm2-pure\n"] = cfg["models"].pop("smollm2-pure")
    with pytest.raises(GenmetricsError, match=r"models: .*smollm2-pure\\n"):
        load_plan(cfg, SCHEMA)


def test_generation_settings_carry_their_tokens_per_word_not_the_table_file():
    """Each model's generate jobs get the value of its tokenizer family's row: editing another
    family's row, or moving the checkout, reruns nothing; an unknown family names its key."""
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    plan = load_plan(cfg, SCHEMA)
    assert plan.models["smollm2-pure"].generation["bbc"].tokens_per_word == 1.309
    assert plan.models["gemma3-nucleus"].generation["bbc"].tokens_per_word == 1.273
    cfg["checkpoints"]["smollm2-135m"]["tokenizer_family"] = "nope"
    with pytest.raises(GenmetricsError, match=r"^checkpoints\.smollm2-135m\.tokenizer_family"):
        load_plan(cfg, SCHEMA)
    text = (REPO / "rules" / "generate.smk").read_text()
    assert "tokens_per_word" not in text  # no file input whose path could change


def test_a_missing_local_checkpoint_stops_the_dry_run_naming_its_key(monkeypatch, tmp_path):
    cfg = config(".test/config.yaml")
    monkeypatch.setenv("GENMETRICS_TINY_MODEL", str(tmp_path / "not-there"))
    with pytest.raises(GenmetricsError, match=r"^checkpoints\.tiny\.source\.path: .*not-there"):
        plan_of(cfg)
    # a name the file system cannot even look up (found by tests/test_fuzz_inputs.py)
    monkeypatch.setenv("GENMETRICS_TINY_MODEL", "a" * 300)
    with pytest.raises(GenmetricsError, match=r"^checkpoints\.tiny\.source\.path: a+ cannot be"):
        plan_of(cfg)


def test_a_local_checkpoint_s_content_is_in_its_fetch_params(monkeypatch, tmp_path):
    """New weights under the same path change fetch_model's params (and so every job that
    loads the checkpoint); a touch does not; the digest is remembered per file stat."""
    from genmetrics.models.checkpoints import DIGESTS_FILE

    folder = placeholder_checkpoint(tmp_path / "ckpt")
    monkeypatch.setenv("GENMETRICS_TINY_MODEL", str(folder))
    cfg = config(".test/config.yaml")
    cfg["model_cache"] = str(tmp_path / "models")
    first = plan_of(cfg).checkpoint_spec("tiny")
    assert len(first["content"]) == 64
    assert (tmp_path / "models" / DIGESTS_FILE).exists()
    weights = folder / "model.safetensors"
    os.utime(weights, ns=(weights.stat().st_atime_ns, weights.stat().st_mtime_ns + 10**9))
    assert plan_of(cfg).checkpoint_spec("tiny") == first
    weights.write_bytes(b"other weights")
    assert plan_of(cfg).checkpoint_spec("tiny")["content"] != first["content"]


def test_the_model_cache_is_keyed_by_content_not_by_name(monkeypatch, tmp_path):
    """Two projects sharing one model_cache, each naming a different folder `tiny`, read two
    manifests (every job that loads the checkpoint: generate, embed, surprisal, OmniInput);
    the same bytes elsewhere under the same name read their own too (the path is keyed)."""
    import shutil

    from genmetrics.models.checkpoints import folder_sha256

    a = placeholder_checkpoint(tmp_path / "a")
    b = shutil.copytree(a, tmp_path / "b")
    (b / "model.safetensors").write_bytes(b"other weights")
    plans = {}
    for name, folder in (("a", a), ("b", b)):
        monkeypatch.setenv("GENMETRICS_TINY_MODEL", str(folder))
        cfg = config(".test/config.yaml")
        cfg["model_cache"] = str(tmp_path / "models")
        plans[name] = plan_of(cfg)
    pa, pb = plans["a"], plans["b"]
    assert pa.manifest("tiny") != pb.manifest("tiny")
    for plan, folder in ((pa, a), (pb, b)):
        key = plan.model_key("tiny")
        manifest = f"{tmp_path}/models/{key}/model.json"
        assert plan.manifest("tiny") == manifest
        assert plan.generation_model("tiny-pure") == plan.featurizer_model("tiny") == manifest
        assert plan.evaluator_model("tiny") == plan.omniinput.run_model("tiny-L3") == manifest
        assert plan.keyed_checkpoint(key) == "tiny"
        spec = plan.fetch_spec(key)
        assert spec["content"] == folder_sha256(folder) and spec["source"]["kind"] == "local"
        assert wildcards(plan.manifest_pattern(), manifest, plan) == {"model_key": key}


def test_paths_inside_the_working_folder_are_kept_relative(monkeypatch, tmp_path):
    """An absolute path (as $GENMETRICS_REPO gives) inside the working folder is written
    relative to it, so moving the folder changes no job's params or inputs."""
    from genmetrics.config import expand_paths

    (tmp_path / "data").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PROJECT", str(tmp_path))
    cfg = {"a": {"path": "$PROJECT/data/x.jsonl"}, "b": {"path": "/elsewhere/y"}, "cache": "c"}
    expand_paths(cfg)
    assert cfg == {"a": {"path": "data/x.jsonl"}, "b": {"path": "/elsewhere/y"}, "cache": "c"}


def test_a_dataset_s_language_reaches_every_job_that_counts_its_words(tmp_path):
    """``datasets.<name>.language: zh`` goes to cleaning, prompts, generation (budget and
    tokens per word), imported texts and scores of that dataset only; a whitespace dataset's
    params have no ``language`` (nothing reruns); an unknown language names its key."""
    cfg = config()
    cfg["datasets"]["news_zh"] = copy.deepcopy(cfg["datasets"]["bbc"])
    cfg["datasets"]["news_zh"]["language"] = "zh"
    path = str(tmp_path / "{dataset}.sys.jsonl")
    for ds in ("bbc", "news_zh"):  # the texts files exist (a missing one stops the DAG)
        (tmp_path / f"{ds}.sys.jsonl").write_text("")
    cfg["models"]["sys"] = {
        "texts": {"source": {"kind": "local", "path": path}, "clean": {"min_words": 5}}
    }
    plan = plan_of(cfg)
    others = {
        k: v
        for k, v in jobs(plan).items()
        if "news_zh" not in k and not any(str(p).startswith("sys") for p in k)
    }
    assert others == jobs(plan_of(config()))
    assert plan.clean_options("news_zh")["language"] == "zh"
    assert plan.prompt_options("news_zh")["language"] == "zh"
    assert "language" not in plan.clean_options("bbc")
    gen = plan.generation_settings("news_zh", "smollm2-pure")
    assert gen["language"] == "zh" and gen["tokens_per_word"] == 5.0  # default@zh
    assert "language" not in plan.generation_settings("bbc", "smollm2-pure")
    assert plan.imported_texts("news_zh", "sys")["clean"] == {"min_words": 5, "language": "zh"}
    assert plan.imported_texts("bbc", "sys")["clean"] == {"min_words": 5}
    # what the import_texts job makes of it: the dataset's words, not whitespace words
    from genmetrics.data.datasets import import_texts

    texts = ["我们去公园散步吧！", "今天天气很好。"]  # 5 and 3 jieba words, 1 whitespace word
    (tmp_path / "news_zh.sys.jsonl").write_text(
        "".join(f'{{"id": "t{i}", "text": "{t}"}}\n' for i, t in enumerate(texts))
    )
    rows, _ = import_texts("sys", plan.imported_texts("news_zh", "sys"), seed=0)
    assert [r["text"] for r in rows] == [texts[0]]
    entry = next(iter(plan.entries))
    assert plan.score_settings("news_zh", entry)["language"] == "zh"
    assert "language" not in plan.score_settings("bbc", entry)
    for bad in ("klingon", "ja", 3):
        cfg["datasets"]["news_zh"]["language"] = bad
        with pytest.raises(GenmetricsError, match=r"^datasets\.news_zh\.language: "):
            plan_of(cfg)


def test_samples_per_prompt_reach_only_the_jobs_that_set_them():
    """generation.samples_per_prompt / models.<m>.samples_per_prompt reach the generate job's
    settings and the merge; a model left at 1 keeps the params it always had (no rerun)."""
    cfg = config()
    ds, first = next(iter(cfg["datasets"])), next(iter(cfg["models"]))
    assert "samples_per_prompt" not in plan_of(cfg).generation_settings(ds, first)
    cfg["models"][first]["samples_per_prompt"] = 4
    plan = plan_of(cfg)
    assert plan.generation_settings(ds, first)["samples_per_prompt"] == 4
    assert plan.samples_per_prompt(ds, first) == 4
    other = [m for m in cfg["models"] if m != first][0]
    assert plan.samples_per_prompt(ds, other) == 1
    cfg["generation"]["samples_per_prompt"] = 0
    with pytest.raises(GenmetricsError, match="samples_per_prompt"):
        plan_of(cfg)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_number_that_is_not_finite_is_refused_naming_its_key(value):
    """YAML's .nan/.inf pass the schema's minimum; the plan refuses them by key (found by
    tests/test_fuzz_inputs.py: params_b: .nan broke the GPU sizing)."""
    cfg = config()
    cfg["checkpoints"]["smollm2-135m"]["params_b"] = value
    with pytest.raises(GenmetricsError, match="checkpoints.smollm2-135m.params_b: .* not a finite"):
        plan_of(cfg)
    cfg = config()
    cfg["metrics"]["precision_recall"]["params"]["k"] = value
    with pytest.raises(GenmetricsError, match="metrics.precision_recall.params.k: .* not a finite"):
        plan_of(cfg)
