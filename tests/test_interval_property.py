"""Every interval holds its point estimate, for every registered metric and every scheme it
accepts, on real texts (``../shared/data``: 24 XSum prompts continued by GPT-2 XL, OPT-2.7B
and GPT-Neo-2.7B, against the human articles they were cut from; GPT-2 XL surprisal of WebText
and of GPT-2 samples). Embeddings are TF-IDF vectors of the same texts reduced to 16
dimensions (real texts, no encoder to run). A scheme a metric refuses is refused with an error
naming the metric and the scheme; the metrics that accept drawing with replacement are exactly
those whose value a copy of every prompt leaves unchanged (means of per-text, per-pair or
per-prompt numbers)."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from genmetrics import GenmetricsError
from genmetrics.metrics import all_metrics, compute, get
from genmetrics.metrics.kinds import link_groups, pair_rows
from genmetrics.scoring import score_loaded
from genmetrics.scoring.intervals import DEFAULTS, SCHEMES, _Inputs, _resample, units

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
N_PROMPTS = 24
MODELS = ("gpt2-xl", "opt-2.7b", "gpt-neo-2.7B")
#: parameters that fit 24 prompts of 3 samples (NoveltyBench's k = its samples per prompt)
PARAMS: dict[str, dict[str, Any]] = {"distinct_k": {"k": 3}, "utility_k": {"k": 3}}
#: metrics run in the slow suite only: an encoder in the score job
SLOW = {"bertscore"}
#: metrics this test cannot resample, and why
NOT_RESAMPLED = {"omniinput": "scores a sampler's density over an input space, not prompts"}
#: the metrics that accept drawing with replacement (registered duplicates_change_value=False)
REPLACEMENT_OK = {
    "bertscore",
    "bleu",
    "coherence",
    "coherence_logprob",
    "distinct_k",
    "hdd",
    "mattr",
    "mtld",
    "perplexity",
    "rep_n",
    "rouge",
    "ttr",
    "utility_k",
}


def _rows(rel: str) -> list[dict[str, Any]]:
    path = DATA / rel
    if not path.exists():
        pytest.skip(f"shared data not found: {path}")
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


@cache
def real() -> dict[str, Any]:
    """The inputs of every kind, built once (a few seconds: the POS tagger's load)."""
    human = {r["id"]: r for r in _rows("detectgpt_continuations/human.jsonl")}
    gens = {
        m: {r["source_id"]: r for r in _rows(f"detectgpt_continuations/xsum.{m}.jsonl")}
        for m in MODELS
    }
    sids = sorted(s for s in gens[MODELS[0]] if s in human and all(s in gens[m] for m in MODELS))
    sids = sids[:N_PROMPTS]
    first = [gens[MODELS[0]][s] for s in sids]
    cand = [g["text"] for g in first]
    cand_rows = [
        {"id": g["id"], "prompt_id": s, "text": g["text"]} for g, s in zip(first, sids, strict=True)
    ]
    ref = [human[s]["text"] for s in sids]
    ref_rows = [{"id": s, "text": human[s]["text"]} for s in sids]
    prompts = [g["prompt"] for g in first]
    continuations = [g["text"][len(g["prompt"]) :] for g in first]
    records = [
        {
            "id": gens[m][s]["id"],
            "prompt_id": s,
            "prompt": gens[m][s]["prompt"],
            "continuation": gens[m][s]["text"][len(gens[m][s]["prompt"]) :],
            "text": gens[m][s]["text"],
        }
        for s in sids
        for m in MODELS
    ]
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    corpus = cand + ref + prompts + continuations
    vec = TfidfVectorizer(sublinear_tf=True).fit(corpus)
    svd = TruncatedSVD(16, random_state=0).fit(vec.transform(corpus))

    def emb(texts: list[str]) -> np.ndarray:
        return svd.transform(vec.transform(texts))

    def nll(rel: str) -> tuple[list[np.ndarray], list[dict[str, str]]]:
        rows = _rows(rel)[:N_PROMPTS]
        return [np.asarray(r["nll"], float) for r in rows], [{"id": r["id"]} for r in rows]

    from genmetrics.features.pos import tag_texts

    s_cand, s_cand_rows = nll("gpt2_generations/gpt2-small_pure_face.nll_gpt2-xl.jsonl")
    s_ref, s_ref_rows = nll("webtext/face_demo_human.nll_gpt2-xl.jsonl")
    # each unconditional sample is its own prompt; the WebText documents an independent sample
    s_cand_rows = [{**r, "prompt_id": r["id"]} for r in s_cand_rows]
    return {
        "texts": (cand, cand_rows, ref, ref_rows),
        "records": (records, records, None, None),
        "embeddings": (emb(cand), cand_rows, emb(ref), ref_rows),
        "prompts": (emb(continuations), cand_rows, emb(prompts), [{"id": s} for s in sids]),
        "surprisal": (s_cand, s_cand_rows, s_ref, s_ref_rows),
        "pos": (tag_texts(cand), cand_rows, tag_texts(ref), ref_rows),
    }


def inputs(name: str) -> tuple[Any, list, Any, list | None, dict[str, Any]]:
    """(candidate, its rows, reference, its rows, params) of metric ``name`` on the real data."""
    m = get(name)
    params = m.check_params(PARAMS.get(name, {}))
    key = "prompts" if m.reference == "prompts" else m.input_kind(params)
    cand, cand_rows, ref, ref_rows = real()[key]
    if m.reference == "none":
        ref = ref_rows = None
    return cand, cand_rows, ref, ref_rows, params


def _cases() -> list:
    out = []
    for name in all_metrics():
        if name in NOT_RESAMPLED:
            continue
        marks = [pytest.mark.slow] if name in SLOW else []
        out.append(pytest.param(name, marks=marks, id=name))
    return out


def test_every_metric_not_resampled_here_is_named_with_why():
    """The cases below cover every registered metric but these."""
    assert set(NOT_RESAMPLED) == {n for n, m in all_metrics().items() if m.input == "density"}


@pytest.mark.parametrize("name", _cases())
def test_each_interval_holds_its_point_estimate_for_every_scheme_the_metric_accepts(name):
    """For each scheme: the metric refuses it with an error naming both, or every value's
    interval (50 resamples, 95%) holds the value, with its scheme stated and no reason to
    leave a value without bounds (the escape hatch of intervals.bootstrap is not used)."""
    cand, cand_rows, ref, ref_rows, params = inputs(name)
    for scheme in SCHEMES:
        settings = {**DEFAULTS, "resamples": 50, "scheme": scheme, "asked": True}
        try:
            rec = score_loaded(name, cand, cand_rows, ref, ref_rows, params, interval=settings)
        except GenmetricsError as e:
            assert scheme == "replacement" and get(name).duplicates_change_value, str(e)
            assert f"scheme replacement is refused for metric {name}" in str(e)
            continue
        iv = rec["interval"]
        assert iv["method"] and iv["scheme"] == scheme, iv.get("reason")
        assert "reasons" not in iv, iv.get("reasons")
        for value, x in rec["values"].items():
            if np.isnan(x):  # no number to cover (e.g. a value undefined on these texts)
                continue
            assert iv["lower"][value] <= x <= iv["upper"][value], (scheme, value, x, iv)


def _doubled(name: str) -> tuple[dict[str, float], dict[str, float]]:
    """The metric's values on its inputs and on them with every prompt drawn twice, as the
    replacement scheme draws a prompt twice (:func:`genmetrics.scoring.intervals._resample`)."""
    cand, cand_rows, ref, ref_rows, params = inputs(name)
    m = get(name)
    if m.paired and ref is not None:
        ri, ci = pair_rows(ref_rows, cand_rows, name)
        ref, ref_rows = [ref[i] for i in ri], [ref_rows[i] for i in ri]
        cand, cand_rows = [cand[i] for i in ci], [cand_rows[i] for i in ci]
    links = link_groups(ref_rows, cand_rows, name) if m.links and ref is not None else None
    pids = [str(r["prompt_id"]) for r in cand_rows] if m.by_prompt else None
    u = units(m, cand_rows, ref_rows, links)
    x = _Inputs(cand, ref, links, pids)
    twice, _ = _resample(u, np.repeat(np.arange(len(u.cand)), 2), x)
    once = compute(name, cand, ref, params, links=links, prompt_ids=pids).values
    again = compute(
        name, twice.cand, twice.ref, params, links=twice.links, prompt_ids=twice.prompt_ids
    )
    return once, again.values


@pytest.mark.parametrize("name", sorted(REPLACEMENT_OK - SLOW))
def test_a_metric_that_accepts_replacement_ignores_a_copy_of_every_prompt(name):
    """A metric registered ``duplicates_change_value=False`` is a mean of per-text, per-pair
    or per-prompt numbers: every prompt drawn twice leaves each value as it was (a count of
    prompts counts the copies)."""
    once, twice = _doubled(name)
    m = get(name)
    for value, x in once.items():
        if m.scale(value) != "count":
            assert twice[value] == pytest.approx(x, rel=1e-9, abs=1e-12, nan_ok=True), value


def test_the_metrics_that_accept_replacement_are_the_means():
    """The registry's choice, stated once here: a change of a metric's flag is seen."""
    accepts = {n for n, m in all_metrics().items() if not m.duplicates_change_value}
    assert accepts == REPLACEMENT_OK
