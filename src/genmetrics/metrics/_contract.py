"""Checks of facts of the metric contract (:mod:`genmetrics.metrics.registry`): the input kind
chosen by a parameter (``input_by``), the presets of a parameter, the prompt ids of a
per-prompt metric, and texts given to a metric that reads features, and the links of paired
rows."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.metrics.kinds import FROM_TEXTS, KINDS
from genmetrics.params import Param


def check_input_by(
    name: str,
    input: str,
    declared: Mapping[str, Param],
    input_by: Mapping[str, Mapping[Any, str]],
) -> None:
    """Each ``input_by`` parameter is declared, names values it accepts and kinds of
    :data:`KINDS`, and its default keeps ``input`` (the kind of the default parameters)."""
    for key, kinds in input_by.items():
        if key not in declared:
            raise ValueError(f"metric {name!r}: input_by parameter {key!r} is not declared")
        for value, kind in kinds.items():
            declared[key].check(value, f"metric {name!r} input_by {key}")
            if kind not in KINDS:
                raise ValueError(
                    f"metric {name!r}: input_by {key}={value!r} names kind {kind!r}, not one "
                    f"of {tuple(KINDS)}"
                )
        if kinds.get(declared[key].default, input) != input:
            raise ValueError(
                f"metric {name!r}: the default {key}={declared[key].default!r} reads "
                f"{kinds[declared[key].default]!r}, but input is {input!r}"
            )


def check_presets(
    name: str, declared: Mapping[str, Param], presets: Mapping[str, Mapping[str, Any]]
) -> None:
    """Each preset parameter is declared with exactly its choices as options, names only
    declared settings with values they accept, and its default choice implies the
    signature's defaults (so a direct call of the function agrees with the registry)."""
    for key, choices in presets.items():
        if key not in declared:
            raise ValueError(f"metric {name!r}: preset parameter {key!r} is not declared")
        for choice, preset in choices.items():
            declared[key].check(choice, f"metric {name!r} preset {key}")
            for setting, value in {**preset.defaults, **preset.fixed}.items():
                if setting not in declared or setting in presets:
                    raise ValueError(
                        f"metric {name!r}: preset {key}={choice} sets {setting!r}, not a "
                        "plain declared parameter"
                    )
                declared[setting].check(value, f"metric {name!r} preset {key}={choice}")
        default = choices.get(declared[key].default)
        if default is None:
            raise ValueError(f"metric {name!r}: the default {key} has no preset")
        for setting, value in {**default.defaults, **default.fixed}.items():
            if declared[setting].default != value:
                raise ValueError(
                    f"metric {name!r}: {key}={declared[key].default} (the default) implies "
                    f"{setting}={value!r}, the signature says {declared[setting].default!r}"
                )


def check_prompt_ids(name: str, prompt_ids: Sequence[Any] | None, n_cand: int) -> list[str]:
    """One prompt id per candidate, as strings (a missing one is an error, never a guess)."""
    if prompt_ids is None:
        raise GenmetricsError(
            f"metric {name!r} scores each prompt's samples: give prompt_ids, one per candidate"
        )
    if isinstance(prompt_ids, (str, bytes)):
        raise GenmetricsError(f"metric {name!r}: prompt_ids must be a list, got one string")
    out = list(prompt_ids)
    if len(out) != n_cand:
        raise GenmetricsError(f"metric {name!r}: {len(out)} prompt ids for {n_cand} candidates")
    bad = [i for i, p in enumerate(out) if p is None or str(p) == ""]
    if bad:
        raise GenmetricsError(
            f"metric {name!r}: {len(bad)} candidate(s) have no prompt id, first {bad[0]}"
        )
    return [str(p) for p in out]


def refuse_texts(name: str, kind: str, **inputs: Any) -> None:
    """Metric ``name`` reads features (``kind``: embeddings, surprisal, POS tags) and was given
    texts: an error saying what makes its input from texts
    (:data:`genmetrics.metrics.kinds.FROM_TEXTS`)."""
    if kind not in FROM_TEXTS:
        return
    for role, x in inputs.items():
        texts = isinstance(x, (list, tuple)) and bool(x) and all(isinstance(t, str) for t in x)
        if isinstance(x, str) or texts:
            func, option = FROM_TEXTS[kind]
            cli = f"the texts with --{option} NAME" if option else "the texts (tagged on load)"
            raise GenmetricsError(
                f"metric {name!r} reads {kind}, not texts (got texts as the {role}): make them "
                f"with {func}(texts, ...) first, or on the command line give {cli} "
                "(genmetrics score --help)"
            )


def check_links(
    name: str, links: Sequence[Sequence[int]] | None, kwargs: Mapping[str, Any]
) -> list[list[int]] | None:
    """Links as lists of valid reference indices, one list per candidate (or None)."""
    if links is None or "reference" not in kwargs:
        return None
    n_ref, n_cand = len(kwargs["reference"]), len(kwargs["candidate"])
    out = [[int(j) for j in group] for group in links]
    if len(out) != n_cand:
        raise GenmetricsError(f"metric {name!r}: {len(out)} link groups for {n_cand} candidates")
    for i, group in enumerate(out):
        if not group or min(group) < 0 or max(group) >= n_ref:
            raise GenmetricsError(
                f"metric {name!r}: candidate {i} links to {group}, not to references 0..{n_ref - 1}"
            )
    return out
