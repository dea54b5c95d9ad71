"""The OmniInput study jobs (rules/omniinput.smk, configs/omniinput_compare.yaml): train the
classifier of a classifier run and sample its logit, compare models over seeds, and tabulate
two annotators' r(z) on the same samples. The LM runs' own jobs are in
:mod:`genmetrics.omniinput.jobs`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from genmetrics.omniinput.density import Bins, WLResult


def _tokenizer(manifest: str | Path) -> Any:
    from transformers import AutoTokenizer

    from genmetrics.models.checkpoints import _model_path

    path, revision = _model_path(manifest)
    return AutoTokenizer.from_pretrained(path, revision=revision)


def train_classifier_job(
    settings: Mapping[str, Any], tokenizer_manifest: str | Path, out: str | Path
) -> dict[str, Any]:
    """``omniinput.classifiers.<name>`` trained (:mod:`genmetrics.studies.omniinput_compare.classifier`)."""
    from genmetrics.studies.omniinput_compare.classifier import train_classifier

    return train_classifier(labelled_paths(settings), _tokenizer(tokenizer_manifest), out)


def labelled_paths(settings: Mapping[str, Any]) -> dict[str, Any]:
    """A classifier's settings with ``train`` and ``heldout`` as local paths: an upstream
    ``source`` is read from the data mirror or made from its upstream
    (:func:`genmetrics.data.mirror.resolve_source`, into the config's ``cache``)."""
    from genmetrics.data.mirror import resolve_source

    out = dict(settings)
    for part in ("train", "heldout"):
        if "source" in out[part]:
            cache = Path(out["cache"]) if out.get("cache") else None
            key = f"omniinput.classifiers.{out.get('name', '<name>')}.{part}.source"
            out[part] = {"path": str(resolve_source(out[part]["source"], cache, key))}
    return out


def sample_classifier_run(
    classifier: str | Path,
    settings: Mapping[str, Any],
    out: str | Path,
    checkpoint: str | Path,
) -> WLResult:
    """The sampler over V^L of the classifier's tokenizer, z = its positive-class logit."""
    import hashlib

    from genmetrics.omniinput.jobs import _resumable_walk, settings_key
    from genmetrics.studies.omniinput_compare.classifier import BagOfTokens

    f = BagOfTokens.load(classifier)
    b = settings["bins"]
    weights = hashlib.sha256(Path(classifier).read_bytes()).hexdigest()
    key = settings_key("classifier-run", dict(settings), weights)
    bins = Bins(b["lo"], b["hi"], b["n"])
    return _resumable_walk(f, bins, settings["proposal"], settings, out, checkpoint, key)


def compare_job(
    settings: Mapping[str, Any], scores: list[str], table: str | Path, figure: str | Path
) -> list[dict[str, Any]]:
    """The comparison's AUPR table (CSV) and its figure of mean PR curves over seeds."""
    import pandas as pd

    from genmetrics.figures.omniinput_compare import omniinput_compare_figure
    from genmetrics.io import read_json, write_csv
    from genmetrics.studies.omniinput_compare.compare import comparison_rows, mean_curve

    records = {Path(p).parent.name: read_json(p) for p in scores}
    rows = comparison_rows(settings, records)
    write_csv(table, pd.DataFrame(rows))
    curves = {
        g: mean_curve([records[r] for r in s["runs"].values()]) for g, s in settings["runs"].items()
    }
    evals = sorted(
        {
            records[r]["extras"]["sampler"]["model_evaluations"]
            for s in settings["runs"].values()
            for r in s["runs"].values()
        }
    )
    budget = f"{evals[0]:,}" if evals[0] == evals[-1] else f"{evals[0]:,}–{evals[-1]:,}"
    omniinput_compare_figure(curves, rows, figure, subtitle=f"Sampler budget: {budget} evaluations")
    return rows


def variance_job(
    inputs: Mapping[str, str], settings: Mapping[str, Any], outputs: Mapping[str, str]
) -> dict[str, Any]:
    """Annotator B on the run's samples (the same CSV path as the run's annotator A), then the
    per-bin table (CSV) and its summary (JSON) (:mod:`genmetrics.studies.omniinput_compare.variance`)."""
    import pandas as pd

    from genmetrics.io import write_csv, write_json
    from genmetrics.omniinput.annotation_csv import read_annotations
    from genmetrics.omniinput.density import read_result
    from genmetrics.omniinput.jobs import annotate_run
    from genmetrics.studies.omniinput_compare.variance import variance_table

    annotate_run(
        inputs["result"],
        inputs["samples"],
        inputs["model"],
        settings["annotator_b"],
        outputs["annotations"],
        judge=inputs.get("judge"),
        scores_csv=inputs.get("scores"),
    )
    res = read_result(inputs["result"])
    populated = np.isfinite(res.ln_rho)
    a = read_annotations(inputs["annotations_a"], res.bins, populated=populated)
    b = read_annotations(outputs["annotations"], res.bins, populated=populated)
    rows, summary = variance_table(
        a.scores,
        b.scores,
        res.bins,
        res.ln_rho,
        settings["direction"],
        settings["threshold"],
        tuple(settings["labels"]),
    )
    write_csv(outputs["table"], pd.DataFrame(rows))
    summary["annotators"] = {
        settings["labels"][0]: settings["annotator_a"],
        settings["labels"][1]: settings["annotator_b"],
    }
    write_json(outputs["summary"], summary)
    return summary
