"""The scores of Shaib et al. (2024)'s Fig. 3 for :func:`genmetrics.studies.shaib_diversity.runtime.runtime_sweep`:
ours (the registry's, with the settings that reproduce the package) and the ``diversity``
package's (0.3.1, an oracle installed ``--no-deps`` by ``make install-test``).

``import diversity`` pulls spaCy, evaluate, sentence-transformers and openai; each module file
the sweep needs is loaded alone (:func:`package_module`). Where the package's version cannot run
offline the reference is ``None`` and its name says why:

- homogenization (BERTScore): the package calls ``evaluate.load("bertscore")`` (a metric script
  fetched from the Hugging Face hub) with ``microsoft/deberta-base-mnli`` (a hub model).
- Self-BLEU: the package has no Self-BLEU function; its BLEU homogenization
  (``measure="bleu"``) needs ``evaluate.load("bleu")`` from the hub, and is corpus BLEU, not
  Self-BLEU. Our Self-BLEU reproduces the nltk ``sentence_bleu`` loop of pr-4-llm, which is
  timed as the reference instead (and named so).
- CR: POS: 0.3.1 tags with spaCy ``en_core_web_sm`` (not installable offline); the reference
  is the package's ≤ 0.1.22 tagging, ``nltk.pos_tag(text.split())`` per text, which ours
  reproduces, followed by the package's ``compression_ratio``.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from genmetrics.studies.shaib_diversity.runtime import ScoreTiming

__all__ = ["FIGURE_NOTES", "SCORES", "package_module", "shaib_scores"]

#: score name → the paper's label (Shaib et al. 2024, Fig. 3), in the figure's order
SCORES = {
    "compression_ratio": "CR",
    "pos_compression_ratio": "CR: POS",
    "ngram_diversity": "NGD",
    "self_repetition": "Self-Rep.",
    "homogenization_rougel": "Hom. (ROUGE-L)",
    "homogenization_bertscore": "Hom. (BERTScore)",
    "self_bleu": "Self-BLEU",
}

#: what the figure's dashed line is, where it is not the package 0.3.1's own function
FIGURE_NOTES = {
    "pos_compression_ratio": "CR: POS: the package's ≤ 0.1.22 NLTK tagging (0.3.1's spaCy "
    "model is not installable offline)",
    "homogenization_bertscore": "Hom. (BERTScore): none (the package's needs evaluate and hub "
    "models, unavailable offline)",
    "self_bleu": "Self-BLEU: the nltk sentence_bleu loop of pr-4-llm (the package's BLEU needs "
    "evaluate and the hub)",
}

_HUB = "unavailable offline ({}: not reachable, only PyPI is)"


def package_module(
    name: str, package: str = "diversity", stand_ins: Mapping[str, Any] | None = None
) -> types.ModuleType | None:
    """The module file ``<package>/<name>.py`` of an installed package, loaded alone (stand-ins
    for modules it imports but the caller never runs are in ``sys.modules`` while it loads,
    then removed: ``evaluate``, plus ``stand_ins``); ``None`` when the package is not
    installed."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(spec.submodule_search_locations[0]) / f"{name}.py"
    mspec = importlib.util.spec_from_file_location(f"_runtime_{package}_{name}", path)
    mod = importlib.util.module_from_spec(mspec)
    # evaluate: only measure="rougel" of the diversity package's homogenization runs
    fakes = {"evaluate": types.SimpleNamespace(load=None), **(stand_ins or {})}
    saved = {k: sys.modules.get(k) for k in fakes}
    sys.modules.update(fakes)
    try:
        mspec.loader.exec_module(mod)
    finally:
        for key, module in saved.items():
            if module is None:
                del sys.modules[key]
            else:
                sys.modules[key] = module
    return mod


def _ours(name: str, key: str, **params) -> Callable[[list[str]], float]:
    from genmetrics.metrics import compute

    def run(texts: list[str]) -> float:
        return compute(name, texts, params=params).values[key]

    return run


def _ours_pos(texts: list[str]) -> float:
    from genmetrics.features.pos import tag_texts
    from genmetrics.metrics import compute

    return compute("pos_compression_ratio", tag_texts(texts)).values["compression_ratio"]


def _nltk_self_bleu(texts: list[str]) -> float:
    """Mean over all texts of nltk ``sentence_bleu(other texts, text)``, BLEU-4, method1
    smoothing, whitespace tokens (the loop of pr-4-llm, every text a hypothesis)."""
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

    smooth = SmoothingFunction().method1
    docs = [t.split() for t in texts]
    scores = [
        sentence_bleu(docs[:i] + docs[i + 1 :], docs[i], smoothing_function=smooth)
        for i in range(len(docs))
    ]
    return sum(scores) / len(scores)


