"""Every metric on texts from the command line: ``genmetrics score`` featurizes texts on the
fly as the workflow does, and ``genmetrics embed`` writes the workflow's embeddings file.

A metric reads one input kind (:data:`genmetrics.metrics.kinds.KINDS`). On the command line every
metric takes texts (:mod:`genmetrics.scoring.text_inputs`: a JSONL field, a folder of .txt files, a
CSV column), and a metric that reads features also takes their files (``.npz``):

- a **texts** metric reads the texts;
- an **embeddings** (**surprisal**) metric has them featurized by the featurizer (evaluator)
  that ``--featurizer NAME`` (``--evaluator NAME``) names in a workflow config's
  ``featurizers:`` (``evaluators:``) section (``--config``, default ``config.yaml``, read as
  Snakemake reads its configfile). The plan resolves the name exactly as for the workflow
  (:func:`genmetrics.plan.load_plan`); the checkpoint is made loadable as the ``fetch_model``
  rule makes it, once; the features come from the workflow's content-keyed cache
  (``{feature_cache}/embed/{name}``, :mod:`genmetrics.features.cache`) with the embed
  (surprisal) job's own settings, so a text the workflow or an earlier call featurized is
  read, not computed, and a changed text, model or setting is computed;
- a **pos** metric has the texts tagged on load (:func:`genmetrics.features.pos.tag_texts`).

A score record's ``inputs`` says, per role, the file and how it was read and, for features,
the featurizer: its name and config, checkpoint and checkpoint content digest, settings, the
cache key its entries are filed under (the digest of the settings with the model's content
hash: an entry is ``sha256(key + "\\0" + text)``) and how many texts were computed or read
from the cache (``model_loaded`` false: the cache served the whole call).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError
from genmetrics.data.words import DEFAULT_LANGUAGE
from genmetrics.metrics.kinds import FROM_TEXTS, KINDS, Kind
from genmetrics.metrics.registry import Metric, all_metrics, get
from genmetrics.params import did_you_mean
from genmetrics.scoring.stored_surprisal import (
    NLL_FIELD,
    check_same_evaluator,
    holds_stored_surprisal,
    read_stored_surprisal,
)
from genmetrics.scoring.text_inputs import check_row_counts, read_text_rows, text_format

#: the config featurizers and evaluators are read from, as Snakemake's ``configfile``
DEFAULT_CONFIG = "config.yaml"
#: each option naming a model (a kind's ``config_key``) → the config section of its names
SECTIONS = {"featurizer": "featurizers", "evaluator": "evaluators"}
#: the checkout this module belongs to, and the workflow's config schema in it
CHECKOUT = Path(__file__).resolve().parents[3]  # src/genmetrics/scoring/ -> the checkout
SCHEMA = CHECKOUT / "workflow" / "schemas" / "config.schema.yaml"
FILES = "a .jsonl file, a folder of .txt files or a .csv file"
#: what one featurization run counts (:func:`genmetrics.features.cache.run_stats`)
RUN_COUNTS = ("texts", "computed", "from_cache", "model_loaded")

Rows = list[dict[str, Any]]


@dataclass(frozen=True)
class InputOptions:
    """How ``genmetrics score`` reads its inputs: the texts' JSONL field or CSV column
    (``None``: the field the metric reads, ``text``, ``continuation``, or ``prompt`` for a
    prompts reference), the reference's own, the named featurizer or evaluator, the config."""

    field: str | None = None
    reference_field: str | None = None
    featurizer: str | None = None
    evaluator: str | None = None
    config: str = DEFAULT_CONFIG
    progress: bool = False  # progress bars of featurization (tqdm, on stderr)
    quiet: bool = False  # nothing on stderr but errors: no notes, no model-loading bars

    def model(self, option: str) -> str | None:
        return {"featurizer": self.featurizer, "evaluator": self.evaluator}[option]


