"""GAM-smoothed surprisal spectra per model size (FACE-2 Figure 5) from the surprisal files."""

from genmetrics.figures.scaling import smoothed_spectra_figure
from genmetrics.runlog import log_to
from genmetrics.studies.face2_scaling.smoothed_spectra import spectra_gam_panels

sm = snakemake  # noqa: F821
with log_to(sm.log[0]):
    smoothed_spectra_figure(spectra_gam_panels(sm.params.settings, progress=True), sm.output[0])
