"""NoveltyBench's per-prompt diversity (Zhang et al. 2025): ``distinct_k`` and ``utility_k``.

Oracles: NoveltyBench's own partition, equivalence and utility code, copied below from
novelty-bench/novelty-bench at commit 5b22b53dedd4ec37e1d30a5dbeb2ea6beaa752ca (the package is
not on PyPI; its dependencies include openai, datasets and bert_score), run with rouge-score
0.1.2 as its ``unigram`` check does; and the stored partitions and utilities of its example
leaderboard submission (tests/data/novelty_bench/README.md). Hand-computed cases: 3 prompts
x 4 samples with known classes, utilities with weights 0.8^i.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import REPO, placeholder_checkpoint

from genmetrics import GenmetricsError
from genmetrics.io import write_jsonl
from genmetrics.metrics import compute, get, register, registry
from genmetrics.metrics.novelty import classifier_score, quick_equality
from genmetrics.npz import save_npz
from genmetrics.scoring.from_files import score_files, score_loaded

DATA = Path(__file__).resolve().parent / "data" / "novelty_bench"

# ----------------------------------------------------------------------------------------
# The oracle: novelty-bench/novelty-bench, commit 5b22b53dedd4ec37e1d30a5dbeb2ea6beaa752ca,
# src/partition.py (rouge1, equivalence_check_unigram, maybe_test_equality,
# equivalence_check_classifier, classifier_score, partition_responses), copied unchanged
# but for the module-level objects they read (the scorer; the classifier is injected).
# ----------------------------------------------------------------------------------------
from rouge_score import rouge_scorer as _rouge_scorer_module  # noqa: E402

rouge_scorer = _rouge_scorer_module.RougeScorer(["rouge1"])
_ORACLE_CLASSIFIER: dict = {}


def load_deberta_tokenizer_and_model():  # the test's tiny classifier instead of the hub's
    return _ORACLE_CLASSIFIER["tokenizer"], _ORACLE_CLASSIFIER["model"]


async def rouge1(prompt: str, s1: str, s2: str):
    rouge_eval = rouge_scorer.score(s1, s2)
    return rouge_eval["rouge1"].fmeasure


async def equivalence_check_unigram(prompt: str, response_0: str, response_1: str) -> bool:
    return await rouge1(prompt, response_0, response_1) > 0.458


def maybe_test_equality(response_0: str, response_1: str) -> bool | None:
    unigram_0 = response_0.strip().lower().split()
    unigram_1 = response_1.strip().lower().split()
    max_len = max(len(unigram_0), len(unigram_1))
    if max_len <= 5:
        common_unigrams = set(unigram_0) & set(unigram_1)
        return len(common_unigrams) * 2 >= max_len

    return None


async def classifier_score_oracle(prompt: str, s1: str, s2: str):  # partition.classifier_score
    import torch

    tokenizer, model = load_deberta_tokenizer_and_model()
    input_ids = [tokenizer.cls_token_id]
    for s in [s1, s2]:
        input_ids.extend(
            tokenizer.encode(
                s,
                truncation=True,
                max_length=128,
                add_special_tokens=False,
            )
        )
        input_ids.append(tokenizer.sep_token_id)
        prompt_len = input_ids.index(tokenizer.sep_token_id) + 1
    token_type_ids = [0] * prompt_len + [1] * (len(input_ids) - prompt_len)

    DEVICE = "cpu"
    iids = torch.tensor(input_ids, device=DEVICE, dtype=torch.int64)
    tids = torch.tensor(token_type_ids, device=DEVICE, dtype=torch.int64)

    with torch.inference_mode():
        outputs = model(input_ids=iids.unsqueeze(0), token_type_ids=tids.unsqueeze(0))
    score = outputs["logits"].softmax(-1)[0, 1]
    return score.cpu().item()


def make_classifier_check(threshold: float):  # equivalence_check_classifier, its 0.102 a param
    async def equivalence_check_classifier(prompt: str, response_0: str, response_1: str) -> bool:
        equality = maybe_test_equality(response_0, response_1)
        if equality is not None:
            return equality
        score = await classifier_score_oracle(prompt, response_0, response_1)
        return score > threshold

    return equivalence_check_classifier


async def partition_responses(
    prompt: str,
    responses: list[str],
    equivalence_alg,
) -> list[int]:
    """Partitions responses into equivalence classes."""
    equivalence_classes = []
    partition = [-1] * len(responses)

    for i in range(len(responses)):
        if partition[i] >= 0:
            continue

        current_class = [responses[i]]
        partition[i] = len(equivalence_classes)

        for j in range(i + 1, len(responses)):
            if partition[j] == -1 and await equivalence_alg(
                prompt,
                current_class[0],
                responses[j],
            ):
                current_class.append(responses[j])
                partition[j] = len(equivalence_classes)

        equivalence_classes.append(current_class)

    assert all(p >= 0 for p in partition)
    return partition


def utility_oracle(scores: list[float], partition: list[int], patience: float) -> float:
    """src/score.py (same commit): score_partition_rm's loop over (score, partition), then
    process_single_instance's np.average with weights patience ** arange(k)."""
    generation_scores = []
    partition_scores = []

    for s, p in zip(scores, partition, strict=False):
        if p == len(partition_scores):
            generation_scores.append(s)
            partition_scores.append(s)
        else:
            generation_scores.append(0)
    return np.average(generation_scores, weights=patience ** np.arange(len(scores)))


