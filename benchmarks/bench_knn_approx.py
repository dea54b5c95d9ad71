"""Error and speed of the approximate k-NN precision/recall engines against the exact one.

    .venv/bin/python benchmarks/bench_knn_approx.py [--sizes 2000 10000 25000]
        [--data sent tok sent768 gauss768] [--dims raw pca] [--backends faiss pynndescent]
        [--cache /tmp/genmetrics_knn_bench] [--embed N] [--embed-only] [--k 4]
        [--json rows.jsonl] [--summarize rows.jsonl]

Features (P = human, Q = model; both cut into sentences of 5+ words from /work/shared/data
or ``--data-dir``, deduplicated, shuffled with seed 0):

* ``sent``: all-MiniLM-L6-v2 sentence embeddings (mean pooling, 384-d), human vs model
  sentences (webtext, ag_news, wikitext2, detectgpt, hanna, realsumm, xsum references vs GPT-2,
  AlpacaEval chat models, detectgpt continuations, contrastive search, FACE, summarisers);
* ``tok``: contextual token states of the same forward pass (4 random tokens per sentence,
  384-d): real LM features in larger numbers than we have sentences;
* ``sent768``: [mean pooling, first-token state] concatenated (768-d, real);
* ``gauss768``: P, Q ~ N(0, I_768), independent (synthetic, the case of the user report).

``dims``: ``raw`` = features as given (``pca=False``); ``pca`` = pr-4-llm's L2 + PCA(0.9),
the metric's default (the reduced dimension is printed). The embeddings are computed once and
cached under ``--cache`` (.npy). For each case the exact engine (``prdc_exact``; dense
reference below its size cut) runs once, each approximate backend once (pynndescent's numba
JIT is warmed up first), on the same prepared matrices; PCA time is not counted. Prints a
markdown table with |Δ| = |approx − exact| and the time ratio approx / exact (> 1: slower).

Issue 28's row (``--row N``): approximate P/R at N points per side, d = 768, as a user's job
pays it. Inputs: the Gaussian mixture of benchmarks/bench_distribution.py (40 modes, power-law
spectrum; P seed 1, Q seed 2 with shift 0.1 and other weights), drawn in float32 blocks of 20k
rows and cached as .npy under ``--cache`` (2 × N × 768 × 4 bytes: 1.2 GB at 200k). Each
backend of ``--backends`` (default: ivf) runs in its own process: it loads the inputs and
calls ``compute("precision_recall", q, p, {"method": "approx", "pca": False,
"approx_backend": ...})``. Printed per backend: wall time of the call (the subsample check
included, and separately) and its CPU seconds (user + system: on a loaded machine, CPU-s / cores
is the better guess of a quiet wall time), peak RSS (``ru_maxrss``) and RSS after loading the inputs, the
values, and the record's ``subsample_check`` (exact vs approximate on 3,000 points per side,
seeded) — the measured error. ``--row-exact`` also runs the exact engine on the full inputs
(slow: 3 N² d flops) for the true error.

    .venv/bin/python benchmarks/bench_knn_approx.py --row 200000 [--backends ivf faiss]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np

HUMAN = [
    "webtext/webtext_train_1407.jsonl",
    "webtext/face_demo_human.jsonl",
    "webtext/webtext_short.jsonl",
    "ag_news/test.jsonl",
    "ag_news/train_sample.jsonl",
    "wikitext2_test/paragraphs.jsonl",
    "detectgpt_continuations/human.jsonl",
    "hanna/human_stories.jsonl",
    "realsumm/references.jsonl",
]
MODEL_GLOBS = [
    "gpt2_generations/*.jsonl",
    "alpaca_eval/*.jsonl",
    "detectgpt_continuations/*.*.jsonl",
    "hanna/llm_stories.jsonl",
    "face_generations/sample.jsonl",
    "realsumm/summaries.jsonl",
]
_SPLIT = re.compile(r"(?<=[.!?])\s+|\n+")
TOKENS_PER_SENTENCE = 4


def _rows(path: Path):
    with path.open(encoding="utf-8") as f:
        for line in f:
            yield json.loads(line)


def collect_sentences(data_dir: Path) -> tuple[list[str], list[str]]:
    """Human and model texts cut into sentences of 5+ words, deduplicated, sorted."""
    human, model = [], []
    for name in HUMAN:
        human += [r["text"] for r in _rows(data_dir / name) if "text" in r]
    for pattern in MODEL_GLOBS:
        for path in sorted(data_dir.glob(pattern)):
            if ".nll_" in path.name or path.name == "instructions.jsonl":
                continue
            model += [r["text"] for r in _rows(path) if "text" in r]
    for name in ("contrastive_search/book.jsonl", "contrastive_search/wikitext103.jsonl"):
        for r in _rows(data_dir / name):
            human.append(r.get("reference", ""))
            model.append(r.get("text", ""))
    for r in _rows(data_dir / "xsum_hallucination/summaries.jsonl"):
        (human if r["is_reference"] else model).append(r["text"])

    def sentences(texts: list[str]) -> list[str]:
        out = {s.strip() for t in texts for s in _SPLIT.split(t)}
        return sorted(s for s in out if len(s.split()) >= 5)

    return sentences(human), sentences(model)


def embed(cache: Path, data_dir: Path, n_max: int, batch: int = 64) -> None:
    """MiniLM features of n_max sentences per side, cached in parts (resumable)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    from genmetrics.data.assets import minilm_dir

    cache.mkdir(parents=True, exist_ok=True)
    human, model = collect_sentences(data_dir)
    print(f"sentences: human {len(human)}, model {len(model)}; embedding {n_max} per side")
    path = str(minilm_dir())
    tok = AutoTokenizer.from_pretrained(path)
    lm = AutoModel.from_pretrained(path).eval()
    part = 4096
    for side, texts in (("human", human), ("model", model)):
        rng = np.random.default_rng(0 if side == "human" else 1)
        texts = [texts[i] for i in rng.permutation(len(texts))[:n_max]]
        for start in range(0, len(texts), part):
            out = cache / f"{side}_{start:07d}.npz"
            chunk = texts[start : start + part]
            if out.exists() and len(np.load(out)["mean"]) == len(chunk):
                continue
            t0 = time.perf_counter()
            order = np.argsort([len(s) for s in chunk])
            mean = np.zeros((len(chunk), 384), np.float32)
            first = np.zeros((len(chunk), 384), np.float32)
            toks = []
            trng = np.random.default_rng(start)
            for b in range(0, len(chunk), batch):
                idx = order[b : b + batch]
                enc = tok(
                    [chunk[i] for i in idx],
                    padding=True,
                    truncation=True,
                    max_length=128,
                    return_tensors="pt",
                )
                with torch.inference_mode():
                    h = lm(**enc).last_hidden_state
                m = enc["attention_mask"].unsqueeze(-1).to(h.dtype)
                mean[idx] = ((h * m).sum(1) / m.sum(1).clamp(min=1e-9)).numpy()
                first[idx] = h[:, 0].numpy()
                lens = enc["attention_mask"].sum(1).numpy()
                for r in range(len(idx)):  # tokens between [CLS] and [SEP]
                    inner = np.arange(1, max(2, lens[r] - 1))
                    pick = trng.choice(inner, min(TOKENS_PER_SENTENCE, inner.size), replace=False)
                    toks.append(h[r, pick].numpy())
            np.savez(out, mean=mean, first=first, tok=np.concatenate(toks))
            print(
                f"  {out.name}: {len(chunk)} sentences, {time.perf_counter() - t0:.0f}s", flush=True
            )