def shaib_scores(
    n_jobs: int = 2,
    caps: dict[str, int | None] | None = None,
    scores: list[str] | None = None,
) -> list[ScoreTiming]:
    """The Fig. 3 scores (``scores``: a subset of :data:`SCORES`, default all) with ours and
    the reference. ``caps``: largest N per ``"<score>"`` (both implementations) or
    ``"<score>:ours"`` / ``"<score>:reference"``. ``n_jobs``: threads of our ROUGE-L."""
    caps = dict(caps or {})
    names = list(SCORES) if scores is None else scores
    unknown = sorted(set(names) - set(SCORES))
    if unknown:
        from genmetrics import GenmetricsError

        raise GenmetricsError(f"runtime: unknown score(s) {unknown}; known: {list(SCORES)}")
    missing = "unavailable: the diversity package is not installed (make install-test)"
    comp = package_module("compression")
    pkg = {
        "compression_ratio": comp,
        "pos_compression_ratio": comp,
        "ngram_diversity": package_module("ngram_diversity"),
        "self_repetition": package_module("self_repetition"),
        "homogenization_rougel": package_module("homogenization"),
    }

    refs: dict[str, tuple[Callable | None, str]] = {}
    if comp is not None:
        refs["compression_ratio"] = (
            comp.compression_ratio,
            "diversity 0.3.1 compression_ratio",
        )

        def pos_ref(texts: list[str]) -> float:
            import nltk

            from genmetrics.data.assets import use_nltk_data

            use_nltk_data()
            tags = [" ".join(t for _, t in nltk.pos_tag(x.split())) for x in texts]
            return comp.compression_ratio(tags)

        refs["pos_compression_ratio"] = (
            pos_ref,
            "nltk.pos_tag(text.split()) per text (diversity ≤ 0.1.22 get_pos) + diversity "
            "0.3.1 compression_ratio; 0.3.1's spaCy en_core_web_sm tagger is not installable "
            "offline",
        )
    else:
        refs["compression_ratio"] = refs["pos_compression_ratio"] = (None, missing)
    if pkg["ngram_diversity"] is not None:
        refs["ngram_diversity"] = (
            pkg["ngram_diversity"].ngram_diversity_score,
            "diversity 0.3.1 ngram_diversity_score",
        )
    else:
        refs["ngram_diversity"] = (None, missing)
    if pkg["self_repetition"] is not None:
        srep = pkg["self_repetition"].self_repetition_score
        refs["self_repetition"] = (
            lambda x: float(srep(x, verbose=False)),
            "diversity 0.3.1 self_repetition_score",
        )
    else:
        refs["self_repetition"] = (None, missing)
    if pkg["homogenization_rougel"] is not None:
        homog = pkg["homogenization_rougel"].homogenization_score
        refs["homogenization_rougel"] = (
            lambda x: homog(x, measure="rougel", verbose=False),
            "diversity 0.3.1 homogenization_score(measure='rougel') (rouge_score per pair)",
        )
    else:
        refs["homogenization_rougel"] = (None, missing)
    refs["homogenization_bertscore"] = (
        None,
        _HUB.format(
            "the package runs evaluate.load('bertscore'), a hub-hosted script, with "
            "microsoft/deberta-base-mnli, a hub model"
        ),
    )
    refs["self_bleu"] = (
        _nltk_self_bleu,
        "nltk sentence_bleu loop (pr-4-llm, all texts as hypotheses); the package's own BLEU "
        + _HUB.format(
            "homogenization_score(measure='bleu') runs evaluate.load('bleu') from the hub"
        ),
    )
    ours = {
        "compression_ratio": _ours("compression_ratio", "compression_ratio"),
        "pos_compression_ratio": _ours_pos,
        "ngram_diversity": _ours("ngram_diversity", "ngram_diversity"),
        "self_repetition": _ours("self_repetition", "self_repetition"),
        "homogenization_rougel": _ours(
            "homogenization",
            "homogenization",
            tokenizer="rouge_score",
            zero_total="package",
            n_jobs=n_jobs,
        ),
        "homogenization_bertscore": _ours("homogenization", "homogenization", measure="bertscore"),
        "self_bleu": _ours("self_bleu", "self_bleu"),
    }
    unrounded = {"self_repetition", "self_bleu"}
    out = []
    for name in names:
        fn, ref_name = refs[name]
        out.append(
            ScoreTiming(
                score=name,
                label=SCORES[name],
                ours=ours[name],
                reference=fn,
                reference_name=ref_name,
                digits=None if name in unrounded else 3,
                ours_max_n=caps.get(f"{name}:ours", caps.get(name)),
                reference_max_n=caps.get(f"{name}:reference", caps.get(name)),
            )
        )
    return out
