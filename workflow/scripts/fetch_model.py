"""Make one checkpoint loadable from local files (download, GGUF dequantization, manifest)."""

from pathlib import Path

from genmetrics import GenmetricsError
from genmetrics.models.checkpoints import prepare_model
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    cache = Path(sm.output[0]).parent.parent
    made = prepare_model(sm.params.checkpoint, sm.params.spec, cache)
    if made != Path(sm.output[0]):  # the key of what was prepared is the key the plan named
        raise GenmetricsError(
            f"checkpoints.{sm.params.checkpoint}: prepared {made}, not {sm.output[0]}"
        )
    log.info("checkpoint %s ready: %s", sm.params.checkpoint, made)
