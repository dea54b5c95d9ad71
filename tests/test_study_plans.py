"""``make <study>-plan`` and the paper profiles (``configs/profiles/<study>-paper.yaml``).

* the estimate's arithmetic on a hand-made job table (``genmetrics.plan.estimate``);
* Snakemake's summary read into jobs per rule; the outputs to read picked from a dry run;
* texts × tokens of a profile computed by hand from the paper's numbers (App. B: 4,000 texts,
  5 seeds, 330 words at Table B.1's 1.360 tokens per word);
* an overlay's null entry removes the entry; every study of the Makefile has a plan;
* one profile dry-runs by default (in a namespace without network where ``unshare`` allows:
  no download at plan time); every profile and every study in the slow tests.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from genmetrics import GenmetricsError
from genmetrics.plan import load_plan
from genmetrics.plan.estimate import (
    GenerationWork,
    JobCost,
    estimate,
    format_duration,
    generation_work,
    job_counts,
    job_threads,
    read_costs,
)
from genmetrics.plan.study_plan import (
    NOT_WORKFLOWS,
    STUDIES,
    merged_config,
    outputs_to_read,
    paper_gpu_hours,
    planned_generate_jobs,
    planned_work,
    profile_header,
    read_paper_compute,
)

REPO = Path(__file__).resolve().parents[1]
PROFILES = sorted((REPO / "configs" / "profiles").glob("*.yaml"))
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


def _plan(*files: str):
    os.environ.setdefault("GENMETRICS_REPO", str(REPO))
    return load_plan(merged_config([REPO / f for f in files]), SCHEMA)


# ---------------------------------------------------------------- the arithmetic

DRY_RUN = """Building DAG of jobs...
Job stats:
job              count
-------------  -------
generate             2
score               10
aggregate            1
sweep                3
all                  1
total               17

[Sun Nov 29 01:17:13 2026]
rule generate:
    output: results/x/generations/d/m/seed0.shard0.jsonl
Job stats:
job              count
-------------  -------
generate             2
score               10
aggregate            1
sweep                3
all                  1
total               17

This was a dry-run (flag -n).
"""

COSTS = [
    JobCost("generate", "1000 tokens", 16.0, 0.3, "vm", "hand"),
    JobCost("score", "job", 1.5, None, "vm", "hand"),
    JobCost("aggregate", "job", 1.0, None, "vm", "hand"),
    JobCost("all", "job", 0.0, None, "vm", "hand"),
]


def test_job_counts_read_the_summary():
    assert job_counts(DRY_RUN) == {"generate": 2, "score": 10, "aggregate": 1, "sweep": 3, "all": 1}
    assert (
        job_counts("Building DAG of jobs...\nNothing to be done (all requested files exist).") == {}
    )
    with pytest.raises(GenmetricsError, match="Job stats"):
        job_counts("something else")


def test_estimate_on_a_hand_made_job_table():
    counts = job_counts(DRY_RUN)
    est = estimate(counts, COSTS, size_b=0.135, generated_tokens=5000, cores=2)
    # generate 5000 / 1000 × 16 = 80; score 10 × 1.5 = 15; aggregate 1; all 0; sweep: no row
    assert est.seconds == {"generate": 80.0, "score": 15.0, "aggregate": 1.0, "all": 0.0}
    assert est.job_seconds == 96.0 and est.wall_seconds == 48.0
    assert est.not_estimated == {"sweep": "3 jobs: no measured cost"}
    one_core = estimate(counts, COSTS, size_b=0.135, generated_tokens=5000, cores=1)
    assert one_core.wall_seconds == 96.0


def test_a_larger_model_than_measured_is_not_priced():
    counts = {"generate": 2, "embed": 4, "score": 10}
    costs = [*COSTS, JobCost("embed", "job", 12.0, 0.3, "vm", "hand")]
    est = estimate(counts, costs, size_b={"generate": 7.0, "embed": 0.774}, generated_tokens=10**6)
    assert est.seconds == {"score": 15.0}
    assert est.not_estimated == {
        "generate": "2 jobs on 7B-parameter models: measured up to 0.3B only",
        "embed": "4 jobs on 0.774B-parameter models: measured up to 0.3B only",
    }
    # unknown tokens: generate is not priced, the rest is
    est = estimate({"generate": 1, "score": 2}, COSTS, size_b=0.1, generated_tokens=None)
    assert est.seconds == {"score": 3.0}
    assert est.not_estimated == {"generate": "1 job: their texts × tokens are unknown"}


def test_format_duration():
    assert [format_duration(s) for s in (12, 420, 9000, 3 * 86400)] == [
        "12 s",
        "7 min",
        "2.5 h",
        "3.0 days",
    ]


def test_the_shipped_cost_table_reproduces_the_demos_measured_total():
    """docs/performance.md: the demo's 185 jobs took 1,276 job-seconds; its rows priced on the
    demo's own job table (its Job stats) and token budget give that total back."""
    costs = read_costs(REPO / "resources" / "plan" / "job_seconds.tsv")
    demo = {
        "fetch_asset": 2, "fetch_dataset": 1, "fetch_model": 3, "clean_dataset": 1,
        "check_sizes": 1, "embed": 15, "make_prompts": 1, "pos_tags": 5, "score": 129,
        "surprisal": 5, "generate": 4, "merge_generations": 4, "spread": 3, "aggregate": 1,
        "featurizer_robustness": 1, "pr_curves": 1, "spectra_figure": 1, "spread_table": 1,
        "correlation_heatmap": 1, "length_analysis": 1, "mauve_bars": 1, "pr_scatter": 1,
        "html_report": 1, "all": 1,
    }  # fmt: skip
    assert sum(demo.values()) == 185
    work = generation_work(_plan("config.yaml"))
    assert sum(w.tokens for w in work) == 41_920
    # the 10-word prefixes: ceil(10 × 1.309) = 14 SmolLM2 tokens, ceil(10 × 1.273) = 13 Gemma
    assert sorted({(w.params_b, w.prompt_tokens) for w in work}) == [(0.135, 14), (0.27, 13)]
    est = estimate(demo, costs, size_b=0.27, work=work)
    assert est.not_estimated == {}
    assert est.seconds["generate"] == pytest.approx(678, abs=0.5)  # the demo's generate jobs
    assert est.job_seconds == pytest.approx(1276, abs=2)  # rounding of the table's seconds


