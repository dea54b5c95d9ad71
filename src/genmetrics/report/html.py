"""The one-page summary ``results/report.html``: one self-contained file to read offline.

The report of a run is Snakemake's (``snakemake --report``: every figure and table with its
caption, the workflow, run times); this page summarises it from the same sources: the
headline score tables (:mod:`genmetrics.analysis.headline`, one per family), the generation
statistics, and every figure of ``all`` embedded as base64 PNG under its title and caption
(the ``workflow/report/*.rst`` file its ``report(...)`` flag names, rendered by
:func:`genmetrics.report.captions.caption_html`). Conventions:

* no value prints as a Python literal: records (devices, provenance) are nested
  ``key: value`` lists, ``None`` is :data:`MISSING` (with the reason in its ``title`` and in
  a note where one is known: the human texts are the reference of a comparison);
* numbers keep 4 significant digits; the score CSVs are linked by their path relative to the
  page (``scores.csv`` beside it).
"""

from __future__ import annotations

import base64
import html
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from genmetrics.analysis.aggregate import read_scores
from genmetrics.analysis.headline import (
    family_tables,
    headline_scores,
    headline_table,
    legend_items,
    warning_lines,
)
from genmetrics.analysis.units import summary_intervals
from genmetrics.figures._save import empty_reason
from genmetrics.io import read_json, write_text
from genmetrics.paths import PROMPTS, REFERENCES
from genmetrics.report.captions import HEADLINE_CAPTION, caption_html, caption_of, find_caption
from genmetrics.report.paired import paired_section

#: what a cell without a value shows (the headline table's legend: "– not scored")
MISSING = "–"

_CSS = """body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;color:#222;
line-height:1.45}table{border-collapse:collapse;font-size:13px;margin:.5em 0 1em}
td,th{border:1px solid #ccc;padding:3px 7px;text-align:right;vertical-align:top}
th{background:#f3f3f3}td.text,th.text{text-align:left}.na{color:#888}
img{max-width:100%;border:1px solid #eee}figure{margin:2em 0}
figcaption{font-size:14px;color:#333;max-width:900px}.note{color:#555;font-size:14px}
ul.kv{margin:0;padding-left:1.3em;font-size:13px;list-style:none}.key{font-weight:600}
details{margin:.5em 0 1em}.scroll{overflow-x:auto;max-width:100%;margin:.5em 0 1em}
.scroll table{margin:0}ul.legend{font-size:14px;color:#555;padding-left:1.3em}
code,tt{font-size:92%}"""

#: generation statistics shown as table columns, in this order, with their headers
_STAT_COLUMNS = {
    "texts": "texts",
    "new_tokens": "new tokens",
    "seconds": "seconds",
    "tokens_per_second": "tokens/s",
    "shards": "shards",
    "batches": "batches",
    "batches_resumed": "batches resumed",
    "max_new_tokens": "max new tokens",
    "dtype": "dtype",
    "dtype_requested": "dtype requested",
    "devices": "devices",
    "unparsed": "unparsed outputs",
}


