"""The Snakemake workflow: lint, formatting, a dry run of every config, config errors, and
real runs.

* ``.test/config.yaml`` runs for real in every ``make test`` (``test_offline_run_*``): 32
  texts written for it, a tiny random LM (``python -m genmetrics.testing.tiny_lm tiny-model``), no
  ../shared/data and no download; then ``snakemake --report`` on it.
* ``tests/e2e/config.yaml`` (``test_end_to_end``, in tests/test_workflow_real_data.py) uses
  real AG News text from ../shared/data and the real SmolLM2-135M, small N.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import (  # noqa: F401 (BIN, FAST and snakemake: other test files import them here)
    BIN,
    FAST,
    REPO,
    SHARED_DATA,
    TEST_CONFIG,
    placeholder_checkpoint,
    scripts_as_checked_out,
    snakemake,
    study_data_missing,
)

from genmetrics.data.mirror import mirror_needs

CACHE = REPO / ".cache" / "genmetrics"
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
#: the Snakemake report's stylesheet (`make report` passes it)
STYLESHEET = REPO / "workflow" / "report" / "stylesheet.css"
SCORE_COLUMNS = ["dataset", "model", "seed", "reference", "metric", "entry", "name", "value"]
SCORE_COLUMNS += ["scale", "n_candidate", "n_reference"]  # analysis.aggregate.EXTRA_COLUMNS
SCORE_COLUMNS += ["lower", "upper", "level", "resamples", "scheme", "interval"]  # intervals
SCORE_COLUMNS += ["truncated", "warnings"]  # what the record warns of
CONFIGS = sorted([*REPO.glob("configs/*.yaml"), TEST_CONFIG, REPO / "config.yaml"])


def job_blocks(out: str, rule: str) -> list[str]:
    """The dry-run text of each job of ``rule`` (jobs start with a ``[date]`` line)."""
    blocks = re.split(r"^\[\w{3} \w{3} .*\]$", out, flags=re.M)
    return [b for b in blocks if re.search(rf"^(local)?rule {rule}:", b.strip(), re.M)]


def job_counts(out: str) -> dict[str, int]:
    table = out.split("Job stats:")[1].split("total")[0]
    return {m[0]: int(m[1]) for m in re.findall(r"^(\w+)\s+(\d+)\s*$", table, re.M)}


def test_lint_is_clean():
    proc = snakemake("--lint", check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_snakefmt_is_clean():
    proc = subprocess.run(
        [str(BIN / "snakefmt"), "--check", "Snakefile", "rules/"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr


def test_dry_run_default_config_lists_the_full_dag(tmp_path):
    from genmetrics.plan import load_plan

    proc = snakemake("-n", "--cores", "2", "--configfile", str(REPO / "config.yaml"), cwd=tmp_path)
    counts = job_counts(proc.stdout)
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    plan = load_plan(cfg, SCHEMA)
    n_ds = len(cfg["datasets"])
    n_runs = sum(len(plan.model_sources(d)) for d in cfg["datasets"])  # (model, seed) per dataset
    assert counts["generate"] == n_runs * cfg["generation"]["shards"]
    assert counts["merge_generations"] == n_runs
    assert counts["fetch_model"] == len(cfg["checkpoints"])
    # LM features of every run + the references; sentence-encoder features of the prompts
    # and of every run's continuations (coherence), and of every source's whole texts
    # (the semantic diversity scores)
    assert counts["embed"] == 3 * (n_runs + n_ds)
    for rule in (
        "fetch_dataset",
        "clean_dataset",
        "make_prompts",
        "surprisal",
        "score",
        "aggregate",
        "correlation_heatmap",
        "pr_scatter",
        "html_report",
        "all",
    ):
        assert counts.get(rule, 0) >= 1, rule
    assert "reason: Missing output files" in proc.stdout


def make_targets(config: Path) -> list[str]:
    """The Snakemake targets the Makefile's first recipe running ``config`` asks for (none:
    the default target, ``all``): the words between ``$(CORES)`` and ``--configfile``."""
    pattern = re.compile(
        r"snakemake --cores \$\(CORES\) (.*)--configfile " + re.escape(f"configs/{config.name}")
    )
    for line in (REPO / "Makefile").read_text().splitlines():
        m = pattern.search(line)
        if m:
            return [w for w in m[1].split() if not w.startswith("-")]
    return []


#: the paper-shaped outputs each study must build (docs/studies.md): rule -> jobs at least
STUDY_RULES = {
    "webtext.yaml": {"pr_scatter": 1, "mauve_bars": 1, "spread_table": 1, "sweep_figure": 1},
    "pr_scale.yaml": {
        "sweep": 11,
        "sweep_figure": 1,
        "correlation_heatmap": 1,
        "pr_scale_comparison": 1,
        "import_texts": 11,
    },
    "biographies.yaml": {"few_shot_figure": 1, "correlation_heatmap": 1, "make_prompts": 3},
    "creative.yaml": {"pr_scatter": 1, "mauve_bars": 1, "generate": 4},
    "chat_vs_base.yaml": {"pr_scatter": 1, "mauve_bars": 1, "spread_table": 1},
    "summary_diversity.yaml": {
        "diversity_tables": 1,
        "diversity_side_by_side": 1,
        "repeated_patterns": 2,
        "correlation_heatmap": 1,
        "import_texts": 28,
    },
    "instruction_diversity.yaml": {
        "diversity_tables": 1,
        "repeated_patterns": 1,
        "import_texts": 10,
    },
    "instruction_sets.yaml": {"instruction_sets": 1, "import_texts": 5, "score": 20},
    # FACE-2's scaling study: its Tables 1 and 2 and the paper-vs-ours table (scaling), the
    # figures, BERTScore (Table 2's baseline) on each of the 15 (dataset, model) sources
    "face_scaling.yaml": {
        "scaling": 1,
        "scaling_figure": 1,
        "scaling_spectra": 1,
        "score_with_model": 15,
    },
    "omniinput_compare.yaml": {
        "omni_compare": 2,
        "omni_sample": 13,
        "omni_train_classifier": 1,
        "omni_variance": 2,
    },
}


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: str(p.relative_to(REPO)))
def test_dry_run_of_every_config(path, tmp_path):
    """Every config dry-runs with the targets its make target asks for; a study's DAG holds
    its paper-shaped outputs."""
    missing = study_data_missing(yaml.safe_load(path.read_text()))
    if missing:
        pytest.skip(missing)
    env = {"GENMETRICS_TINY_MODEL": str(placeholder_checkpoint(tmp_path / "tiny-model"))}
    targets = make_targets(path)
    args = ("-n", *targets, "--cores", "2", "--configfile", str(path))
    proc = snakemake(*args, cwd=tmp_path, env=env)
    counts = job_counts(proc.stdout)
    cfg = yaml.safe_load(path.read_text())
    # one plain tree per run: a study's own results_dir (results/<name>, named after the
    # study), results/ for the others; the caches of converted checkpoints and assets are
    # shared, where the config puts them
    target = re.search(
        r"^([\w-]+): install(?:-test)?\n\t.*configs/" + re.escape(path.name),
        (REPO / "Makefile").read_text(),
        re.M,
    )
    root = cfg.get("results_dir", "results").rstrip("/") + "/"
    assert (root != "results/") == bool(target), (path.name, root)  # a study has its own
    written = [
        p.strip()
        for line in re.findall(r"^\s*(?:output|log): (.*)$", proc.stdout, re.M)
        for p in line.split(",")
        if ".cache/genmetrics" not in p
    ]
    assert written and all(p.startswith(root) for p in written), [
        p for p in written if not p.startswith(root)
    ][:5]
    assert not [p for p in written if "/results/" in p]
    if "datasets" not in cfg and "omniinput" in cfg:  # an OmniInput study alone
        assert counts["omni_score"] >= 1 and counts["omni_summary"] == 1
        for rule, at_least in STUDY_RULES.get(path.name, {}).items():
            assert counts.get(rule, 0) >= at_least, (path.name, rule, counts)
        return
    if "datasets" not in cfg:  # an agreement analysis alone
        assert counts["agreement_score"] >= 1
        assert counts["agreement_summary"] == 1
        return
    assert counts["score"] >= 1 and counts["aggregate"] == 1
    assert counts.get("all", 0) == 1 or "all" not in (targets or ["all"])
    for rule, at_least in STUDY_RULES.get(path.name, {}).items():
        assert counts.get(rule, 0) >= at_least, (path.name, rule, counts)


#: each overlay of configs/overlays/ -> the study config it is given after, and the jobs it adds
OVERLAYS = {
    "face_scaling_qwen.yaml": (
        "face_scaling.yaml",
        {"fetch_model": 1, "surprisal": 19, "score": 64},
    ),
}


def test_every_overlay_is_known():
    assert sorted(p.name for p in (REPO / "configs" / "overlays").glob("*.yaml")) == sorted(
        OVERLAYS
    )


@pytest.mark.parametrize("name", sorted(OVERLAYS))
def test_an_overlay_dry_runs_after_its_study_and_adds_its_jobs(name, tmp_path):
    """An overlay given after its study's config (a second --configfile) plans as one config:
    a run of the study that has finished reruns only the overlay's jobs; here, on an empty
    folder, the overlay's jobs are there beside the study's (the Qwen evaluator's surprisal
    for the 19 sources, its 4 entries' scores on the 16 model sources)."""
    base, adds = OVERLAYS[name]
    study = REPO / "configs" / base
    missing = study_data_missing(yaml.safe_load(study.read_text()))
    if missing:
        pytest.skip(missing)
    overlay = REPO / "configs" / "overlays" / name
    alone = job_counts(
        snakemake("-n", "--cores", "2", "--configfile", str(study), cwd=tmp_path).stdout
    )
    both = snakemake(
        "-n", "--cores", "2", "--configfile", str(study), str(overlay), cwd=tmp_path
    ).stdout
    counts = job_counts(both)
    added = {rule: counts.get(rule, 0) - alone.get(rule, 0) for rule in adds}
    assert added == adds, added
    assert counts["scaling"] == alone["scaling"] == 1  # one analysis, over every evaluator


def test_every_study_has_a_make_target_and_a_readme_row():
    """The studies of STUDY_RULES: a make target running their config, and a row naming that
    command in the README's studies list and in the studies page's table of results."""
    pages = [(REPO / "README.md").read_text(), (REPO / "docs" / "studies.md").read_text()]
    makefile = (REPO / "Makefile").read_text()
    for name in STUDY_RULES:
        target = re.search(r"^([\w-]+): install\n\t.*configs/" + re.escape(name), makefile, re.M)
        assert target, name
        for page in pages:
            assert f"| `make {target[1]}` |" in page, target[1]


def _write(tmp_path: Path, cfg: dict, name: str = "cfg.yaml") -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump(cfg))
    return p