COSTS_1B = [
    JobCost("generate", "1000 tokens x 1B params", 100.0, 0.3, "vm", "hand"),
    JobCost("generate_prompt", "1000 tokens x 1B params", 10.0, 0.3, "vm", "hand"),
    JobCost("embed", "job", 12.0, 0.3, "vm", "hand"),
    JobCost("score", "job", 1.5, None, "vm", "hand"),
]


def test_generation_is_priced_by_model_size_and_prompt_length():
    """Hand-computed: 100 s per 1000 tokens of a 1B model, 10 s per 1000 prompt tokens."""
    small = GenerationWork("d", "small", 0.1, 2, 200, 50, prompt_tokens=20)
    large = GenerationWork("d", "large", 0.2, 2, 200, 50, prompt_tokens=300)
    # small: 0.1 × (200 × 50 × 100 + 200 × 20 × 10) / 1000 = 0.1 × 1,040 = 104
    # large: 0.2 × (200 × 50 × 100 + 200 × 300 × 10) / 1000 = 0.2 × 1,600 = 320
    est = estimate({"generate": 4}, COSTS_1B, size_b=0.2, work=[small, large])
    assert est.seconds["generate"] == pytest.approx(424)
    # the same tokens on a model twice the size cost twice as much
    twice = GenerationWork("d", "small", 0.2, 2, 200, 50, prompt_tokens=20)
    assert estimate({"generate": 2}, COSTS_1B, size_b=0.2, work=[twice]).seconds[
        "generate"
    ] == pytest.approx(208)
    # a prompt length not known is not priced (only the new tokens are)
    unknown = GenerationWork("d", "small", 0.1, 2, 200, 50, prompt_tokens=None)
    assert estimate({"generate": 2}, COSTS_1B, size_b=0.1, work=[unknown]).seconds[
        "generate"
    ] == pytest.approx(100)
    # a model without a size, or beyond the measured ones, leaves generation unpriced
    nosize = GenerationWork("d", "x", None, 1, 10, 5)
    est = estimate({"generate": 1, "score": 2}, COSTS_1B, size_b=0.1, work=[nosize])
    assert est.seconds == {"score": 3.0}
    assert est.not_estimated == {"generate": "1 job: x: its size (params_b) is unknown"}
    est = estimate({"generate": 1}, COSTS_1B, size_b=0.1, work=None)
    assert est.not_estimated == {"generate": "1 job: their texts × tokens are unknown"}


