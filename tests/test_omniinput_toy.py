"""OmniInput on real (tiny) neural networks: the digit GPT-2 toy against exact enumeration, the
causal-LM output function and its gradient, the registered metric, the jobs the workflow runs
(resume, lock, annotation paths into the same curve code) and the config checks."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np
import pytest

from genmetrics import GenmetricsError
from genmetrics.metrics import compute
from genmetrics.omniinput import Bins, enumerate_outputs, wang_landau
from genmetrics.omniinput.annotation_csv import read_annotations
from genmetrics.omniinput.curves import Density, precision_recall_curve
from genmetrics.omniinput.density import read_result
from genmetrics.omniinput.digits import DigitLM, DigitToySpec
from genmetrics.omniinput.lm import CausalLMOutput
from genmetrics.omniinput.toy import all_sequences
from genmetrics.omniinput.validation import exact_truth, monte_carlo, validation_entry

#: a toy that trains in a few seconds: 10^4 inputs, digit sum divisible by 18 (the mode of 4
#: digits), so the model has something to learn
SMALL = DigitToySpec(vocab_size=10, length=4, modulus=18, steps=300, batch_size=128, lr=3e-3)


@pytest.fixture(scope="module")
def small_toy(tmp_path_factory) -> tuple[DigitLM, Path]:
    lm, log = DigitLM.train(SMALL)
    d = tmp_path_factory.mktemp("toy")
    lm.save(d / "model", log)
    return lm, d


@pytest.fixture(scope="module")
def small_exact(small_toy):
    lm, _ = small_toy
    z = enumerate_outputs(lm, SMALL.vocab_size, SMALL.length)
    bins = Bins(float(z.min()), float(z.max()), 16)
    ln_rho, r = exact_truth(z, lm.rule(all_sequences(10, SMALL.length)), bins)
    return z, bins, ln_rho, r


def test_digit_toy_learns_the_rule_and_is_a_distribution(small_toy, small_exact):
    lm, _ = small_toy
    z, _, _, _ = small_exact
    x = all_sequences(10, SMALL.length)
    valid = lm.rule(x) == 1
    # Σ_x p(x) = 1 over Ω (the softmax is over the digits only), to float32 accuracy
    assert np.exp(-SMALL.length * z).sum() == pytest.approx(1.0, abs=1e-4)
    # the trained model prefers valid sequences: a known ordering after training
    assert z[valid].mean() < z[~valid].mean() - 0.3
    assert SMALL.valid_fraction() == pytest.approx(valid.mean(), abs=1e-12)


def test_digit_toy_gradient_is_the_derivative_of_z(small_toy):
    """∂z/∂onehot against a central difference along a random continuous direction."""
    import torch

    lm, _ = small_toy
    x = all_sequences(10, SMALL.length, 1234, 1240)
    z, g = lm.grad(x)
    np.testing.assert_allclose(z, lm(x), atol=1e-5)
    d = np.random.default_rng(0).normal(size=g.shape)
    xt = torch.from_numpy(x)
    base = torch.nn.functional.one_hot(xt, 10).float()
    with torch.no_grad():

        def zf(eps: float) -> np.ndarray:
            oh = base + eps * torch.from_numpy(d).float()
            return (-lm._log_probs(xt, oh).mean(-1)).double().numpy()

        # the model computes in float32: a step of 1e-3 keeps rounding (1e-7 / 1e-3) and the
        # O(eps^2) truncation both near 1e-4
        fd = (zf(1e-3) - zf(-1e-3)) / 2e-3
    np.testing.assert_allclose(fd, (g * d).sum(axis=(1, 2)), rtol=1e-3, atol=2e-3)


def test_wang_landau_on_the_digit_toy_within_tolerance(small_toy, small_exact):
    """The issue's small toy (< 1 min): both proposals reach every populated bin and estimate
    ln ρ within 0.35 at the same evaluation budget; the PR curve within 0.1."""
    lm, _ = small_toy
    _, bins, ln_rho, r = small_exact
    for proposal in ("uniform", "gradient"):
        res = wang_landau(
            lm,
            10,
            SMALL.length,
            bins,
            walkers=32,
            proposal=proposal,
            grad_f=lm.grad,
            check_every=50,
            ln_f_final=1e-12,
            max_evaluations=60_000,
            seed=0,
        )
        e = validation_entry(res, ln_rho, r, lm.rule)
        assert e["bins_reached"] == e["bins_populated_exact"] == int(np.isfinite(ln_rho).sum())
        assert e["max_abs_log_rho_error"] < 0.35, (proposal, e)
        assert e["pr_curve_linf_error"] < 0.1, (proposal, e)
        assert e["model_evaluations"] <= 60_000


def test_monte_carlo_baseline_is_unbiased_and_misses_rare_bins(small_toy, small_exact):
    lm, _ = small_toy
    _, bins, ln_rho, r = small_exact
    res = monte_carlo(lm, 10, SMALL.length, bins, 20_000, seed=0)
    e = validation_entry(res, ln_rho, r, lm.rule)
    # bulk bins: count / N · |Ω| within a few binomial standard errors
    counts = np.exp(ln_rho)
    big = counts > 1000
    se = np.sqrt(counts[big] / 1e4 * 20_000) / 20_000 * 1e4
    assert np.all(np.abs(np.exp(res.ln_rho[big]) - counts[big]) < 5 * se)
    assert e["bins_reached"] <= e["bins_populated_exact"]
    # with 300 draws the rare tail bins (0.1-0.3 % of the inputs here) are missed, and only
    # those: what the Wang-Landau walk (previous test: every bin) is for
    few = validation_entry(monte_carlo(lm, 10, SMALL.length, bins, 300, seed=0), ln_rho, r, lm.rule)
    assert few["bins_missed"], few
    assert max(m["exact_count"] for m in few["bins_missed"]) <= 30


def test_causal_lm_output_and_gradient(tiny_lm):
    """z of a real (tiny, random) transformers LM: the mean NLL of the L tokens after BOS, as
    computed by the model's own loss; the gradient against a central difference."""
    import torch

    model, tok = tiny_lm
    f = CausalLMOutput(model, tok, length=5)
    x = np.random.default_rng(1).integers(0, f.vocab_size, size=(4, 5))
    z = f(x)
    with torch.no_grad():
        ids = torch.cat([torch.full((4, 1), f.start), torch.from_numpy(x)], dim=1)
        logits = model(ids).logits[:, :-1].float()
        nll = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1), reduction="none"
        )
    np.testing.assert_allclose(z, nll.reshape(4, 5).mean(-1).numpy(), rtol=1e-5)
    z2, g = f.grad(x)
    np.testing.assert_allclose(z2, z, rtol=1e-5)
    assert g.shape == (4, 5, f.vocab_size)
    d = np.random.default_rng(2).normal(size=g.shape) * 0.1
    xt = torch.from_numpy(x)
    base = torch.nn.functional.one_hot(xt, f.vocab_size).float()
    with torch.no_grad():

        def zf(eps: float) -> np.ndarray:
            oh = base + eps * torch.from_numpy(d).float()
            return (-f._log_probs(xt, oh).mean(-1)).double().numpy()

        fd = (zf(1e-2) - zf(-1e-2)) / 2e-2
    np.testing.assert_allclose(fd, (g * d).sum(axis=(1, 2)), rtol=2e-2, atol=2e-3)
    with pytest.raises(GenmetricsError, match="shape"):
        f(x[:, :3])
    with pytest.raises(GenmetricsError, match="token ids"):
        f(np.full((1, 5), f.vocab_size))


