"""Target lists: every file a run makes, per target rule (``all``, ``omniinput``,
``agreement``, ...), formatted from :data:`genmetrics.paths.RESULTS`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from genmetrics.paths import REFERENCES


@dataclass(frozen=True)
class Targets:
    scores: tuple[str, ...]
    generation_stats: tuple[str, ...]
    spreads: tuple[str, ...]
    sweeps: tuple[str, ...]
    pr_curves_scores: tuple[str, ...]  # entries whose metric feeds the PR-curves figure
    spectra_scores: tuple[str, ...]  # the first entry feeding the spectra figure
    figures: tuple[str, ...]  # in the HTML report
    analyses: tuple[str, ...]
    all: tuple[str, ...]
    omniinput: tuple[str, ...] = ()  # not in all: `snakemake omniinput`
    agreement: tuple[str, ...] = ()  # `snakemake agreement`; all of an agreement-only config
    omniinput_toy: tuple[str, ...] = ()


class TargetLists:
    """The :class:`~genmetrics.plan.core.Plan` part that lists targets."""

    def entries_feeding(self, figure: str) -> list[str]:
        """Entries whose metric feeds ``figure`` (its registration's ``figures``)."""
        from genmetrics.metrics.registry import metrics_feeding

        metrics = metrics_feeding(figure)
        return [n for n, e in self.entries.items() if e.metric in metrics]

    def score_targets(self, entries: Iterable[str] | None = None) -> list[str]:
        out = []
        for name in self.entries if entries is None else entries:
            e = self.entries[name]
            for ds in e.datasets:
                srcs = [s for s in self.model_sources(ds) if s != e.reference]
                if e.reference is None and e.score_references:
                    srcs = [REFERENCES, *srcs]
                out += [self.results.score.format(dataset=ds, source=s, entry=name) for s in srcs]
        return out

    def _targets(self) -> Targets:
        gen_stats = [
            self.results.generation_stats.format(dataset=ds, model=m.name, seed=s)
            for ds in self.datasets
            for m in self.models.values()
            if m.generates and ds in m.datasets
            for s in m.seeds
        ]
        spreads = [
            self.results.spread.format(dataset=ds, model=m.name, entry=e.name)
            for e in self.entries.values()
            if e.spread is not None
            for ds in e.datasets
            for m in self.models.values()
            if ds in m.datasets and m.sources()[0] != e.reference
        ]
        sweeps = []
        if self.sweep:
            e = self.entries[self.sweep["metric"]]
            sweeps = [
                self.results.sweep.format(dataset=ds, source=m.sources()[0], entry=e.name)
                for ds in e.datasets
                for m in self.models.values()
                if ds in m.datasets
            ]
        prd = self.score_targets(self.entries_feeding("pr_curves"))
        face = self.entries_feeding("spectra")[:1]  # one panel per dataset and model
        face_scores = self.score_targets(face)
        figures = [self.results.correlation_figure, self.results.pr_figure]
        figures += [self.results.pr_curves_figure] if prd else []
        figures += [self.results.spectra_figure] if face_scores else []
        figures += [self.results.scaling_figure] if self.scaling else []
        spectra_gam = bool(self.scaling and self.scaling["spectra_entry"])
        figures += [self.results.scaling_spectra_figure] if spectra_gam else []
        mauve = [n for n, e in self.entries.items() if e.metric == "mauve"]
        figures += [self.results.mauve_bars_figure] if mauve else []
        pr_entries = [n for n, e in self.entries.items() if e.metric == "precision_recall"]
        few_shot = bool(self.variants and pr_entries)
        figures += [self.results.few_shot_figure] if few_shot else []
        figures += [self.results.length_figure]
        robustness = bool(self.robustness)  # analysis.featurizer_robustness
        figures += [self.results.featurizer_robustness_figure] if robustness else []
        # analysis.paired: one model × model matrix per dataset (rule paired_differences)
        figures += [self.results.paired_figure.format(dataset=ds) for ds in self.datasets]
        analyses = [self.results.length_table]
        analyses += [self.results.paired_table, self.results.sample_size_table]
        analyses += [self.results.diversity_markdown] if self.diversity else []
        if self.diversity and self.diversity.get("paper"):
            analyses += [self.results.diversity_side_by_side_markdown]
        analyses += (
            [self.results.scaling_table, self.results.scaling_table1] if self.scaling else []
        )
        analyses += [self.results.scaling_spectra_figure] if spectra_gam else []
        analyses += [self.results.pr_curves_figure] if prd else []
        analyses += [self.results.spectra_figure] if face_scores else []
        analyses += [self.results.spread_table] if spreads else []
        analyses += [self.results.mauve_bars_figure] if mauve else []
        analyses += [self.results.few_shot_figure] if few_shot else []
        analyses += self.patterns_targets()  # analysis.patterns (plan/patterns.py)
        analyses += self.robustness_targets()  # table, Markdown, figure (plan/robustness.py)
        analyses += self.instruction_sets_targets()  # plan/instruction_sets.py
        omni = self.omniinput
        return Targets(
            omniinput=tuple(omni.targets),
            agreement=tuple(self.agreement.targets),
            omniinput_toy=tuple(omni.toy_targets),
            scores=tuple(self.score_targets()),
            generation_stats=tuple(gen_stats),
            spreads=tuple(spreads),
            sweeps=tuple(sweeps),
            pr_curves_scores=tuple(prd),
            spectra_scores=tuple(face_scores),
            figures=tuple(figures),
            analyses=tuple(analyses),
            all=(
                tuple(self.agreement.targets)
                if not self.models and self.agreement.sets
                else (
                    self.results.scores,
                    self.results.report,
                    *analyses,
                    *(self.results.size_check.format(dataset=ds) for ds in self.datasets),
                )
            ),
        )