def test_unknown_config_key_names_the_key(tmp_path):
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    cfg["datasets"]["bbc"]["clen"] = {}
    proc = snakemake("-n", "--configfile", str(_write(tmp_path, cfg)), cwd=tmp_path, check=False)
    assert proc.returncode != 0
    assert "datasets.bbc: unknown key(s) 'clen'" in proc.stdout + proc.stderr
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    cfg["models"]["smollm2-pure"]["checkpoint"] = "nope"
    proc = snakemake("-n", "--configfile", str(_write(tmp_path, cfg)), cwd=tmp_path, check=False)
    assert (
        "models.smollm2-pure.checkpoint: 'nope' is not in checkpoints" in proc.stdout + proc.stderr
    )


def test_missing_dataset_file_is_named(tmp_path):
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    cfg["datasets"]["bbc"]["source"] = {"kind": "local", "path": str(tmp_path / "missing.jsonl")}
    proc = snakemake("-n", "--configfile", str(_write(tmp_path, cfg)), cwd=tmp_path, check=False)
    assert proc.returncode != 0
    # the config key that named the file, not only the path (issue 26, item 6)
    out = proc.stdout + proc.stderr
    assert "datasets.bbc.source.path: " in out and "missing.jsonl does not exist" in out


# ---------------------------------------------------------------------------- offline run


