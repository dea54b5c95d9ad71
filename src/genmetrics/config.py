"""Cross-reference checks of a workflow config, after JSON-schema validation.

The schema catches unknown keys and wrong types; these checks catch names that point nowhere
(a model's checkpoint, a metric's featurizer) and metrics that cannot run as configured.
Every message names the config key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from genmetrics import GenmetricsError


def check_config(config: Mapping[str, Any]) -> None:
    from genmetrics.metrics import get, resolve_params

    ckpts = config.get("checkpoints", {})
    for name, m in config["models"].items():
        if m["checkpoint"] not in ckpts:
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


def _need(entry: Mapping[str, Any], what: str, table: Mapping[str, Any], key: str) -> None:
    name = entry.get(what)
    if not name:
        raise GenmetricsError(f"{key}.{what}: required for this metric")
    if name not in table:
        raise GenmetricsError(f"{key}.{what}: {name!r} is not defined under {what}s")
