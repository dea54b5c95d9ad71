"""One score job of the workflow (rules/metrics.smk): the score record of a metric entry for
one (dataset, source), with or without length control. The job looks its metric up once
(:func:`genmetrics.metrics.get`) and hands the :class:`~genmetrics.metrics.registry.Metric`
down: its params are checked where the files are read, its interval's resamples run it
directly (:func:`genmetrics.metrics.invoke.run`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from genmetrics.data.words import DEFAULT_LANGUAGE
from genmetrics.metrics import get
from genmetrics.scoring.from_files import score_files
from genmetrics.scoring.length_control import score_shortest


def score_entry(
    settings: Mapping[str, Any],
    *,
    entry: str,
    dataset: str,
    source: str,
    candidate: str | Path,
    reference: str | Path | None = None,
    group: Iterable[str | Path] = (),
) -> dict[str, Any]:
    """One score job: the score record of ``entry`` for one (dataset, source).

    ``settings`` is :meth:`ScoreEntry.settings` (metric, params, reference, length_control)
    plus the dataset's ``language`` where it is not a whitespace language (words of
    ``mean_words`` and of the cut). With ``length_control: shortest`` every text is first cut,
    per prompt, to the shortest text among the ``group`` files (the dataset's every source;
    with ``shortest_models`` its models' texts only; see
    :func:`genmetrics.scoring.length_control.score_shortest`). ``settings["interval"]``: the
    entry's interval over prompts (:mod:`genmetrics.scoring.intervals`; the plan resolves it), the
    record's ``interval``.
    """
    metric, params = get(settings["metric"]), settings["params"]
    language = settings.get("language", DEFAULT_LANGUAGE)
    interval = settings.get("interval")
    if settings["length_control"] in ("shortest", "shortest_models"):
        rec = score_shortest(metric, candidate, reference, list(group), params, language, interval)
    else:
        rec = score_files(
            metric, candidate, reference, params, language=language, interval=interval
        )
    return {
        "metric": rec["metric"],
        "entry": entry,
        "dataset": dataset,
        "source": source,
        "reference": settings["reference"],
        "length_control": settings["length_control"],
        **rec,
    }
