"""Command line: ``genmetrics list``, ``genmetrics score METRIC --candidate ... [--reference ...]``
(texts or feature files), ``genmetrics embed --texts ... --featurizer NAME --out ...``,
``genmetrics tokens-per-word --tokenizer ... --texts ...`` and
``genmetrics export mlflow RESULTS_DIR --tracking-uri URI``.

``score`` prints one JSON object ``{"metric", "values", "params", "n", ..., "seconds",
"wall_seconds"}``: strict JSON, a non-finite number is ``null`` and named in ``non_finite``
(``--format table``: an aligned table instead); on stderr, progress bars while texts are
featurized or an interval resampled and a short summary (each headline value with its
direction, n, featurizer or evaluator, texts truncated), none of it with ``--quiet``. Names
(metrics, parameters, featurizers, evaluators) that are misspelt get the closest known one,
and a metric's ``min_items`` is checked against the files' row counts before any model
runs. On bad input (arguments, parameters, files) it prints a one-line error to stderr and
exits with status 2; parameters are checked before any file is read. ``--param`` and ``--interval`` values are read as a config file's
are: numbers in decimal only (``010`` and ``0x10`` are errors, not 8 and 16), and the
interval's keys within the bounds the config schema gives them (:data:`INTERVAL_KEYS`). An unexpected failure (a bug) is one line too, with exit status 1;
``GENMETRICS_DEBUG=1`` shows its traceback. A closed stdout (``genmetrics list | head``) ends
quietly.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from collections.abc import Mapping
from typing import Any, NoReturn

import numpy as np
import yaml

from genmetrics import GenmetricsError
from genmetrics.data.words import DEFAULT_LANGUAGE, LANGUAGES
from genmetrics.io import jsonable
from genmetrics.params import Interval, Options, Param, read_yaml

#: the keys of ``--interval``, checked as the config schema checks ``metrics.<entry>.interval``
#: (workflow/schemas/config.schema.yaml; a test keeps the two equal)
INTERVAL_KEYS = {
    "resamples": Param(
        "resamples", 200, (Interval(int, 20, 100_000),), "B, the number of resamples"
    ),
    "level": Param(
        "level", 0.95, (Interval(float, 0, 1, closed="neither"),), "the interval's level"
    ),
    "seed": Param("seed", 0, (Interval(int, 0, 2**32 - 1),), "the seed of the resampling"),
    "scheme": Param("scheme", "half", (Options("half", "replacement"),), "the resampling"),
}


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``genmetrics: error: ...``) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        _fail(f"{self.prog}: {message}")
        raise SystemExit(2)


def _fail(message: str) -> None:
    """Print ``genmetrics: error: message`` as exactly one line on stderr."""
    text = str(message).replace("\r", "\\r").replace("\n", "\\n")
    print(f"genmetrics: error: {text}", file=sys.stderr)


def parse_param(text: str, option: str = "--param") -> tuple[str, Any]:
    """``KEY=VALUE`` with the value read as YAML (numbers, true/false, null, lists), numbers in
    decimal only (:func:`genmetrics.params.read_yaml`: ``k=010`` is an error, not 8)."""
    if "=" not in text:
        raise GenmetricsError(f"{option} {text!r}: expected KEY=VALUE")
    key, raw = text.split("=", 1)
    try:
        value = read_yaml(raw, f"{option} {key.strip()}") if raw != "" else ""
    except (yaml.YAMLError, RecursionError):
        value = raw
    return key.strip(), value


def parse_interval(texts: list[str], metric: str | None = None) -> dict[str, Any]:
    """``--interval KEY=VALUE...`` as :func:`genmetrics.scoring.intervals.entry_interval`
    settings: each value checked as the config schema checks it (:data:`INTERVAL_KEYS`:
    ``resamples`` an integer in [20, 100000], ``level`` in (0, 1), ``seed`` in
    [0, 2**32 - 1]), and the scheme as ``metric`` accepts it; errors name ``--interval`` and
    the key."""
    from genmetrics.metrics import get
    from genmetrics.scoring.intervals import entry_interval

    given = parse_params(texts, "--interval")
    unknown = sorted(set(given) - set(INTERVAL_KEYS))
    if unknown:
        raise GenmetricsError(f"--interval: unknown key(s) {unknown}; known: {list(INTERVAL_KEYS)}")
    checked = {k: INTERVAL_KEYS[k].check(v, f"--interval {k}") for k, v in given.items()}
    try:
        return entry_interval("", checked or True, None if metric is None else get(metric))
    except GenmetricsError as e:  # its messages name ".interval" of a config key
        raise GenmetricsError(str(e).replace(".interval", "--interval", 1)) from None


def parse_params(texts: list[str], option: str = "--param") -> dict[str, Any]:
    """Every ``--param`` (or ``option``); a key given twice is an error (not silently the last
    one)."""
    out: dict[str, Any] = {}
    for text in texts:
        key, value = parse_param(text, option)
        if key in out:
            raise GenmetricsError(f"{option} {key}: given more than once")
        out[key] = value
    return out


_RST_ROLE = re.compile(r":(?:func|mod|class|meth|data|attr|obj|exc):`(~?)([^`]+)`")
_RST_LITERAL = re.compile(r"``(.+?)``", re.S)


def plain_text(text: str) -> str:
    """Docstring text as a terminal shows it: reStructuredText literals (two backticks) and
    roles (``:func:`x```, ``~`` keeping the last name) become their plain text."""
    text = _RST_ROLE.sub(lambda m: m[2].rsplit(".", 1)[-1] if m[1] else m[2], text)
    return _RST_LITERAL.sub(r"\1", text)


def _other_inputs(m: dict[str, Any]) -> str:
    """The kinds a metric reads under some parameter values (``input_by``), as text."""
    return "".join(
        f"; {kind} with {key}={json.dumps(value)}"
        for key, kinds in m.get("input_by", {}).items()
        for value, kind in kinds.items()
    )


def format_metrics(metrics: list[dict[str, Any]]) -> str:
    """The ``genmetrics list`` table: each metric, its values (↑/↓ = better; "closer to the
    references" where the references' own value is best), params; the registered texts in
    plain text (:func:`plain_text`)."""
    arrow = {"higher": " ↑", "lower": " ↓", None: ""}
    lines = []
    for m in metrics:
        kind = m["input"] + (", paired" if m["paired"] else "")
        kind += (", by prompt" if m.get("by_prompt") else "") + _other_inputs(m)
        lines.append(f"{m['name']}  ({kind}; reference {m['reference']})  {m['citation']}")
        lines.append(f"    {m['description']}")
        closer = set(m.get("closer_to_references", ()))
        lines.append(
            "    values: "
            + ", ".join(
                f"{k} (closer to the references)" if k in closer else f"{k}{arrow[d]}"
                for k, d in m["values"].items()
            )
        )
        scales = dict.fromkeys(m["scales"].values())
        facts = [f"family {m['family']}", f"headline {', '.join(m['headline']) or '—'}"]
        facts += [f"scale {', '.join(scales)}"] if scales else []
        facts += [f"feeds {', '.join(m['figures'])}"] if m["figures"] else []
        facts += ["sweepable"] if m["sweepable"] else []
        lines.append("    " + "; ".join(facts))
        for k, p in m["params"].items():
            default = json.dumps(p["default"])
            lines.append(f"    --param {k}={default}: {p['accepts']}. {p['doc']}")
        if m["aggregation"] != "corpus":
            lines.append(f"    aggregation: {m['aggregation']}")
        lines.append(f"    matches: {m['upstream']}")
    return plain_text("\n".join(lines))


def markdown_table(metrics: list[dict[str, Any]]) -> str:
    """The metric table of the README and docs/metrics/index.md, generated from the registry
    (tests/test_docs.py keeps both current)."""
    arrow = {"higher": "↑", "lower": "↓", None: ""}
    rows = [
        "| metric | input | values (↑/↓ = better; no arrow: neither) | parameters (default) "
        "| matches | cite |",
        "|---|---|---|---|---|---|",
    ]
    for m in metrics:
        kind = m["input"] + (
            " (paired)" if m["paired"] else " (paired by prompt, else sets)" if m["links"] else ""
        )
        kind += (" (per prompt)" if m.get("by_prompt") else "") + _other_inputs(m)
        vals = ", ".join(f"`{k}`{arrow[d]}" for k, d in m["values"].items())
        params = ", ".join(f"`{k}`={json.dumps(p['default'])}" for k, p in m["params"].items())
        rows.append(
            f"| `{m['name']}` | {kind} | {vals} | {params or '—'} | {m['upstream']} "
            f"| {m['citation']} |"
        )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 2 bad input, 1 unexpected)."""
    ap = _Parser(prog="genmetrics", description=plain_text(__doc__.splitlines()[0]))
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)
    lp = sub.add_parser("list", help="list every registered metric with its values and params")
    lp.add_argument("--json", action="store_true", help="print JSON instead of a table")
    lp.add_argument(
        "--markdown",
        action="store_true",
        help="print the metric table of the README and the docs (generated)",
    )
    from genmetrics.scoring.on_the_fly import DEFAULT_CONFIG, add_input_options, inputs_epilog

    sp = sub.add_parser(
        "score",
        help="compute one metric on texts (any metric) or feature files and print JSON",
        epilog=inputs_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sp.add_argument("metric")
    what = "texts (.jsonl, a folder of .txt, .csv) or a .npz feature file"
    sp.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="CANDIDATE [REFERENCE]: the same as --candidate and --reference",
    )
    sp.add_argument("--candidate", help=what)
    sp.add_argument("--reference", help=what)
    sp.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    sp.add_argument(
        "--pair-by",
        choices=("id", "position"),
        default="id",
        help=(
            "paired metrics (bleu, rouge, bertscore, coherence): 'id' (default) pairs each "
            "candidate's prompt_id/source_id, else its id, with the reference of that id and "
            "refuses rows without ids or id sets that differ; 'position' pairs line by line "
            "(equal counts), only when the files are known to be aligned"
        ),
    )
    sp.add_argument(
        "--language",
        choices=LANGUAGES,
        default=DEFAULT_LANGUAGE,
        help="what a word is in the texts' mean_words: whitespace words (en, default), jieba "
        "words (zh)",
    )
    sp.add_argument(
        "--interval",
        nargs="*",
        metavar="KEY=VALUE",
        help="add the interval over prompts the workflow records (200 seeded half-samples, "
        "level 0.95, seed 0); KEY=VALUE sets resamples, level, seed or scheme "
        "(half|replacement), e.g. --interval resamples=1000 seed=1",
    )
    add_input_options(sp)
    sp.add_argument(
        "--format",
        choices=("json", "table"),
        default="json",
        help="stdout: the JSON record (default; a short summary goes to stderr), or a "
        "readable table of every value",
    )
    sp.add_argument(
        "--quiet",
        action="store_true",
        help="nothing on stderr but errors: no progress bars, no summary",
    )
    ep = sub.add_parser(
        "embed",
        help="embed texts with a featurizer of the config; write the workflow's .npz "
        "embeddings file (genmetrics score reads it)",
        description="Embed texts as the workflow's embed rule does (same settings, same "
        "feature cache) and write its .npz file: ids, prompt_ids, emb, provenance. Then, e.g.: "
        "genmetrics score mauve --candidate gens.npz --reference refs.npz",
        epilog="example: genmetrics embed --texts gens.jsonl --featurizer NAME --out gens.npz",
    )
    ep.add_argument("--texts", required=True, help=".jsonl, a folder of .txt files, or .csv")
    ep.add_argument(
        "--featurizer",
        required=True,
        metavar="NAME",
        help="an entry of the config's featurizers: section",
    )
    ep.add_argument("--out", required=True, help="the .npz file to write")
    ep.add_argument(
        "--field",
        "--column",
        dest="field",
        default="text",
        metavar="NAME",
        help="the JSONL field or CSV column of the texts (default: text)",
    )
    ep.add_argument("--config", default=DEFAULT_CONFIG, help="default: config.yaml")
    ep.add_argument("--quiet", action="store_true", help="no progress bars on stderr")
    tp = sub.add_parser(
        "tokens-per-word",
        help="measure a tokenizer's tokens per word on texts; print a row of the "
        "tokens-per-word table (name, value, measured_on)",
    )
    tp.add_argument(
        "--tokenizer",
        required=True,
        help="an HF model folder, a checkpoint manifest (model.json), or gpt2 (the offline "
        "GPT-2 BPE)",
    )
    tp.add_argument("--texts", required=True, help=".jsonl with a text field per row")
    tp.add_argument("--field", default="text", help="the rows' text field (default: text)")
    tp.add_argument(
        "--family",
        help="the row's name (default: the tokenizer's folder name); @<language> "
        "is added for a language with a segmenter",
    )
    tp.add_argument(
        "--words",
        choices=("whitespace", "nltk"),
        default="whitespace",
        help="whitespace (default): the words genmetrics' budgets count (jieba words for zh); "
        "nltk: NLTK word_tokenize words, as Le Bronnec et al. (2024) Table B.1",
    )
    tp.add_argument("--language", choices=LANGUAGES, default=DEFAULT_LANGUAGE)
    tp.add_argument("--header", action="store_true", help="print the table's header line first")
    xp = sub.add_parser(
        "export",
        help="log a results folder to a tracking server: one MLflow run per (dataset, model, "
        "seed), updated in place by a second export; print a JSON summary",
    )
    xp.add_argument("to", choices=("mlflow",), help="the tracking server's kind")
    xp.add_argument("results_dir", help="a run's results folder (with scores.csv)")
    xp.add_argument("--tracking-uri", required=True, help="e.g. file:///abs/mlruns, http://host")
    xp.add_argument("--experiment", help="default: genmetrics/<the results folder's name>")
    xp.add_argument("--config", help="a config file to attach to every run")
    cmp = sub.add_parser(
        "compare",
        help="paired differences between models from two or more score records (JSON): "
        "difference, paired interval, p, Holm and BH adjusted p per headline value",
    )
    cmp.add_argument("records", nargs="+", metavar="RECORD", help="score records (.json)")
    cmp.add_argument("--json", action="store_true", help="print JSON rows instead of a table")
    started = time.perf_counter() - (process_age() if argv is None else 0.0)
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:  # --help (0) or a usage error (2), already printed
        return e.code if isinstance(e.code, int) else 2
    except BrokenPipeError:
        return _reader_left()
    try:
        if args.command == "list":
            from genmetrics.metrics import all_metrics

            metrics = [m.describe() for m in all_metrics().values()]
            if args.json:
                _emit(json.dumps(jsonable(metrics), indent=2, allow_nan=False))
            elif args.markdown:
                _emit(markdown_table(metrics))
            else:
                _emit(format_metrics(metrics))
            return 0
        if args.command == "export":
            _emit(export_results(args))
            return 0
        if args.command == "compare":
            _emit(compare_text(args.records, args.json))
            return 0
        if args.command == "tokens-per-word":
            _emit(tokens_per_word_row(args))
            return 0
        if args.command == "embed":
            from genmetrics.scoring.on_the_fly import embed_file

            done = embed_file(
                args.texts, args.out, args.featurizer, args.config, args.field, not args.quiet
            )
            _emit(json.dumps(jsonable(done), allow_nan=False))
            return 0
        return score_command(args, started)
    except BrokenPipeError:
        return _reader_left()
    except GenmetricsError as e:
        _fail(str(e))
        return 2
    except OSError as e:  # a file that cannot be read: permissions, I/O errors
        name = f"{e.filename}: " if getattr(e, "filename", None) else ""
        _fail(f"{name}{e.strerror or e}")
        return 2
    except MemoryError:
        _fail("out of memory (an input too large for this machine?)")
        return 2
    except KeyboardInterrupt:
        _fail("interrupted")
        return 130
    except Exception as e:
        if os.environ.get("GENMETRICS_DEBUG"):
            raise
        _fail(
            f"internal error (please report it): {type(e).__name__}: {e}; "
            "GENMETRICS_DEBUG=1 shows the traceback"
        )
        return 1


