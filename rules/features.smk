# Features: LM embeddings, per-token surprisal and POS tags of any source's texts.


rule embed:
    input:
        texts=source_texts,
        model=featurizer_model,
    output:
        "results/features/embed/{featurizer}/{dataset}/{source}.npz",
    log:
        "results/logs/embed/{featurizer}/{dataset}/{source}.log",
    conda:
        "../envs/generate.yaml"
    threads: 2
    resources:
        gpu=1,
    params:
        settings=featurizer_settings,
        cache=featurizer_cache,
    script:
        "../workflow/scripts/embed.py"


rule surprisal:
    input:
        texts=source_texts,
        model=evaluator_model,
    output:
        "results/features/surprisal/{evaluator}/{dataset}/{source}.npz",
    log:
        "results/logs/surprisal/{evaluator}/{dataset}/{source}.log",
    conda:
        "../envs/generate.yaml"
    threads: 2
    resources:
        gpu=1,
    params:
        settings=evaluator_settings,
        cache=evaluator_cache,
    script:
        "../workflow/scripts/surprisal.py"


rule pos_tags:
    input:
        texts=source_texts,
    output:
        "results/features/pos/{dataset}/{source}.jsonl",
    log:
        "results/logs/pos_tags/{dataset}/{source}.log",
    conda:
        "../envs/metrics.yaml"
    script:
        "../workflow/scripts/pos_tags.py"