@dataclass(frozen=True)
class NamedModel:
    """A featurizer or evaluator of a config, resolved as the workflow resolves it: its
    checkpoint's manifest (made when missing) and its embed/surprisal job's settings."""

    option: str  # featurizer | evaluator
    name: str
    config: str
    checkpoint: str
    manifest: str
    settings: dict[str, Any]  # the job's settings, cache_dir and cache_key included

    def describe(self, stats: Mapping[str, Any]) -> dict[str, Any]:
        """What a score's features belong to: this model and the cache run's ``stats``
        (:func:`genmetrics.features.cache.run_stats`; :func:`~genmetrics.features.cache.made_by`)."""
        from genmetrics.features.cache import made_by

        made = made_by(self.name, self.manifest, self.settings, stats)
        return {
            "name": self.name,
            "config": self.config,
            "checkpoint": self.checkpoint,
            **made,
            **{k: stats[k] for k in RUN_COUNTS},
            "truncation": stats.get("truncation"),  # the texts its max_tokens cut
        }


# ------------------------------------------------------------------ featurizers by name


def config_names(config: str | Path, section: str) -> list[str] | None:
    """The names in ``section`` of ``config``, for messages; None if it cannot be read."""
    import yaml

    try:
        cfg = yaml.safe_load(Path(config).read_text(encoding="utf-8"))
        return [str(n) for n in (cfg.get(section) or {})]
    except (OSError, UnicodeDecodeError, yaml.YAMLError, AttributeError, TypeError):
        return None


def load_config_plan(config: str | Path) -> Any:
    """The workflow's plan of ``config`` (:func:`genmetrics.plan.load_plan`), the file read
    strictly first (:func:`genmetrics.config.check_config_file`); errors name the file."""
    import yaml

    from genmetrics.config import check_config_file
    from genmetrics.plan import load_plan

    path = Path(config)
    if not path.is_file():
        raise GenmetricsError(
            f"--config {config}: no such file; featurizers and evaluators are named in a "
            "workflow config (run where its config.yaml is, or pass --config PATH)"
        )
    if not SCHEMA.is_file():
        raise GenmetricsError(
            f"{SCHEMA}: the workflow's config schema is missing; --featurizer and --evaluator "
            "need genmetrics run from its checkout"
        )
    check_config_file(path)
    cfg = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(cfg, dict):
        raise GenmetricsError(f"{path}: not a config (a YAML mapping)")
    os.environ.setdefault("GENMETRICS_REPO", str(CHECKOUT))  # as rules/common.smk sets it
    try:
        return load_plan(cfg, SCHEMA)
    except GenmetricsError as e:
        raise GenmetricsError(f"{path}: {e}") from None


def ready_checkpoint(plan: Any, checkpoint: str, quiet: bool = False) -> str:
    """The checkpoint's manifest (keyed by content: :meth:`Plan.manifest`), made as the
    ``fetch_model`` rule makes it (download, GGUF conversion) when it is missing."""
    from genmetrics.models.checkpoints import prepare_model

    manifest = Path(plan.manifest(checkpoint))
    if not manifest.is_file():
        note(f"preparing checkpoint {checkpoint} (once)", quiet)
        prepare_model(checkpoint, plan.checkpoint_spec(checkpoint), plan.model_cache, plan.cache)
    return str(manifest)


def note(text: str, quiet: bool = False) -> None:
    """``genmetrics: text`` on stderr (what the command is doing), unless ``quiet``."""
    if not quiet:
        print(f"genmetrics: {text}", file=sys.stderr, flush=True)


def quiet_model_loading() -> None:
    """No progress bars from transformers and the hub while a checkpoint loads."""
    from transformers.utils import logging

    logging.disable_progress_bar()


def resolve_model(
    option: str, name: str, config: str | Path = DEFAULT_CONFIG, quiet: bool = False
) -> NamedModel:
    """The featurizer (``option="featurizer"``) or evaluator ``name`` of ``config``, with its
    checkpoint ready and the settings its workflow job runs with."""
    plan = load_config_plan(config)
    table = plan.featurizers if option == "featurizer" else plan.evaluators
    if name not in table:
        known = ", ".join(table) or "none"
        raise GenmetricsError(
            f"--{option} {name}: not in {SECTIONS[option]} of {config}"
            f"{did_you_mean(name, table)} (it names: {known})"
        )
    fm = table[name]
    settings = (
        plan.embed_settings(name) if option == "featurizer" else plan.surprisal_settings(name)
    )
    return NamedModel(
        option,
        name,
        str(config),
        fm.checkpoint,
        ready_checkpoint(plan, fm.checkpoint, quiet),
        settings,
    )


