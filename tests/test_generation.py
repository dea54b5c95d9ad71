"""Generation: seeded determinism, word budgets, finish reasons, chat vs base inputs."""

from __future__ import annotations

import pytest

from genmetrics import GenmetricsError
from genmetrics.generation.transformers_backend import generate

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


def test_batches_cover_every_prompt_once_and_shards_split_them():
    from genmetrics.generation.transformers_backend import batch_seed, plan_batches, shard_batches

    ids = [f"p{i}" for i in range(10)]
    lengths = [5, 3, 9, 3, 1, 7, 7, 2, 8, 4]
    batches = plan_batches(ids, lengths, 3, seed=7)
    members = [i for b in batches for i in b.members]
    assert sorted(members) == list(range(10))
    # shortest first, ties in prompt order: 4(1) 7(2) 1(3) 3(3) 9(4) 0(5) 5(7) 6(7) 8(8) 2(9)
    assert members == [4, 7, 1, 3, 9, 0, 5, 6, 8, 2]
    assert [b.seed for b in batches] == [batch_seed(7, ids[b.members[0]]) for b in batches]
    parts = [shard_batches(batches, k, 3) for k in range(3)]
    assert [[b.index for b in part] for part in parts] == [[0, 3], [1], [2]]
    # a batch's seed depends on (seed, first prompt id) only
    assert batch_seed(7, "p4") == batch_seed(7, "p4") != batch_seed(8, "p4")
    assert len({batch_seed(s, f"p{i}") for s in range(5) for i in range(50)}) == 250
    with pytest.raises(GenmetricsError, match="out of range"):
        shard_batches(batches, 3, 3)


SETTINGS = {
    "template": "base",
    "tokenizer_family": None,
    "tokens_per_word": 1.0,
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
    "max_memory": None,
}
MANY = [
    {"id": f"q{i}", "prompt": " ".join(["the cat sat on the mat"][:1] * (1 + i % 4))}
    for i in range(9)
]


def _shards(tiny_lm, prompts, shards, samples_per_prompt=1, **kw):
    from genmetrics.generation.transformers_backend import generate_shard

    settings = {**SETTINGS, "shards": shards, "samples_per_prompt": samples_per_prompt}
    return [
        generate_shard(
            prompts,
            tiny_lm,
            settings,
            seed=3,
            shard=k,
            progress=False,
            **kw,
        )
        for k in range(shards)
    ]


def test_texts_do_not_depend_on_the_number_of_shards(tiny_lm):
    from genmetrics.generation.transformers_backend import merge_shards

    ids = [p["id"] for p in MANY]
    merged = {}
    for n in (1, 2, 4):
        parts = _shards(tiny_lm, MANY, n)
        rows, stats = merge_shards(ids, [r for r, _ in parts], [s for _, s in parts])
        assert [r["prompt_id"] for r in rows] == ids and stats["shards"] == n
        assert stats["batches"] == 5 and stats["texts"] == 9  # ceil(9 / 2) batches in all
        merged[n] = rows
    assert merged[1] == merged[2] == merged[4]
    assert len({r["text"] for r in merged[1]}) > 1  # sampled, not constant


def test_samples_per_prompt_keep_their_prompt_and_do_not_depend_on_shards(tiny_lm):
    """samples_per_prompt = 3: three rows per prompt, ids <prompt>~<j>, prompt_id the
    prompt's, each sample its own draw; the same texts with 1 or 2 shards; the merge checks
    that every prompt has all its samples. s = 1 gives the rows it always gave."""
    from genmetrics.generation.transformers_backend import merge_shards

    ids = [p["id"] for p in MANY]
    merged = {}
    for n in (1, 2):
        parts = _shards(tiny_lm, MANY, n, samples_per_prompt=3)
        rows, stats = merge_shards(ids, [r for r, _ in parts], [s for _, s in parts], 3)
        assert stats["texts"] == 27 and len(rows) == 27
        merged[n] = rows
    rows = merged[1]
    assert rows == merged[2]
    assert [r["id"] for r in rows[:4]] == ["q0~0", "q0~1", "q0~2", "q1~0"]
    assert [r["prompt_id"] for r in rows] == [i for i in ids for _ in range(3)]
    assert [r["sample"] for r in rows[:6]] == [0, 1, 2, 0, 1, 2]
    by_prompt = {}
    for r in rows:
        by_prompt.setdefault(r["prompt_id"], set()).add(r["continuation"])
    assert sum(len(v) > 1 for v in by_prompt.values()) >= 5  # samples are separate draws
    parts = _shards(tiny_lm, MANY, 1, samples_per_prompt=3)
    with pytest.raises(GenmetricsError, match="missing"):
        merge_shards(ids, [parts[0][0][:-1]], [parts[0][1]], 3)
    with pytest.raises(GenmetricsError, match="unknown"):
        merge_shards(ids, [parts[0][0]], [parts[0][1]], 2)
    single = _shards(tiny_lm, MANY, 1)[0][0]
    assert [r["id"] for r in single] == ids and all("sample" not in r for r in single)


