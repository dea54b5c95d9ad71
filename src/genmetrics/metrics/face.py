"""FACE: spectral distances between the surprisal of generated and human text (Yang et al.,
NeurIPS 2023; FACE-2 / FACEScore, Liu et al., Findings EMNLP 2025).

Each per-token surprisal sequence (nats; the evaluator's first-token convention is recorded by
the ``surprisal`` rule) becomes a spectrum (:mod:`genmetrics.metrics._spectra`), aligned onto
1,000 frequencies of [0, 0.5]; a candidate set is compared with a reference (human) set:

* **paired** (``pairing=auto`` when the candidates' ``prompt_id``/``source_id`` find their
  references, or ``pairing=prompt``, which requires it): each candidate against its own human
  text(s); with several references per candidate the best over them (max of SO/CORR/SPEAR, min
  of SAM/EMD/KL/JS, as the FACE-2 MT-Bench script); the value is the mean over candidates, as
  both official tools report. FACE itself pairs the i-th human line with the i-th model line;
  that is ``pairing=prompt`` with matching ids.
* **set** (no shared prompt, or ``pairing=set``): the distance between the two mean spectra.

``convention`` says whose definition the numbers follow (:data:`CONVENTIONS`): the FACEScore
code (default) or the FACE code, each to 1e-9, or the FACE or FACE-2 paper as written; a paper
convention fixes the spectrum's value and grid, and each convention reports its own values
(:data:`VALUES`; FACE-2's KL is human-first, its "JS" is Eq. 6, and ``jsd`` is the true
Jensen–Shannon divergence beside it).

The z-score (``zscore``) is (x - mean) / (std + ``zscore_eps``), the std with ``zscore_ddof``.
FACE-2's text (§4.1) gives the sample standard deviation, sqrt(Σ(s - μ)² / (N - 1)), and no
epsilon: ``convention=face2`` fixes ``zscore_ddof=1``, ``zscore_eps=0``. Both codebases (FACE's
and the FACE-2 authors' FACEScore) divide by the population std (numpy, ddof 0) + 1e-6: the
default, and ``convention=face2-code-zscore`` (FACE-2's Eqs. 2-6 with its authors' code's
z-score). A constant sequence has std 0: its z-scores are 0 (a flat spectrum, counted as
undefined when paired), as the codes' epsilon makes them.

Where the official code breaks, this module does better: a sequence of fewer than 3 values (a
one-bin spectrum: FACE silently shifts every later pair by one, FACEScore returns NaN) is
dropped and counted in ``n`` (an error if none remains); an empty sequence is such a sequence;
SAM clips its cosine (identical spectra give 0, not NaN); EMD, KL and JS use |spectrum| for
signed (``value=real``) spectra; NaN/inf surprisal is refused naming the sequence.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import numpy as np

from genmetrics import GenmetricsError
from genmetrics.metrics._spectra import (
    DISTANCES,
    GRID_POINTS,
    HIGHER_IS_BETTER,
    MIN_LENGTH,
    aligned_spectra,
    batch_distances,
    best_over_references,
)
from genmetrics.metrics.registry import HIGHER, LOWER, MetricResult, Preset, register
from genmetrics.params import BOOL, Interval, Options

__all__ = ["CONVENTIONS", "ENSEMBLES", "VALUES", "ensemble_members", "face", "judge"]

#: majority-vote ensembles of distances used to compare two systems against the same humans:
#: Ensemble-3 = EMD, KL and JS, "the three new ones"; Ensemble-5 = "all five distance
#: functions", adding SO and CORR (FACE-2 §5.2). Members are roles: :func:`ensemble_members`
#: picks the value that plays each role in a record (the paper's KL and JS under
#: ``convention=face2``).
ENSEMBLES = {"ensemble3": ("emd", "kl", "js"), "ensemble5": ("so", "corr", "emd", "kl", "js")}
#: the values that can play a role, in order of preference: FACE-2's Eq. 5 and Eq. 6 when a
#: record has them (``convention=face2``), else the FACEScore code's ``kl`` and ``js``
ROLES = {"kl": ("kl_human_model", "kl"), "js": ("js_eq6", "js")}


def ensemble_members(name: str, available: Collection[str]) -> tuple[str, ...] | None:
    """The value names that vote in ensemble ``name`` given the values a record holds
    (``available``), or None when some role has no value there."""
    out = []
    for role in ENSEMBLES[name]:
        pick = next((v for v in ROLES.get(role, (role,)) if v in available), None)
        if pick is None:
            return None
        out.append(pick)
    return tuple(out)


def _round(a: np.ndarray) -> list[float]:
    return [float(f"{x:.6g}") for x in a]


#: the published conventions (``convention``): what each fixes or defaults (:data:`VALUES`:
#: what it reports; docs/metrics/face.md compares them row by row and on one example)
CONVENTIONS = {
    "facescore": Preset(
        "the FACEScore code (Liu et al. 2025's repository, 0976433)",
        defaults={"align": "facescore"},
    ),
    "face-code": Preset(
        "the FACE code (Yang et al. 2023's repository, d4121f2)", defaults={"align": "face"}
    ),
    "face1": Preset(
        "the FACE paper as written: Re X on the true-frequency grid",
        fixed={"value": "real", "align": "face"},
    ),
    "face2": Preset(
        "the FACE-2 paper as written: |X| (the L2 norm), Eqs. 2-6; zscore is its ablation, "
        "with the sample std (N - 1) and no epsilon (its §4.1)",
        fixed={"value": "norm", "align": "facescore", "zscore_ddof": 1, "zscore_eps": 0.0},
    ),
    "face2-code-zscore": Preset(
        "the FACE-2 paper's Eqs. 2-6 with its authors' code's z-score (FACEScore 0976433, "
        "fft_preprocess='zscore': population std (ddof 0) + 1e-6), not the paper's N - 1",
        fixed={"value": "norm", "align": "facescore", "zscore_ddof": 0, "zscore_eps": 1e-6},
    ),
}
#: the values each convention reports: the codebases' seven; FACE's four; FACE-2's five
#: distances (Eqs. 2-6: KL human-first, JS as its Eq. 6) and the true JS divergence beside
VALUES = {
    "facescore": ("so", "corr", "spear", "sam", "emd", "kl", "js"),
    "face-code": ("so", "corr", "spear", "sam", "emd", "kl", "js"),
    "face1": ("so", "corr", "sam", "spear"),
    "face2": ("so", "corr", "emd", "kl_human_model", "js_eq6", "jsd"),
    "face2-code-zscore": ("so", "corr", "emd", "kl_human_model", "js_eq6", "jsd"),
}


@register(
    "face",
    input="surprisal",
    reference="required",
    links=True,
    values={
        "so": HIGHER,
        "corr": HIGHER,
        "spear": HIGHER,
        "sam": LOWER,
        "emd": LOWER,
        "kl": LOWER,
        "js": LOWER,
        "kl_human_model": LOWER,
        "js_eq6": LOWER,
        "jsd": LOWER,
    },
    family="surprisal",
    figures=("spectra",),
    # SAM is divided by π; EMD sums |cdf differences| / grid points; KL, JS, JSD in nats
    scale={
        "so": "0–1",
        "corr": "−1–1",
        "spear": "−1–1",
        "sam": "0–1",
        "emd": "0–1",
        "kl": "≥ 0",
        "js": "≥ 0",
        "kl_human_model": "≥ 0",
        "js_eq6": "≥ 0",
        "jsd": "≥ 0",
    },
    presets={"convention": CONVENTIONS},
    params={
        "convention": (
            Options(*CONVENTIONS),
            "whose definition: the FACEScore or FACE code (facescore, face-code), the FACE "
            "or FACE-2 paper as written (face1, face2), or FACE-2 with its authors' code's "
            "z-score (face2-code-zscore); sets value/align (and FACE-2's z-score std) and the "
            "values reported",
        ),
        "value": (Options("norm", "real"), "|X| (FACE and FACEScore default) or Re X (FACE-1)"),
        "log": (BOOL, "ln(x + 1) before the FFT (FACE 'log'; with zscore: 'logzs')"),
        "zscore": (BOOL, "per-sequence (x - mean) / (std + zscore_eps) before the FFT"),
        "zscore_ddof": (
            Interval(int, 0, 1),
            "the std of zscore: 0 = population (numpy, both codes), 1 = sample (FACE-2 §4.1)",
        ),
        "zscore_eps": (
            Interval(float, 0.0, None),
            "added to the std of zscore: 1e-6 in both codes, 0 in FACE-2's text (§4.1)",
        ),
        "align": (
            Options("facescore", "face"),
            "re-grid by index (FACEScore) or by true frequency (FACE, with trapezoid SO)",
        ),
        "method": (Options("fft", "welch"), "raw FFT (both tools) or a Welch periodogram"),
        "window": (Options("none", "hann"), "taper before the FFT / in each Welch segment"),
        "segment": (Interval(int, MIN_LENGTH, None), "Welch segment length (method=welch)"),
        "pairing": (
            Options("auto", "prompt", "set"),
            "by prompt when the sets share prompts (auto), always (prompt) or never (set)",
        ),
        "max_length": (
            Interval(int, MIN_LENGTH, None),
            "values kept per sequence, from the start (FACEScore: 1000)",
        ),
    },
    aggregation=(
        "paired: mean over candidates of the best value over each candidate's references; "
        "set: the distance between the mean spectra; sequences of < 3 values are dropped and "
        "counted"
    ),
    upstream=(
        "FACEScore 0976433 (fft_utils.py, metrics.py); FACE d4121f2 (align=face; SO not "
        "rounded to 4 per pair); FACE and FACE-2 papers as written (convention=face1/face2)"
    ),
    citation="Yang et al. (2023); Liu et al. (2025)",
)
def face(
    reference: Sequence[np.ndarray],
    candidate: Sequence[np.ndarray],
    *,
    links: Sequence[Sequence[int]] | None = None,
    convention: str = "facescore",
    value: str = "norm",
    log: bool = False,
    zscore: bool = False,
    zscore_ddof: int = 0,
    zscore_eps: float = 1e-6,
    align: str = "facescore",
    method: str = "fft",
    window: str = "none",
    segment: int = 64,
    pairing: str = "auto",
    max_length: int = 1000,
) -> MetricResult:
    """The spectral distances between the surprisal spectra of ``candidate`` and
    ``reference`` (the human texts) that ``convention`` reports (:data:`VALUES`).

    ``facescore`` (default) and ``face-code`` report the codebases' seven: SO, CORR, SPEAR,
    SAM, EMD, ``kl`` = KL(candidate ‖ reference) (FACEScore's ``entropy(sp2, sp1)`` with the
    human set first) and ``js`` = the Jensen–Shannon *distance* (SciPy's, √JSD).
    ``face1`` reports FACE's four (SO, CORR, SAM, SPEAR of Re X); ``face2`` FACE-2's Eqs. 2-6
    (SO, CORR, EMD, ``kl_human_model`` = KL(human ‖ model), Eq. 5, and ``js_eq6`` =
    ½KL(h ‖ m) + ½KL(m ‖ h), Eq. 6 as printed) and ``jsd``, the Jensen–Shannon divergence.

    Defaults are FACEScore's (``norm`` value, index re-gridding, plain-sum SO, the first 1000
    values); ``align=face`` gives FACE's true-frequency alignment and trapezoid SO
    (unrounded: FACE's ``getSO`` rounds each pair's SO to 4 decimals). Called through
    :func:`~genmetrics.metrics.compute` the convention fills ``value``/``align``; called
    directly, settings a convention fixes must match it. ``n`` counts dropped short sequences
    (``dropped_candidate``/``dropped_reference``), candidates left without a reference
    (``unpaired_candidate``), candidates whose spectrum is flat (a constant sequence,
    z-scored: no correlation, no distribution; ``undefined_candidate``, left out of the means)
    and the pairs scored; ``extras`` holds the mean ± SD spectra (for
    the figure), how the sets were compared and, when paired, each candidate's values.
    """
    preset = CONVENTIONS[convention]
    given = {"value": value, "align": align, "zscore_ddof": zscore_ddof, "zscore_eps": zscore_eps}
    for name, fixed in preset.fixed.items():
        got = given[name]
        if got != fixed:
            raise GenmetricsError(
                f"face: convention={convention} fixes {name}={fixed!r} ({preset.doc}); got "
                f"{got!r} (compute('face', ..., params={{'convention': {convention!r}}}) fills it)"
            )
    keep_values = VALUES[convention]
    cand = [np.asarray(s)[:max_length] for s in candidate]
    ref = [np.asarray(s)[:max_length] for s in reference]
    if zscore:  # here, so that the std and its epsilon are this metric's settings
        cand = [_zscored(s, log, zscore_ddof, zscore_eps) for s in cand]
        ref = [_zscored(s, log, zscore_ddof, zscore_eps) for s in ref]
        log = zscore = False
    keep_c = np.array([len(s) >= MIN_LENGTH for s in cand])
    keep_r = np.array([len(s) >= MIN_LENGTH for s in ref])
    for name, keep in (("candidate", keep_c), ("reference", keep_r)):
        if not keep.any():
            raise GenmetricsError(
                f"face: no {name} sequence has {MIN_LENGTH} or more surprisal values "
                f"({keep.size} sequence(s), all shorter): a spectrum needs at least two bins"
            )
    if pairing == "prompt" and links is None:
        raise GenmetricsError(
            "face: pairing=prompt, but the candidates' prompt_id/source_id match no reference "
            "id (or the inputs carry none); use pairing=set to compare the two sets"
        )
    opts = dict(
        value=value,
        log=log,
        zscore=zscore,
        how=align,
        method=method,
        window=window,
    )
    spec_c = aligned_spectra(
        [s for s, k in zip(cand, keep_c, strict=True) if k], **opts, segment=segment
    )
    spec_r = aligned_spectra(
        [s for s, k in zip(ref, keep_r, strict=True) if k], **opts, segment=segment
    )
    so = "face" if align == "face" else "facescore"
    n = {
        "dropped_candidate": int((~keep_c).sum()),
        "dropped_reference": int((~keep_r).sum()),
    }
    grid = np.linspace(0, 0.5, GRID_POINTS)
    extras: dict = {
        "spectrum": {
            "freq": _round(grid),
            "candidate_mean": _round(spec_c.mean(axis=0)),
            "candidate_sd": _round(spec_c.std(axis=0)),
            "reference_mean": _round(spec_r.mean(axis=0)),
            "reference_sd": _round(spec_r.std(axis=0)),
        }
    }
    if pairing == "set" or links is None:
        d = batch_distances(spec_r.mean(axis=0), spec_c.mean(axis=0), so)
        extras["pairing"] = "set"
        n["pairs"] = 0
        return MetricResult(values={k: float(d[k][0]) for k in keep_values}, extras=extras, n=n)

    row_c = np.cumsum(keep_c) - 1  # kept candidate i -> row in spec_c
    row_r = np.cumsum(keep_r) - 1
    ci, rj = [], []
    for i, group in enumerate(links):
        if keep_c[i]:
            for j in group:
                if keep_r[j]:
                    ci.append(row_c[i])
                    rj.append(row_r[j])
    if not ci:
        raise GenmetricsError(
            f"face: no candidate is left with a reference of {MIN_LENGTH}+ values to pair with"
        )
    ci_a, rj_a = np.asarray(ci), np.asarray(rj)
    if (
        ci_a.size == len(spec_c) == len(spec_r)
        and (ci_a == rj_a).all()
        and (np.diff(ci_a) == 1).all()
    ):
        per_pair = batch_distances(spec_r, spec_c, so)  # one reference each, in order
    else:
        chunks = [
            batch_distances(spec_r[rj_a[k : k + 4096]], spec_c[ci_a[k : k + 4096]], so)
            for k in range(0, ci_a.size, 4096)  # gathers a chunk of pairs at a time
        ]
        per_pair = {key: np.concatenate([c[key] for c in chunks]) for key in DISTANCES}
    per_pair = {k: per_pair[k] for k in keep_values}
    best = best_over_references(per_pair, ci_a, spec_c.shape[0])  # by kept-candidate row
    has_pair = np.zeros(spec_c.shape[0], dtype=bool)
    has_pair[ci_a] = True
    n["pairs"] = int(ci_a.size)
    n["unpaired_candidate"] = int(keep_c.sum() - has_pair.sum())
    per_candidate = {}
    for key, v in best.items():
        full = np.full(len(cand), np.nan)
        full[np.flatnonzero(keep_c)[has_pair]] = v[has_pair]
        per_candidate[key] = [float(x) if np.isfinite(x) else None for x in full]
    extras["pairing"] = "prompt"
    extras["per_candidate"] = per_candidate
    # a flat spectrum (a constant sequence, z-scored) has no correlation or distribution:
    # such candidates are counted and left out of the means, never averaged in as NaN
    undefined = np.zeros(spec_c.shape[0], dtype=bool)
    for v in best.values():
        undefined |= ~np.isfinite(v)
    n["undefined_candidate"] = int((undefined & has_pair).sum())
    ok = has_pair & ~undefined
    if not ok.any():
        raise GenmetricsError("face: every paired candidate has a flat (all-zero) spectrum")
    return MetricResult(
        values={k: float(np.mean(v[ok])) for k, v in best.items()}, extras=extras, n=n
    )


def _zscored(x: np.ndarray, log: bool, ddof: int, eps: float) -> np.ndarray:
    """(x - mean) / (std + eps) of one sequence (after ln(x + 1) when ``log``), the std with
    ``ddof``; 0 everywhere where the std is 0 (a constant sequence: x - mean is 0). A sequence
    too short for ``ddof`` is returned as is (it is dropped as too short anyway)."""
    x = np.asarray(x, dtype=np.float64)
    if log:
        x = np.log(x + 1)
    if x.size <= ddof:
        return x
    if (x == x[0]).all():  # std 0 (and x - mean may be rounding noise, not 0)
        return np.zeros_like(x)
    return (x - x.mean()) / (x.std(ddof=ddof) + eps)


def judge(a: Mapping[str, float], b: Mapping[str, float], tol: float = 0.0) -> dict[str, str]:
    """Which of two systems each distance prefers ("a", "b" or "tie", within ``tol``), given
    their FACE values against the same humans, plus the ``ENSEMBLES`` majority votes (a tie
    when the members' votes for a and b are equal)."""
    out = {}
    for key in DISTANCES:
        if key not in a or key not in b:
            continue
        diff = (a[key] - b[key]) * (1 if HIGHER_IS_BETTER.get(key, False) else -1)
        out[key] = "a" if diff > tol else "b" if diff < -tol else "tie"
    for name in ENSEMBLES:
        members = ensemble_members(name, out)
        if members is not None:
            votes = [out[m] for m in members]
            wa, wb = votes.count("a"), votes.count("b")
            out[name] = "a" if wa > wb else "b" if wb > wa else "tie"
    return out