def make_features(
    model: NamedModel, rows: Rows, part: str, source: str, where: str, progress: bool = False
) -> tuple[Any, Rows, dict[str, Any]]:
    """Features of ``part`` of ``rows`` (:func:`genmetrics.metrics.kinds.part_texts`; ``source``
    ``prompts``: each row's prompt), as the embed or surprisal job computes them: (data, the
    kept rows' ids, the cache run's stats). A continuation's surprisal is given its prompt."""
    from genmetrics.metrics.kinds import part_texts

    try:
        kept, texts = part_texts(rows, part, source)
    except GenmetricsError as e:
        raise GenmetricsError(f"{where}: {e}") from None
    contexts = None
    if model.option == "evaluator" and part == "continuation":
        bad = [
            i
            for i, r in enumerate(rows, 1)
            if "id" not in r or not isinstance(r.get("prompt"), str)
        ]
        if bad:
            raise GenmetricsError(
                f"{where}: row {bad[0]}: each continuation is scored given its prompt, so "
                "every row needs an id and a prompt (a .jsonl file of generations)"
            )
        prompts = {str(r["id"]): r["prompt"] for r in rows}
        contexts = [prompts[r["id"]] for r in kept]
    else:
        empty = next((i for i, t in enumerate(texts) if not t.strip()), None)
        if empty is not None:
            raise GenmetricsError(
                f"{where}: text {empty + 1} (id={kept[empty].get('id')!r}) is empty; the "
                f"{model.option} cannot featurize it (leave it out)"
            )
    stats: dict[str, Any] = {}
    settings = {**model.settings, "progress": progress, "stats": stats}
    if model.option == "featurizer":
        from genmetrics.features.embed import embed_texts

        data = embed_texts(texts, model.manifest, **settings)
    else:
        from genmetrics.features.surprisal import surprisal_texts

        data = surprisal_texts(texts, model.manifest, contexts=contexts, **settings)
    return data, kept, stats


# ------------------------------------------------------------------ score inputs


def accepts(metric: Metric) -> str:
    """What ``genmetrics score`` takes for ``metric``'s inputs (its kind, in words)."""
    kind = metric.input
    if kind == "texts":
        return f"{FILES} of texts"
    if kind == "records":
        return "a .jsonl file of records (rows with prompt and continuation)"
    if kind == "pos":
        return "a .jsonl file of tags or of texts, a folder of .txt files or a .csv file"
    if kind == "surprisal":
        return (
            f"a .npz file of surprisal, stored per-token values (a .jsonl file of rows with "
            f"{NLL_FIELD}: *.nll_<evaluator>.jsonl), or texts ({FILES}) with --evaluator NAME"
        )
    if kind in FROM_TEXTS:
        return f"a .npz file of {kind}, or texts ({FILES}) with --{FROM_TEXTS[kind][1]} NAME"
    return f"a {KINDS[kind].suffix} file of {kind} (not texts)"