def load(cache: Path, data: str, n: int) -> tuple[np.ndarray, np.ndarray] | None:
    """n rows per side of feature set ``data`` (None if the cache holds fewer)."""
    if data == "gauss768":
        rng = np.random.default_rng(n)
        p = rng.normal(size=(n, 768)).astype(np.float32)
        q = rng.normal(size=(n, 768)).astype(np.float32)
        return p, q
    key = {"sent": "mean", "tok": "tok", "sent768": None}[data]
    sides = []
    for side in ("human", "model"):
        parts = []
        for f in sorted(cache.glob(f"{side}_*.npz")):
            z = np.load(f)
            parts.append(np.hstack([z["mean"], z["first"]]) if key is None else z[key])
        x = np.concatenate(parts) if parts else np.zeros((0, 384), np.float32)
        if len(x) < n:
            return None
        sides.append(x[:n])
    return sides[0], sides[1]


KEYS = ("precision", "recall", "density", "coverage")
HEAD = (
    "| data | N/side | d | backend | exact P/R/D/C | |ΔP| | |ΔR| | |ΔD| | |ΔC| "
    "| t exact (s) | t approx (s) | approx/exact |\n|" + "---|" * 12
)


def table_row(rec: dict) -> str:
    e, a = rec["exact"], rec["approx"]
    ex = "/".join(f"{e[m]:.4f}" for m in KEYS)
    delta = " | ".join(f"{abs(a[m] - e[m]):.4f}" for m in KEYS)
    d = f"{rec['d']}" + (" (PCA 0.9)" if rec["dims"] == "pca" else "")
    return (
        f"| {rec['data']} | {rec['n']} | {d} | {rec['backend']} | {ex} | {delta} | "
        f"{rec['t_exact']:.1f} | {rec['t_approx']:.1f} | {rec['t_approx'] / rec['t_exact']:.2f} |"
    )


