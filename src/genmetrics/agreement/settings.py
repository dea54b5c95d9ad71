"""The ``agreement:`` config section resolved: judgment sets, the metric entries each one
runs, their targets. Errors name the config key (the schema has filled the defaults)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.agreement.judgment_sets import (
    PAIRWISE_KINDS,
    READERS,
    REFERENCE_KINDS,
    TEXTLESS_KINDS,
)
from genmetrics.params import canonical
from genmetrics.paths import RESULTS, ResultPaths, asset_manifest
from genmetrics.provenance import code_digest

#: the files each set kind reads from its folder (``sources`` must name them)
SET_FILES: dict[str, tuple[str, ...]] = {
    "realsumm": ("references.jsonl", "summaries.jsonl"),
    "xsum_hallucination": ("summaries.jsonl",),
    "hanna": ("scores.jsonl",),
    "contrastive_search_ab": ("human_ab.jsonl",),
    "rankgen_ab": ("items.jsonl", "judgments.jsonl"),
}

#: (metric, value) -> the stored upstream column of the same quantity, per set kind
UPSTREAM_TWINS: dict[str, dict[tuple[str, str], str]] = {
    "realsumm": {
        ("rouge", "rouge1"): "rouge_1_f_score",
        ("rouge", "rouge2"): "rouge_2_f_score",
        ("rouge", "rougeLsum"): "rouge_l_f_score",
        ("rouge", "rouge1_recall"): "rouge_1_recall",
        ("rouge", "rouge2_recall"): "rouge_2_recall",
        ("rouge", "rougeLsum_recall"): "rouge_l_recall",
        ("bertscore", "bertscore_f1"): "bert_f_score",
        ("bertscore", "bertscore_recall"): "bert_recall_score",
    },
    "xsum_hallucination": {
        ("rouge", "rouge1"): "rouge1_f",
        ("rouge", "rouge2"): "rouge2_f",
        ("rouge", "rougeL"): "rougeL_f",
        ("bertscore", "bertscore_f1"): "bertscore",
    },
}


@dataclass(frozen=True)
class JudgmentSet:
    name: str
    kind: str
    path: str
    entries: dict[str, dict[str, Any]]  # entry -> {metric, params (checked), values}
    upstream: bool
    exclude_systems: tuple[str, ...]
    upstream_metrics: tuple[str, ...] | None
    levels: tuple[str, ...]
    methods: tuple[str, ...]
    n_boot: int
    seed: int
    ci: float
    figure: dict[str, str]
    skipped: dict[str, str] = field(default_factory=dict)  # entry -> why it does not apply
    sources: dict[str, dict[str, Any]] = field(default_factory=dict)  # file -> upstream source

    @property
    def pairwise(self) -> bool:
        return self.kind in PAIRWISE_KINDS

    def outputs(self, results: ResultPaths = RESULTS) -> list[str]:
        names = ("scores", "pairwise") if self.pairwise else ("scores", "correlations")
        return [
            getattr(results, f"agreement_{n}").format(jset=self.name) for n in (*names, "figure")
        ]

    def twins(self) -> dict[str, str]:
        """``<entry>.<value>`` → ``upstream.<column>`` for the values this set can check."""
        table = UPSTREAM_TWINS.get(self.kind, {})
        out = {}
        for name, e in self.entries.items():
            for v in e["values"]:
                col = table.get((e["metric"], v))
                if col is not None:
                    out[f"{name}.{v}"] = f"upstream.{col}"
        return out

    def settings(self) -> dict[str, Any]:
        """Everything that decides this set's outputs (a params value)."""
        return {
            "name": self.name,
            "kind": self.kind,
            "entries": self.entries,
            "upstream": self.upstream,
            "exclude_systems": list(self.exclude_systems),
            "upstream_metrics": list(self.upstream_metrics) if self.upstream_metrics else None,
            "levels": list(self.levels),
            "methods": list(self.methods),
            "n_boot": self.n_boot,
            "seed": self.seed,
            "ci": self.ci,
            "figure": self.figure,
            "twins": self.twins(),
            "skipped": self.skipped,
        }

    def assets(self) -> list[str]:
        from genmetrics.metrics import get

        return sorted(
            {a for e in self.entries.values() for a in get(e["metric"]).assets(e["params"])}
        )


