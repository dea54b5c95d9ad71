"""The agreement workflow's jobs (rules/agreement.smk): score a judgment set, correlate it
with the human criteria or compare A/B choices, and summarise every set in one table."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from genmetrics import GenmetricsError
from genmetrics.agreement.correlation import correlations, upstream_check
from genmetrics.agreement.judgment_sets import (
    CRITERIA,
    UPSTREAM,
    JudgedTexts,
    PairwiseJudgments,
    read_judgments,
    summary_of,
)
from genmetrics.agreement.preference import pairwise_agreement
from genmetrics.agreement.scoring import directions, pairwise_scores, score_texts
from genmetrics.io import read_csv, write_json, write_text
from genmetrics.io import write_csv as _write_csv
from genmetrics.provenance import package_versions


def write_csv(path: str | Path, df: pd.DataFrame) -> None:
    """A table of the agreement study (:func:`genmetrics.io.write_csv`: cells escaped)."""
    _write_csv(path, df)


def read_scores(path: str | Path) -> pd.DataFrame:
    """A scores CSV with ``item`` kept as text (document ids like ``0001`` stay as written)."""
    return read_csv(path, dtype={"item": str, "group": str})


def fetch_set(settings: Mapping[str, Any], out: str | Path, jset: str = "<name>") -> list[Path]:
    """A judgment set's folder made from its ``sources`` (file -> upstream source): each file
    read from the data mirror or made from its upstream
    (:func:`genmetrics.data.mirror.resolve_source`, checked against its sha256 and rows) and
    copied to ``out/<file>``."""
    import shutil

    from genmetrics.data.mirror import resolve_source

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cache = Path(settings["cache"]) if settings.get("cache") else None
    made = []
    for file, src in sorted(settings["sources"].items()):
        path = resolve_source(src, cache, f"agreement.sets.{jset}.sources.{file}")
        shutil.copyfile(path, out / file)
        made.append(out / file)
    return made


def score_set(settings: Mapping[str, Any], path: str, scores_out: str, record_out: str) -> None:
    """Score every text of the set with its entries (through the registry)."""
    judged = read_judgments(settings["kind"], path)
    entries = settings["entries"]
    excluded = list(settings.get("exclude_systems") or ())
    if excluded and isinstance(judged, JudgedTexts):
        known = set(judged.table["system"])
        unknown = [x for x in excluded if x not in known]
        if unknown:
            raise GenmetricsError(
                f"agreement.sets.{settings['name']}.exclude_systems: {unknown} not in the set "
                f"(its systems: {sorted(known)})"
            )
        keep = ~judged.table["system"].isin(excluded)
        judged = replace(
            judged,
            table=judged.table[keep].reset_index(drop=True),
            excluded={
                **judged.excluded,
                f"texts of the excluded systems {excluded}": int((~keep).sum()),
            },
        )
    elif excluded:
        raise GenmetricsError(
            f"agreement.sets.{settings['name']}.exclude_systems: not for an A/B set"
        )
    record: dict[str, Any] = {
        "set": settings["name"],
        "kind": settings["kind"],
        "path": str(path),
        "citation": judged.citation,
        "entries": entries,
        "skipped": settings["skipped"],
        "versions": package_versions(),
    }
    if isinstance(judged, PairwiseJudgments):
        table = pairwise_scores(judged, entries)
        record.update(items=len(table), groups=sorted(table["group"].unique()))
        record["undefined"] = table.attrs["undefined"]
    else:
        t = judged.table.reset_index(drop=True)
        keep = _upstream_columns(judged, settings)
        base = t[["item", "system", *judged.criteria, *keep]]
        if entries:
            refs = t["reference"].tolist() if judged.has_references else None
            ours = score_texts(t["text"].tolist(), refs, entries)
            base = pd.concat([base, ours], axis=1)
            record["undefined"] = ours.attrs["undefined"]
        table = base
        record.update(summary_of(judged), upstream=keep)
    write_csv(scores_out, table)
    write_json(record_out, record)


def _upstream_columns(judged: JudgedTexts, settings: Mapping[str, Any]) -> list[str]:
    if not settings["upstream"]:
        return []
    wanted = settings.get("upstream_metrics")
    if not wanted:
        return list(judged.upstream)
    cols = [UPSTREAM + w for w in wanted]
    missing = [w for w, c in zip(wanted, cols, strict=True) if c not in judged.upstream]
    if missing:
        have = [c[len(UPSTREAM) :] for c in judged.upstream]
        raise GenmetricsError(f"upstream_metrics: {missing} not stored in this set; it has {have}")
    return cols


def correlate_set(
    settings: Mapping[str, Any],
    scores: str,
    correlations_out: str,
    upstream_out: str,
    figure_out: str,
    title: str,
) -> pd.DataFrame:
    """Correlations of every metric column with every criterion, the check of our values
    against the stored upstream ones, and the heatmap."""
    from genmetrics.figures.agreement import agreement_heatmap

    table = read_scores(scores)
    criteria = list(CRITERIA[settings["kind"]])
    ours = list(directions(settings["entries"])) if settings["entries"] else []
    upstream = [c for c in table.columns if c.startswith(UPSTREAM)]
    corr = correlations(
        table,
        [*ours, *upstream],
        criteria,
        levels=settings["levels"],
        methods=settings["methods"],
        n_boot=settings["n_boot"],
        seed=settings["seed"],
        ci=settings["ci"],
    )
    corr.insert(
        0, "source", ["upstream" if m.startswith(UPSTREAM) else "ours" for m in corr["metric"]]
    )
    write_csv(correlations_out, corr)
    check = upstream_check(table, settings["twins"]) if settings["twins"] else _empty_check()
    write_csv(upstream_out, check)
    fig = settings["figure"]
    agreement_heatmap(corr, fig["level"], fig["method"], figure_out, title=title)
    return corr


def _empty_check() -> pd.DataFrame:
    cols = ["ours", "upstream", "pearson", "spearman", "mean_abs_diff", "max_abs_diff"]
    return pd.DataFrame(columns=[*cols, "share_within_0.01", "n"])


def pairwise_set(
    settings: Mapping[str, Any], path: str, scores: str, table_out: str, figure_out: str, title: str
) -> pd.DataFrame:
    """Item agreement and Bradley–Terry strengths of every metric column on an A/B set."""
    from genmetrics.figures.agreement import pairwise_agreement_figure

    judged = read_judgments(settings["kind"], path)
    assert isinstance(judged, PairwiseJudgments)
    values = read_scores(scores)
    if values["item"].tolist() != judged.table["item"].tolist():
        raise GenmetricsError(f"{scores}: its items are not those of {path} (rerun the scoring)")
    res = pairwise_agreement(
        judged,
        values,
        directions(settings["entries"]),
        n_boot=settings["n_boot"],
        seed=settings["seed"],
        ci=settings["ci"],
    )
    write_csv(table_out, res)
    pairwise_agreement_figure(res, figure_out, title=title)
    return res


def summarise(
    results: Mapping[str, str],
    settings: Mapping[str, Mapping[str, Any]],
    table_out: str,
    markdown_out: str,
) -> None:
    """One table over every set: per judged set and metric, the figure's correlation (system
    and item level where computed) with each criterion and its interval; per A/B set and
    metric, the item agreement with the human majority."""
    rows = []
    for name, path in results.items():
        s = settings[name]
        df = read_csv(path)
        if s["kind"] in CRITERIA:
            method = s["figure"]["method"]
            d = df[df["method"] == method]
            for r in d.itertuples():
                rows.append(
                    {
                        "set": name,
                        "source": r.source,
                        "metric": r.metric,
                        "criterion": r.criterion,
                        "statistic": f"{method} ({r.level} level)",
                        "value": r.value,
                        "ci_low": r.ci_low,
                        "ci_high": r.ci_high,
                        "n": r.n_systems if r.level == "system" else r.n_items,
                    }
                )
        else:
            for r in df.itertuples():
                rows.append(
                    {
                        "set": name,
                        "source": "ours",
                        "metric": r.metric,
                        "criterion": f"human majority ({r.group})",
                        "statistic": "item agreement",
                        "value": r.item_agreement,
                        "ci_low": r.ci_low,
                        "ci_high": r.ci_high,
                        "n": r.n_decisive_items,
                    }
                )
    table = pd.DataFrame(rows)
    write_csv(table_out, table)
    write_text(markdown_out, summary_markdown(table))


def _fmt(v: Any, lo: Any, hi: Any) -> str:
    if v is None or pd.isna(v):
        return "n/a"
    ci = "" if lo is None or pd.isna(lo) else f" [{lo:.2f}, {hi:.2f}]"
    return f"{v:.2f}{ci}"


def summary_markdown(table: pd.DataFrame) -> str:
    """Markdown: one section per set, metrics as rows, (criterion, statistic) as columns."""
    lines = [
        "# Agreement of metrics with human judgments",
        "",
        "Value [95% bootstrap interval]; system level resamples systems and items, item level "
        "(per-item correlation across systems, averaged) resamples items; A/B: share of items "
        "where the metric picks the raters' majority (0.5 = chance).",
    ]
    for name, d in table.groupby("set", sort=False):
        lines += ["", f"## {name}", ""]
        d = d.assign(column=d["criterion"] + ": " + d["statistic"])
        cols = list(dict.fromkeys(d["column"]))
        lines.append("| metric | " + " | ".join(cols) + " |")
        lines.append("|---|" + "---|" * len(cols))
        for metric, g in d.groupby("metric", sort=False):
            cells = {r.column: _fmt(r.value, r.ci_low, r.ci_high) for r in g.itertuples()}
            label = (
                metric if not metric.startswith(UPSTREAM) else f"{metric[len(UPSTREAM) :]} (stored)"
            )
            lines.append(f"| {label} | " + " | ".join(cells.get(c, "") for c in cols) + " |")
    return "\n".join(lines) + "\n"
