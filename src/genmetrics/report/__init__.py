"""The reports: the one-page HTML summary and the figures' captions shared with Snakemake's report."""
