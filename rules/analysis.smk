# Analyses across scores: seed/reference spread, P/R sweeps over N and k, length control.


rule spread:
    input:
        unpack(spread_inputs),
    output:
        "results/analysis/spread/{dataset}/{model}/{metric}.json",
    log:
        "results/logs/spread/{dataset}/{model}/{metric}.log",
    conda:
        "../envs/metrics.yaml"
    threads: 1
    params:
        metric=metric_name,
        params=score_params,
        spread=spread_settings,
    script:
        "../workflow/scripts/spread.py"


rule spread_table:
    input:
        spread_targets(),
    output:
        "results/spread.csv",
    log:
        "results/logs/spread_table.log",
    conda:
        "../envs/metrics.yaml"
    script:
        "../workflow/scripts/spread_table.py"


rule sweep:
    input:
        reference=sweep_reference,
        candidate=sweep_candidate,
    output:
        "results/analysis/sweep/{dataset}/{source}/{metric}.csv",
    log:
        "results/logs/sweep/{dataset}/{source}/{metric}.log",
    conda:
        "../envs/metrics.yaml"
    threads: 1
    params:
        settings=sweep_settings,
    script:
        "../workflow/scripts/sweep.py"


rule sweep_figure:
    input:
        sweep_targets(),
    output:
        report(
            "results/figures/pr_sweep.png",
            caption="../workflow/report/pr_sweep.rst",
            category="Precision and recall",
        ),
    log:
        "results/logs/sweep_figure.log",
    conda:
        "../envs/plots.yaml"
    script:
        "../workflow/scripts/sweep_figure.py"


# Optional target (seed 000 Fig. 6/B.1): `snakemake sweeps`.
rule sweeps:
    input:
        "results/figures/pr_sweep.png",


rule length_analysis:
    input:
        "results/scores.csv",
    output:
        table="results/analysis/length_correlation.csv",
        figure=report(
            "results/figures/length_correlation.png",
            caption="../workflow/report/length.rst",
            category="Length control",
        ),
    log:
        "results/logs/length_analysis.log",
    conda:
        "../envs/plots.yaml"
    script:
        "../workflow/scripts/length_analysis.py"


rule pr_curves:
    input:
        prd_scores(),
    output:
        report(
            "results/figures/pr_curves.png",
            caption="../workflow/report/pr_curves.rst",
            category="Precision and recall",
        ),
    log:
        "results/logs/pr_curves.log",
    conda:
        "../envs/plots.yaml"
    script:
        "../workflow/scripts/pr_curves.py"


localrules:
    spread_table,
    sweep_figure,
    sweeps,
    length_analysis,
    pr_curves,
