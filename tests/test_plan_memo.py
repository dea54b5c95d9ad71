"""The dry run's speed-ups change no job: memoized plan queries (genmetrics.plan.memo) give
every job the same params and inputs as the queries computed afresh; code digests with the
per-module parse cache equal the digest computed file by file as before; a big config's dry
run schedules the jobs per rule that its shape implies (benchmarks/bench_dry_run.py)."""

from __future__ import annotations

import ast
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import test_plan
import yaml
from conftest import REPO, placeholder_checkpoint, study_data_missing
from test_plan import config, plan_of, wildcards
from test_provenance import pkgx  # noqa: F401 (a fixture)

from genmetrics import provenance
from genmetrics.plan.gpu_resources import GPU_RULES
from genmetrics.plan.memo import SNAKEMAKE_PARAMS_ATTR

sys.path.insert(0, str(REPO / "benchmarks"))
from bench_dry_run import big_config  # noqa: E402

BIN = Path(sys.executable).parent
STUDIES = ["config.yaml", "configs/biographies.yaml", "configs/face_scaling.yaml"]
STUDIES += ["configs/summary_diversity.yaml", ".test/config.yaml"]


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    monkeypatch.setenv("GENMETRICS_REPO", str(REPO))
    monkeypatch.setenv("GENMETRICS_TINY_MODEL", str(placeholder_checkpoint(tmp_path / "tiny")))


class _NoMemo(dict):
    """A memo that keeps nothing: every query computed afresh, as before the cache."""

    def __setitem__(self, key, value) -> None:
        pass


def every_answer(plan) -> str:
    """``repr`` of every per-job answer of the plan: test_plan's ``jobs`` (params and inputs of
    every job), plus each score job's code digest and upstream, the model rules' code digests
    and each GPU job's resources."""
    default, test_plan.RESULTS = test_plan.RESULTS, plan.results  # a study's results_dir
    try:
        out = {"jobs": test_plan.jobs(plan)}
    finally:
        test_plan.RESULTS = default
    for path in plan.targets.scores:
        w = wildcards(plan.results.score, path, plan)
        out[path] = (plan.score_code(w["entry"]), plan.score_upstream(**w))
    out["code"] = [plan.code_digest(rule) for rule in ("generate", "embed", "surprisal")]
    out["sizes"] = [plan.size_requirements(ds) for ds in plan.datasets]
    names = {
        "generate": plan.generating_models,
        "embed": plan.featurizers,
        "surprisal": plan.evaluators,
        "score_with_model": plan.entries_loading_models(True),
    }
    for rule, which in names.items():
        assert rule in GPU_RULES
        out[rule] = [plan.job_resources(rule, n) for n in which]
    return repr(out)


@pytest.mark.parametrize("name", STUDIES)
def test_memoized_queries_answer_as_computed_afresh(name):
    missing = study_data_missing(config(name))
    if missing:
        pytest.skip(missing)
    cached = plan_of(config(name))
    fresh = plan_of(config(name))
    object.__setattr__(fresh, "_memo", _NoMemo())
    expected = every_answer(fresh)
    assert not fresh._memo
    assert every_answer(cached) == expected  # first pass fills the memo
    assert cached._memo
    assert every_answer(cached) == expected  # second pass answers from it


def test_memoized_query_is_computed_once_and_shared():
    plan = plan_of(config())
    a = plan.score_settings("bbc", "mauve")
    assert plan.score_settings("bbc", "mauve") is a
    assert plan.score_settings.__wrapped__(plan, "bbc", "mauve") == a  # the uncached method
    # named arguments: answered directly, same value
    assert plan.score_settings(dataset="bbc", entry="mauve") == a
    # a query that fails (a missing local file) is not cached: it fails every time
    cfg = config()
    cfg["datasets"]["bbc"]["source"] = {"kind": "local", "path": "/nonexistent/x.jsonl"}
    cfg["datasets"]["bbc"]["format"] = "jsonl"
    plan = plan_of(cfg)
    for _ in range(2):
        with pytest.raises(Exception, match="datasets.bbc.source.path"):
            plan.dataset_files("bbc")


