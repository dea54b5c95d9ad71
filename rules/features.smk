# Features of any source's texts (or of their continuations: `{source}.continuation`, or of
# the prompts: source `prompts`): LM embeddings, per-token surprisal, POS tags.


rule embed:
    input:
        # RESULTS.references, RESULTS.prompts or RESULTS.generations of {source}
        texts=per_job(PLAN.source_texts),
        # <model_cache>/<model key>/model.json of featurizers.{featurizer}'s checkpoint
        model=per_job(PLAN.featurizer_model),
    output:
        RESULTS.embeddings,
    log:
        RESULTS.log("embed/{featurizer}/{dataset}/{source}.log"),
    conda:
        "../envs/generate.yaml"
    threads: PLAN.rule_threads("embed")
    resources:
        **PLAN.rule_resources("embed"),
    params:
        settings=per_job(PLAN.embed_settings),
        code=PLAN.code_digest("embed"),
        source=per_job(PLAN.feature_source),
        part=per_job(PLAN.feature_part),
    script:
        "../workflow/scripts/embed.py"


rule surprisal:
    input:
        # RESULTS.references, RESULTS.prompts or RESULTS.generations of {source}
        texts=per_job(PLAN.source_texts),
        # <model_cache>/<model key>/model.json of evaluators.{evaluator}'s checkpoint
        model=per_job(PLAN.evaluator_model),
    output:
        RESULTS.surprisal,
    log:
        RESULTS.log("surprisal/{evaluator}/{dataset}/{source}.log"),
    conda:
        "../envs/generate.yaml"
    threads: PLAN.rule_threads("surprisal")
    resources:
        **PLAN.rule_resources("surprisal"),
    params:
        settings=per_job(PLAN.surprisal_settings),
        code=PLAN.code_digest("surprisal"),
        source=per_job(PLAN.feature_source),
        part=per_job(PLAN.feature_part),
    script:
        "../workflow/scripts/surprisal.py"


rule pos_tags:
    input:
        # RESULTS.references, RESULTS.prompts or RESULTS.generations of {source}
        texts=per_job(PLAN.source_texts),
        assets=PLAN.pos_assets(),
    output:
        RESULTS.pos,
    log:
        RESULTS.log("pos_tags/{dataset}/{source}.log"),
    conda:
        "../envs/metrics.yaml"
    script:
        "../workflow/scripts/pos_tags.py"
