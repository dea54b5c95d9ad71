"""The README's metric table is generated from the registry (`genmetrics list --markdown`)."""

from __future__ import annotations

import re
from pathlib import Path

from genmetrics.cli import markdown_table
from genmetrics.metrics import all_metrics

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_metric_table_is_current():
    text = README.read_text(encoding="utf-8")
    m = re.search(r"<!-- metrics:start -->\n(.*?)\n<!-- metrics:end -->", text, re.S)
    assert m, "README.md has no <!-- metrics:start --> ... <!-- metrics:end --> block"
    want = markdown_table([x.describe() for x in all_metrics().values()])
    assert m.group(1) == want, (
        "README metric table is stale: regenerate it with `genmetrics list --markdown`"
    )


def test_every_metric_cites_a_paper_by_author_and_year():
    for name, m in all_metrics().items():
        assert re.search(r"[A-Z][a-zé]+.* \(\d{4}\)", m.citation), (name, m.citation)
