# Agreement of metrics with human judgments (configs/agreement.yaml, `make agreement`):
# judged texts scored through the metric registry, then correlated with each human
# criterion (REALSumm, XSum, HANNA) or compared with A/B choices (contrastive search, RankGen).
# A set given as upstream sources has its folder made first (agreement_fetch).


rule agreement_fetch:
    input:
        # the data mirror's copies of agreement.sets.{jset}.sources (none: downloaded)
        per_job(PLAN.agreement.fetch_inputs),
    output:
        directory(RESULTS.agreement_data),
    log:
        RESULTS.log("agreement/{jset}/fetch.log"),
    wildcard_constraints:
        jset=names_pattern(PLAN.agreement.fetched()),
    conda:
        "../envs/metrics.yaml"
    params:
        settings=per_job(PLAN.agreement.fetch_settings),
        code=script_code("agreement_fetch.py"),
    script:
        "../workflow/scripts/agreement_fetch.py"


rule agreement_score:
    input:
        # data: agreement.sets.{jset}.path (a file, or a folder's *.jsonl); assets: manifests
        unpack(per_job(PLAN.agreement.inputs)),
    output:
        scores=RESULTS.agreement_scores,
        record=RESULTS.agreement_record,
    log:
        RESULTS.log("agreement/{jset}/score.log"),
    conda:
        "../envs/metrics.yaml"
    threads: 1
    params:
        settings=per_job(PLAN.agreement.settings),
        code=script_code("agreement_score.py"),
    script:
        "../workflow/scripts/agreement_score.py"


rule agreement_correlate:
    input:
        scores=RESULTS.agreement_scores,
        record=RESULTS.agreement_record,
    output:
        table=RESULTS.agreement_correlations,
        upstream=RESULTS.agreement_upstream,
        figure=report(
            RESULTS.agreement_figure,
            caption="../workflow/report/agreement_heatmap.rst",
            category="Agreement with human judgments",
            subcategory="{jset}",
        ),
    log:
        RESULTS.log("agreement/{jset}/correlate.log"),
    wildcard_constraints:
        jset=names_pattern(PLAN.agreement.names(pairwise=False)),
    conda:
        "../envs/plots.yaml"
    params:
        settings=per_job(PLAN.agreement.settings),
        code=script_code("agreement_correlate.py"),
    script:
        "../workflow/scripts/agreement_correlate.py"


rule agreement_pairwise:
    input:
        # data: agreement.sets.{jset}.path (a file, or a folder's *.jsonl); assets: manifests
        unpack(per_job(PLAN.agreement.inputs)),
        scores=RESULTS.agreement_scores,
        record=RESULTS.agreement_record,
    output:
        table=RESULTS.agreement_pairwise,
        figure=report(
            RESULTS.agreement_figure,
            caption="../workflow/report/agreement_pairwise.rst",
            category="Agreement with human judgments",
            subcategory="{jset}",
        ),
    log:
        RESULTS.log("agreement/{jset}/pairwise.log"),
    wildcard_constraints:
        jset=names_pattern(PLAN.agreement.names(pairwise=True)),
    conda:
        "../envs/plots.yaml"
    params:
        settings=per_job(PLAN.agreement.settings),
        code=script_code("agreement_pairwise.py"),
    script:
        "../workflow/scripts/agreement_pairwise.py"


rule agreement_summary:
    input:
        **PLAN.agreement.results(),
    output:
        table=report(
            RESULTS.agreement_summary_table,
            caption="../workflow/report/agreement_summary.rst",
            category="Agreement with human judgments",
            labels={"table": "every set, every metric"},
        ),
        markdown=RESULTS.agreement_summary,
    log:
        RESULTS.log("agreement/summary.log"),
    conda:
        "../envs/metrics.yaml"
    params:
        settings=PLAN.agreement.summary_settings(),
        code=script_code("agreement_summary.py"),
    script:
        "../workflow/scripts/agreement_summary.py"


# a target only (no work)
localrules:
    agreement,


rule agreement:
    input:
        TARGETS.agreement,
