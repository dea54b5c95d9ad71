"""A workflow config's first two steps: JSON-schema validation (with the schema's defaults)
and path expansion. Names, metrics and their params are checked by
:func:`genmetrics.plan.load_plan`, which calls both. Every message names the config key.
"""

from __future__ import annotations

import math
import os
import re
import unicodedata
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

import yaml

from genmetrics import GenmetricsError
from genmetrics.paths import inside_workdir


def validate_config(config: MutableMapping[str, Any], schema_path: str | Path) -> None:
    """Validate ``config`` against the JSON schema (draft 2020-12), filling ``default:`` values.

    The error names the config key path, e.g. ``datasets.bbc: unknown key 'clen'``.
    """
    import jsonschema

    _check_keys(config)
    # libyaml's parser when PyYAML has it (the same SafeConstructor, the same objects; 6x faster
    # on the schema's 700 lines, read on every snakemake run)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    schema = yaml.load(Path(schema_path).read_text(), Loader=loader)
    base = jsonschema.Draft202012Validator

    def set_defaults(validator, properties, instance, schema):
        if isinstance(instance, MutableMapping):
            for prop, sub in properties.items():
                if isinstance(sub, Mapping) and "default" in sub and prop not in instance:
                    instance[prop] = _copy(sub["default"])
        yield from base.VALIDATORS["properties"](validator, properties, instance, schema)

    validator = jsonschema.validators.extend(base, {"properties": set_defaults})(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: (len(e.path), list(e.path)))
    if not errors:
        return
    err = jsonschema.exceptions.best_match(errors)
    where = ".".join(str(p) for p in err.absolute_path) or "(top level)"
    if err.validator == "additionalProperties":
        allowed = sorted(err.schema.get("properties", {}))
        extra = sorted(set(err.instance) - set(allowed))
        msg = f"unknown key(s) {', '.join(map(repr, extra))}"
        if allowed:
            msg += f"; allowed: {', '.join(allowed)}"
    else:
        msg = err.message
    raise GenmetricsError(f"{where}: {msg}")


def _check_keys(config: Any, where: str = "") -> None:
    """Every key of the config's mappings: no control characters (a name with a newline or
    a NUL would break every message, file name and job that carries it). Every number:
    finite (YAML's ``.nan`` and ``.inf`` pass a schema's ``minimum``, then break the
    arithmetic of GPU sizes, budgets and metrics)."""
    if isinstance(config, float) and not math.isfinite(config):
        raise GenmetricsError(f"{where or '(top level)'}: {config} is not a finite number")
    if isinstance(config, Mapping):
        for key, value in config.items():
            if isinstance(key, str) and any(unicodedata.category(c)[0] == "C" for c in key):
                raise GenmetricsError(
                    f"{where or '(top level)'}: key {key!r} has a control character (a "
                    "newline, a tab, a NUL...); names are plain text"
                )
            _check_keys(value, f"{where}.{key}" if where else str(key))
    elif isinstance(config, list):
        for i, value in enumerate(config):
            _check_keys(value, f"{where}.{i}" if where else str(i))


PATH_KEYS = ("path", "cache", "model_cache", "feature_cache", "file", "tokens_per_word_table")
_UNSET = re.compile(r"\$(\w+|\{\w+\})")


def expand_paths(
    config: MutableMapping[str, Any], where: str = "", expanded: list[str] | None = None
) -> list[str]:
    """Expand ``$VAR``/``${VAR}`` and ``~`` in path-valued keys, in place; return one line
    per value the environment changed (``key: '$X/y' -> '/abs/y'``), for the run log.

    An absolute path inside the working folder becomes relative to it, so that moving or
    copying a project folder changes no job's inputs or params (Snakemake compares them as
    written).

    The workflow sets ``GENMETRICS_REPO`` (the checkout holding the Snakefile), so a config
    run with ``--directory`` elsewhere can still point at files beside the repository. A
    variable that is not set is an error naming the key (the path would point nowhere).
    """
    expanded = [] if expanded is None else expanded
    for key, value in config.items():
        here = f"{where}.{key}" if where else str(key)
        if isinstance(value, MutableMapping):
            expand_paths(value, here, expanded)
        elif key in PATH_KEYS and isinstance(value, str):
            expanded_value = os.path.expanduser(os.path.expandvars(value))
            unset = _UNSET.search(expanded_value)
            if unset:
                raise GenmetricsError(
                    f"{here}: environment variable {unset.group(1).strip('{}')} is not set "
                    f"(in {value!r})"
                )
            if expanded_value != value:
                expanded.append(f"{here}: {value!r} -> {expanded_value!r} (from the environment)")
            config[key] = inside_workdir(expanded_value)
    return expanded


