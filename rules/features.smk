# Features: LM embeddings, per-token surprisal and POS tags of any source's texts.


rule embed:
    input:
        texts=source_texts,
        model=featurizer_model,
    output:
        "results/features/embed/{featurizer}/{dataset}/{source}.npz",
    params:
        settings=featurizer_settings,
        cache=featurizer_cache,
    threads: 2
    resources:
        gpu=1,
    log:
        "results/logs/embed/{featurizer}/{dataset}/{source}.log",
    conda:
        "../envs/generate.yaml"
    script:
        "../workflow/scripts/embed.py"


rule surprisal:
    input:
        texts=source_texts,
        model=evaluator_model,
    output:
        "results/features/surprisal/{evaluator}/{dataset}/{source}.npz",
    params:
        settings=evaluator_settings,
        cache=evaluator_cache,
    threads: 2
    resources:
        gpu=1,
    log:
        "results/logs/surprisal/{evaluator}/{dataset}/{source}.log",
    conda:
        "../envs/generate.yaml"
    script:
        "../workflow/scripts/surprisal.py"


rule pos_tags:
    input:
        texts=source_texts,
    output:
        "results/features/pos/{dataset}/{source}.jsonl",
    params:
        cache=config["cache"],
    log:
        "results/logs/pos_tags/{dataset}/{source}.log",
    conda:
        "../envs/metrics.yaml"
    script:
        "../workflow/scripts/pos_tags.py"
