"""Parameter constraints: the one coercion and validation path for every metric parameter.

In the style of scikit-learn's ``utils._param_validation``: a parameter lists the constraints
it accepts (``Interval(int, 1, None)``, ``Options("auto", "exact")``, ``Const(False)``,
``BOOL``, ``STRING``) and a value is valid when one of them accepts it. The CLI, the config
check at DAG-build time, the workflow's score jobs and the Python API all go through
:func:`check_value`, so a parameter has one meaning everywhere:

* A value is checked as given; a string that no constraint accepts is read once as a YAML
  scalar (``"false"`` → False, ``"4"`` → 4, ``"null"`` → None) and checked again. So
  ``--param k=4`` and ``k: 4`` in config.yaml are the same parameter, and ``"false"`` is
  never silently True.
* Numbers are refused, not truncated: ``k=2.7`` and ``k=true`` are errors for an integer
  parameter; ``4.0`` is accepted as 4 (exactly representable). NaN and ±inf are refused, and
  so are integers beyond 64 bits (``10**30``) and numbers beyond float range.
* Numbers are read in decimal only (:func:`read_yaml`): YAML 1.1 reads ``010`` as 8,
  ``0x10`` as 16, ``1_000`` as 1000 and ``1:30`` as 90; such a value is an error, on the
  command line and in a config string alike (config files are read as strictly,
  :func:`genmetrics.config.check_config_file`).
* The returned value is the one the metric runs with, so a score record states the
  parameters actually used.
"""

from __future__ import annotations

import functools
import math
import numbers
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from genmetrics import GenmetricsError

_REJECT = object()
#: integer parameters must fit in 64 bits (what numpy and the libraries below it take)
_INT_LIMIT = 2**63


