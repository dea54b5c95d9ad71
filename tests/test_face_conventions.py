"""FACE's named conventions (``convention``): the FACE and FACE-2 papers as written beside the
FACE and FACEScore code, each checked against its own definition.

* FACE-2's Eqs. 2-6 on a 3-point example computed by hand (fractions in the comments);
* each paper convention end to end against an oracle written from its text (FACE-1: Re X on
  the true-frequency grid, SO as an integral ratio; FACE-2: |X| re-gridded by index, Eqs. 2-6);
* what a convention fixes cannot be changed silently; the record states every setting;
* the FACE documentation page's table of the conventions on one shared example is what the code gives.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.interpolate import interp1d
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy, pearsonr, spearmanr

from genmetrics import GenmetricsError
from genmetrics.metrics import compute, get
from genmetrics.metrics._spectra import batch_distances
from genmetrics.metrics.face import CONVENTIONS, VALUES, ensemble_members, face, judge
from genmetrics.metrics.registry import Preset, register

#: the documentation page with the conventions' table on one shared example
FACE_PAGE = Path(__file__).resolve().parents[1] / "docs" / "metrics" / "face.md"


# ------------------------------------------------------------------ FACE-2 Eqs. 2-6 by hand


def test_face2_equations_on_a_hand_computed_example():
    """F_h = (1, 1, 2), F_m = (1, 2, 5): the distances of FACE-2's Eqs. 2-6 by hand.

    p_h = (1/4, 1/4, 1/2), p_m = (1/8, 1/4, 5/8), M = (3/16, 1/4, 9/16).
    """
    h, m = np.array([1.0, 1.0, 2.0]), np.array([1.0, 2.0, 5.0])
    d = {k: float(v[0]) for k, v in batch_distances(h, m).items()}
    ln2 = math.log(2)
    # Eq. 2 SO = Σ min / Σ max = (1 + 1 + 2) / (1 + 2 + 5)
    assert d["so"] == pytest.approx(4 / 8, abs=1e-12)
    # Eq. 3 CORR: deviations (-1/3, -1/3, 2/3) and (-5/3, -2/3, 7/3): 21/9 / √(6/9 · 78/9)
    assert d["corr"] == pytest.approx(21 / math.sqrt(6 * 78), abs=1e-12)
    # Eq. 4 EMD: cdfs (1/4, 1/2, 1) and (1/8, 3/8, 1): (1/8 + 1/8 + 0) / 3
    assert d["emd"] == pytest.approx(0.25 / 3, abs=1e-12)
    # Eq. 5 KL(F_h ‖ F_m) = 1/4 ln 2 + 1/4 ln 1 + 1/2 ln(4/5)
    kl_hm = 0.25 * ln2 + 0.5 * math.log(0.8)
    assert d["kl_human_model"] == pytest.approx(kl_hm, abs=1e-12)
    # the FACEScore code's direction, KL(F_m ‖ F_h) = 1/8 ln(1/2) + 5/8 ln(5/4): a different number
    kl_mh = -ln2 / 8 + 0.625 * math.log(1.25)
    assert d["kl"] == pytest.approx(kl_mh, abs=1e-12)
    assert abs(kl_hm - kl_mh) > 5e-3
    # Eq. 6 as printed: ½ KL(h ‖ m) + ½ KL(m ‖ h)
    assert d["js_eq6"] == pytest.approx((kl_hm + kl_mh) / 2, abs=1e-12)
    # the Jensen–Shannon divergence: ½ KL(p_h ‖ M) + ½ KL(p_m ‖ M)
    kl_hM = 0.25 * math.log(4 / 3) + 0.5 * math.log(8 / 9)
    kl_mM = 0.125 * math.log(2 / 3) + 0.625 * math.log(10 / 9)
    jsd = (kl_hM + kl_mM) / 2
    assert d["jsd"] == pytest.approx(jsd, abs=1e-12)
    # SciPy's (the FACEScore code's) "js" is the distance √JSD, not Eq. 6 and not the JSD
    assert d["js"] == pytest.approx(math.sqrt(jsd), abs=1e-12)
    assert len({round(d[k], 6) for k in ("js", "js_eq6", "jsd")}) == 3


def test_zeros_in_the_denominator_are_floored_as_the_facescore_code_does():
    """A zero bin of the model spectrum: KL(h ‖ m) divides by it; as FACEScore's ``entropy``
    guard for its own direction, it becomes 1e-10 (a large finite number, not inf)."""
    h, m = np.array([1.0, 1.0, 2.0]), np.array([1.0, 0.0, 3.0])
    d = {k: float(v[0]) for k, v in batch_distances(h, m).items()}
    assert d["kl_human_model"] == pytest.approx(entropy(h, np.where(m == 0, 1e-10, m)), rel=1e-12)
    assert d["kl"] == pytest.approx(entropy(m, h), rel=1e-12)
    assert d["kl_human_model"] > 5  # ¼ ln(¼ / 2.5e-11): the floored bin dominates
    assert d["js_eq6"] == pytest.approx((d["kl_human_model"] + d["kl"]) / 2, rel=1e-12)


# ------------------------------------------------------------------ the papers end to end


def _spectrum(x, value, how, zscore=False):
    """FFT spectrum re-gridded onto 1000 points of [0, 0.5]: ``how="face"`` on the true
    frequencies (FACE), ``"index"`` on linspace(0, 0.5, bins) (FACE-2 / FACEScore).
    ``zscore``: FACE-2 §4.1's (s − μ)/σ, σ = sqrt(Σ(s − μ)² / (N − 1)), no epsilon."""
    x = np.asarray(x, float)[:1000]
    if zscore:
        x = (x - x.mean()) / np.sqrt(((x - x.mean()) ** 2).sum() / (len(x) - 1))
    n = len(x)
    freq = np.fft.fftshift(np.fft.fftfreq(n))[n // 2 :]
    spec = np.fft.fftshift(np.fft.fft(x))[n // 2 :]
    y = spec.real if value == "real" else np.abs(spec)
    grid_x = freq if how == "face" else np.linspace(0, 0.5, len(y))
    return interp1d(grid_x, y, fill_value="extrapolate")(np.linspace(0, 0.5, 1000))


def _face1_paper(xh, xm):
    """FACE (Yang et al. 2023) as written: Re X, SO = ∫ min / ∫ max of the magnitudes, CORR,
    SAM = arccos of the cosine / π, SPEAR."""
    yh, ym = _spectrum(xh, "real", "face"), _spectrum(xm, "real", "face")
    g = np.linspace(0, 0.5, 1000)
    ah, am = np.abs(yh), np.abs(ym)
    cos = yh @ ym / np.linalg.norm(yh) / np.linalg.norm(ym)
    return {
        "so": np.trapezoid(np.minimum(ah, am), g) / np.trapezoid(np.maximum(ah, am), g),
        "corr": pearsonr(yh, ym)[0],
        "sam": np.arccos(cos) / np.pi,
        "spear": spearmanr(yh, ym)[0],
    }


def _face2_paper(xh, xm, zscore):
    """FACE-2 (Liu et al. 2025) as written: F = |X|, Eqs. 2-6 with the human spectrum first."""
    fh, fm = _spectrum(xh, "norm", "index", zscore), _spectrum(xm, "norm", "index", zscore)
    ph, pm = fh / fh.sum(), fm / fm.sum()
    ch, cm = np.cumsum(ph), np.cumsum(pm)
    # a z-scored sequence sums to 0: its DC bin can be exactly 0; 0 ln 0 = 0 and a zero
    # denominator floored at 1e-10, as the FACEScore code guards its entropy()
    kl = lambda p, q: float(entropy(p, np.where(q == 0, 1e-10, q)))  # noqa: E731
    return {
        "so": np.minimum(fh, fm).sum() / np.maximum(fh, fm).sum(),  # Eq. 2
        "corr": pearsonr(fh, fm)[0],  # Eq. 3
        "emd": np.abs(ch - cm).sum() / len(ch),  # Eq. 4
        "kl_human_model": kl(ph, pm),  # Eq. 5
        "js_eq6": 0.5 * kl(ph, pm) + 0.5 * kl(pm, ph),  # Eq. 6
        "jsd": jensenshannon(fh, fm) ** 2,
    }


def _sets(seed=3):
    rng = np.random.default_rng(seed)
    human = [rng.gamma(2.0, 2.0, size=n) for n in (40, 57, 120, 301, 64)]
    model = [rng.gamma(1.5, 2.5, size=n) for n in (63, 44, 200, 99, 64)]
    return human, model


@pytest.mark.parametrize(
    ("convention", "zscore", "oracle"),
    [
        ("face1", False, lambda h, m: _face1_paper(h, m)),
        ("face2", False, lambda h, m: _face2_paper(h, m, False)),
        ("face2", True, lambda h, m: _face2_paper(h, m, True)),
    ],
)
def test_each_paper_convention_equals_its_papers_equations(convention, zscore, oracle):
    human, model = _sets()
    res = compute(
        "face",
        model,
        human,
        params={"convention": convention, "zscore": zscore, "pairing": "prompt"},
        links=[[i] for i in range(len(model))],
    )
    assert set(res.values) == set(VALUES[convention])
    want = [oracle(h, m) for h, m in zip(human, model, strict=True)]
    for key in VALUES[convention]:
        assert res.values[key] == pytest.approx(np.mean([w[key] for w in want]), abs=1e-9), key


def test_the_codebase_conventions_are_todays_defaults():
    """``facescore`` is what the metric gave before conventions existed; ``face-code`` is the
    same with FACE's alignment (both checked against the code in test_spectra/test_claims)."""
    human, model = _sets()
    links = [[i] for i in range(len(model))]
    plain = compute("face", model, human, params={"pairing": "prompt"}, links=links)
    named = compute(
        "face", model, human, params={"convention": "facescore", "pairing": "prompt"}, links=links
    )
    assert named.values == plain.values
    code = compute(
        "face", model, human, params={"convention": "face-code", "pairing": "prompt"}, links=links
    )
    aligned = compute(
        "face", model, human, params={"align": "face", "pairing": "prompt"}, links=links
    )
    assert code.values == aligned.values
    assert set(code.values) == set(VALUES["face-code"])


# ------------------------------------------------------------------ settings and records


def test_what_a_paper_convention_fixes_cannot_be_changed():
    metric = get("face")
    with pytest.raises(GenmetricsError, match=r"metrics\.f2\.params\.value: convention=face2"):
        metric.check_params({"convention": "face2", "value": "real"}, "metrics.f2.params")
    with pytest.raises(GenmetricsError, match=r"convention=face1 fixes align='face'"):
        metric.check_params({"convention": "face1", "align": "facescore"})
    # restating a fixed setting is fine; a code convention's defaults may be overridden
    assert metric.check_params({"convention": "face1", "value": "real"})["align"] == "face"
    assert metric.check_params({"convention": "face-code", "align": "facescore"})["align"] == (
        "facescore"
    )
    # called directly (not through compute), the function refuses a contradiction too
    human, model = _sets()
    with pytest.raises(GenmetricsError, match="convention=face1 fixes value='real'"):
        face(human, model, convention="face1")


def test_the_record_states_every_setting_used():
    params = get("face").check_params({"convention": "face2", "zscore": True})
    assert params == {
        "convention": "face2",
        "value": "norm",
        "log": False,
        "zscore": True,
        "zscore_ddof": 1,
        "zscore_eps": 0.0,
        "align": "facescore",
        "method": "fft",
        "window": "none",
        "segment": 64,
        "pairing": "auto",
        "max_length": 1000,
    }
    assert get("face").defaults_for({"convention": "face1", "zscore": True})["value"] == "real"


def test_zscore_ddof_rescales_each_spectrum_by_its_length():
    """FACE-2's text divides by the sample std (N - 1, no epsilon); its authors' code by the
    population std + 1e-6: z differs by √((n-1)/n) (up to the 1e-6 guard), so |X| by a
    factor that depends on the length n. Distances that normalise each spectrum (CORR, EMD,
    KL, JS) do not change; SO compares magnitudes across texts of different lengths, so it
    does: the setting matters and is recorded."""
    human, model = _sets()
    links = [[i] for i in range(len(model))]
    common = {"zscore": True, "pairing": "prompt"}
    code = {**common, "convention": "face2-code-zscore"}
    a = compute("face", model, human, params=code, links=links).values
    b = compute("face", model, human, params={**common, "convention": "face2"}, links=links)
    assert b.values.keys() == a.keys()
    for key in ("corr", "emd", "kl_human_model", "js_eq6", "jsd"):
        assert b.values[key] == pytest.approx(a[key], abs=2e-6), key
    assert abs(b.values["so"] - a["so"]) > 1e-4


def test_ensembles_use_the_papers_kl_and_js_under_face2():
    assert ensemble_members("ensemble3", VALUES["face2"]) == ("emd", "kl_human_model", "js_eq6")
    assert ensemble_members("ensemble5", VALUES["facescore"]) == ("so", "corr", "emd", "kl", "js")
    assert ensemble_members("ensemble3", VALUES["face1"]) is None  # FACE-1 has no EMD/KL/JS
    a = {"so": 0.9, "corr": 0.9, "emd": 0.1, "kl_human_model": 0.3, "js_eq6": 0.3}
    b = {"so": 0.8, "corr": 0.8, "emd": 0.2, "kl_human_model": 0.1, "js_eq6": 0.1}
    votes = judge(a, b)
    assert votes["ensemble3"] == "b"  # KL and JS prefer b, EMD prefers a
    assert votes["ensemble5"] == "a"  # SO, CORR and EMD prefer a


def test_a_bad_preset_is_refused_at_registration():
    params = {"style": (_options("a", "b"), "which"), "k": (_interval(), "count")}

    with pytest.raises(ValueError, match="implies k=2, the signature says 1"):

        @register(
            "bad_preset_metric",
            input="texts",
            values={"v": None},
            params=params,
            presets={"style": {"a": Preset("A", defaults={"k": 2}), "b": Preset("B")}},
        )
        def _bad(candidate, *, style: str = "a", k: int = 1):
            return {"v": 0.0}

    with pytest.raises(ValueError, match="sets 'nope'"):

        @register(
            "bad_preset_metric2",
            input="texts",
            values={"v": None},
            params=params,
            presets={"style": {"a": Preset("A"), "b": Preset("B", fixed={"nope": 1})}},
        )
        def _bad2(candidate, *, style: str = "a", k: int = 1):
            return {"v": 0.0}


def _options(*values):
    from genmetrics.params import Options

    return Options(*values)


def _interval():
    from genmetrics.params import Interval

    return Interval(int, 1, None)


# ------------------------------------------------------------ the FACE page's table


#: the FACE page's shared example: one human and one model surprisal sequence (nats)
HUMAN = [3.2, 1.1, 4.5, 0.7, 2.2, 5.1, 1.9, 0.4, 2.6, 3.8, 1.2, 0.9]
MODEL = [2.0, 2.5, 1.2, 3.3, 0.9, 2.8, 1.5, 2.1, 1.7, 2.4, 3.0, 1.1]


def readme_table() -> dict[str, dict[str, str]]:
    """The FACE page's "one shared example" table: value → convention → the printed number."""
    text = FACE_PAGE.read_text(encoding="utf-8")
    start = text.index("<!-- face-conventions-example -->")
    lines = text[start:].splitlines()[1:]
    rows = [ln for ln in lines[: next(i for i, ln in enumerate(lines) if not ln.strip())]]
    header = [c.strip(" `") for c in rows[0].strip("|").split("|")]
    out = {}
    for row in rows[2:]:
        cells = [c.strip(" `") for c in row.strip("|").split("|")]
        out[re.sub(r" .*", "", cells[0])] = dict(zip(header[1:], cells[1:], strict=True))
    return out


def test_the_face_page_example_table_is_what_the_code_gives():
    table = readme_table()
    assert set(next(iter(table.values()))) == set(CONVENTIONS)
    for convention in CONVENTIONS:
        got = compute(
            "face",
            [np.array(MODEL)],
            [np.array(HUMAN)],
            params={"convention": convention, "pairing": "prompt"},
            links=[[0]],
        ).values
        for value, row in table.items():
            printed = row[convention]
            if value in got:
                assert printed == f"{got[value]:.4f}", (value, convention)
            else:
                assert printed == "–", (value, convention)
