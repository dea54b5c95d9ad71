"""Job params: what each rule's job runs with, per wildcard values, and nothing about other
jobs (a per-model job's params depend on that model only). Code digests are params too, so a
code change reruns exactly the jobs whose code changed."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.metrics.kinds import KINDS
from genmetrics.params import canonical
from genmetrics.plan.memo import memoized
from genmetrics.plan.objects import split_part
from genmetrics.provenance import code_digest

#: modules whose code decides a feature file (their digest is a params value of the rule)
FEATURE_CODE = {
    "embed": ("genmetrics.features.embed",),
    "surprisal": ("genmetrics.features.surprisal",),
}


class JobParams:
    """The :class:`~genmetrics.plan.core.Plan` part that gives each job its params."""

    @memoized
    def dataset_spec(self, dataset: str) -> dict:
        return canonical(self.datasets[dataset].spec)

    @memoized
    def clean_options(self, dataset: str) -> dict:
        """``datasets.<name>.clean``, plus the dataset's ``language`` if not whitespace."""
        ds = self.datasets[dataset]
        return canonical(ds.with_language(ds.clean))

    def reference_draw_options(self, dataset: str, draw: str) -> dict:
        """:meth:`clean_options` with the sample drawn with seed ``draw``: the references
        drawn again for a spread entry's ``references: redraw``."""
        return canonical({**self.clean_options(dataset), "seed": int(draw)})

    @memoized
    def size_requirements(self, dataset: str) -> list[dict]:
        """What each entry on ``dataset`` needs of the cleaned set, checked right after cleaning
        (the ``check_sizes`` rule) so that a k or a cluster count too large for the data fails
        before any model runs. A spread resample keeps ``fraction`` of the references."""
        out = []
        for e in self.entries.values():
            least, param = e.min_items
            if dataset not in e.datasets or least <= 1:
                continue
            fraction = e.spread.get("fraction", 1.0) if e.spread else 1.0
            # a minimum the metric itself sets (no parameter asks for it) names the entry
            why = (
                f"{param}={e.params[param]} needs at least {least} texts per set"
                if param
                else f"{e.metric} needs at least {least} texts per set"
            )
            if fraction < 1:
                why += f", and the spread resamples keep {fraction:g} of the references"
            out.append(
                {
                    "entry": e.name,
                    "key": f"metrics.{e.name}.params.{param}" if param else f"metrics.{e.name}",
                    "needs": math.ceil(least / fraction),
                    "why": why,
                }
            )
        return canonical(sorted(out, key=lambda r: r["entry"]))

    def check_cleaned_sizes(self) -> None:
        """Check every dataset already cleaned (its ``clean_stats.json`` present) against
        :meth:`size_requirements`, so that a k or cluster count raised after the first run
        stops ``snakemake -n`` naming its key, before any job."""
        from genmetrics.data.clean import check_sizes
        from genmetrics.io import read_json

        for name in self.datasets:
            stats = Path(self.results.clean_stats.format(dataset=name))
            if stats.is_file():
                check_sizes(int(read_json(stats)["output"]), self.size_requirements(name), name)

    @memoized
    def prompt_options(self, dataset: str) -> dict:
        """``datasets.<name>.prompts``, plus the dataset's ``language`` if not whitespace;
        ``wrap`` only when it wraps (the params of jobs without one stay what they were)."""
        ds = self.datasets[dataset]
        options = {k: v for k, v in ds.prompts.items() if not (k == "wrap" and v == "none")}
        return canonical(ds.with_language(options))

    @memoized
    def checkpoint_spec(self, checkpoint: str) -> dict:
        """What fetch_model makes of a checkpoint; a local one adds the digest of its content
        (:func:`genmetrics.models.checkpoints.local_checkpoint_digest`), so new weights under the same
        path get another model key (:meth:`model_key`) and rerun every job that loads them."""
        from genmetrics.models.checkpoints import with_content

        return canonical(
            with_content(checkpoint, self.checkpoints[checkpoint].spec, self.model_cache)
        )

    @memoized
    def model_key(self, checkpoint: str) -> str:
        """The checkpoint's folder in the model cache (:func:`genmetrics.models.checkpoints.
        checkpoint_key`): its source, dtype and content, not its name."""
        from genmetrics.models.checkpoints import checkpoint_key

        return checkpoint_key(self.checkpoint_spec(checkpoint))

    @memoized
    def keyed_checkpoint(self, model_key: str) -> str:
        """The checkpoint (the first by name) whose :meth:`model_key` is ``model_key``."""
        for name in sorted(self.checkpoints):
            if self.model_key(name) == model_key:
                return name
        raise GenmetricsError(f"model cache key {model_key}: no checkpoint of the config has it")

    @memoized
    def fetch_spec(self, model_key: str) -> dict:
        """fetch_model's spec of one model key: the fields the key digests
        (:data:`genmetrics.models.checkpoints.KEY_FIELDS`), the same in every project."""
        from genmetrics.models.checkpoints import KEY_FIELDS

        spec = self.checkpoint_spec(self.keyed_checkpoint(model_key))
        return canonical({k: spec[k] for k in KEY_FIELDS if spec.get(k) is not None})

    @memoized
    def generation_settings(self, dataset: str, model: str) -> dict:
        """Everything about one model's generation job, and nothing about other models (a
        non-default backend and its tensor-parallel size included)."""
        m = self.models[model]
        return canonical({**m.generation[dataset].as_dict(), **m.engine})

    def generation_code(self, dataset: str, model: str) -> str:
        """Digest of the code behind one model's generate jobs: ``GENERATION_CODE`` (as
        :meth:`code_digest` ``("generate")``), plus the vLLM backend's module for its jobs."""
        if self.models[model].engine.get("backend") == "vllm":
            from genmetrics.generation.vllm_backend import VLLM_CODE

            return code_digest(*VLLM_CODE)
        return self.code_digest("generate")

    def samples_per_prompt(self, dataset: str, model: str) -> int:
        """Texts one model generates per prompt of ``dataset`` (merge_generations checks them)."""
        return self.models[model].generation[dataset].samples_per_prompt

    def imported_texts(self, dataset: str, model: str) -> dict:
        """The imported texts spec for ``dataset``: the texts belong to the dataset, so their
        cleaning counts the dataset's words (``clean.language`` if not whitespace)."""
        spec = self.models[model].texts_for(dataset)
        clean = self.datasets[dataset].with_language(spec.get("clean", {}))
        if clean:
            spec["clean"] = clean
        return canonical(spec)

    def feature_source(self, source: str) -> str:
        return split_part(source)[0]

    def feature_part(self, source: str) -> str:
        return split_part(source)[1]

    @memoized
    def embed_settings(self, featurizer: str) -> dict:
        return canonical(self.featurizers[featurizer].settings)

    @memoized
    def surprisal_settings(self, evaluator: str) -> dict:
        return canonical(self.evaluators[evaluator].settings)

    @memoized
    def score_settings(self, dataset: str, entry: str) -> dict:
        """The entry's settings, plus the dataset's ``language`` if not whitespace (the words
        of ``mean_words`` and of length control)."""
        return canonical(self.datasets[dataset].with_language(self.entries[entry].settings()))

    def score_upstream(self, dataset: str, source: str, entry: str) -> dict:
        """The config upstream of one score (for its provenance record): the featurizer or
        evaluator that made its features, and the generation settings of the model(s) whose
        texts it reads. Built from per-entry and per-model blocks computed once (canonical,
        shared), in sorted key order: equal to ``canonical`` of the same dict."""
        e = self.entries[entry]
        out: dict[str, Any] = {}
        if e.feature_model:
            out[KINDS[e.input].config_key] = self._feature_upstream(entry)
        for role, src in (("candidate", source), ("reference", e.reference)):
            model = split_part(src)[0].split("/")[0] if src else None
            m = self.models.get(model) if model else None
            if m is not None and m.generates:
                out[f"{role}_generation"] = self._generation_upstream(dataset, m.name)
        return {k: out[k] for k in sorted(out)}

    @memoized
    def _feature_upstream(self, entry: str) -> dict:
        """The featurizer or evaluator of an entry's features: name, checkpoint, settings."""
        e = self.entries[entry]
        fm = (self.featurizers if e.input == "embeddings" else self.evaluators)[e.feature_model]
        return canonical(
            {
                "name": fm.name,
                "checkpoint": self.checkpoint_spec(fm.checkpoint),
                "settings": fm.settings,
            }
        )

    @memoized
    def _generation_upstream(self, dataset: str, model: str) -> dict:
        """A generating model's checkpoint and generation settings on ``dataset``."""
        m = self.models[model]
        return canonical(
            {
                "model": m.name,
                "checkpoint": self.checkpoint_spec(m.checkpoint),
                "settings": self.generation_settings(dataset, m.name),
            }
        )

    @memoized
    def score_code(self, entry: str) -> str:
        """Digest of the code behind one entry's scores (:func:`code_digest`): the metric's
        module and the ``genmetrics.metrics`` helpers it imports (plus the length-control
        code when the entry uses it, and the resampling of its interval when it has one). A
        change there reruns this entry's scores only."""
        from genmetrics.metrics import get

        e = self.entries[entry]
        modules = [get(e.metric).func.__module__]
        if e.length_control != "none":
            modules.append("genmetrics.scoring.length_control")
        if e.interval is not None and "reason" not in e.interval:
            modules.append("genmetrics.scoring.intervals")
        return code_digest(*modules)

    @memoized
    def code_digest(self, rule: str) -> str:
        """Digest of the code that decides a model rule's outputs (a params value)."""
        from genmetrics.generation.transformers_backend import GENERATION_CODE

        return code_digest(*{"generate": GENERATION_CODE, **FEATURE_CODE}[rule])

    @memoized
    def spread_settings(self, entry: str) -> dict:
        e = self.entries[entry]
        return canonical({"metric": e.metric, "params": e.params, "spread": e.spread})

    def scaling_settings(self) -> dict:
        """:func:`genmetrics.studies.face2_scaling.job.run_scaling`'s settings: families, bootstrap,
        each entry's metric, params, evaluator and variant label, and the cells' files."""
        from genmetrics.metrics import get

        entries = {}
        for name in self.scaling["metrics"]:
            e = self.entries[name]
            metric = get(e.metric)
            # a preset choice (FACE's convention) first, then what differs from its defaults
            chosen = {k: e.params[k] for k in metric.presets if e.params[k] != metric.defaults[k]}
            defaults = metric.defaults_for(e.params)
            changed = [
                f"{k}={v if isinstance(v, str) else json.dumps(v)}"
                for k, v in {**chosen, **e.params}.items()
                if k in chosen or defaults[k] != v
            ]
            entries[name] = {
                "metric": e.metric,
                "params": e.params,
                "evaluator": e.feature_model,
                "variant": e.metric + (f" ({', '.join(changed)})" if changed else ""),
            }
        cells = self._scaling_cells()
        tasks = [ds for ds in self.datasets if any(c["dataset"] == ds for c in cells)]
        return canonical(
            {
                "families": self.scaling["families"],
                "bootstrap": self.scaling["bootstrap"],
                "seed": self.scaling["seed"],
                "entries": entries,
                "cells": cells,
                # the Table-1 columns: datasets in config order, each with its language
                "tasks": tasks,
                "languages": {t: self.scaling["languages"].get(t, "en") for t in tasks},
                "directions": self.scaling["directions"],
                "notes": self.scaling["notes"],
            }
        )

    def scaling_spectra_settings(self) -> dict:
        """:func:`genmetrics.studies.face2_scaling.smoothed_spectra.spectra_gam_panels`'s settings: the
        spectra entry (``analysis.scaling.spectra_entry``), its params and evaluator, the
        families, the datasets in config order and each (dataset, model) cell's files."""
        name = self.scaling["spectra_entry"]
        e = self.entries[name]
        cells = self._scaling_cells([name])
        return canonical(
            {
                "entry": name,
                "evaluator": e.feature_model,
                "params": e.params,
                "families": self.scaling["families"],
                "tasks": [ds for ds in self.datasets if any(c["dataset"] == ds for c in cells)],
                "cells": cells,
            }
        )

    def sweep_settings(self, entry: str) -> dict:
        return canonical({**self.sweep, "params": self.entries[entry].params})