def test_jobs_on_every_core_run_one_at_a_time():
    """A model rule whose jobs take both cores: wall = job-seconds × 1.4 / 2 (one job at a
    time, 1.4x slower than two single-thread jobs); single-thread rules: job-seconds / 2."""
    dry = (
        "rule generate:\n    jobid: 3\n    threads: 2\n"
        "localrule score:\n    jobid: 4\n"
        "rule embed:\n    jobid: 5\n    threads: 2\n"
    )
    assert job_threads(dry) == {"generate": 2, "embed": 2}
    work = [GenerationWork("d", "m", 0.1, 1, 100, 100)]  # 0.1 × 100 × 100 × 100 / 1000 = 100 s
    est = estimate(
        {"generate": 1, "embed": 2, "score": 4},
        COSTS_1B,
        size_b=0.1,
        work=work,
        threads=job_threads(dry),
    )
    assert est.seconds == {"generate": 100.0, "embed": 24.0, "score": 6.0}
    assert est.wall_seconds == pytest.approx((100 + 24) * 1.4 / 2 + 6 / 2)
    single = estimate({"generate": 1, "embed": 2, "score": 4}, COSTS_1B, size_b=0.1, work=work)
    assert single.wall_seconds == pytest.approx(130 / 2)
    # on one core nothing runs side by side: no slowdown
    one = estimate(
        {"generate": 1}, COSTS_1B, size_b=0.1, work=work, threads={"generate": 2}, cores=1
    )
    assert one.wall_seconds == pytest.approx(100)


def test_prompt_lengths_of_the_biographies_grow_with_the_examples():
    """Few-shot prompts: header + n × (60 example words + "- Biography of" + a 2-word name)
    + the closing "- Biography of", in tokens of each model (a known ordering and a hand sum)."""
    work = {(w.model, w.dataset): w for w in generation_work(_plan("configs/biographies.yaml"))}
    # chat header "Write biographies of various people. Here are a few examples:" = 10 words
    # n = 3: 10 + 3 × 65 + 3 = 208 words × 1.309 SmolLM2 tokens per word = 272.3 → 273
    assert work[("smollm2-chat", "bios-n3")].prompt_tokens == 273
    # base header "Write biographies of various people." = 5 words: 5 + 0 + 3 = 8 × 1.273 → 11
    assert work[("gemma3-base", "bios-n0")].prompt_tokens == 11
    for m in ("smollm2-chat", "gemma3-base"):
        n0, n1, n3 = (work[(m, f"bios-n{n}")].prompt_tokens for n in (0, 1, 3))
        assert n0 < n1 < n3


def test_read_costs_names_the_bad_row(tmp_path):
    path = tmp_path / "costs.tsv"
    path.write_text("kind\tunit\tseconds\tsize_b_max\tmachine\tsource\nx\tday\t1\tany\tvm\tme\n")
    with pytest.raises(GenmetricsError, match=r"costs.tsv: data row 2: unit 'day'"):
        read_costs(path)


def test_paper_gpu_hours_at_app_b_rates():
    rows = read_paper_compute(REPO / "resources" / "plan" / "paper_compute.csv")
    rows = [r for r in rows if r["paper"] == "pr-llm"]
    work = [
        GenerationWork("webtext", "a", 6.9, 1, 4000, 390),  # nearest row: 7B, 10 GPU-h
        GenerationWork("webtext", "b", 70, 5, 20000, 449),  # 70B: 5 × 160
    ]
    total, lines = paper_gpu_hours(work, rows)
    assert total == 10 + 800
    assert lines[1] == "b: 20,000 texts × 160 GPU-h per 4,000 (70B row) = 800 GPU-h"
    assert paper_gpu_hours([GenerationWork("d", "c", None, 1, 10, 5)], rows) == (None, [])


def test_outputs_to_read_are_the_tables_figures_and_report():
    outputs = [
        "results/w/figures/precision_recall.png",
        "results/w/report.html",
        "results/w/analysis/model_overlap.md",
        "results/w/analysis/sweep/webtext/m/seed0/precision_recall.csv",
        "results/w/scores/webtext/m/seed0/mauve.json",
        "results/w/scores_headline.md",
        "results/w/spread.csv",
        "results/w/analysis/patterns/cnndm.md",
        "results/w/analysis/patterns/cnndm.csv",
        "results/other/report.html",
    ]
    assert outputs_to_read(outputs, "results/w") == [
        "results/w/report.html",
        "results/w/analysis/model_overlap.md",
        "results/w/analysis/patterns/cnndm.md",
        "results/w/scores_headline.md",
        "results/w/spread.csv",
        "results/w/figures/precision_recall.png",
    ]


# ---------------------------------------------------------------- profiles and the Makefile


