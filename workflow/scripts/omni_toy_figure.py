"""The toy figure: ρ(z) estimated vs exact, r(z), PR curves."""

from genmetrics.figures.omniinput import omniinput_toy_figure
from genmetrics.omniinput.settings import PROPOSALS
from genmetrics.omniinput.validation import toy_comparison
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    results = {p: sm.input[p] for p in PROPOSALS if p in sm.input.keys()}
    omniinput_toy_figure(toy_comparison(sm.input.exact, results, sm.input.validation), sm.output[0])
