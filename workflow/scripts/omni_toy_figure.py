"""The toy figure: ρ(z) estimated vs exact, r(z), PR curves."""

from genmetrics.figures.precision_recall import omniinput_toy_figure
from genmetrics.omniinput.settings import PROPOSALS
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    results = {p: sm.input[p] for p in PROPOSALS if p in sm.input.keys()}
    omniinput_toy_figure(sm.input.exact, results, sm.input.validation, sm.output[0])