class InputLoader:
    """``load`` of :func:`genmetrics.scoring.score_files` for the command line: reads each
    input as :func:`accepts` says and keeps what it read in ``inputs`` (per role)."""

    def __init__(self, metric: Metric, options: InputOptions):
        self.metric, self.options = metric, options
        self.inputs: dict[str, dict[str, Any]] = {}
        self._models: dict[tuple[str, str], NamedModel] = {}

    def __call__(self, kind: Kind, path: str | Path, what: str) -> tuple[Any, Rows]:
        data, rows, info = self._load(kind, Path(path), what)
        self.inputs[what] = info
        if what == "reference":
            from genmetrics.scoring.from_files import check_same_features

            check_same_evaluator(self.inputs)
            check_same_features(self.inputs, kind)
        return data, rows

    def _model(self, option: str, name: str) -> NamedModel:
        key = (option, name)
        if key not in self._models:
            self._models[key] = resolve_model(option, name, self.options.config, self.options.quiet)
        return self._models[key]

    def _field(self, what: str, into: str) -> str:
        if what == "reference" and self.options.reference_field:
            return self.options.reference_field
        if into == "prompt":
            return "prompt"
        return self.options.field or into

    def _load(self, kind: Kind, path: Path, what: str) -> tuple[Any, Rows, dict[str, Any]]:
        from genmetrics.scoring.from_files import load_input, npz_made_by

        metric, fmt = self.metric, text_format(path)
        where = f"{path} ({what})"
        if kind.name == "surprisal" and holds_stored_surprisal(path):
            return self._stored(kind, path, what)
        if fmt is None or kind.name in ("records", "density"):
            if path.suffix == kind.suffix and (fmt is None or kind.name == "records"):
                data, rows = load_input(kind, path, what)
                made = npz_made_by(path, kind) if kind.suffix == ".npz" else {}
                return data, rows, {"path": str(path), "format": kind.suffix[1:], **made}
            if not path.exists():
                raise GenmetricsError(f"{path}: file not found")
            raise GenmetricsError(f"{path}: the {what} of {metric.name} must be {accepts(metric)}")
        into = "prompt" if what == "reference" and metric.reference == "prompts" else metric.part
        field = self._field(what, into)
        info: dict[str, Any] = {"path": str(path), "format": fmt}
        info.update({} if fmt == "txt folder" else {"field": field})
        if kind.name in ("texts", "pos") and fmt == "jsonl" and field == into == "text":
            data, rows = load_input(kind, path, what)  # texts, or a pos file of tags
            return data, rows, info
        rows = read_text_rows(path, field, into)
        texts = [r[into] for r in rows]
        if kind.name == "texts":
            return kind.validator(texts, where), rows, info
        if kind.name == "pos":
            from genmetrics.features.pos import tag_texts

            return kind.validator(tag_texts(texts), where), rows, {**info, "tagged": "nltk"}
        option = kind.config_key or ""
        name = self.options.model(option)
        if name is None:
            raise GenmetricsError(self._needs_model(path, what, kind, option))
        model = self._model(option, name)
        source = "prompts" if into == "prompt" else str(path)
        doing = "embedding" if option == "featurizer" else "scoring the surprisal of"
        quiet = self.options.quiet
        note(f"{doing} the {what}'s {len(rows)} texts ({path}) with {option} {name}", quiet)
        if self.options.quiet:
            quiet_model_loading()
        data, kept, stats = make_features(
            model, rows, metric.part, source, where, self.options.progress
        )
        return kind.validator(data, where), kept, {**info, option: model.describe(stats)}

    def _stored(self, kind: Kind, path: Path, what: str) -> tuple[Any, Rows, dict[str, Any]]:
        """A ``*.nll_<evaluator>.jsonl`` file: its stored per-token values, as they are."""
        if self.options.evaluator is not None:
            raise GenmetricsError(
                f"{path}: holds stored per-token values ({NLL_FIELD}), nothing to score with "
                f"--evaluator {self.options.evaluator} (drop --evaluator)"
            )
        if self.metric.part != "text":
            raise GenmetricsError(
                f"{path}: stored per-token values are of whole texts; {self.metric.name} reads "
                f"the {self.metric.part}'s"
            )
        data, rows, info = read_stored_surprisal(path, what)
        return kind.validator(data, f"{path} ({what})"), rows, info

    def _needs_model(self, path: Path, what: str, kind: Kind, option: str) -> str:
        section = SECTIONS[option]
        names = config_names(self.options.config, section)
        known = (
            f"an entry of {section}: in {self.options.config}: {', '.join(names) or 'none'}"
            if names is not None
            else f"an entry of {section}: in a workflow config given with --config"
        )
        writer = "genmetrics embed" if option == "featurizer" else "the surprisal rule"
        return (
            f"{path}: the {what} is texts, and {self.metric.name} reads {kind.name}: give "
            f"--{option} NAME to compute them on the fly (NAME: {known}), or pass .npz "
            f"files of {kind.name} ({writer} writes them)"
        )