def export_results(args: argparse.Namespace) -> str:
    """``genmetrics export mlflow``: the summary of
    :func:`genmetrics.report.export_mlflow.export_mlflow` as JSON."""
    from genmetrics.report.export_mlflow import export_mlflow

    done = export_mlflow(args.results_dir, args.tracking_uri, args.experiment, args.config)
    return json.dumps(done)


def score_command(args: argparse.Namespace, started: float) -> int:
    """``genmetrics score``: the record on stdout (JSON, or ``--format table``), with
    ``wall_seconds`` (the whole command, from its start; ``seconds`` is the metric's own
    computation); a short summary on stderr after a JSON record, and notes and progress
    bars on stderr while texts are featurized and an interval resampled, unless ``--quiet``."""
    from genmetrics.metrics import get
    from genmetrics.scoring.on_the_fly import InputOptions, score_texts
    from genmetrics.scoring.summary import score_table, summary_lines

    candidate, reference = input_files(args)
    metric = get(args.metric)  # an unknown name: one line, with the closest known one
    params = parse_params(args.param)
    bars = not args.quiet  # on stderr, a terminal or a log (as the checkpoint's loading bars)
    options = InputOptions(
        field=args.field,
        reference_field=args.reference_field,
        featurizer=args.featurizer,
        evaluator=args.evaluator,
        config=args.config,
        progress=bars,
        quiet=args.quiet,
    )
    interval = None if args.interval is None else parse_interval(args.interval, args.metric)
    if interval is not None and bars:
        interval = {**interval, "progress": True}
    rec = score_texts(
        args.metric,
        candidate,
        reference,
        params,
        args.pair_by,
        args.language,
        options,
        interval,
    )
    rec.pop("versions", None)
    rec = with_wall_seconds(rec, time.perf_counter() - started)
    if args.format == "table":
        _emit(score_table(finite_json(rec), metric))
        return 0
    _emit(json.dumps(finite_json(rec), allow_nan=False))
    if not args.quiet:
        print("\n".join(summary_lines(finite_json(rec), metric)), file=sys.stderr)
    return 0


