"""A results folder in an MLflow tracking store: one run per (dataset, model, seed).

``genmetrics export mlflow RESULTS_DIR --tracking-uri URI`` calls :func:`export_mlflow`.
Conventions:

* the **experiment** is ``experiment`` (default ``genmetrics/<the results folder's name>``),
  made when missing;
* a **run** per (dataset, model, seed) of ``scores.csv``; the human texts are model
  ``references`` with seed ``none``. Its tag :data:`RUN_TAG` (``dataset/model/seed<seed>``)
  is the run's identity: the next export finds the run by it;
* **metrics**: each headline value of the run's rows of ``scores.csv``
  (:func:`genmetrics.analysis.headline.headline_rows`) as ``<entry>/<value>``, the number of
  ``scores.csv`` (the metric's own scale, e.g. rep-n in %), and its interval over prompts as
  ``<entry>/<value>.lower`` and ``.upper`` where it has one;
* **params**: ``dataset``, ``model``, ``seed``; per entry, as its score record holds them
  (the params it ran with, defaults filled): ``<entry>/metric``, ``<entry>/reference``,
  ``<entry>/length_control``, ``<entry>/featurizer`` or ``<entry>/evaluator`` (the name of
  the model that made its features), ``<entry>/params/<name>``; and the generation settings
  of the model's texts (``generation/<key>``, nested keys joined by ``/``). A value is its
  JSON (a string as is);
* **artifacts**: ``scores/<entry>.json`` (the run's score records: values, intervals,
  warnings, provenance), ``config/<name>`` (the config file given, if any) and
  ``figures/<name>.png`` (every figure of the results folder: they show every model);
* **idempotent**: the tag :data:`CONTENT_TAG` holds the sha256 of all of the above (metrics,
  params, the artifacts' sha256). A second export of the same content logs nothing
  (``unchanged``); other content logs the metrics again at the next step (MLflow shows the
  latest) and the artifacts over the old ones (``updated``); a param whose value changed
  cannot be changed in MLflow, so the run is deleted and made anew under the same tag
  (``replaced``). The number of runs stays one per (dataset, model, seed).

MLflow 3 refuses its file store (``file://...``) unless ``MLFLOW_ALLOW_FILE_STORE`` is set; a
``file:`` URI (or a folder path) given here is that choice, so the variable is set while the
export runs. An error of the store (unreachable, a bad URI) is a one-line
:class:`~genmetrics.GenmetricsError` naming the URI.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pandas as pd

from genmetrics import GenmetricsError
from genmetrics.analysis.aggregate import read_scores
from genmetrics.analysis.headline import headline_rows
from genmetrics.io import read_json
from genmetrics.paths import REFERENCES, RESULTS

#: the tag a run is found by: ``dataset/model/seed<seed>`` (``seednone`` for the references)
RUN_TAG = "genmetrics.run"
#: the tag holding the sha256 of what was exported to the run
CONTENT_TAG = "genmetrics.content"
#: MLflow's limits: params/tags per batch, metrics per batch, a param value's length
_PARAMS_PER_BATCH, _METRICS_PER_BATCH, _PARAM_LENGTH = 100, 1000, 6000
_INSTALL = "pip install 'genmetrics[mlflow]' (or mlflow-skinny)"


def export_mlflow(
    results_dir: str | Path,
    tracking_uri: str,
    experiment: str | None = None,
    config: str | Path | None = None,
) -> dict[str, Any]:
    """Log the results folder ``results_dir`` to the MLflow store at ``tracking_uri`` (module
    conventions); ``config``: a config file to attach to every run. Returns the experiment,
    its id, the number of runs and how many were ``created``, ``updated``, ``replaced`` or
    ``unchanged``, and the metrics logged."""
    try:
        from mlflow.exceptions import MlflowException
        from mlflow.tracking import MlflowClient
    except ImportError:
        raise GenmetricsError(f"export mlflow needs the mlflow package: {_INSTALL}") from None
    root = Path(results_dir)
    runs = collect_runs(root, config)
    name = experiment or f"genmetrics/{root.resolve().name}"
    counts = dict.fromkeys(("created", "updated", "replaced", "unchanged"), 0)
    logged = 0
    with _file_store_allowed(tracking_uri):
        try:
            client = MlflowClient(tracking_uri=tracking_uri)
            found = client.get_experiment_by_name(name)
            eid = found.experiment_id if found else client.create_experiment(name)
            existing = _runs_by_tag(client, eid)
            for key, run in runs.items():
                how, n = _export_run(client, eid, key, run, existing.get(key))
                counts[how] += 1
                logged += n
        except MlflowException as e:  # a store that cannot be reached or read, a bad URI
            first = " ".join(str(e.message).split())[:300]
            raise GenmetricsError(f"--tracking-uri {tracking_uri}: {first}") from None
    return {
        "experiment": name,
        "experiment_id": eid,
        "runs": len(runs),
        **counts,
        "metrics": logged,
    }


@contextlib.contextmanager
def _file_store_allowed(uri: str) -> Iterator[None]:
    """``MLFLOW_ALLOW_FILE_STORE=true`` while the export runs, for a file store only (a
    ``file:`` URI or a plain folder path)."""
    local = urlparse(uri).scheme in ("", "file") or os.path.isabs(uri)
    if not local or "MLFLOW_ALLOW_FILE_STORE" in os.environ:
        yield
        return
    os.environ["MLFLOW_ALLOW_FILE_STORE"] = "true"
    try:
        yield
    finally:
        os.environ.pop("MLFLOW_ALLOW_FILE_STORE", None)


def run_key(dataset: str, model: str, seed: Any) -> str:
    """The run's identity (:data:`RUN_TAG`): ``dataset/model/seed<seed>``."""
    return f"{dataset}/{model}/seed{_seed_text(seed)}"


