# Aggregation and figures: the only rules that depend on every model.


rule aggregate:
    input:
        score_targets(),
    output:
        scores="results/scores.csv",
        summary="results/scores_summary.csv",
    log:
        "results/logs/aggregate.log",
    conda:
        "../envs/metrics.yaml"
    script:
        "../workflow/scripts/aggregate.py"


rule correlation_heatmap:
    input:
        "results/scores.csv",
    output:
        report(
            "results/figures/metric_correlation.png",
            caption="../workflow/report/heatmap.rst",
            category="Metric correlations",
        ),
    log:
        "results/logs/correlation_heatmap.log",
    conda:
        "../envs/plots.yaml"
    params:
        method=config["report"]["correlation"],
    script:
        "../workflow/scripts/correlation_heatmap.py"


rule pr_scatter:
    input:
        "results/scores.csv",
    output:
        report(
            "results/figures/precision_recall.png",
            caption="../workflow/report/pr_scatter.rst",
            category="Precision and recall",
        ),
    log:
        "results/logs/pr_scatter.log",
    conda:
        "../envs/plots.yaml"
    script:
        "../workflow/scripts/pr_scatter.py"


rule html_report:
    input:
        scores="results/scores.csv",
        figures=report_figures(),
        summary="results/scores_summary.csv",
        stats=generation_stats(),
    output:
        "results/report.html",
    log:
        "results/logs/html_report.log",
    conda:
        "../envs/plots.yaml"
    params:
        config=config,
    script:
        "../workflow/scripts/html_report.py"


localrules:
    fetch_dataset,
    fetch_model,
    aggregate,
    correlation_heatmap,
    pr_scatter,
    html_report,
