"""Input kinds: the one table of what a metric can read, and the one place inputs are checked.

Each kind has a file suffix, a loader (file → data + per-row metadata with ``id`` and, for
generations, ``prompt_id``/``source_id``), a validator (applied once, at the edge: in
:func:`genmetrics.metrics.compute`) and the path pattern of the workflow file that holds it.
``paired`` is not a kind: it is a property of a metric (``Metric.paired``), and any kind can be
paired by ``prompt_id``/``source_id`` (else by ``id``) with :func:`pair_rows`; by position only
when asked for by name (``pair_by="position"``).

============  ======  =========================================================  ==========
kind          suffix  workflow file                                              config key
============  ======  =========================================================  ==========
texts         .jsonl  results/data/{dataset}/references.jsonl or                 —
                      results/generations/{dataset}/{source}.jsonl
records       .jsonl  same as texts (rows with ``prompt`` and ``continuation``)   —
embeddings    .npz    results/features/embed/{featurizer}/{dataset}/{source}.npz featurizer
surprisal     .npz    results/features/surprisal/{evaluator}/{dataset}/…npz      evaluator
pos           .jsonl  results/features/pos/{dataset}/{source}.jsonl              —
============  ======  =========================================================  ==========
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.paths import RESULTS, ResultPaths

Rows = list[dict[str, Any]]


#: the part of a source's rows that features are computed from: the whole ``text``, or only
#: the model's ``continuation`` (coherence); the ``prompts`` source is always its ``prompt``.
PARTS = ("text", "continuation")


def part_texts(rows: Sequence[Mapping[str, Any]], part: str, source: str) -> tuple[Rows, list[str]]:
    """The rows and texts to featurize for one part of a source.

    ``prompts`` rows give their ``prompt``; other sources give ``part`` (``text`` or
    ``continuation``). A continuation with no word is left out, as SimCTG skips it; the kept
    rows keep ``id`` and ``prompt_id`` so features can be paired with their prompt.
    """
    if part not in PARTS:
        raise GenmetricsError(f"unknown part {part!r}; known: {', '.join(PARTS)}")
    field = "prompt" if source == "prompts" else part
    kept, texts = [], []
    for i, r in enumerate(rows, start=1):
        if not isinstance(r.get(field), str):
            raise GenmetricsError(f"{source}: row {i} (id={r.get('id')!r}) has no string {field!r}")
        if part == "continuation" and not r[field].split():
            continue
        kept.append({k: str(r[k]) for k in ("id", "prompt_id") if k in r})
        texts.append(r[field])
    return kept, texts


def row_links(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """The arrays a feature file keeps to pair its rows: ``ids``, and ``prompt_ids`` when the
    rows come from generations."""
    out = {"ids": [str(r["id"]) for r in rows]}
    if rows and all("prompt_id" in r for r in rows):
        out["prompt_ids"] = [str(r["prompt_id"]) for r in rows]
    return out


def truncation_record(lengths: Sequence[int], max_tokens: int) -> dict[str, int]:
    """How a model's ``max_tokens`` cut texts of token counts ``lengths`` (each counted
    whole, before the cut): ``texts``, ``truncated`` (how many had more than ``max_tokens``),
    ``max_tokens`` and ``longest`` (the most tokens of a text). Written into a feature file's
    provenance (``truncation``) and a score record (``truncation``, per role)."""
    lengths = [int(n) for n in lengths]
    return {
        "texts": len(lengths),
        "truncated": sum(n > max_tokens for n in lengths),
        "max_tokens": int(max_tokens),
        "longest": max(lengths, default=0),
    }


def truncation_warning(role: str, rec: Mapping[str, Any]) -> str | None:
    """The warning of a :func:`truncation_record` that cut texts (None where none was cut):
    ``texts truncated: 7 of 10 candidate texts (70%) cut at 128 tokens (longest 2300)``."""
    cut, total = int(rec.get("truncated") or 0), int(rec.get("texts") or 0)
    if not cut or not total:
        return None
    who = f"{role} texts" if role else "texts"
    return (
        f"texts truncated: {cut} of {total} {who} ({cut / total:.0%}) cut at "
        f"{rec.get('max_tokens')} tokens (longest {rec.get('longest')})"
    )


# ------------------------------------------------------------------ validators


#: the largest squared row norm a feature matrix may have. The exact k-NN engine forms
#: ||a||² + ||b||² − 2a·b in float32 blocks (largest float32 ≈ 3.4e38) before its float64
#: recheck, so rows far below that are needed; every |x| <= 1e15 passes for d < 1e6.
MAX_FEATURE_SQNORM = 1e36
_CHECK_BLOCK = 1 << 22  # elements per block of the row checks (32 MiB of float64)


def _first(rows: list[np.ndarray]) -> tuple[int, list[int]]:
    idx = np.concatenate(rows) if rows else np.zeros(0, np.int64)
    return int(idx.size), idx[:5].tolist()


def validate_embeddings(x: Any, what: str) -> np.ndarray:
    """A feature matrix: 2-D, real numbers, finite, non-empty, and every row's squared norm
    at most :data:`MAX_FEATURE_SQNORM` (checked in blocks: no full-size temporary)."""
    try:
        a = np.asarray(x)
    except (ValueError, TypeError) as e:
        raise GenmetricsError(f"{what}: features must be a 2-D numeric array ({e})") from None
    if a.ndim != 2:
        raise GenmetricsError(f"{what}: features must be 2-D [N, d], got shape {a.shape}")
    if a.shape[0] == 0 or a.shape[1] == 0:
        raise GenmetricsError(f"{what}: empty feature matrix {a.shape}")
    if not np.issubdtype(a.dtype, np.number) or np.issubdtype(a.dtype, np.complexfloating):
        raise GenmetricsError(f"{what}: features must be real numbers, got {a.dtype}")
    step = max(1, _CHECK_BLOCK // a.shape[1])
    bad, big, top = [], [], 0.0
    native = a.dtype in (np.float32, np.float64)  # checked as they are: no float64 copy
    for s in range(0, a.shape[0], step):
        blk = a[s : s + step] if native else np.asarray(a[s : s + step], dtype=np.float64)
        finite = np.isfinite(blk).all(axis=1)
        bad.append(np.flatnonzero(~finite) + s)
        with np.errstate(over="ignore"):
            sq = np.einsum("ij,ij->i", blk, blk, dtype=np.float64)  # float32 upcast exactly
        large = finite & ~(sq <= MAX_FEATURE_SQNORM)
        if large.any():
            big.append(np.flatnonzero(large) + s)
            top = max(top, float(np.abs(blk[large]).max()))
    n_bad, first = _first(bad)
    if n_bad:
        raise GenmetricsError(f"{what}: {n_bad} row(s) with NaN/inf, first rows {first}")
    n_big, first = _first(big)
    if n_big:
        raise GenmetricsError(
            f"{what}: {n_big} row(s) too large for float32 distances (squared norm above "
            f"{MAX_FEATURE_SQNORM:.0e}, max |x| = {top:.3g}), first rows {first}; rescale "
            "the features"
        )
    return a


def validate_texts(texts: Any, what: str) -> list[str]:
    """A non-empty list of strings. Empty strings are allowed: real model output has empty
    generations, and each metric states what it does with them (its docstring)."""
    if isinstance(texts, (str, bytes)):
        raise GenmetricsError(f"{what}: expected a list of texts, got one string")
    texts = list(texts)
    if not texts:
        raise GenmetricsError(f"{what}: no texts")
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise GenmetricsError(f"{what}: item {i} is {type(t).__name__}, not str")
    return texts


def validate_records(records: Any, what: str) -> list[dict[str, Any]]:
    """Rows with string ``prompt`` and ``continuation`` (generations)."""
    if isinstance(records, (str, bytes)) or not isinstance(records, Sequence):
        raise GenmetricsError(f"{what}: expected a list of records")
    if not records:
        raise GenmetricsError(f"{what}: no records")
    for i, row in enumerate(records):
        if not isinstance(row, Mapping):
            raise GenmetricsError(f"{what}: record {i} is {type(row).__name__}, not a mapping")
        for key in ("prompt", "continuation"):
            if not isinstance(row.get(key), str):
                raise GenmetricsError(
                    f"{what}: record {i} (id {row.get('id', '?')!r}) has no string {key!r}"
                )
    return list(records)


def validate_surprisal(seqs: Any, what: str) -> list[np.ndarray]:
    """Per-text 1-D float sequences (nats), finite; empty sequences are allowed."""
    if isinstance(seqs, np.ndarray) and seqs.ndim == 1 and seqs.dtype != object:
        raise GenmetricsError(f"{what}: expected a list of per-text sequences, got one array")
    if isinstance(seqs, (str, bytes, Mapping)) or not isinstance(seqs, Iterable):
        raise GenmetricsError(f"{what}: expected a list of per-text sequences")
    out = []
    for i, s in enumerate(seqs):
        try:
            a = np.asarray(s)
        except (ValueError, TypeError) as e:
            raise GenmetricsError(f"{what}: sequence {i} must be 1-D numbers ({e})") from None
        if a.ndim != 1 or a.dtype.kind not in "biufc":
            raise GenmetricsError(f"{what}: sequence {i} must be 1-D numbers, got {a.shape}")
        if a.dtype.kind == "c":
            raise GenmetricsError(f"{what}: sequence {i} must be real numbers, got {a.dtype}")
        out.append(a.astype(np.float64, copy=False))
    if not out:
        raise GenmetricsError(f"{what}: no sequences")
    check_surprisal_values(out, what)
    return out


def check_surprisal_values(
    seqs: Sequence[np.ndarray], what: str, ids: Sequence[Any] | None = None
) -> None:
    """Every token surprisal is finite and not negative (surprisal = −log p ≥ 0: a negative
    one is a log-probability or a bug, and would give perplexity below 1); the error names
    ``what``, how many texts and the first (by ``ids`` when given, else its position)."""
    for test, why in (
        (lambda a: np.isfinite(a).all(), "NaN/inf"),
        (lambda a: not (a < 0).any(), "negative values (surprisal is -log p >= 0; log-probs?)"),
    ):
        bad = [i for i, a in enumerate(seqs) if not test(np.asarray(a))]
        if bad:
            i = bad[0]
            first = f"id {str(ids[i])!r} (sequence {i})" if ids is not None else f"sequence {i}"
            a = np.asarray(seqs[i])
            shown = a[~np.isfinite(a)] if why == "NaN/inf" else a[a < 0]
            raise GenmetricsError(
                f"{what}: {len(bad)} of {len(seqs)} text(s) have token surprisal with {why}, "
                f"first {first}: {shown[0]:.4g}"
            )


def validate_pos(tags: Any, what: str) -> list[list[str]]:
    """Per-text lists of tag strings."""
    if isinstance(tags, (str, bytes, Mapping)) or not isinstance(tags, Iterable):
        raise GenmetricsError(f"{what}: expected a list of tag lists")
    out = []
    for i, t in enumerate(tags):
        if isinstance(t, (str, bytes, Mapping)) or not isinstance(t, Iterable):
            raise GenmetricsError(f"{what}: item {i} must be a list of tag strings")
        t = list(t)
        if not all(isinstance(x, str) for x in t):
            raise GenmetricsError(f"{what}: item {i} must be a list of tag strings")
        out.append(t)
    if not out:
        raise GenmetricsError(f"{what}: no tagged texts")
    return out


# ------------------------------------------------------------------ loaders


def _load_texts(path: Path) -> tuple[list[str], Rows]:
    from genmetrics.io import read_texts

    rows = read_texts(path, allow_empty=True)
    return [r["text"] for r in rows], rows


def _load_records(path: Path) -> tuple[Rows, Rows]:
    from genmetrics.io import read_texts

    rows = read_texts(path, allow_empty=True)
    return rows, rows


def _feature_rows(links: Mapping[str, np.ndarray], n: int) -> Rows:
    """Row ids of a feature file (rows without ``id`` when it stores no ``ids``: they cannot
    be paired by id), with ``prompt_id`` when the file has ``prompt_ids`` (the io readers have
    checked both have one entry per row)."""
    if "ids" in links:
        rows: Rows = [{"id": str(i)} for i in links["ids"]]
    else:
        rows = [{} for _ in range(n)]
    if "prompt_ids" in links:
        for r, p in zip(rows, links["prompt_ids"], strict=True):
            r["prompt_id"] = str(p)
    return rows


def _load_embeddings(path: Path) -> tuple[np.ndarray, Rows]:
    from genmetrics.npz import read_embeddings

    links, emb = read_embeddings(path)
    return emb, _feature_rows(links, emb.shape[0])


def _load_surprisal(path: Path) -> tuple[list[np.ndarray], Rows]:
    from genmetrics.npz import read_ragged

    links, seqs = read_ragged(path)
    if seqs and all(np.asarray(a).dtype.kind in "biuf" for a in seqs):
        check_surprisal_values(seqs, str(path), links.get("ids"))
    return seqs, _feature_rows(links, len(seqs))


def read_pos(path: Path) -> tuple[list[list[str]], Rows] | None:
    """The tags and rows of a ``pos`` file whose every row has ``tags`` (each checked to be a
    list of strings); None when its rows have no tags (a file of texts, which only the
    features side can tag: :func:`genmetrics.features.pos.load_pos`)."""
    from genmetrics.io import read_jsonl

    rows = read_jsonl(path)
    if not (rows and all("tags" in r for r in rows)):
        return None
    for i, r in enumerate(rows, start=1):
        t = r["tags"]
        if not isinstance(t, list) or not all(isinstance(x, str) for x in t):
            raise GenmetricsError(
                f"{path}: row {i} (id={r.get('id')!r}): 'tags' must be a list of strings"
            )
    return [list(r["tags"]) for r in rows], rows


def _load_pos(path: Path) -> tuple[list[list[str]], Rows]:
    """The ``pos`` kind's own loader reads tags only: the metric side never tags texts. A
    file of texts is tagged on load by :func:`genmetrics.features.pos.load_pos`, which the
    adapters that read files for a metric (:func:`genmetrics.scoring.from_files.load_input`) pass to
    :meth:`Kind.load`."""
    tagged = read_pos(path)
    if tagged is None:
        raise GenmetricsError(
            f"{path}: rows have no 'tags'; POS-tag the texts first "
            "(genmetrics.features.pos.load_pos tags a file of texts on load)"
        )
    return tagged


def _load_density(path: Path) -> tuple[Any, Rows]:
    from genmetrics.omniinput.curves import read_density

    return read_density(path), []


def _validate_density(d: Any, what: str) -> Any:
    from genmetrics.omniinput.curves import validate_density

    return validate_density(d, what)


@dataclass(frozen=True)
class Kind:
    """One input kind: how it is stored, loaded, checked and where the workflow writes it."""

    name: str
    suffix: str
    loader: Callable[[Path], tuple[Any, Rows]]
    validator: Callable[[Any, str], Any]
    result: str  # the ResultPaths field of the workflow's file ("texts": a source's rows)
    config_key: str | None = None

    def path(
        self,
        dataset: str,
        source: str,
        part: str = "text",
        results: ResultPaths = RESULTS,
        **keys: str,
    ) -> str:
        """The workflow file of this kind for one (dataset, source[, part]) under ``results``."""
        if self.result == "texts":
            return results.texts(dataset, source)
        if part != "text" and source != "prompts":
            source = f"{source}.{part}"
        pattern = getattr(results, self.result).replace("{run}", "{dataset}")
        return pattern.format(dataset=dataset, source=source, **keys)

    def load(
        self,
        path: str | Path,
        what: str,
        loader: Callable[[Path], tuple[Any, Rows]] | None = None,
    ) -> tuple[Any, Rows]:
        """Read ``path`` as this kind and validate it; every error names the file (``what``:
        ``candidate`` or ``reference``). ``loader``: instead of the kind's own (same checks
        before and after), e.g. one that computes the kind from texts on load."""
        from genmetrics.io import regular_file

        path = Path(path)
        if path.suffix != self.suffix:
            raise GenmetricsError(f"{path}: {what} must be a {self.suffix} file of {self.name}")
        regular_file(path, what)
        data, rows = (loader or self.loader)(path)
        return self.validator(data, f"{path} ({what})"), rows


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind("texts", ".jsonl", _load_texts, validate_texts, "texts"),
        Kind("records", ".jsonl", _load_records, validate_records, "texts"),
        Kind(
            "embeddings",
            ".npz",
            _load_embeddings,
            validate_embeddings,
            "embeddings",
            "featurizer",
        ),
        Kind(
            "surprisal",
            ".npz",
            _load_surprisal,
            validate_surprisal,
            "surprisal",
            "evaluator",
        ),
        Kind(
            "pos",
            ".jsonl",
            _load_pos,
            validate_pos,
            "pos",
        ),
        # an annotated density of states over a model's input space (OmniInput, Liu et al.):
        # {dataset} is the omniinput run; not a text source
        Kind(
            "density",
            ".npz",
            _load_density,
            _validate_density,
            "omni_density",  # {run} read as {dataset}
        ),
    )
}

#: kinds whose rows carry texts (every score on them reports ``mean_words``)
TEXT_KINDS = ("texts", "records", "pos")

#: how texts become a kind that is not texts: the library function that makes it, and the
#: ``genmetrics score`` option naming the model that does it on the fly (the kind's
#: ``config_key``; None: the command line does it on load, with no model to name)
FROM_TEXTS: dict[str, tuple[str, str | None]] = {
    "embeddings": ("genmetrics.features.embed.embed_texts", "featurizer"),
    "surprisal": ("genmetrics.features.surprisal.surprisal_texts", "evaluator"),
    "pos": ("genmetrics.features.pos.tag_texts", None),
}


def kind(name: str) -> Kind:
    try:
        return KINDS[name]
    except KeyError:
        raise GenmetricsError(f"unknown input kind {name!r}; known: {', '.join(KINDS)}") from None


#: how a paired metric matches candidates with references (:func:`pair_rows`)
PAIR_BY = ("id", "position")
#: the fields of a row that link it to another row (ids: strings or integers)
LINK_FIELDS = ("prompt_id", "source_id")


def _missing(rows: Sequence[Mapping[str, Any]], key: str) -> tuple[int, int]:
    """How many rows lack ``key`` (or have it null), and the first such row (1-based)."""
    bad = [i for i, r in enumerate(rows, start=1) if r.get(key) is None]
    return len(bad), (bad[0] if bad else 0)


def pair_rows(
    ref_rows: Sequence[Mapping[str, Any]],
    cand_rows: Sequence[Mapping[str, Any]],
    where: str,
    by: str = "id",
) -> tuple[list[int], list[int]]:
    """Indices pairing each candidate with its reference.

    ``by="id"`` (the default): by candidate ``prompt_id`` (or ``source_id``) → reference
    ``id`` when every candidate row has one (a generation and its prompt: references no
    candidate names are left out, and counted by the caller); else by candidate ``id`` →
    reference ``id``, and then the two sets must hold the same ids. Rows without the id they
    are paired by are an error (ids are never made up from line numbers, which would pair by
    position again). ``by="position"``: line by line, only when asked for, with equal counts.

    Nothing is paired silently: a duplicate id, a candidate whose link matches no reference,
    or id sets that differ is an error naming ``where``, how many and the first.
    """
    if by not in PAIR_BY:
        raise GenmetricsError(f"{where}: pair_by must be one of {', '.join(PAIR_BY)}, got {by!r}")
    if by == "position":
        if len(ref_rows) != len(cand_rows):
            raise GenmetricsError(
                f"{where}: pairing by position needs equal counts ({len(ref_rows)} references "
                f"vs {len(cand_rows)} candidates)"
            )
        return list(range(len(ref_rows))), list(range(len(cand_rows)))
    hint = "add ids to both files, or pair line by line with --pair-by position"
    link = next((k for k in LINK_FIELDS if cand_rows and all(k in r for r in cand_rows)), None)
    partial = next((k for k in LINK_FIELDS if any(k in r for r in cand_rows)), None)
    if link is None and partial is not None:
        n, first = _missing(cand_rows, partial)
        raise GenmetricsError(
            f"{where}: {n} of {len(cand_rows)} candidate row(s) have no {partial}, first row "
            f"{first}; give every candidate its {partial}"
        )
    key = link or "id"
    for role, rows, field in (("candidate", cand_rows, key), ("reference", ref_rows, "id")):
        n, first = _missing(rows, field)
        if n:
            raise GenmetricsError(
                f"{where}: a paired metric pairs by id, but {n} of {len(rows)} {role} row(s) "
                f"have no {field!r}, first row {first}; {hint}"
            )
    ids = [str(r["id"]) for r in ref_rows]
    dup = [i for i, c in Counter(ids).items() if c > 1]
    if dup:
        raise GenmetricsError(f"{where}: reference id {dup[0]!r} occurs more than once")
    keys = [str(r[key]) for r in cand_rows]
    if link is None:
        dup = [i for i, c in Counter(keys).items() if c > 1]
        if dup:
            raise GenmetricsError(f"{where}: candidate id {dup[0]!r} occurs more than once")
    pos = {i: n for n, i in enumerate(ids)}
    missing = [k for k in keys if k not in pos]
    if missing:
        raise GenmetricsError(
            f"{where}: {len(missing)} of {len(keys)} candidate(s) whose {key} matches no "
            f"reference id, first {missing[0]!r}; {hint}"
        )
    if link is None and len(keys) != len(ids):
        named = set(keys)
        extra = [i for i in ids if i not in named]
        raise GenmetricsError(
            f"{where}: the candidate and reference ids differ: {len(extra)} of {len(ids)} "
            f"reference id(s) have no candidate, first {extra[0]!r}"
        )
    return [pos[k] for k in keys], list(range(len(cand_rows)))


def link_groups(
    ref_rows: Sequence[Mapping[str, Any]], cand_rows: Sequence[Mapping[str, Any]], where: str
) -> list[list[int]] | None:
    """For each candidate, the indices of every reference written for the same prompt; None
    when the two sets share no prompt (the metric then compares sets).

    A candidate's link is its ``prompt_id`` (or ``source_id``); a reference's is its own
    ``prompt_id``/``source_id`` when every reference row has one (several human references
    per prompt), else its ``id``. Nothing is paired silently: when some candidates find
    their references and others do not, the error names ``where``, the count and the first.
    """
    link = next((k for k in ("prompt_id", "source_id") if all(k in r for r in cand_rows)), None)
    if link is None or not ref_rows:
        return None
    ref_link = next((k for k in ("prompt_id", "source_id") if all(k in r for r in ref_rows)), "id")
    by_key: dict[str, list[int]] = {}
    for j, r in enumerate(ref_rows):
        by_key.setdefault(str(r.get(ref_link)), []).append(j)
    groups = [by_key.get(str(r[link]), []) for r in cand_rows]
    missing = [str(r[link]) for r, g in zip(cand_rows, groups, strict=True) if not g]
    if len(missing) == len(groups):
        return None
    if missing:
        raise GenmetricsError(
            f"{where}: {len(missing)} of {len(groups)} candidate(s) have a {link} that matches "
            f"no reference {ref_link}, first {missing[0]!r}; the others do, so the sets look "
            "meant to be paired"
        )
    return groups