@pytest.mark.e2e
def test_offline_run_scores_every_entry_for_every_model_and_seed(offline_run):
    from genmetrics.metrics import get
    from genmetrics.plan import load_plan

    work, env, _ = offline_run
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GENMETRICS_REPO", str(REPO))
        mp.setenv("GENMETRICS_TINY_MODEL", env["GENMETRICS_TINY_MODEL"])
        plan = load_plan(yaml.safe_load(TEST_CONFIG.read_text()), SCHEMA)
    df = pd.read_csv(work / "results/scores.csv")
    assert list(df.columns) == SCORE_COLUMNS
    sources = [(m, s) for m, model in plan.models.items() for s in model.seeds]
    assert len(sources) == 4  # 2 models × 2 seeds
    for name, entry in plan.entries.items():
        want = {(m, s) for m, s in sources if f"{m}/seed{s}" != entry.reference}
        if entry.reference is None and entry.score_references:
            want.add(("references", None))
        rows = df[df.entry == name]
        seeds = [None if pd.isna(s) else int(s) for s in rows.seed]
        got = set(zip(rows.model, seeds, strict=True))
        assert got == want, name
        assert set(rows.metric) == {entry.metric}
        declared = get(entry.metric).values
        # values with a direction of better; all of them for a metric that has none (zipf)
        headline = [v for v, better in declared.items() if better is not None] or list(declared)
        vals = rows[rows.name.isin(headline)]
        assert len(vals) and all(math.isfinite(v) for v in vals.value), (name, vals)
    # shards merged in prompt order, continuations within the word budget
    prompts = [json.loads(x) for x in open(work / "results/data/stories/prompts.jsonl")]
    for m, s in sources:
        rows = [
            json.loads(x) for x in open(work / f"results/generations/stories/{m}/seed{s}.jsonl")
        ]
        assert [r["prompt_id"] for r in rows] == [p["id"] for p in prompts]
        assert all(len(r["continuation"].split()) <= 12 for r in rows)
    # length control: all sources cut to the same length per prompt
    lc = df[(df.entry == "ngram_diversity_lc") & (df.name == "mean_words")]
    assert len(lc) == 5 and lc.value.max() - lc.value.min() < 1e-9
    spread = pd.read_csv(work / "results/spread.csv")
    assert set(spread.model) == set(plan.models) and set(spread.entry) == {"precision_recall"}
    html = (work / "results/report.html").read_text()
    assert "<table" in html and "data:image/png;base64" in html


def test_offline_run_models_share_their_draws_and_every_pair_is_compared(offline_run):
    """Every model's and seed's record of an entry drew the same prompts (one ``draws``
    digest, 32 prompts), so results/analysis/paired_differences.csv has a paired interval
    and p for every headline value of the pair; results/analysis/sample_size.csv has every
    model (genmetrics.analysis.paired, genmetrics.analysis.sample_size)."""
    work, _, _ = offline_run
    digests: dict[str, set] = {}
    for path in (work / "results/scores/stories").glob("tiny-*/seed*/*.json"):
        iv = json.loads(path.read_text())["interval"]
        if iv.get("method"):
            digests.setdefault(path.stem, set()).add((iv["draws"], iv["n_units"]))
    assert digests and all(len(d) == 1 and next(iter(d))[1] == 32 for d in digests.values())
    paired = pd.read_csv(work / "results/analysis/paired_differences.csv")
    assert set(zip(paired.model_a, paired.model_b, strict=True)) == {("tiny-chat", "tiny-pure")}
    assert paired.p.notna().all() and (paired.n_prompts == 32).all()
    assert (paired.p_holm >= paired.p - 1e-12).all() and (paired.p_bh >= paired.p - 1e-12).all()
    sizes = pd.read_csv(work / "results/analysis/sample_size.csv")
    assert {"tiny-chat", "tiny-pure"} <= set(sizes.model)
    assert (work / "results/figures/paired_stories.png").stat().st_size > 0


