"""The paired differences' simulation at scale (genmetrics.analysis.paired): the generator
of tests/test_paired_simulation.py, ``--null`` datasets of three models of one distribution
and ``--differ`` datasets with the known difference, every record's replicates kept.

    OMP_NUM_THREADS=1 .venv/bin/python benchmarks/bench_paired_simulation.py \
        --null 400 --differ 300 --resamples 200 --truth 1000 --out sim

Writes ``OUT/null.npz`` and ``OUT/differ.npz`` (``points``: datasets × values × models,
``replicates``: datasets × values × models × B, ``keys``: "entry/value", ``models``),
``OUT/truth.json`` (the true difference a − b at 30 prompts: the mean over ``--truth`` fresh
datasets) and ``OUT/tables.csv`` (every dataset's paired table), every 20 datasets
(temp + rename), and prints the summary of tests/test_paired_simulation.py
(:func:`null_rates`, :func:`coverage`). The p-values, intervals and their adjustments are
functions of the stored points and replicates: other tests can be read off the files
without rescoring.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import test_paired_simulation as sim  # noqa: E402

from genmetrics.analysis.paired import paired_differences  # noqa: E402
from genmetrics.io import write_csv  # noqa: E402


def arrays(recs: list[dict], keys: list[str], models: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(points: values × models, replicates: values × models × B) of one dataset's records."""
    by = {(r["source"], r["entry"]): r for r in recs}
    b = len(next(iter(next(iter(by.values()))["interval"]["replicates"].values())))
    pts = np.full((len(keys), len(models)), np.nan)
    reps = np.full((len(keys), len(models), b), np.nan, dtype=np.float32)
    for i, k in enumerate(keys):
        entry, value = k.split("/")
        for j, m in enumerate(models):
            r = by[m, entry]
            pts[i, j] = r["values"][value]
            reps[i, j] = r["interval"]["replicates"][value]
    return pts, reps


def save(out: Path, name: str, pts: list, reps: list, keys: list[str], models: list[str]) -> None:
    tmp = out / f".{name}.tmp.npz"
    np.savez_compressed(
        tmp,
        points=np.array(pts),
        replicates=np.array(reps),
        keys=np.array(keys),
        models=np.array(models),
    )
    os.replace(tmp, out / f"{name}.npz")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--null", type=int, default=400)
    ap.add_argument("--differ", type=int, default=300)
    ap.add_argument("--resamples", type=int, default=200)
    ap.add_argument("--truth", type=int, default=1000)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    truth = sim.true_differences(a.truth)
    (a.out / "truth.json").write_text(json.dumps({"/".join(k): v for k, v in truth.items()}))
    print(f"truth over {a.truth} datasets: {time.time() - t0:.0f} s", flush=True)
    keys = sorted("/".join(k) for k in truth)
    rng = {"null": np.random.default_rng(21), "differ": np.random.default_rng(22)}
    models = {"null": ["a", "b", "c"], "differ": ["a", "b"]}
    store = {k: ([], []) for k in rng}
    tables = {k: [] for k in rng}
    for i in range(max(a.null, a.differ)):
        for kind, n in (("null", a.null), ("differ", a.differ)):
            if i >= n:
                continue
            recs = sim.records(sim.dataset(rng[kind], kind == "differ"), a.resamples, i)
            pts, reps = arrays(recs, keys, models[kind])
            store[kind][0].append(pts)
            store[kind][1].append(reps)
            tables[kind].append(paired_differences(recs).assign(kind=kind, rep=i))
        if (i + 1) % 20 == 0 or i + 1 == max(a.null, a.differ):
            for kind in rng:
                save(a.out, kind, *store[kind], keys, models[kind])
            write_csv(a.out / "tables.csv", pd.concat([t for k in tables for t in tables[k]]))
            print(f"{i + 1} datasets: {time.time() - t0:.0f} s", flush=True)
    print("null", sim.null_rates(tables["null"]))
    cov = sim.coverage(tables["differ"], truth)
    print("coverage", cov, "pooled", float(np.mean(list(cov.values()))))


if __name__ == "__main__":
    main()