def test_generation_work_of_the_webtext_paper_profile_by_hand():
    plan = _plan("configs/webtext.yaml", "configs/profiles/webtext-paper.yaml")
    work = {w.model: w for w in generation_work(plan)}
    # the overlay's null entries removed the stand-ins: only the paper's nine models remain
    assert sorted(plan.models) == sorted(work) == sorted(
        ["llama2-7b", "llama2-13b", "llama2-70b", "llama2-7b-chat", "llama2-13b-chat",
         "llama2-70b-chat", "mistral-7b", "mistral-7b-instruct", "vicuna-7b"]
    )  # fmt: skip
    assert "smollm2" not in plan.featurizers and "gpt2-large" in plan.featurizers
    llama, mistral = work["llama2-70b"], work["mistral-7b"]
    # 4,000 prompts × 1 sample × 5 seeds; ceil(330 × 1.360) = 449, ceil(330 × 1.313) = 434
    assert (llama.jobs, llama.texts, llama.max_new_tokens) == (5, 20_000, 449)
    assert (mistral.texts, mistral.max_new_tokens, mistral.params_b) == (20_000, 434, 7)
    assert llama.tokens == 20_000 * 449


def test_an_overlays_null_entry_removes_only_that_entry():
    plan = _plan("configs/creative.yaml", "configs/profiles/creative-paper.yaml")
    assert "pr_vs_t1.0" not in plan.entries and "pr_vs_llama2-70b-chat" in plan.entries
    assert "self_bleu" in plan.entries  # not named by the overlay: kept
    work = {w.model: w for w in generation_work(plan)}
    assert work["vicuna-7b"].texts == 50 * 80 * 5  # Listing 1's 50 prompts, 80 each, 5 seeds


def test_drop_removed_entries_only_in_named_sections():
    from genmetrics.plan.load import drop_removed_entries

    cfg = {
        "models": {"a": None, "b": {"checkpoint": "c"}},
        "datasets": {"d": {"clean": {"sample": None}}},  # a null setting: kept
        "omniinput": {"runs": {"r1": None, "r2": {"length": 25}}, "comparisons": None},
        "analysis": {"sweep": None},  # not a section of entries: kept
    }
    assert drop_removed_entries(cfg) == {
        "models": {"b": {"checkpoint": "c"}},
        "datasets": {"d": {"clean": {"sample": None}}},
        "omniinput": {"runs": {"r2": {"length": 25}}, "comparisons": None},
        "analysis": {"sweep": None},
    }


def _make_studies() -> dict[str, str]:
    """Each study target of the Makefile whose recipe runs snakemake or something else."""
    text = (REPO / "Makefile").read_text(encoding="utf-8")
    out = {}
    for name, recipe in re.findall(r"^([a-z][a-z0-9-]*):[^\n]*\n((?:\t[^\n]*\n)+)", text, re.M):
        out[name] = recipe
    return out


def test_every_study_of_the_makefile_has_a_plan():
    recipes = _make_studies()
    studies = re.search(r"^studies:(.*)$", (REPO / "Makefile").read_text(), re.M).group(1).split()
    for name in studies:
        assert name in STUDIES or name in NOT_WORKFLOWS, name
    for name, study in STUDIES.items():
        first = recipes[name].splitlines()[0]
        assert "snakemake" in first, name
        configfile = f"--configfile {study.config}" if study.config else None
        assert (configfile in first) if configfile else "--configfile" not in first, name
        args = first.split("--cores $(CORES)")[1].split("--configfile")[0].split()
        assert tuple(a for a in args if not a.startswith(("$", "--"))) == study.targets, name
        # an interrupted study resumes with its own command
        runs = [line for line in recipes[name].splitlines() if "--report" not in line]
        assert all("--rerun-incomplete" in line for line in runs if "snakemake" in line), name
    for name in NOT_WORKFLOWS:
        assert "snakemake" not in recipes[name], name
    text = (REPO / "Makefile").read_text()
    phony = re.search(r"^\.PHONY:(.*)$", text, re.M).group(1).split()
    listed = re.search(r"^STUDY_PLANS := (.*)$", text, re.M).group(1).split()
    every = [f"{s}-plan" for s in [*STUDIES, *NOT_WORKFLOWS]]
    assert sorted(listed) == sorted(every) and set(every) <= set(phony)


@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.stem)
def test_every_profile_extends_a_study_and_says_what_it_lacks(path):
    study = path.stem.rsplit("-", 1)[0]
    assert study in STUDIES, f"{path.name}: no study {study!r}"
    header = profile_header(path)
    assert f"make {study}-plan PROFILE=paper" in header
    assert "What this machine lacks" in header
    if "kind: hub" in path.read_text(encoding="utf-8"):
        assert "40-hex commit" in header  # a branch revision warns: the header says to pin it


