"""Generation throughput of the vLLM backend (ours) against the transformers backend (the
reference) on the same prompts, settings and seed: one generate job's shard through
:func:`genmetrics.generation.vllm_backend.generate_shard_by_backend`, as the workflow runs it.

Prints one JSON summary: per backend the best-of-``--repeats`` generation seconds (the
engine's or model's load excluded; both backends' ``stats["seconds"]``), tokens generated,
tokens/s and the load seconds of that repeat, then ``ratio`` = vLLM tokens/s ÷ transformers
tokens/s (> 1: vLLM is faster), the device, the GPU, the engine module and both versions. The
two backends alternate (order swapped every other repeat, so the drift of a shared machine
favours neither). Both write the same row ids (the script asserts it).

Sizes (defaults in brackets):

* ``--n`` prompts [256]: the first ``--prompt-words`` [10] words of ``.test/data`` texts,
  cycled (ids ``p0 .. p{n-1}``);
* ``--words`` [50]: the continuation budget (``max_new_tokens`` = ceil(words × 1.4 × 1.25),
  SmolLM2's tokens per word and the default margin);
* ``--samples`` [1]: ``samples_per_prompt`` (texts = n × samples);
* ``--batch`` [32]: ``batch_size`` (the transformers backend's batches; the vLLM backend keeps
  the same shard split and schedules all requests itself);
* ``--model``: a manifest (``model.json``), an HF folder or a hub id [the SmolLM2-135M
  manifest of ``.cache/genmetrics`` if an e2e run fetched it, else the tiny random test model
  built in a temporary folder];
* ``--engine`` [vllm]: ``fake`` uses :mod:`genmetrics.testing.fake_vllm` (CPU; then the numbers
  are the backend's own overhead around an engine that runs no model, not vLLM's speed).

On a GPU node: ``pip install vllm`` in the generate environment, then

    .venv/bin/python benchmarks/bench_vllm.py --n 512 --words 100 --repeats 3

A real comparison needs a CUDA GPU (vLLM runs on nothing else here); transformers runs on the
same GPU (``dtype: auto``: bfloat16 on A100/H100).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def _prompts(n: int, words: int) -> list[dict[str, Any]]:
    """``n`` prompts: the first ``words`` words of the offline test texts, cycled."""
    from genmetrics.io import read_jsonl

    texts = [r["text"] for r in read_jsonl(REPO / ".test" / "data" / "texts.jsonl")]
    return [
        {"id": f"p{i}", "prompt": " ".join(texts[i % len(texts)].split()[:words])} for i in range(n)
    ]


def _default_model(tmp: Path) -> str:
    """SmolLM2-135M's manifest in .cache/genmetrics, else the tiny test model in ``tmp``."""
    for manifest in sorted((REPO / ".cache" / "genmetrics").glob("**/model.json")):
        if "smollm2" in manifest.read_text().lower():
            return str(manifest)
    from genmetrics.testing.tiny_lm import save_tiny_model

    return str(save_tiny_model(tmp / "tiny"))


def _settings(args: argparse.Namespace, backend: str) -> dict[str, Any]:
    s = {
        "template": "base",
        "tokenizer_family": None,
        "tokens_per_word": 1.4,
        "instruction": None,
        "sampling": {"temperature": 1.0, "top_p": 0.95},
        "words": args.words,
        "batch_size": args.batch,
        "token_margin": 1.25,
        "shards": 1,
        "mode": "prefix",
        "dtype": "auto",
        "trust_remote_code": False,
        "device_map": None,
        "max_memory": None,
        "samples_per_prompt": args.samples,
    }
    if backend == "vllm":
        s.update(backend="vllm", tensor_parallel_size=args.tensor_parallel)
    return s


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--n", type=int, default=256, help="prompts [256]")
    p.add_argument("--prompt-words", type=int, default=10, help="words per prompt [10]")
    p.add_argument("--words", type=int, default=50, help="continuation budget in words [50]")
    p.add_argument("--samples", type=int, default=1, help="samples per prompt [1]")
    p.add_argument("--batch", type=int, default=32, help="transformers batch size [32]")
    p.add_argument("--repeats", type=int, default=3, help="best of this many runs [3]")
    p.add_argument("--tensor-parallel", type=int, default=1, help="vLLM GPUs [1]")
    p.add_argument("--model", help="manifest, HF folder or hub id [SmolLM2-135M or tiny]")
    p.add_argument("--engine", choices=["vllm", "fake"], default="vllm", help="[vllm]")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.engine == "fake":
        os.environ["GENMETRICS_VLLM_MODULE"] = "genmetrics.testing.fake_vllm"
    import torch

    from genmetrics.generation.vllm_backend import generate_shard_by_backend
    from genmetrics.provenance import package_versions

    prompts = _prompts(args.n, args.prompt_words)
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or _default_model(Path(tmp))
        best: dict[str, dict[str, Any]] = {}
        ids: dict[str, list[str]] = {}
        for r in range(args.repeats):
            order = ("transformers", "vllm") if r % 2 == 0 else ("vllm", "transformers")
            for backend in order:
                t0 = time.perf_counter()
                rows, stats = generate_shard_by_backend(
                    prompts,
                    model,
                    _settings(args, backend),
                    seed=args.seed,
                    shard=0,
                    progress=False,
                )
                wall = time.perf_counter() - t0
                ids.setdefault(backend, [row["id"] for row in rows])
                run = {
                    "seconds": stats["seconds"],
                    "wall_seconds": wall,  # with loading
                    "texts": stats["texts"],
                    "new_tokens": stats["generated_tokens"],
                    "tokens_per_second": stats["tokens_per_second"],
                    "dtype": stats["dtype"],
                    "device": stats["device"]["name"],
                    "backend": stats["backend"],
                }
                if backend not in best or run["seconds"] < best[backend]["seconds"]:
                    best[backend] = run
    assert ids["vllm"] == ids["transformers"], "the backends wrote different row ids"
    ours, ref = best["vllm"], best["transformers"]
    summary = {
        "model": model,
        "sizes": {k: getattr(args, k) for k in ("n", "prompt_words", "words", "samples", "batch")},
        "repeats": args.repeats,
        "engine": args.engine,
        "cuda": torch.cuda.get_device_name(0) if torch.cuda.is_available() else None,
        "load_average": os.getloadavg(),
        "versions": package_versions(("torch", "transformers", "vllm")),
        "vllm": ours,
        "transformers": ref,
        "ratio": ours["tokens_per_second"] / max(ref["tokens_per_second"], 1e-9),
    }
    print(json.dumps(summary, indent=2, default=str))
    note = (
        " (fake engine: the backend's overhead, not vLLM's speed)" if args.engine == "fake" else ""
    )
    print(
        f"vllm {ours['tokens_per_second']:.0f} tok/s, transformers "
        f"{ref['tokens_per_second']:.0f} tok/s, ratio {summary['ratio']:.2f}x{note}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
