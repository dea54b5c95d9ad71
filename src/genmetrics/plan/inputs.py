"""The files a job reads where they depend on the config (input functions of the rules),
formatted from :data:`genmetrics.paths.RESULTS`; fixed inputs are named in the rules."""

from __future__ import annotations

import os
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.paths import REFERENCES, asset_manifest, model_manifest, reference_draw_source
from genmetrics.plan.objects import split_part

#: assets the ``pos_tags`` rule needs (genmetrics.data.assets.ASSETS)
POS_ASSETS = ("nltk_data",)


def existing(paths: list[str], key: str) -> list[str]:
    """``paths`` (a user's local files), each checked to exist: a missing one stops the DAG
    with the config key that names it, not only the path (Snakemake's MissingInputException)."""
    for path in paths:
        if not os.path.exists(path):
            raise GenmetricsError(f"{key}: {path} does not exist")
    return paths


class JobInputs:
    """The :class:`~genmetrics.plan.core.Plan` part that names the files each job reads."""

    def manifest(self, checkpoint: str) -> str:
        """The loadable description of a checkpoint (genmetrics.models.checkpoints.prepare_model):
        ``<model_cache>/<model key>/model.json``, keyed by content, not by name."""
        return model_manifest(self.model_cache, self.model_key(checkpoint))

    def manifest_pattern(self) -> str:
        """fetch_model's output: ``<model_cache>/{model_key}/model.json``."""
        return model_manifest(self.model_cache, "{model_key}")

    def asset_manifest(self, asset: str) -> str:
        return asset_manifest(self.cache, asset)

    def dataset_files(self, dataset: str) -> list[str]:
        """A local dataset file is an input: a missing one stops the DAG before any job,
        naming ``datasets.<name>.source.path``."""
        key = f"datasets.{self._config_dataset(dataset)}.source.path"
        return existing(self.datasets[dataset].local_files, key)

    def prompt_files(self, dataset: str) -> list[str]:
        key = f"datasets.{self._config_dataset(dataset)}.prompts.file"
        return existing(self.datasets[dataset].prompt_files, key)

    def _config_dataset(self, dataset: str) -> str:
        """The config's name of a plan dataset (a few-shot variant's: its dataset's)."""
        return (self.variants.get(dataset) or {}).get("dataset", dataset)

    def few_shot_pool(self, dataset: str) -> list[str]:
        """The references of a few-shot dataset's pool when it is another dataset
        (``prompts.few_shot.pool``), else none (the dataset's own references)."""
        pool = (self.datasets[dataset].prompts.get("few_shot") or {}).get("pool")
        return [self.results.references.format(dataset=pool)] if pool else []

    def generation_model(self, model: str) -> str:
        return self.manifest(self.models[model].checkpoint)

    def shard_files(self, dataset: str, model: str, seed: str) -> list[str]:
        n = self.models[model].generation[dataset].shards
        keys = dict(dataset=dataset, model=model, seed=seed)
        return [self.results.shard.format(shard=i, **keys) for i in range(n)]

    def shard_stat_files(self, dataset: str, model: str, seed: str) -> list[str]:
        n = self.models[model].generation[dataset].shards
        keys = dict(dataset=dataset, model=model, seed=seed)
        return [self.results.shard_stats.format(shard=i, **keys) for i in range(n)]

    def imported_files(self, dataset: str, model: str) -> dict[str, Any]:
        """The texts file (when local) and, with ``match_references`` or
        ``exclude_references``, the dataset's references, whose ids the texts are restricted
        to or kept apart from."""
        key = f"models.{model}.texts.source.path (dataset {dataset})"
        out: dict[str, Any] = {"texts": existing(self.models[model].local_files(dataset), key)}
        texts = self.models[model].texts or {}
        if texts.get("match_references") or texts.get("exclude_references"):
            out["references"] = self.results.references.format(dataset=dataset)
        return out

    def source_texts(self, dataset: str, source: str) -> str:
        """The rows a feature job reads (for ``m/seed0.continuation``: the generations)."""
        return self.results.texts(dataset, split_part(source)[0])

    def featurizer_model(self, featurizer: str) -> str:
        return self.manifest(self.featurizers[featurizer].checkpoint)

    def evaluator_model(self, evaluator: str) -> str:
        return self.manifest(self.evaluators[evaluator].checkpoint)

    def pos_assets(self) -> list[str]:
        return [asset_manifest(self.cache, a) for a in POS_ASSETS]

    def score_inputs(self, dataset: str, source: str, entry: str) -> dict:
        e = self.entries[entry]
        inputs: dict[str, Any] = {"candidate": e.input_path(dataset, source, self.results)}
        if e.reference is not None:
            inputs["reference"] = e.input_path(dataset, e.reference, self.results)
        if e.length_control != "none":  # by design, depends on every source of the dataset
            humans = [REFERENCES] if e.length_control == "shortest" else []
            inputs["group"] = [
                self.results.texts(dataset, s) for s in [*humans, *self.model_sources(dataset)]
            ]
        if e.assets:
            inputs["assets"] = [asset_manifest(self.cache, a) for a in e.assets]
        return inputs

    def spread_inputs(self, dataset: str, model: str, entry: str) -> dict:
        """The candidates (every seed of ``model``) and the references: the entry's reference
        file to subsample, or with ``references: redraw`` each draw's features and the stats
        of its cleaning (its pool)."""
        e = self.entries[entry]
        out: dict[str, Any] = {
            "candidates": [
                e.input_path(dataset, s, self.results) for s in self.models[model].sources()
            ],
        }
        if e.spread["references"] == "redraw":
            seeds = self.spread_draw_seeds(entry)
            out["draws"] = [
                e.input_path(dataset, reference_draw_source(s), self.results) for s in seeds
            ]
            out["draw_stats"] = [
                self.results.reference_draw_stats.format(dataset=dataset, draw=s) for s in seeds
            ]
        else:
            out["reference"] = e.input_path(dataset, e.reference, self.results)
        return out

    def spread_draw_seeds(self, entry: str) -> list[int]:
        """The sample seeds of a spread entry's reference sets: ``seed`` + i."""
        sp = self.entries[entry].spread
        return [int(sp["seed"]) + i for i in range(int(sp["reference_resamples"]))]

    def sweep_inputs(self, dataset: str, source: str, entry: str) -> dict:
        e = self.entries[entry]
        return {
            "reference": e.input_path(dataset, e.reference, self.results),
            "candidate": e.input_path(dataset, source, self.results),
        }

    def _scaling_cells(self, names: list[str] | None = None) -> list[dict[str, Any]]:
        """Each (entry, dataset, family model) cell of the scaling analysis (of the entries
        ``names``; default: ``analysis.scaling.metrics``): its score and input files."""
        members = {m for fam in self.scaling["families"].values() for m in fam}
        cells = []
        for name in self.scaling["metrics"] if names is None else names:
            e = self.entries[name]
            for ds in e.datasets:
                for m in sorted(members):
                    if ds not in self.models[m].datasets:
                        continue
                    src = self.models[m].sources()[0]
                    cells.append(
                        {
                            "entry": name,
                            "dataset": ds,
                            "model": m,
                            "score": self.results.score.format(dataset=ds, source=src, entry=name),
                            "candidate": e.input_path(ds, src, self.results),
                            "reference": e.input_path(ds, e.reference, self.results)
                            if e.reference
                            else None,
                        }
                    )
        return cells

    def scaling_inputs(self) -> dict[str, list[str]]:
        """Every score the scaling analysis judges, and the inputs it resamples."""
        cells = self._scaling_cells()
        feats = {c[k] for c in cells for k in ("candidate", "reference") if c[k]}
        return {"scores": [c["score"] for c in cells], "inputs": sorted(feats)}

    def scaling_spectra_inputs(self) -> list[str]:
        """The surprisal files whose spectra the smoothed-spectra figure fits: the spectra
        entry's human and family-model inputs."""
        cells = self._scaling_cells([self.scaling["spectra_entry"]])
        return sorted({c[k] for c in cells for k in ("candidate", "reference") if c[k]})
