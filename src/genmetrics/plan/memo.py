"""Plan queries answered once per argument: the plan is immutable, so a query's answer never
changes within a run, and Snakemake asks the same one for many jobs (every score job of an
entry asks for its settings and its code digest; every job reading a model's texts, for its
generation settings).

:func:`memoized` caches a query's value per positional arguments in the plan's ``_memo``
dict. The value is shared by every caller: the rules pass it to Snakemake as an input or a
params value, and nobody mutates those (a test compares every job's params and inputs with
and without the cache).

:func:`fixed_signature` gives an input/params function its signature once: Snakemake
(``snakemake.common.get_function_params``) reads an input function's parameters from the
attribute ``_overwrite_params`` when it is set, instead of calling ``inspect.signature`` at
each of the 5-10 calls per job. The attribute holds exactly what ``inspect.signature`` returns,
so what Snakemake passes is unchanged; a Snakemake without that attribute ignores it.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

#: where Snakemake looks for an input function's parameters before ``inspect.signature``
SNAKEMAKE_PARAMS_ATTR = "_overwrite_params"


def memoized(query: F) -> F:
    """``query`` (a plan method taking positional arguments) cached per arguments in the
    plan's ``_memo`` (a call with keyword arguments is not cached); ``query.__wrapped__`` is the uncached method."""
    name = query.__qualname__

    @functools.wraps(query)
    def cached(self: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs:  # a caller naming the arguments: answered directly
            return query(self, *args, **kwargs)
        key = (name, *args)
        memo = self._memo
        try:
            return memo[key]
        except KeyError:
            value = memo[key] = query(self, *args)
            return value

    return cached  # type: ignore[return-value]


def fixed_signature(func: F) -> F:
    """``func`` with its parameters stored where Snakemake reads them (see the module doc)."""
    setattr(func, SNAKEMAKE_PARAMS_ATTR, inspect.signature(func).parameters)
    return func
