"""Rerun reasons that name what changed: ``params.k: 4 → 5`` instead of both parameter sets.

Snakemake records each job's params as the ``repr`` of every value and, when they differ,
prints the whole old and new values (:class:`snakemake.persistence.ParamsChange`): a score's
settings and upstream config are about 1.5 kB per job, so the one changed key is hard to
find in ``snakemake -n``. :func:`describe_params_change` pairs each old value with the new
value of the same shape and lists only the leaves that differ, as ``key.path: old → new``.

:func:`install` makes Snakemake's reason use it. Only the text changes: what Snakemake
records and compares (and so which jobs rerun) is untouched, so upgrading reruns nothing.
If Snakemake's ``ParamsChange`` ever loses the fields read here, :func:`install` leaves
Snakemake's own text in place.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from typing import Any

#: leaves listed per job before "and N more"
MAX_CHANGES = 8
#: characters of one value before it is shortened with "…"
MAX_VALUE = 60

_MISSING = object()


def _parse(text: str) -> Any:
    """A recorded param value (``repr`` of a builtin) back as data; text that is not a
    literal stays the text."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return text


def _show(value: Any) -> str:
    if value is _MISSING:
        return "(unset)"
    text = repr(value)
    return text if len(text) <= MAX_VALUE else text[: MAX_VALUE - 1] + "…"


def _leaves(value: Any, path: str = "") -> dict[str, Any]:
    """``{dotted.key.path: leaf}`` of nested mappings (lists are leaves)."""
    if isinstance(value, Mapping) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_leaves(v, f"{path}.{k}" if path else str(k)))
        return out
    return {path: value}


def _similarity(old: Any, new: Any) -> tuple[int, int]:
    """How alike two recorded values are: (same type, shared leaves with equal values)."""
    if type(old) is not type(new):
        return (0, 0)
    if not isinstance(old, Mapping):
        return (1, 0)
    a, b = _leaves(old), _leaves(new)
    shared = sum(1 for k in a.keys() & b.keys() if a[k] == b[k])
    return (1, shared + len(a.keys() & b.keys()))


def _pair(olds: list[Any], news: list[Any]) -> list[tuple[Any, Any]]:
    """Pair each new value with the most alike unpaired old one (greedy, deterministic);
    values left over pair with nothing."""
    pairs: list[tuple[Any, Any]] = []
    left = list(olds)
    for new in news:
        if not left:
            pairs.append((_MISSING, new))
            continue
        best = max(range(len(left)), key=lambda i: _similarity(left[i], new))
        if _similarity(left[best], new)[0] == 0:
            pairs.append((_MISSING, new))
            continue
        pairs.append((left.pop(best), new))
    pairs += [(old, _MISSING) for old in left]
    return pairs


def changed_leaves(olds: Iterable[str], news: Iterable[str]) -> list[tuple[str, Any, Any]]:
    """The leaves that differ between recorded (``olds``) and current (``news``) param values,
    each given as Snakemake records it (``repr``): ``[(key path, old, new)]``, sorted by key
    path; a side without the key holds a marker shown as ``(unset)``."""
    out: list[tuple[str, Any, Any]] = []
    pairs = _pair([_parse(t) for t in sorted(olds)], [_parse(t) for t in sorted(news)])
    for old, new in pairs:
        if isinstance(old, Mapping) and isinstance(new, Mapping):
            a, b = _leaves(old), _leaves(new)
            for key in sorted(a.keys() | b.keys()):
                va, vb = a.get(key, _MISSING), b.get(key, _MISSING)
                if va is _MISSING or vb is _MISSING or va != vb:
                    out.append((key, va, vb))
        else:
            out.append(("value", old, new))
    return sorted(out, key=lambda change: change[0])


def describe_params_change(olds: Iterable[str], news: Iterable[str]) -> str:
    """One line naming each changed parameter, old → new (at most :data:`MAX_CHANGES`)."""
    changes = changed_leaves(olds, news)
    if not changes:
        return "params changed"
    shown = [f"{key}: {_show(a)} → {_show(b)}" for key, a, b in changes[:MAX_CHANGES]]
    more = len(changes) - MAX_CHANGES
    return "; ".join(shown) + (f"; and {more} more" if more > 0 else "")


def install() -> bool:
    """Make Snakemake's "Params have changed" reason name the changed parameters (idempotent).
    Returns whether it is in place; False leaves Snakemake's own text."""
    try:
        from snakemake.persistence import ParamsChange
    except ImportError:
        return False
    fields = getattr(ParamsChange, "__dataclass_fields__", {})
    if not {"only_old", "only_new"} <= set(fields):
        return False

    def __str__(self: Any) -> str:  # noqa: N807 (replaces ParamsChange.__str__)
        if not self:
            return "No params change"
        return describe_params_change(self.only_old, self.only_new)

    ParamsChange.__str__ = __str__  # type: ignore[method-assign]
    return True
