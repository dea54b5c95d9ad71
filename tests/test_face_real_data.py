"""FACE on real surprisal from ../shared/data, without running a model.

1. **WebText vs GPT-2 small samples** (the FACE demo sets): the human documents and GPT-2
   small's pure samples, both scored by the arrays upstream labels "GPT-2 XL" — the only scorer
   stored for both sides. Their values are suspect (see ../shared/data/webtext/README.md: mean
   7.0 nats, no fall with position), so they serve as upstream-faithful FACE demo inputs, not
   as GPT-2 XL surprisal. Control: one half of the human documents against the other half is
   closer than the humans against the model, on every distance and both conventions.
   Measured (set level): FACEScore defaults human½–human½ SO .980, CORR .9999, EMD .0004,
   JS .0095; human–model SO .874, CORR .995, EMD .0086, JS .028. FACE-2 (real, z-scored):
   SO .487 vs .442, CORR .62 vs .52, JS .320 vs .341. Pairing unrelated documents by index
   (the FACE demo's convention) gives SO .495, SPEAR .05: document-level noise, not a model
   effect.
2. **The FACE paper's size pairs** (``face_generations``: gpt2/gpt2-xl, opt-125m/6.7b,
   bloom-560m/7b, each text with its model's own surprisal) against the WebText human spectra
   (GPT-2 small surprisal): does the larger model sit closer to the humans? Measured
   valid-cell ratios over the 9 (pair × domain) cells, random baseline 0.5 — FACEScore defaults:
   SO 5/9, CORR 5/9, SPEAR 3/9, SAM 5/9, EMD 6/9, KL 5/9, JS 5/9, Ensemble-3 5/9,
   Ensemble-5 5/9; FACE-2 (real, z-scored): SO 5/9, CORR 4/9, SPEAR 4/9, SAM 8/9, EMD 5/9,
   KL 5/9, JS 5/9, Ensemble-3 5/9, Ensemble-5 4/9. On these arrays, FACE barely beats chance
   at ordering sizes; with the defaults, GPT-2 moves away from the humans with size and
   BLOOM towards them. Confounds: each model is its
   own evaluator, and the humans are WebText, not these prompts' continuations (upstream has
   none); ``make face-real-data`` prints the table.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from face_oracle import facescore_reference

from genmetrics.metrics import compute
from genmetrics.metrics._spectra import HIGHER_IS_BETTER
from genmetrics.metrics.face import ENSEMBLES, VALUES, judge
from genmetrics.studies.face2_scaling.valid_cells import (
    format_table,
    summarise_evaluators,
    valid_cell_table,
)

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
PAIRS = {
    "gpt2": ("gpt2", "gpt2-xl"),
    "opt": ("opt-125m", "opt-6.7b"),
    "bloom": ("bloom-560m", "bloom-7b"),
}
SIZES = {
    "gpt2": 0.124,
    "gpt2-xl": 1.5,
    "opt-125m": 0.125,
    "opt-6.7b": 6.7,
    "bloom-560m": 0.56,
    "bloom-7b": 7.1,
}
#: the FACEScore code's defaults, the same code with its real-part and z-score options (called
#: "FACE-2" here before conventions existed), and FACE-2 as its paper defines it
VARIANTS = {
    "FACEScore defaults": {},
    "FACEScore real+z": {"value": "real", "zscore": True},
    "FACE-2 (z + L2)": {"convention": "face2", "zscore": True},
}
#: the values of the FACEScore code (the oracle's names)
CODE = VALUES["facescore"]

pytestmark = pytest.mark.skipif(not DATA.exists(), reason="../shared/data is not present")


@cache
def _nll(path: str) -> tuple[np.ndarray, ...]:
    return tuple(np.array(r["nll"]) for r in map(json.loads, open(DATA / path)))


@cache
def _face_generations() -> tuple[dict, ...]:
    return tuple(json.loads(line) for line in open(DATA / "face_generations" / "sample.jsonl"))


@pytest.mark.parametrize("params", VARIANTS.values(), ids=list(VARIANTS))
def test_webtext_halves_are_closer_to_each_other_than_to_gpt2_samples(params):
    human = list(_nll("webtext/face_demo_human.nll_gpt2-xl.jsonl"))
    model = list(_nll("gpt2_generations/gpt2-small_pure_face.nll_gpt2-xl.jsonl"))
    assert len(human) == 999 and len(model) == 236
    halves = compute("face", human[499:], human[:499], {**params, "pairing": "set"}).values
    vs_model = compute("face", model, human, {**params, "pairing": "set"}).values
    votes = judge(halves, vs_model)
    assert all(votes[k] == "a" for k in halves), votes


def test_real_surprisal_agrees_with_the_facescore_formulas():
    """The FACE demo pairs the i-th human line with the i-th model line: 60 such pairs, some
    longer than 1000 values (FACEScore keeps the first 1000)."""
    human = _nll("webtext/face_demo_human.nll_gpt2-xl.jsonl")[:60]
    model = _nll("gpt2_generations/gpt2-small_pure_face.nll_gpt2-xl.jsonl")[:60]
    for value, z in (("norm", False), ("real", True)):
        res = compute(
            "face",
            list(model),
            list(human),
            {"value": value, "zscore": z},
            links=[[i] for i in range(60)],
        )
        for key in CODE:
            want = [
                facescore_reference(h, m, value, z)[key] for h, m in zip(human, model, strict=True)
            ]
            np.testing.assert_allclose(res.extras["per_candidate"][key], want, rtol=1e-9, atol=1e-9)


def size_pair_table(params: dict) -> pd.DataFrame:
    """Valid-cell table of the FACE size pairs against the WebText human spectra."""
    human = list(_nll("webtext/face_demo_human.nll_gpt2.jsonl"))
    rows = []
    for small, large in PAIRS.values():
        for domain in ("news", "story", "wiki"):
            values = {}
            for m in (small, large):
                seqs = [
                    np.array(r["entropy"])
                    for r in _face_generations()
                    if r["model"] == m and r["domain"] == domain
                ]
                values[m] = compute("face", seqs, human, {**params, "pairing": "set"}).values
                rows += [
                    {"metric": k, "task": domain, "model": m, "value": v}
                    for k, v in values[m].items()
                ]
            for name in ENSEMBLES:  # +1 for the larger model when the ensemble prefers it
                vote = judge(values[large], values[small])[name]
                rows += [
                    {"metric": name, "task": domain, "model": small, "value": 0.0},
                    {
                        "metric": name,
                        "task": domain,
                        "model": large,
                        "value": {"a": 1.0, "b": -1.0, "tie": 0.0}[vote],
                    },
                ]
    directions = {
        k: HIGHER_IS_BETTER.get(k, False) for k in set(VALUES["facescore"]) | set(VALUES["face2"])
    }
    directions.update(dict.fromkeys(ENSEMBLES, True))
    families = {f: {m: SIZES[m] for m in pair} for f, pair in PAIRS.items()}
    return valid_cell_table(pd.DataFrame(rows), families, directions)


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_face_size_pairs_give_a_table_of_nine_cells(variant):
    table = size_pair_table(VARIANTS[variant])
    convention = VARIANTS[variant].get("convention", "facescore")
    assert set(table["metric"]) == {*VALUES[convention], *ENSEMBLES}
    assert (table["cells"] == 9).all() and (table["skipped"] == 0).all()
    assert table["baseline"].iloc[0] == pytest.approx(0.5)  # pairs: 1/2! each
    print(f"\n{variant}: larger model closer to the WebText humans, 9 (pair × domain) cells")
    print(format_table(summarise_evaluators(table), 0.5))