def _copy(value: Any) -> Any:
    return yaml.safe_load(yaml.safe_dump(value))


#: integers that YAML 1.1 (PyYAML, Snakemake's reader) reads in another base or with digit
#: separators: ``010`` is 8, ``0x10`` 16, ``0b10`` 2, ``1_000`` 1000, ``1:30`` 90
_SURPRISING_INT = re.compile(r"[-+]?(0[0-9_]+|0[xXoObB][0-9a-fA-F_]+|[0-9][0-9_]*(_|:)[0-9_:]*)")


class _StrictLoader(yaml.SafeLoader):
    """A SafeLoader that refuses duplicate keys and integers YAML 1.1 reads surprisingly
    (keys brought in by a ``<<`` merge may be overridden, as YAML intends)."""


def _strict_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue  # `<<: *anchor`: the anchor's keys, which the mapping's own keys override
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if not isinstance(key, str | int | float | bool | None):
            continue  # a list or mapping as a key: construct_mapping refuses it (unhashable)
        if key in seen:
            raise GenmetricsError(
                f"{key_node.start_mark.name}:{line}: duplicate key {key!r} (first at line "
                f"{seen[key]}); YAML keeps only the last one"
            )
        seen[key] = line
    return loader.construct_mapping(node, deep=deep)


def _strict_int(loader: _StrictLoader, node: yaml.ScalarNode) -> int:
    if _SURPRISING_INT.fullmatch(node.value):
        value = yaml.SafeLoader.construct_yaml_int(loader, node)
        raise GenmetricsError(
            f"{node.start_mark.name}:{node.start_mark.line + 1}: {node.value} is read as {value} "
            "by YAML 1.1; write the number in decimal without leading zeros (or quote it for a "
            "string)"
        )
    return yaml.SafeLoader.construct_yaml_int(loader, node)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _strict_mapping)
_StrictLoader.add_constructor("tag:yaml.org,2002:int", _strict_int)


def check_config_file(path: str | Path) -> None:
    """Read a config file strictly: a duplicate key (two ``models:`` sections, a model named
    twice) or an integer written ``010``/``0x10``/``1_000`` is an error naming the file and
    line, where Snakemake's YAML reader would silently keep the last key or change the base."""
    path = Path(path)
    if path.suffix.lower() not in (".yaml", ".yml"):
        return  # a JSON config: json has no octal, and Snakemake's reader is the standard one
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise GenmetricsError(
            f"{path}: cannot read the config file ({' '.join(str(e).split())})"
        ) from None
    try:
        yaml.load(text, Loader=_named_loader(_StrictLoader, str(path)))
    except yaml.YAMLError as e:
        raise GenmetricsError(_yaml_error(path, e)) from None
    except RecursionError:
        raise GenmetricsError(f"{path}: not valid YAML (nested too deeply)") from None


def _yaml_error(path: Path, e: yaml.YAMLError) -> str:
    """One line for a YAML error: the file, the line of the problem and what it is (PyYAML's
    own message spans several lines, with a quoted excerpt of the file)."""
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    problem = getattr(e, "problem", None) or getattr(e, "context", None)
    where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
    text = " ".join(str(problem or e).split())
    if len(text) > 300:
        text = text[:297] + "..."
    return f"{where}: not valid YAML ({text})"


def _named_loader(base: type, name: str):
    """A loader class whose marks carry ``name`` (yaml.load of a str names it ``<unicode
    string>``)."""

    class Named(base):
        def __init__(self, stream):
            super().__init__(stream)
            self.name = name

    return Named
