"""Figures, one module per thing shown; each draws data computed elsewhere (the analyses,
:mod:`genmetrics.omniinput`) and computes no statistic itself.

===========================  ==============================================================
module                       figures
===========================  ==============================================================
``correlation``              metric × metric correlation heatmaps
``precision_recall``         the precision–recall plane, PR curves (PRD), the N/k sweep
``spectra``                  FACE surprisal spectra
``scaling``                  the FACE-2 valid-cell ratio per metric
``length``                   each score's correlation with text length
``agreement``                metric × human-criterion heatmap, pairwise A/B agreement
``omniinput``                the OmniInput toy and the runs' PR curves
``featurizer_robustness``    the models' ranks under each featurizer (slope chart, Kendall τ-b)
===========================  ==============================================================
"""