def test_per_job_functions_carry_their_signature_for_snakemake():
    """Snakemake reads ``_overwrite_params`` instead of inspect.signature per call; it must be
    exactly the signature, so Snakemake passes the same arguments as without it."""
    import inspect

    plan = plan_of(config())
    f = plan.per_job(plan.score_inputs)
    assert getattr(f, SNAKEMAKE_PARAMS_ATTR) == inspect.signature(f).parameters
    assert list(getattr(f, SNAKEMAKE_PARAMS_ATTR)) == ["wildcards"]
    w = {"dataset": "bbc", "source": "smollm2-pure/seed1", "entry": "mauve", "model": "x"}
    assert f(w) == plan.score_inputs("bbc", "smollm2-pure/seed1", "mauve")
    for func in [*plan.rule_resources("generate").values(), plan.rule_threads("embed")]:
        assert getattr(func, SNAKEMAKE_PARAMS_ATTR) == inspect.signature(func).parameters


def _closure_as_before(name: str) -> dict[str, str]:
    """provenance._closure without the parse cache: every file parsed on the spot; follows
    every import of a subpackage module of the package, skips boundary modules."""
    package = name.split(".")[0]
    done: dict[str, str] = {}
    todo = [name]
    while todo:
        current = todo.pop()
        if current in done:
            continue
        spec = provenance._find_spec(current)
        path = provenance._source_file(spec)
        if path is None:
            continue
        tree = provenance._strip_docstrings(ast.parse(path.read_text(encoding="utf-8")))
        marked = provenance.BOUNDARY_MARK in {
            t.id
            for n in tree.body
            if isinstance(n, ast.Assign)
            for t in n.targets
            if isinstance(t, ast.Name)
        }
        if marked and current != name:
            continue
        imports = provenance._imports(tree, current, provenance._is_package(spec))
        done[current] = ast.dump(provenance._PathFree(package).visit(tree))
        for module, names in imports:
            parts = module.split(".")
            if parts[0] != package or len(parts) < 2:
                continue
            if len(parts) == 2 and not provenance._is_package(provenance._find_spec(module)):
                continue  # a top-level module
            subs = [f"{module}.{n}" for n in names if n != "*"]
            found = [m for m in subs if provenance._source_file(provenance._find_spec(m))]
            todo.extend(found)
            if not names or len(found) < len(names):
                todo.append(module)
    return done


def test_code_digests_equal_the_digest_computed_file_by_file():
    plan = plan_of(config())
    groups = [
        ("genmetrics.metrics.mauve",),
        ("genmetrics.metrics.precision_recall", "genmetrics.scoring.intervals"),
        (
            "genmetrics.metrics.face",
            "genmetrics.scoring.length_control",
            "genmetrics.scoring.intervals",
        ),
        (
            "genmetrics.generation.transformers_backend",
            "genmetrics.data.prompts",
            "genmetrics.data.clean",
        ),
        ("genmetrics.features.embed",),
    ]
    provenance.code_digest.cache_clear()
    for modules in groups:
        code: dict[str, str] = {}
        for m in modules:
            code.update(_closure_as_before(m))
        h = hashlib.sha256()
        for digest in sorted(hashlib.sha256(c.encode()).hexdigest() for c in code.values()):
            h.update(f"{digest}\n".encode())
        assert provenance.code_digest(*modules) == h.hexdigest()[:16], modules
    for entry in plan.entries:
        assert plan.score_code(entry) == plan.score_code.__wrapped__(plan, entry)