def write_html_report(
    out: str | Path,
    scores_csv: str | Path,
    figures: Sequence[str | Path],
    stats: Sequence[str | Path] = (),
    summary_csv: str | Path | None = None,
    headline_csv: str | Path | None = None,
    captions: Sequence[str | Path] = (),
    paired_csv: str | Path | None = None,
    sample_size_csv: str | Path | None = None,
) -> None:
    """Write the page ``out``: the headline scores under the headline caption, generation
    statistics (``stats``: ``results/generations/.../seed{seed}.stats.json`` files) and
    ``figures``, each under its caption (a figure marked as drawing nothing,
    :func:`genmetrics.figures._save.empty_reason`, is left out and listed by its path); ``captions`` are the caption files
    (:func:`genmetrics.report.captions.caption_files`: each figure's and the headline table's). The
    CSVs are linked by their path relative to ``out`` (``summary_csv``, ``headline_csv``:
    optional further links). A figure without a caption among ``captions`` is an error; the
    headline caption is shown where given; ``paired_csv``, ``sample_size_csv``: the section
    on paired comparisons and sample size (:mod:`genmetrics.report.paired`)."""
    df = read_scores(scores_csv)
    empty = {str(f): why for f in figures if (why := empty_reason(f))}
    # caption errors before writing (a figure left out for being empty needs one too)
    figure_parts = [_figure(f, captions) for f in figures]
    figure_parts = [p for f, p in zip(figures, figure_parts, strict=True) if str(f) not in empty]
    parts = [
        "<!DOCTYPE html>",
        "<html lang='en'><head><meta charset='utf-8'><title>genmetrics report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>genmetrics report</h1>",
        "<p class='note'>A one-page summary of the run: the headline scores, the generation "
        "statistics and every figure with its caption. The full report, with every table, "
        "the workflow and the run times, is Snakemake's: "
        f"{_link(Path(out).parent / 'snakemake_report.html', out, 'the report', False)} "
        "(written by <code>make demo</code> and <code>make report</code>; in another run "
        "folder, <code>snakemake --report results/snakemake_report.html</code>).</p>",
        "<h2>Scores</h2>",
        *_headline_caption(captions),
        *_scores(df, out, scores_csv, summary_csv, headline_csv),
    ]
    parts += paired_section(paired_csv, sample_size_csv, lambda p, t: _link(p, out, t))
    if stats:
        parts += ["<h2>Generation</h2>", *_generation(stats)]
    parts.append("<h2>Figures</h2>")
    if not figure_parts:
        parts.append("<p>This run draws no figure.</p>")
    parts += figure_parts
    if empty:
        items = "".join(
            f"<li>{html.escape(Path(f).as_posix())}: {html.escape(why)}</li>"
            for f, why in empty.items()
        )
        parts.append(
            f"<p class='note'>Left out, with nothing to draw:</p><ul class='legend'>{items}</ul>"
        )
    parts.append("</body></html>")
    write_text(out, "\n".join(parts) + "\n")


# ---------------------------------------------------------------------------- scores


def _scores(
    df: pd.DataFrame,
    out: str | Path,
    scores_csv: str | Path,
    summary_csv: str | Path | None,
    headline_csv: str | Path | None,
) -> list[str]:
    """The legend, the links to the CSVs and one table per family (with the summary's
    intervals over prompts and seeds, where ``summary_csv`` is given)."""
    intervals = None
    if summary_csv is not None:
        intervals = summary_intervals(pd.read_csv(summary_csv))
    table = headline_table(df, intervals)
    links = [(scores_csv, "the full table")]
    links += [
        (p, what)
        for p, what in (
            (summary_csv, "mean, std and seeds of every value"),
            (headline_csv, "these tables, one row per value"),
        )
        if p is not None
    ]
    legend = "".join(f"<li>{html.escape(item)}</li>" for item in legend_items(table))
    parts = [
        f"<ul class='legend'>{legend}</ul>",
        "<p class='note'>Every value of every score, per seed: "
        + "; ".join(_link(p, out, what) for p, what in links)
        + ".</p>",
    ]
    tables = family_tables(table)
    if not tables:
        parts.append("<p>No score has a direction of better.</p>")
    long = headline_scores(df, intervals)
    for family, sub in tables.items():
        parts += [f"<h3>{html.escape(str(family))}</h3>", _score_table(sub)]
        note = _missing_note(df, long, family, sub)
        if note:
            parts.append(f"<p class='note'>{html.escape(note)}</p>")
        warned = warning_lines(table, family)
        if warned:
            items = "".join(f"<li>{html.escape(line)}</li>" for line in warned)
            parts.append(f"<ul class='warnings'>{items}</ul>")
    return parts