@pytest.mark.e2e
def test_offline_run_adding_a_model_reruns_only_its_jobs(offline_run):
    work, env, _ = offline_run
    cfg = yaml.safe_load(TEST_CONFIG.read_text())
    del cfg["metrics"]["ngram_diversity_lc"]  # depends on every source by design
    cfg["models"]["tiny-greedy"] = {"checkpoint": "tiny", "sampling": {"do_sample": False}}
    path = _write(work, cfg, "added.yaml")
    proc = snakemake("-n", "--cores", "2", "--configfile", str(path), cwd=work, env=env)
    counts = job_counts(proc.stdout)
    assert counts["generate"] == 2 * 2 and counts["merge_generations"] == 2  # 2 seeds × 2 shards
    assert "fetch_model" not in counts and "clean_dataset" not in counts
    blocks = re.split(r"^\[\w{3} \w{3} .*\]$", proc.stdout, flags=re.M)
    # a per-dataset aggregate (the paired matrix of every model) is no job of the other model
    per_model = [b for b in blocks if not re.search(r"^\s*(local)?rule paired_figure:", b, re.M)]
    wildcards = [m for b in per_model for m in re.findall(r"^\s*wildcards: (.*)$", b, re.M)]
    assert wildcards and all("tiny-greedy" in w for w in wildcards), wildcards


@pytest.mark.e2e
def test_offline_run_records_provenance(offline_run):
    """Score JSONs, feature NPZs and generation stats say what made them (config, input
    hashes, weights hash, versions, host, git commit), and the hashes are the files'."""
    import socket

    from genmetrics.models.checkpoints import folder_sha256
    from genmetrics.npz import read_provenance
    from genmetrics.provenance import sha256_file

    work, env, _ = offline_run
    res = work / "results"
    rec = json.loads((res / "scores/stories/tiny-pure/seed0/precision_recall.json").read_text())
    prov = rec["provenance"]
    for role in ("candidate", "reference"):
        entry = prov["inputs"][role]
        assert entry["sha256"] == sha256_file(work / entry["path"])
    assert prov["config"]["entry"]["params"]["k"] == 3
    upstream = prov["config"]["upstream"]
    assert upstream["featurizer"]["name"] == "tiny"
    assert upstream["candidate_generation"]["settings"]["sampling"] == {
        "temperature": 1.0,
        "top_p": 1.0,
    }
    assert {"numpy", "torch", "scikit-learn"} <= set(prov["versions"])
    assert prov["environment"]["host"] == socket.gethostname()
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    if head.returncode == 0:
        assert prov["environment"]["git"]["commit"] == head.stdout.strip()
    bleu = json.loads((res / "scores/stories/tiny-chat/seed1/bleu.json").read_text())
    assert "sacrebleu" in bleu["provenance"]["versions"]  # the reference package it ran
    # a feature file: the featurizer settings and the model's weights hash
    feat = read_provenance(res / "features/embed/tiny/stories/tiny-pure/seed0.npz")
    assert feat["config"]["featurizer"]["max_tokens"] == 64
    model = feat["inputs"]["model"]
    assert model["weights_sha256"] == folder_sha256(Path(env["GENMETRICS_TINY_MODEL"]))
    texts = feat["inputs"]["texts"]
    assert texts["sha256"] == sha256_file(work / texts["path"])
    # generation stats: settings, precision and device, one record per shard
    stats = json.loads((res / "generations/stories/tiny-chat/seed1.stats.json").read_text())
    assert stats["dtype"] == "float32" and stats["dtype_requested"] == "auto"
    assert len(stats["provenance"]) == 2 and stats["devices"][0]["name"] == "cpu"
    gen = stats["provenance"][0]
    assert gen["config"]["generation"]["template"] == "chat" and gen["config"]["seed"] == 1
    assert gen["inputs"]["model"]["weights_sha256"] == model["weights_sha256"]


# Partial reruns: what a dry run on the finished offline run schedules after one change. The
# rerun triggers are the profiles' (no `code` trigger; code digests are params instead).
TRIGGERS = (
    "--rerun-triggers",
    *yaml.safe_load((REPO / "cluster/profile.yaml").read_text())["rerun-triggers"],
)


def _dry(work: Path, env: dict, cfg: dict | Path, *args: str, name: str = "c.yaml") -> str:
    path = cfg if isinstance(cfg, Path) else _write(work, cfg, name)
    return snakemake(
        "-n", "--cores", "2", "--configfile", str(path), *TRIGGERS, *args, cwd=work, env=env
    ).stdout


def _scheduled(out: str) -> dict[str, int]:
    return {} if "Nothing to be done" in out else job_counts(out)


def _score_entries(out: str) -> set[str]:
    return {re.search(r"entry=([\w.-]+)", b)[1] for b in job_blocks(out, "score")}


AGGREGATES = {  # everything downstream of scores.csv (pr_curves reads only PRD scores)
    "aggregate",
    "paired_differences",
    "paired_figure",
    "sample_size",
    "correlation_heatmap",
    "mauve_bars",
    "pr_scatter",
    "length_analysis",
    "html_report",
    "all",
}


@pytest.mark.e2e
def test_offline_run_unchanged_or_touched_code_reruns_nothing(offline_run):
    """A `git pull` that changes nothing but timestamps (scripts, library code) reruns nothing."""
    work, env, _ = offline_run
    now = __import__("time").time()
    files = [*REPO.glob("workflow/scripts/*.py"), *REPO.glob("src/genmetrics/**/*.py")]
    with scripts_as_checked_out(touching=True):  # the other worker's dry runs wait
        before = {f: f.stat() for f in files}
        try:
            for f in files:
                os.utime(f, (now, now))
            out = _dry(work, env, TEST_CONFIG)
        finally:  # as checked out again: later runs of the default triggers see no change
            for f, st in before.items():
                os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert _scheduled(out) == {}


