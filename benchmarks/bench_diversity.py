"""Benchmark: our Shaib-et-al. diversity scores vs the reference loops, same 1,000 texts.

- homogenization (ROUGE-L): ours (bit-parallel LCS, numba) on all 1,000 texts vs
  ``diversity.homogenization_score(measure="rougel")`` (rouge_score per ordered pair). The
  reference is O(n²) pure Python (hours at 1,000 long texts), so it is timed on a subset of
  ``--ref-subset`` texts and extrapolated by n(n−1); values are compared on that subset.
- Self-BLEU-4: ours (vectorized) vs the nltk ``sentence_bleu`` loop of pr-4-llm (one hypothesis
  vs all 999 others). The loop is timed on ``--ref-hyps`` hypotheses and extrapolated linearly
  to 1,000 (all) and 200 (pr-4-llm's 20 % sample); values compared on those hypotheses.
- compression ratio / n-gram diversity / self-repetition: both on all 1,000 texts.

Run: ``.venv/bin/python benchmarks/bench_diversity.py [--n 1000] [--ref-subset 20]``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def load_diversity(name: str):
    from genmetrics.studies.shaib_diversity.runtime_scores import package_module

    mod = package_module(name)  # the module file alone, as the runtime study loads it
    if mod is None:
        sys.exit("install the reference: .venv/bin/pip install --no-deps diversity==0.3.1")
    return mod


def timed(fn, *a, **k):
    t = time.perf_counter()
    out = fn(*a, **k)
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(DATA / "webtext" / "webtext_train_1407.jsonl"))
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--ref-subset", type=int, default=20)
    ap.add_argument("--ref-hyps", type=int, default=8)
    ap.add_argument("--n-jobs", type=int, default=2)
    args = ap.parse_args()

    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    from genmetrics.metrics import compute
    from genmetrics.metrics._ngrams import tokenize
    from genmetrics.metrics.homogenization import rougel_pair_sums

    with open(args.data, encoding="utf-8") as f:
        texts = [json.loads(line)["text"] for _, line in zip(range(args.n), f, strict=False)]
    n = len(texts)
    words = np.array([len(t.split()) for t in texts])
    print(f"{n} texts from {args.data}: {words.mean():.0f} words on average (max {words.max()})")

    # ---- homogenization (ROUGE-L)
    rougel_pair_sums(texts[:3])  # compile / load the numba kernel outside the timing
    res, t_ours = timed(compute, "homogenization", texts, params={"n_jobs": args.n_jobs})
    m = args.ref_subset
    homog = load_diversity("homogenization").homogenization_score
    ref_sub, t_ref_sub = timed(homog, texts[:m], verbose=False)
    ours_sub = compute("homogenization", texts[:m]).values["homogenization"]
    t_ref = t_ref_sub * (n * (n - 1)) / (m * (m - 1))
    print(
        f"homogenization(rougel): ours {t_ours:.2f} s on {n} (value {res.values['homogenization']:.6f}); "
        f"diversity {t_ref_sub:.1f} s on {m} → ~{t_ref / 3600:.1f} h extrapolated by n(n−1); "
        f"ratio ≈ {t_ref / t_ours:,.0f}×; |ours − package| on the {m}-subset = "
        f"{abs(round(ours_sub, 3) - ref_sub):.3g} at 3 decimals ({ours_sub:.6f} vs {ref_sub})"
    )

    # ---- Self-BLEU-4 (GPT-2 ids as pr-4-llm, and whitespace tokens)
    sm = SmoothingFunction().method1
    for tok in ("gpt2", "whitespace"):
        res, t_ours = timed(compute, "self_bleu", texts, params={"tokenizer": tok})
        docs = tokenize(texts, tok)
        k = args.ref_hyps
        t0 = time.perf_counter()
        ref = [
            sentence_bleu(docs[:i] + docs[i + 1 :], docs[i], smoothing_function=sm)
            for i in range(k)
        ]
        t_ref_k = time.perf_counter() - t0
        diff = np.abs(np.array(ref) - res.extras["per_hypothesis"][:k]).max()
        t_all, t_20 = t_ref_k * n / k, t_ref_k * int(0.2 * n) / k
        print(
            f"self_bleu-4 [{tok}]: ours {t_ours:.2f} s for all {n} hypotheses "
            f"(value {res.values['self_bleu']:.6f}); nltk loop {t_ref_k:.1f} s for {k} → "
            f"~{t_all / 60:.1f} min for {n}, ~{t_20 / 60:.1f} min for pr-4-llm's 20 % sample; "
            f"ratio ≈ {t_all / t_ours:,.0f}× (all) / {t_20 / t_ours:,.0f}× (20 %); "
            f"max |Δ| on {k} hypotheses = {diff:.2g}"
        )

    # ---- cheap scores on all n texts
    comp = load_diversity("compression")
    ngram = load_diversity("ngram_diversity")
    srep = load_diversity("self_repetition")
    for name, ref_fn, ours_name, params in (
        ("compression_ratio", comp.compression_ratio, "compression_ratio", {"round": 3}),
        ("ngram_diversity", ngram.ngram_diversity_score, "ngram_diversity", {"round": 3}),
        (
            "self_repetition",
            lambda x: srep.self_repetition_score(x, verbose=False),
            "self_repetition",
            {},
        ),
    ):
        ref, t_ref = timed(ref_fn, texts)
        res, t_ours = timed(compute, ours_name, texts, params=params)
        v = res.values[ours_name]
        print(
            f"{name}: ours {t_ours:.3f} s, diversity {t_ref:.3f} s, ratio {t_ref / t_ours:.1f}×; "
            f"values {v} vs {ref} (|Δ| {abs(v - ref):.2g})"
        )


if __name__ == "__main__":
    main()