def _seed_text(seed: Any) -> str:
    return "none" if seed is None or pd.isna(seed) else str(int(seed))


def collect_runs(root: Path, config: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """What each run gets (module conventions), keyed by :func:`run_key`: ``metrics``,
    ``params``, ``artifacts`` (artifact folder → files) and ``content`` (the sha256)."""
    paths = RESULTS.under(str(root))
    scores = Path(paths.scores)
    if not scores.is_file():
        raise GenmetricsError(
            f"{scores}: no scores.csv in {root} (give the results folder a workflow run wrote)"
        )
    try:
        df = read_scores(scores)
    except ValueError as e:
        raise GenmetricsError(str(e)) from None
    if config is not None and not Path(config).is_file():
        raise GenmetricsError(f"--config {config}: no such file")
    figures = sorted(Path(paths.correlation_figure).parent.glob("*.png"))
    shared = {"figures": figures, "config": [Path(config)] if config is not None else []}
    out: dict[str, dict[str, Any]] = {}
    heads = headline_rows(df)
    for (dataset, model, seed), rows in heads.groupby(
        ["dataset", "model", heads["seed"].astype("Float64")], dropna=False, sort=True
    ):
        source = model if model == REFERENCES else f"{model}/seed{_seed_text(seed)}"
        records = {
            e: Path(paths.score.format(dataset=dataset, source=source, entry=e))
            for e in sorted(rows["entry"].unique())
        }
        present = {e: p for e, p in records.items() if p.is_file()}
        params = {"dataset": dataset, "model": model, "seed": _seed_text(seed)}
        for entry, path in present.items():
            params |= _record_params(entry, read_json(path))
        run = {
            "metrics": _metrics(rows),
            "params": params,
            "artifacts": {**shared, "scores": list(present.values())},
        }
        run["content"] = _content(run)
        out[run_key(dataset, model, seed)] = run
    return out


def _metrics(rows: pd.DataFrame) -> dict[str, float]:
    """``<entry>/<value>`` and its interval bounds (``.lower``, ``.upper``) where it has
    one (the file store keeps a metric as a file: ``<value>/lower`` cannot sit beside
    ``<value>``)."""
    out: dict[str, float] = {}
    for r in rows.itertuples(index=False):
        key = f"{r.entry}/{r.name}"
        out[key] = float(r.value)
        for bound in ("lower", "upper"):
            v = getattr(r, bound)
            if v is not None and not pd.isna(v):
                out[f"{key}.{bound}"] = float(v)
    return out


def _record_params(entry: str, rec: dict[str, Any]) -> dict[str, str]:
    """The params of one score record: its metric, reference, length control, the name of
    its featurizer or evaluator, its params, and the generation settings of its texts."""
    out = {
        f"{entry}/metric": rec.get("metric"),
        f"{entry}/reference": rec.get("reference"),
        f"{entry}/length_control": rec.get("length_control"),
    }
    upstream = ((rec.get("provenance") or {}).get("config") or {}).get("upstream") or {}
    for option in ("featurizer", "evaluator"):
        if isinstance(upstream.get(option), dict):
            out[f"{entry}/{option}"] = upstream[option].get("name")
    out |= _flat(f"{entry}/params", rec.get("params") or {})
    generation = upstream.get("candidate_generation")
    if isinstance(generation, dict):
        out |= _flat("generation", generation.get("settings") or {})
    return {k: _param_text(v) for k, v in out.items() if v is not None}


def _flat(prefix: str, d: dict[str, Any]) -> dict[str, Any]:
    """Nested dict keys joined by ``/`` under ``prefix``."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        key = f"{prefix}/{k}"
        out |= _flat(key, v) if isinstance(v, dict) and v else {key: v}
    return out


def _param_text(v: Any) -> str:
    """A param's value: a string as is, anything else its JSON; cut at MLflow's limit."""
    text = v if isinstance(v, str) else json.dumps(v, sort_keys=True, default=str)
    return text[:_PARAM_LENGTH]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _content(run: dict[str, Any]) -> str:
    """The sha256 of a run's metrics, params and artifacts (by folder, name and content)."""
    files = {
        f"{folder}/{p.name}": _sha256(p) for folder, ps in run["artifacts"].items() for p in ps
    }
    blob = {"metrics": run["metrics"], "params": run["params"], "files": files}
    text = json.dumps(blob, sort_keys=True, default=str, allow_nan=True)
    return hashlib.sha256(text.encode()).hexdigest()


def _runs_by_tag(client: Any, eid: str) -> dict[str, Any]:
    """The experiment's active runs with a :data:`RUN_TAG`, by its value."""
    out: dict[str, Any] = {}
    token = None
    while True:
        page = client.search_runs([eid], max_results=1000, page_token=token)
        for r in page:
            key = r.data.tags.get(RUN_TAG)
            if key is not None:
                out.setdefault(key, r)
        token = page.token
        if not token:
            return out


def _export_run(client: Any, eid: str, key: str, run: dict[str, Any], old: Any) -> tuple[str, int]:
    """Create, update, replace or leave one run; returns how, and the metrics logged."""
    params = run["params"]
    if old is not None and old.data.tags.get(CONTENT_TAG) == run["content"]:
        return "unchanged", 0
    how, step = "created", 0
    if old is not None:
        changed = [k for k, v in old.data.params.items() if k in params and params[k] != v]
        if changed:  # MLflow never changes a logged param: the run is made anew
            client.delete_run(old.info.run_id)
            how = "replaced"
        else:
            how = "updated"
            step = int(old.data.tags.get("genmetrics.exports", "1"))
    if how in ("created", "replaced"):
        name = key.replace("/", " ")
        run_id = client.create_run(eid, tags={RUN_TAG: key}, run_name=name).info.run_id
        new_params = params
    else:
        run_id = old.info.run_id
        new_params = {k: v for k, v in params.items() if k not in old.data.params}
        client.update_run(run_id, status="RUNNING")
    logged = _log(client, run_id, run["metrics"], new_params, step)
    for folder, files in run["artifacts"].items():
        for p in files:
            client.log_artifact(run_id, str(p), folder)
    tags = {CONTENT_TAG: run["content"], "genmetrics.exports": str(step + 1)}
    client.log_batch(run_id, tags=_tags(tags))
    client.set_terminated(run_id)
    return how, logged


def _tags(tags: dict[str, str]) -> list:
    from mlflow.entities import RunTag

    return [RunTag(k, v) for k, v in tags.items()]


def _log(
    client: Any, run_id: str, metrics: dict[str, float], params: dict[str, str], step: int
) -> int:
    """Params and metrics in batches within MLflow's limits; metrics at ``step``, now;
    returns the number of metrics logged."""
    from mlflow.entities import Metric, Param

    now = int(time.time() * 1000)
    ps = [Param(k, v) for k, v in sorted(params.items())]
    ms = [
        Metric(k, v, now, step) for k, v in sorted(metrics.items()) if not math.isnan(v)
    ]  # a value MLflow cannot chart (nan) stays in the record artifact
    for chunk in _chunks(ps, _PARAMS_PER_BATCH):
        client.log_batch(run_id, params=chunk)
    for chunk in _chunks(ms, _METRICS_PER_BATCH):
        client.log_batch(run_id, metrics=chunk)
    return len(ms)


def _chunks(items: Sequence[Any], size: int) -> Iterator[Sequence[Any]]:
    for s in range(0, len(items), size):
        yield items[s : s + size]
