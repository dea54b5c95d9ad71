"""OmniInput (Liu et al.): a model's output distribution over the whole input space V^L,
estimated with (gradient) Wang–Landau, and precision/recall from annotated bins.

See ``docs`` section "OmniInput / Gradient Wang–Landau (GWL)" of the metrics reference.
"""

from __future__ import annotations

from genmetrics.omniinput.curves import aupr, precision_recall_curve
from genmetrics.omniinput.density import Bins, WLResult
from genmetrics.omniinput.proposals import gradient_log_proposal
from genmetrics.omniinput.sampler import GradFn, OutputFn, flat_histogram_walk, wang_landau
from genmetrics.omniinput.toy import (
    MAX_ENUMERATION,
    LinearToy,
    all_sequences,
    digit_sum_rule,
    enumerate_outputs,
    exact_ln_rho,
    exact_r,
)

__all__ = [
    "MAX_ENUMERATION",
    "Bins",
    "GradFn",
    "LinearToy",
    "OutputFn",
    "WLResult",
    "all_sequences",
    "aupr",
    "digit_sum_rule",
    "enumerate_outputs",
    "exact_ln_rho",
    "exact_r",
    "flat_histogram_walk",
    "gradient_log_proposal",
    "precision_recall_curve",
    "wang_landau",
]
