# OmniInput (Liu et al.): a model's output distribution over its whole input space V^L.
# The toy validation (a digit GPT-2 enumerated exactly) and the language-model runs; not in
# `all`: `snakemake omniinput` or `snakemake omniinput_toy`.


rule omni_train_toy:
    output:
        directory(OMNI.toy_model),
    log:
        "results/logs/omniinput/train_toy.log",
    conda:
        "../envs/generate.yaml"
    threads: 2
    params:
        settings=plan("omni_toy_settings"),
    script:
        "../workflow/scripts/omni_train_toy.py"


rule omni_exact:
    input:
        OMNI.toy_model,
    output:
        OMNI.toy_exact,
    log:
        "results/logs/omniinput/exact.log",
    conda:
        "../envs/generate.yaml"
    threads: 2
    params:
        settings=plan("omni_toy_settings"),
    script:
        "../workflow/scripts/omni_exact.py"


rule omni_toy_sample:
    input:
        model=OMNI.toy_model,
        exact=OMNI.toy_exact,
    output:
        OMNI.toy_result,
    log:
        "results/logs/omniinput/toy_{proposal}.log",
    conda:
        "../envs/generate.yaml"
    threads: 2
    params:
        settings=plan("omni_toy_settings"),
        # kept across attempts (not an output: Snakemake deletes those)
        checkpoint=OMNI.toy_checkpoint,
    script:
        "../workflow/scripts/omni_toy_sample.py"


rule omni_validate:
    input:
        unpack(plan("omni_toy_results")),
        model=OMNI.toy_model,
        exact=OMNI.toy_exact,
    output:
        OMNI.toy_validation,
    log:
        "results/logs/omniinput/validate.log",
    conda:
        "../envs/generate.yaml"
    params:
        code=PLAN.omni_code(),
    script:
        "../workflow/scripts/omni_validate.py"


rule omni_toy_figure:
    input:
        unpack(plan("omni_toy_results")),
        exact=OMNI.toy_exact,
        validation=OMNI.toy_validation,
    output:
        report(
            OMNI.toy_figure,
            caption="../workflow/report/omniinput_toy.rst",
            category="OmniInput",
        ),
    log:
        "results/logs/omniinput/toy_figure.log",
    conda:
        "../envs/plots.yaml"
    script:
        "../workflow/scripts/omni_toy_figure.py"


rule omni_sample:
    input:
        model=plan("omni_run_model"),
    output:
        OMNI.run_result,
    log:
        "results/logs/omniinput/{run}/sample.log",
    conda:
        "../envs/generate.yaml"
    threads: PLAN.rule_threads("omni_sample")
    resources:
        **PLAN.rule_resources("omni_sample"),
    params:
        settings=plan("omni_run_settings"),
        # kept across attempts and pre-emptions (not an output: Snakemake deletes those)
        checkpoint=OMNI.run_checkpoint,
    script:
        "../workflow/scripts/omni_sample.py"


rule omni_export:
    input:
        result=OMNI.run_result,
        model=plan("omni_run_model"),
    output:
        OMNI.run_samples,
    log:
        "results/logs/omniinput/{run}/export.log",
    conda:
        "../envs/generate.yaml"
    params:
        code=PLAN.omni_code(),
    script:
        "../workflow/scripts/omni_export.py"


rule omni_annotate:
    input:
        unpack(plan("omni_annotator_inputs")),
        result=OMNI.run_result,
        samples=OMNI.run_samples,
        model=plan("omni_run_model"),
    output:
        OMNI.run_annotations,
    log:
        "results/logs/omniinput/{run}/annotate.log",
    conda:
        "../envs/generate.yaml"
    params:
        annotator=plan("omni_annotator"),
        code=PLAN.omni_code(),
    script:
        "../workflow/scripts/omni_annotate.py"


rule omni_score:
    input:
        result=OMNI.run_result,
        annotations=OMNI.run_annotations,
    output:
        density=OMNI.run_density,
        score=OMNI.run_score,
    log:
        "results/logs/omniinput/{run}/score.log",
    conda:
        "../envs/metrics.yaml"
    params:
        direction=plan("omni_direction"),
        code=PLAN.omni_code(),
    script:
        "../workflow/scripts/omni_score.py"


rule omni_summary:
    input:
        scores=plan("omni_scores"),
    output:
        table=OMNI.runs_table,
        figure=report(
            OMNI.runs_figure,
            caption="../workflow/report/omniinput_runs.rst",
            category="OmniInput",
        ),
    log:
        "results/logs/omniinput/summary.log",
    conda:
        "../envs/plots.yaml"
    script:
        "../workflow/scripts/omni_summary.py"


# targets only (no work)
localrules:
    omniinput,
    omniinput_toy,


rule omniinput:
    input:
        TARGETS.omniinput,


rule omniinput_toy:
    input:
        TARGETS.omniinput_toy,