def oracle_partition(responses: list[str], check=equivalence_check_unigram) -> list[int]:
    return asyncio.run(partition_responses("", responses, check))


# ---------------------------------------------------------------------------- helpers


def records(groups: dict[str, list[str]], **fields: dict[str, list]) -> list[dict]:
    """Generation rows: ids <prompt>~<j>, prompt_id, prompt, continuation (+ fields)."""
    out = []
    for p, texts in groups.items():
        for j, t in enumerate(texts):
            row = {"id": f"{p}~{j}", "prompt_id": p, "sample": j, "prompt": f"Prompt {p}."}
            row.update(continuation=t, text=t)
            row.update({k: v[p][j] for k, v in fields.items()})
            out.append(row)
    return out


def run(name: str, rows: list[dict], **params):
    return compute(name, rows, params=params, prompt_ids=[r["prompt_id"] for r in rows])


W = 0.8 ** np.arange(4)  # the discount weights of 4 samples: 1, 0.8, 0.64, 0.512

#: 3 prompts x 4 samples with known classes under ROUGE-1 F > 0.458
HAND = {
    # one class: copies, a reordering, one word changed (F = 5/6)
    "same": [
        "the cat sat on the mat",
        "the cat sat on the mat",
        "on the mat the cat sat",
        "the cat sat on a mat",
    ],
    # the representative rule: s1 ~ s0 (F 2/3), s2 ~ s1 (F 1/2) but not s0 (F 0), so s2 opens
    # class 1 and s3 joins it (F 2/3 with s2); chaining s0~s1~s2~s3 would give one class
    "chain": [
        "alpha beta gamma delta",
        "alpha beta gamma delta epsilon zeta eta theta",
        "epsilon zeta eta theta iota kappa lambda mu",
        "iota kappa lambda mu",
    ],
    # four classes: no word shared
    "apart": [
        "a storm hit the coast",
        "my grandmother baked bread",
        "quantum computers factor numbers",
        "jazz musicians improvise freely",
    ],
}
HAND_PARTITIONS = [[0, 0, 0, 0], [0, 0, 1, 1], [0, 1, 2, 3]]


# ---------------------------------------------------------------------------- hand cases


def test_hand_case_three_prompts_four_samples():
    rows = records(HAND)
    d = run("distinct_k", rows)
    assert d.extras["per_prompt"]["partitions"] == HAND_PARTITIONS
    assert d.extras["per_prompt"]["distinct"] == [1, 2, 4]
    assert d.values == {
        "distinct_k": pytest.approx(7 / 3, abs=1e-15),
        "distinct_k_median": 2.0,
        "distinct_k_min": 1.0,
        "prompts": 3.0,
        "k": 4.0,
    }
    assert d.n == {"candidate": 12, "prompts": 3, "excluded_prompts": 0, "unscored_samples": 0}
    # g = [1,0,0,0], [1,0,1,0], [1,1,1,1]; utility = sum(0.8^i g_i) / sum(0.8^i)
    per = [1 / 2.952, 1.64 / 2.952, 1.0]
    u = run("utility_k", rows)
    assert u.extras["per_prompt"]["utility"] == pytest.approx(per, abs=1e-12)
    assert u.values["utility_k"] == pytest.approx(np.mean(per), abs=1e-12)
    assert u.values["utility_k_median"] == pytest.approx(1.64 / 2.952, abs=1e-12)
    assert W.sum() == pytest.approx(2.952)
    # patience 1: the share of samples that open a class
    u1 = run("utility_k", rows, patience=1.0)
    assert u1.extras["per_prompt"]["utility"] == pytest.approx([0.25, 0.5, 1.0], abs=1e-15)


