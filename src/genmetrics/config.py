"""Cross-reference checks of a workflow config, after JSON-schema validation.

The schema catches unknown keys and wrong types; these checks catch names that point nowhere
(a model's checkpoint, a metric's featurizer) and metrics that cannot run as configured.
Every message names the config key.
"""

from __future__ import annotations

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


def expand_paths(config: MutableMapping[str, Any]) -> None:
    """Expand ``$VAR``/``${VAR}`` and ``~`` in path-valued keys, in place.

    The workflow sets ``GENMETRICS_REPO`` (the checkout holding the Snakefile), so a config
    run with ``--directory`` elsewhere can still point at files beside the repository.
    """
    import os

    for key, value in config.items():
        if isinstance(value, MutableMapping):
            expand_paths(value)
        elif key in PATH_KEYS and isinstance(value, str):
            config[key] = os.path.expanduser(os.path.expandvars(value))


def _copy(value: Any) -> Any:
    return yaml.safe_load(yaml.safe_dump(value))


def check_config(config: Mapping[str, Any]) -> None:
    from genmetrics.metrics import get, resolve_params

    ckpts = config.get("checkpoints", {})
    for name, m in config["models"].items():
        for ds in m.get("datasets", []):
            if ds not in config["datasets"]:
                raise GenmetricsError(f"models.{name}.datasets: {ds!r} is not in datasets")
        if "checkpoint" in m and m["checkpoint"] not in ckpts:
            raise GenmetricsError(
                f"models.{name}.checkpoint: {m['checkpoint']!r} is not in checkpoints "
                f"({', '.join(ckpts) or 'none'})"
            )
    for section in ("featurizers", "evaluators"):
        for name, f in config.get(section, {}).items():
            if f["checkpoint"] not in ckpts:
                raise GenmetricsError(
                    f"{section}.{name}.checkpoint: {f['checkpoint']!r} is not in checkpoints"
                )
    for name, entry in config["metrics"].items():
        key = f"metrics.{name}"
        try:
            metric = get(entry.get("metric", name))
            resolve_params(metric, entry.get("params"))
        except GenmetricsError as e:
            raise GenmetricsError(f"{key}: {e}") from None
        if metric.input == "embeddings":
            _need(entry, "featurizer", config.get("featurizers", {}), key)
        if metric.input == "surprisal":
            _need(entry, "evaluator", config.get("evaluators", {}), key)
        ref = entry.get("reference", "references")
        if isinstance(ref, Mapping) and ref["model"] not in config["models"]:
            raise GenmetricsError(f"{key}.reference.model: {ref['model']!r} is not in models")
        for ds in entry.get("datasets", []):
            if ds not in config["datasets"]:
                raise GenmetricsError(f"{key}.datasets: {ds!r} is not in datasets")
        if entry.get("length_control", "none") != "none" and metric.input not in TEXT_KINDS:
            raise GenmetricsError(
                f"{key}.length_control: only for metrics on texts, not {metric.input}"
            )
        if entry.get("spread") and metric.input != "embeddings":
            raise GenmetricsError(f"{key}.spread: only for metrics on embeddings")
    sweep = config.get("analysis", {}).get("sweep")
    if sweep:
        name = sweep["metric"]
        if name not in config["metrics"]:
            raise GenmetricsError(f"analysis.sweep.metric: {name!r} is not in metrics")
        if get(config["metrics"][name].get("metric", name)).name != "precision_recall":
            raise GenmetricsError(
                f"analysis.sweep.metric: {name!r} is not a precision_recall entry"
            )


TEXT_KINDS = ("texts", "paired_texts", "records", "pos")


def _need(entry: Mapping[str, Any], what: str, table: Mapping[str, Any], key: str) -> None:
    name = entry.get(what)
    if not name:
        raise GenmetricsError(f"{key}.{what}: required for this metric")
    if name not in table:
        raise GenmetricsError(f"{key}.{what}: {name!r} is not defined under {what}s")
