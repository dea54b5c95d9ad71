"""The GPU paths, run on a machine with a CUDA GPU: each check compares against the CPU path
on the same inputs and prints one JSON line; the last line sums up (``"failed": [...]``).

    python benchmarks/gpu_check.py [--n 8000] [--big 50000] [--mauve-n 2000 10000] [--out F]
        [--device cpu]   (a dry run of the script on a machine without a GPU)
        [--profile]      (cProfile of prdc_big and of our MAUVE instead; faiss' threads by
                          CPU count: benchmarks/bench_kmeans_threads.py)

On the device machine of this project's sessions (python3 with torch and CUDA), the packages
it lacks travel as wheels: jsonschema (+ referencing, rpds-py, jsonschema-specifications),
faiss-cpu, prdc, mauve-text; ``PYTHONPATH=<wheels>:src:tests``.

1. ``env``: torch, the GPU, ``genmetrics.devices.array_device()`` (must say ``cuda``).
2. ``prdc``: exact P/R/D/C (k = 1, 4, 9) of the bench_precision_recall inputs (``--n`` per side,
   L2 + PCA 0.9) through the torch engine on the GPU against the numpy engine on the CPU:
   the values must be *equal* (the GPU path rechecks near-ties in float64), also on inputs
   with duplicated rows (exact ties); the public ``compute`` must record ``device: cuda``.
   Times: ours on the GPU, ours on the CPU, prdc (CPU) on the same arrays.
3. ``prdc_big``: ``--big`` rows per side at d = 768 on the GPU (the issue's cluster-scale row),
   time and peak GPU memory.
4. ``mauve``: ``compute("mauve")`` with k-means auto (torch on the GPU) against k-means faiss
   (CPU) and mauve-text: the four values within 0.01; times of each.
5. ``kmeans_labels``: the torch k-means on the GPU gives the CPU's labels, label for label.
6. ``generate``: a tiny seeded Llama (genmetrics.testing.tiny_lm) on the GPU: the same seed gives the
   same rows twice, the rows have the CPU rows' keys and counts; ``resolve_dtype("auto")`` is
   bfloat16 on compute capability >= 8; ``describe_device`` names the GPU.
7. ``features``: embeddings and surprisal of that model on the GPU against the CPU (float32):
   largest |difference|.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_distribution import mixture  # noqa: E402

DEVICE = "cuda"  # --device cpu: a dry run of this script on a CPU-only machine
RESULTS: list[dict] = []
FAILED: list[str] = []


def report(name: str, ok: bool, **fields) -> None:
    row = {"check": name, "ok": bool(ok), **fields}
    RESULTS.append(row)
    if not ok:
        FAILED.append(name)
    print(json.dumps(row, default=str), flush=True)


def timed(fn, *args, **kw):
    t0 = time.perf_counter()
    out = fn(*args, **kw)
    return out, time.perf_counter() - t0


def sync():
    import torch

    if DEVICE == "cuda":
        torch.cuda.synchronize()


def check_env() -> None:
    import torch

    from genmetrics.devices import array_device

    dev = array_device()
    report(
        "env",
        dev == "cuda",
        torch=torch.__version__,
        gpu=torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        capability=torch.cuda.get_device_capability(0) if torch.cuda.is_available() else None,
        array_device=dev,
        python=sys.version.split()[0],
    )


def pca_pair(n: int):
    from genmetrics.metrics._quantize import l2_pca

    p = mixture(n, seed=1).astype(np.float32)
    q = mixture(n, seed=2, shift=0.1, weights_seed=1).astype(np.float32)
    return l2_pca(p, q, 0.9, seed=0)


def check_prdc(n: int) -> None:
    import prdc

    from genmetrics.metrics import compute
    from genmetrics.metrics._knn_exact import prdc_exact
    from genmetrics.metrics._knn_torch import prdc_torch

    p, q = pca_pair(n)
    ks = [1, 4, 9]
    prdc_torch(p[:500], q[:500], ks, device=DEVICE)  # warm-up (CUDA context, kernels)
    gpu, t_gpu = timed(prdc_torch, p, q, ks, device=DEVICE)
    cpu, t_cpu = timed(prdc_exact, p, q, ks)
    with contextlib.redirect_stdout(io.StringIO()):
        ref, t_ref = timed(prdc.compute_prdc, p, q, 4)
    diff_ref = max(abs(gpu[4][key] - float(ref[key])) for key in ref)
    # exact ties: every row of P duplicated, a third of Q copied from P
    pt = np.vstack([p[: n // 4], p[: n // 4]])
    qt = np.vstack([q[: n // 4], p[: n // 8]])
    ties_equal = prdc_torch(pt, qt, ks, device=DEVICE) == prdc_exact(pt, qt, ks)
    rec = compute("precision_recall", q, p, {"pca": False, "k": 4})
    report(
        "prdc",
        gpu == cpu and ties_equal and diff_ref < 1e-6 and rec.extras["knn"]["device"] == "cuda",
        n=n,
        dim=p.shape[1],
        gpu_equals_cpu=gpu == cpu,
        ties_equal=ties_equal,
        max_abs_diff_prdc=diff_ref,
        record_device=rec.extras["knn"]["device"],
        seconds_gpu=round(t_gpu, 3),
        seconds_cpu=round(t_cpu, 3),
        seconds_prdc=round(t_ref, 3),
        values_k4=gpu[4],
    )


def check_prdc_big(n: int) -> None:
    import torch

    from genmetrics.metrics._knn_torch import prdc_torch

    rng = np.random.default_rng(0)
    p = rng.normal(size=(n, 768)).astype(np.float32)
    q = (rng.normal(size=(n, 768)) * 1.05 + 0.02).astype(np.float32)
    if DEVICE == "cuda":
        torch.cuda.reset_peak_memory_stats()
    out, t = timed(prdc_torch, p, q, [5], device=DEVICE)
    sync()
    report(
        "prdc_big",
        all(0 <= v for v in out[5].values()),
        n=n,
        dim=768,
        seconds=round(t, 2),
        peak_gpu_mb=round(torch.cuda.max_memory_allocated() / 2**20) if DEVICE == "cuda" else None,
        values=out[5],
    )


def check_mauve(n: int) -> None:
    import mauve as mauve_text

    from genmetrics.metrics import compute

    p = mixture(n, seed=1)
    q = mixture(n, seed=2, shift=0.1, weights_seed=1)
    compute("mauve", q[:300], p[:300])  # warm-up
    ours, t_ours = timed(compute, "mauve", q, p)
    cpu, t_cpu = timed(compute, "mauve", q, p, {"kmeans": "faiss"})
    with contextlib.redirect_stdout(io.StringIO()):
        ref, t_ref = timed(mauve_text.compute_mauve, p_features=p, q_features=q, verbose=False)
    names = ("mauve", "frontier_integral", "mauve_star", "frontier_integral_star")
    refv = {
        "mauve": ref.mauve,
        "frontier_integral": ref.frontier_integral,
        "mauve_star": ref.mauve_star,
        "frontier_integral_star": ref.frontier_integral_star,
    }
    d_cpu = max(abs(ours.values[k] - cpu.values[k]) for k in names)
    d_ref = max(abs(ours.values[k] - refv[k]) for k in names)
    report(
        "mauve",
        d_cpu <= 0.01 and d_ref <= 0.01 and ours.extras["device"] == "cuda",
        n=n,
        kmeans=ours.extras["kmeans"],
        device=ours.extras["device"],
        max_abs_diff_faiss=d_cpu,
        max_abs_diff_mauve_text=d_ref,
        seconds_gpu=round(t_ours, 3),
        seconds_faiss=round(t_cpu, 3),
        seconds_mauve_text=round(t_ref, 3),
        mauve=ours.values["mauve"],
    )


def check_kmeans_labels() -> None:
    from genmetrics.metrics._kmeans_torch import kmeans_torch

    x = np.vstack([mixture(600, seed=1), mixture(500, seed=2, shift=0.15)]).astype(np.float32)
    cpu = kmeans_torch(x, 50, seed=27, nredo=5, niter=500, device="cpu")
    gpu = kmeans_torch(x, 50, seed=27, nredo=5, niter=500, device=DEVICE)
    report("kmeans_labels", bool(np.array_equal(cpu, gpu)), differing=int((cpu != gpu).sum()))


PROMPTS = [
    {"id": f"p{i}", "prompt": text}
    for i, text in enumerate(
        [
            "the old man walked to the",
            "she said that the weather",
            "in the morning we went",
            "a small dog ran across the",
            "they found the door open and",
            "after the rain the streets were",
        ]
    )
]


def check_generate(tmp: Path) -> None:
    import torch

    from genmetrics.generation.transformers_backend import generate
    from genmetrics.models.checkpoints import describe_device, load_causal_lm, resolve_dtype
    from genmetrics.testing.tiny_lm import save_tiny_model, tiny_lm

    kw = dict(
        template="base",
        sampling={"temperature": 1.0, "top_p": 0.95},
        words=12,
        max_new_tokens=24,
        seed=7,
        batch_size=4,
        progress=False,
    )
    model, tok = tiny_lm(0)
    cpu_rows, _ = generate(model, tok, PROMPTS, **kw)
    model.to(DEVICE)
    a, stats = generate(model, tok, PROMPTS, **kw)
    b, _ = generate(model, tok, PROMPTS, **kw)
    c, _ = generate(model, tok, PROMPTS, **{**kw, "seed": 8})
    folder = save_tiny_model(tmp / "tiny")
    lm, _ = load_causal_lm(folder, device="auto", dtype="auto")
    bf16, _ = generate(lm, tok, PROMPTS, **kw)
    report(
        "generate",
        a == b
        and a != c
        and [sorted(r) for r in a] == [sorted(r) for r in cpu_rows]
        and [r["id"] for r in a] == [r["id"] for r in cpu_rows]
        and resolve_dtype("auto")
        == ("bfloat16" if torch.cuda.get_device_capability(0) >= (8, 0) else "float32")
        and str(next(lm.parameters()).dtype) == "torch.bfloat16"
        and len(bf16) == len(PROMPTS),
        same_seed_same_rows=a == b,
        other_seed_other_rows=a != c,
        keys=sorted(a[0]),
        same_as_cpu_texts=sum(x["text"] == y["text"] for x, y in zip(a, cpu_rows, strict=True)),
        resolve_dtype_auto=resolve_dtype("auto"),
        loaded_dtype=str(next(lm.parameters()).dtype),
        device=describe_device(lm),
        tokens_per_second=round(stats["tokens_per_second"], 1),
        example=a[0]["text"],
    )


def check_features() -> None:
    from genmetrics.features.embed import embed_texts
    from genmetrics.features.surprisal import surprisal_texts
    from genmetrics.testing import tiny_lm

    texts = [p["prompt"] + " and then the rain came" for p in PROMPTS]
    model, tok = tiny_lm(0)
    e_cpu = embed_texts(texts, (model, tok), device="cpu")
    s_cpu = surprisal_texts(texts, (model, tok), device="cpu")
    model.to(DEVICE)
    e_gpu = embed_texts(texts, (model, tok), device=DEVICE)
    s_gpu = surprisal_texts(texts, (model, tok), device=DEVICE)
    d_e = float(np.abs(e_gpu - e_cpu).max())
    d_s = max(float(np.abs(a - b).max()) for a, b in zip(s_gpu, s_cpu, strict=True))
    same_len = [len(a) for a in s_gpu] == [len(b) for b in s_cpu]
    report(
        "features",
        d_e < 1e-4 and d_s < 1e-3 and same_len,
        max_abs_diff_embedding=d_e,
        max_abs_diff_surprisal=d_s,
        same_lengths=same_len,
    )


def profile(label: str, fn) -> None:
    """cProfile of ``fn()``: the 18 functions of largest own time (GPU work shows where the
    host waits for it: ``.cpu()``, ``nonzero``)."""
    import cProfile
    import pstats

    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.runcall(fn)
    print(f"== profile {label}: {time.perf_counter() - t0:.2f}s", flush=True)
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(18)
    print("\n".join(out.getvalue().splitlines()[6:]), flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=8000)
    ap.add_argument("--big", type=int, default=50000)
    ap.add_argument("--mauve-n", type=int, nargs="+", default=[2000, 10000])
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--device", default="cuda", help="cpu: dry-run the script without a GPU")
    ap.add_argument("--tmp", type=Path, default=Path("/tmp/gpu_check"))
    ap.add_argument("--profile", action="store_true", help="profile prdc_big and mauve instead")
    args = ap.parse_args(argv)
    global DEVICE
    DEVICE = args.device
    if args.profile:
        profile(f"prdc_big {args.big}", lambda: check_prdc_big(args.big))
        from genmetrics.metrics import compute

        for n in args.mauve_n:
            p = mixture(n, seed=1)
            q = mixture(n, seed=2, shift=0.1, weights_seed=1)
            compute("mauve", q[:300], p[:300])  # warm-up
            profile(f"mauve {n} (ours, k-means auto)", lambda p=p, q=q: compute("mauve", q, p))
        return 0
    checks = [
        ("env", check_env),
        ("prdc", lambda: check_prdc(args.n)),
        ("prdc_big", lambda: check_prdc_big(args.big)),
        *[(f"mauve {n}", lambda n=n: check_mauve(n)) for n in args.mauve_n],
        ("kmeans_labels", check_kmeans_labels),
        ("generate", lambda: check_generate(args.tmp)),
        ("features", check_features),
    ]
    for name, fn in checks:
        try:
            fn()
        except Exception as exc:  # report and go on: one failure must not hide the rest
            report(name, False, error=f"{type(exc).__name__}: {exc}", tb=traceback.format_exc())
    summary = {"check": "summary", "failed": FAILED, "ran": len(RESULTS)}
    print(json.dumps(summary), flush=True)
    if args.out:
        args.out.write_text(json.dumps(RESULTS + [summary], indent=1, default=str))
    return 1 if FAILED else 0


if __name__ == "__main__":
    raise SystemExit(main())