# ------------------------------------------------------------------ the registered metric


def test_omniinput_metric_hand_computed():
    """Two bins, ρ = (1, 3) of |Ω| = 4, r = (1, 0): precision over everything 1/4, at the first
    edge 1; recall 1 at both; log_recall = ln(1/4); AUPR = 1 (precision 1 up to recall 1)."""
    bins = Bins(0.0, 2.0, 2)
    d = Density(
        bins=bins,
        ln_rho=np.log([1.0, 3.0]),
        r=np.array([1.0, 0.0]),
        counts=np.array([5, 5]),
        ln_space=math.log(4),
    )
    out = compute("omniinput", d)
    assert out.values["precision"] == pytest.approx(0.25)
    assert out.values["recall"] == pytest.approx(1.0)
    assert out.values["log_recall"] == pytest.approx(math.log(0.25))
    assert out.values["aupr"] == pytest.approx(1.0)
    assert out.values["bins_annotated"] == 2
    at = compute("omniinput", d, params={"threshold": 1.0})
    assert at.values["precision"] == pytest.approx(1.0)
    assert at.extras["threshold_used"] == 1.0
    below = compute("omniinput", d, params={"threshold": 0.5})  # selects no whole bin
    assert math.isnan(below.values["precision"]) and below.values["recall"] == 0.0
    high = Density(bins, d.ln_rho, d.r, d.counts, d.ln_space, direction="high")
    # z ≥ 1 selects the second bin only: precision 0
    assert compute("omniinput", high, params={"threshold": 1.0}).values["precision"] == 0.0
    with pytest.raises(GenmetricsError, match="outside"):
        compute("omniinput", Density(bins, d.ln_rho, np.array([1.5, 0]), d.counts, d.ln_space))
    with pytest.raises(GenmetricsError, match="ln_space"):
        compute("omniinput", Density(bins, d.ln_rho, d.r, d.counts, math.log(3)))