def summarize(recs: list[dict]) -> None:
    """Largest |Δ| and the range of time ratios per backend and preprocessing."""
    print(
        "\n| backend | features | cases | max |ΔP| | max |ΔR| | max |ΔD| | max |ΔC| | approx/exact |"
    )
    print("|" + "---|" * 8)
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in recs:
        groups.setdefault((r["backend"], r["dims"]), []).append(r)
    for (backend, dims), rs in sorted(groups.items()):
        err = " | ".join(
            f"{max(abs(r['approx'][m] - r['exact'][m]) for r in rs):.4f}" for m in KEYS
        )
        ratio = [r["t_approx"] / r["t_exact"] for r in rs]
        print(f"| {backend} | {dims} | {len(rs)} | {err} | {min(ratio):.2f}-{max(ratio):.2f} |")


def run_case(p, q, k, backends, seed=0) -> list[dict]:
    from genmetrics.metrics.precision_recall import prdc_approx, prdc_dense, prdc_exact

    dense = (len(p) + len(q)) ** 2 * p.shape[1] <= 1 << 23
    t = time.perf_counter()
    exact = (prdc_dense if dense else prdc_exact)(p, q, [k])[k]
    t_exact = time.perf_counter() - t
    rows = []
    for backend in backends:
        t = time.perf_counter()
        approx = prdc_approx(p, q, [k], seed=seed, backend=backend)[k]
        t_approx = time.perf_counter() - t
        rows.append(
            {
                "backend": backend,
                "exact": exact,
                "approx": approx,
                "t_exact": t_exact,
                "t_approx": t_approx,
            }
        )
    return rows


def mixture32(n: int, *, seed: int, shift: float = 0.0, weights_seed: int = 0) -> np.ndarray:
    """bench_distribution.mixture's distribution (768-d), drawn in float32 blocks of 20k rows
    (block i from default_rng([seed, i])), so 200k rows need no float64 copy."""
    d, block = 768, 20000
    spec = np.arange(1, d + 1) ** -0.4
    centers = np.random.default_rng(1234).normal(size=(40, d)) * spec
    w = np.random.default_rng(weights_seed).dirichlet(np.ones(40) * 2)
    out = np.empty((n, d), np.float32)
    for i, s in enumerate(range(0, n, block)):
        r = np.random.default_rng([seed, i])
        m = min(block, n - s)
        lab = r.choice(40, size=m, p=w)
        out[s : s + m] = centers[lab] + r.normal(size=(m, d)) * spec * (1.0 + shift)
    return out


ROW_CHILD = """
import json, resource, sys, time
import numpy as np
from genmetrics.metrics import compute
from genmetrics.metrics._knn_approx import subsample_check
p, q = np.load(sys.argv[1]), np.load(sys.argv[2])
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
params = {"method": "approx", "pca": False, "approx_backend": sys.argv[3], "seed": 0}
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
t, c = time.perf_counter(), cpu()
res = compute("precision_recall", q, p, params)
wall, cpu_s = time.perf_counter() - t, cpu() - c
rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
subsample_check(p, q, 4, strict=True, seed=0, backend=res.extras["knn"]["engine"][7:])
t_check = time.perf_counter() - t
out = {"wall": wall, "cpu": cpu_s, "t_check": t_check, "rss_inputs_mb": rss0 / 1024,
       "peak_rss_mb": rss1 / 1024, "values": res.values, "knn": res.extras["knn"]}
if sys.argv[4] == "1":
    from genmetrics.metrics.precision_recall import prdc_exact
    t = time.perf_counter()
    out["exact"] = prdc_exact(p, q, [4])[4]
    out["t_exact"] = time.perf_counter() - t
print(json.dumps(out))
"""