def test_quality_weights_and_the_quality_gate():
    q = {"same": [9, 2, 2, 2], "chain": [3, 9, 5, 7], "apart": [1, 0, 4, True]}
    rows = records(HAND, reward=q)
    u = run("utility_k", rows, quality="reward")
    # only each class's first sample counts: same 9; chain 3 and 5 (s0, s2); apart 1,0,4,1
    want = [9 / 2.952, (3 + 0.64 * 5) / 2.952, (1 + 0.64 * 4 + 0.512) / 2.952]
    assert u.extras["per_prompt"]["utility"] == pytest.approx(want, abs=1e-12)
    gated = run("utility_k", rows, quality="reward", quality_threshold=4)
    # gate: 1 where reward >= 4: same [1], chain s0=3 -> 0, s2=5 -> 1; apart only s2=4
    want = [1 / 2.952, 0.64 / 2.952, 0.64 / 2.952]
    assert gated.extras["per_prompt"]["utility"] == pytest.approx(want, abs=1e-12)
    bad = records(HAND, reward={**q, "apart": [1, -2, 4, 1]})
    with pytest.raises(GenmetricsError, match=r"record 9 \(id 'apart~1'\).*'reward' = -2"):
        run("utility_k", bad, quality="reward")
    with pytest.raises(GenmetricsError, match="quality field 'score' = None"):
        run("utility_k", rows, quality="score")
    with pytest.raises(GenmetricsError, match="quality_threshold gates the quality field"):
        run("utility_k", rows, quality_threshold=4)


def test_the_threshold_is_strict_and_empty_answers_are_one_class_unless_asked():
    # "a b" vs "a c": P = R = F = 0.5, not above 0.5
    rows = records({"p": ["a b", "a c", "a b", "x y"]})
    assert run("distinct_k", rows, threshold=0.5).extras["per_prompt"]["partitions"] == [
        [0, 1, 0, 2]
    ]
    assert run("distinct_k", rows, threshold=0.49).extras["per_prompt"]["partitions"] == [
        [0, 0, 0, 1]
    ]
    # answers without a word: equal ones are one class by default; NoveltyBench's unigram
    # check alone gives each its own (rouge_score's F of two empty token lists is 0)
    empties = ["", "  ", "!!", "a dog", "!!"]
    rows = records({"p": empties})
    assert run("distinct_k", rows).extras["per_prompt"]["partitions"] == [[0, 0, 1, 2, 1]]
    alone = run("distinct_k", rows, reflexive=False)
    assert alone.extras["per_prompt"]["partitions"] == [oracle_partition(empties)]
    assert alone.values["distinct_k"] == 5.0


# ---------------------------------------------------------------------------- oracles


def test_ngram_partition_equals_novelty_bench_on_its_own_generations():
    """NoveltyBench's unigram partition of gemini-1.5-pro's 10 answers to each of 14 prompts
    (its example submission): every partition identical (``reflexive: false``), classes 1 to
    10; by default only the emoji prompt differs (9 x 🔮 and 1 x 🌟: 2 classes, not 10)."""
    rows_in = [json.loads(line) for line in (DATA / "gemini_curated_generations.jsonl").open()]
    rows = records({r["id"]: r["generations"] for r in rows_in})
    want = [oracle_partition(r["generations"]) for r in rows_in]
    for tokenizer in ("unicode", "rouge_score"):
        got = run("distinct_k", rows, tokenizer=tokenizer, reflexive=False).extras["per_prompt"]
        assert got["partitions"] == want
    assert sorted(set(got["distinct"])) == [1, 2, 3, 4, 5, 6, 7, 9, 10]
    default = run("distinct_k", rows).extras["per_prompt"]["partitions"]
    differ = [r["id"] for r, a, b in zip(rows_in, default, want, strict=True) if a != b]
    assert differ == ["curated-91"] and rows_in[8]["prompt"] == "Pick an emoji at random."
    assert default[8] == [0, 0, 0, 1, 0, 0, 0, 0, 0, 0]


