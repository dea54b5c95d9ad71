"""The one-page summary's section on paired comparisons and sample size: per dataset the
model differences that hold after Holm's adjustment (``paired_differences.csv``,
:mod:`genmetrics.analysis.paired`), and per headline value the texts per side it needs for
each target width, the most over models (``sample_size.csv``,
:mod:`genmetrics.analysis.sample_size`)."""

from __future__ import annotations

import html
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from genmetrics.analysis.paired import ALPHA
from genmetrics.io import read_csv


def _num(x: object) -> str:
    return "—" if pd.isna(x) else f"{float(x):.4g}"


def _count(x: object) -> str:
    return "—" if pd.isna(x) else f"{int(x):,}"


def _table(head: list[str], rows: list[list[str]]) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows
    )
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def paired_section(
    paired_csv: str | Path | None,
    sample_size_csv: str | Path | None,
    link: Callable[[str | Path, str], str],
) -> list[str]:
    """The section's HTML parts (empty without either table, or where both have a header and
    no rows: an empty table gets no heading); ``link(path, text)`` links a CSV from the
    page."""
    parts: list[str] = []
    t = None if paired_csv is None else read_csv(paired_csv)
    if t is not None and not t.empty:
        parts += ["<h2>Which model is better</h2>", f"<p>{link(paired_csv, 'every pair')}</p>"]
        for ds, g in t.groupby("dataset", sort=True):
            tested = g["p"].notna().sum()
            sig = g[g["p_holm"] < ALPHA].sort_values("p")
            n_bh = int((g["p_bh"] < ALPHA).sum())
            parts.append(
                f"<p>{html.escape(str(ds))}: {len(sig)} of {tested} paired differences hold "
                f"after Holm's adjustment (p_holm &lt; {ALPHA}), {n_bh} after "
                f"Benjamini–Hochberg's; {len(g) - tested} without a paired interval.</p>"
            )
            rows = [
                [
                    str(r["entry"]),
                    str(r["value"]),
                    f"{r['model_a']} − {r['model_b']}",
                    _num(r["difference"]),
                    f"[{_num(r['lower'])}, {_num(r['upper'])}]",
                    _num(r["p_holm"]),
                    str(r["better"]),
                ]
                for r in sig.head(30).to_dict("records")
            ]
            if rows:
                head = ["entry", "value", "A − B", "difference", "interval", "p_holm", "better"]
                parts.append(_table(head, rows))
    s = None if sample_size_csv is None else read_csv(sample_size_csv)
    if s is not None and not s.empty:
        parts += [
            "<h2>How many texts</h2>",
            "<p>Texts per side each headline value needs for its 95% interval to be as wide "
            "as the target (a fraction of a bounded scale's span, else of the value), "
            "extrapolated from this run's widths as width ∝ n<sup>−1/2</sup>; the most over "
            f"the models. {link(sample_size_csv, 'every model')}</p>",
        ]
        keys = ["dataset", "entry", "value"]
        wide = s.pivot_table(index=keys, columns="target", values="n_needed", aggfunc="max")
        n = s.groupby(keys)["n_texts"].max()
        head = [*keys, "texts now", *(f"target {t:g}" for t in wide.columns)]
        rows = [[*map(str, k), str(n[k]), *(_count(v) for v in row)] for k, row in wide.iterrows()]
        parts.append(_table(head, rows))
    return parts
