"""Where a Snakemake run spends its time on genmetrics' side, with ``GENMETRICS_TIMING=1``:
the import of the plan code, :func:`~genmetrics.plan.load_plan` and the rest of
``rules/common.smk``, and every call of the rules' input/params functions (``per_job``),
summed. Printed to stderr when the process exits, one line each::

    genmetrics timing: <part> <seconds> s (<calls> calls)

``benchmarks/bench_dry_run.py`` reads these lines to split a dry run's wall time into ours and
Snakemake's. Unset (the default), nothing is timed and :func:`timed` returns its function.
"""

from __future__ import annotations

import atexit
import functools
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from genmetrics.plan.memo import SNAKEMAKE_PARAMS_ATTR

ENABLED = os.environ.get("GENMETRICS_TIMING", "") not in ("", "0")

_seconds: dict[str, float] = {}
_calls: dict[str, int] = {}


def add(part: str, seconds: float, calls: int = 1) -> None:
    """Count ``seconds`` (and ``calls``) towards ``part``."""
    if not _seconds:
        atexit.register(report)
    _seconds[part] = _seconds.get(part, 0.0) + seconds
    _calls[part] = _calls.get(part, 0) + calls


def timed(part: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """``func`` with its calls' time added to ``part`` when timing is on; else ``func``. The
    wrapper keeps the signature Snakemake reads (:mod:`genmetrics.plan.memo`)."""
    if not ENABLED:
        return func

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            add(part, time.perf_counter() - start)

    if hasattr(func, SNAKEMAKE_PARAMS_ATTR):
        setattr(wrapper, SNAKEMAKE_PARAMS_ATTR, getattr(func, SNAKEMAKE_PARAMS_ATTR))
    return wrapper


def report() -> None:
    for part, seconds in _seconds.items():
        print(
            f"genmetrics timing: {part} {seconds:.3f} s ({_calls[part]} calls)",
            file=sys.stderr,
            flush=True,
        )