def _dry_counts(tmp_path: Path, cfg: dict) -> dict[str, int]:
    path = tmp_path / "big.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    cmd = [str(BIN / "snakemake"), "-n", "--cores", "2", "--quiet", "rules"]
    cmd += ["--snakefile", str(REPO / "Snakefile"), "--directory", str(tmp_path)]
    cmd += ["--configfile", str(path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    table = (proc.stdout + proc.stderr).split("Job stats:")[-1]
    return {m[0]: int(m[1]) for m in re.findall(r"^(\w+)\s+(\d+)\s*$", table, re.M)}


def expected_counts(models: int, seeds: int) -> dict[str, int]:
    """Jobs per rule of the demo config with ``models`` models × ``seeds`` seeds (one dataset,
    its 33 entries): per run (model, seed) one generate, merge, surprisal and POS job, three
    embeddings (smollm2 of the text and of the continuation, minilm) and 28 scores; the
    references add one of each feature job and 17 scores; spread one job per model."""
    runs = models * seeds
    counts = dict.fromkeys(
        ["fetch_dataset", "clean_dataset", "check_sizes", "make_prompts", "aggregate"], 1
    )
    counts.update(dict.fromkeys(["featurizer_robustness", "pr_curves", "spectra_figure"], 1))
    counts.update(dict.fromkeys(["spread_table", "correlation_heatmap", "length_analysis"], 1))
    counts.update(dict.fromkeys(["mauve_bars", "pr_scatter", "html_report", "all"], 1))
    counts.update(dict.fromkeys(["paired_differences", "paired_figure", "sample_size"], 1))
    counts.update(fetch_asset=2, fetch_model=3, generate=runs, merge_generations=runs)
    counts.update(embed=3 * (runs + 1), pos_tags=runs + 1, surprisal=runs + 1)
    counts.update(score=28 * runs + 17, spread=models)
    counts["total"] = sum(counts.values())
    return counts


def test_dry_run_of_a_bigger_config_has_the_jobs_its_shape_implies(tmp_path):
    assert expected_counts(3, 1)["total"] + 35 == 188  # the demo: smollm2-pure has 2 seeds
    assert _dry_counts(tmp_path, big_config(6, 2)) == expected_counts(6, 2)


@pytest.mark.slow
def test_dry_run_of_100_models_by_5_seeds(tmp_path):
    counts = _dry_counts(tmp_path, big_config(100, 5))
    assert counts == expected_counts(100, 5)
    assert counts["total"] == 17645


# ------------------------------------------------- code digests remembered between processes


def _new_process(monkeypatch) -> None:
    """Forget what this process computed and read, as a new process would."""
    provenance._write_store()
    provenance.code_digest.cache_clear()
    provenance._parse_module.cache_clear()
    monkeypatch.setattr(provenance, "_store", None)
    monkeypatch.setattr(provenance, "_store_dirty", False)


def _fresh_digest(monkeypatch, *modules: str) -> str:
    """The digest computed from the files, with no store."""
    provenance.code_digest.cache_clear()
    with monkeypatch.context() as m:
        m.delenv("GENMETRICS_CACHE")
        return provenance.code_digest(*modules)


def test_stored_code_digest_is_used_only_while_its_files_are_unchanged(
    pkgx,  # noqa: F811 (test_provenance's fixture)
    tmp_path,
    monkeypatch,
):
    import test_provenance

    cache = tmp_path / "cache"
    monkeypatch.setenv("GENMETRICS_CACHE", str(cache))
    _new_process(monkeypatch)
    base = provenance.code_digest("pkgx.metrics.a")
    assert base == _fresh_digest(monkeypatch, "pkgx.metrics.a")
    _new_process(monkeypatch)
    stored = (cache / provenance.DIGEST_STORE).read_text()
    assert base in stored and "pkgx.metrics._b" in stored and "pkgx.metrics.a" in stored

    # a new process answers from the store, without reading the code's structure
    def no_closure(*args, **kwargs):
        raise AssertionError("computed again")

    with monkeypatch.context() as m:
        m.setattr(provenance, "_closure", no_closure)
        assert provenance.code_digest("pkgx.metrics.a") == base

    # a code change in the imported _b: the stored digest is not used
    _new_process(monkeypatch)
    (pkgx / "_b.py").write_text(test_provenance.B_SRC.replace("2 * x", "x * 2"))
    changed = provenance.code_digest("pkgx.metrics.a")
    assert changed != base and changed == _fresh_digest(monkeypatch, "pkgx.metrics.a")

    # a name that becomes a module (pkgx.metrics.helper imported, now a file): not used
    _new_process(monkeypatch)
    (pkgx / "a.py").write_text(test_provenance.A_SRC.replace("import _b", "import _b, helper"))
    before = provenance.code_digest("pkgx.metrics.a")
    _new_process(monkeypatch)
    (pkgx / "helper.py").write_text("def h():\n    return 3\n")
    after = provenance.code_digest("pkgx.metrics.a")
    assert after != before and after == _fresh_digest(monkeypatch, "pkgx.metrics.a")

    # a damaged store, or one of another digest algorithm: ignored
    for text in ["{not json", '{"context": "other", "digests": {}}']:
        _new_process(monkeypatch)
        (cache / provenance.DIGEST_STORE).write_text(text)
        with monkeypatch.context() as m:
            m.setattr(provenance, "_store_dirty", True)  # not rewritten by _new_process
            assert provenance.code_digest("pkgx.metrics.a") == after
