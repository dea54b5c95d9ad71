"""Readers of the text corpora among the study datasets' upstreams (in
:data:`genmetrics.data.upstream.READERS`; the helpers every reader uses are here too): WikiText-2's raw test file with the de-tokeniser our
copy used, AG News's ``test.csv`` and the ``alps`` ``dev.tsv`` sample of its train split with
the feed-artefact cleaning, and AlpacaEval's ``model_outputs.json`` (instructions and outputs).

Each makes, from the pinned upstream file, the rows of the project's data folder byte for byte
(the folder's README describes the processing; ``tests/test_upstream_readers.py`` checks the
rows against it). Nothing downloaded is run: CSV, TSV, JSON and plain text only.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from genmetrics import GenmetricsError

Rows = list[dict[str, Any]]
Reader = Callable[[Mapping[str, Path], Mapping[str, Any]], Rows]

#: the readers of this module (:data:`genmetrics.data.upstream.READERS` holds them all)
TEXT_READERS: dict[str, Reader] = {}


def _register(name: str) -> Callable[[Reader], Reader]:
    def deco(fn: Reader) -> Reader:
        TEXT_READERS[name] = fn
        return fn

    return deco


def _one(files: Mapping[str, Path], name: str) -> Path:
    if name not in files:
        raise GenmetricsError(f"upstream.files: {name!r} is required (files: {', '.join(files)})")
    return Path(files[name])


def _text(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as e:
        raise GenmetricsError(f"{path}: invalid UTF-8 at byte {e.start}") from None


def _opt(options: Mapping[str, Any], name: str) -> Any:
    if name not in options:
        raise GenmetricsError(f"upstream.options.{name}: required by this reader")
    return options[name]


# ------------------------------------------------------------------ WikiText (raw)

#: a heading line: `` = Title = ``, `` = = Section = = ``... (the same run of ``=`` both sides)
_HEADING = re.compile(r"^ (=(?: =)*) (.*?) \1 $")
_DETOK = [
    (re.compile(r" @([-,.])@ "), r"\1"),  # number and compound joins
    (re.compile(r" ([.,;:!?%)\]])(?= |$)"), r"\1"),  # no space before these tokens
    (re.compile(r"(?:(?<= )|^)([(\[]) "), r"\1"),  # none after ( [
    (re.compile(r"(\w)s '(?!\w)"), r"\1s'"),  # plural possessive (a closing quote after s too)
    (re.compile(r" ('s|'re|'ve|'ll|'d|'m|n't|'t)\b"), r"\1"),  # contractions, possessive 's
    (re.compile(r'" ([^"]*?) "'), r'"\1"'),  # " quoted " -> "quoted"
    (re.compile(r"([$£€¥]) (?=\d)"), r"\1"),  # $ 5 -> $5
]


def wikitext_detokenize(line: str) -> str:
    """One WikiText line (a paragraph or a heading's name) without the corpus's tokenisation:
    ``@-@``/``@,@``/``@.@`` joins, no space before ``. , ; : ! ? % ) ]`` or after ``( [``,
    contractions and possessives rejoined, ``" x "`` -> ``"x"``, ``$ 5`` -> ``$5``. Spaces
    around en dashes and single quotes used as quotation marks stay."""
    s = line.strip()
    for pattern, repl in _DETOK:
        s = pattern.sub(repl, s)
    return s


@_register("wikitext_raw")
def wikitext_raw(files: Mapping[str, Path], options: Mapping[str, Any]) -> Rows:
    """A WikiText ``wiki.*.raw`` file (CRLF or LF): one row per paragraph line of at least
    ``options.min_words`` words after :func:`wikitext_detokenize`, as ``{"id":
    f"{id_prefix}{article:02d}-{paragraph:03d}", "title", "section", "article_index",
    "paragraph_index", "text"}``. A `` = Title = `` line starts an article, deeper headings set
    the ``section`` (``None`` in the lead); ``paragraph_index`` counts every paragraph of the
    article. ``options.continued_lines`` lists lines that look like headings but continue an
    equation: each, and the line after it, is joined to the paragraph before it."""
    path = _one(files, "raw")
    prefix = _opt(options, "id_prefix")
    min_words = int(options.get("min_words", 40))
    continued = set(options.get("continued_lines") or ())
    lines = [line for line in re.split(r"\r?\n", _text(path)) if line.strip()]
    paragraphs: list[str] = []
    glue_next = False
    for line in lines:
        if line.strip() in continued or glue_next:
            if not paragraphs:
                raise GenmetricsError(f"{path}: a continued line before any paragraph: {line!r}")
            paragraphs[-1] = f"{paragraphs[-1].rstrip()} {line.strip()} "
            glue_next = line.strip() in continued
            continue
        paragraphs.append(line)
    rows: Rows = []
    article, title, section, index = -1, None, None, 0
    for line in paragraphs:
        m = _HEADING.match(line)
        if m:
            if len(m.group(1)) == 1:
                article, title, section, index = (
                    article + 1,
                    wikitext_detokenize(m.group(2)),
                    None,
                    0,
                )
            else:
                section = wikitext_detokenize(m.group(2))
            continue
        if article < 0:
            raise GenmetricsError(f"{path}: a paragraph before the first ' = Title = ' line")
        text = wikitext_detokenize(line)
        if len(text.split()) >= min_words:
            rows.append(
                {
                    "id": f"{prefix}{article:02d}-{index:03d}",
                    "title": title,
                    "section": section,
                    "article_index": article,
                    "paragraph_index": index,
                    "text": text,
                }
            )
        index += 1
    return rows


# ------------------------------------------------------------------ AG News

_AG_LABELS = ["World", "Sports", "Business", "Sci/Tech"]
_ENTITIES = [
    (re.compile(r"&?lt;"), "<"),
    (re.compile(r"&?gt;"), ">"),
    (re.compile(r"(?:&| )?quot;"), '"'),  # the feed lost the "&": " quot;" (its space is it)
    (re.compile(r"&?amp;"), "&"),
    (re.compile(r"(?:&| )?nbsp;"), " "),
    (re.compile(r"(?:&| )?hellip;"), "..."),
]
_NUMERIC = re.compile(r"(?:&| )?#(\d+);")


def _numeric(m: re.Match[str]) -> str:
    n = int(m.group(1))
    return bytes([n]).decode("cp1252") if 128 <= n <= 159 else chr(n)


def agnews_clean(text: str) -> str:
    """An AG News string without its feed artefacts: ``\\\\`` (a paragraph break) -> a newline,
    a single ``\\`` -> a space, the HTML entities that lost their ``&`` (`` #39;`` -> ``'``,
    `` quot;`` -> ``"``, ``amp;`` -> ``&``...; ``#128;``-``#159;`` as Windows-1252), spaces
    collapsed and each line trimmed."""
    s = text.replace("\\\\", "\n").replace("\\", " ")
    s = _ENTITIES[0][0].sub("<", s)
    s = _ENTITIES[1][0].sub(">", s)
    s = _NUMERIC.sub(_numeric, s)
    for pattern, repl in _ENTITIES[2:]:
        s = pattern.sub(repl, s)
    s = re.sub(r"[ \t]+", " ", s)
    return "\n".join(part.strip() for part in s.split("\n")).strip()


def _labels(options: Mapping[str, Any]) -> list[str]:
    labels = list(options.get("labels") or _AG_LABELS)
    if not all(isinstance(x, str) for x in labels):
        raise GenmetricsError("upstream.options.labels: a list of class names")
    return labels


def _agnews_test(path: Path, options: Mapping[str, Any]) -> Rows:
    labels = _labels(options)
    prefix = options.get("id_prefix", "agnews-test-")
    rows: Rows = []
    for i, rec in enumerate(csv.reader(io.StringIO(_text(path), newline=""))):
        if len(rec) != 3 or not rec[0].isdigit() or not 1 <= int(rec[0]) <= len(labels):
            raise GenmetricsError(f"{path}: row {i + 1}: not 'class (1-{len(labels)}),title,text'")
        label = int(rec[0]) - 1
        rows.append(
            {
                "id": f"{prefix}{i:04d}",
                "label": label,
                "label_name": labels[label],
                "title": agnews_clean(rec[1]),
                "text": agnews_clean(rec[2]),
            }
        )
    return rows


@_register("agnews_csv")
def agnews_csv(files: Mapping[str, Path], options: Mapping[str, Any]) -> Rows:
    """The official AG News ``test.csv`` (``"class","title","description"``, class 1-4): one
    row per line, ``{"id": f"{id_prefix}{row:04d}", "label" (class - 1), "label_name",
    "title", "text" (the description)}``, both strings :func:`agnews_clean`-ed."""
    return _agnews_test(_one(files, "test"), options)


@_register("agnews_tsv")
def agnews_tsv(files: Mapping[str, Path], options: Mapping[str, Any]) -> Rows:
    """A ``description<TAB>label name`` sample of the AG train split (``forest-snow/alps``
    ``dev.tsv``): ``{"id": f"{id_prefix}{line:05d}", "label", "label_name", "text"}`` per line,
    :func:`agnews_clean`-ed, leaving out a description that the ``test`` file (AG's
    ``test.csv``) also has and any repeat of an earlier one."""
    path = _one(files, "dev")
    labels = _labels(options)
    prefix = _opt(options, "id_prefix")
    seen = {r["text"] for r in _agnews_test(_one(files, "test"), {"labels": labels})}
    rows: Rows = []
    for i, line in enumerate(_text(path).split("\n")):
        if not line:
            continue
        text, tab, name = line.rpartition("\t")
        if not tab or name not in labels:
            raise GenmetricsError(f"{path}: line {i + 1}: not 'description<TAB>{'|'.join(labels)}'")
        text = agnews_clean(text)
        if text in seen:
            continue
        seen.add(text)
        rows.append(
            {
                "id": f"{prefix}{i:05d}",
                "label": labels.index(name),
                "label_name": name,
                "text": text,
            }
        )
    return rows


# ------------------------------------------------------------------ AlpacaEval


def _alpaca(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(_text(path))
    except ValueError as e:
        raise GenmetricsError(f"{path}: not JSON ({e})") from None
    if not isinstance(data, list) or not all(
        isinstance(r, dict) and isinstance(r.get("instruction"), str) for r in data
    ):
        raise GenmetricsError(f"{path}: not a list of {{'instruction', ...}} records")
    return data


@_register("alpaca_instructions")
def alpaca_instructions(files: Mapping[str, Path], options: Mapping[str, Any]) -> Rows:
    """The instructions of an AlpacaEval ``model_outputs.json`` (``outputs``), in its order:
    ``{"id": f"{id_prefix}{i:03d}", "dataset", "text"}``."""
    prefix = options.get("id_prefix", "alpaca-")
    return [
        {"id": f"{prefix}{i:03d}", "dataset": r["dataset"], "text": r["instruction"]}
        for i, r in enumerate(_alpaca(_one(files, "outputs")))
    ]


@_register("alpaca_outputs")
def alpaca_outputs(files: Mapping[str, Path], options: Mapping[str, Any]) -> Rows:
    """A model's AlpacaEval ``model_outputs.json`` (``outputs``) aligned by exact instruction
    string to the numbering of ``instructions`` (another ``model_outputs.json``, the one
    :func:`alpaca_instructions` reads), in that order: ``{"id":
    f"{source_id}.{generator}", "source_id", "model" (the generator), "decoding"
    (``options.decoding``), "text" (the output, verbatim)}``. An instruction that is not in
    ``instructions`` is an error; one the model did not answer has no row."""
    prefix = options.get("id_prefix", "alpaca-")
    decoding = _opt(options, "decoding")
    index = {r["instruction"]: i for i, r in enumerate(_alpaca(_one(files, "instructions")))}
    path = _one(files, "outputs")
    rows = []
    for r in _alpaca(path):
        if r["instruction"] not in index:
            raise GenmetricsError(
                f"{path}: an instruction not in 'instructions': {r['instruction'][:60]!r}"
            )
        sid = f"{prefix}{index[r['instruction']]:03d}"
        rows.append(
            (
                index[r["instruction"]],
                {
                    "id": f"{sid}.{r['generator']}",
                    "source_id": sid,
                    "model": r["generator"],
                    "decoding": decoding,
                    "text": r["output"],
                },
            )
        )
    return [row for _, row in sorted(rows, key=lambda t: t[0])]


# ------------------------------------------------------------------ XSum hallucinations

_XSUM_SYSTEMS = ["Gold", "BERTS2S", "TranS2S", "PtGen", "TConvS2S"]
#: the eval-score file's system ids -> the annotation files' system names
_XSUM_EVAL_SYSTEMS = {
    "bert_withckpt": "BERTS2S",
    "bert_nockpt": "TranS2S",
    "ptgen": "PtGen",
    "tconvs2s": "TConvS2S",
}
_XSUM_SCORES = [
    ("Faithful", "faithful"),
    ("Factual", "factual"),
    ("R1", "rouge1_f"),
    ("R2", "rouge2_f"),
    ("RL", "rougeL_f"),
    ("BERTScore", "bertscore"),
    ("Entailment", "entailment"),
]


def _csv_rows(path: Path, columns: set[str]) -> list[dict[str, str]]:
    rows = list(csv.DictReader(io.StringIO(_text(path), newline="")))
    missing = columns - set(rows[0] if rows else ())
    if missing:
        raise GenmetricsError(f"{path}: no column {', '.join(sorted(missing))}")
    return rows


@_register("xsum_hallucination")
def xsum_hallucination(files: Mapping[str, Path], options: Mapping[str, Any]) -> Rows:
    """google-research-datasets/xsum_hallucination_annotations: one row per (BBC document,
    system), documents by id, systems Gold, BERTS2S, TranS2S, PtGen, TConvS2S: ``{"id":
    f"{bbcid}.{system}", "bbcid", "system", "is_reference", "text"}``, the stored scores of
    ``scores`` where it has the summary (``faithful``, ``factual``, ``rouge1_f``, ``rouge2_f``,
    ``rougeL_f``, ``bertscore``, ``entailment``), ``factual_votes`` (``{worker: yes/no}`` of
    ``factuality``, else ``None``) and ``n_annotators_with_span`` (the workers of
    ``faithfulness`` who marked a span: its type is not ``NULL``). The text is the faithfulness
    file's without its ``\\'`` escapes, else the factuality file's."""
    faith = _csv_rows(
        _one(files, "faithfulness"), {"bbcid", "system", "summary", "hallucination_type"}
    )
    fact = _csv_rows(_one(files, "factuality"), {"bbcid", "system", "summary", "is_factual"})
    scores_path = _one(files, "scores")
    evals = _csv_rows(scores_path, {"system_bbcid"} | {c for c, _ in _XSUM_SCORES})
    text: dict[tuple[str, str], str] = {}
    marked: dict[tuple[str, str], set[str]] = {}
    for r in faith:
        k = (r["bbcid"], r["system"])
        text.setdefault(k, r["summary"].replace("\\'", "'"))
        if r["hallucination_type"] != "NULL":
            marked.setdefault(k, set()).add(r["worker_id"])
    votes: dict[tuple[str, str], dict[str, str]] = {}
    for r in fact:
        k = (r["bbcid"], r["system"])
        text.setdefault(k, r["summary"])
        votes.setdefault(k, {})[r["worker_id"]] = r["is_factual"]
    scores: dict[tuple[str, str], dict[str, str]] = {}
    for r in evals:
        system, _, bbcid = r["system_bbcid"].rpartition("_")
        if system not in _XSUM_EVAL_SYSTEMS:
            raise GenmetricsError(
                f"{scores_path}: unknown system {system!r} in {r['system_bbcid']}"
            )
        scores[(bbcid, _XSUM_EVAL_SYSTEMS[system])] = r
    rows: Rows = []
    for bbcid in sorted({b for b, _ in text} | {b for b, _ in scores}):
        for system in _XSUM_SYSTEMS:
            k = (bbcid, system)
            if k not in text:
                raise GenmetricsError(f"{files['faithfulness']}: no {system} summary of {bbcid}")
            row = {
                "id": f"{bbcid}.{system}",
                "bbcid": bbcid,
                "system": system,
                "is_reference": system == "Gold",
                "text": text[k],
            }
            if k in scores:
                row.update({ours: float(scores[k][col]) for col, ours in _XSUM_SCORES})
            row["factual_votes"] = votes.get(k)
            row["n_annotators_with_span"] = len(marked.get(k, ()))
            rows.append(row)
    return rows
