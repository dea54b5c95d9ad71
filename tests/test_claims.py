"""Every registered metric's claim ("matches"/"as X": its ``upstream``) is checked by a test.

:data:`CLAIMS` maps each metric to the upstream string it registers and to the tests that
check that claim against the reference: the installed package as an oracle (mauve-text, prdc,
diversity, lexical-diversity, sacrebleu, rouge-score, nltk, bert-score, scipy), or, for
research code that is not installable (SimCTG, pr-4-llm, FACE, degen, mauve-experiments, HF
evaluate's perplexity, Su & Collier's compute_coherence.py, NoveltyBench's partition.py and
score.py), a re-implementation of the formula as the upstream code writes it, or, for packages
that install only with another torch (pytorch-fid, torch-fidelity, clean-fid), their function
copied into the test. A metric that registers an upstream without an entry here, or changes its
upstream string (a new claim, not yet checked), fails
:func:`test_every_claim_has_a_check`. The checks themselves live in the family test files
(listed by node name, and checked to exist) and, where a family file had none, below.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from genmetrics.metrics import all_metrics, compute

TESTS = Path(__file__).resolve().parent

#: metric → (its registered upstream, the tests that check the claim against that upstream)
CLAIMS: dict[str, tuple[str, tuple[str, ...]]] = {
    "bertscore": (
        "bert-score score (no baseline rescaling)",
        ("test_reference.py::test_bertscore_matches_bert_score",),
    ),
    "bleu": (
        "sacrebleu corpus_bleu",
        (
            "test_reference.py::test_bleu_matches_sacrebleu",
            "test_reference.py::test_empty_texts_equal_sacrebleu_and_rouge_score",
        ),
    ),
    "coherence": (
        "SimCTG / Contrastive Decoding coherence (SimCSE cosine)",
        ("test_coherence.py::test_simcse_cosine_matches_manual_and_orders",),
    ),
    "coherence_logprob": (
        "Su & Collier (2023) compute_coherence.py",
        ("test_coherence.py::test_logprob_matches_manual_loop",),
    ),
    "compression_ratio": (
        "diversity 0.3.1 compression_ratio",
        (
            "test_diversity.py::test_compression_ratio_small_corpora_equal_package",
            "test_diversity.py::test_compression_ratio_matches_package",
            "test_diversity.py::test_empty_texts_scored_as_package",
        ),
    ),
    "distinct_k": (
        "NoveltyBench 5b22b53 partition_responses, summarize mean_distinct",
        (
            "test_novelty.py::test_ngram_partition_equals_novelty_bench_on_its_own_generations",
            "test_novelty.py::test_ngram_partition_equals_novelty_bench_on_random_texts",
            "test_novelty.py::test_classifier_equals_novelty_bench_s_scores_and_partitions",
            "test_novelty.py::test_utility_reproduces_novelty_bench_stored_scores",
        ),
    ),
    "distinct_n": (
        "pr-4-llm get_unique_ngram_fraction",
        ("test_repetition.py::test_distinct_n_matches_pr4llm",),
    ),
    "embedding_diversity": (
        "diversity 0.3.1 remote_clique, chamfer_dist (embedding.py)",
        (
            "test_embedding_diversity.py::test_equals_the_package_embedding_module",
            "test_embedding_diversity.py::test_hand_computed_unit_vectors",
        ),
    ),
    "face": (
        "FACEScore 0976433 (fft_utils.py, metrics.py); FACE d4121f2 (align=face; SO not "
        "rounded to 4 per pair); FACE and FACE-2 papers as written (convention=face1/face2)",
        (
            "test_spectra.py::test_agrees_with_the_facescore_formulas",
            "test_face.py::test_cli_scores_paired_npz_files_like_the_facescore_formulas",
            "test_spectra.py::test_face_alignment_uses_the_true_frequencies",
            "test_claims.py::test_face_align_face_is_face_py",
            "test_face_conventions.py::test_face2_equations_on_a_hand_computed_example",
            "test_face_conventions.py::test_each_paper_convention_equals_its_papers_equations",
        ),
    ),
    # pytorch-fid and torch-fidelity need torchvision (their install would replace the pinned
    # torch): their functions are copied into the tests, with version and file named there
    "frechet": (
        "pytorch-fid 0.3.0 calculate_frechet_distance (np.cov, ddof=1)",
        (
            "test_frechet.py::test_matches_pytorch_fid",
            "test_frechet.py::test_a_singular_product_is_retried_with_eps_as_pytorch_fid",
            "test_frechet.py::test_imaginary_parts_dropped_below_1e3_refused_above",
        ),
    ),
    "hdd": (
        "lexical-diversity 0.1.1 lex_div.hdd",
        (
            "test_lexical.py::test_agrees_with_lexical_diversity_per_text",
            "test_lexical.py::test_registered_means_match_reference",
        ),
    ),
    "homogenization": (
        "diversity 0.3.1 homogenization_score",
        (
            "test_homogenization.py::test_homogenization_equals_package",
            "test_homogenization.py::test_empty_texts_equal_package",
            "test_homogenization.py::test_bertscore_equals_bert_score_package_loop",
        ),
    ),
    "kid": (
        "torch-fidelity 0.4.0 kid_features_to_metric (poly kernel, unbiased MMD²)",
        (
            "test_kid.py::test_matches_torch_fidelity",
            "test_kid.py::test_defaults_are_torch_fidelitys",
            "test_kid.py::test_a_subset_size_above_a_set_is_capped_as_clean_fid",
        ),
    ),
    "mattr": (
        "lexical-diversity 0.1.1 lex_div.mattr",
        (
            "test_lexical.py::test_agrees_with_lexical_diversity_per_text",
            "test_lexical.py::test_registered_means_match_reference",
        ),
    ),
    "mauve": (
        "mauve-text 0.4.0 compute_mauve",
        (
            "test_mauve.py::test_matches_mauve_text_with_faiss",
            "test_mauve.py::test_matches_mauve_text_non_default_params",
            "test_mauve.py::test_curve_functions_match_mauve_text",
        ),
    ),
    "mtld": (
        "lexical-diversity 0.1.1 lex_div.mtld",
        (
            "test_lexical.py::test_agrees_with_lexical_diversity_per_text",
            "test_lexical.py::test_registered_means_match_reference",
        ),
    ),
    "ngram_diversity": (
        "diversity 0.3.1 ngram_diversity_score",
        ("test_diversity.py::test_ngram_diversity_matches_package",),
    ),
    "ngram_vendi": (
        "vendi-score 0.0.3 ngram_vendi_score (tokenizer=str.split)",
        (
            "test_vendi.py::test_ngram_vendi_equals_the_package_on_real_texts",
            "test_vendi.py::test_ngram_vendi_equals_the_package_for_other_orders",
            "test_vendi.py::test_a_text_without_an_ngram_of_some_order_is_its_whole_token_sequence",
        ),
    ),
    # no public code: the paper's precision/recall formulas, by hand and against enumeration
    "omniinput": (
        "none public; the formulas of Liu et al.",
        (
            "test_omniinput.py::test_curves_hand_computed",
            "test_omniinput.py::test_pr_curve_from_wl_close_to_exact",
        ),
    ),
    "perplexity": (
        "HF evaluate perplexity mean_perplexity (= mean_text_perplexity); mauve-experiments "
        "get_perplexity_from_samples (= perplexity with token_count=sequence on surprisal "
        "with prepend=none)",
        (
            "test_perplexity.py::test_mean_text_perplexity_is_hf_evaluate_mean_perplexity",
            "test_perplexity.py::test_sequence_token_count_is_mauve_experiments_perplexity",
        ),
    ),
    "pos_compression_ratio": (
        "diversity 0.3.1 compression_ratio of POS sequences (NLTK perceptron tags of "
        "text.split(), as diversity <= 0.1.22; 0.3.1 tags with spaCy)",
        (
            "test_diversity.py::test_pos_compression_ratio_equals_compression_of_tags",
            "test_pos.py::test_whitespace_tags_equal_nltk_pos_tag_on_split",
        ),
    ),
    "pos_templates": (
        "diversity 0.3.1 template_rate, templates_per_token (extract_patterns top_n POS "
        "n-grams; matched on tags, not surface strings)",
        (
            "test_pos_templates.py::test_equals_the_package",
            "test_pos_templates.py::test_equals_the_package_by_default_on_its_defaults",
        ),
    ),
    "prd": (
        "pr-4-llm MAUVE-PR; Sajjadi et al. prd_score",
        (
            "test_prd.py::test_curve_matches_prd_score_formulas",
            "test_prd.py::test_pr4llm_equals_mauve_quantisation_plus_curve",
            "test_prd.py::test_sajjadi_enforces_balance",
        ),
    ),
    "precision_recall": (
        "prdc 0.2 compute_prdc; pr-4-llm preprocessing",
        (
            "test_precision_recall.py::test_matches_prdc_exactly",
            "test_precision_recall.py::test_pca_matches_pr4llm_preprocessing",
        ),
    ),
    "rep_n": (
        "SimCTG measure_repetition_and_diversity",
        (
            "test_repetition.py::test_rep_n_matches_simctg",
            "test_repetition.py::test_empty_texts_scored_as_simctg_and_pr4llm",
        ),
    ),
    "rke": (
        "rke-score 0.0.7 RKE.compute_rke_mc_frobenius_norm (inverted)",
        (
            "test_rke.py::test_equals_the_authors_package",
            "test_rke.py::test_equals_the_order_2_vendi_score_of_the_same_kernel",
        ),
    ),
    "rouge": (
        "rouge-score RougeScorer",
        (
            "test_reference.py::test_rouge_matches_rouge_score",
            "test_reference.py::test_empty_texts_equal_sacrebleu_and_rouge_score",
        ),
    ),
    "self_bleu": (
        "nltk sentence_bleu; pr-4-llm SelfBLEU",
        (
            "test_self_bleu.py::test_per_hypothesis_equals_nltk",
            "test_self_bleu.py::test_sampling_reproduces_pr4llm",
            "test_self_bleu.py::test_empty_texts_equal_nltk",
        ),
    ),
    "self_repetition": (
        "diversity 0.3.1 self_repetition_score",
        ("test_diversity.py::test_self_repetition_matches_package",),
    ),
    "ttr": (
        "lexical-diversity 0.1.1 lex_div.ttr",
        ("test_lexical.py::test_registered_means_match_reference",),
    ),
    "utility_k": (
        "NoveltyBench 5b22b53 score.py utility, summarize mean_utility",
        (
            "test_novelty.py::test_utility_reproduces_novelty_bench_stored_scores",
            "test_novelty.py::test_hand_case_three_prompts_four_samples",
        ),
    ),
    "vendi": (
        "vendi-score 0.0.3 score_dual / score_K (score_X ignores q)",
        (
            "test_vendi.py::test_dual_form_equals_the_kernel_form_and_the_package",
            "test_vendi.py::test_package_score_x_ignores_q_and_ours_does_not",
            "test_vendi.py::test_vendi_of_a_hand_computed_3x3_kernel",
        ),
    ),
    "zipf": (
        "degen metrics/zipf.py (scipy linregress; zipf_r 0 where scipy's r is NaN: all fitted "
        "frequencies equal); mauve-experiments zipf_coeff",
        (
            "test_zipf.py::test_matches_upstream_oracles_whitespace",
            "test_zipf.py::test_matches_upstream_oracles_gpt2_real_text",
            "test_zipf.py::test_equal_frequencies_slope_as_upstream_r_zero_where_scipy_is_nan",
        ),
    ),
}


def _builtin_metrics() -> dict:
    """The metrics of genmetrics itself (a plugin a test loads registers its own claims)."""
    return {
        name: m
        for name, m in all_metrics().items()
        if m.func.__module__.startswith("genmetrics.metrics.")
    }


@cache
def _test_functions(file: str) -> frozenset[str]:
    tree = ast.parse((TESTS / file).read_text(encoding="utf-8"))
    return frozenset(
        n.name
        for n in tree.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name.startswith("test_")
    )


def test_every_claim_has_a_check():
    metrics = _builtin_metrics()
    assert metrics, "no built-in metric registered"
    missing = sorted(n for n, m in metrics.items() if m.upstream and n not in CLAIMS)
    assert not missing, f"metrics whose upstream claim no test checks (add to CLAIMS): {missing}"
    changed = {
        n: m.upstream for n, m in metrics.items() if n in CLAIMS and CLAIMS[n][0] != m.upstream
    }
    assert not changed, f"upstream changed: check the new claim, then update CLAIMS: {changed}"
    stale = sorted(set(CLAIMS) - set(metrics))
    assert not stale, f"CLAIMS lists metrics that are not registered: {stale}"


@pytest.mark.parametrize("name", sorted(CLAIMS))
def test_every_listed_check_exists(name):
    _, checks = CLAIMS[name]
    assert checks, name
    for check in checks:
        file, func = check.split("::")
        assert (TESTS / file).exists(), check
        assert func in _test_functions(file), f"{name}: {check} is not a test function"


def test_a_new_upstream_without_an_entry_fails(monkeypatch):
    """The guard itself: a metric registering an upstream that CLAIMS does not list."""
    from dataclasses import replace

    from genmetrics.metrics import registry

    fake = replace(registry.get("ttr"), name="fake_metric", upstream="somebody's package")
    monkeypatch.setitem(registry._REGISTRY, "fake_metric", fake)
    with pytest.raises(AssertionError, match=r"no test checks.*fake_metric"):
        test_every_claim_has_a_check()


# --------------------------------------------------------------- checks no family file had


def _face_py(x1: np.ndarray, x2: np.ndarray) -> dict[str, float]:
    """CLCS-SUSTech/FACE for one (human, model) pair, as its code writes it: ``run_fft.py``
    FFTProcessor (value ``norm``): ``fftshift(fftfreq(N))`` and ``|fftshift(fft(x))|``, second
    half ``[N//2:]``; ``face.py``: ``interp1d(freq, power, fill_value="extrapolate")`` on
    ``linspace(0, 0.5, 1000)``; getSO = trapz(min |y|) / trapz(max |y|) (rounded to 4 there);
    getPearson, getSpearmanr (scipy); getSAM = arccos(<y1/|y1|, y2/|y2|>) / π."""
    from scipy import interpolate
    from scipy.stats import pearsonr, spearmanr

    def spec(x):
        n = len(x)
        freq = np.fft.fftshift(np.fft.fftfreq(n))[n // 2 :]
        power = np.abs(np.fft.fftshift(np.fft.fft(x)))[n // 2 :]
        return freq, power

    x = np.linspace(0, 0.5, 1000)
    y1 = interpolate.interp1d(*spec(x1), fill_value="extrapolate")(x)
    y2 = interpolate.interp1d(*spec(x2), fill_value="extrapolate")(x)
    a1, a2 = np.abs(y1), np.abs(y2)
    trapz = getattr(np, "trapezoid", None) or np.trapz
    so = trapz(np.minimum(a1, a2), x) / trapz(np.maximum(a1, a2), x)
    cos = np.dot(y1 / np.linalg.norm(y1), y2 / np.linalg.norm(y2))
    return {
        "so": float(so),
        "corr": float(pearsonr(y1, y2)[0]),
        "spear": float(spearmanr(y1, y2)[0]),
        "sam": float(np.arccos(cos) / np.pi),
    }


def test_face_align_face_is_face_py():
    """``align=face`` against FACE's own face.py formulas, pair by pair (paired by prompt, as
    FACE pairs line i with line i); SO unrounded here, FACE rounds it to 4 decimals."""
    rng = np.random.default_rng(7)
    human = [rng.gamma(2.0, 2.0, size=n) for n in (40, 57, 120, 301)]
    model = [rng.gamma(1.5, 2.5, size=n) for n in (63, 44, 200, 99)]
    res = compute(
        "face",
        model,
        human,
        params={"align": "face", "pairing": "prompt"},
        links=[[i] for i in range(len(model))],
    )
    want = [_face_py(h, m) for h, m in zip(human, model, strict=True)]
    for key in ("so", "corr", "spear", "sam"):
        expect = np.mean([w[key] for w in want])
        assert res.values[key] == pytest.approx(expect, abs=1e-9), key
    # FACE's printed SO (4 decimals per pair) is within 5e-5 of ours
    rounded = np.mean([round(w["so"], 4) for w in want])
    assert abs(res.values["so"] - rounded) <= 5e-5
