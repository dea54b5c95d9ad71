"""Compute one metric entry for one (dataset, source) and write the score JSON (with its
provenance: config, input hashes, versions, host/GPU/SLURM job, git commit)."""

from genmetrics.devices import claim_gpus, gpus_requested
from genmetrics.io import write_json
from genmetrics.provenance import DEFAULT_PACKAGES, loaded_packages, record
from genmetrics.runlog import log_to
from genmetrics.scoring.job import score_entry

sm = snakemake  # noqa: F821
claim_gpus(gpus_requested(sm.resources))  # a workstation: this job's own GPU(s)
with log_to(sm.log[0]) as log:
    rec = score_entry(
        sm.params.settings,
        entry=sm.wildcards.entry,
        dataset=sm.wildcards.dataset,
        source=sm.wildcards.source,
        candidate=sm.input.candidate,
        reference=sm.input.get("reference"),
        group=sm.input.get("group", []),
    )
    rec["provenance"] = record(
        config={"entry": sm.params.settings, "upstream": sm.params.upstream},
        inputs={k: sm.input[k] for k in sm.input.keys()},
        packages=[*DEFAULT_PACKAGES, *loaded_packages()],  # the reference packages it ran
    )
    write_json(sm.output[0], rec)
    log.info("%s", rec["values"])
