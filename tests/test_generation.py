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