GENERATE_JOBS = """rule generate:
    output: results/generations/bbc/a/shards/seed1.0.jsonl
    wildcards: dataset=bbc, model=a, seed=1, shard=0
    threads: 2

rule embed:
    wildcards: dataset=bbc, source=b, featurizer=gpt2
rule generate:
    wildcards: dataset=wiki, model=b, seed=0, shard=1
rule generate:
    wildcards: dataset=wiki, model=b, seed=1, shard=1
"""


def test_generation_counts_only_what_the_dry_run_plans():
    """A model whose texts exist (no generate job planned) leaves the generation lines; one
    with 2 of its 4 jobs planned keeps half its texts (by hand: 400 × 2 / 4 = 200)."""
    planned = planned_generate_jobs(GENERATE_JOBS)
    assert planned == {("bbc", "a"): 1, ("wiki", "b"): 2}
    work = [
        GenerationWork("bbc", "a", 0.1, 2, 160, 64),
        GenerationWork("wiki", "b", 0.1, 4, 400, 64),
        GenerationWork("wiki", "c", 0.1, 1, 80, 64),
    ]
    out = planned_work(work, planned)
    assert [(w.dataset, w.model, w.jobs, w.texts) for w in out] == [
        ("bbc", "a", 1, 80),
        ("wiki", "b", 2, 200),
    ]


def test_every_study_with_generation_or_models_has_a_paper_profile():
    names = {p.stem for p in PROFILES}
    for study in ("webtext", "pr-scale", "biographies", "creative", "chat-vs-base"):
        assert f"{study}-paper" in names
    assert {"face-scaling-paper", "omniinput-compare-paper"} <= names
    assert {"omniinput-toy-paper", "omniinput-paper", "agnews-experiment-paper"} <= names


# ---------------------------------------------------------------- dry runs


def _network_free() -> list[str]:
    """``unshare -rn`` (a user and network namespace: no route out) where it works."""
    if shutil.which("unshare") and subprocess.run(["unshare", "-rn", "true"]).returncode == 0:
        return ["unshare", "-rn"]
    return []


def _plan_cli(study: str, profile: str | None) -> subprocess.CompletedProcess:
    env = dict(os.environ, HF_HUB_OFFLINE="1", PIP_NO_INDEX="1")
    cmd = [*_network_free(), sys.executable, "-m", "genmetrics.plan.study_plan", study]
    cmd += ["--profile", profile] if profile else []
    return subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False)


def _check_profile_printout(study: str, out: str) -> None:
    assert "cannot plan" not in out, out[-2000:]
    assert "Jobs per rule" in out and "Outputs to read" in out
    assert "The paper's compute for this work:" in out
    assert "not estimated: generate" in out or "Generation: none" in out


def test_one_profile_plans_without_network():
    run = _plan_cli("chat-vs-base", "paper")
    assert run.returncode == 0, run.stderr[-2000:]
    out = run.stdout
    _check_profile_printout("chat-vs-base", out)
    # GPU-hours at App. B's rates, 20,000 texts = 5 × 4,000 per model: four 7B models × 5 × 10,
    # two 13B × 5 × 20, two 70B × 5 × 160 = 200 + 200 + 1,600
    assert "llama2-70b-chat (70B) on webtext: 5 generate jobs, 20,000 texts × 449 tokens" in out
    assert "total ≈ 2,000 GPU-h" in out
    assert "results/chat-vs-base/figures/precision_recall.png" in out


@pytest.mark.slow
@pytest.mark.parametrize("path", PROFILES, ids=lambda p: p.stem)
def test_every_profile_plans_without_network(path):
    study = path.stem.rsplit("-", 1)[0]
    run = _plan_cli(study, "paper")
    assert run.returncode == 0, run.stderr[-2000:]
    _check_profile_printout(study, run.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("study", [*STUDIES, *NOT_WORKFLOWS])
def test_every_study_plans(study):
    run = _plan_cli(study, None)
    assert run.returncode == 0, run.stderr[-2000:]
    if study in NOT_WORKFLOWS:
        assert "not a Snakemake study" in run.stdout
    elif "cannot plan here" not in run.stdout:  # a data folder missing: said in one line
        assert "Jobs per rule" in run.stdout and "Estimate on this machine class" in run.stdout
    else:
        assert len(run.stdout.strip().splitlines()) == 1
