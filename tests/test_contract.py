"""The metric contract: parameter constraints, registration checks, and tests parametrized
over every registered metric (tiny input of its kind → declared values, finite, deterministic,
every invalid parameter value rejected naming the parameter, empty texts never fail a corpus;
its facts: family, headline, scales, figures, sizes).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from genmetrics import GenmetricsError
from genmetrics.metrics import all_metrics, compute, register, registry
from genmetrics.metrics.registry import FAMILIES, FIGURES, OTHER, SCALES, metrics_feeding
from genmetrics.params import BOOL, Const, Interval, Options, Param, check_params

# ------------------------------------------------------------------ constraints


def test_interval_int_refuses_what_it_cannot_represent():
    p = Param("k", 4, (Interval(int, 1, None),), "")
    assert p.check(4, "k") == 4 and p.check(4.0, "k") == 4 and p.check("7", "k") == 7
    for bad in (2.7, True, False, float("inf"), float("nan"), 0, "four", None, [4]):
        with pytest.raises(GenmetricsError, match=r"^k: must be an integer >= 1"):
            p.check(bad, "k")


def test_bool_and_options_have_one_meaning():
    b = Param("strict", True, (BOOL,), "")
    assert b.check("false", "s") is False and b.check("true", "s") is True
    for bad in (0, 1, "maybe", None):
        with pytest.raises(GenmetricsError, match="true | false"):
            b.check(bad, "s")
    o = Param("method", "auto", (Options("auto", "exact"),), "")
    with pytest.raises(GenmetricsError, match="one of auto | exact, got 'Exact'"):
        o.check("Exact", "method")


def test_union_constraint_and_const():
    p = Param("pca", 0.9, (Interval(float, 0, 1, closed="right"), Const(False)), "")
    assert p.check(False, "pca") is False and p.check("false", "pca") is False
    assert p.check(1, "pca") == 1.0 and isinstance(p.check(1, "pca"), float)
    for bad in (0, 0.0, 1.5, True, "auto"):
        with pytest.raises(GenmetricsError, match=r"in \(0, 1\] or false"):
            p.check(bad, "pca")


def test_check_params_names_the_key_path():
    declared = {"k": Param("k", 4, (Interval(int, 1, None),), "")}
    with pytest.raises(GenmetricsError) as e:
        check_params(declared, {"k": "four"}, "metrics.pr_k50.params")
    assert str(e.value) == "metrics.pr_k50.params.k: must be an integer >= 1, got 'four'"
    with pytest.raises(GenmetricsError, match="unknown parameter.*kk.*known: k"):
        check_params(declared, {"kk": 1}, "x")
    assert check_params(declared, {}, "x") == {"k": 4}


def test_register_reads_defaults_from_the_signature_and_checks_them():
    with pytest.raises(ValueError, match="differ from the signature"):

        @register("_bad1", input="texts", reference="none", values={"v": None}, params={})
        def bad1(candidate, *, n: int = 2):
            return {"v": 0.0}

    with pytest.raises(GenmetricsError, match="default n"):

        @register(
            "_bad2",
            input="texts",
            reference="none",
            values={"v": None},
            params={"n": (Interval(int, 3, None), "")},
        )
        def bad2(candidate, *, n: int = 2):
            return {"v": 0.0}

    with pytest.raises(ValueError, match="direction"):
        register("_bad3", input="texts", reference="none", values={"v": "up"})


@pytest.mark.parametrize(
    ("facts", "message"),
    [
        ({"family": "fluency"}, "family must be one of"),
        ({"headline": ("n",)}, r"headline value\(s\) \['n'\] are not values with a direction"),
        ({"headline": "v"}, "headline must be a sequence"),
        ({"headline": ("v", "v")}, "repeats a value"),
        ({"scale": "0-1"}, r"not in \['0–1'"),  # a hyphen, not the vocabulary's en dash
        ({"scale": {"v": "0–1"}}, r"scale must name every value: missing \['n'\]"),
        ({"figures": ("heatmap",)}, "figure 'heatmap' is not one of"),
        ({"figures": ("pr_plane",)}, r"plots value\(s\) \['precision', 'recall'\] it lacks"),
    ],
)
def test_register_checks_the_facts(facts, message):
    with pytest.raises(ValueError, match=message):
        register("_bad_facts", input="texts", values={"v": "higher", "n": None}, **facts)


def test_a_minimal_registration_gets_the_default_facts(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))

    @register("_minimal", input="texts", values={"n": None, "v": "lower", "w": "higher"})
    def minimal(candidate):
        return {"n": 1.0, "v": 0.0, "w": 1.0}

    m = registry.get("_minimal")
    assert (m.family, m.headline, dict(m.scales), m.figures) == (OTHER, ("v",), {}, ())
    assert m.scale("v") is None and not m.sweepable and m.min_items({}) == (1, "")
    assert m.describe()["headline"] == ["v"]


# ------------------------------------------------------------------ every metric

WORDS = (
    "the river ran past old mills and quiet fields while children laughed near the bridge "
    "a storm came over hills rain fell on roofs markets closed early people hurried home "
    "scientists measured stars engines roared trains left stations on time every morning"
).split()


def _texts(seed: int, n: int = 24) -> list[str]:
    rng = np.random.default_rng(seed)
    out = [" ".join(rng.choice(WORDS, size=int(rng.integers(8, 60)))) + "." for _ in range(n)]
    out[3] = ""  # real model output has empty generations
    return out


def _inputs(kind: str, seed: int):
    rng = np.random.default_rng(seed)
    if kind == "embeddings":
        return rng.normal(size=(80, 6))
    if kind == "surprisal":
        seqs = [rng.gamma(2.0, 1.5, size=int(rng.integers(5, 40))) for _ in range(20)]
        seqs[2] = np.zeros(0)
        return seqs
    if kind == "pos":
        tags = ["DT", "NN", "VBD", "IN", "JJ", "NNS", "."]
        return [list(rng.choice(tags, size=int(rng.integers(5, 30)))) for _ in range(20)]
    if kind == "density":  # OmniInput: an annotated density of states over 10^4 inputs
        from genmetrics.omniinput.curves import Density
        from genmetrics.omniinput.density import Bins

        counts = rng.integers(1, 2000, size=8).astype(float)
        return Density(
            bins=Bins(0.0, 8.0, 8),
            ln_rho=np.log(counts),
            r=rng.uniform(0, 1, size=8),
            counts=np.full(8, 10),
            ln_space=np.log(1e4) + np.log(counts.sum() / 1e4 + 1),
        )
    if kind == "records":  # generations: 6 prompts x 4 samples (ids <prompt id>~<j>)
        texts = _texts(seed)
        return [
            {"id": f"p{i // 4}~{i % 4}", "prompt_id": f"p{i // 4}", "prompt": t[:20] or "the",
             "continuation": t[20:]}
            for i, t in enumerate(texts)
        ]  # fmt: skip
    return _texts(seed)


METRICS = sorted(all_metrics())
OFFLINE_HEAVY = {"coherence"}  # loads a sentence encoder (MiniLM from PyPI)


def _prompt_ids(m, cand) -> dict:
    """A per-prompt metric's prompt ids: the records' own, or 4 rows per prompt."""
    if not m.by_prompt:
        return {}
    if m.input == "records":
        return {"prompt_ids": [r["prompt_id"] for r in cand]}
    return {"prompt_ids": [f"p{i // 4}" for i in range(len(cand))]}


def _run(name: str, params=None):
    m = all_metrics()[name]
    cand = _inputs(m.input, 1)
    ref = None
    if m.reference != "none":
        ref = _inputs(m.input, 2)
        if m.paired:
            ref = ref[: len(cand)]
    return compute(name, cand, ref, params or {}, **_prompt_ids(m, cand))


@pytest.mark.parametrize("name", METRICS)
def test_metric_contract(name):
    if name in OFFLINE_HEAVY:
        pytest.importorskip("torch")
    m = all_metrics()[name]
    assert m.description and m.upstream and m.citation, name
    for p in m.params.values():
        assert p.doc, f"{name}.{p.name} has no doc"
    first = _run(name)
    assert first.values and set(first.values) <= set(m.values), name
    for k, v in first.values.items():
        if m.values[k] is not None:  # headline values are finite on a valid input
            assert math.isfinite(v), (name, k, v)
    again = _run(name)
    assert again.values == first.values, f"{name}: same inputs and seed, different values"


@pytest.mark.parametrize("name", METRICS)
def test_metric_declares_its_facts(name):
    m = all_metrics()[name]
    assert m.family in FAMILIES and m.family != OTHER, name
    directed = [v for v, d in m.values.items() if d is not None]
    assert set(m.headline) <= set(directed) and bool(m.headline) == bool(directed), name
    assert set(m.scales) == set(m.values), f"{name}: a scale for every value"
    assert all(m.scale(v) in SCALES for v in m.values), name
    for f in m.figures:
        assert f in FIGURES and set(FIGURES[f]) <= set(m.values), (name, f)
    n, param = m.min_items(m.defaults)
    assert isinstance(n, int) and n >= 1 and (param == "" or param in m.params), name
    assert isinstance(m.sweepable, bool)
    described = m.describe()
    assert described["family"] == m.family and described["headline"] == list(m.headline)
    assert described["scales"] == dict(m.scales) and described["figures"] == list(m.figures)


def test_figures_and_sweeps_are_fed_by_the_registered_metrics():
    assert metrics_feeding("pr_plane") == ["precision_recall"]
    assert metrics_feeding("pr_curves") == ["prd"]
    assert metrics_feeding("spectra") == ["face"]
    assert [n for n, m in all_metrics().items() if m.sweepable] == ["precision_recall"]
    with pytest.raises(ValueError, match="figure must be one of"):
        metrics_feeding("heatmap")


def _invalid_values(param: Param) -> list:
    probes = ["four", 2.7, True, float("inf"), -1, 10**30, "", {"a": 1}]
    out = []
    for v in probes:
        try:
            param.check(v, param.name)
        except GenmetricsError:
            out.append(v)
    return out


@pytest.mark.parametrize("name", METRICS)
def test_every_invalid_parameter_is_rejected_naming_it(name):
    m = all_metrics()[name]
    cand = _inputs(m.input, 1)
    ref = _inputs(m.input, 2) if m.reference != "none" else None
    for pname, param in m.params.items():
        bad = _invalid_values(param)
        assert bad, f"{name}.{pname}: accepts every probe value"
        for v in bad:
            with pytest.raises(GenmetricsError, match=rf"\.{pname}: must be"):
                compute(name, cand, ref, {pname: v})


def test_count_or_fraction_keeps_its_type():
    """self_bleu's sample: 1 is one hypothesis, 1.0 is all of them (a fraction)."""
    p = all_metrics()["self_bleu"].params["sample"]
    assert p.check(1, "sample") == 1 and isinstance(p.check(1, "sample"), int)
    assert p.check(1.0, "sample") == 1.0 and isinstance(p.check(1.0, "sample"), float)
    assert p.check("0.2", "sample") == 0.2 and p.check("all", "sample") == "all"
    with pytest.raises(GenmetricsError, match="got 1.5"):
        p.check(1.5, "sample")


def test_metrics_declare_the_offline_assets_they_need():
    from genmetrics.data.assets import ASSETS

    m = all_metrics()
    assert m["distinct_n"].assets(m["distinct_n"].defaults) == ("gpt2_bpe",)
    assert m["self_bleu"].assets({**m["self_bleu"].defaults, "tokenizer": "whitespace"}) == ()
    assert m["rouge"].assets(m["rouge"].defaults) == ("nltk_data",)
    for metric in m.values():
        assert set(metric.assets(metric.defaults)) <= set(ASSETS), metric.name
