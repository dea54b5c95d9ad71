"""Agreement of a metric with pairwise human preferences (FACE-2, Liu et al., §5.3).

* :func:`bradley_terry` — Bradley–Terry log-strengths θ from (system_a, system_b, outcome)
  comparisons, fitted by the MM algorithm of Hunter (2004) (Zermelo's iteration),
  P(i beats j) = 1 / (1 + exp(θ_j − θ_i)), normalised so that mean(θ) = 0.
* :func:`metric_judgments` — which of two texts a metric prefers, item by item.
* :func:`agreement` — human and metric Bradley–Terry strengths, their Spearman/Kendall
  correlation (with a bootstrap CI), and item-level agreement of the metric with the human
  majority (with a bootstrap CI).
* :func:`pairwise_agreement` — :func:`agreement` of every metric value with the raters of an
  A/B judgment set (:class:`~genmetrics.agreement.judgment_sets.PairwiseJudgments`), per
  group of items and over all; also used by FACE's human A/B test (:func:`face_judgments`).

Outcomes are ``"a"`` (system_a preferred), ``"b"`` (system_b preferred) or ``"tie"``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from genmetrics import GenmetricsError
from genmetrics.agreement.judgment_sets import PairwiseJudgments
from genmetrics.analysis.statistics import bootstrap_indices, percentile_interval

OUTCOMES = ("a", "b", "tie")
TIES = ("half", "drop")


def _check_outcome(outcome: Any, where: str) -> str:
    if not isinstance(outcome, str) or outcome not in OUTCOMES:
        raise GenmetricsError(f"{where}: outcome {outcome!r} is not one of 'a', 'b', 'tie'")
    return outcome


def _components(adj: np.ndarray, names: list[str], strong: bool) -> list[list[str]]:
    n, labels = connected_components(
        csr_matrix(adj), directed=strong, connection="strong" if strong else "weak"
    )
    comps = [sorted(names[i] for i in np.flatnonzero(labels == c)) for c in range(n)]
    return sorted(comps)


def bradley_terry(
    comparisons: Sequence[tuple[str, str, str]],
    *,
    ties: str = "half",
    alpha: float = 0.0,
    max_iter: int = 10000,
    tol: float = 1e-12,
) -> dict[str, float]:
    """Bradley–Terry log-strengths θ (mean 0), keyed by system name (sorted).

    Maximum likelihood by Hunter's (2004) MM / Zermelo iteration, all systems at once:
    p_i ← W_i / Σ_{j≠i} n_ij / (p_i + p_j), then rescaled so that mean(log p) = 0;
    stops when max |Δθ| < ``tol``. W_i = wins of i, n_ij = comparisons counted between i, j.

    ``ties="half"``: a tie is half a win for each side (it counts in n_ij);
    ``ties="drop"``: ties are ignored. ``alpha`` ≥ 0 adds alpha wins each way to every pair
    with at least one counted comparison (a pseudo-count; keeps strengths finite).

    Raises GenmetricsError for an unknown outcome, a comparison graph that is not connected
    (strengths of different components are not comparable), or, with ``alpha == 0``, data
    where the MLE does not exist (Ford 1957: some group of systems never loses to the rest,
    e.g. a system that never wins or never loses).
    """
    if ties not in TIES:
        raise GenmetricsError(f"bradley_terry: ties={ties!r} is not one of 'half', 'drop'")
    if not (np.isfinite(alpha) and alpha >= 0):
        raise GenmetricsError(f"bradley_terry: alpha must be finite and >= 0, got {alpha!r}")
    if max_iter < 1 or not (tol > 0):
        raise GenmetricsError(
            f"bradley_terry: need max_iter >= 1 and tol > 0 (got {max_iter}, {tol})"
        )
    if isinstance(comparisons, str):
        raise GenmetricsError("bradley_terry: expected a sequence of (a, b, outcome) tuples")
    rows = list(comparisons)
    if not rows:
        raise GenmetricsError("bradley_terry: no comparisons")
    for i, row in enumerate(rows):
        if isinstance(row, str) or len(row) != 3:
            raise GenmetricsError(f"comparisons[{i}]: expected (system_a, system_b, outcome)")
        a, b, outcome = row
        if not isinstance(a, str) or not isinstance(b, str):
            raise GenmetricsError(
                f"comparisons[{i}]: system names must be strings, got {a!r}, {b!r}"
            )
        if a == b:
            raise GenmetricsError(f"comparisons[{i}]: system {a!r} is compared with itself")
        _check_outcome(outcome, f"comparisons[{i}]")

    names = sorted({s for a, b, _ in rows for s in (a, b)})
    index = {s: k for k, s in enumerate(names)}
    k = len(names)
    wins = np.zeros((k, k))  # wins[i, j]: times i beat j (a tie is 0.5 each way)
    for a, b, outcome in rows:
        i, j = index[a], index[b]
        if outcome == "a":
            wins[i, j] += 1.0
        elif outcome == "b":
            wins[j, i] += 1.0
        elif ties == "half":
            wins[i, j] += 0.5
            wins[j, i] += 0.5
    compared = (wins + wins.T) > 0
    wins = wins + alpha * compared

    comps = _components(compared.astype(float), names, strong=False)
    if len(comps) > 1:
        hint = " (with ties='drop', pairs compared only through ties are not linked)"
        raise GenmetricsError(
            f"bradley_terry: the comparison graph is not connected, strengths across components "
            f"are not comparable; components: {comps}" + (hint if ties == "drop" else "")
        )
    total_wins = wins.sum(axis=1)
    if alpha == 0:
        losses = wins.sum(axis=0)
        never_wins = [names[s] for s in range(k) if total_wins[s] == 0]
        never_loses = [names[s] for s in range(k) if losses[s] == 0]
        if never_wins or never_loses:
            what = "; ".join(
                f"{label}: {', '.join(repr(x) for x in group)}"
                for label, group in (("never wins", never_wins), ("never loses", never_loses))
                if group
            )
            raise GenmetricsError(
                f"bradley_terry: the maximum-likelihood strengths do not exist (they diverge) "
                f"because some system {what}; pass alpha > 0 to regularise"
            )
        strong = _components((wins > 0).astype(float), names, strong=True)
        if len(strong) > 1:
            raise GenmetricsError(
                "bradley_terry: the maximum-likelihood strengths do not exist: some group of "
                f"systems never loses to the others (strongly connected groups: {strong}); "
                "pass alpha > 0 to regularise"
            )

    n = wins + wins.T
    theta = np.zeros(k)
    p = np.ones(k)
    for _ in range(max_iter):
        denom = (n / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.log(total_wins / denom)
        new -= new.mean()
        change = np.max(np.abs(new - theta))
        theta, p = new, np.exp(new)
        if change < tol:
            return {s: float(t) for s, t in zip(names, theta, strict=True)}
    raise GenmetricsError(
        f"bradley_terry: MM did not converge in max_iter={max_iter} iterations "
        f"(last max |Δθ| = {change:.3g} >= tol={tol}); raise max_iter or tol, or use alpha > 0"
    )


def metric_judgments(
    distances_a: Sequence[float],
    distances_b: Sequence[float],
    *,
    higher_is_better: bool,
    tie_tol: float = 0.0,
) -> list[str]:
    """Per item, the text the metric prefers: ``"a"``, ``"b"`` or ``"tie"``.

    ``"tie"`` when |v_a − v_b| ≤ ``tie_tol``; otherwise the better value wins: the higher one
    when ``higher_is_better`` (similarity to human text), the lower one otherwise (distance).
    """
    a = np.asarray(distances_a, dtype=float)
    b = np.asarray(distances_b, dtype=float)
    if a.ndim != 1 or a.shape != b.shape:
        raise GenmetricsError(
            f"metric_judgments: need two 1-d sequences of equal length, got shapes {a.shape}, {b.shape}"
        )
    if not (np.isfinite(tie_tol) and tie_tol >= 0):
        raise GenmetricsError(f"metric_judgments: tie_tol must be finite and >= 0, got {tie_tol!r}")
    bad = np.flatnonzero(~(np.isfinite(a) & np.isfinite(b)))
    if bad.size:
        raise GenmetricsError(f"metric_judgments: item {int(bad[0])} has a non-finite value")
    sign = 1.0 if higher_is_better else -1.0
    out = []
    for va, vb in zip(a, b, strict=True):
        if abs(va - vb) <= tie_tol:
            out.append("tie")
        else:
            out.append("a" if sign * (va - vb) > 0 else "b")
    return out


def _majority(votes: Sequence[str]) -> str:
    n_a, n_b = votes.count("a"), votes.count("b")
    return "a" if n_a > n_b else "b" if n_b > n_a else "tie"


def _rank_corr(h: dict[str, float], m: dict[str, float]) -> tuple[float, float] | None:
    names = sorted(h)
    x = np.array([h[s] for s in names])
    y = np.array([m[s] for s in names])
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return None
    return float(stats.spearmanr(x, y).statistic), float(stats.kendalltau(x, y).statistic)


def _percentile_ci(values: np.ndarray, level: float) -> tuple[float, float]:
    lo, hi = percentile_interval(values, level)
    return float(lo), float(hi)


def agreement(
    items: Sequence[tuple[str, str]],
    human: Sequence[Sequence[str]],
    metric: Sequence[str],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    ties: str = "half",
    alpha: float = 0.0,
) -> dict[str, Any]:
    """Agreement of a metric's pairwise judgments with human ones.

    ``items[i] = (system_a, system_b)``; ``human[i]`` = the annotators' outcomes for item i;
    ``metric[i]`` = the metric's outcome. Human Bradley–Terry strengths are fitted on every
    annotator judgment, metric strengths on one judgment per item (:func:`bradley_terry` with
    ``ties`` and ``alpha``). Returned keys:

    * ``human_bt``, ``metric_bt``, ``systems``;
    * ``spearman``, ``kendall`` (tau-b) between the two strength vectors, None with a ``note``
      when fewer than 3 systems (or constant strengths); ``spearman_ci``: percentile bootstrap
      over items (resample items, refit both BT), replicates whose fit fails or loses a
      system are skipped and counted in ``spearman_boot_skipped``;
    * ``item_agreement`` = #(metric == human majority) / #(items whose human majority is not a
      tie); the majority compares counts of "a" and "b" votes (tie votes count half each way,
      as in ``ties="half"``, so they never decide it); a metric "tie" on such an item is a
      disagreement. ``pairwise_accuracy_ci``: its percentile bootstrap CI, resampling those
      items;
    * ``n_items``, ``n_judgments`` (human), ``n_decisive_items``, ``human_majority`` (counts of
      "a", "b", "tie"), ``n_boot``, ``seed``, ``level``, ``note``.

    Randomness: ``numpy.random.default_rng(seed)``, the same seed gives the same output.
    """
    if isinstance(items, str) or isinstance(metric, str):
        raise GenmetricsError("agreement: items and metric must be sequences, not strings")
    items, human, metric = list(items), list(human), list(metric)
    if not items:
        raise GenmetricsError("agreement: no items")
    if not (len(items) == len(human) == len(metric)):
        raise GenmetricsError(
            f"agreement: items, human and metric differ in length "
            f"({len(items)}, {len(human)}, {len(metric)})"
        )
    if n_boot < 1:
        raise GenmetricsError(f"agreement: n_boot must be >= 1, got {n_boot}")
    if not 0 < level < 1:
        raise GenmetricsError(f"agreement: level must lie in (0, 1), got {level}")
    for i, (pair, votes, m) in enumerate(zip(items, human, metric, strict=True)):
        if isinstance(pair, str) or len(pair) != 2:
            raise GenmetricsError(f"items[{i}]: expected (system_a, system_b), got {pair!r}")
        if isinstance(votes, str):
            raise GenmetricsError(
                f"human[{i}]: expected a list of outcomes, got the string {votes!r}"
            )
        if len(votes) == 0:
            raise GenmetricsError(f"human[{i}]: no human judgments")
        for j, v in enumerate(votes):
            _check_outcome(v, f"human[{i}][{j}]")
        _check_outcome(m, f"metric[{i}]")
    human = [list(v) for v in human]

    def fit(idx: Sequence[int]) -> tuple[dict[str, float], dict[str, float]]:
        h = [(*items[i], v) for i in idx for v in human[i]]
        m = [(*items[i], metric[i]) for i in idx]
        return (
            bradley_terry(h, ties=ties, alpha=alpha),
            bradley_terry(m, ties=ties, alpha=alpha),
        )

    n = len(items)
    try:
        human_bt = bradley_terry(
            [(*items[i], v) for i in range(n) for v in human[i]], ties=ties, alpha=alpha
        )
    except GenmetricsError as e:
        raise GenmetricsError(f"agreement: human judgments: {e}") from e
    try:
        metric_bt = bradley_terry(
            [(*items[i], metric[i]) for i in range(n)], ties=ties, alpha=alpha
        )
    except GenmetricsError as e:
        raise GenmetricsError(f"agreement: metric judgments: {e}") from e

    rng = np.random.default_rng(seed)
    notes = []
    majority = [_majority(v) for v in human]
    decisive = [i for i in range(n) if majority[i] != "tie"]
    hits = np.array([metric[i] == majority[i] for i in decisive], dtype=float)
    if decisive:
        item_agreement: float | None = float(hits.mean())
        draws = bootstrap_indices(rng, len(hits), n_boot)
        acc_ci: tuple[float, float] | None = _percentile_ci(hits[draws].mean(axis=1), level)
    else:
        item_agreement, acc_ci = None, None
        notes.append("item agreement needs at least one item whose human majority is not a tie")

    systems = sorted(human_bt)
    spearman = kendall = None
    spearman_ci = None
    skipped = 0
    if len(systems) < 3:
        notes.append("rank correlation needs at least 3 systems")
    else:
        corr = _rank_corr(human_bt, metric_bt)
        if corr is None:
            notes.append("rank correlation undefined: constant strengths")
        else:
            spearman, kendall = corr
            boot = []
            for _ in range(n_boot):
                idx = bootstrap_indices(rng, n)
                try:
                    h, m = fit(idx)
                except GenmetricsError:
                    skipped += 1
                    continue
                c = _rank_corr(h, m) if sorted(h) == systems == sorted(m) else None
                if c is None:
                    skipped += 1
                    continue
                boot.append(c[0])
            if boot:
                spearman_ci = _percentile_ci(np.array(boot), level)
            else:
                notes.append("no bootstrap replicate could be fitted; spearman_ci undefined")

    return {
        "systems": systems,
        "human_bt": human_bt,
        "metric_bt": metric_bt,
        "spearman": spearman,
        "kendall": kendall,
        "spearman_ci": spearman_ci,
        "spearman_boot_skipped": skipped,
        "item_agreement": item_agreement,
        "pairwise_accuracy_ci": acc_ci,
        "n_items": n,
        "n_judgments": sum(len(v) for v in human),
        "n_decisive_items": len(decisive),
        "human_majority": {o: majority.count(o) for o in OUTCOMES},
        "n_boot": n_boot,
        "seed": seed,
        "level": level,
        "note": "; ".join(notes) if notes else None,
    }


def pairwise_agreement(
    ab: PairwiseJudgments,
    scores: pd.DataFrame,
    higher_is_better: Mapping[str, bool],
    *,
    n_boot: int = 1000,
    seed: int = 0,
    ci: float = 0.95,
) -> pd.DataFrame:
    """Per metric column and group (and ``all``): the metric's choice per item (the better
    value wins, :func:`metric_judgments`) against the raters',
    through :func:`agreement` (Bradley–Terry strengths of
    each system from human and metric judgments; item agreement with the human majority and
    its bootstrap interval). A tie between the two values counts as a disagreement, and so
    does an item where the metric is undefined on either text (``metric_undefined``).
    Bradley–Terry fits use a pseudo-count of 0.5 wins each way (``alpha``), so that a metric
    that always prefers one system still gets finite strengths."""
    t = ab.table.reset_index(drop=True)
    groups = {"all": np.arange(len(t))}
    if t["group"].nunique() > 1:
        groups.update({g: np.flatnonzero(t["group"] == g) for g in sorted(t["group"].unique())})
    rows = []
    for col, higher in higher_is_better.items():
        va, vb = scores[f"a.{col}"].to_numpy(float), scores[f"b.{col}"].to_numpy(float)
        undefined = ~(np.isfinite(va) & np.isfinite(vb))
        judged = metric_judgments(
            np.where(undefined, 0.0, va), np.where(undefined, 0.0, vb), higher_is_better=higher
        )  # a text the metric cannot score: a tie (a disagreement), counted below
        for g, idx in groups.items():
            items = [(t.at[i, "system_a"], t.at[i, "system_b"]) for i in idx]
            res = agreement(
                items,
                [t.at[i, "votes"] for i in idx],
                [judged[i] for i in idx],
                n_boot=n_boot,
                seed=seed,
                level=ci,
                alpha=0.5,
            )
            systems = res["systems"]
            rows.append(
                {
                    "metric": col,
                    "higher_is_better": higher,
                    "group": g,
                    "item_agreement": res["item_agreement"],
                    "ci_low": (res["pairwise_accuracy_ci"] or (None, None))[0],
                    "ci_high": (res["pairwise_accuracy_ci"] or (None, None))[1],
                    "n_items": res["n_items"],
                    "n_decisive_items": res["n_decisive_items"],
                    "n_judgments": res["n_judgments"],
                    "metric_ties": sum(judged[i] == "tie" for i in idx),
                    "metric_undefined": int(undefined[idx].sum()),
                    **{f"human_bt.{s}": res["human_bt"][s] for s in systems},
                    **{f"metric_bt.{s}": res["metric_bt"].get(s) for s in systems},
                    "n_boot": n_boot,
                    "seed": seed,
                }
            )
    return pd.DataFrame(rows)


def face_judgments(
    surprisal_a: Sequence[np.ndarray],
    surprisal_b: Sequence[np.ndarray],
    surprisal_human: Sequence[np.ndarray],
    params: Mapping[str, Any] | None = None,
) -> dict[str, list[str]]:
    """Per item, which of two texts each FACE distance prefers (FACE-2 §5.3): text a_i and
    text b_i are each compared with the human text h_i of the same item (the ``face`` metric
    paired by item), and :func:`genmetrics.metrics.face.judge` picks the closer one, for
    every distance and the Ensemble-3/5 votes. ``mean_surprisal`` is FACE-2's baseline: the
    text with the lower mean surprisal wins. An item whose text has fewer than 3 surprisal
    values (no spectrum) is a tie for every FACE distance."""
    from genmetrics.metrics import compute
    from genmetrics.metrics.face import judge

    n = len(surprisal_human)
    if not len(surprisal_a) == len(surprisal_b) == n:
        raise GenmetricsError(
            f"face_judgments: {len(surprisal_a)} a, {len(surprisal_b)} b and {n} human texts"
        )
    links = [[i] for i in range(n)]
    per = {
        side: compute("face", seqs, surprisal_human, params, links=links).extras["per_candidate"]
        for side, seqs in (("a", surprisal_a), ("b", surprisal_b))
    }
    nan = float("nan")
    out: dict[str, list[str]] = {}
    for i in range(n):
        va = {k: nan if v[i] is None else v[i] for k, v in per["a"].items()}
        vb = {k: nan if v[i] is None else v[i] for k, v in per["b"].items()}
        for key, outcome in judge(va, vb).items():
            out.setdefault(key, []).append(outcome)
    mean = [
        [float(np.mean(s)) if len(s) else nan for s in seqs] for seqs in (surprisal_a, surprisal_b)
    ]
    out["mean_surprisal"] = [
        "a" if x < y else "b" if y < x else "tie" for x, y in zip(*mean, strict=True)
    ]
    return out
