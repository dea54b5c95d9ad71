"""A self-contained HTML report (figures embedded as base64 PNG)."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

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
) -> None:
    df = pd.read_csv(scores_csv)
    d = df.copy()
    d["score"] = d["entry"] + "." + d["name"]
    table = d.pivot_table(
        index=["dataset", "model", "seed"], columns="score", values="value", dropna=False
    )
    parts = [
        f"<html><head><meta charset='utf-8'><title>genmetrics report</title><style>{_CSS}</style>",
        "</head><body><h1>genmetrics report</h1>",
        "<p class='note'>Each row is a source of texts: the human references or a model's "
        "generations for one seed. Precision = share of generated texts inside the human "
        "distribution's k-NN support (quality); recall = share of human texts inside the "
        "model's support (diversity). Perplexity is under the evaluator LM.</p>",
    ]
    if summary_csv is not None:
        summ = pd.read_csv(summary_csv)
        if summ["n_seeds"].max() > 1:
            summ["score"] = summ["entry"] + "." + summ["name"]
            summ["cell"] = [
                f"{m:.4g} ± {sd:.2g}" if n > 1 else f"{m:.4g}"
                for m, sd, n in zip(summ["mean"], summ["std"], summ["n_seeds"], strict=True)
            ]
            wide = summ.pivot_table(
                index=["dataset", "model"], columns="score", values="cell", aggfunc="first"
            )
            parts += ["<h2>Mean ± std over seeds</h2>", wide.to_html(na_rep="–")]
    parts += [
        "<h2>Scores</h2>",
        table.to_html(float_format=lambda v: f"{v:.4g}", na_rep="–"),
    ]
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
