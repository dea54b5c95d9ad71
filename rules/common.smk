# Helpers shared by all rule files. Names from the config, target lists and input functions.
# Nothing here runs a job.
import os
import re
from pathlib import Path

from genmetrics import GenmetricsError
from genmetrics.config import check_config, expand_paths
from genmetrics.metrics import get as get_metric

os.environ.setdefault("GENMETRICS_REPO", str(Path(workflow.basedir).resolve()))
expand_paths(config)
try:
    check_config(config)
except GenmetricsError as e:
    raise WorkflowError(f"invalid config: {e}") from None

DATASETS = list(config["datasets"])
MODELS = list(config["models"])
GEN_MODELS = [m for m in MODELS if "checkpoint" in config["models"][m]]
TEXT_MODELS = [m for m in MODELS if "texts" in config["models"][m]]
CHECKPOINTS = list(config["checkpoints"])
FEATURIZERS = list(config.get("featurizers", {}))
EVALUATORS = list(config.get("evaluators", {}))
METRICS = list(config["metrics"])
MODEL_CACHE = config["model_cache"].rstrip("/")
FEATURE_CACHE = config["feature_cache"].rstrip("/")
GEN = config["generation"]
RESOURCES = Path(workflow.basedir) / "resources"
# One download cache for every job (wheels, tarballs, offline NLTK/GPT-2/MiniLM assets).
os.environ.setdefault("GENMETRICS_CACHE", str(Path(config["cache"]).resolve()))


def _names(names):
    return "|".join(re.escape(n) for n in names) if names else "(?!)"


def canonical(obj):
    """Dicts with sorted keys (recursively): params compare equal when only the key order of
    the config changed, so reordering config.yaml triggers no rerun."""
    if isinstance(obj, dict):
        return {k: canonical(obj[k]) for k in sorted(obj)}
    if isinstance(obj, list):
        return [canonical(v) for v in obj]
    return obj


def source_pattern():
    return rf"references|({_names(MODELS)})/seed\d+"


def model_seeds(model):
    return config["models"][model].get("seeds", GEN["seeds"])


def model_datasets(model):
    return config["models"][model].get("datasets", DATASETS)


def model_sources(dataset, models=None):
    """``{model}/seed{seed}`` of every model evaluated on ``dataset``."""
    return [
        f"{m}/seed{s}"
        for m in (MODELS if models is None else models)
        if dataset in model_datasets(m)
        for s in model_seeds(m)
    ]


def generation_stats():
    return [
        f"results/generations/{ds}/{src}.stats.json"
        for ds in DATASETS
        for src in model_sources(ds, GEN_MODELS)
    ]


def imported_texts_spec(wildcards):
    spec = dict(config["models"][wildcards.model]["texts"])
    spec["clean"] = {**spec.get("clean", {}), "seed": int(wildcards.seed)}
    return canonical(spec)


def manifest(checkpoint):
    return f"{MODEL_CACHE}/{checkpoint}/model.json"


def texts_path(dataset, source):
    if source == "references":
        return f"results/data/{dataset}/references.jsonl"
    return f"results/generations/{dataset}/{source}.jsonl"


def source_texts(wildcards):
    return texts_path(wildcards.dataset, wildcards.source)


def metric_of(entry_name):
    entry = config["metrics"][entry_name]
    return get_metric(entry.get("metric", entry_name))


def length_controlled(entry_name):
    return config["metrics"][entry_name].get("length_control", "none") != "none"


def feature_path(entry_name, dataset, source):
    """The file a metric reads for one source: features or texts, per the metric's input."""
    entry = config["metrics"][entry_name]
    kind = metric_of(entry_name).input
    if length_controlled(entry_name):
        return texts_path(dataset, source)  # cut first, then tagged/scored
    if kind == "embeddings":
        return f"results/features/embed/{entry['featurizer']}/{dataset}/{source}.npz"
    if kind == "surprisal":
        return f"results/features/surprisal/{entry['evaluator']}/{dataset}/{source}.npz"
    if kind == "pos":
        return f"results/features/pos/{dataset}/{source}.jsonl"
    return texts_path(dataset, source)


def reference_source(entry_name):
    ref = config["metrics"][entry_name].get("reference", "references")
    if isinstance(ref, str):
        return ref
    return f"{ref['model']}/seed{ref.get('seed', 0)}"


def score_inputs(wildcards):
    inputs = {
        "candidate": feature_path(wildcards.metric, wildcards.dataset, wildcards.source)
    }
    if metric_of(wildcards.metric).reference != "none":
        ref = reference_source(wildcards.metric)
        inputs["reference"] = feature_path(wildcards.metric, wildcards.dataset, ref)
    if length_controlled(wildcards.metric):
        inputs["group"] = [
            texts_path(wildcards.dataset, s)
            for s in ["references", *model_sources(wildcards.dataset)]
        ]
    return inputs


def score_params(wildcards):
    entry = config["metrics"][wildcards.metric]
    return canonical(dict(entry.get("params", {})))


def score_targets(entries=None):
    out = []
    for name in METRICS if entries is None else entries:
        entry = config["metrics"][name]
        metric = metric_of(name)
        ref = reference_source(name)
        for ds in entry.get("datasets", DATASETS):
            srcs = [s for s in model_sources(ds) if s != ref]
            if metric.reference == "none" and entry.get("score_references", True):
                srcs = ["references"] + srcs
            out += [f"results/scores/{ds}/{s}/{name}.json" for s in srcs]
    return out


