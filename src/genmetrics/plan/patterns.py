"""The repeated-pattern lists (``analysis.patterns``, Shaib et al. (2024), Tables 1 and 10):
the section checked, and the queries of the ``repeated_patterns`` rule (its inputs, params and
targets), kept in one place (:mod:`genmetrics.analysis.patterns` computes the lists)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from genmetrics.params import canonical
from genmetrics.paths import REFERENCES, asset_manifest
from genmetrics.plan.inputs import POS_ASSETS
from genmetrics.plan.variants import resolve_names
from genmetrics.provenance import code_digest

#: modules whose code decides the lists (a params value of the rule)
PATTERNS_CODE = ("genmetrics.analysis.patterns",)


def check_patterns(
    spec: Mapping[str, Any] | None,
    datasets: Sequence[str],
    groups: Mapping[str, tuple[str, ...]],
) -> dict | None:
    """``analysis.patterns`` resolved (schema defaults already filled): its ``datasets``
    (config names, a few-shot one meaning each of its variants; default: every dataset) as
    plan datasets; None when the section is absent (no rule in the DAG)."""
    if spec is None:
        return None
    key = "analysis.patterns.datasets"
    names = resolve_names(spec["datasets"], groups, key) if spec.get("datasets") else datasets
    out = {k: v for k, v in spec.items() if k != "datasets"}
    out["n"], out["pos_n"] = sorted(set(spec["n"])), sorted(set(spec["pos_n"]))
    return {**out, "datasets": [d for d in datasets if d in set(names)]}


class PatternQueries:
    """The :class:`~genmetrics.plan.core.Plan` part of the ``repeated_patterns`` rule."""

    def patterns_sources(self, dataset: str) -> list[str]:
        """The sources whose patterns are listed: the references, then every model's seeds
        in config order."""
        return [REFERENCES, *self.model_sources(dataset)]

    def patterns_inputs(self, dataset: str) -> dict[str, list[str]]:
        """``texts``: each source's rows (``RESULTS.references``, ``RESULTS.generations``);
        ``pos``: their tags (``RESULTS.pos``) when POS patterns are asked; ``assets``: the
        NLTK data (punkt for sentences, the tagger's rule needs it too)."""
        p = self.patterns
        sources = self.patterns_sources(dataset)
        out: dict[str, list[str]] = {"texts": [self.results.texts(dataset, s) for s in sources]}
        if p["pos_n"]:
            out["pos"] = [self.results.pos.format(dataset=dataset, source=s) for s in sources]
        if p["pos_n"] or p["sentences"]:
            out["assets"] = [asset_manifest(self.cache, a) for a in POS_ASSETS]
        return out

    def patterns_settings(self, dataset: str) -> dict[str, Any]:
        """:func:`genmetrics.analysis.patterns.patterns_table`'s options, the sources in the
        order of the inputs, and the code digest."""
        options = {k: v for k, v in self.patterns.items() if k != "datasets"}
        return canonical(
            {
                "options": options,
                "sources": self.patterns_sources(dataset),
                "code": code_digest(*PATTERNS_CODE),
            }
        )

    def patterns_targets(self) -> list[str]:
        """The table and Markdown file of every dataset listed (none without the section)."""
        if not self.patterns:
            return []
        return [
            path.format(dataset=ds)
            for ds in self.patterns["datasets"]
            for path in (self.results.patterns_table, self.results.patterns_markdown)
        ]
