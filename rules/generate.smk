# Generation: one job per (dataset, model, seed, shard), merged per (dataset, model, seed).


rule generate:
    input:
        prompts="results/data/{dataset}/prompts.jsonl",
        model=generation_model,
        tokens_per_word=RESOURCES / "tokens_per_word.tsv",
    output:
        texts="results/generations/{dataset}/{model}/shards/seed{seed}.{shard}.jsonl",
        stats="results/generations/{dataset}/{model}/shards/seed{seed}.{shard}.stats.json",
    log:
        "results/logs/generate/{dataset}/{model}/seed{seed}.{shard}.log",
    wildcard_constraints:
        model=_names(GEN_MODELS),
    conda:
        "../envs/generate.yaml"
    threads: 2
    resources:
        gpu=1,
    params:
        settings=generation_settings,
    script:
        "../workflow/scripts/generate.py"


rule merge_generations:
    input:
        texts=generation_shards,
        stats=generation_shard_stats,
    output:
        texts="results/generations/{dataset}/{model}/seed{seed}.jsonl",
        stats="results/generations/{dataset}/{model}/seed{seed}.stats.json",
    log:
        "results/logs/merge_generations/{dataset}/{model}/seed{seed}.log",
    wildcard_constraints:
        model=_names(GEN_MODELS),
    conda:
        "../envs/metrics.yaml"
    script:
        "../workflow/scripts/merge_generations.py"


# Texts that already exist (another system's outputs, a labelled human subset) as a model.
rule import_texts:
    input:
        local_texts_source,
    output:
        "results/generations/{dataset}/{model}/seed{seed}.jsonl",
    log:
        "results/logs/import_texts/{dataset}/{model}/seed{seed}.log",
    wildcard_constraints:
        model=_names(TEXT_MODELS),
    conda:
        "../envs/metrics.yaml"
    params:
        spec=imported_texts_spec,
    script:
        "../workflow/scripts/import_texts.py"
