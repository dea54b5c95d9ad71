"""``analysis.instruction_sets`` (Shaib et al. (2024), Tables 9, 12, 13): the section checked,
and the queries of the ``instruction_sets`` rule (its inputs, params, targets) in one place
(:mod:`genmetrics.studies.shaib_diversity.instruction_sets` computes the tables)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.params import canonical
from genmetrics.paths import asset_manifest
from genmetrics.plan.diversity import diversity_entries, headline_value
from genmetrics.plan.inputs import POS_ASSETS
from genmetrics.plan.objects import Model, ScoreEntry
from genmetrics.provenance import code_digest

KEY = "analysis.instruction_sets"
#: modules whose code decides the tables (a params value of the rule)
INSTRUCTION_SETS_CODE = (
    "genmetrics.studies.shaib_diversity.instruction_sets",
    "genmetrics.analysis.paper_comparison",
)


def check_instruction_sets(
    spec: Mapping[str, Any] | None,
    datasets: list[str],
    models: Mapping[str, Model],
    entries: Mapping[str, ScoreEntry],
) -> dict | None:
    """The section resolved (schema defaults filled): ``dataset``, ``sets`` (models on it),
    ``columns`` (one per entry: label, metric, params, headline value, direction, input kind),
    ``seed``, ``size``, ``cuts``, ``paper_rows``; None without the section. Errors name the
    key."""
    if spec is None:
        return None
    ds = spec.get("dataset")
    if ds is None:
        if len(datasets) != 1:
            raise GenmetricsError(f"{KEY}.dataset: name one of the datasets {datasets}")
        ds = datasets[0]
    elif ds not in datasets:
        raise GenmetricsError(f"{KEY}.dataset: {ds!r} is not in datasets {datasets}")
    on = [m for m, model in models.items() if ds in model.datasets]
    sets = spec.get("sets")
    if sets is None:
        sets = on
    for i, name in enumerate(sets):
        if name not in on:
            raise GenmetricsError(f"{KEY}.sets[{i}]: {name!r} is not a model on {ds!r} ({on})")
    if len(sets) < 2:
        raise GenmetricsError(f"{KEY}.sets: two or more instruction sets to compare, got {sets}")
    names = spec.get("entries")
    if names is None:
        names = diversity_entries(entries)
    columns = []
    for i, name in enumerate(names):
        key = f"{KEY}.entries[{i}]"
        if name not in entries:
            raise GenmetricsError(f"{key}: {name!r} is not in metrics")
        e = entries[name]
        if e.length_control != "none" or e.reference is not None:
            raise GenmetricsError(
                f"{key}: {name!r} must be reference-free and without length_control (the study "
                "cuts the texts itself)"
            )
        value, direction = headline_value(key, name, e)
        columns.append(
            {
                "label": name,
                "metric": e.metric,
                "params": dict(e.params),
                "name": value,
                "direction": direction,
                "input": e.input,
            }
        )
    if not columns:
        raise GenmetricsError(f"{KEY}.entries: no entry of the diversity family in metrics")
    rows = dict(spec.get("paper_rows") or {})
    for name in rows:
        if name not in sets:
            raise GenmetricsError(f"{KEY}.paper_rows: {name!r} is not one of the sets {sets}")
    return {
        "dataset": ds,
        "sets": list(sets),
        "columns": columns,
        "seed": int(spec.get("seed", 0)),
        "size": spec.get("size"),
        "cuts": list(spec.get("cuts", ["shortest", "aligned"])),
        "paper_rows": rows,
    }


class InstructionSetQueries:
    """The :class:`~genmetrics.plan.core.Plan` part of the ``instruction_sets`` rule."""

    def instruction_sets_inputs(self) -> dict[str, list[str]]:
        """``texts``: each set's rows (``RESULTS.generations`` of its first seed: imported
        texts), in the order of the sets; ``assets``: the NLTK data where a column reads POS
        tags (they are tagged in the job, after the cut). Empty without the section."""
        s = self.instruction_sets
        if not s:
            return {}
        out = {
            "texts": [
                self.results.texts(s["dataset"], self.models[m].sources()[0]) for m in s["sets"]
            ]
        }
        if any(c["input"] == "pos" for c in s["columns"]):
            out["assets"] = [asset_manifest(self.cache, a) for a in POS_ASSETS]
        return out

    def instruction_sets_settings(self) -> dict[str, Any]:
        """The section's settings, the dataset's language and the code digest (empty
        without the section)."""
        s = self.instruction_sets
        if not s:
            return {}
        language = self.datasets[s["dataset"]].language
        return canonical({**s, "language": language, "code": code_digest(*INSTRUCTION_SETS_CODE)})

    def instruction_sets_targets(self) -> list[str]:
        """The table, its Markdown and the side-by-side table (none without the section)."""
        if not self.instruction_sets:
            return []
        r = self.results
        return [r.instruction_sets_table, r.instruction_sets_markdown, r.instruction_sets_paper]
