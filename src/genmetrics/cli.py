"""Command line: ``genmetrics list`` and ``genmetrics score METRIC --candidate ... [--reference ...]``.

``score`` prints one JSON object ``{"metric", "values", "params", "n", ...}``; on bad input it
prints a one-line error to stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import Any

import yaml

from genmetrics import GenmetricsError
from genmetrics.io import _jsonable


def parse_param(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` with the value read as YAML (numbers, true/false, null, lists)."""
    if "=" not in text:
        raise GenmetricsError(f"--param {text!r}: expected KEY=VALUE")
    key, raw = text.split("=", 1)
    try:
        value = yaml.safe_load(raw) if raw != "" else ""
    except yaml.YAMLError:
        value = raw
    return key.strip(), value


def format_metrics(metrics: list[dict[str, Any]]) -> str:
    """The ``genmetrics list`` table: each metric, its values (↑/↓ = better), params."""
    arrow = {"higher": " ↑", "lower": " ↓", None: ""}
    lines = []
    for m in metrics:
        kind = m["input"] + (", paired" if m["paired"] else "")
        lines.append(f"{m['name']}  ({kind}; reference {m['reference']})  {m['citation']}")
        lines.append(f"    {m['description']}")
        lines.append("    values: " + ", ".join(f"{k}{arrow[d]}" for k, d in m["values"].items()))
        for k, p in m["params"].items():
            default = json.dumps(p["default"])
            lines.append(f"    --param {k}={default}: {p['accepts']}. {p['doc']}")
        if m["aggregation"] != "corpus":
            lines.append(f"    aggregation: {m['aggregation']}")
        lines.append(f"    matches: {m['upstream']}")
    return "\n".join(lines)


def markdown_table(metrics: list[dict[str, Any]]) -> str:
    """The README's metric table, generated from the registry (a test keeps README current)."""
    arrow = {"higher": "↑", "lower": "↓", None: ""}
    rows = [
        "| metric | input | values (↑/↓ = better) | parameters (default) | matches | cite |",
        "|---|---|---|---|---|---|",
    ]
    for m in metrics:
        kind = m["input"] + (" (paired)" if m["paired"] else "")
        vals = ", ".join(f"`{k}`{arrow[d]}" for k, d in m["values"].items() if d)
        params = ", ".join(f"`{k}`={json.dumps(p['default'])}" for k, p in m["params"].items())
        rows.append(
            f"| `{m['name']}` | {kind} | {vals} | {params or '—'} | {m['upstream']} "
            f"| {m['citation']} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="genmetrics", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    lp = sub.add_parser("list", help="list every registered metric with its values and params")
    lp.add_argument("--json", action="store_true", help="print JSON instead of a table")
    lp.add_argument(
        "--markdown", action="store_true", help="print the README's metric table (generated)"
    )
    sp = sub.add_parser("score", help="compute one metric on files and print JSON")
    sp.add_argument("metric")
    sp.add_argument("--candidate", required=True, help=".jsonl texts or .npz features")
    sp.add_argument("--reference", help=".jsonl texts or .npz features")
    sp.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    args = ap.parse_args(argv)
    try:
        if args.command == "list":
            from genmetrics.metrics import all_metrics

            metrics = [m.describe() for m in all_metrics().values()]
            if args.json:
                print(json.dumps(_jsonable(metrics), indent=2))
            elif args.markdown:
                print(markdown_table(metrics))
            else:
                print(format_metrics(metrics))
            return 0
        from genmetrics.scoring import score_files

        params = dict(parse_param(p) for p in args.param)
        rec = score_files(args.metric, args.candidate, args.reference, params)
        rec.pop("versions", None)
        print(json.dumps(finite_json(rec), allow_nan=False))
        return 0
    except GenmetricsError as e:
        print(f"genmetrics: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `genmetrics list | head`: the reader left, not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def finite_json(rec: dict[str, Any]) -> Any:
    """JSON-safe record: a non-finite value becomes ``null`` and is named in ``non_finite``
    (e.g. ``{"perplexity": "inf"}``), so the output is valid JSON that says what happened."""
    out = _jsonable(rec)
    bad = {
        k: ("nan" if math.isnan(v) else "inf" if v > 0 else "-inf")
        for k, v in rec.get("values", {}).items()
        if isinstance(v, float) and not math.isfinite(v)
    }
    if bad:
        out["values"] = {k: (None if k in bad else v) for k, v in out["values"].items()}
        out["non_finite"] = bad
    return out


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