def generation_settings(wildcards):
    """Everything about one model's generation job, and nothing about other models."""
    m = config["models"][wildcards.model]
    ck = config["checkpoints"][m["checkpoint"]]
    return canonical(
        {
            "template": m.get("template", ck.get("template", "base")),
            "tokenizer_family": ck.get("tokenizer_family"),
            "instruction": m.get("instruction"),
            "sampling": m.get("sampling", {}),
            "words": m.get("words", GEN["words"]),
            "batch_size": m.get("batch_size", GEN["batch_size"]),
            "token_margin": GEN["token_margin"],
            "shards": GEN["shards"],
            "mode": config["datasets"][wildcards.dataset]
            .get("prompts", {})
            .get("mode", "prefix"),
            "dtype": ck.get("dtype", "float32"),
            "trust_remote_code": ck.get("trust_remote_code", False),
            "device_map": ck.get("device_map"),
        }
    )


def generation_model(wildcards):
    return manifest(config["models"][wildcards.model]["checkpoint"])


def generation_shards(wildcards):
    return expand(
        "results/generations/{dataset}/{model}/shards/seed{seed}.{shard}.jsonl",
        dataset=wildcards.dataset,
        model=wildcards.model,
        seed=wildcards.seed,
        shard=range(GEN["shards"]),
    )


def generation_shard_stats(wildcards):
    return [p.replace(".jsonl", ".stats.json") for p in generation_shards(wildcards)]


def featurizer_model(wildcards):
    return manifest(config["featurizers"][wildcards.featurizer]["checkpoint"])


def evaluator_model(wildcards):
    return manifest(config["evaluators"][wildcards.evaluator]["checkpoint"])


def checkpoint_spec(wildcards):
    return canonical(dict(config["checkpoints"][wildcards.checkpoint]))


def dataset_spec(wildcards):
    spec = dict(config["datasets"][wildcards.dataset])
    spec.pop("clean", None)
    spec.pop("prompts", None)
    return canonical(spec)


def clean_options(wildcards):
    return canonical(dict(config["datasets"][wildcards.dataset].get("clean", {})))


def prompt_options(wildcards):
    return canonical(dict(config["datasets"][wildcards.dataset].get("prompts", {})))


def prompt_file(wildcards):
    f = config["datasets"][wildcards.dataset].get("prompts", {}).get("file")
    return [f] if f else []


def report_figures():
    figs = [
        "results/figures/metric_correlation.png",
        "results/figures/precision_recall.png",
    ]
    if prd_scores():
        figs.append("results/figures/pr_curves.png")
    return figs + ["results/figures/length_correlation.png"]


def all_targets():
    return ["results/scores.csv", "results/report.html", *analysis_targets()]


def featurizer_settings(wildcards):
    return canonical(dict(config["featurizers"][wildcards.featurizer]))


def featurizer_cache(wildcards):
    return f"{FEATURE_CACHE}/embed/{wildcards.featurizer}"


def evaluator_settings(wildcards):
    return canonical(dict(config["evaluators"][wildcards.evaluator]))


def evaluator_cache(wildcards):
    return f"{FEATURE_CACHE}/surprisal/{wildcards.evaluator}"


def metric_name(wildcards):
    return metric_of(wildcards.metric).name


def score_length_control(wildcards):
    return config["metrics"][wildcards.metric].get("length_control", "none")


def score_reference_name(wildcards):
    if metric_of(wildcards.metric).reference == "none":
        return None
    return reference_source(wildcards.metric)


def local_source(wildcards):
    """A local dataset file is an input, so a missing one stops the DAG before any job runs."""
    src = config["datasets"][wildcards.dataset]["source"]
    return [src["path"]] if src["kind"] == "local" else []


def local_texts_source(wildcards):
    src = config["models"][wildcards.model]["texts"]["source"]
    return [src["path"]] if src["kind"] == "local" else []


# ------------------------------------------------------------------ analyses


def spread_entries():
    return [n for n, e in config["metrics"].items() if e.get("spread")]


def spread_targets():
    return [
        f"results/analysis/spread/{ds}/{m}/{name}.json"
        for name in spread_entries()
        for ds in config["metrics"][name].get("datasets", DATASETS)
        for m in MODELS
        if ds in model_datasets(m)
        and f"{m}/seed{model_seeds(m)[0]}" != reference_source(name)
    ]


def spread_inputs(wildcards):
    ref = reference_source(wildcards.metric)
    return {
        "reference": feature_path(wildcards.metric, wildcards.dataset, ref),
        "candidates": [
            feature_path(
                wildcards.metric, wildcards.dataset, f"{wildcards.model}/seed{s}"
            )
            for s in model_seeds(wildcards.model)
        ],
    }


def spread_settings(wildcards):
    s = config["metrics"][wildcards.metric]["spread"]
    return canonical(s if isinstance(s, dict) else {})


def sweep_config():
    return config.get("analysis", {}).get("sweep")


def sweep_targets():
    sw = sweep_config()
    if not sw:
        return []
    name = sw["metric"]
    return [
        f"results/analysis/sweep/{ds}/{src}/{name}.csv"
        for ds in config["metrics"][name].get("datasets", DATASETS)
        for src in model_sources(ds)
        if src.endswith(f"seed{model_seeds(src.split('/')[0])[0]}")
    ]


def sweep_reference(wildcards):
    return feature_path(
        wildcards.metric, wildcards.dataset, reference_source(wildcards.metric)
    )


def sweep_candidate(wildcards):
    return feature_path(wildcards.metric, wildcards.dataset, wildcards.source)


def sweep_settings(wildcards):
    params = dict(config["metrics"][wildcards.metric].get("params", {}))
    return canonical({**sweep_config(), "params": params})


def prd_scores():
    return score_targets([n for n in METRICS if metric_of(n).name == "prd"])


def analysis_targets():
    out = ["results/analysis/length_correlation.csv"]
    if prd_scores():
        out.append("results/figures/pr_curves.png")
    if spread_entries():
        out.append("results/spread.csv")
    return out
