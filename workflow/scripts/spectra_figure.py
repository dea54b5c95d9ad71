"""Surprisal-spectra figure (FACE) from the first face entry's scores."""

from genmetrics.analysis.spectra import spectra_panels
from genmetrics.figures.spectra import surprisal_spectra
from genmetrics.io import read_json
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    surprisal_spectra(spectra_panels([read_json(p) for p in sm.input]), sm.output[0])
