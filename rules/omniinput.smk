# OmniInput (Liu et al.): a model's output distribution over its whole input space V^L.
# The toy validation (a digit GPT-2 enumerated exactly) and the language-model runs; not in
# `all`: `snakemake omniinput` or `snakemake omniinput_toy`.


rule omni_train_toy:
    output:
        directory(RESULTS.omni_toy_model),
    log:
        RESULTS.log("omniinput/train_toy.log"),
    conda:
        "../envs/generate.yaml"
    threads: 2
    params:
        settings=per_job(PLAN.omniinput.toy_settings),
        code=script_code("omni_train_toy.py"),
    script:
        "../workflow/scripts/omni_train_toy.py"


rule omni_exact:
    input:
        RESULTS.omni_toy_model,
    output:
        RESULTS.omni_toy_exact,
    log:
        RESULTS.log("omniinput/exact.log"),
    conda:
        "../envs/generate.yaml"
    threads: 2
    params:
        settings=per_job(PLAN.omniinput.toy_settings),
        code=script_code("omni_exact.py"),
    script:
        "../workflow/scripts/omni_exact.py"


rule omni_toy_sample:
    input:
        model=RESULTS.omni_toy_model,
        exact=RESULTS.omni_toy_exact,
    output:
        RESULTS.omni_toy_result,
    log:
        RESULTS.log("omniinput/toy_{proposal}.log"),
    conda:
        "../envs/generate.yaml"
    threads: 2
    params:
        settings=per_job(PLAN.omniinput.toy_settings),
        # kept across attempts (not an output: Snakemake deletes those)
        checkpoint=RESULTS.omni_toy_checkpoint,
        code=script_code("omni_toy_sample.py"),
    script:
        "../workflow/scripts/omni_toy_sample.py"


rule omni_validate:
    input:
        # RESULTS.omni_toy_result of each of omniinput.toy.proposals, by name
        unpack(per_job(PLAN.omniinput.toy_results)),
        model=RESULTS.omni_toy_model,
        exact=RESULTS.omni_toy_exact,
    output:
        RESULTS.omni_toy_validation,
    log:
        RESULTS.log("omniinput/validate.log"),
    conda:
        "../envs/generate.yaml"
    params:
        code=PLAN.omniinput.code(),
    script:
        "../workflow/scripts/omni_validate.py"


rule omni_toy_figure:
    input:
        # RESULTS.omni_toy_result of each of omniinput.toy.proposals, by name
        unpack(per_job(PLAN.omniinput.toy_results)),
        exact=RESULTS.omni_toy_exact,
        validation=RESULTS.omni_toy_validation,
    output:
        report(
            RESULTS.omni_toy_figure,
            caption="../workflow/report/omniinput_toy.rst",
            category="OmniInput",
        ),
    log:
        RESULTS.log("omniinput/toy_figure.log"),
    conda:
        "../envs/plots.yaml"
    params:
        code=script_code("omni_toy_figure.py"),
    script:
        "../workflow/scripts/omni_toy_figure.py"


rule omni_train_classifier:
    input:
        # <model_cache>/<model key>/model.json of omniinput.classifiers.{classifier}.tokenizer
        tokenizer=per_job(PLAN.omniinput.classifier_tokenizer),
    output:
        weights=RESULTS.omni_classifier,
        report=RESULTS.omni_classifier_report,
    log:
        RESULTS.log("omniinput/classifier_{classifier}.log"),
    conda:
        "../envs/generate.yaml"
    threads: 2
    params:
        settings=per_job(PLAN.omniinput.classifier_settings),
        code=script_code("omni_train_classifier.py"),
    script:
        "../workflow/scripts/omni_train_classifier.py"


rule omni_sample:
    input:
        # a classifier run's RESULTS.omni_classifier, by the name classifier (LM runs: none)
        unpack(per_job(PLAN.omniinput.run_target)),
        # <model_cache>/<model key>/model.json of omniinput.runs.{run}.checkpoint (a
        # classifier run: its tokenizer's checkpoint)
        model=per_job(PLAN.omniinput.run_model),
    output:
        RESULTS.omni_result,
    log:
        RESULTS.log("omniinput/{run}/sample.log"),
    conda:
        "../envs/generate.yaml"
    threads: PLAN.rule_threads("omni_sample")
    resources:
        **PLAN.rule_resources("omni_sample"),
    params:
        settings=per_job(PLAN.omniinput.run_settings),
        # kept across attempts and pre-emptions (not an output: Snakemake deletes those)
        checkpoint=RESULTS.omni_checkpoint,
        code=script_code("omni_sample.py"),
    script:
        "../workflow/scripts/omni_sample.py"


