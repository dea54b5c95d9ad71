"""Input kinds: loaders by suffix, validation at the edge naming the file, and pairing that
cannot go wrong silently."""

from __future__ import annotations

import numpy as np
import pytest
from rouge_score import rouge_scorer

from genmetrics import GenmetricsError
from genmetrics.io import write_jsonl
from genmetrics.metrics.kinds import (
    KINDS,
    pair_rows,
    validate_embeddings,
    validate_pos,
    validate_surprisal,
)
from genmetrics.npz import save_npz
from genmetrics.scoring.from_files import score_files


def test_pairing_by_prompt_id_whatever_the_order():
    refs = [{"id": "a"}, {"id": "b"}, {"id": "c"}]
    cands = [{"prompt_id": "c"}, {"prompt_id": "a"}]
    assert pair_rows(refs, cands, "x") == ([2, 0], [0, 1])
    # rows without any id are never paired by position unless asked for by name
    with pytest.raises(GenmetricsError, match="x: a paired metric pairs by id, but 3 of 3 cand"):
        pair_rows(refs, [{}, {}, {}], "x")
    assert pair_rows(refs, [{}, {}, {}], "x", by="position") == ([0, 1, 2], [0, 1, 2])
    assert pair_rows(refs, cands + [{}], "x", by="position") == ([0, 1, 2], [0, 1, 2])


def test_without_a_prompt_link_candidates_pair_by_their_own_id_and_the_id_sets_must_match():
    refs = [{"id": "a"}, {"id": "b"}, {"id": 7}]
    assert pair_rows(refs, [{"id": "7"}, {"id": "a"}, {"id": "b"}], "x") == (
        [2, 0, 1],
        [0, 1, 2],
    )
    with pytest.raises(GenmetricsError, match="ids differ: 1 of 3 reference id.*first 'b'"):
        pair_rows(refs, [{"id": "7"}, {"id": "a"}], "x")
    with pytest.raises(GenmetricsError, match="2 of 3 candidate.*id matches no reference id, fi"):
        pair_rows(refs, [{"id": "a"}, {"id": "q"}, {"id": "r"}], "x")
    with pytest.raises(GenmetricsError, match="candidate id 'a' occurs more than once"):
        pair_rows(refs, [{"id": "a"}, {"id": "a"}, {"id": "b"}], "x")
    with pytest.raises(GenmetricsError, match="1 of 3 reference row.*no 'id', first row 2; add"):
        pair_rows([{"id": "a"}, {}, {"id": "c"}], [{"id": "a"}], "x")
    # a prompt link on some candidates only is an error, not a fall back to ids or positions
    with pytest.raises(GenmetricsError, match="1 of 2 candidate row.*no prompt_id, first row 2"):
        pair_rows(refs, [{"id": "a", "prompt_id": "a"}, {"id": "b"}], "x")
    with pytest.raises(GenmetricsError, match="pair_by must be one of id, position"):
        pair_rows(refs, refs, "x", by="order")


def test_duplicate_reference_ids_and_unmatched_candidates_are_errors():
    with pytest.raises(GenmetricsError, match="where: reference id 'a' occurs more than once"):
        pair_rows([{"id": "a"}, {"id": "a"}], [{"prompt_id": "a"}], "where")
    with pytest.raises(GenmetricsError, match="1 of 2 candidate.*matches no reference id, first"):
        pair_rows([{"id": "a"}], [{"prompt_id": "a"}, {"prompt_id": "z"}], "where")
    with pytest.raises(GenmetricsError, match="position needs equal counts"):
        pair_rows([{"id": "a"}], [{}, {}], "where", by="position")


