# Aggregation and figures: the only rules that depend on every model.
from genmetrics.report.captions import caption_files

# the model × model overlap table goes into the report only where an entry compares models
# with each other (a precision_recall entry with `reference: {model: M}`); else it is empty
MODEL_REFERENCES = any(
    isinstance((e or {}).get("reference"), dict)
    for e in config.get("metrics", {}).values()
)


rule aggregate:
    input:
        TARGETS.scores,
    output:
        scores=report(
            RESULTS.scores,
            caption="../workflow/report/scores.rst",
            category="Scores",
            labels={"table": "every score (tidy, per seed)"},
        ),
        summary=RESULTS.scores_summary,
        headline=report(
            RESULTS.headline_table,
            caption="../workflow/report/headline.rst",
            category="Scores",
            labels={"table": "headline scores (mean over seeds, interval or ± std)"},
        ),
        headline_markdown=RESULTS.headline_markdown,
    log:
        RESULTS.log("aggregate.log"),
    conda:
        "../envs/metrics.yaml"
    params:
        code=script_code("aggregate.py"),
    script:
        "../workflow/scripts/aggregate.py"


rule correlation_heatmap:
    input:
        RESULTS.scores,
    output:
        figure=report(
            RESULTS.correlation_figure,
            caption="../workflow/report/heatmap.rst",
            category="Metric correlations",
            labels={
                "figure": "How the metrics move together",
                "shows": "rank correlation of every pair of headline scores over the sources",
            },
        ),
        table=RESULTS.correlation_table,
    log:
        RESULTS.log("correlation_heatmap.log"),
    conda:
        "../envs/plots.yaml"
    params:
        method=PLAN.report["correlation"],
        cluster=PLAN.report["cluster"],
        n_boot=PLAN.report["bootstrap"],
        seed=PLAN.report["seed"],
        # "<entry>/<value>" pairs to draw (null: each metric's headline values)
        values=PLAN.report["heatmap_values"],
        code=script_code("correlation_heatmap.py"),
    script:
        "../workflow/scripts/correlation_heatmap.py"


# MAUVE per model, mean and standard error over seeds (Le Bronnec et al. (2024), Fig. B.2).
rule mauve_bars:
    input:
        scores=RESULTS.scores,
        # the interval over prompts and seeds of each mean
        summary=RESULTS.scores_summary,
    output:
        figure=report(
            RESULTS.mauve_bars_figure,
            caption="../workflow/report/mauve_bars.rst",
            category="Precision and recall",
            labels={
                "figure": "MAUVE per model",
                "shows": "mean over seeds with its 95% interval; saturated panels flagged",
            },
        ),
        table=RESULTS.mauve_bars_table,
    log:
        RESULTS.log("mauve_bars.log"),
    conda:
        "../envs/plots.yaml"
    params:
        code=script_code("mauve_bars.py"),
    script:
        "../workflow/scripts/mauve_bars.py"


# Precision and recall against the number of in-context examples (Le Bronnec et al. (2024),
# Fig. 8): the few-shot variants <dataset>-n<k> of each few-shot dataset, one line per model.
rule few_shot_figure:
    input:
        scores=RESULTS.scores,
        # the interval over prompts and seeds of each mean
        summary=RESULTS.scores_summary,
        # RESULTS.generation_stats of every generating model on the few-shot datasets
        stats=PLAN.few_shot_generation_stats(),
    output:
        figure=report(
            RESULTS.few_shot_figure,
            caption="../workflow/report/few_shot.rst",
            category="Precision and recall",
            labels={
                "figure": "P and R against the in-context examples",
                "shows": "mean over seeds per number of examples, one line per model",
            },
        ),
        table=RESULTS.few_shot_table,
        parsed=RESULTS.few_shot_parsed,
    log:
        RESULTS.log("few_shot_figure.log"),
    conda:
        "../envs/plots.yaml"
    params:
        # variant dataset -> {dataset: the config's name, n: examples per prompt}
        variants=PLAN.few_shot_variants(),
        code=script_code("few_shot_figure.py"),
    script:
        "../workflow/scripts/few_shot_figure.py"


# The P/R plane (Le Bronnec et al. (2024), Fig. 1: seeds and reference resamples as ellipses)
# and the model × model overlap table (their Table 1).
rule pr_scatter:
    input:
        scores=RESULTS.scores,
        spreads=TARGETS.spreads,
    output:
        figure=report(
            RESULTS.pr_figure,
            caption="../workflow/report/pr_scatter.rst",
            category="Precision and recall",
            labels={
                "figure": "The precision–recall plane",
                "shows": "mean over seeds, 95% ellipse over seeds, reference resamples apart",
            },
        ),
        plane=RESULTS.pr_plane_table,
        overlap=(
            report(
                RESULTS.overlap_table,
                caption="../workflow/report/model_overlap.rst",
                category="Precision and recall",
                labels={
                    "figure": "Model × model overlap (table)",
                    "shows": "P and R of each model against another model's texts",
                },
            )
            if MODEL_REFERENCES
            else RESULTS.overlap_table
        ),
        overlap_markdown=RESULTS.overlap_markdown,
    log:
        RESULTS.log("pr_scatter.log"),
    conda:
        "../envs/plots.yaml"
    params:
        # chat or base per model (imported texts: none), for the markers
        templates=PLAN.model_templates(),
        code=script_code("pr_scatter.py"),
    script:
        "../workflow/scripts/pr_scatter.py"


rule html_report:
    input:
        scores=RESULTS.scores,
        figures=TARGETS.figures,
        summary=RESULTS.scores_summary,
        headline=RESULTS.headline_table,
        stats=TARGETS.generation_stats,
        # the paired comparisons and sample-size section (rules/analysis.smk)
        paired=RESULTS.paired_table,
        sample_size=RESULTS.sample_size_table,
        # workflow/report/*.rst of the figures and the headline table: the page shows the
        # captions of the Snakemake report (genmetrics.report.captions)
        captions=caption_files(workflow.basedir),
    output:
        RESULTS.report,
    log:
        RESULTS.log("html_report.log"),
    conda:
        "../envs/plots.yaml"
    params:
        code=script_code("html_report.py"),
    script:
        "../workflow/scripts/html_report.py"


# Downloads run on the controller's node (compute nodes often have no internet); every other
# job, aggregation and figures included, goes to the cluster (the profile's CPU partition).
localrules:
    fetch_dataset,
    fetch_model,
    fetch_asset,