rule omni_export:
    input:
        result=RESULTS.omni_result,
        # <model_cache>/<model key>/model.json of omniinput.runs.{run}.checkpoint
        model=per_job(PLAN.omniinput.run_model),
    output:
        RESULTS.omni_samples,
    log:
        RESULTS.log("omniinput/{run}/export.log"),
    conda:
        "../envs/generate.yaml"
    params:
        code=PLAN.omniinput.code(),
    script:
        "../workflow/scripts/omni_export.py"


rule omni_annotate:
    input:
        # judge: the judge LM's model.json, or scores: the raters' CSV (annotator kind)
        unpack(per_job(PLAN.omniinput.annotator_inputs)),
        result=RESULTS.omni_result,
        samples=RESULTS.omni_samples,
        # <model_cache>/<model key>/model.json of omniinput.runs.{run}.checkpoint
        model=per_job(PLAN.omniinput.run_model),
    output:
        RESULTS.omni_annotations,
    log:
        RESULTS.log("omniinput/{run}/annotate.log"),
    conda:
        "../envs/generate.yaml"
    params:
        annotator=per_job(PLAN.omniinput.annotator),
        code=PLAN.omniinput.code(),
    script:
        "../workflow/scripts/omni_annotate.py"


rule omni_score:
    input:
        result=RESULTS.omni_result,
        annotations=RESULTS.omni_annotations,
    output:
        density=RESULTS.omni_density,
        score=RESULTS.omni_score,
    log:
        RESULTS.log("omniinput/{run}/score.log"),
    conda:
        "../envs/metrics.yaml"
    params:
        direction=per_job(PLAN.omniinput.direction),
        code=PLAN.omniinput.code(),
    script:
        "../workflow/scripts/omni_score.py"


rule omni_summary:
    input:
        # RESULTS.omni_score of every run
        scores=per_job(PLAN.omniinput.scores),
    output:
        table=RESULTS.omni_table,
        figure=report(
            RESULTS.omni_figure,
            caption="../workflow/report/omniinput_runs.rst",
            category="OmniInput",
        ),
    log:
        RESULTS.log("omniinput/summary.log"),
    conda:
        "../envs/plots.yaml"
    params:
        code=script_code("omni_summary.py"),
    script:
        "../workflow/scripts/omni_summary.py"


rule omni_compare:
    input:
        # RESULTS.omni_score of every seed of every run of omniinput.comparisons.{comparison}
        scores=per_job(PLAN.omniinput.compare_scores),
    output:
        table=RESULTS.omni_compare_table,
        figure=report(
            RESULTS.omni_compare_figure,
            caption="../workflow/report/omniinput_compare.rst",
            category="OmniInput",
        ),
    log:
        RESULTS.log("omniinput/compare_{comparison}.log"),
    conda:
        "../envs/plots.yaml"
    params:
        settings=per_job(PLAN.omniinput.compare_settings),
        code=PLAN.omniinput.code(),
    script:
        "../workflow/scripts/omni_compare.py"


rule omni_variance:
    input:
        # result, samples, annotations_a (RESULTS.omni_* of omniinput.variance.{variance}.run),
        # model (its checkpoint), and judge (a judge LM's model.json) or scores (a raters' CSV)
        unpack(per_job(PLAN.omniinput.variance_inputs)),
    output:
        annotations=RESULTS.omni_variance_annotations,
        table=report(
            RESULTS.omni_variance_table,
            caption="../workflow/report/omniinput_variance.rst",
            category="OmniInput",
        ),
        summary=RESULTS.omni_variance_summary,
    log:
        RESULTS.log("omniinput/variance_{variance}.log"),
    conda:
        "../envs/generate.yaml"
    params:
        settings=per_job(PLAN.omniinput.variance_settings),
        code=script_code("omni_variance.py"),
    script:
        "../workflow/scripts/omni_variance.py"


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
