"""The metric table of the README and of the documentation's metrics page is generated from
the registry (`genmetrics list --markdown`); the contributor's map names what exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from genmetrics.cli import markdown_table
from genmetrics.metrics import all_metrics

README = Path(__file__).resolve().parents[1] / "README.md"
METRICS_PAGE = README.parent / "docs" / "metrics" / "index.md"


@pytest.mark.parametrize("page", [README, METRICS_PAGE], ids=lambda p: p.name)
def test_metric_table_is_current(page):
    text = page.read_text(encoding="utf-8")
    m = re.search(r"<!-- metrics:start -->\n(.*?)\n<!-- metrics:end -->", text, re.S)
    assert m, f"{page} has no <!-- metrics:start --> ... <!-- metrics:end --> block"
    want = markdown_table([x.describe() for x in all_metrics().values()])
    assert m.group(1) == want, (
        f"{page}'s metric table is stale: regenerate it with `genmetrics list --markdown`"
    )


def test_every_metric_cites_a_paper_by_author_and_year():
    for name, m in all_metrics().items():
        assert re.search(r"[A-Z][a-zé]+.* \(\d{4}\)", m.citation), (name, m.citation)


ARCHITECTURE = README.parent / "docs" / "architecture.md"


def test_architecture_page_names_only_modules_and_rules_that_exist():
    """docs/architecture.md is the contributor's map: every ``rules/*.smk`` it names exists,
    every rule it names is defined there, every module or package it names (in backticks,
    relative to ``genmetrics``) exists, and every rule file and every package is on the page."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    repo = README.parent
    src = repo / "src" / "genmetrics"
    rule_files = set(re.findall(r"`(rules/\w+\.smk)`", text))
    assert rule_files == {f"rules/{p.name}" for p in (repo / "rules").glob("*.smk")}
    defined = set()
    for p in (repo / "rules").glob("*.smk"):
        defined |= set(re.findall(r"^(?:rule|use rule \w+ as) (\w+)", p.read_text(), re.M))
    table = text[text.index("## The DAG") : text.index("## Packages")]
    for cell in re.findall(r"\| `rules/\w+\.smk` \| ([^|]+) \|", table):
        for rule in re.findall(r"`(\w+)`", cell):
            assert rule in defined, rule
    packages = text[text.index("## Packages") : text.index("## Files between")]
    for cell in re.findall(r"^\| ([^|]+) \|", packages, re.M)[2:]:
        for name in re.findall(r"`([\w.]+)/?`", cell):
            path = src.joinpath(*name.split("."))
            assert path.is_dir() or path.with_suffix(".py").exists(), name
    named = set(re.findall(r"`(\w+)/`", packages))
    assert named == {p.name for p in src.iterdir() if (p / "__init__.py").exists()}
    for module in re.findall(
        r"`((?:analysis|agreement|figures|features|plan|metrics)\.\w+)`", text
    ):
        assert src.joinpath(*module.split(".")).with_suffix(".py").exists(), module
