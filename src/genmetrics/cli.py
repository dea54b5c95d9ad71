"""Command line: ``genmetrics list`` and ``genmetrics score METRIC --candidate ... [--reference ...]``.

``score`` prints one JSON object ``{"metric", "values", "params", "n", ...}``; on bad input it
prints a one-line error to stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import json
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="genmetrics", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    lp = sub.add_parser("list", help="list every registered metric with its values and params")
    lp.add_argument("--json", action="store_true", help="print JSON instead of a table")
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
            else:
                for m in metrics:
                    params = ", ".join(f"{k}={v!r}" for k, v in m["params"].items())
                    print(f"{m['name']:<24} input={m['input']:<12} reference={m['reference']:<9}")
                    print(f"    values: {', '.join(m['values'])}")
                    print(f"    params: {params or '(none)'}")
            return 0
        from genmetrics.scoring import score_files

        params = dict(parse_param(p) for p in args.param)
        rec = score_files(args.metric, args.candidate, args.reference, params)
        rec.pop("versions", None)
        print(json.dumps(_jsonable(rec)))
        return 0
    except GenmetricsError as e:
        print(f"genmetrics: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
