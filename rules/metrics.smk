# Scores: one job per (dataset, source, metric entry); the registry decides what it reads.
# A score job reads features and never loads a model, except an entry whose metric must run
# an encoder itself (BERTScore homogenization): it gets a GPU rule of its own.


rule score:
    input:
        # candidate, reference: the file of the metric's input kind for {source} and the
        # entry's reference (RESULTS.embeddings, RESULTS.surprisal, RESULTS.pos or the texts);
        # group: every source's texts (length_control); assets: offline asset manifests
        unpack(per_job(PLAN.score_inputs)),
    output:
        RESULTS.score,
    log:
        RESULTS.log("score/{dataset}/{source}/{entry}.log"),
    wildcard_constraints:
        entry=names_pattern(PLAN.entries_loading_models(False)),
    conda:
        "../envs/metrics.yaml"
    threads: 1
    params:
        settings=per_job(PLAN.score_settings),
        code=per_job(PLAN.score_code),
        upstream=per_job(PLAN.score_upstream),
    script:
        "../workflow/scripts/score.py"


use rule score as score_with_model with:
    log:
        RESULTS.log("score_with_model/{dataset}/{source}/{entry}.log"),
    wildcard_constraints:
        entry=names_pattern(PLAN.entries_loading_models(True)),
    conda:
        "../envs/generate.yaml"
    threads: PLAN.rule_threads("score_with_model")
    resources:
        **PLAN.rule_resources("score_with_model"),
