"""The two reports: Snakemake's (``snakemake --report``, `make report`: every figure wrapped in
``report()`` with a caption that renders) and the one-page summary (genmetrics.report), built
from the same figure files. The real ``snakemake --report`` runs in
tests/test_workflow.py::test_offline_run_snakemake_report."""

from __future__ import annotations

import base64
import re
from dataclasses import fields
from pathlib import Path

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


#: a table as its caption includes it: Markdown (``.. include:: ... :literal:``) or CSV
#: (``.. csv-table:: :file: ...``), with a row a test can find in the rendered caption
TABLE_ROW = ("stories", "tiny-pure", "0.8661 ± 0.18")


def _render_like_snakemake(caption: str | Path, tmp_path: Path) -> str:
    """The caption as ``snakemake --report`` renders it: Jinja (each ``snakemake.output.x``
    bound to a small table file of the kind its directive reads), then docutils to HTML,
    stopping on warnings (an unescaped |x|, a bad directive, an unreadable table)."""
    from docutils.core import publish_parts
    from jinja2 import Environment

    text = Path(caption).read_text(encoding="utf-8")
    outputs = {}
    for key in re.findall(r"snakemake\.output\.(\w+)", text):
        csv = re.search(r"csv-table::\s*\n\s+:file: \{\{ *snakemake\.output\." + key, text)
        path = tmp_path / (f"{key}.csv" if csv else f"{key}.md")
        head, row = ("dataset", "model", "score"), TABLE_ROW
        if csv:
            path.write_text(",".join(head) + "\n" + ",".join(row) + "\n", encoding="utf-8")
        else:
            lines = ["| " + " | ".join(cells) + " |" for cells in (head, ("---",) * 3, row)]
            path.write_text("# Table\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
        outputs[key] = str(path)
    snakemake = type("Snakemake", (), {"output": type("Output", (), outputs)})
    text = Environment(trim_blocks=True, lstrip_blocks=True).from_string(text)
    settings = {"halt_level": 2, "report_level": 2}
    return publish_parts(
        text.render(snakemake=snakemake), writer="html", settings_overrides=settings
    )["body"]


def test_captions_exist_render_and_cite(tmp_path):
    captions = {*_wrapped().values()}
    captions |= {str(p.resolve()) for p in (REPO / "workflow" / "report").glob("*.rst")}
    for cap in sorted(captions):
        _render_like_snakemake(cap, tmp_path)
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


def _report_flags() -> list[tuple[str, str, str, str]]:
    """(rule, RESULTS name, caption file, the rule's text) of every report() flag."""
    out = []
    for rule_file in RULES:
        text = rule_file.read_text()
        rules = re.split(r"^(?=rule \w+:)", text, flags=re.M)
        for rule in rules:
            name = re.match(r"rule (\w+):", rule)
            for result, caption in REPORT_CALL.findall(rule):
                path = str((rule_file.parent / caption).resolve())
                out.append((name[1] if name else "?", result, path, rule))
    return out


def test_every_table_in_the_report_shows_its_table(tmp_path):
    """Every table wrapped in report() shows as a table in its caption (a Markdown file
    included literally, or the CSV as an HTML table), the file being an output of the same
    rule; only the tidy scores.csv is a download alone (its readable form is the headline
    table)."""
    tables = [f for f in _report_flags() if not getattr(RESULTS, f[1]).endswith(".png")]
    assert len(tables) >= 8
    for rule, result, caption, rule_text in tables:
        if result == "scores":
            continue
        text = Path(caption).read_text(encoding="utf-8")
        output = r"\{\{ *snakemake\.output\.(\w+) *\}\}"
        keys = re.findall(r"^\.\. include:: *" + output, text, re.M)
        keys += re.findall(r"^\.\. csv-table::.*\n(?:\s+:.*\n)*?\s+:file: *" + output, text, re.M)
        assert keys, f"{caption} ({rule}: {result}) does not show its table"
        for key in keys:
            assert re.search(rf"^\s+{key}=", rule_text, re.M), (rule, key)
        body = _render_like_snakemake(caption, tmp_path)
        shown = re.sub(r"<[^>]+>", " ", body)
        assert all(cell in shown for cell in TABLE_ROW), (caption, body[-500:])


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