@pytest.mark.e2e
def test_offline_run_adding_a_seed_reruns_only_its_jobs(offline_run):
    work, env, _ = offline_run
    cfg = yaml.safe_load(TEST_CONFIG.read_text())
    del cfg["metrics"]["ngram_diversity_lc"]  # depends on every source by design
    cfg["models"]["tiny-pure"]["seeds"] = [0, 1, 2]
    out = _dry(work, env, cfg)
    counts = _scheduled(out)
    assert counts["generate"] == 2 and counts["merge_generations"] == 1  # 2 shards of seed 2
    blocks = re.split(r"^\[\w{3} \w{3} .*\]$", out, flags=re.M)
    wildcards = [m for b in blocks for m in re.findall(r"^\s*wildcards: (.*)$", b, re.M)]
    sources = [w for w in wildcards if "source=" in w or "seed=" in w]
    assert sources and all("tiny-pure" in w and ("seed2" in w or "seed=2" in w) for w in sources)
    assert all("tiny-chat" not in w for w in wildcards)  # the other model: nothing


@pytest.mark.e2e
def test_offline_run_one_entry_s_params_rerun_only_its_scores(offline_run):
    work, env, _ = offline_run
    cfg = yaml.safe_load(TEST_CONFIG.read_text())
    cfg["metrics"]["mattr"]["params"]["window"] = 8
    counts = _scheduled(out := _dry(work, env, cfg))
    assert _score_entries(out) == {"mattr"} and counts["score"] == 5  # 4 sources + references
    assert set(counts) == {"score"} | AGGREGATES
    # each job's reason names the changed parameter, old → new, and nothing else
    reasons = re.findall(r"^\s*reason: (.*)$", out, flags=re.M)
    changed = [r for r in reasons if "Params have changed" in r]
    assert len(changed) == 5, reasons
    assert all(
        r.endswith("Params have changed since last execution: params.window: 10 → 8")
        for r in changed
    ), changed


@pytest.mark.e2e
def test_offline_run_a_figure_option_reruns_only_that_figure(offline_run):
    work, env, _ = offline_run
    cfg = yaml.safe_load(TEST_CONFIG.read_text())
    cfg["report"] = {"correlation": "kendall"}
    assert set(_scheduled(_dry(work, env, cfg))) == {"correlation_heatmap", "html_report", "all"}


@pytest.mark.e2e
def test_offline_run_metric_code_changes_rerun_that_metric_only(offline_run, tmp_path):
    """The library copied and edited: a comment changes nothing; a code change in the module of
    MATTR and HD-D (lexical.py) reruns those two entries' scores and the aggregates."""
    import shutil

    work, env, _ = offline_run
    src = tmp_path / "src"
    shutil.copytree(REPO / "src" / "genmetrics", src / "genmetrics")
    module = src / "genmetrics" / "metrics" / "lexical.py"
    env = {**env, "PYTHONPATH": str(src)}  # before the editable install
    module.write_text(module.read_text() + "\n# a comment only\n")
    assert _scheduled(_dry(work, env, TEST_CONFIG)) == {}
    module.write_text(module.read_text() + "_CHANGED = 1\n")
    out = _dry(work, env, TEST_CONFIG)
    assert _score_entries(out) == {"mattr", "hdd"}
    assert set(_scheduled(out)) == {"score"} | AGGREGATES
    assert "Params have changed" in out


@pytest.mark.e2e
def test_offline_run_a_module_moved_to_another_package_reruns_nothing(offline_run, tmp_path):
    """The library copied, ``analysis/statistics.py`` (in every interval's code digest) moved to
    ``scoring/`` and every import of it rewritten: nothing reruns (code digests hash content,
    not paths). The same move with a code change reruns the scores that use it."""
    import shutil

    work, env, _ = offline_run
    src = tmp_path / "src"
    shutil.copytree(REPO / "src" / "genmetrics", src / "genmetrics")
    pkg = src / "genmetrics"
    (pkg / "analysis" / "statistics.py").rename(pkg / "scoring" / "statistics.py")
    for f in pkg.rglob("*.py"):
        text = f.read_text(encoding="utf-8")
        moved = text.replace("genmetrics.analysis.statistics", "genmetrics.scoring.statistics")
        moved = moved.replace(
            "from genmetrics.analysis import statistics",
            "from genmetrics.scoring import statistics",
        )
        if moved != text:
            f.write_text(moved, encoding="utf-8")
    assert "genmetrics.analysis.statistics" not in (pkg / "scoring" / "intervals.py").read_text()
    env = {**env, "PYTHONPATH": str(src)}  # before the editable install
    assert _scheduled(_dry(work, env, TEST_CONFIG)) == {}
    module = pkg / "scoring" / "statistics.py"
    module.write_text(module.read_text() + "_CHANGED = 1\n")
    out = _dry(work, env, TEST_CONFIG)
    assert "score" in _scheduled(out) and "Params have changed" in out


@pytest.mark.e2e
def test_offline_run_an_analysis_code_change_reruns_its_table_and_nothing_under_it(
    offline_run, tmp_path
):
    """Analysis, figure and report rules carry the code digest of their script and of the
    modules it imports (``script_code``): a change to ``analysis/sample_size.py`` in a copy
    of the library reruns the sample-size table and what reads it, and no score; without
    the change nothing reruns."""
    import shutil

    work, env, _ = offline_run
    src = tmp_path / "src"
    shutil.copytree(REPO / "src" / "genmetrics", src / "genmetrics")
    env = {**env, "PYTHONPATH": str(src)}
    assert _scheduled(_dry(work, env, TEST_CONFIG)) == {}
    module = src / "genmetrics" / "analysis" / "sample_size.py"
    module.write_text(module.read_text() + "_CHANGED = 1\n")
    out = _dry(work, env, TEST_CONFIG)
    counts = _scheduled(out)
    assert counts.get("sample_size") == 1 and "Params have changed" in out
    assert not {"score", "generate", "embed", "surprisal", "aggregate"} & set(counts), counts


