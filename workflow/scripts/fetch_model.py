"""Make one checkpoint loadable from local files (download, GGUF dequantization, manifest)."""

from pathlib import Path

from genmetrics.models.checkpoints import prepare_model
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    cache = Path(sm.output[0]).parent.parent
    log.info("checkpoint ready: %s", prepare_model(sm.wildcards.checkpoint, sm.params.spec, cache))