def _headline_caption(captions: Sequence[str | Path]) -> list[str]:
    """The headline table's caption, where it is among the caption files (the workflow's
    always is; a page written without captions has none)."""
    found = [f for f in captions if Path(f).name == HEADLINE_CAPTION]
    return [caption_html(found[0])] if found else []


def _score_table(sub: pd.DataFrame) -> str:
    """One family's table: dataset, model, then its columns; a missing cell is
    :data:`MISSING`."""
    head = "".join(f"<th class='text'>{html.escape(str(c))}</th>" for c in sub.index.names)
    head += "".join(f"<th>{html.escape(str(c))}</th>" for c in sub.columns)
    rows = []
    for key, row in sub.iterrows():
        keys = key if isinstance(key, tuple) else (key,)
        cells = "".join(f"<td class='text'>{html.escape(str(k))}</td>" for k in keys)
        for value in row:
            cells += (
                f"<td class='na' title='not scored'>{MISSING}</td>"
                if _missing(value)
                else f"<td>{html.escape(str(value))}</td>"
            )
        rows.append(f"<tr>{cells}</tr>")
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    return f"<div class='scroll'>{table}</div>"


def _missing_note(df: pd.DataFrame, long: pd.DataFrame, family: str, sub: pd.DataFrame) -> str:
    """Why the human texts' row of a family table has empty cells, where the tidy scores say:
    the entries that compare a source with a reference set are not computed on that set."""
    if REFERENCES not in set(sub.index.get_level_values(-1)):
        return ""
    fam = long[long["family"] == family]
    reasons: dict[str, list[str]] = {}
    for dataset, d in fam.groupby("dataset", sort=False):
        if not d["model"].eq(REFERENCES).any():
            continue
        scored = set(d.loc[d["model"] == REFERENCES, "entry"])
        for entry in dict.fromkeys(d["entry"]):
            if entry in scored:
                continue
            refs = df.loc[(df["dataset"] == dataset) & (df["entry"] == entry), "reference"]
            refs = {str(r) for r in refs.dropna()}
            if refs == {REFERENCES}:
                why = "{it} {compares} each model's texts with the human texts"
            elif refs == {PROMPTS}:
                why = "{it} {compares} each continuation with its prompt"
            elif refs:
                why = "{it} {compares} each model's texts with another model's"
            else:
                why = "the config does not score the human texts on {them}"
            reasons.setdefault(why, [])
            if entry not in reasons[why]:
                reasons[why].append(entry)
    if not reasons:
        return ""
    said = "; ".join(
        f"{', '.join(entries)}: "
        + why.format(
            it="it" if len(entries) == 1 else "they",
            compares="compares" if len(entries) == 1 else "compare",
            them="it" if len(entries) == 1 else "them",
        )
        for why, entries in reasons.items()
    )
    return f"{MISSING} in the row of the human texts ({REFERENCES}): not computed ({said})."


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


# ---------------------------------------------------------------------------- generation


def _generation(stats: Sequence[str | Path]) -> list[str]:
    """A table of the generation statistics (one row per model and seed) and, folded, each
    file's provenance as ``key: value`` lists."""
    records = [(_source_name(p), read_json(p)) for p in stats]
    keys = [k for k in _STAT_COLUMNS if any(k in r for _, r in records)]
    extra = sorted(
        {k for _, r in records for k in r if k not in _STAT_COLUMNS and k != "provenance"}
    )
    head = "<th class='text'>source</th>" + "".join(
        f"<th>{html.escape(_STAT_COLUMNS.get(k, k.replace('_', ' ')))}</th>" for k in keys + extra
    )
    rows = []
    for source, r in records:
        cells = f"<td class='text'>{html.escape(source)}</td>"
        for k in keys + extra:
            value = _devices(r[k]) if k == "devices" and k in r else r.get(k)
            cells += f"<td>{readable(value, 'not recorded')}</td>"
        rows.append(f"<tr>{cells}</tr>")
    parts = [
        "<p class='note'>Per model and generation seed: texts written, new tokens, the time "
        "and speed of generation (summed over shards), the batches (resumed: restored from a "
        "progress log after an interruption) and where the model ran.</p>",
        f"<div class='scroll'><table><thead><tr>{head}</tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table></div>",
    ]
    with_provenance = [(s, r["provenance"]) for s, r in records if r.get("provenance")]
    if with_provenance:
        body = "".join(
            f"<h4>{html.escape(s)}</h4>{readable(p, 'not recorded')}" for s, p in with_provenance
        )
        parts.append(
            "<details><summary>Provenance of each generation file (per shard: the settings, "
            f"input hashes, versions and machine)</summary>{body}</details>"
        )
    return parts


