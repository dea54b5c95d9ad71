"""The registry's documented defaults are the functions' own defaults (no drift between them)."""

from __future__ import annotations

import inspect

import pytest

from genmetrics import GenmetricsError
from genmetrics.metrics import all_metrics, resolve_params


def test_registered_params_equal_signature_defaults():
    for name, metric in all_metrics().items():
        sig = inspect.signature(metric.func)
        defaults = {
            k: p.default for k, p in sig.parameters.items() if k not in ("candidate", "reference")
        }
        assert defaults == dict(metric.params), name
        assert "candidate" in sig.parameters, name
        assert ("reference" in sig.parameters) == (metric.reference != "none"), name


def test_unknown_param_is_named():
    with pytest.raises(GenmetricsError, match="unknown parameter"):
        resolve_params(all_metrics()["precision_recall"], {"kk": 3})