def test_paired_files_pair_by_prompt_id_and_count_only_paired_words(tmp_path):
    refs = [
        {"id": "p1", "text": "the cat sat on the mat"},
        {"id": "p2", "text": "a dog ran in the park today"},
    ]
    cands = [
        {"id": "g2", "prompt_id": "p2", "text": "a dog ran in a park"},
        {"id": "g1", "prompt_id": "p1", "text": "the cat sat"},
    ]
    write_jsonl(tmp_path / "r.jsonl", refs)
    write_jsonl(tmp_path / "c.jsonl", cands)
    rec = score_files("rouge", tmp_path / "c.jsonl", tmp_path / "r.jsonl")
    sc = rouge_scorer.RougeScorer(["rouge1"])
    want = np.mean(
        [
            sc.score(r["text"], c["text"])["rouge1"].fmeasure
            for r, c in zip(refs[::-1], cands, strict=True)
        ]
    )
    assert rec["values"]["rouge1"] == pytest.approx(want, abs=1e-12)
    assert rec["values"]["mean_words"] == pytest.approx((6 + 3) / 2)
    write_jsonl(tmp_path / "d.jsonl", [*refs, refs[0]])
    with pytest.raises(GenmetricsError, match="d.jsonl: reference id 'p1' occurs more than once"):
        score_files("rouge", tmp_path / "c.jsonl", tmp_path / "d.jsonl")


def test_loaders_check_suffix_and_directories(tmp_path):
    (tmp_path / "x.jsonl").mkdir()
    with pytest.raises(GenmetricsError, match="is a directory"):
        KINDS["texts"].load(tmp_path / "x.jsonl", "candidate")
    save_npz(tmp_path / "e.npz", ids=["a"], emb=np.zeros((1, 2)))
    with pytest.raises(GenmetricsError, match="candidate must be a .jsonl file of texts"):
        KINDS["texts"].load(tmp_path / "e.npz", "candidate")
    assert KINDS["embeddings"].path("bbc", "m/seed0", featurizer="f") == (
        "results/features/embed/f/bbc/m/seed0.npz"
    )
    assert KINDS["texts"].path("bbc", "references") == "results/data/bbc/references.jsonl"


def test_embeddings_too_large_for_float32_distances_are_refused():
    x = np.random.default_rng(0).normal(size=(20, 8))
    assert validate_embeddings(x * 1e17, "c") is not None  # squared norms ~1e35: fine
    with pytest.raises(GenmetricsError, match=r"^c: 20 row\(s\) too large for float32"):
        validate_embeddings(x * 1e19, "c")
    y = x.copy()
    y[4] = 1e200  # finite, but its squared norm overflows float64 too
    with pytest.raises(GenmetricsError, match=r"1 row\(s\) too large .* first rows \[4\]"):
        validate_embeddings(y, "c")
    with pytest.raises(GenmetricsError, match="2-D numeric array"):
        validate_embeddings([[1.0, 2.0], [3.0]], "c")


def test_validators_refuse_wrong_shapes_with_a_message():
    with pytest.raises(GenmetricsError, match="expected a list of per-text sequences"):
        validate_surprisal(5, "s")
    with pytest.raises(GenmetricsError, match="sequence 1 must be 1-D numbers"):
        validate_surprisal([[1.0], [[1.0, 2.0], [3.0]]], "s")
    with pytest.raises(GenmetricsError, match="item 0 must be a list of tag strings"):
        validate_pos([5], "p")
    with pytest.raises(GenmetricsError, match="item 1 must be a list of tag strings"):
        validate_pos([["NN"], ["NN", 3]], "p")


def test_loaded_files_are_validated_naming_the_file(tmp_path):
    save_npz(tmp_path / "e.npz", emb=np.full((3, 2), np.nan))
    with pytest.raises(GenmetricsError, match=r"e.npz \(reference\): 3 row\(s\) with NaN/inf"):
        KINDS["embeddings"].load(tmp_path / "e.npz", "reference")
    (tmp_path / "t.jsonl").write_text("\n")
    with pytest.raises(GenmetricsError, match=r"t.jsonl \(candidate\): no texts"):
        KINDS["texts"].load(tmp_path / "t.jsonl", "candidate")
    write_jsonl(tmp_path / "p.jsonl", [{"id": "a", "tags": "NN"}])  # not split into letters
    with pytest.raises(GenmetricsError, match="p.jsonl: row 1 .*'tags' must be a list"):
        KINDS["pos"].load(tmp_path / "p.jsonl", "candidate")
    save_npz(tmp_path / "s.npz", ids=["a"], emb=np.zeros((2, 2)))
    with pytest.raises(GenmetricsError, match="s.npz: array 'ids' has 1 entries but there are 2"):
        KINDS["embeddings"].load(tmp_path / "s.npz", "candidate")