def test_ngram_partition_equals_novelty_bench_on_random_texts():
    """Short texts over a small vocabulary put ROUGE-1 F on both sides of 0.458; with empty
    and word-less answers and ``reflexive: false``, NoveltyBench's check exactly."""
    rng = np.random.default_rng(7)
    vocab = "red blue green cat dog bird runs sleeps sings The, a".split()
    groups = {}
    for p in range(60):
        texts = [" ".join(rng.choice(vocab, size=int(rng.integers(1, 8)))) for _ in range(6)]
        if p % 10 == 0:
            texts[int(rng.integers(0, 6))] = ["", "...", "  "][p % 3]
        groups[f"q{p}"] = texts
    got = run("distinct_k", records(groups), reflexive=False).extras["per_prompt"]["partitions"]
    want = [oracle_partition(t) for t in groups.values()]
    assert got == want
    assert len({tuple(x) for x in want}) > 15  # many different partitions were checked


def test_utility_reproduces_novelty_bench_stored_scores():
    """The 100 stored (partition, reward scores, utility) rows of NoveltyBench's example
    submission: each utility to 1e-12 (their file has two that differ from a numpy 2
    recomputation in the last bit), the mean to summary.json's mean_utility. End to end:
    texts built to have exactly the stored partition, the stored scores as the quality."""
    stored = [json.loads(line) for line in (DATA / "gemini_curated_scores.jsonl").open()]
    groups, reward = {}, {}
    for r in stored:
        assert utility_oracle(r["generation_scores"], r["partition"], 0.8) == pytest.approx(
            r["utility"], abs=1e-12
        )
        # class c's answers are one text no other class shares a word with
        groups[r["id"]] = [f"answer{c} idea{c} for {r['id']}x{c}" for c in r["partition"]]
        reward[r["id"]] = r["generation_scores"]
    rows = records(groups, reward=reward)
    u = run("utility_k", rows, quality="reward", patience=0.8)
    assert u.extras["per_prompt"]["partitions"] == [r["partition"] for r in stored]
    assert u.extras["per_prompt"]["utility"] == pytest.approx(
        [r["utility"] for r in stored], abs=1e-12
    )
    assert u.values["utility_k"] == pytest.approx(2.8658255953362204, abs=1e-12)
    d = run("distinct_k", rows)
    # summarize.py: mean(len(partition_scores)) = mean classes; the submission's
    # summary.json says 0.83, the mean of partition.py's `distinct` = max(partition)
    assert d.values["distinct_k"] == pytest.approx(1.83, abs=1e-12)
    assert np.mean([max(r["partition"]) for r in stored]) == pytest.approx(0.83, abs=1e-12)


def test_quick_equality_is_novelty_bench_s():
    cases = [
        ("", ""),
        ("Yes", "yes."),
        ("Paris", "paris"),
        ("The answer is 42", "It is 42 I think"),
        ("red blue", "blue green yellow"),
        ("one two three four five six", "one two three four five six"),
        ("a b c d e", "a b"),
        ("a b c d e", "a b c"),
    ]
    for a, b in cases:
        assert quick_equality(a, b) == maybe_test_equality(a, b), (a, b)
    assert quick_equality("one two three four five six", "x") is None