class Constraint:
    """One kind of accepted value. ``convert`` returns the value to use or ``_REJECT``."""

    def convert(self, value: Any) -> Any:  # pragma: no cover - interface
        raise NotImplementedError

    def __str__(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass(frozen=True)
class Interval(Constraint):
    """A finite number of ``type`` (int or float) in [left, right]; ``None`` = unbounded.

    ``closed`` is "both", "left", "right" or "neither". An int interval accepts integral
    floats (4.0 → 4); a float interval accepts ints (1 → 1.0) unless ``integers=False`` (for a
    parameter where 1 and 1.0 mean different things, e.g. a count or a fraction). Booleans are
    never numbers.
    """

    type: type
    left: float | None = None
    right: float | None = None
    closed: str = "both"
    integers: bool = True

    def convert(self, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return _REJECT
        if self.type is float and not self.integers and isinstance(value, numbers.Integral):
            return _REJECT
        if self.type is int and isinstance(value, numbers.Integral):
            v: float = int(value)  # exact (no float conversion)
            if abs(v) >= _INT_LIMIT:
                return _REJECT
        else:
            try:
                v = float(value)
            except OverflowError:  # an integer beyond float range
                return _REJECT
            if not math.isfinite(v):
                return _REJECT
            if self.type is int:
                if not (v.is_integer() and abs(v) < 2**53):
                    return _REJECT
                v = int(v)
        lo_ok = self.left is None or (
            v >= self.left if self.closed in ("both", "left") else v > self.left
        )
        hi_ok = self.right is None or (
            v <= self.right if self.closed in ("both", "right") else v < self.right
        )
        return v if lo_ok and hi_ok else _REJECT

    def __str__(self) -> str:
        kind = {int: "an integer", float: "a number"}[self.type]
        if self.type is float and not self.integers:
            kind = "a fraction"
        lo = "[" if self.closed in ("both", "left") else "("
        hi = "]" if self.closed in ("both", "right") else ")"
        if self.left is not None and self.right is not None:
            return f"{kind} in {lo}{_num(self.left)}, {_num(self.right)}{hi}"
        if self.left is not None:
            return f"{kind} {'>=' if lo == '[' else '>'} {_num(self.left)}"
        if self.right is not None:
            return f"{kind} {'<=' if hi == ']' else '<'} {_num(self.right)}"
        return f"{kind} (finite)"


@dataclass(frozen=True)
class Options(Constraint):
    """One of a fixed set of strings."""

    values: tuple[str, ...]

    def __init__(self, *values: str) -> None:
        object.__setattr__(self, "values", tuple(values))

    def convert(self, value: Any) -> Any:
        return value if isinstance(value, str) and value in self.values else _REJECT

    def __str__(self) -> str:
        return "one of " + " | ".join(self.values)


@dataclass(frozen=True)
class Const(Constraint):
    """Exactly this value (``None``, ``False``, ``"auto"``); ``False`` is not ``0``."""

    value: Any

    def convert(self, value: Any) -> Any:
        same = type(value) is type(self.value) and value == self.value
        return value if same or (self.value is None and value is None) else _REJECT

    def __str__(self) -> str:
        return {None: "null", True: "true", False: "false"}.get(self.value, repr(self.value))


class _Bool(Constraint):
    def convert(self, value: Any) -> Any:
        return value if isinstance(value, bool) else _REJECT

    def __str__(self) -> str:
        return "true | false"


class _String(Constraint):
    def convert(self, value: Any) -> Any:
        return value if isinstance(value, str) and value.strip() else _REJECT

    def __str__(self) -> str:
        return "a non-empty string"


BOOL = _Bool()
STRING = _String()


@dataclass(frozen=True)
class Param:
    """A declared parameter: its default (from the function signature), constraints, doc."""

    name: str
    default: Any
    constraints: tuple[Constraint, ...]
    doc: str

    def describe(self) -> str:
        return " or ".join(str(c) for c in self.constraints)

    def check(self, value: Any, where: str) -> Any:
        """Return ``value`` as the metric will use it, or raise naming ``where``."""
        for candidate in _readings(value, where):
            for c in self.constraints:
                out = c.convert(candidate)
                if out is not _REJECT:
                    return out
        note = ""
        if any(
            isinstance(v, int) and not isinstance(v, bool) and abs(v) >= _INT_LIMIT
            for v in _readings(value, where)
        ):
            note = " (beyond 64-bit integers)"
        raise GenmetricsError(f"{where}: must be {self.describe()}, got {_shown(value)}{note}")


def _shown(value: Any, limit: int = 80) -> str:
    """``repr(value)`` on one line, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


#: integers that YAML 1.1 (PyYAML) reads in another base or with digit separators: ``010``
#: is 8, ``0x10`` 16, ``0b10`` 2, ``1_000`` 1000, ``1:30`` 90 (what config files refuse)
_SURPRISING_INT = re.compile(r"[-+]?(0[0-9_]+|0[xXoObB][0-9a-fA-F_]+|[0-9][0-9_]*(_|:)[0-9_:]*)")


class _Surprising(Exception):
    """A number YAML 1.1 reads other than in decimal: ``(as written, as read)``."""


@functools.cache
def _strict_loader() -> type:
    """A SafeLoader whose numbers are decimal only (the class is built on first use: a job
    that reads no YAML value pays no import)."""
    import yaml

    class Strict(yaml.SafeLoader):
        pass

    def strict_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
        value = yaml.SafeLoader.construct_yaml_int(loader, node)
        if _SURPRISING_INT.fullmatch(node.value):
            raise _Surprising(node.value, value)
        return value

    def strict_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float:
        value = yaml.SafeLoader.construct_yaml_float(loader, node)
        if "_" in node.value or ":" in node.value:  # 1_000.5, 1:30.5 (base 60)
            raise _Surprising(node.value, value)
        return value

    Strict.add_constructor("tag:yaml.org,2002:int", strict_int)
    Strict.add_constructor("tag:yaml.org,2002:float", strict_float)
    return Strict


def read_yaml(text: str, where: str) -> Any:
    """``text`` read as YAML (a command-line value: numbers, true/false, null, lists) with
    numbers in decimal only: ``010``, ``0x10``, ``1_000`` or ``1:30`` is an error naming
    ``where``. A text that is not YAML raises ``yaml.YAMLError`` (or RecursionError)."""
    import yaml

    try:
        return yaml.load(text, Loader=_strict_loader())
    except _Surprising as e:
        written, read = e.args
        raise GenmetricsError(
            f"{where}: {written} is read as {read!r} by YAML 1.1; write the number in decimal "
            "without leading zeros or separators"
        ) from None


def _readings(value: Any, where: str) -> Iterable[Any]:
    yield value
    if isinstance(value, str):
        import yaml  # here: a job that checks no string value pays no import

        try:
            parsed = read_yaml(value, where)
        except (yaml.YAMLError, RecursionError):
            return
        if parsed is not None or value.strip().lower() in ("null", "none", "~"):
            if parsed is None or not isinstance(parsed, (dict, list)):
                yield parsed


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`` (did you mean X?)`` for the closest of ``known`` to a misspelt ``name``
    (:func:`difflib.get_close_matches`, its default cutoff 0.6: ``mauv`` → ``mauve``), else
    ``""``: the hint an unknown-name error carries on its one line."""
    import difflib

    close = difflib.get_close_matches(str(name), [str(k) for k in known], n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def check_params(
    declared: Mapping[str, Param], given: Mapping[str, Any] | None, where: str
) -> dict[str, Any]:
    """Merge ``given`` over the defaults, each value checked; unknown names are an error.

    ``where`` prefixes messages, e.g. ``metrics.pr_k50.params`` gives
    ``metrics.pr_k50.params.k: must be an integer >= 1, got 'four'``.
    """
    given = dict(given or {})
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise GenmetricsError(
            f"{where}: unknown parameter(s) {', '.join(unknown)}"
            f"{did_you_mean(unknown[0], declared)}; "
            f"known: {', '.join(sorted(declared)) or '(none)'}"
        )
    return {
        name: (p.check(given[name], f"{where}.{name}") if name in given else p.default)
        for name, p in declared.items()
    }


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(x)


def canonical(obj: Any) -> Any:
    """Dicts with sorted keys (recursively), lists for tuples: job params compare equal when
    only the key order of the config changed."""
    if isinstance(obj, Mapping):
        return {k: canonical(obj[k]) for k in sorted(obj)}
    if isinstance(obj, (list, tuple)):
        return [canonical(v) for v in obj]
    return obj
