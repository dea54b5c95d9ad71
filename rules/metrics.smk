# Scores: one job per (dataset, source, metric entry); the registry decides what it reads.


rule score:
    input:
        unpack(score_inputs),
    output:
        "results/scores/{dataset}/{source}/{metric}.json",
    log:
        "results/logs/score/{dataset}/{source}/{metric}.log",
    conda:
        "../envs/metrics.yaml"
    threads: 1
    params:
        metric=metric_name,
        params=score_params,
        reference=score_reference_name,
        length_control=score_length_control,
    script:
        "../workflow/scripts/score.py"
