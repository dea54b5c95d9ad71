"""Analyses of the distribution metrics: seed spread, N and k sweeps, controlled AG-News sets.

* :func:`spread` — variability of a metric over generation seeds and reference resamples
  (Le Bronnec et al. 2024, Table B.4): vary Q with P fixed, vary P with Q fixed, vary both;
  mean and standard deviation of every value. :func:`spread_analysis` is one workflow spread
  job (reference resamples included) and :func:`spread_table` collects them into
  ``results/spread.csv``, on the headline table's terms (value names, the tables' scale, text
  sizes; see :func:`spread_table` for how its numbers relate to the headline's).
* :func:`sweep_n` / :func:`sweep_k` — k-NN precision/recall/density/coverage as a function of
  the sample size N (subsamples of both sets) and of the neighbourhood size k (Fig. 6 / B.1),
  as tidy rows; :func:`sweep_table` is one workflow sweep job.
* :func:`agnews_controlled_sets` / :func:`controlled_experiment` — the label-controlled check
  that the metrics measure what they claim: P = World + Sports; Q1 = World only (drops a mode:
  recall falls), Q2 = World + Sports with other texts (the matched control), Q3 = all four
  topics (adds modes outside P: precision falls).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from genmetrics import GenmetricsError

PR_VALUES = ("precision", "recall", "density", "coverage")
AGNEWS_LABELS = {0: "World", 1: "Sports", 2: "Business", 3: "Sci/Tech"}

MetricLike = str | Callable[..., Any]


# --------------------------------------------------------------------------- running metrics


def run_metric(
    metric: MetricLike, reference: Any, candidate: Any, params: Mapping[str, Any] | None = None
) -> dict[str, float]:
    """Values of ``metric`` (a registered name, or a callable taking ``reference=``,
    ``candidate=`` and the params and returning a MetricResult or a dict)."""
    if isinstance(metric, str):
        from genmetrics.metrics import compute

        out = compute(metric, candidate, reference, params)
    else:
        out = metric(reference=reference, candidate=candidate, **dict(params or {}))
    values = out.values if hasattr(out, "values") and not isinstance(out, Mapping) else out
    return {k: float(v) for k, v in dict(values).items()}


def resample(pool: Any, n: int, num: int, *, seed: int = 0) -> list[Any]:
    """``num`` subsamples of ``n`` rows of ``pool`` without replacement (run i uses seed + i).

    Works for arrays (rows) and lists (items); returns the same kind.
    """
    size = len(pool)
    if not 1 <= n <= size:
        raise GenmetricsError(f"cannot draw {n} items from a pool of {size}")
    out = []
    for i in range(int(num)):
        idx = np.sort(np.random.default_rng(seed + i).choice(size, size=n, replace=False))
        out.append(pool[idx] if isinstance(pool, np.ndarray) else [pool[j] for j in idx])
    return out


# --------------------------------------------------------------------------- (a) spread


def spread(
    metric: MetricLike,
    references: Sequence[Any],
    candidates: Sequence[Any],
    params: Mapping[str, Any] | None = None,
    *,
    ddof: int = 1,
) -> list[dict[str, Any]]:
    """Mean and std of each value when varying Q, P, or both (Le Bronnec et al. (2024),
    Table B.4).

    ``references``: reference sets (e.g. resamples of the human pool, :func:`resample`);
    ``candidates``: candidate sets (e.g. one per generation seed).

    - ``vary="candidate"``: P = references[0] against every candidate set;
    - ``vary="reference"``: every reference set against Q = candidates[0];
    - ``vary="both"``: pairs (references[i], candidates[i]) for i < min(len) (both change).

    Returns one row per (vary, value): ``{"vary", "value", "mean", "std", "n_runs", "runs"}``
    (``std`` with ``ddof``, default 1 = sample std; NaN for a single run).
    """
    references, candidates = list(references), list(candidates)
    if not references or not candidates:
        raise GenmetricsError("spread needs at least one reference set and one candidate set")
    plans = {
        "candidate": [(references[0], q) for q in candidates],
        "reference": [(p, candidates[0]) for p in references],
        "both": list(zip(references, candidates, strict=False)),
    }
    rows: list[dict[str, Any]] = []
    cache: dict[tuple[int, int], dict[str, float]] = {}
    for vary, pairs in plans.items():
        runs: list[dict[str, float]] = []
        for p, q in pairs:
            key = (id(p), id(q))
            if key not in cache:
                cache[key] = run_metric(metric, p, q, params)
            runs.append(cache[key])
        for name in runs[0]:
            vals = np.array([r[name] for r in runs], dtype=np.float64)
            std = float(np.std(vals, ddof=ddof)) if len(vals) > ddof else float("nan")
            rows.append(
                {
                    "vary": vary,
                    "value": name,
                    "mean": float(vals.mean()),
                    "std": std,
                    "n_runs": len(vals),
                    "runs": vals.tolist(),
                }
            )
    return rows


def spread_analysis(
    metric: MetricLike,
    reference: np.ndarray | None,
    candidates: Sequence[np.ndarray],
    params: Mapping[str, Any] | None,
    settings: Mapping[str, Any],
    *,
    draws: Sequence[tuple[Sequence[str], np.ndarray]] | None = None,
    pool: int | None = None,
) -> dict[str, Any]:
    """One spread job: Q = one candidate set per generation seed; P = the reference sets of
    ``settings["references"]``, then :func:`spread` over them.

    * ``subsample`` (the default): ``settings["reference_resamples"]`` subsamples (without
      replacement, seeds ``settings["seed"]`` + i) of ``fraction`` of ``reference``, the
      entry's reference features; the sets share most of their texts.
    * ``redraw``: ``draws``, (ids, features) of each reference set the workflow drew again
      from the dataset's cleaned pool of ``pool`` texts (its sample seed ``seed`` + i), as the
      P/R paper's code draws its reference sets (Le Bronnec et al. (2024), Table B.4:
      ``ref_dataset.shuffle(seed=ref_seed).select(range(N))``).

    Returns ``{"reference_size", "reference_pool", "reference_sets", "reference_overlap",
    "seeds", "candidate_sizes", "settings", "rows"}`` (``reference_overlap``: the mean share of
    texts two reference sets have in common; ``candidate_sizes``: the texts of each seed's
    set, in order).
    """
    scheme = settings.get("references", "subsample")
    num, seed = int(settings["reference_resamples"]), int(settings["seed"])
    if scheme == "redraw":
        if not draws or len(draws) != num:
            raise GenmetricsError(
                f"spread: references: redraw needs {num} reference draws, got {len(draws or [])}"
            )
        refs = [np.asarray(emb) for _, emb in draws]
        id_sets = [set(map(str, ids)) for ids in (d[0] for d in draws)]
        n, pool_size = len(refs[0]), pool
    elif scheme == "subsample":
        if reference is None:
            raise GenmetricsError("spread: references: subsample needs the reference features")
        n = int(round(float(settings["fraction"]) * len(reference)))
        rows = resample(np.arange(len(reference)), n, num, seed=seed)  # the rows of each set
        refs = [reference[ix] for ix in rows]
        id_sets = [set(map(int, ix)) for ix in rows]
        pool_size = len(reference)
    else:
        raise GenmetricsError(f"spread: references must be subsample or redraw, not {scheme!r}")
    return {
        "reference_size": n,
        "reference_pool": pool_size,
        "reference_sets": scheme,
        "reference_overlap": mean_overlap(id_sets),
        "seeds": len(candidates),
        "candidate_sizes": [len(c) for c in candidates],
        "settings": dict(settings),
        "rows": spread(metric, refs, candidates, params),
    }


def cleaned_pool(stats: Mapping[str, int]) -> int:
    """The texts a cleaning's sample was drawn from, from its ``clean_stats`` counts
    (:func:`genmetrics.data.clean.clean_rows`): the input less every row dropped."""
    dropped = ("filtered", "empty", "duplicate", "too_short", "too_long")
    return int(stats["input"]) - sum(int(stats.get(k, 0)) for k in dropped)


def mean_overlap(sets: Sequence[set]) -> float | None:
    """The mean over pairs of sets of ``|A ∩ B| / min(|A|, |B|)`` (None for fewer than two)."""
    pairs = [(a, b) for i, a in enumerate(sets) for b in sets[i + 1 :]]
    if not pairs:
        return None
    return float(np.mean([len(a & b) / max(1, min(len(a), len(b))) for a, b in pairs]))


SPREAD_COLUMNS = ["dataset", "model", "entry", "metric", "value_name", "headline", "scale"]
SPREAD_COLUMNS += ["vary", "over", "mean", "std", "n_runs"]
SPREAD_COLUMNS += ["n_candidate", "n_reference", "reference_pool"]
SPREAD_COLUMNS += ["reference_sets", "reference_overlap"]
#: what the mean and std of each ``vary`` mode are over (``spread.csv``'s ``over`` column)
SPREAD_OVER = {
    "candidate": "generation seeds, each against reference set 0 (n_reference texts; the "
    "headline: the same seeds against the dataset's references)",
    "reference": "reference sets of n_reference texts ({how}), each against the first seed's texts",
    "both": "pairs (seed i, reference set i)",
}
#: how a spread record's reference sets were drawn (``spread.csv``'s ``reference_sets``)
REFERENCE_SETS = {
    "subsample": "subsamples of the reference_pool texts, the dataset's references",
    "redraw": "independent draws from the reference_pool texts, the dataset's cleaned pool",
}


def spread_table(records: Iterable[Mapping[str, Any]]):
    """``results/spread.csv`` from spread records (:func:`spread_analysis` with ``dataset``,
    ``model``, ``entry``, ``metric``): one row per (dataset, model, entry, vary mode, value),
    columns :data:`SPREAD_COLUMNS`.

    Its relation to the headline table (:mod:`genmetrics.analysis.headline`): the same entry
    and value names (``value_name``; ``headline``: the value is a headline column), the same
    scale convention (a proportion 0–1: mean and std divided where the metric reports % or
    0–100; ``scale``) and the same std (ddof=1); ``over`` says what the mean and std run over
    (:data:`SPREAD_OVER`). The headline averages each seed scored against every reference
    text; a subsample run compares ``n_reference`` of them (a resample of ``fraction`` of the
    pool; kNN radii grow on fewer texts), so its mean differs from the headline's unless
    ``fraction`` is 1; a redraw run compares other sets of as many texts, drawn from the
    dataset's cleaned pool (``reference_pool``). ``reference_sets`` says which
    (:data:`REFERENCE_SETS`), ``reference_overlap`` the mean share of texts two of its sets
    have in common. ``n_candidate``: the fewest texts of a seed in the runs; records written
    before it was kept leave it empty."""
    import pandas as pd

    from genmetrics.analysis.headline import is_headline
    from genmetrics.analysis.units import table_scale

    rows = []
    for rec in records:
        sizes = list(rec.get("candidate_sizes") or [])
        # records written before redraw was offered are subsamples
        scheme = rec.get("reference_sets", "subsample")
        metric = rec.get("metric", rec["entry"])
        for r in rec["rows"]:
            scale, factor = table_scale(metric, r["value"])
            # the seeds a mode's runs use: the first (vary P), else the first n_runs
            n = sizes[:1] if r["vary"] == "reference" else sizes[: int(r["n_runs"])]
            rows.append(
                {
                    "dataset": rec["dataset"],
                    "model": rec["model"],
                    "entry": rec["entry"],
                    "metric": metric,
                    "value_name": r["value"],
                    "headline": is_headline(metric, r["value"]),
                    "scale": scale,
                    "vary": r["vary"],
                    "over": SPREAD_OVER.get(r["vary"], r["vary"]).format(
                        how=REFERENCE_SETS.get(scheme, scheme)
                    ),
                    "mean": _number(r["mean"]) * factor,
                    "std": _number(r["std"]) * factor,  # NaN (JSON null) for one run
                    "n_runs": r["n_runs"],
                    "n_candidate": min(n) if n else None,
                    "n_reference": rec.get("reference_size"),
                    "reference_pool": rec.get("reference_pool"),
                    "reference_sets": scheme,
                    "reference_overlap": rec.get("reference_overlap"),
                }
            )
    out = pd.DataFrame(rows, columns=SPREAD_COLUMNS)
    for c in ("n_candidate", "n_reference", "reference_pool"):
        out[c] = out[c].astype("Int64")
    return out


def _number(x: Any) -> float:
    return float("nan") if x is None else float(x)


# --------------------------------------------------------------------------- (b) sweeps


def default_ns(n_max: int, start: int = 100) -> list[int]:
    """100, 200, 500, 1000, 2000, 5000, … below ``n_max``, then ``n_max`` itself."""
    ns, base = [], 1
    while True:
        for m in (1, 2, 5):
            v = start * base * m
            if v >= n_max:
                return sorted(set(ns + [n_max]))
            ns.append(v)
        base *= 10


def sweep_n(
    reference: np.ndarray,
    candidate: np.ndarray,
    ns: Iterable[int] | None = None,
    *,
    k: int = 4,
    pca: Any = 0.9,
    strict: bool = True,
    method: str = "exact",
    seed: int = 0,
    repeats: int = 1,
) -> list[dict[str, Any]]:
    """P/R/D/C as a function of the sample size N (Le Bronnec et al. (2024), Fig. 6 / B.1).

    For each N and repeat r, both sets are subsampled to N rows (without replacement, seed
    ``seed + r``; the full set when N equals its size) and the metric is computed as the
    registered ``precision_recall`` would be on those N texts (PCA refitted on the subsample).
    Rows: ``{"n", "k", "repeat", "precision", "recall", "density", "coverage"}``.
    """
    from genmetrics.metrics.precision_recall import prdc_for_ks

    reference = np.asarray(reference)
    candidate = np.asarray(candidate)
    n_max = min(len(reference), len(candidate))
    ns = default_ns(n_max) if ns is None else sorted({int(n) for n in ns})
    if not ns or ns[0] < k + 1 or ns[-1] > n_max:
        raise GenmetricsError(f"sample sizes must lie in [{k + 1}, {n_max}], got {ns}")
    rows = []
    for n in ns:
        for r in range(int(repeats)):
            p = _subsample(reference, n, seed + r)
            q = _subsample(candidate, n, seed + r + 10_000)
            vals = prdc_for_ks(p, q, [k], pca=pca, strict=strict, method=method, seed=seed)[k]
            rows.append({"n": n, "k": k, "repeat": r, **vals})
    return rows


def sweep_k(
    reference: np.ndarray,
    candidate: np.ndarray,
    ks: Iterable[int] = range(1, 31),
    *,
    pca: Any = 0.9,
    strict: bool = True,
    method: str = "exact",
    seed: int = 0,
) -> list[dict[str, Any]]:
    """P/R/D/C for every k (default 1…30) on the full sets: PCA, radii and the distance pass
    are shared by all k. Rows: ``{"k", "n_reference", "n_candidate", "precision", …}``."""
    from genmetrics.metrics.precision_recall import prdc_for_ks

    ks = sorted({int(k) for k in ks})
    out = prdc_for_ks(reference, candidate, ks, pca=pca, strict=strict, method=method, seed=seed)
    n_p, n_q = len(reference), len(candidate)
    return [{"k": k, "n_reference": n_p, "n_candidate": n_q, **out[k]} for k in ks]


def sweep_table(
    reference: np.ndarray,
    candidate: np.ndarray,
    settings: Mapping[str, Any],
    *,
    source: str,
):
    """One sweep job: :func:`sweep_n` (``settings["ns"]``, ``repeats``; k = the entry's k) and
    :func:`sweep_k` (``settings["ks"]``) with the entry's ``pca``, ``strict`` and ``seed``
    (``settings["params"]``), as one table with columns ``source``, ``sweep`` (n | k), ...

    One list of N serves every source of a config, and sources differ in size: the N of
    ``settings["ns"]`` above the smaller set are left out and that set's size is swept in
    their place (:func:`sweep_sizes`), so each source is swept as far as its texts go.
    """
    import pandas as pd

    params = settings["params"]
    p = {k: params[k] for k in ("pca", "strict", "seed")}
    ns = sweep_sizes(settings["ns"], min(len(reference), len(candidate)))
    rows_n = sweep_n(reference, candidate, ns, k=params["k"], repeats=settings["repeats"], **p)
    rows_k = sweep_k(reference, candidate, settings["ks"], **p)
    df = pd.concat([pd.DataFrame(rows_n).assign(sweep="n"), pd.DataFrame(rows_k).assign(sweep="k")])
    df.insert(0, "source", source)
    return df.reset_index(drop=True)


def sweep_sizes(ns: Iterable[int] | None, n_max: int) -> list[int] | None:
    """The N of ``ns`` a sweep can run on sets of ``n_max`` texts: those up to ``n_max``,
    and ``n_max`` itself in place of any above it (``None``, the default sizes, stays)."""
    if ns is None:
        return None
    ns = sorted({int(n) for n in ns})
    kept = [n for n in ns if n <= n_max]
    return kept + [n_max] if len(kept) < len(ns) and n_max not in kept else kept


def _subsample(x: np.ndarray, n: int, seed: int) -> np.ndarray:
    if n == len(x):
        return x
    idx = np.sort(np.random.default_rng(seed).choice(len(x), size=n, replace=False))
    return x[idx]


# --------------------------------------------------------------------------- (c) AG News


def agnews_controlled_sets(
    records: Sequence[Mapping[str, Any]],
    n: int,
    *,
    seed: int = 0,
    reference_labels: Sequence[int] = (0, 1),
) -> dict[str, list[str]]:
    """Build the controlled sets from AG-News rows (``label`` 0-3, ``text``).

    - ``P``: ``n`` texts, balanced over ``reference_labels`` (World + Sports);
    - ``Q1``: ``n`` texts of the first reference label only (World): same support, one mode
      missing → recall should fall;
    - ``Q2``: ``n`` other texts balanced over the reference labels: the matched control;
    - ``Q3``: ``n`` texts balanced over all four labels: half the mass outside P → precision
      should fall.

    All sets are disjoint and free of duplicate texts; draws are seeded.
    """
    by_label: dict[int, list[str]] = {}
    seen: set[str] = set()
    for i, row in enumerate(records):
        if "label" not in row or "text" not in row:
            raise GenmetricsError(f"record {i} lacks 'label' or 'text'")
        text = str(row["text"]).strip()
        if not text or text in seen:
            continue
        seen.add(text)
        by_label.setdefault(int(row["label"]), []).append(text)
    labels = sorted(by_label)
    ref_labels = [int(x) for x in reference_labels]
    if any(lab not in by_label for lab in ref_labels) or len(labels) < 3:
        raise GenmetricsError(f"records need labels {ref_labels} and at least one other label")
    rng = np.random.default_rng(seed)
    pools = {lab: [by_label[lab][i] for i in rng.permutation(len(by_label[lab]))] for lab in labels}

    def take(lab: int, m: int) -> list[str]:
        if len(pools[lab]) < m:
            raise GenmetricsError(
                f"not enough texts with label {lab} ({AGNEWS_LABELS.get(lab, lab)}) for n={n}"
            )
        out, pools[lab] = pools[lab][:m], pools[lab][m:]
        return out

    def balanced(labs: Sequence[int]) -> list[str]:
        sizes = [n // len(labs) + (1 if i < n % len(labs) else 0) for i in range(len(labs))]
        texts = [t for lab, m in zip(labs, sizes, strict=True) for t in take(lab, m)]
        return [texts[i] for i in rng.permutation(len(texts))]

    sets = {"P": balanced(ref_labels)}
    sets["Q1"] = take(ref_labels[0], n)
    sets["Q2"] = balanced(ref_labels)
    sets["Q3"] = balanced(labels)
    return sets


#: (value, set expected lower, set expected higher) for the controlled AG-News experiment
AGNEWS_EXPECTED = (("recall", "Q1", "Q2"), ("precision", "Q3", "Q2"))


def controlled_experiment(
    embeddings: Mapping[str, np.ndarray],
    metrics: Mapping[str, Mapping[str, Any] | None] | None = None,
    *,
    reference: str = "P",
) -> list[dict[str, Any]]:
    """Score every set against ``embeddings[reference]``; tidy rows
    ``{"set", "metric", "value", "score"}``. ``metrics`` maps registered names to params
    (default: ``precision_recall`` with its defaults)."""
    if reference not in embeddings:
        raise GenmetricsError(f"no embeddings for the reference set {reference!r}")
    metrics = metrics or {"precision_recall": None}
    rows = []
    for name, emb in embeddings.items():
        if name == reference:
            continue
        for metric, params in metrics.items():
            for value, score in run_metric(metric, embeddings[reference], emb, params).items():
                rows.append({"set": name, "metric": metric, "value": value, "score": score})
    return rows


def check_orderings(
    rows: Sequence[Mapping[str, Any]],
    expected: Sequence[tuple[str, str, str]] = AGNEWS_EXPECTED,
    *,
    margin: float = 0.0,
) -> list[str]:
    """Violations of ``score(value, low) + margin < score(value, high)``; empty when all hold."""
    score = {(r["value"], r["set"]): float(r["score"]) for r in rows}
    problems = []
    for value, low, high in expected:
        if (value, low) not in score or (value, high) not in score:
            problems.append(f"{value}: missing {low} or {high}")
            continue
        a, b = score[(value, low)], score[(value, high)]
        if not a + margin < b:
            problems.append(
                f"{value}({low})={a:.3f} is not below {value}({high})={b:.3f} - {margin}"
            )
    return problems


def sweep_means(df: Any) -> Any:
    """What the sweep figure shows, from :func:`sweep_table`'s rows: per sweep axis (``n``:
    N grows, k fixed; ``k``: k grows), source and value of N or k, the mean precision and
    recall over the runs there (seeds × subsample repeats), their range over those runs
    (``*_min``, ``*_max``), the number of runs, and the other axis' value (``other``: the
    fixed k of the N sweep; the N of the k sweep, the smaller set's size)."""
    import pandas as pd

    cols = ["sweep", "source", "value", "precision", "recall", "runs", "other"]
    cols += ["precision_min", "precision_max", "recall_min", "recall_max"]
    parts = []
    for axis, other in (("n", "k"), ("k", "n")):
        d = df[df["sweep"] == axis]
        if other == "n" and "n_reference" in d:  # sweep_k's rows: the smaller set's size
            d = d.assign(n=d[["n_reference", "n_candidate"]].min(axis=1))
        g = d.groupby(["source", axis])
        part = g[["precision", "recall"]].mean()
        for value in ("precision", "recall"):
            part[f"{value}_min"] = g[value].min()
            part[f"{value}_max"] = g[value].max()
        part["runs"] = g.size()
        part["other"] = g[other].max()
        parts.append(part.reset_index().rename(columns={axis: "value"}).assign(sweep=axis))
    return pd.concat(parts, ignore_index=True)[cols]