def input_files(args: argparse.Namespace) -> tuple[str, str | None]:
    """(candidate, reference) from ``FILE...`` or ``--candidate``/``--reference``."""
    files = list(args.files)
    if len(files) > 2:
        raise GenmetricsError(
            f"score takes at most two files (CANDIDATE REFERENCE), got {len(files)}: "
            + " ".join(files)
        )
    if files and (args.candidate or args.reference):
        raise GenmetricsError(
            "give the files either as FILE arguments or with --candidate/--reference, not both"
        )
    candidate = files[0] if files else args.candidate
    reference = files[1] if len(files) == 2 else args.reference
    if candidate is None:
        raise GenmetricsError(
            "genmetrics score: the following arguments are required: --candidate (or the "
            "candidate as the first FILE)"
        )
    return candidate, reference


def process_age() -> float:
    """Seconds since this process started (Linux ``/proc``: Python's start-up and imports
    included), 0 where that cannot be read; the command's ``wall_seconds`` starts there."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        return max(uptime - start_ticks / os.sysconf("SC_CLK_TCK"), 0.0)
    except (OSError, ValueError, IndexError):
        return 0.0


def with_wall_seconds(rec: dict[str, Any], wall: float) -> dict[str, Any]:
    """``rec`` with ``wall_seconds`` (the whole command) right after ``seconds``."""
    out: dict[str, Any] = {}
    for k, v in rec.items():
        out[k] = v
        if k == "seconds":
            out["wall_seconds"] = round(wall, 2)
    out.setdefault("wall_seconds", round(wall, 2))
    return out


def tokens_per_word_row(args: argparse.Namespace) -> str:
    """``genmetrics tokens-per-word``: the row (after the header with ``--header``)."""
    from pathlib import Path

    from genmetrics.io import read_jsonl
    from genmetrics.models.tokens_per_word import format_row, measure_tokens_per_word, row_name

    given = Path(args.tokenizer)
    if args.tokenizer == "gpt2" and not given.exists():
        from genmetrics.data.assets import gpt2_encoding

        tokenizer, label, family = gpt2_encoding(), "GPT-2 BPE", "gpt2"
    elif given.exists():
        from genmetrics.models.checkpoints import load_tokenizer

        tokenizer = load_tokenizer(given)
        folder = given.parent if given.is_file() else given
        label, family = f"tokenizer of {folder.name}", folder.name.lower()
    else:
        raise GenmetricsError(
            f"--tokenizer {args.tokenizer}: no such folder or manifest (or 'gpt2'); download "
            "a hub model first, e.g. as a checkpoint (fetch_model writes its model.json)"
        )
    name = row_name(args.family or family, args.language)
    texts = [r[args.field] for r in read_jsonl(args.texts, required=(args.field,))]
    measured = measure_tokens_per_word(tokenizer, texts, args.words, args.language)
    row = format_row(name, measured, Path(args.texts).name, label)
    return f"tokenizer\ttokens_per_word\tmeasured_on\n{row}" if args.header else row


def compare_text(records: list[str], as_json: bool) -> str:
    """``genmetrics compare``: the paired table of ``records`` as JSON rows or a text table."""
    from genmetrics.analysis.paired import compare_records

    table = compare_records(records)
    if as_json:
        return table.to_json(orient="records", indent=1)  # NaN and NA: null
    return table.to_string(index=False, float_format=lambda x: f"{x:.4g}")


def _reader_left() -> int:
    """``genmetrics list | head``: the reader left, not an error. Point stdout at /dev/null
    so the flush at exit does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # a stdout without a file descriptor (captured)
        pass
    return 0


