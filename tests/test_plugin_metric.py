"""A metric registered outside genmetrics reaches every output with no edit elsewhere: its
facts travel with its registration.

``tests/toy_metric.py`` registers ``toy_vowels`` (family lexical, headline ``vowel_share``
in %) and is loaded as a plugin (``GENMETRICS_METRIC_MODULES=toy_metric``, ``tests/`` on
``PYTHONPATH``). The plan accepts an entry using it, and a real Snakemake run on imported
texts (no LM: ``.test/data/texts.jsonl`` as both the dataset and a model's texts, ~20 s on 2
cores) writes its rows in ``scores.csv``, its column with arrow and scale (the tables' 0–1 for
its %) in the headline table and shows it in the HTML report.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO
from test_workflow import snakemake

from genmetrics import GenmetricsError
from genmetrics.analysis.aggregate import read_scores
from genmetrics.metrics import registry
from genmetrics.metrics.registry import PLUGIN_ENV, SCALES, get
from genmetrics.plan import load_plan

PLUGIN = "toy_metric"
TESTS = Path(__file__).resolve().parent
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
CONFIG = {
    "datasets": {
        "stories": {  # as in .test/config.yaml
            "source": {"kind": "local", "path": "$GENMETRICS_REPO/.test/data/texts.jsonl"},
            "format": "jsonl",
            "label_fields": ["topic"],
            "clean": {"min_words": 12, "truncate_words": 18},
            "prompts": {"words": 6},
        }
    },
    "checkpoints": {},
    "models": {  # imported texts, resampled per seed: no LM to run
        "humans": {
            "texts": {
                "source": {"kind": "local", "path": "$GENMETRICS_REPO/.test/data/texts.jsonl"},
                "format": "jsonl",
            },
            "seeds": [0, 1],
        }
    },
    "metrics": {"toy": {"metric": "toy_vowels"}},
}
# the entry, its direction and its scale, all from the registration (a % reads 0–1 in tables)
HEADER = "toy ↑ (0–1)"


@pytest.fixture
def plugin(monkeypatch):
    """The plugin loaded in this process; the registry as it was afterwards."""
    registry.all_metrics()  # the built-in ones registered first: the copy below holds them
    monkeypatch.setenv(PLUGIN_ENV, PLUGIN)
    monkeypatch.setenv("GENMETRICS_REPO", str(REPO))
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    sys.modules.pop(PLUGIN, None)
    yield
    sys.modules.pop(PLUGIN, None)


def test_plugin_metric_is_registered_with_its_facts(plugin):
    m = get("toy_vowels")
    assert (m.family, m.headline, m.scale("vowel_share")) == ("lexical", ("vowel_share",), "%")
    assert m.func.__module__ == PLUGIN


def test_a_plugin_that_cannot_be_imported_is_named(monkeypatch):
    monkeypatch.setenv(PLUGIN_ENV, " , no_such_plugin_module")  # blanks are skipped
    with pytest.raises(GenmetricsError, match=f"{PLUGIN_ENV}: cannot import 'no_such_plugin"):
        get("bleu")


def test_get_imports_the_metric_s_own_module_first():
    """``get`` in a fresh process: a metric in the module named after it imports that module
    (and what it needs) only; a metric registered elsewhere, or an unknown name, imports every
    module, so the error lists every metric."""
    import json
    import subprocess

    code = (
        "import sys\n"
        "from genmetrics.metrics.registry import get\n"
        "get(sys.argv[1])\n"
        "import json\n"
        "print(json.dumps([m for m in sys.modules if m.startswith('genmetrics.metrics.')]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    env.pop(PLUGIN_ENV, None)

    def loaded(name: str) -> set[str]:
        out = subprocess.run(
            [sys.executable, "-c", code, name], env=env, capture_output=True, text=True
        )
        assert out.returncode == 0, out.stderr
        return set(json.loads(out.stdout))

    alone = loaded("precision_recall")
    assert "genmetrics.metrics.precision_recall" in alone
    assert not alone & {"genmetrics.metrics.face", "genmetrics.metrics.mauve"}
    every = loaded("distinct_n")  # registered in genmetrics.metrics.repetition
    assert {"genmetrics.metrics.face", "genmetrics.metrics.repetition"} <= every
    with pytest.raises(GenmetricsError, match="known metrics: .*precision_recall"):
        get("no_such_metric")


def test_plugin_metric_reaches_the_plan(plugin):
    plan = load_plan(CONFIG, SCHEMA)
    assert plan.entries["toy"].metric == "toy_vowels"
    assert plan.score_targets() == [
        f"results/scores/stories/{source}/toy.json"
        for source in ("references", "humans/seed0", "humans/seed1")
    ]


def test_plugin_metric_reaches_scores_headline_table_and_report(tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(yaml.safe_dump(CONFIG))
    path = os.pathsep.join(p for p in (str(TESTS), os.environ.get("PYTHONPATH")) if p)
    env = {PLUGIN_ENV: PLUGIN, "PYTHONPATH": path}
    targets = ("results/scores.csv", "results/scores_headline.md", "results/report.html")
    snakemake(
        *("--configfile", str(cfg), "--cores", "2", "--scheduler", "greedy", *targets),
        cwd=tmp_path,
        env=env,
    )
    scores = read_scores(tmp_path / "results/scores.csv")
    toy = scores[scores["entry"] == "toy"]
    assert set(toy["metric"]) == {"toy_vowels"}
    sources = {(m, "-" if pd.isna(s) else int(s)) for m, s in zip(toy.model, toy.seed, strict=True)}
    assert sources == {("references", "-"), ("humans", 0), ("humans", 1)}
    assert set(toy["name"]) == {"vowel_share", "letters", "mean_words"}
    assert toy.loc[toy["name"] == "vowel_share", "value"].between(0, 100).all()
    md = (tmp_path / "results/scores_headline.md").read_text(encoding="utf-8")
    section = md.split("## lexical")[1]  # its registered family
    assert f"| dataset | model | n texts | {HEADER} |" in section
    assert "| stories | humans |" in section and "| stories | references |" in section
    assert f"(0–1) {SCALES['0–1']}" in md  # the legend explains its scale
    assert "Divided by 100 in this table: toy_vowels: vowel_share." in md  # from its %
    page = (tmp_path / "results/report.html").read_text(encoding="utf-8")
    assert HEADER in page and "<h3>lexical</h3>" in page
