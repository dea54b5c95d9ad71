"""Generation: seeded determinism, word budgets, finish reasons, chat vs base inputs."""

from __future__ import annotations

import pytest

from genmetrics import GenmetricsError
from genmetrics.generation import generate

PROMPTS = [
    {"id": "p1", "prompt": "the cat sat on the"},
    {"id": "p2", "prompt": "a big red dog ran in the park and"},
    {"id": "p3", "prompt": "it was"},
]


def _run(tiny_lm, **kw):
    model, tok = tiny_lm
    args = dict(
        template="base",
        sampling={"temperature": 1.0},
        words=4,
        max_new_tokens=8,
        seed=0,
        batch_size=2,
        progress=False,
    )
    args.update(kw)
    return generate(model, tok, PROMPTS, **args)


def test_same_seed_same_texts_other_seed_other_texts(tiny_lm):
    a, _ = _run(tiny_lm)
    b, _ = _run(tiny_lm)
    c, _ = _run(tiny_lm, seed=1)
    assert [r["text"] for r in a] == [r["text"] for r in b]
    assert [r["text"] for r in a] != [r["text"] for r in c]


def test_rows_follow_the_contract_and_budget(tiny_lm):
    rows, stats = _run(tiny_lm, words=3, max_new_tokens=12)
    assert [r["prompt_id"] for r in rows] == ["p1", "p2", "p3"]
    for r, p in zip(rows, PROMPTS, strict=True):
        assert set(r) >= {"id", "prompt_id", "text", "n_tokens", "finish_reason"}
        assert r["text"].startswith(p["prompt"])
        assert len(r["continuation"].split()) <= 3
        assert r["finish_reason"] in ("eos", "words", "length")
        assert 1 <= r["n_tokens"] <= 12
        if r["finish_reason"] == "length":
            assert r["n_tokens"] == 12
    assert stats["new_tokens"] == sum(r["n_tokens"] for r in rows)
    assert stats["tokens_per_second"] > 0


def test_greedy_is_batch_independent(tiny_lm):
    a, _ = _run(tiny_lm, sampling={"do_sample": False}, batch_size=1)
    b, _ = _run(tiny_lm, sampling={"do_sample": False}, batch_size=3)
    assert [r["text"] for r in a] == [r["text"] for r in b]  # left padding is masked


def test_chat_template_changes_the_input(tiny_lm):
    base, _ = _run(tiny_lm, sampling={"do_sample": False})
    chat, _ = _run(tiny_lm, sampling={"do_sample": False}, template="chat")
    assert [r["text"] for r in base] != [r["text"] for r in chat]
    assert all(r["text"].startswith(p["prompt"]) for r, p in zip(chat, PROMPTS, strict=True))


def test_unknown_sampling_key(tiny_lm):
    with pytest.raises(GenmetricsError, match="sampling: unknown key"):
        _run(tiny_lm, sampling={"temprature": 0.7})


def test_shards_are_contiguous_and_cover_everything():
    from genmetrics.generation import shard_rows

    rows = list(range(11))
    parts = [shard_rows(rows, s, 3) for s in range(3)]
    assert sum(parts, []) == rows and [len(p) for p in parts] == [3, 4, 4]
    with pytest.raises(GenmetricsError):
        shard_rows(rows, 3, 3)


def test_shard_seed_depends_only_on_seed_and_shard():
    from genmetrics.generation import shard_seed

    assert shard_seed(0, 0) == 0 and shard_seed(2, 1) == 2 * 1_000_003 + 1
    seeds = {shard_seed(s, k) for s in range(5) for k in range(8)}
    assert len(seeds) == 40  # distinct streams for every (seed, shard)


SETTINGS = {
    "template": "base",
    "tokenizer_family": None,
    "instruction": None,
    "sampling": {"temperature": 1.0},
    "words": 3,
    "batch_size": 2,
    "token_margin": 1.25,
    "shards": 2,
    "mode": "prefix",
    "dtype": "float32",
    "trust_remote_code": False,
    "device_map": None,
}


def test_generate_shard_and_merge_restore_the_prompt_order(tiny_lm):
    from genmetrics.generation import generate, generate_shard, merge_shards, shard_seed

    table = {"default": 1.0}
    parts = [
        generate_shard(
            PROMPTS, tiny_lm, SETTINGS, seed=3, shard=k, tokens_per_word_table=table, progress=False
        )
        for k in range(2)
    ]
    assert [len(rows) for rows, _ in parts] == [1, 2]
    assert parts[0][1]["max_new_tokens"] == 4 and parts[0][1]["texts"] == 1  # ceil(3 × 1.25)
    # shard 1 is what generate gives for its prompts with the shard's own seed
    alone, _ = generate(
        *tiny_lm,
        PROMPTS[1:],
        template="base",
        sampling={"temperature": 1.0},
        words=3,
        max_new_tokens=4,
        seed=shard_seed(3, 1),
        batch_size=2,
        progress=False,
    )
    assert [r["text"] for r in parts[1][0]] == [r["text"] for r in alone]
    rows, stats = merge_shards([r for r, _ in parts], [s for _, s in parts])
    assert [r["prompt_id"] for r in rows] == ["p1", "p2", "p3"]
    assert stats["texts"] == 3 and stats["shards"] == 2
    assert stats["new_tokens"] == sum(s["new_tokens"] for _, s in parts)
    with pytest.raises(GenmetricsError, match="missing \\['words'\\]"):
        generate_shard(
            PROMPTS,
            tiny_lm,
            {k: v for k, v in SETTINGS.items() if k != "words"},
            seed=0,
            shard=0,
            tokens_per_word_table=table,
        )
    with pytest.raises(GenmetricsError, match="2 shard files but 1 stats"):
        merge_shards([[], []], [{"seconds": 1, "new_tokens": 1}])


def test_imported_texts_stand_in_for_generations(tmp_path):
    import json

    from genmetrics.datasets import import_texts

    path = tmp_path / "sys.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": f"g{i}", "text": f"text number {i} here", "src": f"p{i}"}) + "\n"
            for i in range(10)
        )
    )
    spec = {
        "source": {"kind": "local", "path": str(path)},
        "format": "jsonl",
        "label_fields": ["src"],
        "prompt_id_field": "src",
        "clean": {"sample": 4},
    }
    a, stats = import_texts("sys", spec, seed=0)
    b, _ = import_texts("sys", spec, seed=0)
    c, _ = import_texts("sys", spec, seed=1)
    assert a == b and [r["id"] for r in a] != [r["id"] for r in c]  # seeds resample
    assert stats["output"] == 4
    assert all(r["prompt_id"] == r["src"] and r["finish_reason"] == "imported" for r in a)
    assert all(r["n_tokens"] is None for r in a)


def test_an_empty_answer_to_an_instruction_is_an_empty_text():
    """Instruction mode: the text is the answer alone; an empty answer must not become the
    instruction (it would be scored as model output)."""
    from genmetrics.generation import _row

    prompt = {"id": "p1", "prompt": "Write a poem about the sea."}
    row = _row(prompt, "", 0, "eos", 50, "instruction")
    assert row["text"] == "" and row["continuation"] == ""
    assert _row(prompt, " Waves.", 2, "eos", 50, "instruction")["text"] == "Waves."
    assert _row(prompt, "", 0, "eos", 50, "prefix")["text"] == prompt["prompt"]