@pytest.fixture(scope="module")
def tiny_classifier(tmp_path_factory):
    """A tiny random DeBERTa-v2 pair classifier (token types on) and a word-level tokenizer
    with [CLS]/[SEP], saved as a folder; initialised wide (std 0.3) so that P(equivalent)
    depends on the pair (at std 0.02 it is 0.505 for every pair)."""
    torch = pytest.importorskip("torch")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny matrices: more threads only wait for each other
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers
    from transformers import (
        DebertaV2Config,
        DebertaV2ForSequenceClassification,
        PreTrainedTokenizerFast,
    )

    from genmetrics.testing.tiny_lm import TINY_VOCAB

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    vocab = {w: i for i, w in enumerate(specials + TINY_VOCAB)}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tk.normalizer = normalizers.Lowercase()
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
        sep_token="[SEP]",
    )  # fmt: skip
    torch.manual_seed(0)
    cfg = DebertaV2Config(
        vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
        intermediate_size=64, type_vocab_size=2, num_labels=2, relative_attention=True,
        position_biased_input=False, pos_att_type=["p2c", "c2p"], max_relative_positions=-1,
        position_buckets=32, initializer_range=0.3,
    )  # fmt: skip
    model = DebertaV2ForSequenceClassification(cfg).eval()
    folder = tmp_path_factory.mktemp("nb_classifier")
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    _ORACLE_CLASSIFIER.update(tokenizer=tok, model=model)
    yield folder
    torch.set_num_threads(threads)


def test_classifier_equals_novelty_bench_s_scores_and_partitions(tiny_classifier):
    rng = np.random.default_rng(3)
    words = "the cat dog sat ran on in mat park and then it was happy sad big red".split()

    def text(n):
        return " ".join(rng.choice(words, size=n))

    groups = {f"c{p}": [text(int(rng.integers(6, 40))) for _ in range(5)] for p in range(6)}
    groups["c0"][2] = "the cat"  # short answers: maybe_test_equality, not the classifier
    groups["c0"][4] = "The cat."
    groups["c1"][1] = " ".join(["big"] * 300)  # longer than 128 tokens: cut per side
    pairs = [(t[0], u) for t in groups.values() for u in t[1:]]
    ours = classifier_score(pairs, str(tiny_classifier), batch_size=4)
    want = [asyncio.run(classifier_score_oracle("", a, b)) for a, b in pairs]
    assert ours == pytest.approx(want, abs=1e-5)
    assert ours.min() < 0.2 and ours.max() > 0.8  # the decisions below are not all alike
    threshold = float(np.median(ours))
    assert np.abs(ours - threshold).min() > 1e-4 or threshold in ours
    rows = records(groups)
    got = run(
        "distinct_k", rows, equivalence="classifier", model=str(tiny_classifier),
        threshold=threshold, batch_size=3,
    ).extras["per_prompt"]["partitions"]  # fmt: skip
    check = make_classifier_check(threshold)
    assert got == [oracle_partition(t, check) for t in groups.values()]
    assert got[0][4] == got[0][2]  # "the cat" ~ "The cat." by the short-answer rule


def test_classifier_counts_the_samples_it_cut_at_128_tokens(tiny_classifier):
    """The classifier reads each side of a pair from its first 128 tokens: the samples it
    read with more are counted, per sample (the score record's ``truncation`` and a warning);
    samples of at most 5 words decided by the short-answer rule are not read, not counted."""
    words = "the cat dog sat ran on in mat park and then it was happy sad big red".split()
    rng = np.random.default_rng(5)

    def text(n):
        return " ".join(rng.choice(words, size=n))

    groups = {
        "a": [text(10), " ".join(["big"] * 300), text(12), text(9)],
        "b": [text(20), text(30), " ".join(["red"] * 129), text(128)],  # 129 cut, 128 fits
        "c": ["the cat", "The cat.", "a dog", "the dog"],  # short answers only: not read
    }
    rows = records(groups)
    params = {"equivalence": "classifier", "model": str(tiny_classifier), "threshold": 0.5}
    res = run("distinct_k", rows, **params)
    assert res.truncation == {
        "candidate": {"texts": 8, "truncated": 2, "max_tokens": 128, "longest": 300}
    }
    rec = score_loaded("utility_k", rows, rows, params=params)
    assert rec["truncation"] == res.truncation
    assert rec["warnings"] == [
        "texts truncated: 2 of 8 candidate texts (25%) cut at 128 tokens (longest 300)"
    ]
    short = records({"a": [text(10), text(12)], "b": [text(7), text(8)]})
    assert run("distinct_k", short, **params).truncation["candidate"]["truncated"] == 0
    assert run("distinct_k", short).truncation == {}  # ngram: no model, nothing cut


