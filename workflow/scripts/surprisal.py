"""Per-token surprisal of one source's texts under one evaluator LM (ragged NPZ, nats); a
continuation is scored given its prompt (conditional surprisal)."""

from genmetrics.devices import claim_gpus, gpus_requested
from genmetrics.features.cache import made_by
from genmetrics.features.surprisal import surprisal_source
from genmetrics.io import read_jsonl
from genmetrics.metrics.kinds import truncation_warning
from genmetrics.npz import save_npz, with_provenance
from genmetrics.provenance import record
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
claim_gpus(gpus_requested(sm.resources))  # a workstation: this job's own GPU(s)
with log_to(sm.log[0]) as log:
    rows = read_jsonl(sm.input.texts)
    stats: dict = {}  # the feature cache's key and the model's hash; the texts max_tokens cut
    arrays = surprisal_source(
        rows,
        sm.params.part,
        sm.params.source,
        sm.input.model,
        **sm.params.settings,
        progress=True,
        stats=stats,
    )
    rec = record(
        config={"evaluator": sm.params.settings, "source": sm.params.source},
        inputs={"texts": sm.input.texts, "model": sm.input.model},
    )
    rec["truncation"] = stats["truncation"]
    # the weights and cache key the features came from: scoring refuses to mix two of them
    made = made_by(sm.wildcards.evaluator, sm.input.model, sm.params.settings, stats)
    save_npz(sm.output[0], **with_provenance(arrays, {**rec, "features": made}))
    if stats["truncation"]["truncated"]:
        log.warning("%s", truncation_warning("", stats["truncation"]))
    log.info("surprisal of %d texts, %d tokens", len(arrays["ids"]), len(arrays["values"]))