def test_shard_rows_come_in_prompt_order_and_merge_checks_coverage(tiny_lm):
    from genmetrics.generation.transformers_backend import merge_shards

    parts = _shards(tiny_lm, PROMPTS, 2)
    for rows, _ in parts:
        pos = [[p["id"] for p in PROMPTS].index(r["prompt_id"]) for r in rows]
        assert pos == sorted(pos)
    assert parts[0][1]["max_new_tokens"] == 4  # ceil(3 words × 1 token/word × 1.25)
    assert parts[0][1]["dtype"] == "float32" and parts[0][1]["device"]["name"] == "cpu"
    rows = [r for r, _ in parts]
    stats = [s for _, s in parts]
    with pytest.raises(GenmetricsError, match="missing \\['p9'\\]"):
        merge_shards(["p1", "p2", "p3", "p9"], rows, stats)
    with pytest.raises(GenmetricsError, match="generated twice"):
        merge_shards(["p1", "p2", "p3"], [rows[0], rows[0] + rows[1]], [stats[0], stats[0]])
    with pytest.raises(GenmetricsError, match="2 shard files but 1 stats"):
        merge_shards([], [[], []], [{"seconds": 1, "new_tokens": 1}])
    with pytest.raises(GenmetricsError, match="missing \\['words'\\]"):
        from genmetrics.generation.transformers_backend import generate_shard

        generate_shard(
            PROMPTS,
            tiny_lm,
            {k: v for k, v in SETTINGS.items() if k != "words"},
            seed=0,
            shard=0,
        )