def check_options(
    metric: Metric,
    options: InputOptions,
    candidate: str,
    reference: str | None,
    kind: str | None = None,
) -> None:
    """Options that would change nothing are errors: a featurizer for a metric that reads no
    embeddings (an evaluator: no surprisal), a model when no input is texts. ``kind``: what
    the metric reads with the run's params (default: its registered input)."""
    kind = kind or metric.input
    for option in SECTIONS:
        name = options.model(option)
        if name is None:
            continue
        if KINDS[kind].config_key != option:
            raise GenmetricsError(
                f"--{option} {name}: {metric.name} reads {kind}, not "
                f"{'embeddings' if option == 'featurizer' else 'surprisal'} (drop --{option})"
            )
        if not any(text_format(p) for p in (candidate, reference) if p is not None):
            raise GenmetricsError(f"--{option} {name}: no input is texts; nothing to featurize")
    if options.reference_field and reference is None:
        raise GenmetricsError("--reference-field: no --reference")


def score_texts(
    name: str,
    candidate: str,
    reference: str | None = None,
    params: Mapping[str, Any] | None = None,
    pair_by: str = "id",
    language: str = DEFAULT_LANGUAGE,
    options: InputOptions | None = None,
    interval: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``genmetrics score``: :func:`genmetrics.scoring.score_files` with inputs read by an
    :class:`InputLoader` (texts featurized on the fly); the record gets ``inputs``, and
    ``interval`` (:func:`genmetrics.scoring.intervals.entry_interval`'s settings) when asked."""
    from genmetrics.scoring import from_files as scoring

    options = options or InputOptions()
    metric = get(name)
    # the input kind with these params (a parameter may choose it: input_by)
    merged = metric.check_params(params or {})
    kind = metric.input_kind(merged)
    check_options(metric, options, candidate, reference, kind)
    option = KINDS[kind].config_key
    if (option and options.model(option) is not None) or metric.loads_model(merged):
        check_row_counts(metric, params, candidate, reference)  # before any model runs
    loader = InputLoader(metric, options)
    rec = scoring.score_files(
        name, candidate, reference, params, pair_by, language, load=loader, interval=interval
    )
    cut = {  # texts featurized here: the texts their max_tokens cut (a file's: score_files)
        role: info[option]["truncation"]
        for role, info in loader.inputs.items()
        for option in SECTIONS
        if "path" in info
        and not str(info["path"]).endswith(".npz")
        and isinstance(info.get(option), dict)
        and info[option].get("truncation")
    }
    scoring.add_truncation(rec, cut)
    return {**rec, "inputs": loader.inputs}


# ------------------------------------------------------------------ genmetrics embed


def embed_file(
    texts: str | Path,
    out: str | Path,
    featurizer: str,
    config: str | Path = DEFAULT_CONFIG,
    field: str = "text",
    progress: bool = False,
) -> dict[str, Any]:
    """Embed the texts at ``texts`` with the config's ``featurizer`` and write ``out``, the
    workflow's embeddings file (``ids``, ``prompt_ids`` where the rows have them, ``emb``,
    ``provenance`` with the featurizer's description); return a summary."""
    from genmetrics.metrics.kinds import row_links
    from genmetrics.npz import save_npz, with_provenance
    from genmetrics.provenance import record

    out = Path(out)
    if out.suffix != ".npz":
        raise GenmetricsError(f"--out {out}: must be a .npz file")
    model = resolve_model("featurizer", featurizer, config)
    rows = read_text_rows(texts, field, "text")
    emb, kept, stats = make_features(model, rows, "text", "texts", str(texts), progress)
    links = row_links(kept) if all("id" in r for r in kept) else {}
    described = model.describe(stats)
    given = Path(texts)
    files: str | Path | Sequence[Path] = sorted(given.glob("**/*.txt")) if given.is_dir() else given
    rec = record(
        config={"featurizer": model.settings, "source": str(texts), "field": field},
        inputs={"texts": files, "model": model.manifest},
    )
    # the run's counts are not this file's; its truncation is, as the embed job records it
    made = {k: v for k, v in described.items() if k not in (*RUN_COUNTS, "truncation")}
    rec |= {"features": made, "truncation": described["truncation"]}
    save_npz(out, **with_provenance({**links, "emb": emb}, rec))
    return {"out": str(out), "n": int(emb.shape[0]), "dim": int(emb.shape[1]), **described}


# ------------------------------------------------------------------ help


def _reads(metric: Metric) -> str:
    what = metric.input + (" of the continuation" if metric.part != "text" else "")
    ref = {
        "required": "reference required",
        "optional": "reference optional",
        "none": "no reference",
        "prompts": "reference: the prompts",
    }[metric.reference]
    ref += ", paired by id" if metric.paired else ", linked by prompt" if metric.links else ""
    return f"{what}; {ref}"


def example(metric: Metric) -> str:
    """One ``genmetrics score`` command for ``metric``, from its registration."""
    if metric.input == "density":
        cand = "density.npz"
    elif metric.part != "text" or metric.reference == "prompts" or metric.input == "records":
        cand = "generations.jsonl"
    else:
        cand = "texts.jsonl"
    words = ["genmetrics score", metric.name, "--candidate", cand]
    if metric.reference in ("required", "optional"):
        words += ["--reference", "refs.jsonl"]
    elif metric.reference == "prompts":
        words += ["--reference", "prompts.jsonl"]
    option = FROM_TEXTS.get(metric.input, ("", None))[1]
    if option:
        words += [f"--{option}", "NAME"]
    return " ".join(words)


def inputs_epilog() -> str:
    """The end of ``genmetrics score --help``: the inputs, then each registered metric's
    input kind and one example command (generated from the registry)."""
    head = (
        "inputs: --candidate and --reference take texts: a .jsonl file (the text of each row:\n"
        "--field, default text; continuation or prompt where the metric reads those), a folder\n"
        "of .txt files (one text each; its id the file name) or a .csv file (the column:\n"
        "--field, also spelled --column). A metric that reads embeddings embeds the texts on\n"
        "the fly with --featurizer NAME, one that reads surprisal scores them with --evaluator\n"
        "NAME: NAME is an entry of the featurizers: or evaluators: section of a workflow config\n"
        "(--config, default config.yaml), and the features are cached as the workflow caches\n"
        "them (a second call reads them). Those metrics also take .npz feature files\n"
        "(genmetrics embed writes embeddings); POS metrics tag texts on load.\n\n"
        "each metric: what it reads, and an example\n"
    )
    try:
        metrics = all_metrics()
    except GenmetricsError as e:
        return f"{head}  (the metrics cannot be listed: {e})"
    width = max(len(n) for n in metrics)
    lines = [f"  {n:<{width}}  {_reads(m)}\n      {example(m)}" for n, m in metrics.items()]
    return head + "\n".join(lines)


def add_input_options(parser: Any) -> None:
    """``genmetrics score``'s options for reading texts and naming a featurizer/evaluator."""
    parser.add_argument(
        "--field",
        "--column",
        dest="field",
        metavar="NAME",
        help="the JSONL field or CSV column holding the texts (default: the field the metric "
        "reads: text; continuation for a metric of the continuation)",
    )
    parser.add_argument(
        "--reference-field",
        metavar="NAME",
        help="the reference's field or column, when it differs (default: --field; prompt for "
        "a metric whose reference is the prompts)",
    )
    parser.add_argument(
        "--featurizer",
        metavar="NAME",
        help="embed texts on the fly with this featurizer of the config (metrics of embeddings)",
    )
    parser.add_argument(
        "--evaluator",
        metavar="NAME",
        help="score texts' surprisal on the fly with this evaluator of the config (metrics of "
        "surprisal)",
    )
    parser.add_argument(
        "--config",
        default=DEFAULT_CONFIG,
        help="the workflow config naming featurizers and evaluators, and their caches "
        "(default: config.yaml; relative cache paths are from the current folder, as in the "
        "workflow)",
    )
