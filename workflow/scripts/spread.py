"""Spread of a distribution metric over generation seeds and reference sets
(Le Bronnec et al. (2024), Table B.4)."""

from genmetrics.analysis.distribution import cleaned_pool, spread_analysis
from genmetrics.io import read_json, write_json
from genmetrics.npz import load_embeddings
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    s = sm.params.settings
    redraw = s["spread"]["references"] == "redraw"
    rec = spread_analysis(
        s["metric"],
        None if redraw else load_embeddings(sm.input.reference)[1],
        [load_embeddings(p)[1] for p in sm.input.candidates],
        s["params"],
        s["spread"],
        draws=[load_embeddings(p) for p in sm.input.draws] if redraw else None,
        pool=cleaned_pool(read_json(sm.input.draw_stats[0])) if redraw else None,
    )
    wc = sm.wildcards
    keys = {"metric": s["metric"], "entry": wc.entry, "dataset": wc.dataset, "model": wc.model}
    write_json(sm.output[0], {**keys, **rec})
    log.info("spread: %s", [(r["vary"], r["value"], r["std"]) for r in rec["rows"]])
