"""Make one checkpoint loadable from local files (download, GGUF dequantization, manifest)."""

import os

# one BLAS/OpenMP thread pool of the size Snakemake gave this job, set before numpy/torch load
os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = str(snakemake.threads)  # noqa: F821

from pathlib import Path

from genmetrics.models import prepare_model
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    out = Path(sm.output[0])
    path = prepare_model(sm.wildcards.checkpoint, sm.params.spec, out.parent.parent)
    log.info("checkpoint ready: %s", path)
