"""The featurizer-robustness analysis (``analysis.featurizer_robustness``): which entries are
one metric computed under several featurizers, and the queries of the
``featurizer_robustness`` rule (:mod:`genmetrics.analysis.featurizer_robustness` computes the
table).

A *group* is a set of entries on a featurizer's embeddings that run the same registered
metric with the same params, reference and datasets (and no length control: entries on
embeddings have none), and differ only in ``featurizer``: the matching
:mod:`genmetrics.plan.diversity` does for an entry's truncated twin, with the featurizer as
the one key allowed to differ. A group needs two or more featurizers; an entry alone makes no
row. Within a group, two entries under the same featurizer are the same score: the first (in
config order) is kept. Any metric on a featurizer's embeddings qualifies: the distribution
metrics (MAUVE, precision/recall, PRD, Fréchet, KID) and the semantic diversity scores
(Vendi, RKE, embedding diversity) alike.

The analysis is made automatically when a group exists; ``analysis.featurizer_robustness:
false`` turns it off.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from genmetrics.metrics.kinds import KINDS
from genmetrics.metrics.registry import get
from genmetrics.params import canonical
from genmetrics.plan.objects import ScoreEntry
from genmetrics.provenance import code_digest

KEY = "analysis.featurizer_robustness"
#: modules whose code decides the table (a params value of the rule)
ROBUSTNESS_CODE = ("genmetrics.analysis.featurizer_robustness",)


def _on_featurizer(e: ScoreEntry) -> bool:
    return KINDS[e.input].config_key == "featurizer" and e.feature_model is not None


def _twin_key(e: ScoreEntry) -> tuple:
    """What two entries must share to be one metric under two featurizers."""
    return (
        e.metric,
        repr(canonical(e.params)),
        e.reference,
        e.datasets,
        e.length_control,
        e.part,
    )


def featurizer_groups(
    enabled: bool, entries: Mapping[str, ScoreEntry]
) -> list[dict[str, Any]] | None:
    """Every group of entries differing only in their featurizer, as the rule's settings:
    ``{"label", "metric", "datasets", "values": [[headline value, direction], ...],
    "featurizers": [sorted names], "entries": {featurizer: entry}}``, sorted by label (the
    group's first entry in config order). None when disabled or when no group exists (no rule
    in the DAG)."""
    if not enabled:
        return None
    by_key: dict[tuple, dict[str, str]] = {}
    for name, e in entries.items():
        if _on_featurizer(e):
            by_key.setdefault(_twin_key(e), {}).setdefault(e.feature_model, name)
    groups = []
    for members in by_key.values():
        if len(members) < 2:
            continue
        first = entries[next(iter(members.values()))]
        metric = get(first.metric)
        groups.append(
            {
                "label": first.name,
                "metric": first.metric,
                "datasets": list(first.datasets),
                "values": [[v, metric.values[v]] for v in metric.headline],
                "featurizers": sorted(members),
                "entries": dict(sorted(members.items())),
            }
        )
    groups = [g for g in groups if g["values"]]  # a metric without a headline ranks nothing
    return sorted(groups, key=lambda g: g["label"]) or None


class RobustnessQueries:
    """The :class:`~genmetrics.plan.core.Plan` part of the ``featurizer_robustness`` rule."""

    def robustness_scores(self) -> list[str]:
        """``RESULTS.score`` of every entry of every group, for every model and seed of its
        datasets (not the human references' own scores: the models are ranked)."""
        out = []
        for g in self.robustness or []:
            for entry in g["entries"].values():
                e = self.entries[entry]
                out += [
                    self.results.score.format(dataset=ds, source=s, entry=entry)
                    for ds in e.datasets
                    for s in self.model_sources(ds)
                    if s != e.reference
                ]
        return out

    def robustness_settings(self) -> dict[str, Any]:
        """The groups (:func:`featurizer_groups`) and the code digest."""
        return canonical({"groups": self.robustness or [], "code": code_digest(*ROBUSTNESS_CODE)})

    def robustness_targets(self) -> list[str]:
        """The table, its Markdown twin and the figure (none without a group)."""
        if not self.robustness:
            return []
        r = self.results
        return [
            r.featurizer_robustness_table,
            r.featurizer_robustness_markdown,
            r.featurizer_robustness_figure,
        ]
