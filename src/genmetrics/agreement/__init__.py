"""Do our metrics agree with people? Human judgment sets and the analyses run on them.

* :mod:`~genmetrics.agreement.judgment_sets` — readers of the judged sets (REALSumm, XSum
  hallucinations, HANNA, contrastive-search and RankGen A/B);
* :mod:`~genmetrics.agreement.scoring` — our metrics on the judged texts (the registry);
* :mod:`~genmetrics.agreement.correlation` — correlation with human scores at system, item
  and pooled level, with bootstrap intervals (kernels: :mod:`genmetrics.analysis.statistics`);
* :mod:`~genmetrics.agreement.preference` — Bradley–Terry strengths and agreement with
  pairwise (A/B) human preferences;
* :mod:`~genmetrics.agreement.settings` — the ``agreement:`` config section as a typed plan;
* :mod:`~genmetrics.agreement.jobs` — what the workflow's ``agreement_*`` scripts call.
"""
