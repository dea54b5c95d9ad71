"""Benchmark: run time of every Shaib et al. (2024) diversity score as the number of texts grows,
ours against the ``diversity`` package (0.3.1) on the same texts: their Fig. 3 (`make runtime`).

For each N of ``--ns`` the first N texts of one seed-drawn sample of ``--data`` (default: the
2,500 REALSumm system summaries, 72 words on average) are scored by ours and by the reference;
each cell is the median of ``--repeats`` runs (one run once a cell's runs take
``--repeat-limit`` s). An implementation stops growing N at its cap (``--cap score[:ours|
:reference]=N``) or after a cell slower than ``--time-limit`` s. Values must agree to the
reference's rounding (3 decimals; unrounded scores within 1e-9): exit 1 if not.

Which reference each score has (the package's, a stand-in, or none offline) is in
:mod:`genmetrics.studies.shaib_diversity.runtime_scores` and in the outputs' ``reference`` column.

Run: ``.venv/bin/python benchmarks/bench_diversity_runtime.py [--out results/runtime]``
Writes ``runtime.{csv,md,json,png}`` into ``--out``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
DEFAULT_NS = (50, 100, 200, 500, 1000, 2000)
#: 2-core sizes: the package's O(n²) Python loops and our BERTScore (an encoder pass per text,
#: then every pair) stop early. Measured on 2 shared cores (NOTES-runtime.md): ROUGE-L
#: homogenization 42-76 s at N = 200, the nltk Self-BLEU loop 62-73 s at 500, our BERTScore
#: 65 s at 300 (the 60 s time limit stops it at 200 when the cores are busy)
DEFAULT_CAPS = (
    "homogenization_rougel:reference=200",
    "self_bleu:reference=500",
    "homogenization_bertscore=500",
)


def _caps(items: list[str]) -> dict[str, int]:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not value.isdigit():
            sys.exit(f"--cap: expected score[:ours|:reference]=N, got {item!r}")
        out[key] = int(value)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(DATA / "realsumm" / "summaries.jsonl"))
    ap.add_argument("--source", default=None, help="text source named in the title")
    ap.add_argument("--out", default="results/runtime")
    ap.add_argument("--ns", type=int, nargs="+", default=list(DEFAULT_NS))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--repeat-limit", type=float, default=10.0)
    ap.add_argument("--time-limit", type=float, default=60.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cap", nargs="*", default=list(DEFAULT_CAPS))
    ap.add_argument("--scores", nargs="+", default=None, help="a subset of the Fig. 3 scores")
    ap.add_argument("--n-jobs", type=int, default=2, help="threads of our ROUGE-L")
    args = ap.parse_args(argv)

    import numpy as np

    from genmetrics.figures.runtime import runtime_figure
    from genmetrics.studies.shaib_diversity.runtime import (
        agreement_failures,
        machine,
        runtime_sweep,
        sample_texts,
        write_runtime,
    )
    from genmetrics.studies.shaib_diversity.runtime_scores import FIGURE_NOTES, shaib_scores

    data = Path(args.data)
    texts = sample_texts(data, max(args.ns), args.seed)
    words = np.mean([len(t.split()) for t in texts])
    source = args.source or f"{data.parent.name}/{data.name}"
    specs = shaib_scores(n_jobs=args.n_jobs, caps=_caps(args.cap), scores=args.scores)
    where = machine()
    print(
        f"{len(texts)} texts of {source} (seed {args.seed}; {words:.0f} words on average), {where}"
    )
    table, stops = runtime_sweep(
        specs,
        texts,
        args.ns,
        repeats=args.repeats,
        time_limit_s=args.time_limit,
        repeat_limit_s=args.repeat_limit,
        log=print,
    )
    for spec in specs:
        g = table[table["score"] == spec.score].pivot(
            index="n_texts", columns="implementation", values="seconds"
        )
        for n, row in g.iterrows():
            ours, ref = row.get("ours", np.nan), row.get("reference", np.nan)
            ratio = f"{ref / ours:,.3g}×" if np.isfinite(ref) and np.isfinite(ours) else "—"
            print(f"{spec.label:<17} N={n:<5} ours {ours:9.4f} s  reference {ref:9.4f} s  {ratio}")
    title = (
        f"Run time of the diversity scores (Shaib et al. 2024, Fig. 3)\n{where}; {source}: "
        f"N up to {max(args.ns)} texts, {words:.0f} words on average"
    )
    notes = [FIGURE_NOTES[s.score] for s in specs if s.score in FIGURE_NOTES]
    note = "Dashed: the diversity package 0.3.1, except\n" + "\n".join(notes) if notes else ""
    settings = {
        "data": str(data),
        "source": source,
        "seed": args.seed,
        "ns": sorted(args.ns),
        "repeats": args.repeats,
        "repeat_limit_s": args.repeat_limit,
        "time_limit_s": args.time_limit,
        "caps": _caps(args.cap),
        "machine": where,
        "mean_words": float(words),
    }
    paths = write_runtime(table, stops, args.out, title, settings)
    runtime_figure(table, paths["png"], title, note)
    print("wrote", ", ".join(str(p) for p in paths.values()))
    bad = agreement_failures(table, specs)
    if len(bad):
        print("values disagree:\n" + bad.to_string(), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