def test_negative_or_non_finite_surprisal_is_refused_naming_the_file_and_first_text(tmp_path):
    """Surprisal is -log p >= 0: log-probabilities stored by mistake gave perplexity 0.05."""
    assert validate_surprisal([[0.0, 2.5], [], [-0.0]], "s")[0].tolist() == [0.0, 2.5]
    with pytest.raises(GenmetricsError, match=r"s: 2 of 3 text\(s\) .*negative.*sequence 1: -0.5"):
        validate_surprisal([[1.0], [2.0, -0.5], [-3.0]], "s")
    with pytest.raises(GenmetricsError, match=r"s: 1 of 2 text\(s\) .*NaN/inf, first sequence 1"):
        validate_surprisal([[1.0], [2.0, np.inf]], "s")
    off, vals = np.array([0, 2, 3, 5]), np.array([1.0, 2.0, 0.5, -2.0, 3.0])
    save_npz(tmp_path / "s.npz", ids=["a", "b", "c"], offsets=off, values=vals)
    with pytest.raises(GenmetricsError, match=r"s.npz: 1 of 3 .*negative.*first id 'c'.*: -2$"):
        KINDS["surprisal"].load(tmp_path / "s.npz", "candidate")
    with pytest.raises(GenmetricsError, match=r"s.npz: 1 of 3 .*first id 'c'"):
        score_files("perplexity", tmp_path / "s.npz")
    save_npz(tmp_path / "t.npz", ids=["a", "b", "c"], offsets=off, values=np.abs(vals))
    rec = score_files("perplexity", tmp_path / "t.npz")
    assert rec["values"]["perplexity"] == pytest.approx(np.exp(8.5 / 5))


def test_feature_rows_without_ids_are_not_paired_by_made_up_row_numbers(tmp_path):
    """An NPZ without ``ids`` used to get ids "0", "1", ... on load, so pairing "by id" with
    another such file was pairing by position: now it is refused unless asked for."""
    rng = np.random.default_rng(0)
    prompts, cont = rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    save_npz(tmp_path / "p.npz", emb=prompts)
    save_npz(tmp_path / "c.npz", emb=cont)
    _, rows = KINDS["embeddings"].load(tmp_path / "p.npz", "reference")
    assert rows == [{}, {}, {}]
    with pytest.raises(GenmetricsError, match="p.npz: a paired metric pairs by id, but 3 of 3"):
        score_files("coherence", tmp_path / "c.npz", tmp_path / "p.npz")
    rec = score_files("coherence", tmp_path / "c.npz", tmp_path / "p.npz", pair_by="position")
    cos = (prompts * cont).sum(1) / np.linalg.norm(prompts, axis=1) / np.linalg.norm(cont, axis=1)
    assert rec["values"]["coherence"] == pytest.approx(cos.mean(), abs=1e-12)
    # prompt ids link them whatever the order
    save_npz(tmp_path / "p2.npz", ids=["x", "y", "z"], emb=prompts)
    save_npz(tmp_path / "c2.npz", prompt_ids=["z", "x", "y"], emb=cont[[2, 0, 1]])
    rec = score_files("coherence", tmp_path / "c2.npz", tmp_path / "p2.npz")
    assert rec["values"]["coherence"] == pytest.approx(cos.mean(), abs=1e-12)


def test_pos_kind_reads_tags_and_only_the_features_side_tags_texts(tmp_path):
    """The metric side (the ``pos`` kind's own loader) never tags; the adapter that reads
    files for a metric (``scoring.load_input``) tags a file of texts on load, as before."""
    from genmetrics.features.pos import tag_texts
    from genmetrics.scoring.from_files import load_input

    write_jsonl(tmp_path / "t.jsonl", [{"id": "a", "text": "The cat sat ."}])
    with pytest.raises(GenmetricsError, match="t.jsonl: rows have no 'tags'"):
        KINDS["pos"].load(tmp_path / "t.jsonl", "candidate")
    tags, rows = load_input(KINDS["pos"], tmp_path / "t.jsonl", "candidate")
    assert tags == tag_texts(["The cat sat ."]) and rows[0]["id"] == "a"
    write_jsonl(tmp_path / "p.jsonl", [{"id": "b", "tags": ["DT", "NN"]}])
    assert load_input(KINDS["pos"], tmp_path / "p.jsonl", "candidate")[0] == [["DT", "NN"]]
    assert KINDS["pos"].load(tmp_path / "p.jsonl", "candidate")[0] == [["DT", "NN"]]
