"""Every file the workflow writes, in one table: Snakemake patterns relative to the run folder.

Every pattern lies under one folder, the config's ``results_dir`` (default ``results``):
``load_plan`` makes the plan's table with :meth:`ResultPaths.under`, so a study config that
says ``results_dir: results/webtext`` writes one plain tree there. :data:`RESULTS` is the
table of the default folder.

Rules name these patterns (``RESULTS.score``); Python code that lists targets or input files
formats the same patterns, so a path is spelled exactly once. Files in the caches (converted
checkpoints, offline assets) live under folders the config chooses; :func:`model_manifest`
and :func:`asset_manifest` place them.

=====================  ===========================================================
source name            rows
=====================  ===========================================================
``references``         the cleaned human texts of a dataset
``references/draw{s}`` the same cleaning with its sample drawn again with seed ``s`` (a spread
                       entry's ``references: redraw``: Le Bronnec et al. (2024), Table B.4)
``prompts``            the dataset's prompts
``{model}/seed{seed}`` one model's generations (or imported texts) for one seed
=====================  ===========================================================

A feature file of a source's generated continuation only is the source's name with the part
appended: ``{model}/seed{seed}.continuation`` (:data:`genmetrics.metrics.kinds.PARTS`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, fields, replace
from pathlib import Path

#: the source name of a dataset's cleaned human texts (also the model name of their scores)
REFERENCES = "references"
#: the source name of a dataset's prompts
PROMPTS = "prompts"
#: a reference draw's source name is ``references/draw{seed}`` (:func:`reference_draw_source`)
DRAW = "/draw"


def reference_draw_source(seed: int) -> str:
    """The source name of the references drawn again with sample seed ``seed``."""
    return f"{REFERENCES}{DRAW}{int(seed)}"


@dataclass(frozen=True)
class ResultPaths:
    """The one table of result paths; names say what the file holds. ``root``: the folder they
    all lie under (each pattern starts with it)."""

    root: str = "results"
    # datasets (rules/data.smk)
    raw: str = "results/data/{dataset}/raw.jsonl"
    references: str = "results/data/{dataset}/references.jsonl"
    clean_stats: str = "results/data/{dataset}/clean_stats.json"
    # the references drawn again with another sample seed (spread: references: redraw)
    reference_draw: str = "results/data/{dataset}/reference_draws/draw{draw}.jsonl"
    reference_draw_stats: str = "results/data/{dataset}/reference_draws/draw{draw}.stats.json"
    size_check: str = "results/data/{dataset}/size_check.json"
    prompts: str = "results/data/{dataset}/prompts.jsonl"
    # generation (rules/generate.smk)
    shard: str = "results/generations/{dataset}/{model}/shards/seed{seed}.{shard}.jsonl"
    shard_stats: str = "results/generations/{dataset}/{model}/shards/seed{seed}.{shard}.stats.json"
    # a generate job's finished batches (genmetrics.generation.progress), deleted once the shard is written
    progress: str = "results/generations/{dataset}/{model}/shards/seed{seed}.{shard}.progress.jsonl"
    generations: str = "results/generations/{dataset}/{model}/seed{seed}.jsonl"
    generation_stats: str = "results/generations/{dataset}/{model}/seed{seed}.stats.json"
    # features (rules/features.smk); {source} may end in .continuation
    embeddings: str = "results/features/embed/{featurizer}/{dataset}/{source}.npz"
    surprisal: str = "results/features/surprisal/{evaluator}/{dataset}/{source}.npz"
    pos: str = "results/features/pos/{dataset}/{source}.jsonl"
    # scores (rules/metrics.smk, rules/report.smk)
    score: str = "results/scores/{dataset}/{source}/{entry}.json"
    scores: str = "results/scores.csv"
    scores_summary: str = "results/scores_summary.csv"
    headline_table: str = "results/scores_headline.csv"
    headline_markdown: str = "results/scores_headline.md"
    # analyses (rules/analysis.smk, rules/report.smk)
    spread: str = "results/analysis/spread/{dataset}/{model}/{entry}.json"
    spread_table: str = "results/spread.csv"
    sweep: str = "results/analysis/sweep/{dataset}/{source}/{entry}.csv"
    length_table: str = "results/analysis/length_correlation.csv"
    # the diversity study (Shaib et al. 2024): per-source scores raw and truncated, their
    # correlation with length per dataset, the Markdown of both (and of the stability table)
    diversity_table: str = "results/analysis/diversity_table.csv"
    diversity_length: str = "results/analysis/diversity_length.csv"
    diversity_markdown: str = "results/analysis/diversity_tables.md"
    diversity_stability: str = "results/analysis/diversity_stability.csv"
    # the paper's numbers beside ours (analysis.diversity.paper)
    diversity_side_by_side: str = "results/analysis/summary_diversity_side_by_side.csv"
    diversity_side_by_side_markdown: str = "results/analysis/summary_diversity_side_by_side.md"
    correlation_table: str = "results/analysis/metric_correlation.csv"
    pr_plane_table: str = "results/analysis/pr_plane.csv"
    overlap_table: str = "results/analysis/model_overlap.csv"
    overlap_markdown: str = "results/analysis/model_overlap.md"
    mauve_bars_table: str = "results/analysis/mauve_bars.csv"
    few_shot_table: str = "results/analysis/few_shot.csv"
    few_shot_parsed: str = "results/analysis/few_shot_parsed.csv"
    scaling_table: str = "results/analysis/scaling.csv"
    scaling_markdown: str = "results/analysis/scaling.md"
    scaling_cells: str = "results/analysis/scaling_cells.csv"
    scaling_table1: str = "results/analysis/scaling_table1.csv"
    scaling_table1_markdown: str = "results/analysis/scaling_table1.md"
    # the pr-scale study (Le Bronnec et al. 2024 at larger N): P and R per model size, the
    # paper's numbers beside ours
    pr_scale_sizes: str = "results/analysis/pr_scale_sizes.csv"
    pr_scale_side_by_side: str = "results/analysis/pr_scale_side_by_side.csv"
    pr_scale_markdown: str = "results/analysis/pr_scale_side_by_side.md"
    # the P/R paper's other studies and omniinput-compare (studies.pr_llm): the paper's numbers
    # beside ours, one pair per study ({study}: biographies, webtext, creative, chat-vs-base,
    # agnews-experiment, omniinput-compare), and Fig. 7's correlations pooled over the runs
    side_by_side: str = "results/analysis/{study}_side_by_side.csv"
    side_by_side_markdown: str = "results/analysis/{study}_side_by_side.md"
    run_correlation: str = "results/analysis/run_correlation.csv"
    scaling_table2_markdown: str = "results/analysis/scaling_table2.md"
    scaling_paper: str = "results/analysis/scaling_paper.csv"
    # the rank agreement of models across featurizers (analysis.featurizer_robustness)
    featurizer_robustness_table: str = "results/analysis/featurizer_robustness.csv"
    featurizer_robustness_markdown: str = "results/analysis/featurizer_robustness.md"
    # repeated n-grams and POS patterns per source (analysis.patterns)
    patterns_table: str = "results/analysis/patterns/{dataset}.csv"
    patterns_markdown: str = "results/analysis/patterns/{dataset}.md"
    # instruction sets compared (analysis.instruction_sets): the table, its Markdown (the
    # paper's Tables 12, 9, 13) and the side-by-side table with the paper's numbers
    instruction_sets_table: str = "results/analysis/instruction_sets.csv"
    instruction_sets_markdown: str = "results/analysis/instruction_sets.md"
    instruction_sets_paper: str = "results/analysis/instruction_sets_paper.csv"
    # paired model-vs-model differences and texts needed (analysis.paired, analysis.sample_size)
    paired_table: str = "results/analysis/paired_differences.csv"
    sample_size_table: str = "results/analysis/sample_size.csv"
    paired_figure: str = "results/figures/paired_{dataset}.png"
    # figures and the report
    correlation_figure: str = "results/figures/metric_correlation.png"
    pr_figure: str = "results/figures/precision_recall.png"
    pr_curves_figure: str = "results/figures/pr_curves.png"
    spectra_figure: str = "results/figures/surprisal_spectra.png"
    scaling_figure: str = "results/figures/scaling.png"
    scaling_spectra_figure: str = "results/figures/scaling_spectra.png"
    length_figure: str = "results/figures/length_correlation.png"
    sweep_figure: str = "results/figures/pr_sweep.png"
    mauve_bars_figure: str = "results/figures/mauve_bars.png"
    few_shot_figure: str = "results/figures/few_shot.png"
    featurizer_robustness_figure: str = "results/figures/featurizer_robustness.png"
    report: str = "results/report.html"
    # OmniInput (rules/omniinput.smk)
    omni_toy_model: str = "results/omniinput/toy/model"
    omni_toy_exact: str = "results/omniinput/toy/exact.npz"
    omni_toy_result: str = "results/omniinput/toy/{proposal}.npz"
    # kept across attempts, outside the outputs (Snakemake deletes those of a failed job)
    omni_toy_checkpoint: str = "results/omniinput/toy/progress/{proposal}.ckpt.npz"
    omni_toy_validation: str = "results/omniinput/toy/validation.json"
    omni_toy_figure: str = "results/figures/omniinput_toy.png"
    omni_result: str = "results/omniinput/{run}/sampler.npz"
    omni_checkpoint: str = "results/omniinput/{run}/progress/sampler.ckpt.npz"
    omni_samples: str = "results/omniinput/{run}/samples.csv"
    omni_annotations: str = "results/omniinput/{run}/annotations.csv"
    omni_density: str = "results/omniinput/{run}/density.npz"
    omni_score: str = "results/omniinput/{run}/score.json"
    omni_table: str = "results/omniinput/scores.csv"
    omni_figure: str = "results/figures/omniinput_pr.png"
    omni_classifier: str = "results/omniinput/classifier/{classifier}/weights.safetensors"
    omni_classifier_report: str = "results/omniinput/classifier/{classifier}/weights.json"
    omni_compare_table: str = "results/omniinput/compare/{comparison}/aupr.csv"
    omni_compare_figure: str = "results/figures/omniinput_compare_{comparison}.png"
    omni_variance_annotations: str = "results/omniinput/variance/{variance}/annotations_b.csv"
    omni_variance_table: str = "results/omniinput/variance/{variance}/table.csv"
    omni_variance_summary: str = "results/omniinput/variance/{variance}/summary.json"
    # agreement with human judgments (rules/agreement.smk)
    agreement_data: str = "results/agreement/{jset}/data"  # a set's files made by agreement_fetch
    agreement_scores: str = "results/agreement/{jset}/scores.csv"
    agreement_correlations: str = "results/agreement/{jset}/correlations.csv"
    agreement_upstream: str = "results/agreement/{jset}/upstream_check.csv"
    agreement_record: str = "results/agreement/{jset}/record.json"
    agreement_pairwise: str = "results/agreement/{jset}/pairwise.csv"
    agreement_figure: str = "results/figures/agreement_{jset}.png"
    agreement_summary: str = "results/agreement/summary.md"
    agreement_summary_table: str = "results/agreement/summary.csv"

    def under(self, root: str) -> ResultPaths:
        """The same table under another folder (a config's ``results_dir``)."""
        root = os.path.normpath(root)
        old, new = _prefix(self.root), _prefix(root)
        moved = {
            f.name: new + getattr(self, f.name)[len(old) :]
            for f in fields(self)
            if f.name != "root"
        }
        return replace(self, root=root, **moved)

    def log(self, name: str) -> str:
        """A job's log file: ``<root>/logs/<name>`` (a pattern, with the job's wildcards)."""
        return f"{_prefix(self.root)}logs/{name}"

    def texts(self, dataset: str, source: str) -> str:
        """The rows of a source: human references (or a draw of them), the dataset's prompts,
        or a model's generations."""
        if source == REFERENCES:
            return self.references.format(dataset=dataset)
        if source == PROMPTS:
            return self.prompts.format(dataset=dataset)
        if source.startswith(REFERENCES + DRAW):
            return self.reference_draw.format(
                dataset=dataset, draw=source[len(REFERENCES + DRAW) :]
            )
        model, sep, seed = source.rpartition("/seed")
        if not sep:
            raise ValueError(
                f"not a source name: {source!r} (references, references/drawN, prompts or "
                "model/seedN)"
            )
        return self.generations.format(dataset=dataset, model=model, seed=seed)


def _prefix(root: str) -> str:
    """What every path under ``root`` starts with ("" for the run folder itself)."""
    return "" if root == "." else root + "/"


RESULTS = ResultPaths()


def texts_path(dataset: str, source: str, results: ResultPaths = RESULTS) -> str:
    """The rows of a source under ``results`` (:meth:`ResultPaths.texts`)."""
    return results.texts(dataset, source)


def inside_workdir(path: str) -> str:
    """``path`` relative to the working folder when it lies inside it, else unchanged: what
    Snakemake records (inputs, params) then survives moving or copying the project folder."""
    if not os.path.isabs(path):
        return path
    cwd = os.getcwd()
    norm = os.path.normpath(path)
    if norm == cwd or not norm.startswith(cwd.rstrip(os.sep) + os.sep):
        return path
    return os.path.relpath(norm, cwd)


def portable_path(path: Path, manifest_dir: Path, caches: list[Path]) -> tuple[str, str]:
    """How a manifest records the folder it describes, so that a project folder can be moved
    or copied and a cache shared by several projects (``path_base``):

    * ``manifest``: inside one of the ``caches`` (a converted GGUF, an unpacked wheel): the
      path relative to the manifest's folder, which moves with the cache;
    * ``workdir``: inside the working folder: relative to it (jobs run there);
    * ``absolute``: anywhere else (a model folder of the user's).
    """
    full = os.path.abspath(path)
    for cache in caches:
        if Path(full).is_relative_to(os.path.abspath(cache)):
            return os.path.relpath(full, os.path.abspath(manifest_dir)), "manifest"
    where = inside_workdir(full)
    return where, ("absolute" if os.path.isabs(where) else "workdir")


def model_manifest(model_cache: str, model_key: str) -> str:
    """The loadable description of a prepared checkpoint in the model cache, under its key
    (:func:`genmetrics.models.checkpoints.checkpoint_key`, by content, not by name)."""
    return f"{model_cache}/{model_key}/model.json"


def asset_manifest(cache: str, asset: str) -> str:
    """The manifest of an offline asset (:data:`genmetrics.data.assets.ASSETS`) in the cache."""
    return f"{cache}/assets/{asset}.json"
