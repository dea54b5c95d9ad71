"""kNN precision/recall as functions of N and of k for one source
(Le Bronnec et al. (2024), Fig. 6/B.1)."""

from genmetrics.analysis.distribution import sweep_table
from genmetrics.io import write_csv
from genmetrics.npz import load_embeddings
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    df = sweep_table(
        load_embeddings(sm.input.reference)[1],
        load_embeddings(sm.input.candidate)[1],
        sm.params.settings,
        # one source (model/seed) per dataset: the figure and the tables tell datasets apart
        source=f"{sm.wildcards.dataset}/{sm.wildcards.source}",
    )
    write_csv(sm.output[0], df)
    log.info("%d sweep rows", len(df))
