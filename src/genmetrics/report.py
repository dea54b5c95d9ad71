"""A self-contained HTML report (figures embedded as base64 PNG; the score CSVs linked)."""

from __future__ import annotations

import base64
import html
import os
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from genmetrics.analysis.aggregate import read_scores
from genmetrics.analysis.headline import family_tables, headline_table, table_legend
from genmetrics.io import read_json, write_text

_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;color:#222}
table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #ccc;padding:3px 7px;
text-align:right}th{background:#f3f3f3}img{max-width:100%;border:1px solid #eee}
.note{color:#555;font-size:14px}"""


def write_html_report(
    out: str | Path,
    scores_csv: str | Path,
    figures: Sequence[str | Path],
    stats: Sequence[str | Path] = (),
    summary_csv: str | Path | None = None,
    headline_csv: str | Path | None = None,
) -> None:
    """The report page: the headline scores (:mod:`genmetrics.analysis.headline`, one table
    per family), generation statistics and figures; the CSVs are linked by their path relative
    to ``out`` (``summary_csv``, ``headline_csv``: optional further links)."""
    table = headline_table(read_scores(scores_csv))
    parts = [
        f"<html><head><meta charset='utf-8'><title>genmetrics report</title><style>{_CSS}</style>",
        "</head><body><h1>genmetrics report</h1>",
        "<p class='note'>Each row is a source of texts per dataset: a model's generations "
        "(mean ± std over its seeds) or the human references. Each column is a headline value "
        "of a metric entry, as its metric registers it: one value with a direction of better, "
        "or a pair such as kNN precision and recall (the other values are in the full table). "
        "Precision = share of generated texts inside the human distribution's k-NN support "
        "(quality); recall = share of human texts inside the model's support (diversity). "
        "Perplexity is under the evaluator LM.</p>",
        "<h2>Scores</h2>",
        f"<p class='note'>{html.escape(table_legend(table))} Every value of every score, per seed: "
        f"{_link(scores_csv, out, 'the full table')}"
        + "".join(
            f"; {_link(p, out, what)}"
            for p, what in (
                (summary_csv, "mean, std and seeds of every value"),
                (headline_csv, "this table"),
            )
            if p is not None
        )
        + ".</p>",
    ]
    tables = family_tables(table)
    if not tables:
        parts.append("<p>No score has a direction of better.</p>")
    for family, sub in tables.items():
        parts += [f"<h3>{html.escape(family)}</h3>", sub.to_html(na_rep="–")]
    if stats:
        rows = []
        for p in stats:
            s = read_json(p)
            parts_ = Path(p).parts
            rows.append({"source": "/".join(parts_[-3:]).replace(".stats.json", ""), **s})
        parts += [
            "<h2>Generation</h2>",
            pd.DataFrame(rows).to_html(index=False, float_format=lambda v: f"{v:.4g}"),
        ]
    parts.append("<h2>Figures</h2>")
    for f in figures:
        b64 = base64.b64encode(Path(f).read_bytes()).decode()
        parts.append(
            f"<h3>{html.escape(Path(f).stem.replace('_', ' '))}</h3>"
            f"<img src='data:image/png;base64,{b64}'>"
        )
    parts.append("</body></html>")
    write_text(out, "\n".join(parts))


def _link(path: str | Path, out: str | Path, text: str) -> str:
    """An ``<a>`` to ``path`` relative to the page ``out`` (``scores.csv`` beside it)."""
    href = Path(os.path.relpath(Path(path).resolve(), Path(out).resolve().parent)).as_posix()
    return f"<a href='{html.escape(href)}' download>{html.escape(text)}</a> ({html.escape(href)})"
