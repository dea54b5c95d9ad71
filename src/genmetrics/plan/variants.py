"""Datasets that one config entry makes several of: the few-shot ``n`` sweep.

A dataset whose ``prompts.few_shot.n`` is ``[0, 1, 3]`` (:mod:`genmetrics.data.fewshot`) is the
plan's datasets ``<name>-n0``, ``<name>-n1`` and ``<name>-n3``: the same source and cleaning
(each variant fetches and cleans its own copy: the same bytes; downloads are cached and
features are cached by content), each with the prompts of its ``n``. A single ``n`` is one
variant, named the same way. Config keys that name datasets (``models.<m>.datasets``, a metric
entry's ``datasets``, ``analysis.scaling.languages``, a few-shot ``pool``) may name ``<name>``,
meaning all its variants, or one variant (:func:`resolve_names`).

A few-shot dataset's cleaning titles its references with the ``name_field``
(``clean.title_field``: ``"{name}:\\n\\n{text}"``, :func:`genmetrics.data.clean.titled_text`), as the
authors' references, so that they compare like with like with the parsed biographies.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.data.clean import CONTENT_FIELD
from genmetrics.data.fewshot import resolve_template

#: the schema's rule for every name that becomes part of a path (definitions.name)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")


def variant_name(base: str, n: int) -> str:
    """The plan's name of dataset ``base`` with ``n`` examples per prompt: ``<base>-n<n>``."""
    return f"{base}-n{int(n)}"


def _is_few_shot(d: Mapping[str, Any]) -> bool:
    return (d.get("prompts") or {}).get("mode") == "few_shot"


def _labels(d: Mapping[str, Any]) -> set[str]:
    """The fields a dataset's rows keep besides ``id`` and ``text``."""
    return set(d.get("label_fields") or []) | (
        {d["folder_label"]} if d.get("folder_label") else set()
    )


def expand_datasets(
    datasets: Mapping[str, Mapping[str, Any]],
) -> tuple[dict[str, dict[str, Any]], dict[str, tuple[str, ...]], dict[str, dict[str, Any]]]:
    """The config's ``datasets`` (schema defaults filled) as the plan's datasets.

    Returns (plan name → its config mapping, with a few-shot variant's ``prompts.few_shot``
    resolved: one ``n``, ``pool`` a plan name or ``None`` for itself, ``content_field``, the
    template's strings and ``dataset`` (the config's name, for error messages), and
    ``clean.title_field``; config name → the plan names it means; variant → ``{"dataset",
    "n"}``). Errors name the config key."""
    groups: dict[str, tuple[str, ...]] = {}
    for name, d in datasets.items():
        key = f"datasets.{name}.prompts"
        prompts = d.get("prompts") or {}
        fs = prompts.get("few_shot")
        if _is_few_shot(d) != (fs is not None):
            raise GenmetricsError(
                f"{key}.few_shot: required with mode few_shot"
                if fs is None
                else f"{key}.mode: few_shot prompts need mode: few_shot, got {prompts.get('mode')!r}"
            )
        if fs is None:
            groups[name] = (name,)
            continue
        if prompts.get("file"):
            raise GenmetricsError(f"{key}.file: a prompt file and few_shot exclude each other")
        groups[name] = tuple(variant_name(name, n) for n in sorted(fs["n"]))
    plan_names: dict[str, str] = {}  # plan name -> the config key that makes it
    for name, names in groups.items():
        for v in names:
            if not _NAME.match(v) or len(v) > 100:
                raise GenmetricsError(
                    f"datasets.{name}.prompts.few_shot.n: the variant name {v!r} is not a valid "
                    "name (at most 100 characters); shorten the dataset's name"
                )
            if v in plan_names or (v != name and v in datasets):
                raise GenmetricsError(
                    f"datasets.{name}.prompts.few_shot.n: the variant {v!r} is also "
                    f"datasets.{plan_names.get(v, v)}; rename one"
                )
            plan_names[v] = name
    for v in plan_names:
        groups.setdefault(v, (v,))  # a variant is named by itself too
    out: dict[str, dict[str, Any]] = {}
    variants: dict[str, dict[str, Any]] = {}
    for name, d in datasets.items():
        if not _is_few_shot(d):
            out[name] = dict(d)
            continue
        fs = _few_shot(name, d, datasets, groups, plan_names)
        for n in sorted(d["prompts"]["few_shot"]["n"]):
            v = variant_name(name, n)
            out[v] = {
                **d,
                "clean": {**(d.get("clean") or {}), "title_field": fs["name_field"]},
                "prompts": {**d["prompts"], "few_shot": {**fs, "n": int(n)}},
            }
            variants[v] = {"dataset": name, "n": int(n)}
    return out, groups, variants


def _few_shot(
    name: str,
    d: Mapping[str, Any],
    datasets: Mapping[str, Mapping[str, Any]],
    groups: Mapping[str, tuple[str, ...]],
    plan_names: Mapping[str, str],
) -> dict[str, Any]:
    """One dataset's ``few_shot`` options resolved (every variant's but ``n``)."""
    key = f"datasets.{name}.prompts.few_shot"
    fs = dict(d["prompts"]["few_shot"])
    fs.pop("n")
    pool = fs.get("pool")
    if pool is not None and pool not in groups:
        raise GenmetricsError(f"{key}.pool: {pool!r} is not in datasets")
    pool_base = plan_names.get(pool, pool) if pool is not None else name
    pool_cfg = datasets[pool_base]
    resolved = None if pool_base == name else groups[pool][0]
    field = fs["name_field"]
    for where, cfg in ((f"datasets.{name}", d), (f"datasets.{pool_base}", pool_cfg)):
        if field not in _labels(cfg):
            raise GenmetricsError(
                f"{key}.name_field: {field!r} is not a field of {where}'s rows (add it to "
                f"{where}.label_fields)"
            )
    titled = _is_few_shot(pool_cfg)
    content = fs.get("content_field") or (CONTENT_FIELD if titled else "text")
    if content not in {"text", *_labels(pool_cfg), *([CONTENT_FIELD] if titled else [])}:
        raise GenmetricsError(
            f"{key}.content_field: {content!r} is not a field of datasets.{pool_base}'s rows "
            f"(add it to datasets.{pool_base}.label_fields)"
        )
    return {
        **fs,
        **resolve_template(fs, key),
        "pool": resolved,
        "content_field": content,
        "dataset": name,
    }


def resolve_names(names: Iterable[str], groups: Mapping[str, tuple[str, ...]], key: str) -> tuple:
    """The plan's dataset names that config names mean (a swept dataset: all its variants),
    in order, each once; an unknown name is an error naming ``key``."""
    out: dict[str, None] = {}
    for ds in names:
        if ds not in groups:
            raise GenmetricsError(f"{key}: {ds!r} is not in datasets")
        out.update(dict.fromkeys(groups[ds]))
    return tuple(out)
