"""The two reports: Snakemake's (``snakemake --report``, `make report`: every figure wrapped in
``report()`` with a caption that renders) and the one-page summary (genmetrics.report.html), built
from the same figure files. The real ``snakemake --report`` runs in
tests/test_workflow.py::test_offline_run_snakemake_report."""

from __future__ import annotations

import base64
import html
import json
import re
from dataclasses import fields
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import REPO, placeholder_checkpoint

from genmetrics import GenmetricsError
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
    per_dataset = {
        RESULTS.paired_figure.format(dataset=ds): RESULTS.paired_figure for ds in plan.datasets
    }
    figures = {per_dataset.get(f, f) for f in plan.targets.figures}  # as the rules' patterns
    assert figures <= wrapped
    always = {RESULTS.correlation_figure, RESULTS.pr_figure, RESULTS.length_figure}
    always |= {RESULTS.paired_figure}  # one per dataset
    assert always <= figures
    conditional = {
        RESULTS.pr_curves_figure,
        RESULTS.spectra_figure,
        RESULTS.scaling_figure,
        RESULTS.scaling_spectra_figure,
        RESULTS.mauve_bars_figure,  # with a mauve entry
        RESULTS.few_shot_figure,  # with few-shot datasets
        RESULTS.featurizer_robustness_figure,  # with entries differing only in featurizer
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
    from genmetrics.report.html import write_html_report

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
    write_html_report(out, scores, [fig], captions=CAPTION_FILES)
    page = out.read_text()
    assert base64.b64encode(fig.read_bytes()).decode() in page
    assert "<table" in page and "0.55 ± 0.071" in page  # a's precision over its two seeds


CAPTION_FILES = sorted((REPO / "workflow" / "report").glob("*.rst"))


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


def test_the_one_page_captions_are_the_report_flags_captions():
    """genmetrics.report.captions.CAPTIONS names, for every figure, the caption file its report()
    flag names: the one-page summary shows the Snakemake report's captions."""
    from genmetrics.report.captions import CAPTIONS, caption_of

    flags: dict[str, set[str]] = {}
    for _, result, caption, _ in _report_flags():
        flags.setdefault(getattr(RESULTS, result), set()).add(Path(caption).name)
    figures = {p: names for p, names in flags.items() if p.endswith(".png")}
    single = {p: names.pop() for p, names in figures.items() if len(names) == 1}
    assert {p: c.file for p, c in CAPTIONS.items()} == single
    assert set(figures) - set(single) == {RESULTS.agreement_figure}  # one caption per kind
    # a figure file, as a job's input names it, finds its caption (wildcards too)
    assert caption_of("results/figures/precision_recall.png").file == "pr_scatter.rst"
    name = "results/figures/omniinput_compare_smollm-vs-gemma.png"
    assert caption_of(name).file == "omniinput_compare.rst"
    with pytest.raises(GenmetricsError, match="no caption names this figure"):
        caption_of("results/figures/other.png")


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


def _one_page_case(tmp_path: Path) -> tuple[Path, Path, list[Path], Path]:
    """A run's files: scores of two models (two seeds) and the human texts, MAUVE scored on
    the models only; one generation stats file with nested records and nulls; two figures."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    res = tmp_path / "results"
    (res / "figures").mkdir(parents=True)
    rows = [
        ["ds", m, s, "references", "precision_recall", "pr", n, v]
        for m, s in (("a", 0), ("a", 1), ("b", 0))
        for n, v in (("precision", 0.5 + 0.1 * s), ("recall", 0.6 - 0.05 * s))
    ]
    rows += [["ds", "a", 0, "references", "mauve", "mauve", "mauve", 0.9]]
    sources = (("a", 0), ("a", 1), ("b", 0), ("references", None))
    rows += [
        ["ds", m, s, None, "perplexity", "perplexity", "perplexity", 20.0 + i]
        for i, (m, s) in enumerate(sources)
    ]
    rows += [["ds", m, s, "references", "face", "face", "so", 0.8] for m, s in sources[:3]]
    rows += [
        ["ds", m, s, None, "distinct_n", "distinct_n", "distinct_1", 0.4 + 0.1 * i]
        for i, (m, s) in enumerate(sources)
    ]
    cols = ["dataset", "model", "seed", "reference", "metric", "entry", "name", "value"]
    frame = pd.DataFrame(rows, columns=cols)
    # the sizes aggregate writes beside each value: 3 texts, against 3 references if any
    frame["n_candidate"] = 3
    frame["n_reference"] = [3 if r else None for r in frame.reference]
    scores = res / "scores.csv"
    frame.to_csv(scores, index=False)
    pr = res / "figures" / "precision_recall.png"
    length = res / "figures" / "length_correlation.png"
    for i, path in enumerate((pr, length)):  # what they draw does not matter here
        fig, ax = plt.subplots(figsize=(3, 2))
        ax.plot([0, 1], [i, 1 - i])
        fig.savefig(path, dpi=50)
        plt.close(fig)
    stats = res / "generations" / "ds" / "a" / "seed0.stats.json"
    stats.parent.mkdir(parents=True)
    record = {
        "texts": 3,
        "new_tokens": 30,
        "seconds": 0.123456,
        "shards": 1,
        "dtype": None,
        "devices": [{"name": "cpu", "devices": ["cpu"], "device_map": {}}],
        "provenance": [{"config": {"seed": 0, "instruction": None}, "versions": {"x": "1"}}],
    }
    stats.write_text(json.dumps(record))
    return scores, stats, [pr, length], res / "report.html"


def test_one_page_report_is_readable(tmp_path):
    """No Python literal on the page (no dict, no None): records are key: value lists, a
    missing value is a dash with its reason; every figure sits under its title and caption
    (rendered from the same .rst as the Snakemake report's); a figure without a caption stops."""
    from genmetrics.report.captions import CAPTIONS, caption_html
    from genmetrics.report.html import MISSING, write_html_report

    scores, stats, figures, out = _one_page_case(tmp_path)
    write_html_report(out, scores, figures, [stats], captions=CAPTION_FILES)
    page = out.read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", " ", page))
    assert "None" not in text and "{'" not in text and "nan" not in text.split()
    flat = " ".join(text.split())
    # b has no MAUVE and the human texts no FACE (a comparison with them): dashes, the
    # latter with its reason
    assert page.count(f"<td class='na' title='not scored'>{MISSING}</td>") == 2
    assert (
        f"{MISSING} in the row of the human texts (references): not computed (face: it "
        "compares each model's texts with the human texts)."
    ) in flat
    assert "0.45 ± 0.071" in flat  # a's distinct_1 over its two seeds
    # the generation record: dtype missing, devices and provenance as key: value lists
    assert "cpu" in flat and "0.1235" in flat and "instruction :" in flat
    assert "'name'" not in page and "device_map" not in flat.split("Provenance")[0]
    # figures: title, image, caption of the report() flag's .rst
    for fig in figures:
        caption = CAPTIONS[f"results/figures/{fig.name}"]
        assert f"<h3>{caption.title}</h3>" in page
        rst = next(f for f in CAPTION_FILES if f.name == caption.file)
        assert caption_html(rst) in page
    assert page.count("<figcaption>") == 2
    # the headline caption introduces the scores, its included table dropped
    assert "The headline scores: per dataset and model" in page
    assert "snakemake.output" not in page
    with pytest.raises(GenmetricsError, match="no caption names this figure"):
        other = figures[0].with_name("other.png")
        other.write_bytes(figures[0].read_bytes())
        write_html_report(out, scores, [other], captions=CAPTION_FILES)
    with pytest.raises(GenmetricsError, match="caption pr_scatter.rst is not among"):
        write_html_report(out, scores, figures[:1], captions=CAPTION_FILES[:2])


def test_empty_outputs_are_left_out_of_the_one_page_report(tmp_path):
    """A figure whose data had nothing to draw (here the length figure with no score of the
    mean length, and a PR plane of no precision_recall scores) carries the reason in its PNG
    and is left out: no image, no title, no caption, only its path and reason in a note; the
    paired and sample-size tables with a header and no rows get no section at all."""
    from genmetrics.figures._save import empty_reason
    from genmetrics.figures.length import length_figure
    from genmetrics.figures.precision_recall import pr_curves
    from genmetrics.report.html import write_html_report

    scores, stats, figures, out = _one_page_case(tmp_path)
    pr, length = figures
    assert empty_reason(pr) is None  # a PNG written by anyone: drawn
    length_figure(pd.DataFrame(columns=["spearman", "n"]), length, n_sources=0)
    assert empty_reason(length) == "no score reports the mean length (mean_words)"
    curves = pr.with_name("pr_curves.png")
    pr_curves([], curves)
    assert empty_reason(curves) == "no prd scores configured"
    paired = tmp_path / "paired.csv"
    paired.write_text("dataset,entry,value,model_a,model_b,difference,lower,upper,p,p_holm,p_bh\n")
    sizes = tmp_path / "sizes.csv"
    sizes.write_text("dataset,entry,value,model,target,n_texts,n_needed\n")
    write_html_report(
        out,
        scores,
        [pr, length, curves],
        [stats],
        captions=CAPTION_FILES,
        paired_csv=paired,
        sample_size_csv=sizes,
    )
    page = out.read_text(encoding="utf-8")
    assert page.count("<figure") == page.count("<img") == 1
    assert "The precision–recall plane" in page
    assert "Which scores follow text length" not in page and "curves (PRD)" not in page
    assert "Left out, with nothing to draw" in page
    assert f"{length.as_posix()}: no score reports the mean length (mean_words)" in page
    assert "Which model is better" not in page and "How many texts" not in page
    # no paragraph of a caption ends on a colon with nothing after it
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", page, re.S)
    paragraphs = [re.sub(r"<[^>]+>", "", p).strip() for c in captions for p in c.split("</p>")]
    assert captions and not [p for p in paragraphs if p.endswith(":")]


def test_one_page_report_in_a_headless_browser(tmp_path):
    """The page in Chromium: every image loads, every table has rows, every figure shows its
    caption, no console error, and the visible text has no None and no dict."""
    from browser import broken_images, headless_chromium, open_page, severe_console

    from genmetrics.report.html import write_html_report

    scores, stats, figures, out = _one_page_case(tmp_path)
    write_html_report(out, scores, figures, [stats], captions=CAPTION_FILES)
    with headless_chromium() as driver:
        open_page(driver, out)
        assert broken_images(driver) == []
        assert driver.execute_script("return document.images.length") == len(figures)
        rows = driver.execute_script(
            "return [...document.querySelectorAll('table')]"
            ".map(t => t.offsetHeight > 0 ? t.tBodies[0].rows.length : -1)"
        )
        assert rows and all(n > 0 for n in rows), rows
        captions = driver.execute_script(
            "return [...document.querySelectorAll('figure')]"
            ".map(f => [f.querySelector('img').naturalWidth, f.querySelector('figcaption').innerText])"
        )
        assert [c[1].split()[:3] for c in captions] == [
            ["The", "precision–recall", "plane"],
            ["Which", "scores", "mostly"],
        ]
        body = driver.execute_script(
            "document.querySelectorAll('details').forEach(d => d.open = true);"
            "return document.body.innerText"
        )
        assert "None" not in body and "{'" not in body and "cpu" in body
        assert severe_console(driver) == []


def test_make_demo_writes_the_snakemake_report():
    """`make demo` ends with the report the README promises, as `make report` writes it."""
    make = (REPO / "Makefile").read_text()
    demo = re.search(r"^demo: .*\n((?:\t.*\n)+)", make, re.M)
    assert demo, "no `demo` target"
    lines = [line.strip() for line in demo.group(1).splitlines()]
    run = (
        "$(BIN)/snakemake --cores $(CORES) $(LOCAL_THREADS) --configfile config.yaml "
        "--rerun-incomplete"
    )
    report = (
        "$(BIN)/snakemake --cores $(CORES) --configfile config.yaml "
        "--report results/snakemake_report.html --report-stylesheet workflow/report/stylesheet.css"
    )
    assert run in lines and report in lines
    assert lines.index(report) == lines.index(run) + 1  # after the run, before the messages


def test_make_report_target():
    make = (REPO / "Makefile").read_text()
    rule = re.search(r"^report: .*\n((?:\t.*\n)+)", make, re.M)
    assert rule, "no `report` target"
    assert (
        "--report results/snakemake_report.html --report-stylesheet workflow/report/stylesheet.css"
    ) in rule.group(1)
    assert (REPO / "workflow" / "report" / "stylesheet.css").is_file()
    assert "$(BIN)/snakemake --cores $(CORES) --configfile config.yaml" in rule.group(1)


def test_a_study_s_figures_find_their_captions():
    """A study writes under its own results_dir (results/<study>/figures/...): its figures
    have the captions of the default tree's (the one-page report of a study needs them)."""
    from genmetrics.paths import RESULTS
    from genmetrics.report.captions import CAPTIONS, caption_of

    study = RESULTS.under("results/webtext")
    assert caption_of(study.pr_figure) == CAPTIONS[RESULTS.pr_figure]
    assert caption_of(study.length_figure) == CAPTIONS[RESULTS.length_figure]
    with pytest.raises(GenmetricsError, match="no caption"):
        caption_of("results/webtext/figures/unknown.png")