def test_a_resumed_shard_generates_only_the_missing_batches_and_the_same_bytes(tiny_lm, tmp_path):
    """An attempt that stopped after two of its batches (its log cut there, with a torn
    third line) is resumed: the other batches run, the result equals an uninterrupted run."""
    import json

    whole = _shards(tiny_lm, MANY, 1)[0]
    log = tmp_path / "p.jsonl"
    first = _shards(tiny_lm, MANY, 1, progress_path=log)[0]
    assert first[0] == whole[0] and first[1]["batches_generated"] == 5
    lines = log.read_text().splitlines(keepends=True)
    assert json.loads(lines[0])["key"] == first[1]["progress_key"] and len(lines) == 6
    log.write_text("".join(lines[:3]) + lines[3][: len(lines[3]) // 2])  # killed mid-write
    again = _shards(tiny_lm, MANY, 1, progress_path=log)[0]
    assert again[1]["batches_resumed"] == 2 and again[1]["batches_generated"] == 3
    assert json.dumps(again[0]) == json.dumps(whole[0])  # byte-identical rows
    # a log written under other settings is not resumed
    other = _shards(
        tiny_lm,
        MANY,
        1,
        progress_path=log,
    )[0]
    assert other[1]["batches_resumed"] == 5
    settings = {**SETTINGS, "shards": 1, "sampling": {"temperature": 0.7}}
    from genmetrics.generation.transformers_backend import generate_shard

    _, stats = generate_shard(
        MANY,
        tiny_lm,
        settings,
        seed=3,
        shard=0,
        progress=False,
        progress_path=log,
    )
    assert stats["batches_resumed"] == 0 and stats["batches_generated"] == 5


def test_a_shard_already_running_is_refused(tiny_lm, tmp_path):
    from genmetrics.generation.progress import ProgressLog, drop

    log = tmp_path / "p.jsonl"
    with ProgressLog(log, "k"):
        with pytest.raises(GenmetricsError, match="another job is working on this shard"):
            _shards(tiny_lm, PROMPTS, 1, progress_path=log)
    _shards(tiny_lm, PROMPTS, 1, progress_path=log)  # released with the first job
    drop(log)
    assert list(tmp_path.iterdir()) == []


def test_imported_texts_stand_in_for_generations(tmp_path):
    import json

    from genmetrics.data.datasets import import_texts

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
    # match_references: only the texts written for the dataset's (sampled) references
    m, stats = import_texts("sys", {**spec, "clean": {}}, seed=0, prompt_ids={"p1", "p3", "x"})
    assert [r["prompt_id"] for r in m] == ["p1", "p3"] and stats["not_in_references"] == 8
    with pytest.raises(GenmetricsError, match="match_references: none of 10 texts"):
        import_texts("sys", spec, seed=0, prompt_ids={"x"})
    # exclude_references: only the texts written for other prompts than the references
    # (sampling after the exclusion: 4 of the 7 left)
    o, stats = import_texts("sys", spec, seed=0, exclude_prompt_ids={"p1", "p3", "p5", "x"})
    assert stats["in_references"] == 3 and stats["input"] == 7 and len(o) == 4
    assert not {r["prompt_id"] for r in o} & {"p1", "p3", "p5"}
    with pytest.raises(GenmetricsError, match="exclude each other"):
        import_texts("sys", spec, seed=0, prompt_ids={"p1"}, exclude_prompt_ids={"p2"})


def test_the_label_filter_on_a_list_field_needs_every_value():
    from genmetrics.data.clean import clean_rows

    rows = [
        {"id": f"d{i}", "text": f"text number {i}", "by": ["a", "b"][: i % 3]} for i in range(6)
    ]
    kept, stats = clean_rows(rows, {"filter": {"by": "a"}}, where="datasets.h")
    assert [r["id"] for r in kept] == ["d1", "d2", "d4", "d5"] and stats["filtered"] == 2
    kept, _ = clean_rows(rows, {"filter": {"by": ["a", "b"]}}, where="datasets.h")
    assert [r["id"] for r in kept] == ["d2", "d5"]


def test_an_empty_answer_to_an_instruction_is_an_empty_text():
    """Instruction mode: the text is the answer alone; an empty answer must not become the
    instruction (it would be scored as model output)."""
    from genmetrics.generation.transformers_backend import _row

    prompt = {"id": "p1", "prompt": "Write a poem about the sea."}
    row = _row(prompt, "", 0, "eos", 50, "instruction")
    assert row["text"] == "" and row["continuation"] == ""
    assert _row(prompt, " Waves.", 2, "eos", 50, "instruction")["text"] == "Waves."
    assert _row(prompt, "", 0, "eos", 50, "prefix")["text"] == prompt["prompt"]


def test_auto_dtype_and_a_device_map_load_on_cpu(tiny_model_dir, tiny_lm, monkeypatch):
    """dtype auto is float32 without a bf16-capable GPU; device_map auto (the multi-GPU path)
    with max_memory loads through accelerate and samples the same texts as a plain load.
    A GPU, if the machine has one, is hidden (benchmarks/gpu_check.py checks that path)."""
    import torch

    from genmetrics.generation.transformers_backend import generate_shard
    from genmetrics.models.checkpoints import resolve_dtype

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)

    assert resolve_dtype("auto", "cpu") == "float32" and resolve_dtype("bfloat16") == "bfloat16"
    runs = {}
    for name, extra in {
        "plain": {"dtype": "auto"},
        "spread": {"dtype": "auto", "device_map": "auto", "max_memory": {"cpu": "2GiB"}},
    }.items():
        settings = {**SETTINGS, "shards": 1, **extra}
        rows, stats = generate_shard(
            MANY,
            tiny_model_dir,
            settings,
            seed=1,
            shard=0,
            progress=False,
        )
        assert stats["dtype"] == "float32" and stats["dtype_requested"] == "auto"
        runs[name] = (rows, stats)
    assert runs["spread"][1]["device_map"] == "auto" and runs["plain"][1]["device_map"] is None
    assert runs["plain"][0] == runs["spread"][0]


def test_imported_texts_without_ids_are_never_tied_to_references_by_line(tmp_path):
    """A txt (or id-less JSONL) file of another system's outputs gets ids ``line<N>`` and no
    prompt_id: line numbers would pair it with the references by position without a word."""
    from genmetrics.data.datasets import import_texts

    path = tmp_path / "sys.txt"
    path.write_text("".join(f"text number {i} has a few words\n" for i in range(6)))
    spec = {"source": {"kind": "local", "path": str(path)}, "format": "txt"}
    rows, _ = import_texts("sys", spec, seed=0)
    assert [r["id"] for r in rows] == [f"line{i}" for i in range(1, 7)]
    assert all("prompt_id" not in r for r in rows)
    with pytest.raises(GenmetricsError, match=r"^models\.sys\.texts\.match_references: .*no 'id'"):
        import_texts("sys", spec, seed=0, prompt_ids={"1", "2"})
    with pytest.raises(GenmetricsError, match=r"texts\.exclude_references: .*no 'id'"):
        import_texts("sys", spec, seed=0, exclude_prompt_ids={"1", "2"})
    jsonl = tmp_path / "sys.jsonl"
    jsonl.write_text("".join(f'{{"id": "d{i}", "text": "a b c d {i}"}}\n' for i in range(3)))
    rows, _ = import_texts("sys", {"source": {"kind": "local", "path": str(jsonl)}}, seed=0)
    assert [(r["id"], r["prompt_id"]) for r in rows] == [(f"d{i}", f"d{i}") for i in range(3)]