def _emit(text: str) -> None:
    """Print to stdout and flush now, so a closed pipe is seen here and not at exit."""
    print(text)
    sys.stdout.flush()


def finite_json(rec: dict[str, Any]) -> Any:
    """JSON-safe record: a non-finite number becomes ``null`` and is named in ``non_finite``
    (a value by its name, e.g. ``{"perplexity": "inf"}``; elsewhere by its path, e.g.
    ``{"extras.curve": "nan"}``), so the output is strict JSON that says what happened."""
    bad: dict[str, set[str]] = {}

    def walk(obj: Any, path: str) -> Any:
        if isinstance(obj, Mapping):
            return {str(k): walk(v, f"{path}.{k}" if path else str(k)) for k, v in obj.items()}
        if isinstance(obj, (list, tuple)):
            return [walk(v, path) for v in obj]
        if isinstance(obj, np.ndarray):
            return walk(obj.tolist(), path)
        if isinstance(obj, np.generic):
            return walk(obj.item(), path)
        if isinstance(obj, float) and not math.isfinite(obj):
            kind = "nan" if math.isnan(obj) else "inf" if obj > 0 else "-inf"
            bad.setdefault(path.removeprefix("values."), set()).add(kind)
            return None
        return jsonable(obj)

    out = walk(rec, "")
    if bad:
        out["non_finite"] = {k: ",".join(sorted(v)) for k, v in bad.items()}
    return out


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