# ------------------------------------------------------------------ workflow jobs


def _toy_settings(**over) -> dict:
    s = {
        "vocab_size": 10,
        "length": SMALL.length,
        "modulus": SMALL.modulus,
        "model": {
            "layers": 2,
            "d_model": 64,
            "heads": 4,
            "steps": 300,
            "batch_size": 128,
            "lr": 3e-3,
        },
        "bins": 16,
        "budget": 6_000,  # the resume/lock/validation mechanics, not accuracy (that is above)
        "proposals": ["uniform", "gradient", "monte_carlo"],
        "max_sequences": 20_000_000,
        "seed": 0,
        "sampler": {
            "walkers": 32,
            "flatness": 0.8,
            "check_every": 50,
            "ln_f_start": 1.0,
            "ln_f_final": 1e-12,
            "one_over_t": True,
            "samples_per_bin": 10,
            "uniform_mix": 0.0,
            "max_entry_evaluations": 100_000,
            "checkpoint_every": 20,
        },
    }
    s.update(over)
    return s


def test_toy_jobs_resume_lock_and_validation(small_toy, tmp_path):
    from genmetrics.generation.progress import hold_lock
    from genmetrics.omniinput import jobs

    _, d = small_toy
    settings = _toy_settings()
    exact = tmp_path / "exact.npz"
    info = jobs.exact_toy(d / "model", settings, exact)
    assert info["inputs"] == 10**SMALL.length
    ckpt = tmp_path / "progress" / "gradient.ckpt.npz"
    # an interrupted first attempt leaves its checkpoint; the rerun resumes from it
    lm = DigitLM.load(d / "model")
    bins, *_ = jobs.read_exact(exact)
    key = jobs.settings_key("toy", dict(settings), "gradient", bins.as_dict())
    sampler = {k: settings["sampler"][k] for k in jobs.SAMPLER_KEYS}
    part = wang_landau(
        lm, 10, SMALL.length, bins, proposal="gradient", grad_f=lm.grad,
        max_evaluations=settings["budget"], seed=0, checkpoint=ckpt, checkpoint_key=key,
        stop_after_evaluations=2_000, **sampler,
    )  # fmt: skip
    assert part.stopped == "interrupted" and ckpt.exists()
    with hold_lock(ckpt, "sampler run"):  # a second job on the same run stops at once
        with pytest.raises(GenmetricsError, match="another job is working on this sampler run"):
            jobs.sample_toy(d / "model", exact, "gradient", settings, tmp_path / "g.npz", ckpt)
    resumed = jobs.sample_toy(d / "model", exact, "gradient", settings, tmp_path / "g.npz", ckpt)
    assert not ckpt.exists()  # dropped once the output is written
    fresh = jobs.sample_toy(
        d / "model", exact, "gradient", settings, tmp_path / "g2.npz", tmp_path / "other.npz"
    )
    np.testing.assert_array_equal(resumed.ln_rho, fresh.ln_rho)
    assert resumed.model_evaluations == fresh.model_evaluations
    # a checkpoint of other settings is started afresh, not resumed
    wang_landau(
        lm, 10, SMALL.length, bins, proposal="gradient", grad_f=lm.grad,
        max_evaluations=settings["budget"], seed=1, checkpoint=ckpt, checkpoint_key="other",
        stop_after_evaluations=1_000, **sampler,
    )  # fmt: skip
    again = jobs.sample_toy(d / "model", exact, "gradient", settings, tmp_path / "g3.npz", ckpt)
    np.testing.assert_array_equal(again.ln_rho, fresh.ln_rho)
    results = {"gradient": tmp_path / "g.npz"}
    jobs.sample_toy(d / "model", exact, "uniform", settings, tmp_path / "u.npz", tmp_path / "u.c")
    jobs.sample_toy(
        d / "model", exact, "monte_carlo", settings, tmp_path / "m.npz", tmp_path / "m.c"
    )
    results.update(uniform=tmp_path / "u.npz", monte_carlo=tmp_path / "m.npz")
    val = jobs.validate_toy(d / "model", exact, results)
    assert set(val["proposals"]) == {"uniform", "gradient", "monte_carlo"}
    for e in val["proposals"].values():
        for key in (
            "max_abs_log_rho_error",
            "pr_curve_linf_error",
            "bins_populated_exact",
            "bins_reached",
            "model_evaluations",
        ):
            assert key in e
        assert e["model_evaluations"] <= settings["budget"]
    assert sum(val["exact_counts"]) == 10**SMALL.length
    assert read_result(tmp_path / "g.npz").vocab_size == 10
    # the toy figure draws what omniinput.validation computes from these files
    from genmetrics.figures.omniinput import omniinput_toy_figure
    from genmetrics.io import write_json
    from genmetrics.omniinput.validation import toy_comparison

    write_json(tmp_path / "validation.json", val)
    data = toy_comparison(exact, results, tmp_path / "validation.json")
    assert list(data.runs) == ["gradient", "uniform", "monte_carlo"]
    assert data.space_size == 10**SMALL.length and data.n_bins == bins.n
    g = data.runs["gradient"]
    assert g.pr_curve_linf_error == val["proposals"]["gradient"]["pr_curve_linf_error"]
    np.testing.assert_array_equal(g.ln_rho, resumed.ln_rho)
    omniinput_toy_figure(data, tmp_path / "toy.png")
    assert (tmp_path / "toy.png").read_bytes()[:4] == b"\x89PNG"


