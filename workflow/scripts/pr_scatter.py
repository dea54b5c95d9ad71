"""The precision–recall plane (Le Bronnec et al. (2024), Fig. 1) with its points and ellipses
as a table, and the model × model overlap table (their Table 1) as CSV and markdown."""

import pandas as pd

from genmetrics.analysis.overlap import overlap_long, overlap_markdown
from genmetrics.analysis.pr_plane import plane_tables
from genmetrics.figures._style import entry_features
from genmetrics.figures.precision_recall import pr_scatter
from genmetrics.io import read_json, write_csv, write_text
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    scores = pd.read_csv(sm.input.scores)
    spreads = [read_json(p) for p in sm.input.spreads]
    points, plane = plane_tables(scores, spreads)
    features = entry_features(sm.config.get("metrics"))
    pr_scatter(points, plane, sm.output.figure, sm.params.templates, features)
    write_csv(sm.output.plane, plane)
    overlap = overlap_long(scores)
    write_csv(sm.output.overlap, overlap)
    write_text(sm.output.overlap_markdown, overlap_markdown(overlap))
    log.info("P/R plane: %d (dataset, entry, reference, model) means", len(plane))
    log.info("model-vs-model overlap: %d rows", len(overlap))