#: modules whose code decides the agreement outputs besides the metrics' own (their digest is
#: a params value: a change reruns the agreement jobs)
AGREEMENT_CODE = (
    "genmetrics.agreement.scoring",
    "genmetrics.agreement.correlation",
    "genmetrics.agreement.preference",
    "genmetrics.agreement.judgment_sets",
    "genmetrics.analysis.statistics",
)


@dataclass(frozen=True)
class AgreementPlan:
    """The ``agreement:`` section resolved (empty without one), with the queries its rules call
    per job (rules/agreement.smk: ``per_job(PLAN.agreement.<query>)``)."""

    sets: dict[str, JudgmentSet] = field(default_factory=dict)
    cache: str = ""  # where offline assets live (their manifests)
    paths: ResultPaths = RESULTS  # the run's result paths (its results_dir)

    @property
    def targets(self) -> list[str]:
        if not self.sets:
            return []
        out = [p for s in self.sets.values() for p in s.outputs(self.paths)]
        return [*out, self.paths.agreement_summary, self.paths.agreement_summary_table]

    # ---------------------------------------------------------- job queries (params, inputs)

    def names(self, pairwise: bool) -> list[str]:
        return [s.name for s in self.sets.values() if s.pairwise == pairwise]

    def judgment_set(self, jset: str) -> JudgmentSet:
        if jset not in self.sets:
            raise GenmetricsError(f"agreement.sets has no {jset!r}")
        return self.sets[jset]

    def inputs(self, jset: str) -> dict[str, Any]:
        """data: the set's file, or its folder's *.jsonl (a change reruns it); assets: the
        manifests of the offline assets its metrics need."""
        s = self.judgment_set(jset)
        path = Path(s.path)
        if s.sources:  # the folder agreement_fetch makes
            files = [s.path]
        else:
            files = sorted(str(p) for p in path.glob("*.jsonl")) if path.is_dir() else [str(path)]
        return {"data": files, "assets": [asset_manifest(self.cache, a) for a in s.assets()]}

    def fetched(self) -> list[str]:
        """The sets whose files are upstream ``sources`` (made by agreement_fetch)."""
        return [n for n, s in self.sets.items() if s.sources]

    def fetch_inputs(self, jset: str) -> list[str]:
        """The data mirror's copies a fetch reads (none when its files are downloaded)."""
        srcs = self.judgment_set(jset).sources.values()
        return sorted(src["mirror_path"] for src in srcs if src.get("mirror_path"))

    def fetch_settings(self, jset: str) -> dict[str, Any]:
        """agreement_fetch's params: the set's sources (file -> upstream source), the cache."""
        return canonical({"sources": self.judgment_set(jset).sources, "cache": self.cache})

    def settings(self, jset: str) -> dict[str, Any]:
        """The set's settings with the code digest of the modules that score it."""
        from genmetrics.metrics import get

        s = self.judgment_set(jset)
        modules = {get(e["metric"]).func.__module__ for e in s.entries.values()}
        code = code_digest(*sorted(modules), *AGREEMENT_CODE)
        return canonical({**s.settings(), "path": s.path, "code": code})

    def summary_settings(self) -> dict[str, Any]:
        """Every set's settings, keys sorted (a params value: config order changes nothing)."""
        return canonical({s.name: s.settings() for s in self.sets.values()})

    def results(self) -> dict[str, str]:
        """Per set, the table the summary reads: RESULTS.agreement_pairwise or
        RESULTS.agreement_correlations."""
        return {
            n: (
                self.paths.agreement_pairwise if s.pairwise else self.paths.agreement_correlations
            ).format(jset=n)
            for n, s in self.sets.items()
        }


