"""The OmniInput workflow jobs (rules/omniinput.smk calls these through thin scripts).

Toy validation: train the digit GPT-2 → enumerate Ω exactly (ln ρ and r per bin, the bins over
the exact output range) → one sampler run per proposal kind at the same evaluation budget →
``validation.json`` (:mod:`genmetrics.omniinput.validation`).

Language-model runs: sample (a GPU job, resumable: its checkpoint lives outside the job's
outputs, keyed by the settings, model and code, and locked while the job runs) → export the
representative samples to a CSV for raters → annotate (a judge LM, a rule, or the raters'
filled CSV; every path writes the same CSV with scores) → the density file and the
``omniinput`` metric's score record.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.omniinput.annotate import (
    DEFAULT_JUDGE_TEMPLATE,
    annotate,
    judge_lm_annotator,
    rule_annotator,
)
from genmetrics.omniinput.annotation_csv import export_samples, read_annotations
from genmetrics.omniinput.curves import Density, write_density
from genmetrics.omniinput.density import Bins, WLResult, read_result
from genmetrics.omniinput.digits import DigitLM, DigitToySpec
from genmetrics.omniinput.sampler import wang_landau
from genmetrics.omniinput.toy import all_sequences, enumerate_outputs
from genmetrics.omniinput.validation import (
    exact_truth,
    monte_carlo,
    read_exact,
    validation_entry,
    write_exact,
)

_log = logging.getLogger("genmetrics")
SAMPLER_KEYS = (
    "walkers",
    "flatness",
    "check_every",
    "ln_f_start",
    "ln_f_final",
    "one_over_t",
    "samples_per_bin",
    "uniform_mix",
    "max_entry_evaluations",
    "checkpoint_every",
)


def settings_key(*parts: Any) -> str:
    """sha256 of the JSON of ``parts`` (a checkpoint's key)."""
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def _threads() -> None:
    import torch

    from genmetrics.devices import available_cpus

    torch.set_num_threads(max(1, available_cpus()))


# ------------------------------------------------------------------ toy


def toy_spec(settings: Mapping[str, Any]) -> DigitToySpec:
    return DigitToySpec(
        vocab_size=settings["vocab_size"],
        length=settings["length"],
        modulus=settings["modulus"],
        seed=settings["seed"],
        **settings["model"],
    )


def train_toy(settings: Mapping[str, Any], out_dir: str | Path) -> dict[str, Any]:
    """Train the digit toy and save it to ``out_dir``; returns the training log."""
    import os
    import shutil

    _threads()
    lm, log = DigitLM.train(toy_spec(settings), progress=True)
    tmp = Path(f"{out_dir}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    lm.save(tmp, log)
    os.replace(tmp, out_dir)  # the folder appears whole or not at all
    return log


def exact_toy(model_dir: str | Path, settings: Mapping[str, Any], out: str | Path) -> dict:
    """Enumerate every input: z, the rule, the bins over the exact range, ln ρ and r."""
    _threads()
    lm = DigitLM.load(model_dir)
    spec = lm.spec
    z = enumerate_outputs(lm, spec.vocab_size, spec.length, max_sequences=settings["max_sequences"])
    bins = Bins(float(z.min()), float(z.max()), settings["bins"])
    scores = np.empty(len(z))
    for start in range(0, len(z), 1_000_000):
        x = all_sequences(spec.vocab_size, spec.length, start, min(start + 1_000_000, len(z)))
        scores[start : start + len(x)] = lm.rule(x)
    ln_rho, r = exact_truth(z, scores, bins)
    write_exact(out, bins, ln_rho, r, float(scores.mean()), len(z))
    return {"inputs": len(z), "z_range": [bins.lo, bins.hi], "valid_fraction": scores.mean()}


def sample_toy(
    model_dir: str | Path,
    exact: str | Path,
    proposal: str,
    settings: Mapping[str, Any],
    out: str | Path,
    checkpoint: str | Path,
) -> WLResult:
    """One proposal kind on the toy, at ``settings['budget']`` evaluations (Monte Carlo has no
    checkpoint: it is a few seconds)."""
    _threads()
    lm = DigitLM.load(model_dir)
    bins, *_ = read_exact(exact)
    if proposal != "monte_carlo":
        key = settings_key("toy", dict(settings), proposal, bins.as_dict())
        return _resumable_walk(lm, bins, proposal, settings, out, checkpoint, key)
    result = monte_carlo(
        lm,
        lm.vocab_size,
        lm.length,
        bins,
        settings["budget"],
        samples_per_bin=settings["sampler"]["samples_per_bin"],
        seed=settings["seed"],
    )
    result.save(out)
    return result


def _resumable_walk(
    f: Any,
    bins: Bins,
    proposal: str,
    settings: Mapping[str, Any],
    out: str | Path,
    checkpoint: str | Path,
    key: str,
) -> WLResult:
    """The sampler as a job: the checkpoint locked while it runs, resumed when its ``key``
    matches, the result written, then the checkpoint dropped."""
    from genmetrics.generation.progress import drop, hold_lock

    with hold_lock(Path(checkpoint), "sampler run"):
        result = wang_landau(
            f,
            f.vocab_size,
            f.length,
            bins,
            proposal=proposal,
            grad_f=f.grad,
            max_evaluations=settings["budget"],
            seed=settings["seed"],
            checkpoint=checkpoint,
            checkpoint_key=key,
            progress=True,
            **{k: settings["sampler"][k] for k in SAMPLER_KEYS},
        )
    result.save(out)
    drop(checkpoint)
    return result


def validate_toy(
    model_dir: str | Path, exact: str | Path, results: Mapping[str, str | Path]
) -> dict[str, Any]:
    """``validation.json``: the toy, the exact ground truth and one entry per proposal kind."""
    lm = DigitLM.load(model_dir)
    bins, ln_rho, r, extra = read_exact(exact)
    entries = {
        kind: validation_entry(read_result(path), ln_rho, r, lm.rule)
        for kind, path in results.items()
    }
    populated = np.isfinite(ln_rho)
    return {
        "toy": asdict(lm.spec),
        "space_size": int(extra["space_size"]),
        "valid_fraction": extra["valid_fraction"],
        "bins": bins.as_dict(),
        "bins_populated_exact": int(populated.sum()),
        "exact_counts": [int(round(math.exp(v))) if np.isfinite(v) else 0 for v in ln_rho],
        "exact_r": [None if np.isnan(v) else float(v) for v in r],
        "proposals": entries,
    }


# ------------------------------------------------------------------ language-model runs


def _load_lm(manifest: str | Path, length: int, trust_remote_code: bool = False):
    from genmetrics.models.checkpoints import load_causal_lm
    from genmetrics.omniinput.lm import CausalLMOutput

    model, tok = load_causal_lm(manifest, trust_remote_code=trust_remote_code)
    return CausalLMOutput(model, tok, length)


def sample_run(
    manifest: str | Path,
    settings: Mapping[str, Any],
    out: str | Path,
    checkpoint: str | Path,
) -> WLResult:
    """The sampler over a language model's V^L (resumable through ``checkpoint``)."""
    from genmetrics.models.checkpoints import read_manifest

    _threads()
    f = _load_lm(manifest, settings["length"])
    b = settings["bins"]
    bins = Bins(b["lo"], b["hi"], b["n"])
    weights = read_manifest(manifest).get("weights_sha256")
    key = settings_key("run", dict(settings), weights)
    return _resumable_walk(f, bins, settings["proposal"], settings, out, checkpoint, key)


def _tokenizer_decode(manifest: str | Path):
    from transformers import AutoTokenizer

    from genmetrics.models.checkpoints import _model_path

    path, revision = _model_path(manifest)
    tok = AutoTokenizer.from_pretrained(path, revision=revision)

    def decode(tokens: np.ndarray) -> str:
        return tok.decode([int(t) for t in tokens], skip_special_tokens=False)

    return decode


def export_run(result: str | Path, manifest: str | Path, out: str | Path) -> int:
    """The representative samples of every bin as a CSV for raters (empty score column)."""
    res = read_result(result)
    return export_samples(out, res.samples, res.bins, decode=_tokenizer_decode(manifest))


def annotate_run(
    result: str | Path,
    samples_csv: str | Path,
    manifest: str | Path,
    annotator: Mapping[str, Any],
    out: str | Path,
    judge: str | Path | None = None,
    scores_csv: str | Path | None = None,
) -> int:
    """The samples CSV with its score column filled: by a judge LM, a rule, or the raters'
    CSV (checked against the bins and the populated bins, then written in the same form)."""
    res = read_result(result)
    decode = _tokenizer_decode(manifest)
    if annotator["kind"] == "csv":  # the raters' scores, one per exported sample, in order
        assert scores_csv is not None
        scores = read_annotations(scores_csv, res.bins, populated=np.isfinite(res.ln_rho)).scores
        want = [len(s) for s in res.samples]
        if [len(s) for s in scores] != want:
            raise GenmetricsError(
                f"{scores_csv}: scores per bin {[len(s) for s in scores]} do not match the "
                f"exported samples per bin {want} (export again: {samples_csv})"
            )
    else:
        scores = annotate(res.samples, _annotator(annotator, judge), decode=decode)
    return export_samples(out, res.samples, res.bins, decode=decode, scores=scores)


def _annotator(spec: Mapping[str, Any], judge: str | Path | None) -> Any:
    """The automatic annotator a run's ``annotator:`` names (a rule or a judge LM)."""
    if spec["kind"] == "rule":
        return rule_annotator(spec["rule"], **spec.get("params", {}))
    from genmetrics.models.checkpoints import load_causal_lm

    assert judge is not None
    model, tok = load_causal_lm(judge)
    return judge_lm_annotator(
        model,
        tok,
        template=spec.get("template") or DEFAULT_JUDGE_TEMPLATE,
        yes=spec["yes"],
        no=spec["no"],
        chat=spec["chat"],
    )


def score_run(
    result: str | Path,
    annotations: str | Path,
    direction: str,
    density_out: str | Path,
) -> dict[str, Any]:
    """The density file (ln ρ̂, r̂ from the annotations) and the ``omniinput`` score record."""
    from genmetrics.scoring.from_files import score_files

    res = read_result(result)
    ann = read_annotations(annotations, res.bins, populated=np.isfinite(res.ln_rho))
    density = Density(
        bins=res.bins,
        ln_rho=res.ln_rho,
        r=np.where(np.isfinite(res.ln_rho), ann.r, np.nan),
        counts=ann.counts,
        ln_space=res.length * math.log(res.vocab_size),
        direction=direction,
    )
    write_density(density_out, density)
    rec = score_files("omniinput", density_out)
    converged = res.stopped == "converged" or res.one_over_t_from is not None
    rec.setdefault("extras", {})["sampler"] = {
        "proposal": res.proposal,
        "model_evaluations": res.model_evaluations,
        "stopped": res.stopped,
        "stages": res.stages,
        "final_ln_f": res.final_ln_f,
        "acceptance_rate": res.acceptance_rate,
        "bins_reached": res.bins_reached,
        "converged": converged,
    }
    if not converged:
        _log.warning(
            "%s: the sampler stopped at its budget after %d ln f halving(s) (ln f = %.3g): "
            "ln ρ̂ is not converged; raise the run's budget",
            result,
            res.stages,
            res.final_ln_f,
        )
    return rec


def summarise_runs(scores: list[str], table: str | Path, figure: str | Path) -> None:
    """The runs' score records as a tidy CSV (run, name, value) and their PR-curve figure."""
    import pandas as pd

    from genmetrics.figures.omniinput import omniinput_runs_figure
    from genmetrics.io import read_json, write_csv

    records = {Path(p).parent.name: read_json(p) for p in scores}
    rows = [
        {"run": run, "metric": "omniinput", "name": k, "value": v}
        for run, rec in records.items()
        for k, v in rec["values"].items()
    ]
    write_csv(table, pd.DataFrame(rows))
    omniinput_runs_figure(records, figure)
