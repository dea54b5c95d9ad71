"""The config's ``analysis: scaling:`` section (FACE-2's scaling study) checked against the
plan's models and metric entries; errors name the key."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.plan.objects import Model, ScoreEntry
from genmetrics.plan.variants import resolve_names


def scaling_settings(
    spec: Mapping[str, Any] | None,
    entries: Mapping[str, ScoreEntry],
    models: Mapping[str, Model],
    groups: Mapping[str, tuple[str, ...]],
) -> dict | None:
    """``analysis.scaling`` checked: members are models, metrics are entries whose scores the
    analysis can recompute on resampled prompts, languages name datasets (a few-shot one: each
    of its variants), and the spectra figure's entry (:func:`spectra_entry`) is a face
    entry."""
    if not spec:
        return None
    key = "analysis.scaling"
    for fam, members in spec["families"].items():
        for m in members:
            if m not in models:
                raise GenmetricsError(f"{key}.families.{fam}: {m!r} is not in models")
        if len(set(members.values())) != len(members):
            raise GenmetricsError(f"{key}.families.{fam}: sizes must differ, got {members}")
    names = list(spec.get("metrics") or entries)
    for name in names:
        if name not in entries:
            raise GenmetricsError(f"{key}.metrics: {name!r} is not in metrics")
        if entries[name].length_control != "none":
            raise GenmetricsError(
                f"{key}.metrics: {name!r} uses length_control; the analysis resamples each "
                "source on its own and cannot recut texts to the shortest"
            )
    languages = {
        v: lang
        for ds, lang in spec["languages"].items()
        for v in resolve_names([ds], groups, f"{key}.languages")
    }
    return {
        "families": {f: dict(m) for f, m in spec["families"].items()},
        "metrics": names,
        "bootstrap": int(spec["bootstrap"]),
        "seed": int(spec["seed"]),
        "languages": languages,
        "spectra_entry": spectra_entry(spec.get("spectra_entry"), names, entries),
        "directions": dict(spec.get("directions") or {}),
        "notes": dict(spec.get("notes") or {}),
    }


def spectra_entry(
    given: str | None, names: Sequence[str], entries: Mapping[str, ScoreEntry]
) -> str | None:
    """The face entry of the smoothed-spectra figure: ``given`` (checked), else the first
    face entry of the scaling metrics ``names`` with convention face2 and zscore true (the
    FACE-2 paper's z + L2 spectrum), else the first with convention face2, else the first
    face entry; None when the scaling metrics have no face entry."""
    key = "analysis.scaling.spectra_entry"
    if given is not None:
        if given not in entries:
            raise GenmetricsError(f"{key}: {given!r} is not in metrics")
        if entries[given].metric != "face":
            raise GenmetricsError(
                f"{key}: {given!r} runs {entries[given].metric}; the figure draws the spectra "
                "of a face entry"
            )
        return given
    face = [n for n in names if entries[n].metric == "face"]
    for want in (
        lambda p: p.get("convention") == "face2" and p.get("zscore"),
        lambda p: p.get("convention") == "face2",
        lambda p: True,
    ):
        pick = next((n for n in face if want(entries[n].params)), None)
        if pick is not None:
            return pick
    return None