@pytest.mark.e2e
def test_offline_run_new_weights_under_the_same_path_rerun_their_jobs(offline_run):
    """A local checkpoint's content keys its manifest: new weights under the same path rerun
    fetch_model (a new manifest) and everything that loads it; a touched file (same bytes) reruns
    nothing (issue 22, item 2)."""
    work, env, _ = offline_run
    weights = Path(env["GENMETRICS_TINY_MODEL"]) / "model.safetensors"
    original = weights.read_bytes()
    stat = weights.stat()
    try:
        os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # touched only
        assert _scheduled(_dry(work, env, TEST_CONFIG)) == {}
        weights.write_bytes(original + b" ")  # other bytes: other weights
        out = _dry(work, env, TEST_CONFIG)
        counts = _scheduled(out)
        # the new content has its own manifest in the model cache (keyed by content)
        assert counts["fetch_model"] == 1 and "Missing output files" in out
        assert counts["generate"] >= 1 and counts["embed"] >= 1 and counts["surprisal"] >= 1
    finally:
        weights.write_bytes(original)
        os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert _scheduled(_dry(work, env, TEST_CONFIG)) == {}


@pytest.mark.e2e
def test_offline_run_a_moved_project_folder_reruns_nothing(offline_run, tmp_path):
    """The finished project folder (its results, caches, converted checkpoints and the local
    checkpoint inside it) copied elsewhere: nothing to do there, and a feature job rerun in
    the copy loads the model through its manifest (issue 22, item 12)."""
    import shutil

    work, env, _ = offline_run
    moved = tmp_path / "elsewhere" / "project"
    shutil.copytree(work, moved, symlinks=True)  # copy2: the same mtimes
    env = {**env, "GENMETRICS_TINY_MODEL": str(moved / Path(env["GENMETRICS_TINY_MODEL"]).name)}
    assert _scheduled(_dry(moved, env, TEST_CONFIG)) == {}
    target = "results/features/embed/tiny/stories/references.npz"
    snakemake(
        "--cores",
        "1",
        "--configfile",
        str(TEST_CONFIG),
        *TRIGGERS,
        "--forcerun",
        target,
        "--until",
        target,
        cwd=moved,
        env=env,
    )
    assert _scheduled(_dry(moved, env, TEST_CONFIG, "--until", target)) == {}


@pytest.mark.e2e
def test_offline_run_a_k_too_large_for_the_cleaned_data_stops_the_dry_run(offline_run):
    """After the first run the size requirements are checked against the cleaned counts
    before the DAG: a k raised past the data stops `snakemake -n` naming its key, and a k
    that still fits reruns that entry's scores only, never generation (issue 22, item 8)."""
    work, env, _ = offline_run
    cfg = yaml.safe_load(TEST_CONFIG.read_text())
    cfg["metrics"]["precision_recall"]["params"]["k"] = 40
    proc = snakemake(
        "-n", "--configfile", str(_write(work, cfg, "k40.yaml")), cwd=work, env=env, check=False
    )
    assert proc.returncode != 0
    assert "metrics.precision_recall.params.k: k=40 needs at least 41" in proc.stdout + proc.stderr
    cfg["metrics"]["precision_recall"]["params"]["k"] = 5
    counts = _scheduled(_dry(work, env, cfg, name="k5.yaml"))
    assert "generate" not in counts and "check_sizes" not in counts and counts["score"] >= 1


@pytest.mark.e2e
def test_offline_run_snakemake_report(offline_run):
    """`snakemake --report` (as `make report`) after the run: every figure of `all` (the
    one-page summary's) embedded with its caption, and the score tables embedded."""
    import base64
    import html

    from docutils.core import publish_parts

    from genmetrics.paths import RESULTS
    from genmetrics.plan import load_plan

    def html_unescape(text: str) -> str:
        return " ".join(html.unescape(text).split())

    work, env, _ = offline_run
    out = work / "results" / "snakemake_report.html"
    style = ("--report-stylesheet", str(STYLESHEET))  # as `make report`
    snakemake("--report", str(out), "--configfile", str(TEST_CONFIG), *style, cwd=work, env=env)
    page = out.read_text(encoding="utf-8")
    assert "nav + div img" in page  # the stylesheet: captions readable beside the figures
    # the report's results: `var results = {path: {name, caption, mime_type, data_uri, ...}}`
    start = re.search(r"var results = \{", page)
    assert start, "no results in the report"
    results, _ = json.JSONDecoder().raw_decode(page, start.end() - 1)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GENMETRICS_REPO", str(REPO))
        mp.setenv("GENMETRICS_TINY_MODEL", env["GENMETRICS_TINY_MODEL"])
        plan = load_plan(yaml.safe_load(TEST_CONFIG.read_text()), SCHEMA)
    figures = set(plan.targets.figures)
    on_disk = {p.relative_to(work).as_posix() for p in (work / "results/figures").glob("*.png")}
    assert figures <= on_disk
    in_report = {p for p in results if p.endswith(".png")}
    assert in_report == figures  # the one-page summary's figures, no more, no fewer

    def embedded(path: str) -> bytes:
        uri = results[path]["data_uri"]
        assert uri.startswith("data:") and ";base64," in uri, uri[:80]
        return base64.b64decode(uri.split(";base64,", 1)[1])

    captions = {}
    for rule_file in (REPO / "rules").glob("*.smk"):
        for name, cap in re.findall(
            r"report\(\s*RESULTS\.(\w+),\s*caption=\"([^\"]+)\"", rule_file.read_text()
        ):
            captions[getattr(RESULTS, name)] = (rule_file.parent / cap).resolve()

    def caption_of(fig: str) -> Path:  # a figure per dataset: its path template's caption
        for template, cap in captions.items():
            if re.fullmatch(re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(template)), fig):
                return cap
        raise KeyError(fig)

    for fig in figures:
        assert embedded(fig) == (work / fig).read_bytes(), fig
        text = caption_of(fig).read_text(encoding="utf-8")
        first = publish_parts(text.split("\n")[0], writer="html")["body"]
        words = re.sub(r"<[^>]+>", "", first).split()[:12]  # the caption's first words
        caption = re.sub(r"<[^>]+>", "", results[fig]["caption"])
        assert " ".join(words) in " ".join(caption.split()), fig
    assert "Le Bronnec" in results[RESULTS.pr_figure]["caption"]
    # the score tables: both CSVs embedded (downloads), the headline table in its caption
    for table in (RESULTS.headline_table, RESULTS.scores):
        assert embedded(table) == (work / table).read_bytes(), table
        assert results[table]["labels"]
    headline = results[RESULTS.headline_table]["caption"]
    md = (work / RESULTS.headline_markdown).read_text(encoding="utf-8")
    row = next(line for line in md.splitlines() if line.startswith("| stories | tiny-pure |"))
    assert html_unescape(row) in html_unescape(headline)
    # no entry scores one model against another: the empty model-overlap table is left out
    assert "results/analysis/model_overlap.csv" not in results


