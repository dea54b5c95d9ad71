"""A study's numbers beside its paper's (studies.pr_llm.side_by_side, studies.omniinput_compare
.side_by_side): the CSV and its Markdown."""

import pandas as pd

from genmetrics.analysis.aggregate import read_scores
from genmetrics.analysis.distribution import sweep_means
from genmetrics.io import write_csv, write_text
from genmetrics.runlog import log_to
from genmetrics.studies.omniinput_compare import side_by_side as omni
from genmetrics.studies.pr_llm import side_by_side as pr

sm = snakemake  # noqa: F821
study = sm.params.study
with log_to(sm.log[0]) as log:
    if study == "omniinput-compare":
        compare = {
            c: pd.read_csv(p) for c, p in zip(sm.params.comparisons, sm.input.compare, strict=True)
        }
        variance = {
            v: pd.read_csv(p) for v, p in zip(sm.params.variances, sm.input.variance, strict=True)
        }
        ours = omni.ours_table(compare, variance)
        side = omni.omniinput_compare(ours, sm.params.sizes, nll=sm.params.nll_variances)
    else:
        scores = read_scores(sm.input.scores)
        pairs = pr.chat_base_pairs(sm.params.templates, sm.params.checkpoints)
        if study == "biographies":
            corr = pd.read_csv(sm.input.correlation)
            side = pr.biographies(corr, scores, sm.params.variants, sm.params.templates)
        elif study == "webtext":
            sweeps = [pd.read_csv(p) for p in sm.input.sweeps]
            means = sweep_means(pd.concat(sweeps)) if sweeps else None
            side = pr.webtext(scores, pd.read_csv(sm.input.spread), means, pairs)
        elif study == "chat-vs-base":
            side = pr.chat_vs_base(scores, pairs)
        elif study == "agnews-experiment":
            side = pr.agnews(scores)
        elif study == "creative":
            side = pr.creative(scores)
        else:
            raise ValueError(f"no side-by-side table for the study {study!r}")
    write_csv(sm.output.table, side)
    title = f"{study}: the paper's numbers beside this run"
    write_text(sm.output.markdown, pr.markdown(side, title))
    agree = side["direction_agrees"].dropna().astype(bool)
    log.info("%d rows, %d directions compared, %d agree", len(side), len(agree), agree.sum())