def test_classifier_needs_a_local_folder():
    rows = records(HAND)
    with pytest.raises(GenmetricsError, match=r"needs model: a local folder .*yimingzhang"):
        run("distinct_k", rows, equivalence="classifier")
    with pytest.raises(GenmetricsError, match="'/nonexistent/nb' is not a folder"):
        run("utility_k", rows, equivalence="classifier", model="/nonexistent/nb")
    m = get("distinct_k")
    assert m.loads_model(m.check_params({"equivalence": "classifier"}))
    assert not m.loads_model(m.defaults)
    assert m.check_params({"equivalence": "classifier"})["threshold"] == 0.102


# ---------------------------------------------------------------------------- the point


def test_diverse_across_prompts_repetitive_within_each():
    """Each prompt's 5 answers reorder the same 30 words (one class each), every prompt has
    its own words: distinct-2/3 over all texts are high, distinct_k is 1. The same 150 texts
    regrouped so that each prompt gets answers of 5 different prompts: distinct-n is the
    same, distinct_k is 5."""
    rng = np.random.default_rng(0)
    P, k = 30, 5
    groups = {
        f"p{p}": [" ".join(rng.permutation([f"w{p}x{i}" for i in range(30)])) for _ in range(k)]
        for p in range(P)
    }
    texts = [t for g in groups.values() for t in g]
    corpus = compute("distinct_n", texts, params={"tokenizer": "whitespace", "n": 3}).values
    assert corpus["distinct_2"] > 0.9 and corpus["distinct_3"] > 0.95
    assert run("distinct_k", records(groups)).values["distinct_k"] == 1.0
    one_class = 1 / sum(0.8**i for i in range(k))  # only the first answer opens a class
    assert run("utility_k", records(groups)).values["utility_k"] == pytest.approx(one_class)
    regrouped = {f"r{p}": [groups[f"p{(p + j) % P}"][j] for j in range(k)] for p in range(P)}
    texts2 = [t for g in regrouped.values() for t in g]
    assert sorted(texts2) == sorted(texts)
    assert (
        compute("distinct_n", texts2, params={"tokenizer": "whitespace", "n": 3}).values == corpus
    )
    assert run("distinct_k", records(regrouped)).values["distinct_k"] == float(k)
    assert run("utility_k", records(regrouped)).values["utility_k"] == pytest.approx(1.0)


# ---------------------------------------------------------------------------- embeddings


def test_embedding_equivalence_reads_the_featurizer_s_file(tmp_path):
    """equivalence: embedding reads an embeddings file (input_by) whose prompt_ids group the
    rows; cosine strictly above the threshold. Hand vectors: in prompt a, rows 1 (2·e1) and
    3 (cos 0.95 with e1) join row 0 and row 2 (e2) opens a class; in prompt b, row 2 (cos 0.95
    with row 1) joins row 1's class, row 3 (cos 0.95 with row 2, 0.805 with row 1) does not:
    it is compared with the class's first row only."""
    e1, e2, e3 = np.eye(3)
    t = np.arccos(0.95)
    near, far = np.cos(t) * e1 + np.sin(t) * e2, np.cos(2 * t) * e1 + np.sin(2 * t) * e2
    emb = np.array([e1, 2 * e1, e2, near, e3, e1, near, far])
    ids = [f"a~{j}" for j in range(4)] + [f"b~{j}" for j in range(4)]
    save_npz(tmp_path / "g.npz", ids=ids, prompt_ids=[i[0] for i in ids], emb=emb)
    params = {"equivalence": "embedding"}
    rec = score_files("distinct_k", tmp_path / "g.npz", params=params)
    assert rec["extras"]["per_prompt"]["partitions"] == [[0, 0, 1, 0], [0, 1, 1, 2]]
    assert rec["values"]["distinct_k"] == 2.5 and "mean_words" not in rec["values"]
    assert rec["params"]["threshold"] == 0.9
    rec = score_files("distinct_k", tmp_path / "g.npz", params={**params, "threshold": 0.96})
    assert rec["extras"]["per_prompt"]["partitions"] == [[0, 0, 1, 2], [0, 1, 2, 3]]
    u = score_files("utility_k", tmp_path / "g.npz", params={**params, "patience": 0.5})
    # weights 1, 0.5, 0.25, 0.125: g = [1, 0, 1, 0] and [1, 1, 0, 1]
    assert u["extras"]["per_prompt"]["utility"] == pytest.approx([1.25 / 1.875, 1.625 / 1.875])
    with pytest.raises(GenmetricsError, match="no per-text fields"):
        score_files("utility_k", tmp_path / "g.npz", params={**params, "quality": "reward"})
    with pytest.raises(GenmetricsError, match=r"candidate must be a \.jsonl file of records"):
        score_files("distinct_k", tmp_path / "g.npz")  # ngram reads records
    save_npz(tmp_path / "noid.npz", ids=ids, emb=emb)
    with pytest.raises(GenmetricsError, match=r"noid\.npz.*8 of 8 candidate row\(s\) have no"):
        score_files("distinct_k", tmp_path / "noid.npz", params=params)


