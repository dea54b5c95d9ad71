# Scores: one job per (dataset, source, metric entry); the registry decides what it reads.


rule score:
    input:
        unpack(plan("score_inputs")),
    output:
        RESULTS.score,
    log:
        "results/logs/score/{dataset}/{source}/{entry}.log",
    conda:
        "../envs/metrics.yaml"
    threads: 1
    params:
        settings=plan("score_settings"),
    script:
        "../workflow/scripts/score.py"
