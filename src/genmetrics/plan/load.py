"""Reading and checking a config: :func:`load_plan` turns a config mapping into a
:class:`~genmetrics.plan.core.Plan`.

1. validation against the JSON schema, whose ``default:`` values fill what the config leaves
   out (the schema is the one source of config defaults);
2. ``$VAR``/``~`` expansion in path keys (``genmetrics.config.expand_paths``);
3. cross-checks of names: a model's checkpoint, an entry's featurizer, a reference model's seed;
   a few-shot dataset becomes one dataset per ``n`` (:mod:`~genmetrics.plan.variants`), and
   every key that names datasets may name it (all its variants);
4. every metric entry's parameter *values*, completed with the metric's defaults and checked
   by the metric itself (``Metric.check_params``), so a bad value stops ``snakemake -n`` with
   its key path, e.g. ``metrics.pr_k50.params.k: must be an integer >= 1, got 'four'``.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.agreement.settings import agreement_plan
from genmetrics.data.mirror import (
    check_mirror_paths,
    data_mirror,
    mirror_in_paths,
    mirror_root,
    study_files,
    study_source,
)
from genmetrics.data.prompts import load_tokens_per_word, tokens_per_word
from genmetrics.data.words import check_language
from genmetrics.generation.transformers_backend import GenerationSettings
from genmetrics.metrics.kinds import KINDS, TEXT_KINDS
from genmetrics.metrics.registry import all_metrics, get
from genmetrics.models.presets import resolve as resolve_preset
from genmetrics.models.tokens_per_word import with_user_table
from genmetrics.omniinput.settings import omni_plan
from genmetrics.paths import PROMPTS, REFERENCES, RESULTS
from genmetrics.plan.core import Plan
from genmetrics.plan.diversity import diversity_settings
from genmetrics.plan.gpu_resources import job_resources
from genmetrics.plan.inputs import POS_ASSETS
from genmetrics.plan.instruction_sets import check_instruction_sets
from genmetrics.plan.objects import (
    _JOB_KEYS,
    Checkpoint,
    Dataset,
    FeatureModel,
    Model,
    ScoreEntry,
)
from genmetrics.plan.patterns import check_patterns
from genmetrics.plan.robustness import featurizer_groups
from genmetrics.plan.scaling import scaling_settings
from genmetrics.plan.variants import expand_datasets, resolve_names
from genmetrics.scoring.intervals import entry_interval

#: the tokens-per-word table, relative to the checkout (beside workflow/schemas/)
TOKENS_PER_WORD = "resources/tokens_per_word.tsv"


#: sections whose entries an overlay config may remove by setting them to null
REMOVABLE_SECTIONS: tuple[tuple[str, ...], ...] = (
    ("datasets",),
    ("checkpoints",),
    ("models",),
    ("featurizers",),
    ("evaluators",),
    ("metrics",),
    ("omniinput", "classifiers"),
    ("omniinput", "runs"),
    ("omniinput", "comparisons"),
    ("omniinput", "variance"),
    ("agreement", "sets"),
    ("agreement", "metrics"),
)


def drop_removed_entries(cfg: dict[str, Any]) -> dict[str, Any]:
    """``cfg`` without the entries a later config file set to null (``models: {chat: null}``).

    Snakemake merges ``--configfile a.yaml b.yaml`` key by key, so an overlay (a paper profile,
    ``configs/profiles/``) cannot delete a model of the config it extends; a null entry of a
    section of :data:`REMOVABLE_SECTIONS` is that deletion. Changes ``cfg`` in place."""
    for path in REMOVABLE_SECTIONS:
        entries: Any = cfg
        for key in path:
            entries = entries.get(key) if isinstance(entries, dict) else None
        if isinstance(entries, dict):
            for name in [n for n, v in entries.items() if v is None]:
                del entries[name]
    return cfg


def load_plan(
    config: Mapping[str, Any],
    schema_path: str | Path,
    tokens_per_word_table: str | Path | None = None,
) -> Plan:
    """Validate ``config`` (a copy: the argument is not changed) and resolve it into a Plan.

    ``tokens_per_word_table``: the table that turns word budgets into token budgets (default:
    ``resources/tokens_per_word.tsv`` of the checkout holding the schema), plus the rows of
    the config's ``tokens_per_word_table`` (which replace shipped rows of the same name, with a
    note); each model's row is resolved here, so generation jobs depend on the value they use,
    not on a file's path. A model's ``preset`` is resolved here too
    (:func:`genmetrics.models.presets.resolve`).
    Raises :class:`GenmetricsError` naming the config key of the first problem.
    """
    from genmetrics.config import expand_paths, validate_config

    cfg = drop_removed_entries(copy.deepcopy(dict(config)))
    # checkpoint templates as given, before the schema's default (base) fills them: a preset
    # may set a model's template where its checkpoint's config says nothing
    ckpts = cfg.get("checkpoints")
    given_templates = {
        n: c.get("template")
        for n, c in (ckpts.items() if isinstance(ckpts, Mapping) else ())
        if isinstance(c, Mapping)
    }
    omni_only = "omniinput" in cfg and "checkpoints" in cfg  # an OmniInput study
    if "agreement" not in cfg and not omni_only:  # else the anyOf error would not name the key
        missing = [k for k in ("datasets", "checkpoints", "models", "metrics") if k not in cfg]
        if missing:
            raise GenmetricsError(
                f"config: {missing[0]!r} is required (a config without datasets, checkpoints, "
                "models and metrics must have an agreement: section, or checkpoints and an "
                "omniinput: section)"
            )
    validate_config(cfg, schema_path)
    mirror_in_paths(cfg, cfg.get("data_mirror"))
    check_mirror_paths(cfg, data_mirror(cfg.get("data_mirror")))
    notes = expand_paths(cfg)
    env_cache = os.environ.get("GENMETRICS_CACHE")
    if env_cache and Path(env_cache).resolve() != Path(cfg["cache"]).resolve():
        notes.append(
            f"GENMETRICS_CACHE={env_cache} in the environment is not used: jobs download into "
            f"cache: {cfg['cache']} (the config)"
        )
    mirror = data_mirror(cfg.get("data_mirror"))
    for name, d in (cfg.get("datasets") or {}).items():
        if isinstance(d, dict) and isinstance(d.get("source"), dict):
            d["source"] = study_source(d["source"], f"datasets.{name}.source", mirror, notes)
    for m in (cfg.get("models") or {}).values():
        texts = m.get("texts") if isinstance(m, dict) else None
        if isinstance(texts, dict) and (texts.get("source") or {}).get("kind") == "upstream":
            texts["source"] = {**texts["source"], **mirror_root(mirror)}
    study_files(cfg, mirror, notes)  # OmniInput's classifier texts, agreement sets' files
    dataset_cfg, groups, variants = expand_datasets(cfg.get("datasets", {}))
    datasets = {
        name: Dataset(
            name=name,
            spec={k: v for k, v in d.items() if k not in ("clean", "prompts", "language")},
            clean=dict(d.get("clean", {})),
            prompts=dict(d["prompts"]),
            language=check_language(
                d["language"], f"datasets.{variants.get(name, {}).get('dataset', name)}.language"
            ),
        )
        for name, d in dataset_cfg.items()
    }
    model_cache = cfg["model_cache"].rstrip("/")
    checkpoints = {name: _checkpoint(name, c) for name, c in cfg.get("checkpoints", {}).items()}
    cluster = dict(cfg["resources"])
    table_path = tokens_per_word_table or Path(schema_path).resolve().parents[2] / TOKENS_PER_WORD
    tokens_table = load_tokens_per_word(table_path) if cfg.get("models") else {}
    if cfg.get("tokens_per_word_table") and cfg.get("models"):
        tokens_table, replaced = with_user_table(tokens_table, cfg["tokens_per_word_table"])
        notes += replaced
    models = {
        name: _model(
            name, m, cfg, datasets, groups, checkpoints, cluster, tokens_table, given_templates
        )
        for name, m in cfg.get("models", {}).items()
    }
    for name, m in models.items():
        if m.texts and (m.texts.get("source") or {}).get("kind") == "upstream":
            for ds in m.datasets:
                key = f"models.{name}.texts.source (dataset {ds})"
                study_source(m.texts_for(ds)["source"], key, mirror, notes)
    feature_cache = cfg["feature_cache"].rstrip("/")
    featurizers = {
        name: _feature_model(name, f, "featurizers", "embed", feature_cache, checkpoints)
        for name, f in cfg.get("featurizers", {}).items()
    }
    evaluators = {
        name: _feature_model(name, f, "evaluators", "surprisal", feature_cache, checkpoints)
        for name, f in cfg.get("evaluators", {}).items()
    }
    tables = {"featurizer": featurizers, "evaluator": evaluators}
    entries = {
        name: _entry(name, e, datasets, groups, models, tables)
        for name, e in cfg.get("metrics", {}).items()
    }
    sweep = cfg["analysis"].get("sweep")
    if sweep:
        name = sweep["metric"]
        if name not in entries:
            raise GenmetricsError(f"analysis.sweep.metric: {name!r} is not in metrics")
        if not get(entries[name].metric).sweepable:
            raise GenmetricsError(
                f"analysis.sweep.metric: {name!r} runs {entries[name].metric}, which cannot be "
                "swept (sweepable metrics: "
                + ", ".join(n for n, m in all_metrics().items() if m.sweepable)
                + ")"
            )
    for item in cfg["report"]["heatmap_values"] or []:
        entry = item.split("/", 1)[0]  # the value is checked against the scores
        if entry not in entries:
            raise GenmetricsError(f"report.heatmap_values: {item!r}: {entry!r} is not in metrics")
    results = RESULTS.under(cfg["results_dir"])
    made: list[Plan] = []  # the plan, once made: its manifest() keys a checkpoint by content
    plan = Plan(
        cache=cfg["cache"].rstrip("/"),
        model_cache=model_cache,
        feature_cache=feature_cache,
        datasets=datasets,
        checkpoints=checkpoints,
        models=models,
        featurizers=featurizers,
        evaluators=evaluators,
        entries=entries,
        sweep=dict(sweep) if sweep else None,
        report=dict(cfg["report"]),
        scaling=scaling_settings(cfg["analysis"].get("scaling"), entries, models, groups),
        diversity=diversity_settings(cfg["analysis"].get("diversity"), entries, groups),
        omniinput=omni_plan(
            cfg.get("omniinput"), checkpoints, lambda c: made[0].manifest(c), results
        ),
        agreement=agreement_plan(cfg.get("agreement"), cfg["cache"].rstrip("/"), results),
        cluster=cluster,
        notes=tuple(notes),
        variants=variants,
        patterns=check_patterns(cfg["analysis"].get("patterns"), list(datasets), groups),
        robustness=featurizer_groups(cfg["analysis"]["featurizer_robustness"], entries),
        instruction_sets=check_instruction_sets(
            cfg["analysis"].get("instruction_sets"), list(datasets), models, entries
        ),
        results=results,
    )
    made.append(plan)
    # a GPU kind that resources.gpu_kinds lacks stops the dry run here, naming its key
    for rule, table in (("embed", featurizers), ("surprisal", evaluators)):
        for name in table:
            plan.job_resources(rule, name)
    return plan


def _checkpoint(name: str, c: Mapping[str, Any]) -> Checkpoint:
    source = c.get("source") or {}
    if source.get("kind") == "local":
        try:
            why = None if Path(source.get("path", "")).exists() else "does not exist"
        except OSError as e:  # a name too long for the file system, ...
            why = f"cannot be looked up ({e.strerror})"
        if why:
            raise GenmetricsError(
                f"checkpoints.{name}.source.path: {source.get('path')} {why} (a local "
                "checkpoint must be there before the run: its content decides every job that "
                "loads it)"
            )
    spec = {k: v for k, v in c.items() if k not in _JOB_KEYS}
    # fetch_model converts a GGUF once, to float32 unless bfloat16 is asked; "auto" is the
    # precision of generation, chosen per GPU at load time
    if spec.get("dtype") == "auto":
        spec["dtype"] = "float32"
    return Checkpoint(
        name,
        spec,
        params_b=c.get("params_b"),
        resources=dict(c["resources"]) if c.get("resources") else None,
        dtype=c["dtype"],
    )


def _model(
    name: str,
    m: Mapping[str, Any],
    cfg: Mapping[str, Any],
    datasets: Mapping[str, Dataset],
    groups: Mapping[str, tuple[str, ...]],
    checkpoints: Mapping[str, Checkpoint],
    cluster: Mapping[str, Any],
    tokens_table: Mapping[str, float],
    given_templates: Mapping[str, str | None],
) -> Model:
    key = f"models.{name}"
    gen = cfg["generation"]
    common = dict(
        name=name,
        datasets=resolve_names(m.get("datasets", datasets), groups, f"{key}.datasets"),
        seeds=tuple(m.get("seeds", gen["seeds"])),
        resources=dict(m["resources"]) if m.get("resources") else None,
    )
    if "texts" in m:
        for k in ("resources", "preset", "backend"):
            if m.get(k):
                raise GenmetricsError(f"{key}.{k}: imported texts run no generation job")
        if m["texts"].get("match_references") and m["texts"].get("exclude_references"):
            raise GenmetricsError(
                f"{key}.texts: match_references and exclude_references exclude each other"
            )
        return Model(texts=dict(m["texts"]), **common)
    ckpts = cfg["checkpoints"]
    if m["checkpoint"] not in ckpts:
        raise GenmetricsError(
            f"{key}.checkpoint: {m['checkpoint']!r} is not in checkpoints "
            f"({', '.join(ckpts) or 'none'})"
        )
    ck = ckpts[m["checkpoint"]]
    checkpoint = checkpoints[m["checkpoint"]]
    res = job_resources(  # the same call as Plan.job_resources("generate", name)
        "generate",
        cluster,
        params_b=checkpoint.params_b,
        dtype=checkpoint.dtype,
        overrides=[checkpoint.resources, m.get("resources")],
        where=f"{key}.resources",
    )
    ck_key = f"checkpoints.{m['checkpoint']}"
    family = ck.get("tokenizer_family")
    family_key = f"{ck_key}.tokenizer_family"
    decoding = {"template": m.get("template", ck["template"]), "sampling": m.get("sampling", {})}
    if m.get("preset"):  # the preset's template, family and sampling; explicit keys win
        decoding = resolve_preset(
            m["preset"],
            m,
            ck,
            model_key=key,
            checkpoint_key=ck_key,
            checkpoint_template=given_templates.get(m["checkpoint"]),
        )
        if family is None:
            family, family_key = decoding["tokenizer_family"], f"{key}.preset"
    tpw = {}  # per dataset: tokens per word of its language
    for ds in common["datasets"]:
        try:
            tpw[ds] = tokens_per_word(tokens_table, family, datasets[ds].language)
        except GenmetricsError as e:
            raise GenmetricsError(f"{family_key}: {e}") from None
    settings = {
        "template": decoding["template"],
        "tokenizer_family": family,
        "instruction": m.get("instruction"),
        "sampling": dict(decoding["sampling"]),
        "words": m.get("words", gen["words"]),
        "batch_size": m.get("batch_size", gen["batch_size"]),
        "samples_per_prompt": m.get("samples_per_prompt", gen["samples_per_prompt"]),
        "token_margin": gen["token_margin"],
        "shards": gen["shards"],
        "dtype": ck["dtype"],
        "trust_remote_code": ck["trust_remote_code"],
        # a model given more than one GPU is spread over them (accelerate)
        "device_map": ck.get("device_map") or ("auto" if res.gpus > 1 else None),
        "max_memory": dict(ck["max_memory"]) if ck.get("max_memory") else None,
    }
    engine = _engine(key, m.get("backend", "transformers"), settings, res.gpus)
    if settings["max_memory"] and not settings["device_map"]:
        raise GenmetricsError(
            f"checkpoints.{m['checkpoint']}.max_memory: needs device_map (or more than one GPU)"
        )
    generation = {
        ds: GenerationSettings(
            **settings,
            tokens_per_word=tpw[ds],
            mode=datasets[ds].prompts["mode"],
            language=datasets[ds].language,
        )
        for ds in common["datasets"]
    }
    return Model(checkpoint=m["checkpoint"], generation=generation, engine=engine, **common)


def _engine(key: str, backend: str, settings: dict[str, Any], gpus: int) -> dict[str, Any]:
    """A model's backend keys (``{}`` for transformers). vLLM: tensor-parallel over the job's
    GPUs (at least 1); accelerate's placement (``device_map``, ``max_memory``) is dropped from
    ``settings``; ``typical_p`` other than 1 is an error (vLLM has no typical sampling)."""
    if backend == "transformers":
        return {}
    if backend != "vllm":  # the schema's enum says so first
        raise GenmetricsError(f"{key}.backend: must be transformers or vllm, got {backend!r}")
    typical = settings["sampling"].get("typical_p")
    if typical is not None and float(typical) != 1.0:
        raise GenmetricsError(
            f"{key}.sampling.typical_p: the vllm backend has no typical-p sampling "
            "(backend: transformers has)"
        )
    _check_engine(key)
    settings["device_map"] = settings["max_memory"] = None
    return {"backend": "vllm", "tensor_parallel_size": max(1, int(gpus))}


def _check_engine(key: str) -> None:
    """``backend: vllm`` needs its engine importable (``$GENMETRICS_VLLM_MODULE`` or ``vllm``,
    found without importing it) before any job runs, so a dry run fails naming the key."""
    import importlib.util

    from genmetrics.generation.vllm_backend import ENGINE_ENV

    name = os.environ.get(ENGINE_ENV) or "vllm"
    try:
        found = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a parent package missing, or an empty name
        found = False
    if not found:
        raise GenmetricsError(
            f"{key}.backend: vllm, but {name!r} is not importable here (pip install vllm, "
            f"on a machine with CUDA GPUs; ${ENGINE_ENV} names another engine module)"
        )


def _feature_model(
    name: str,
    f: Mapping[str, Any],
    section: str,
    kind: str,
    feature_cache: str,
    checkpoints: Mapping[str, Checkpoint],
) -> FeatureModel:
    if f["checkpoint"] not in checkpoints:
        raise GenmetricsError(
            f"{section}.{name}.checkpoint: {f['checkpoint']!r} is not in checkpoints"
        )
    settings = {k: v for k, v in f.items() if k != "checkpoint"}
    settings["cache_dir"] = f"{feature_cache}/{kind}/{name}"
    settings["cache_key"] = f"{name}:{f['checkpoint']}"
    return FeatureModel(name, f["checkpoint"], settings)


def _entry(
    name: str,
    e: Mapping[str, Any],
    datasets: Mapping[str, Dataset],
    groups: Mapping[str, tuple[str, ...]],
    models: Mapping[str, Model],
    tables: Mapping[str, Mapping[str, FeatureModel]],
) -> ScoreEntry:
    key = f"metrics.{name}"
    try:
        metric = get(e.get("metric", name))
    except GenmetricsError as err:
        raise GenmetricsError(f"{key}.metric: {err}") from None
    if metric.input == "density":
        raise GenmetricsError(
            f"{key}: {metric.name} scores a model's input space, not texts; configure it under "
            "omniinput.runs (docs/metrics/omniinput.md)"
        )
    params = metric.check_params(e["params"], where=f"{key}.params")
    input_kind = metric.input_kind(params)
    kind = KINDS[input_kind]
    feature_model = None
    for what, table in tables.items():
        given = e.get(what)
        if what == kind.config_key:
            if not given:
                raise GenmetricsError(f"{key}.{what}: required for this metric ({input_kind})")
            if given not in table:
                raise GenmetricsError(f"{key}.{what}: {given!r} is not defined under {what}s")
            feature_model = given
        elif given:
            raise GenmetricsError(
                f"{key}.{what}: not used by {metric.name}, which reads {input_kind}"
            )
    entry_datasets = resolve_names(e.get("datasets", datasets), groups, f"{key}.datasets")
    reference = _reference_source(key, e, metric.reference, entry_datasets, models)
    if e["length_control"] != "none" and input_kind not in TEXT_KINDS:
        raise GenmetricsError(f"{key}.length_control: only for metrics on texts, not {input_kind}")
    if e["length_control"] != "none" and metric.part != "text":
        raise GenmetricsError(
            f"{key}.length_control: cuts whole texts, but {metric.name} reads each "
            f"generation's {metric.part}"
        )
    if e["length_control"] == "shortest_models" and reference == REFERENCES:
        raise GenmetricsError(
            f"{key}.length_control: shortest_models leaves the human references out of the "
            "cut, so it cannot score against them; use shortest"
        )
    spread = e.get("spread")
    if spread is not None and (input_kind != "embeddings" or reference is None):
        raise GenmetricsError(f"{key}.spread: only for metrics on embeddings with a reference")
    if spread is not None:
        spread = _spread(f"{key}.spread", spread, reference, entry_datasets, datasets)
    return ScoreEntry(
        name=name,
        metric=metric.name,
        params=params,
        input=input_kind,
        part=metric.part,
        paired=metric.paired,
        reference=reference,
        datasets=entry_datasets,
        feature_model=feature_model,
        length_control=e["length_control"],
        # human references have no prompt/continuation split: only whole texts are scored
        # (and with shortest_models the references are not among the texts compared)
        score_references=e["score_references"]
        and metric.part == "text"
        and e["length_control"] != "shortest_models",
        spread=spread,
        assets=_assets(metric, params, e["length_control"]),
        loads_model=_loads_model(key, metric, params),
        min_items=metric.min_items(params),
        interval=entry_interval(key, e.get("interval"), metric, params),
    )


def _spread(
    key: str,
    spread: Mapping[str, Any],
    reference: str,
    entry_datasets: Sequence[str],
    datasets: Mapping[str, Dataset],
) -> dict[str, Any]:
    """``metrics.<entry>.spread`` with its defaults: ``fraction`` 0.8 for ``subsample``; a
    ``redraw`` has none (each draw has the dataset's ``clean.sample`` texts), scores against
    the human references and needs every dataset's ``clean.sample``."""
    out = dict(spread)
    if out["references"] == "subsample":
        out.setdefault("fraction", 0.8)
        return out
    if "fraction" in out:
        raise GenmetricsError(
            f"{key}.fraction: a redraw draws the dataset's clean.sample texts each time; leave "
            "fraction out (it is for references: subsample)"
        )
    if reference != REFERENCES:
        raise GenmetricsError(
            f"{key}.references: redraw draws the human references again, but the entry scores "
            f"against {reference!r}; use subsample"
        )
    for ds in entry_datasets:
        if datasets[ds].clean.get("sample") is None:
            raise GenmetricsError(
                f"{key}.references: redraw draws datasets.{ds}.clean.sample texts again from the "
                f"cleaned pool, but datasets.{ds}.clean.sample is not set (every cleaned text "
                "is a reference, so every draw would be the same set); set it, or use subsample"
            )
    return out


def _loads_model(key: str, metric: Any, params: Mapping[str, Any]) -> bool:
    """Whether the entry's job runs an encoder; its model must then be local (or the offline
    asset), since a hub id would be downloaded inside the job."""
    if not metric.loads_model(params):
        return False
    model = params.get("model")
    if model is not None and not Path(model).is_dir():
        raise GenmetricsError(
            f"{key}.params.model: {model!r} is not a local model folder; in the workflow a "
            "score job never downloads (leave it null for the offline MiniLM)"
        )
    return True


def _assets(metric: Any, params: Mapping[str, Any], length_control: str) -> tuple[str, ...]:
    """Offline assets a score job needs; a length-controlled metric on POS tags tags the cut
    texts itself, so it needs the tagger's data too."""
    assets = list(metric.assets(params))
    if length_control != "none" and metric.input_kind(params) == "pos":
        assets += [a for a in POS_ASSETS if a not in assets]
    return tuple(assets)


def _reference_source(
    key: str,
    e: Mapping[str, Any],
    mode: str,
    entry_datasets: tuple[str, ...],
    models: Mapping[str, Model],
) -> str | None:
    ref = e["reference"]
    if mode in ("none", PROMPTS):
        if ref != REFERENCES:
            raise GenmetricsError(
                f"{key}.reference: this metric takes "
                + ("no reference" if mode == "none" else "the dataset's prompts as reference")
            )
        return None if mode == "none" else PROMPTS
    if isinstance(ref, str):
        return ref
    model = models.get(ref["model"])
    if model is None:
        raise GenmetricsError(f"{key}.reference.model: {ref['model']!r} is not in models")
    if ref["seed"] not in model.seeds:
        raise GenmetricsError(
            f"{key}.reference.seed: {ref['seed']} is not a seed of model {model.name!r} "
            f"({', '.join(map(str, model.seeds))})"
        )
    missing = [ds for ds in entry_datasets if ds not in model.datasets]
    if missing:
        raise GenmetricsError(
            f"{key}.reference.model: {model.name!r} is not evaluated on dataset {missing[0]!r}"
        )
    return f"{model.name}/seed{ref['seed']}"