# ---------------------------------------------------------------------------- grouping


def test_a_row_without_prompt_id_is_an_error_naming_the_file(tmp_path):
    rows = records(HAND)
    del rows[5]["prompt_id"]
    write_jsonl(tmp_path / "gen.jsonl", rows)
    with pytest.raises(GenmetricsError) as e:
        score_files("distinct_k", tmp_path / "gen.jsonl")
    assert str(e.value) == (
        f"{tmp_path / 'gen.jsonl'}: 1 of 12 candidate row(s) have no prompt_id, first row 6 "
        "(id 'chain~1'); distinct_k groups each prompt's samples by prompt_id"
    )
    write_jsonl(tmp_path / "ok.jsonl", records(HAND))
    rec = score_files("utility_k", tmp_path / "ok.jsonl")
    assert rec["n"]["prompts"] == 3 and rec["values"]["mean_words"] == pytest.approx(65 / 12)
    with pytest.raises(GenmetricsError, match="give prompt_ids, one per candidate"):
        compute("distinct_k", records(HAND))
    with pytest.raises(GenmetricsError, match="3 prompt ids for 12 candidates"):
        compute("distinct_k", records(HAND), prompt_ids=["a", "b", "c"])
    with pytest.raises(GenmetricsError, match="takes no prompt_ids"):
        compute("ttr", ["a b"], prompt_ids=["p"])


def test_prompts_with_fewer_samples_are_refused_or_counted():
    groups = {**HAND, "short": ["one answer", "another answer here"]}
    rows = records(groups)
    with pytest.raises(GenmetricsError) as e:
        run("distinct_k", rows)
    assert "1 of 4 prompt(s) have fewer than 4 samples (the most any prompt has), first " in str(
        e.value
    ) and "'short' with 2 (samples per prompt: {2: 1, 4: 3}); set k" in str(e.value)
    out = run("distinct_k", rows, short_prompts="exclude")
    assert out.values["distinct_k"] == pytest.approx(7 / 3) and out.values["prompts"] == 3
    assert out.n["excluded_prompts"] == 1
    # k = 2: every prompt's first 2 samples; the others are counted, not scored
    two = run("distinct_k", rows, k=2)
    assert two.extras["per_prompt"]["partitions"] == [[0, 0], [0, 0], [0, 1], [0, 1]]
    assert two.n["unscored_samples"] == 6 and two.values["k"] == 2.0
    with pytest.raises(GenmetricsError, match="no prompt has 5 samples"):
        run("distinct_k", rows, k=5, short_prompts="exclude")
    one = records({p: [t[0]] for p, t in HAND.items()})
    with pytest.raises(GenmetricsError, match="every prompt has 1 sample.*samples_per_prompt"):
        run("utility_k", one)
    assert get("distinct_k").min_items({"k": 6}) == (6, "k")