@pytest.mark.e2e
def test_offline_run_reports_in_a_headless_browser(offline_run):
    """Both reports of the run, opened in Chromium as a reader does (tests/browser.py):
    Snakemake's (`make report`), every result of its data shown with its caption, every image
    loaded, every table downloadable and its included table shown; the one-page summary, every
    image loaded under its caption, every table with rows, no None and no dict. No console
    error in either."""
    import html

    from browser import (
        broken_images,
        check_snakemake_report,
        headless_chromium,
        open_page,
        severe_console,
    )
    from docutils.core import publish_parts

    from genmetrics.paths import RESULTS
    from genmetrics.report.captions import caption_of

    work, env, _ = offline_run
    snakemake_report = work / "results" / "snakemake_report.html"
    if not snakemake_report.exists():  # test_offline_run_snakemake_report writes it
        args = ("--report", str(snakemake_report), "--configfile", str(TEST_CONFIG))
        snakemake(*args, "--report-stylesheet", str(STYLESHEET), cwd=work, env=env)
    page = work / RESULTS.report
    with headless_chromium() as driver:
        results = check_snakemake_report(driver, snakemake_report, work)
        figures = sorted(p for p in results if p.endswith(".png"))
        assert RESULTS.pr_figure in figures and RESULTS.headline_table in results
        # a figure with its info open: the caption in the side panel keeps at least 40% of
        # the window and the figure fits beside it (workflow/report/stylesheet.css)
        for fig in figures:
            driver.execute_script(  # the eye button's view with the info button's panel
                "app.setView({content: 'img', contentPath: results[arguments[0]].data_uri,"
                " navbarMode: 'resultinfo', resultPath: arguments[0]})",
                fig,
            )
            sizes = last = None
            for _ in range(50):
                sizes = driver.execute_script(
                    "const i = [...document.images].find(i => i.src === results[arguments[0]]"
                    ".data_uri && i.complete && i.naturalWidth > 0);"
                    "if (!i) return null;"
                    "const n = document.querySelector('nav').getBoundingClientRect();"
                    "const r = i.getBoundingClientRect();"
                    "return [n.width, r.left, r.right, window.innerWidth]",
                    fig,
                )
                if sizes and sizes == last:  # loaded, and the panel's width transition over
                    break
                last = sizes
                time.sleep(0.2)
            assert sizes, f"{fig}: not shown beside its caption"
            nav, left, right, window = sizes
            assert nav >= 0.4 * window and left >= nav - 1 and right <= window + 1, (fig, sizes)

        open_page(driver, page)
        assert broken_images(driver) == []
        shown = driver.execute_script(
            "return [...document.querySelectorAll('figure')].map(f => [f.querySelector('img')"
            ".naturalWidth, f.querySelector('figcaption').innerText, f.id])"
        )
        assert sorted(f"results/figures/{s[2]}.png" for s in shown) == figures
        for width, caption, stem in shown:
            assert width > 0, stem
            rst = REPO / "workflow" / "report" / caption_of(f"results/figures/{stem}.png").file
            first = publish_parts(rst.read_text(encoding="utf-8").split("\n")[0], writer="html")
            words = html.unescape(re.sub(r"<[^>]+>", "", first["body"])).split()[:12]
            assert " ".join(words) in " ".join(caption.split()), stem
        rows = driver.execute_script(
            "return [...document.querySelectorAll('table')]"
            ".map(t => t.offsetHeight > 0 ? t.tBodies[0].rows.length : -1)"
        )
        assert len(rows) >= 3 and all(n > 0 for n in rows), rows  # scores and generation
        text = driver.execute_script(
            "document.querySelectorAll('details').forEach(d => d.open = true);"
            "return document.body.innerText"
        )
        assert "None" not in text and "{'" not in text and "tiny-pure" in text
        assert severe_console(driver) == []


