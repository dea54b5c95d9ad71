"""The two reports: Snakemake's (``snakemake --report``, `make report`: every figure wrapped in
``report()`` with a caption that renders) and the one-page summary (genmetrics.report), built
from the same figure files. The real ``snakemake --report`` runs in
tests/test_workflow.py::test_offline_run_snakemake_report."""

from __future__ import annotations

import base64
import re
from dataclasses import fields

import pandas as pd
import pytest
import yaml
from conftest import REPO, placeholder_checkpoint

from genmetrics.paths import RESULTS
from genmetrics.plan import load_plan

RULES = sorted((REPO / "rules").glob("*.smk"))
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
#: figures of optional targets, not of `all` (`snakemake sweeps`, `snakemake omniinput`)
OPTIONAL = {
    RESULTS.sweep_figure,
    RESULTS.omni_toy_figure,
    RESULTS.omni_figure,
    RESULTS.omni_compare_figure,  # omniinput.comparisons (make omniinput-compare)
    RESULTS.agreement_figure,
}
REPORT_CALL = re.compile(r"report\(\s*RESULTS\.(\w+),\s*caption=\"([^\"]+)\"", re.S)


def _wrapped() -> dict[str, str]:
    """Result path → caption file of every output wrapped in report() in rules/*.smk."""
    out = {}
    for rule_file in RULES:
        for name, caption in REPORT_CALL.findall(rule_file.read_text()):
            path = getattr(RESULTS, name)
            out[path] = str((rule_file.parent / caption).resolve())
    return out


def _figures() -> set[str]:
    paths = [getattr(RESULTS, f.name) for f in fields(RESULTS)]
    return {p for p in paths if p.endswith(".png")}


def test_every_figure_is_wrapped_in_report_with_a_caption():
    wrapped = _wrapped()
    assert _figures() - set(wrapped) == set()
    for path in (
        RESULTS.headline_table,
        RESULTS.scores,
        RESULTS.agreement_summary_table,
    ):  # tables too
        assert path in wrapped
    # every .png a rule writes is one of the result tables' figures
    for rule_file in RULES:
        assert ".png" not in rule_file.read_text(), rule_file


def test_captions_exist_render_and_cite():
    from docutils.core import publish_parts

    captions = {*_wrapped().values()}
    captions |= {str(p.resolve()) for p in (REPO / "workflow" / "report").glob("*.rst")}
    for cap in sorted(captions):
        text = open(cap, encoding="utf-8").read()
        # Snakemake renders captions with Jinja first: `{{ snakemake.output.x }}` → a path
        text = re.sub(r"\{\{[^}]*\}\}", str(REPO / "README.md"), text)
        # halt on warnings: an unescaped |x| (a substitution) or a bad directive fails here
        publish_parts(text, writer="html", settings_overrides={"halt_level": 2})
    for path, cap in _wrapped().items():
        if path.endswith(".png") and "workflow.rst" not in cap:
            body = open(cap, encoding="utf-8").read()
            assert re.search(r"\(\d{4}\)|\d{4}\)|et al\.", body), cap  # cites a paper


@pytest.mark.parametrize("config", [REPO / ".test" / "config.yaml", REPO / "config.yaml"])
def test_report_figures_are_the_html_report_figures(config, monkeypatch, tmp_path):
    """The figures of `all` (in the HTML summary: TARGETS.figures) are all in the Snakemake
    report, and every wrapped figure not of an optional target can be one of them."""
    monkeypatch.setenv("GENMETRICS_REPO", str(REPO))
    monkeypatch.setenv("GENMETRICS_TINY_MODEL", str(placeholder_checkpoint(tmp_path / "m")))
    plan = load_plan(yaml.safe_load(config.read_text()), SCHEMA)
    wrapped = {p for p in _wrapped() if p.endswith(".png")}
    assert set(plan.targets.figures) <= wrapped
    always = {RESULTS.correlation_figure, RESULTS.pr_figure, RESULTS.length_figure}
    assert always <= set(plan.targets.figures)
    conditional = {
        RESULTS.pr_curves_figure,
        RESULTS.spectra_figure,
        RESULTS.scaling_figure,
        RESULTS.scaling_spectra_figure,
        RESULTS.mauve_bars_figure,  # with a mauve entry
        RESULTS.few_shot_figure,  # with few-shot datasets
    }
    assert wrapped - OPTIONAL == always | conditional


def test_pr_scatter_rule_reads_the_spread_records():
    text = (REPO / "rules" / "report.smk").read_text()
    rule = text[text.index("rule pr_scatter:") : text.index("rule html_report:")]
    assert "spreads=TARGETS.spreads" in rule and "templates=" in rule
    assert "RESULTS.overlap_table" in rule


def test_one_page_report_embeds_every_figure(tmp_path):
    from genmetrics.analysis.pr_plane import plane_tables
    from genmetrics.figures.precision_recall import pr_scatter
    from genmetrics.report import write_html_report

    rows = [
        ["ds", m, s, "references", "precision_recall", "pr", n, v]
        for m, s in (("a", 0), ("a", 1), ("b", 0))
        for n, v in (("precision", 0.5 + 0.1 * s), ("recall", 0.6 - 0.05 * s))
    ]
    cols = ["dataset", "model", "seed", "reference", "metric", "entry", "name", "value"]
    scores = tmp_path / "results" / "scores.csv"
    scores.parent.mkdir()
    pd.DataFrame(rows, columns=cols).to_csv(scores, index=False)
    fig = tmp_path / "results" / "figures" / "precision_recall.png"
    pr_scatter(*plane_tables(pd.read_csv(scores)), fig)
    out = tmp_path / "results" / "report.html"
    write_html_report(out, scores, [fig])
    page = out.read_text()
    assert base64.b64encode(fig.read_bytes()).decode() in page
    assert "<table" in page and "0.55 ± 0.071" in page  # a's precision over its two seeds


def test_make_demo_writes_the_snakemake_report():
    """`make demo` ends with the report the README promises, as `make report` writes it."""
    make = (REPO / "Makefile").read_text()
    demo = re.search(r"^demo: .*\n((?:\t.*\n)+)", make, re.M)
    assert demo, "no `demo` target"
    lines = [line.strip() for line in demo.group(1).splitlines()]
    run = "$(BIN)/snakemake --cores $(CORES) --configfile config.yaml --rerun-incomplete"
    report = (
        "$(BIN)/snakemake --cores $(CORES) --configfile config.yaml "
        "--report results/snakemake_report.html"
    )
    assert run in lines and report in lines
    assert lines.index(report) == lines.index(run) + 1  # after the run, before the messages


def test_make_report_target():
    make = (REPO / "Makefile").read_text()
    rule = re.search(r"^report: .*\n((?:\t.*\n)+)", make, re.M)
    assert rule, "no `report` target"
    assert "--report results/snakemake_report.html" in rule.group(1)
    assert "$(BIN)/snakemake --cores $(CORES) --configfile config.yaml" in rule.group(1)