def test_a_parameter_of_another_equivalence_is_refused():
    rows = records(HAND)
    with pytest.raises(GenmetricsError, match="n applies to equivalence=ngram only, not embed"):
        compute(
            "distinct_k",
            np.eye(12),
            params={"equivalence": "embedding", "n": 2},
            prompt_ids=[r["prompt_id"] for r in rows],
        )
    with pytest.raises(GenmetricsError, match="model applies to equivalence=classifier only"):
        run("utility_k", rows, model="/tmp")
    orders = records({"p": ["a b c d", "d c b a", "a b c d e"]})  # same words, other bigrams
    assert run("distinct_k", orders).extras["per_prompt"]["partitions"] == [[0, 0, 0]]
    assert run("distinct_k", orders, n=2).extras["per_prompt"]["partitions"] == [[0, 1, 0]]


# ---------------------------------------------------------------------------- contract


def test_input_by_is_checked_at_registration(monkeypatch):
    from genmetrics.params import Options

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    spec = {"how": (Options("a", "b"), "which")}

    def f(candidate, *, how: str = "a"):
        return {"v": 1.0}

    for input_by, message in [
        ({"what": {"b": "embeddings"}}, "input_by parameter 'what' is not declared"),
        ({"how": {"c": "embeddings"}}, "one of a | b"),
        ({"how": {"b": "vectors"}}, "names kind 'vectors'"),
        ({"how": {"a": "embeddings"}}, "the default how='a' reads 'embeddings'"),
    ]:
        with pytest.raises((ValueError, GenmetricsError), match=message):
            register("_by", input="texts", values={"v": "higher"}, params=spec, input_by=input_by)(
                f
            )
    register("_by", input="texts", values={"v": "higher"}, params=spec,
             input_by={"how": {"b": "embeddings"}})(f)  # fmt: skip
    m = registry.get("_by")
    assert (m.input_kind({}), m.input_kind({"how": "b"})) == ("texts", "embeddings")
    assert m.describe()["input_by"] == {"how": {"b": "embeddings"}}
    from genmetrics.cli import markdown_table

    row = markdown_table([get("distinct_k").describe()]).splitlines()[-1]
    assert row.startswith(
        '| `distinct_k` | records (per prompt); embeddings with equivalence="embedding" |'
    )


@pytest.fixture
def plan_env(monkeypatch, tmp_path):
    monkeypatch.setenv("GENMETRICS_REPO", str(REPO))
    monkeypatch.setenv("GENMETRICS_TINY_MODEL", str(placeholder_checkpoint(tmp_path / "tiny")))


def test_the_plan_reads_records_or_the_continuation_embeddings(plan_env):
    from genmetrics.plan import load_plan

    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    cfg["metrics"] = {
        "dk": {"metric": "distinct_k"},
        "dk_emb": {"metric": "distinct_k", "featurizer": "minilm",
                   "params": {"equivalence": "embedding"}},
    }  # fmt: skip
    schema = REPO / "workflow" / "schemas" / "config.schema.yaml"
    plan = load_plan(cfg, schema)
    ds, model = next(iter(cfg["datasets"])), next(iter(cfg["models"]))
    src = f"{model}/seed0"
    assert plan.entries["dk"].input == "records" and plan.entries["dk_emb"].input == "embeddings"
    assert plan.score_inputs(ds, src, "dk")["candidate"] == f"results/generations/{ds}/{src}.jsonl"
    assert plan.score_inputs(ds, src, "dk_emb")["candidate"] == (
        f"results/features/embed/minilm/{ds}/{src}.continuation.npz"
    )
    assert plan.entries["dk_emb"].params["threshold"] == 0.9
    # one text per prompt: the human references are not scored
    assert not [t for t in plan.targets.scores if "/references/" in t]
    bad = {**cfg, "metrics": {"dk_emb": {**cfg["metrics"]["dk_emb"]}}}
    del bad["metrics"]["dk_emb"]["featurizer"]
    with pytest.raises(
        GenmetricsError, match=r"metrics\.dk_emb\.featurizer: required .*embeddings"
    ):
        load_plan(bad, schema)
    bad = {**cfg, "metrics": {"dk": {"metric": "distinct_k", "featurizer": "minilm"}}}
    with pytest.raises(GenmetricsError, match=r"metrics\.dk\.featurizer: not used .*records"):
        load_plan(bad, schema)
    bad = {**cfg, "metrics": {"dk": {"metric": "distinct_k", "length_control": "shortest"}}}
    with pytest.raises(GenmetricsError, match="length_control: cuts whole texts.*continuation"):
        load_plan(bad, schema)