def agreement_plan(
    section: Mapping[str, Any] | None, cache: str = "", results: ResultPaths = RESULTS
) -> AgreementPlan:
    """``agreement`` (schema-checked, defaults filled) resolved; errors name the config key.
    Without the section: an empty plan (no targets)."""
    if not section:
        return AgreementPlan(cache=cache, paths=results)
    from genmetrics.agreement.scoring import applies, entry_values
    from genmetrics.metrics import all_metrics, get

    entries: dict[str, dict[str, Any]] = {}
    for name, e in section["metrics"].items():
        key = f"agreement.metrics.{name}"
        metric = e.get("metric", name)
        if metric not in all_metrics():
            raise GenmetricsError(f"{key}: {metric!r} is not a registered metric")
        m = get(metric)
        if m.input != "texts":
            raise GenmetricsError(
                f"{key}: {metric} runs on {m.input}; only text metrics score judged texts"
            )
        params = m.check_params(e.get("params") or {}, f"{key}.params")
        try:
            values = entry_values(metric, e.get("values"))
        except GenmetricsError as err:
            raise GenmetricsError(f"{key}.values: {err}") from None
        entries[name] = {"metric": metric, "params": params, "values": values}
    sets = {}
    for name, s in section["sets"].items():
        key = f"agreement.sets.{name}"
        kind = s["kind"]
        if kind not in READERS:  # the schema's enum, kept in step with the readers
            raise GenmetricsError(f"{key}.kind: {kind!r} is not one of {sorted(READERS)}")
        sources = dict(s.get("sources") or {})
        if sources:
            missing = [f for f in SET_FILES[kind] if f not in sources]
            if missing:
                raise GenmetricsError(
                    f"{key}.sources: a {kind} set reads {', '.join(SET_FILES[kind])}; "
                    f"no source for {', '.join(missing)}"
                )
            path = results.agreement_data.format(jset=name)
        elif not Path(s["path"]).exists():
            raise GenmetricsError(f"{key}.path: {s['path']} does not exist")
        else:
            path = s["path"]
        has_texts = kind not in TEXTLESS_KINDS
        has_ref = kind in REFERENCE_KINDS
        chosen = s.get("metrics")
        for n in chosen or ():
            if n not in entries:
                raise GenmetricsError(f"{key}.metrics: {n!r} is not in agreement.metrics")
        run, skipped = {}, {}
        for n in chosen if chosen is not None else entries:
            why = "the set has no texts (only stored scores)" if not has_texts else None
            why = why or applies(entries[n]["metric"], has_ref)
            if (
                why is None
                and kind in PAIRWISE_KINDS
                and get(entries[n]["metric"]).reference != "none"
            ):
                why = "A/B texts have no reference"
            if why is None:
                run[n] = entries[n]
            elif chosen is not None:
                raise GenmetricsError(f"{key}.metrics: {n} ({entries[n]['metric']}) {why}")
            else:
                skipped[n] = why
        if kind in PAIRWISE_KINDS and not run:
            raise GenmetricsError(
                f"{key}: an A/B set needs at least one reference-free text metric"
            )
        if not has_texts and not s["upstream"]:
            raise GenmetricsError(f"{key}.upstream: HANNA has only its stored scores; keep it true")
        sets[name] = JudgmentSet(
            name=name,
            kind=kind,
            path=path,
            entries=run,
            upstream=s["upstream"],
            exclude_systems=tuple(s["exclude_systems"]),
            upstream_metrics=tuple(s["upstream_metrics"]) if s.get("upstream_metrics") else None,
            levels=tuple(s.get("levels") or section["levels"]),
            methods=tuple(section["methods"]),
            n_boot=int(s.get("n_boot") or section["n_boot"]),
            seed=int(section["seed"]),
            ci=float(section["ci"]),
            figure={**section["figure"], **(s.get("figure") or {})},
            skipped=skipped,
            sources=sources,
        )
        fig = sets[name].figure
        if not sets[name].pairwise and fig["level"] not in sets[name].levels:
            raise GenmetricsError(
                f"{key}.figure.level: {fig['level']!r} is not among the set's levels "
                f"{list(sets[name].levels)}"
            )
    return AgreementPlan(sets, cache=cache, paths=results)