def test_human_csv_and_automatic_annotator_give_the_same_curve(tiny_model_dir, tmp_path):
    """The LM-run path end to end on a tiny model: sample, export the CSV, fill it as raters
    would with the rule's own scores, and check that the CSV path and the automatic path give
    the same density and the same score record."""
    from genmetrics.models.checkpoints import load_causal_lm
    from genmetrics.omniinput import jobs

    model, tok = load_causal_lm(tiny_model_dir)
    f = CausalLMOutput(model, tok, length=3)
    z = f(np.random.default_rng(0).integers(0, f.vocab_size, size=(256, 3)))
    bins = Bins(float(np.quantile(z, 0.05)), float(np.quantile(z, 0.95)), 6)
    res = wang_landau(f, f.vocab_size, 3, bins, walkers=8, max_evaluations=4_000, seed=0,
                      check_every=20, samples_per_bin=5)  # fmt: skip
    res.save(tmp_path / "sampler.npz")
    n = jobs.export_run(tmp_path / "sampler.npz", tiny_model_dir, tmp_path / "samples.csv")
    assert n == sum(len(s) for s in res.samples) > 0
    rule = {"kind": "rule", "rule": "genmetrics.omniinput.annotate:alphabetic_words", "params": {}}
    jobs.annotate_run(tmp_path / "sampler.npz", tmp_path / "samples.csv", tiny_model_dir, rule,
                      tmp_path / "auto.csv")  # fmt: skip
    # raters: copy the automatic scores into the exported CSV's empty score column
    with open(tmp_path / "auto.csv", newline="", encoding="utf-8") as fh:
        auto = list(csv.DictReader(fh))
    with open(tmp_path / "samples.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert all(r["score"] == "" for r in rows) and len(rows) == len(auto)
    for r, a in zip(rows, auto, strict=True):
        assert (r["bin"], r["tokens"], r["text"]) == (a["bin"], a["tokens"], a["text"])
        r["score"] = a["score"]
    with open(tmp_path / "filled.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    human = {"kind": "csv", "path": str(tmp_path / "filled.csv")}
    jobs.annotate_run(tmp_path / "sampler.npz", tmp_path / "samples.csv", tiny_model_dir, human,
                      tmp_path / "human.csv", scores_csv=tmp_path / "filled.csv")  # fmt: skip
    a = jobs.score_run(tmp_path / "sampler.npz", tmp_path / "auto.csv", "low", tmp_path / "a.npz")
    h = jobs.score_run(tmp_path / "sampler.npz", tmp_path / "human.csv", "low", tmp_path / "h.npz")
    assert a["values"] == h["values"]
    assert a["metric"] == "omniinput" and a["n"]["candidate"] == n
    ann = read_annotations(tmp_path / "auto.csv", bins, populated=np.isfinite(res.ln_rho))
    curve = precision_recall_curve(res.ln_rho, ann.r, bins)
    assert a["values"]["precision"] == pytest.approx(curve["precision"][-1], nan_ok=True)
    # a raters' CSV with a score outside [0, 1] is refused naming the file and line
    rows[1]["score"] = "1.5"
    with open(tmp_path / "bad.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    with pytest.raises(GenmetricsError, match=r"bad\.csv.*line 3"):
        jobs.annotate_run(tmp_path / "sampler.npz", tmp_path / "samples.csv", tiny_model_dir,
                          human, tmp_path / "x.csv", scores_csv=tmp_path / "bad.csv")  # fmt: skip


# ------------------------------------------------------------------ config


def _plan(tmp_path, omni: dict, **extra):
    import yaml

    from genmetrics.plan import load_plan

    repo = Path(__file__).resolve().parents[1]
    cfg = yaml.safe_load((repo / "config.yaml").read_text())
    cfg["omniinput"] = omni
    for k, v in extra.items():
        cfg[k] = v
    return load_plan(cfg, repo / "workflow/schemas/config.schema.yaml")


def test_config_checks(tmp_path):
    ok = _plan(tmp_path, {"toy": {}})
    assert ok.omniinput.toy["modulus"] == 27 and ok.omniinput.toy["sampler"]["walkers"] == 64
    assert "results/omniinput/toy/validation.json" in ok.targets.omniinput_toy
    assert "results/omniinput/toy/validation.json" not in ok.targets.all
    with pytest.raises(GenmetricsError, match=r"omniinput\.toy: vocab_size\^length = 10\^9"):
        _plan(tmp_path, {"toy": {"length": 9}})
    run = {"checkpoint": "smollm2-135m", "length": 8, "bins": {"lo": 3, "hi": 15}}
    with pytest.raises(GenmetricsError, match=r"omniinput\.runs\.r\.annotator: missing"):
        _plan(tmp_path, {"runs": {"r": run}})
    with pytest.raises(GenmetricsError, match=r"omniinput\.runs\.r\.checkpoint: 'nope'"):
        _plan(tmp_path, {"runs": {"r": {**run, "checkpoint": "nope"}}})
    with pytest.raises(
        GenmetricsError, match=r"omniinput\.runs\.r\.annotator\.path: .* not a file"
    ):
        _plan(tmp_path, {"runs": {"r": {**run, "annotator": {"kind": "csv", "path": "/no/such"}}}})
    # the export it asks for lies under the config's results_dir (a study's own tree)
    with pytest.raises(
        GenmetricsError, match=r"snakemake results/study/omniinput/RUN/samples\.csv"
    ):
        _plan(
            tmp_path,
            {"runs": {"r": {**run, "annotator": {"kind": "csv", "path": "/no/such"}}}},
            results_dir="results/study",
        )
    with pytest.raises(GenmetricsError, match=r"omniinput\.runs\.r\.bins: need lo < hi"):
        _plan(tmp_path, {"runs": {"r": {**run, "bins": {"lo": 5, "hi": 5}, "annotator": {"kind": "rule", "rule": "a:b"}}}})  # fmt: skip
    judged = _plan(tmp_path, {"runs": {"r": {**run, "annotator": {"kind": "judge_lm", "checkpoint": "smollm2-135m"}}}})  # fmt: skip
    res = judged.job_resources("omni_sample", "r")
    assert res.gpus == 1 and res.runtime == 240
    with pytest.raises(GenmetricsError, match=r"metrics\.oi: omniinput scores a model's input"):
        _plan(tmp_path, {}, metrics={"oi": {"metric": "omniinput"}})
