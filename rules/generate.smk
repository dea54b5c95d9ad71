# Generation: one job per (dataset, model, seed, shard), merged per (dataset, model, seed).


rule generate:
    input:
        prompts=RESULTS.prompts,
        # no GPU hour before the data is known to be large enough for every metric entry
        size_check=RESULTS.size_check,
        # <model_cache>/<model key>/model.json of models.{model}.checkpoint
        model=per_job(PLAN.generation_model),
    output:
        texts=RESULTS.shard,
        stats=RESULTS.shard_stats,
    log:
        RESULTS.log("generate/{dataset}/{model}/seed{seed}.{shard}.log"),
    wildcard_constraints:
        model=names_pattern(PLAN.generating_models),
    conda:
        "../envs/generate.yaml"
    threads: PLAN.rule_threads("generate")
    resources:
        **PLAN.rule_resources("generate"),
    params:
        settings=per_job(PLAN.generation_settings),
        # finished batches, kept across attempts (not an output: Snakemake deletes those)
        progress=RESULTS.progress,
        # GENERATION_CODE's digest (with the vLLM backend's module for its models' jobs)
        code=per_job(PLAN.generation_code),
    script:
        "../workflow/scripts/generate.py"


rule merge_generations:
    input:
        prompts=RESULTS.prompts,
        # RESULTS.shard and RESULTS.shard_stats for shard = 0 .. generation.shards - 1
        texts=per_job(PLAN.shard_files),
        stats=per_job(PLAN.shard_stat_files),
    output:
        texts=RESULTS.generations,
        stats=RESULTS.generation_stats,
    log:
        RESULTS.log("merge_generations/{dataset}/{model}/seed{seed}.log"),
    wildcard_constraints:
        model=names_pattern(PLAN.generating_models),
    conda:
        "../envs/metrics.yaml"
    params:
        # generation.samples_per_prompt (or the model's): rows <prompt id>~<j> per prompt
        samples_per_prompt=per_job(PLAN.samples_per_prompt),
    script:
        "../workflow/scripts/merge_generations.py"


# Texts that already exist (another system's outputs, a labelled human subset) as a model.
rule import_texts:
    input:
        # texts: models.{model}.texts.source.path (local); references: RESULTS.references
        # with texts.match_references
        unpack(per_job(PLAN.imported_files)),
    output:
        RESULTS.generations,
    log:
        RESULTS.log("import_texts/{dataset}/{model}/seed{seed}.log"),
    wildcard_constraints:
        model=names_pattern(PLAN.text_models),
    conda:
        "../envs/metrics.yaml"
    params:
        spec=per_job(PLAN.imported_texts),
    script:
        "../workflow/scripts/import_texts.py"