def test_cluster_profile_maps_gpu_rules_to_gpu_partitions(tmp_path):
    proc = snakemake(
        "-n",
        "--profile",
        str(REPO / "cluster"),
        "--configfile",
        str(REPO / "config.yaml"),
        cwd=tmp_path,
    )
    gen = job_blocks(proc.stdout, "generate")[0]
    assert "gpu=1" in gen and "slurm_partition=a100" in gen
    agg = job_blocks(proc.stdout, "aggregate")[0]
    assert "gpu=" not in agg


def test_model_vs_model_comparison_dag(tmp_path):
    """The creative-writing config compares models with each other: no human reference."""
    assert not mirror_needs(yaml.safe_load((REPO / "configs/creative.yaml").read_text()))
    proc = snakemake(
        "-n", "--cores", "2", "--configfile", str(REPO / "configs/creative.yaml"), cwd=tmp_path
    )
    out = proc.stdout
    pr_jobs = [b for b in job_blocks(out, "score") if "entry=pr_vs_t1.0" in b]
    # every model but the reference (4 models, one seed, 4 samples per prompt)
    assert len(pr_jobs) == 3
    for block in pr_jobs:
        assert "features/embed/smollm2/creative/smollm2-t1.0/seed0.npz" in block
        assert "source=smollm2-t1.0/seed0," not in block
    # one entry per reference model: Table 1's every pair
    assert len([b for b in job_blocks(out, "score") if "entry=pr_vs_" in b]) == 4 * 3
    counts = job_counts(out)
    assert counts["generate"] == 4 and "surprisal" not in counts
    assert "references.npz" not in out  # the human texts are not featurized


# ---------------------------------------------------------------------------- OmniInput


@pytest.mark.e2e
def test_offline_omniinput(offline_run):
    """`snakemake omniinput` on the .test config: the toy validation (trained, enumerated,
    three estimators) and a run on the tiny LM annotated by a rule, through the same rules a
    cluster runs; a second call has nothing to do."""
    work, env, _ = offline_run
    snakemake("--configfile", str(TEST_CONFIG), "--cores", "2", "omniinput", cwd=work, env=env)
    val = json.loads((work / "results/omniinput/toy/validation.json").read_text())
    assert val["space_size"] == 1000 and sum(val["exact_counts"]) == 1000
    assert set(val["proposals"]) == {"uniform", "gradient", "monte_carlo"}
    # At a 4,000-evaluation budget a walk's error depends on float32 last bits: the toy's
    # exact bin edges moved by 1e-6 between two runs (same weights: float32 rounding of the
    # forward pass differed; cause not pinned down), and over 12 seeds
    # × those two edge sets a uniform walk ended at 0.26-1.42, a gradient walk at 0.19-0.85,
    # Monte Carlo (seed 0) at 0.21-0.22 in both runs. The bounds say "converging"; accuracy is
    # test_omniinput_toy.py's (60,000 evaluations, < 0.35).
    limit = {"uniform": 2.0, "gradient": 1.5, "monte_carlo": 1.0}
    for kind, e in val["proposals"].items():
        assert e["model_evaluations"] <= 4000, kind
        assert e["bins_reached"] == e["bins_populated_exact"], (kind, e)
        assert e["max_abs_log_rho_error"] < limit[kind], (kind, e)
    scores = pd.read_csv(work / "results/omniinput/scores.csv")
    assert set(scores.run) == {"tiny-L3"}
    values = scores.set_index("name").value
    assert 0 <= values["precision"] <= 1 and values["bins_populated"] >= 1
    rows = pd.read_csv(work / "results/omniinput/tiny-L3/samples.csv", keep_default_na=False)
    with np.load(work / "results/omniinput/tiny-L3/sampler.npz", allow_pickle=False) as a:
        assert len(rows) == int(a["sample_counts"].sum()) > 0
    assert (rows.score == "").all()  # for raters to fill
    for fig in ("omniinput_toy.png", "omniinput_pr.png"):
        assert (work / "results/figures" / fig).stat().st_size > 10_000
    assert not list((work / "results/omniinput").rglob("*.ckpt.npz"))  # dropped when done
    again = snakemake(
        "-n", "--configfile", str(TEST_CONFIG), "--cores", "2", "omniinput", cwd=work, env=env
    )
    assert "Nothing to be done" in again.stdout + again.stderr


def test_a_size_check_failure_stops_the_run_before_any_generate_job(tmp_path):
    """check_sizes is an input of every generate job: a k larger than the cleaned data stops
    the workflow naming the key, and no generate job has started (issue 22, item 8). The
    checkpoint is a placeholder nothing could load: reaching generation would fail otherwise."""
    cfg = yaml.safe_load(TEST_CONFIG.read_text())
    cfg["metrics"]["precision_recall"]["params"]["k"] = 500
    env = {"GENMETRICS_TINY_MODEL": str(placeholder_checkpoint(tmp_path / "tiny-model"))}
    dry = snakemake("-n", "--configfile", str(_write(tmp_path, cfg)), cwd=tmp_path, env=env)
    generate = job_blocks(dry.stdout, "generate")
    assert generate and all("results/data/stories/size_check.json" in b for b in generate)
    proc = snakemake(
        "--configfile", str(_write(tmp_path, cfg)), *FAST, cwd=tmp_path, env=env, check=False
    )
    assert proc.returncode != 0
    log = (tmp_path / "results/logs/check_sizes/stories.log").read_text()
    assert "metrics.precision_recall.params.k" in log
    assert not (tmp_path / "results/logs/generate").exists()
    assert not list(tmp_path.glob("results/generations/**/*.jsonl"))
