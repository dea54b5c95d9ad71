"""A workflow config's first two steps: JSON-schema validation (with the schema's defaults)
and path expansion. Names, metrics and their params are checked by
:func:`genmetrics.plan.load_plan`, which calls both. Every message names the config key.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, MutableMapping
from pathlib import Path
from typing import Any

import yaml

from genmetrics import GenmetricsError


def validate_config(config: MutableMapping[str, Any], schema_path: str | Path) -> None:
    """Validate ``config`` against the JSON schema (draft 2020-12), filling ``default:`` values.

    The error names the config key path, e.g. ``datasets.bbc: unknown key 'clen'``.
    """
    import jsonschema

    schema = yaml.safe_load(Path(schema_path).read_text())
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


PATH_KEYS = ("path", "cache", "model_cache", "feature_cache", "file")
_UNSET = re.compile(r"\$(\w+|\{\w+\})")


def expand_paths(
    config: MutableMapping[str, Any], where: str = "", expanded: list[str] | None = None
) -> list[str]:
    """Expand ``$VAR``/``${VAR}`` and ``~`` in path-valued keys, in place; return one line
    per value the environment changed (``key: '$X/y' -> '/abs/y'``), for the run log.

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
            config[key] = expanded_value
    return expanded


def _copy(value: Any) -> Any:
    return yaml.safe_load(yaml.safe_dump(value))
