"""validation.json: each proposal's estimate against the exact enumeration."""

from genmetrics.io import write_json
from genmetrics.omniinput.jobs import validate_toy
from genmetrics.omniinput.settings import PROPOSALS
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    results = {p: sm.input[p] for p in PROPOSALS if p in sm.input.keys()}
    out = validate_toy(sm.input.model, sm.input.exact, results)
    write_json(sm.output[0], out)
    for kind, e in out["proposals"].items():
        log.info(
            "%s: max |ln rho error| %.3f, PR L-inf %.4f, %d/%d bins, %d evaluations",
            kind,
            e["max_abs_log_rho_error"],
            e["pr_curve_linf_error"],
            e["bins_reached"],
            e["bins_populated_exact"],
            e["model_evaluations"],
        )