def _source_name(path: str | Path) -> str:
    """``results/generations/{dataset}/{model}/seed{seed}.stats.json`` → ``dataset/model/seedN``."""
    parts = Path(path).parts
    return "/".join(parts[-3:]).removesuffix(".stats.json")


def _devices(value: Any) -> Any:
    """Where the shards ran: each distinct device name with its devices (``cpu``;
    ``cuda (cuda:0, cuda:1)``), in the order of the shards."""
    if not isinstance(value, list) or not all(isinstance(d, Mapping) for d in value if d):
        return value
    names = []
    for d in value:
        if not d:
            continue
        name = str(d.get("name", "?"))
        devices = [str(x) for x in d.get("devices") or []]
        names.append(name if devices in ([], [name]) else f"{name} ({', '.join(devices)})")
    return ", ".join(dict.fromkeys(names)) or None


def readable(value: Any, missing: str = "not computed") -> str:
    """HTML of any JSON value for a reader: a mapping as a ``key: value`` list, a list of
    scalars comma-separated, of records as a numbered list, a float with 4 significant
    digits, booleans as yes/no, ``None`` as :data:`MISSING` titled ``missing`` (the reason)."""
    if _missing(value):
        return f"<span class='na' title='{html.escape(missing)}'>{MISSING}</span>"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, int | str):
        return html.escape(str(value))
    if isinstance(value, Mapping):
        if not value:
            return "none"
        items = "".join(
            f"<li><span class='key'>{html.escape(str(k))}</span>: {readable(v, missing)}</li>"
            for k, v in value.items()
        )
        return f"<ul class='kv'>{items}</ul>"
    if isinstance(value, list | tuple):
        if not value:
            return "none"
        if all(not isinstance(v, Mapping | list | tuple) for v in value):
            return ", ".join(readable(v, missing) for v in value)
        if len(value) == 1:
            return readable(value[0], missing)
        items = "".join(f"<li>{readable(v, missing)}</li>" for v in value)
        return f"<ol>{items}</ol>"
    return html.escape(str(value))


# ---------------------------------------------------------------------------- figures


def _figure(path: str | Path, captions: Sequence[str | Path]) -> str:
    """A figure: its title, the PNG embedded, its caption rendered below it."""
    caption = caption_of(path)
    body = caption_html(find_caption(caption.file, captions))
    b64 = base64.b64encode(Path(path).read_bytes()).decode()
    anchor = html.escape(Path(path).stem)
    return (
        f"<figure id='{anchor}'><h3>{html.escape(caption.title)}</h3>"
        f"<img src='data:image/png;base64,{b64}' alt='{html.escape(caption.title)}'>"
        f"<figcaption>{body}<p class='note'>{html.escape(Path(path).as_posix())}</p>"
        "</figcaption></figure>"
    )


def _link(path: str | Path, out: str | Path, text: str, download: bool = True) -> str:
    """An ``<a>`` to ``path`` relative to the page ``out`` (``scores.csv`` beside it)."""
    href = Path(os.path.relpath(Path(path).resolve(), Path(out).resolve().parent)).as_posix()
    attr = " download" if download else ""
    return f"<a href='{html.escape(href)}'{attr}>{html.escape(text)}</a> ({html.escape(href)})"
