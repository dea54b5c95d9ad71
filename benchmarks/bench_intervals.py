"""The intervals over prompts (genmetrics.scoring.intervals): how wide they are against the true
sampling spread, and what they cost.

    .venv/bin/python benchmarks/bench_intervals.py [--texts FILE] [--runs 40] [--results DIR]

1. **Calibration.** A metric's true standard deviation at n = 160 items per set, from --runs
   fresh samples, against the mean standard deviation of the replicates of the half-sample
   scheme (the default) and, where the metric allows it, of the with-replacement bootstrap on
   10 of those samples (5 for MAUVE and Fréchet; B = 100 each): Gaussian features (kNN
   precision/recall, KID, Vendi, chamfer, MAUVE, Fréchet; both sets drawn afresh: the
   references are tied to the prompts) and, with
   --texts (a JSONL file with ``text``, e.g. the demo's ``results/data/bbc/raw.jsonl``),
   160 of its texts cut to their first 50 words (self-BLEU, distinct-n, the n-gram Vendi
   Score, compression ratio, MATTR). Also the mean of the with-replacement replicates: far
   from the mean score where a repeated text reads as repetition.
2. **Cost** (with --results: a finished run's folder, e.g. ``results`` after ``make demo``,
   and ``--config``): every score job of the config whose inputs are there, timed without and
   with the interval its entry gets (CPU seconds, one process; run with
   OMP_NUM_THREADS=1 as a score job's one thread).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from genmetrics.metrics import get
from genmetrics.scoring.from_files import score_loaded
from genmetrics.scoring.intervals import DEFAULTS

REPO = Path(__file__).resolve().parents[1]
FEATURE_METRICS = [
    ("precision_recall", "precision", {"k": 4}, True),
    ("precision_recall", "recall", {"k": 4}, True),
    ("kid", "kid", {}, True),
    ("vendi", "vendi", {}, False),
    ("embedding_diversity", "chamfer", {}, False),
    ("mauve", "mauve", {}, True),
    ("frechet", "frechet", {}, True),
]
TEXT_METRICS = [
    ("self_bleu", "self_bleu", {"tokenizer": "gpt2"}),
    ("distinct_n", "distinct_1", {}),
    ("ngram_vendi", "vendi", {}),
    ("compression_ratio", "compression_ratio", {}),
    ("mattr", "mattr", {}),
]


def spreads(
    score, draw, runs: int, rng: np.random.Generator, replacement: bool, with_interval: int = 10
) -> dict[str, float]:
    """True sd over ``runs`` fresh samples (``draw(rng)`` → inputs), and the replicates' sd
    (and mean) of the half-sample scheme, and of the with-replacement bootstrap where the
    metric allows it (``replacement``), on the first ``with_interval`` samples
    (``score(inputs, interval)``)."""
    points, half, repl, repl_mean = [], [], [], []
    for r in range(runs):
        inputs = draw(rng)
        if r < with_interval:
            iv = {**DEFAULTS, "resamples": 100, "seed": r, "asked": True}
            value, reps = score(inputs, iv)
            half.append(np.std(reps, ddof=1))
            if replacement:
                _, reps_r = score(inputs, {**iv, "scheme": "replacement"})
                repl.append(np.std(reps_r, ddof=1))
                repl_mean.append(np.mean(reps_r))
        else:
            value, _ = score(inputs, None)
        points.append(value)
    return {
        "mean": float(np.mean(points)),
        "true_sd": float(np.std(points, ddof=1)),
        "half_sd": float(np.mean(half)),
        "replacement_sd": float(np.mean(repl)) if repl else float("nan"),
        "replacement_mean": float(np.mean(repl_mean)) if repl else float("nan"),
    }


def _scorer(metric: str, value: str, params: dict, with_reference: bool = False):
    def score(inputs, interval):
        cand, rows, ref, ref_rows = inputs
        if not with_reference:
            ref = ref_rows = None
        rec = score_loaded(metric, cand, rows, ref, ref_rows, params, interval=interval)
        reps = rec["interval"]["replicates"][value] if interval else None
        return rec["values"][value], reps

    return score


def calibration(runs: int, texts: Path | None) -> None:
    n, d = 160, 32
    rows = [{"id": f"p{i:03d}", "prompt_id": f"p{i:03d}"} for i in range(n)]
    refs = [{"id": f"p{i:03d}"} for i in range(n)]

    def gaussian(rng):
        cand = (rng.standard_normal((n, d)) * 1.2 + 0.3).astype(np.float32)
        return cand, rows, rng.standard_normal((n, d)).astype(np.float32), refs

    print(
        f"{'metric':44s} {'mean':>9s} {'true sd':>9s} {'half sd':>9s} {'ratio':>6s} "
        f"{'repl sd':>9s} repl mean"
    )
    for metric, value, params, ref in FEATURE_METRICS:
        slow = metric in ("mauve", "frechet")
        s = spreads(
            _scorer(metric, value, params, ref),
            gaussian,
            min(runs, 15) if slow else runs,
            np.random.default_rng(1),
            not get(metric).duplicates_matter(params),
            5 if slow else 10,
        )
        _print(f"{metric}: {value} (Gaussian)", s)
    if texts is None:
        return
    pool = [json.loads(line)["text"] for line in texts.open(encoding="utf-8")]
    pool = [" ".join(t.split()[:50]) for t in pool if len(t.split()) >= 60]

    def sample(rng):
        picked = [pool[i] for i in rng.choice(len(pool), n, replace=False)]
        text_rows = [{"id": f"p{i:03d}", "text": t} for i, t in enumerate(picked)]
        return picked, text_rows, None, None

    for metric, value, params in TEXT_METRICS:
        s = spreads(
            _scorer(metric, value, params),
            sample,
            runs,
            np.random.default_rng(0),
            not get(metric).duplicates_matter(params),
        )
        _print(f"{metric}: {value} ({texts.name})", s)


def _print(label: str, s: dict[str, float]) -> None:
    print(
        f"{label:44s} {s['mean']:9.4f} {s['true_sd']:9.4f} {s['half_sd']:9.4f} "
        f"{s['half_sd'] / s['true_sd']:6.2f} {s['replacement_sd']:9.4f} "
        f"{s['replacement_mean']:9.4f}",
        flush=True,
    )


def cost(results: Path, config: Path, entries: list[str] | None = None) -> None:
    """Every score job of ``config`` (of ``entries``) whose inputs are under ``results``'
    parent, without and with its interval: CPU seconds per entry and in all."""
    import yaml

    from genmetrics.plan.load import load_plan
    from genmetrics.scoring.job import score_entry

    os.environ.setdefault("GENMETRICS_REPO", str(REPO))
    plan = load_plan(
        yaml.safe_load(config.read_text()), REPO / "workflow/schemas/config.schema.yaml"
    )
    os.chdir(results.resolve().parent)
    extra: dict[str, list[float]] = defaultdict(list)
    for target in plan.score_targets():
        parts = Path(target).relative_to(plan.results.score.split("/scores/")[0] + "/scores").parts
        dataset, entry, source = parts[0], Path(parts[-1]).stem, "/".join(parts[1:-1])
        if entries and entry not in entries:
            continue
        inputs = plan.score_inputs(dataset, source, entry)
        files = [inputs["candidate"], inputs.get("reference"), *inputs.get("group", [])]
        if not all(f is None or Path(f).exists() for f in files):
            continue
        settings = plan.score_settings(dataset, entry)
        kw = dict(entry=entry, dataset=dataset, source=source, candidate=inputs["candidate"])
        kw |= dict(reference=inputs.get("reference"), group=inputs.get("group", []))
        seconds = []
        for st in ({**settings, "interval": {"reason": "timing"}}, settings):
            c0 = time.process_time()
            rec = score_entry(st, **kw)
            seconds.append(time.process_time() - c0)
        extra[entry].append(seconds[1] - seconds[0])
        what = rec["interval"].get("method") or rec["interval"]["reason"]
        print(f"{entry:22s} {source:24s} {seconds[0]:7.2f} → {seconds[1]:7.2f} s  {what[:50]}")
    total = sum(sum(v) for v in extra.values())
    print(f"{sum(len(v) for v in extra.values())} jobs: the intervals add {total:.1f} CPU seconds")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=40, help="fresh samples per metric")
    ap.add_argument("--texts", type=Path, help="a JSONL file of texts for the text metrics")
    ap.add_argument("--results", type=Path, help="a finished run's results folder: the cost")
    ap.add_argument("--config", type=Path, default=REPO / "config.yaml")
    ap.add_argument("--entries", nargs="*", help="with --results: only these entries")
    args = ap.parse_args()
    if args.results is not None:
        cost(args.results, args.config, args.entries)
    else:
        calibration(args.runs, args.texts)


if __name__ == "__main__":
    main()