def run_row(n: int, cache: Path, backends: list[str], exact: bool) -> None:
    """Issue 28's approximate row: time, peak RSS and measured error per backend."""
    import os
    import subprocess
    import sys

    cache.mkdir(parents=True, exist_ok=True)
    fp, fq = cache / f"row_p_{n}.npy", cache / f"row_q_{n}.npy"
    if not (fp.exists() and fq.exists()):
        t = time.perf_counter()
        np.save(fp, mixture32(n, seed=1))
        np.save(fq, mixture32(n, seed=2, shift=0.1, weights_seed=1))
        print(f"inputs drawn and cached in {time.perf_counter() - t:.0f}s: {fp}, {fq}")
    print(f"approximate P/R, N={n} per side, d=768, k=4, pca=false; load {os.getloadavg()[0]:.1f}")
    for backend in backends:
        out = subprocess.run(
            [sys.executable, "-c", ROW_CHILD, str(fp), str(fq), backend, "1" if exact else "0"],
            capture_output=True,
            text=True,
        )
        if out.returncode != 0:
            print(f"  {backend}: failed\n{out.stderr[-2000:]}")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        chk = r["knn"].get("subsample_check", {})
        print(
            f"  {backend}: {r['wall']:.1f}s wall, {r['cpu']:.0f} CPU-s (subsample check alone "
            f"{r['t_check']:.1f}s), peak RSS "
            f"{r['peak_rss_mb'] / 1024:.2f} GB (inputs loaded: {r['rss_inputs_mb'] / 1024:.2f} GB)"
            f"; load {os.getloadavg()[0]:.1f}"
        )
        print(f"    values {json.dumps(r['values'])}")
        print(
            f"    subsample check ({chk.get('n_per_side')} per side, seed {chk.get('seed')}, "
            f"lists probed {chk.get('lists_probed')}): |approx - exact| "
            f"{json.dumps({k: round(v, 4) for k, v in chk.get('abs_error', {}).items()})}"
        )
        if "exact" in r:
            err = {k: round(abs(r["values"][k] - r["exact"][k]), 4) for k in KEYS}
            print(f"    exact on the full sets ({r['t_exact']:.0f}s): |approx - exact| {err}")


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 10000, 25000])
    ap.add_argument("--data", nargs="+", default=["sent", "tok", "sent768", "gauss768"])
    ap.add_argument("--dims", nargs="+", default=["raw", "pca"], choices=["raw", "pca"])
    ap.add_argument("--backends", nargs="+", default=["ivf", "faiss", "pynndescent"])
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/genmetrics_knn_bench"))
    ap.add_argument("--data-dir", type=Path, default=Path("/work/shared/data"))
    ap.add_argument("--embed", type=int, default=0, help="first embed this many sentences/side")
    ap.add_argument("--embed-only", action="store_true")
    ap.add_argument("--json", type=Path, help="also append every row to this JSON-lines file")
    ap.add_argument("--summarize", type=Path, help="print the table of a --json file and stop")
    ap.add_argument("--row", type=int, help="issue 28's row at this N per side (see above)")
    ap.add_argument("--row-exact", action="store_true", help="--row: also the exact values")
    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # progress when redirected
    if args.row:
        backends = args.backends if "--backends" in sys.argv else ["ivf"]
        run_row(args.row, args.cache, backends, args.row_exact)
        return
    if args.summarize:
        recs = [json.loads(line) for line in args.summarize.open()]
        print(HEAD)
        for rec in recs:
            print(table_row(rec))
        summarize(recs)
        return
    if args.embed:
        embed(args.cache, args.data_dir, args.embed)
    if args.embed_only:
        return
    from genmetrics.metrics._quantize import faiss_available
    from genmetrics.metrics.precision_recall import prdc_approx, prepare_features

    backends = [b for b in args.backends if b != "faiss" or faiss_available()]
    if "pynndescent" in backends:  # numba JIT outside the timings
        t = time.perf_counter()
        w = np.random.default_rng(0).normal(size=(200, 8))
        prdc_approx(w, w + 0.1, [args.k], backend="pynndescent")
        print(f"pynndescent JIT warm-up: {time.perf_counter() - t:.1f}s (not counted)")
    print(HEAD)
    recs = []
    for data in args.data:
        for n in args.sizes:
            pair = load(args.cache, data, n)
            if pair is None:
                print(f"| {data} | {n} | – | – | not enough cached features |" + " |" * 7)
                continue
            for dims in args.dims:
                p, q = pair if dims == "raw" else prepare_features(*pair, pca=0.9, seed=0)
                for row in run_case(p, q, args.k, backends):
                    rec = {"data": data, "n": n, "d": p.shape[1], "dims": dims, **row}
                    recs.append(rec)
                    print(table_row(rec), flush=True)
                    if args.json:
                        with args.json.open("a") as f:
                            f.write(json.dumps(rec) + "\n")
    summarize(recs)


if __name__ == "__main__":
    main()
