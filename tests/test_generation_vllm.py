"""The vLLM generation backend (genmetrics.generation.vllm_backend): on CPU through the fake engine
(genmetrics.testing.fake_vllm) against the transformers backend on the same tiny model; the plan's
backend key; and, where vllm imports and a GPU is visible, a real vLLM run (skipped here)."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path

import pytest
import yaml
from conftest import REPO, TEST_CONFIG, placeholder_checkpoint, snakemake
from test_generation import SETTINGS  # the transformers backend's job settings

from genmetrics import GenmetricsError
from genmetrics.generation.transformers_backend import batch_seed, merge_shards
from genmetrics.generation.vllm_backend import (
    ENGINE_ENV,
    _cut,
    generate_shard,
    generate_shard_by_backend,
    sampling_values,
    split_backend,
)

FAKE = "genmetrics.testing.fake_vllm"
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
PROMPTS = [
    {"id": f"q{i}", "prompt": " ".join(["the cat sat on the mat"] * (1 + i % 4))} for i in range(9)
]


@pytest.fixture(autouse=True)
def _fake_engine(monkeypatch):
    monkeypatch.setenv(ENGINE_ENV, FAKE)


def _run(model_dir, backend="vllm", *, seed=3, shards=2, **settings):
    """Every shard of PROMPTS on ``backend``, merged: (rows, merged stats, shard stats)."""
    s = {**SETTINGS, "shards": shards, **settings}
    if backend == "vllm":
        s = {**s, "backend": "vllm", "tensor_parallel_size": 1}
    parts = [
        generate_shard_by_backend(PROMPTS, str(model_dir), s, seed=seed, shard=k, progress=False)
        for k in range(shards)
    ]
    rows, merged = merge_shards(
        [p["id"] for p in PROMPTS],
        [r for r, _ in parts],
        [st for _, st in parts],
        s.get("samples_per_prompt", 1),
    )
    return rows, merged, [st for _, st in parts], [r for r, _ in parts]


def test_vllm_files_have_the_transformers_keys_ids_and_order(tiny_model_dir):
    """Shard by shard and merged: the same ids in the same order, the same row keys, the same
    prompt fields and the same statistics keys as a real transformers run of the tiny model;
    the word budget cuts the same way (at most ``words`` words, ``finish_reason`` words)."""
    t_rows, t_merged, t_stats, t_parts = _run(tiny_model_dir, "transformers")
    v_rows, v_merged, v_stats, v_parts = _run(tiny_model_dir, "vllm")
    for t, v in zip(t_parts, v_parts, strict=True):  # each shard's rows and their order
        assert [r["id"] for r in t] == [r["id"] for r in v]
    assert [r["id"] for r in v_rows] == [r["id"] for r in t_rows] == [p["id"] for p in PROMPTS]
    for t, v in zip(t_rows, v_rows, strict=True):
        assert list(t) == list(v)  # the same keys in the same order
        assert (t["prompt_id"], t["prompt"]) == (v["prompt_id"], v["prompt"])
        assert v["text"] == v["prompt"] + v["continuation"] or v["text"].startswith(v["prompt"])
        assert len(v["continuation"].split()) <= 3 and v["finish_reason"] in {
            "eos",
            "words",
            "length",
        }
        assert 1 <= v["n_tokens"] <= t_stats[0]["max_new_tokens"]
    assert {r["finish_reason"] for r in v_rows} >= {"words"}
    assert [sorted(s) for s in t_stats] == [sorted(s) for s in v_stats]
    assert sorted(t_merged) == sorted(v_merged)
    assert v_stats[0]["backend"]["name"] == "vllm" and v_stats[0]["backend"]["version"] == "fake"
    assert v_stats[0]["backend"]["engine"] == FAKE
    assert t_stats[0]["backend"]["name"] == "transformers" and t_stats[0]["backend"]["version"]
    assert v_stats[0]["device"]["name"] == f"cpu ({FAKE})"
    assert v_merged["texts"] == 9 and v_merged["new_tokens"] == sum(r["n_tokens"] for r in v_rows)


def test_same_seed_same_files_other_seed_other_texts(tiny_model_dir):
    a, a_stats, _, _ = _run(tiny_model_dir, seed=3)
    b, b_stats, _, _ = _run(tiny_model_dir, seed=3)
    c, _, _, _ = _run(tiny_model_dir, seed=4)
    assert a == b
    assert [r["continuation"] for r in a] != [r["continuation"] for r in c]
    assert sum(x["continuation"] != y["continuation"] for x, y in zip(a, c, strict=True)) >= 5
    # a text depends on (seed, prompt) only: not on the number of shards nor on the calls
    one, _, _, _ = _run(tiny_model_dir, seed=3, shards=1)
    assert one == a
    rows, _ = generate_shard(
        PROMPTS,
        str(tiny_model_dir),
        {**SETTINGS, "shards": 1},
        seed=3,
        shard=0,
        progress=False,
        requests_per_call=1,
    )
    assert rows == a


def test_each_text_is_the_engine_s_draw_for_its_own_seed(tiny_model_dir):
    """The hand-check of the seed mapping: q0's continuation is what the engine draws for
    ``SamplingParams(seed=batch_seed(3, "q0"))`` on q0's token ids, decoded and cut as
    ``_row`` cuts (3 words)."""
    from transformers import AutoTokenizer

    from genmetrics.testing import fake_vllm as fake

    rows, _, _, _ = _run(tiny_model_dir, seed=3)
    tok = AutoTokenizer.from_pretrained(tiny_model_dir)
    llm = fake.LLM(model=str(tiny_model_dir), seed=3)
    for row in rows[:4]:
        prompt = next(p for p in PROMPTS if p["id"] == row["id"])
        params = fake.SamplingParams(
            seed=batch_seed(3, row["id"]),
            max_tokens=4,  # ceil(3 words × 1.0 token/word × 1.25)
            min_tokens=1,
            stop_token_ids=[tok.eos_token_id],
            temperature=1.0,
            top_k=50,
        )
        (out,) = llm.generate([{"prompt_token_ids": tok(prompt["prompt"])["input_ids"]}], params)
        toks = out.outputs[0].token_ids
        words = tok.decode(toks, skip_special_tokens=True).split()
        assert row["continuation"].split() == words[:3]
        assert row["n_tokens"] == len(toks)


def test_samples_per_prompt_give_s_rows_with_their_own_seeds(tiny_model_dir):
    rows, merged, _, _ = _run(tiny_model_dir, samples_per_prompt=3)
    t_rows, _, _, _ = _run(tiny_model_dir, "transformers", samples_per_prompt=3)
    assert [r["id"] for r in rows] == [r["id"] for r in t_rows]
    assert [r["id"] for r in rows[:4]] == ["q0~0", "q0~1", "q0~2", "q1~0"]
    assert [r["sample"] for r in rows[:6]] == [0, 1, 2, 0, 1, 2]
    assert [r["prompt_id"] for r in rows] == [p["id"] for p in PROMPTS for _ in range(3)]
    assert merged["texts"] == 27
    by_prompt: dict[str, set[str]] = {}
    for r in rows:
        by_prompt.setdefault(r["prompt_id"], set()).add(r["continuation"])
    assert sum(len(v) == 3 for v in by_prompt.values()) >= 7  # separate draws
    # sample j does not depend on how many samples there are
    two, _, _, _ = _run(tiny_model_dir, samples_per_prompt=2)
    three = {r["id"]: r for r in rows}
    assert all(r == three[r["id"]] for r in two)


def test_greedy_ignores_the_seed_and_the_engine_gets_the_job_s_settings(tiny_model_dir):
    from genmetrics.testing import fake_vllm as fake

    fake.CREATED.clear()
    a, _, _, _ = _run(tiny_model_dir, seed=1, sampling={"do_sample": False}, dtype="auto")
    b, _, stats, _ = _run(tiny_model_dir, seed=2, sampling={"do_sample": False}, dtype="auto")
    assert a == b
    assert stats[0]["backend"]["sampling"] == {
        "temperature": 0.0,
        "top_k": 0,
        "top_p": 1.0,
        "repetition_penalty": 1.0,
    }
    made = fake.CREATED[-1]
    assert made["model"] == made["tokenizer"] == str(tiny_model_dir)
    assert made["seed"] == 2 and made["tensor_parallel_size"] == 1
    assert made["dtype"] == "float32" and stats[0]["dtype"] == "float32"  # auto without a GPU
    assert made["trust_remote_code"] is False


def test_machine_settings_reach_the_engine_from_the_environment(tiny_model_dir, monkeypatch):
    from genmetrics.generation.vllm_backend import ENGINE_ARGS_ENV
    from genmetrics.testing import fake_vllm as fake

    monkeypatch.setenv(ENGINE_ARGS_ENV, '{"gpu_memory_utilization": 0.3, "enforce_eager": true}')
    fake.CREATED.clear()
    _, _, stats, _ = _run(tiny_model_dir, shards=1)
    assert fake.CREATED[-1]["gpu_memory_utilization"] == 0.3
    assert fake.CREATED[-1]["enforce_eager"] is True and fake.CREATED[-1]["seed"] == 3
    assert stats[0]["backend"]["engine_args"] == {
        "gpu_memory_utilization": 0.3,
        "enforce_eager": True,
    }
    for bad, message in (('{"seed": 1}', "come from the job's settings"), ("nope", "not JSON")):
        monkeypatch.setenv(ENGINE_ARGS_ENV, bad)
        with pytest.raises(GenmetricsError, match=message):
            _run(tiny_model_dir, shards=1)


def test_a_resumed_vllm_shard_generates_only_the_missing_batches(tiny_model_dir, tmp_path):
    from genmetrics.testing import fake_vllm as fake

    settings = {**SETTINGS, "shards": 1}
    whole, _ = generate_shard(
        PROMPTS, str(tiny_model_dir), settings, seed=3, shard=0, progress=False
    )
    log = tmp_path / "shard.progress"
    calls = []
    real = fake.LLM.generate

    def dies_on_the_second_call(self, prompts, params, use_tqdm=True):
        calls.append(len(prompts))
        if len(calls) == 2:
            raise KeyboardInterrupt("killed")
        return real(self, prompts, params, use_tqdm)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(fake.LLM, "generate", dies_on_the_second_call)
        with pytest.raises(KeyboardInterrupt):
            generate_shard(
                PROMPTS,
                str(tiny_model_dir),
                settings,
                seed=3,
                shard=0,
                progress=False,
                progress_path=log,
                requests_per_call=4,
            )
    assert calls == [4, 4]  # batches of 2: two batches per call
    fake.CREATED.clear()
    rows, stats = generate_shard(
        PROMPTS,
        str(tiny_model_dir),
        settings,
        seed=3,
        shard=0,
        progress=False,
        progress_path=log,
        requests_per_call=4,
    )
    assert rows == whole
    assert stats["batches_resumed"] == 2 and stats["batches_generated"] == 3
    again, stats = generate_shard(  # every batch in the log: no engine is even built
        PROMPTS, str(tiny_model_dir), settings, seed=3, shard=0, progress=False, progress_path=log
    )
    assert again == whole and stats["batches_generated"] == 0 and len(fake.CREATED) == 1


def test_sampling_values_resolve_as_transformers_does():
    class Config:
        top_k = None
        top_p = 0.95
        temperature = None
        repetition_penalty = None
        typical_p = None

    assert sampling_values({}) == {
        "temperature": 1.0,
        "top_k": 50,  # transformers' global default when nothing sets it
        "top_p": 1.0,
        "repetition_penalty": 1.0,
    }
    got = sampling_values({"temperature": 0.7, "repetition_penalty": 1.18}, Config())
    assert got == {"temperature": 0.7, "top_k": 50, "top_p": 0.95, "repetition_penalty": 1.18}
    assert sampling_values({"top_p": 0.9, "top_k": 0}, Config())["top_p"] == 0.9
    assert sampling_values({"do_sample": False, "repetition_penalty": 1.1}) == {
        "temperature": 0.0,
        "top_k": 0,
        "top_p": 1.0,
        "repetition_penalty": 1.1,
    }
    assert sampling_values({"typical_p": 1.0})["top_k"] == 50
    with pytest.raises(GenmetricsError, match="typical_p"):
        sampling_values({"typical_p": 0.9})
    with pytest.raises(GenmetricsError, match="typical_p"):
        sampling_values({"typical_p": 0.9, "do_sample": False})


def test_transformers_record_states_the_decoding_that_ran(tiny_model_dir, tmp_path):
    """``backend.sampling`` of a transformers job is what ``generate`` ran: the checkpoint's
    generation config sets top_k 2, and the texts are those of an explicit ``top_k: 2``
    (another top-k gives other texts); ``top_k: 0`` in the config wins and is recorded as 0;
    with nothing setting it, top_k is transformers' 50."""
    import shutil

    folder = tmp_path / "model"
    shutil.copytree(tiny_model_dir, folder)
    gen_config = folder / "generation_config.json"
    config = json.loads(gen_config.read_text()) if gen_config.exists() else {}
    gen_config.write_text(json.dumps({**config, "top_k": 2}))

    def run(model, sampling):
        rows, _, stats, _ = _run(model, "transformers", sampling=sampling, words=6)
        return [r["continuation"] for r in rows], stats[0]["backend"]["sampling"]

    texts, record = run(folder, {"temperature": 1.0})
    assert record == {
        "do_sample": True,
        "temperature": 1.0,
        "top_k": 2,  # from the checkpoint's generation_config.json
        "top_p": 1.0,
        "repetition_penalty": 1.0,
        "typical_p": 1.0,
    }
    assert texts == run(tiny_model_dir, {"temperature": 1.0, "top_k": 2})[0]
    assert texts != run(tiny_model_dir, {"temperature": 1.0, "top_k": 5})[0]
    free, record = run(folder, {"temperature": 1.0, "top_k": 0})
    assert record["top_k"] == 0 and free != texts
    assert run(tiny_model_dir, {"temperature": 1.0})[1]["top_k"] == 50
    greedy = run(folder, {"do_sample": False, "repetition_penalty": 1.1})[1]
    assert greedy == {"do_sample": False, "repetition_penalty": 1.1}


def test_cut_counts_tokens_as_the_transformers_backend():
    assert _cut([5, 6, 2, 7], "stop", [2]) == ([5, 6, 2], "eos", 3)
    assert _cut([5, 6], "stop", [2]) == ([5, 6], "eos", 3)  # an engine that dropped the EOS
    assert _cut([5, 6, 7], "length", [2]) == ([5, 6, 7], "length", 3)


def test_merged_stats_keep_one_backend_record():
    from genmetrics.generation.vllm_backend import merge_backends

    a = {"name": "vllm", "version": "0.11", "load_seconds": 2.0}
    b = {"name": "vllm", "version": "0.11", "load_seconds": 3.5}
    assert merge_backends([{"backend": a}, {"backend": b}]) == {**a, "load_seconds": 5.5}
    t = {"name": "transformers", "version": "5.24.0"}
    assert merge_backends([{"backend": t}, {"backend": t}]) == t
    other = {**b, "version": "0.12"}
    assert merge_backends([{"backend": a}, {"backend": other}]) == [a, other]
    assert merge_backends([{}, {}]) == [None, None]  # shards written before the key existed


def test_split_backend():
    assert split_backend(SETTINGS) == (
        {"backend": "transformers", "tensor_parallel_size": 1},
        SETTINGS,
    )
    backend, rest = split_backend({**SETTINGS, "backend": "vllm", "tensor_parallel_size": 4})
    assert backend == {"backend": "vllm", "tensor_parallel_size": 4} and rest == SETTINGS
    with pytest.raises(GenmetricsError, match="backend must be one of"):
        split_backend({**SETTINGS, "backend": "tgi"})


def test_a_missing_vllm_says_how_to_install_it(monkeypatch, tiny_model_dir):
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vllm is installed here")
    monkeypatch.delenv(ENGINE_ENV)
    with pytest.raises(GenmetricsError, match=r"cannot import 'vllm' \(pip install vllm"):
        generate_shard(PROMPTS, str(tiny_model_dir), SETTINGS, seed=0, shard=0, progress=False)


# ------------------------------------------------------------------ the plan


@pytest.fixture
def plan_env(monkeypatch, tmp_path):
    monkeypatch.setenv("GENMETRICS_REPO", str(REPO))
    monkeypatch.setenv("GENMETRICS_TINY_MODEL", str(placeholder_checkpoint(tmp_path / "tiny")))
    monkeypatch.setenv(ENGINE_ENV, FAKE)  # backend: vllm needs an importable engine


def _config() -> dict:
    return yaml.safe_load((REPO / "config.yaml").read_text())


def _plan(cfg):
    from genmetrics.plan import load_plan

    return load_plan(cfg, SCHEMA)


def test_the_backend_is_in_the_model_s_params_only(plan_env):
    """``backend: vllm`` puts the backend and its tensor-parallel size (the job's GPUs) in
    that model's generate params and code digest; every other job's params are unchanged,
    and a transformers model's params are what they were before the key existed."""
    cfg = _config()
    before = _plan(cfg)
    name = "smollm2-nucleus"
    cfg["models"][name]["backend"] = "vllm"
    after = _plan(cfg)
    for m, model in before.models.items():
        for ds in model.datasets:
            old, new = before.generation_settings(ds, m), after.generation_settings(ds, m)
            if m != name:
                assert old == new and "backend" not in new
                assert after.generation_code(ds, m) == before.code_digest("generate")
                continue
            assert new == {**old, "backend": "vllm", "tensor_parallel_size": 1}
            assert after.generation_code(ds, m) != before.generation_code(ds, m)
    cfg["models"][name]["resources"] = {"gpus": 2}
    ds = after.models[name].datasets[0]
    settings = _plan(cfg).generation_settings(ds, name)
    assert settings["tensor_parallel_size"] == 2 and settings["device_map"] is None
    cfg["models"][name]["backend"] = "transformers"  # explicit: as if not given
    assert _plan(cfg).generation_settings(ds, name) == {
        **before.generation_settings(ds, name),
        "device_map": "auto",  # two GPUs: accelerate spreads the model
    }


def test_backend_errors_name_the_key(plan_env):
    cfg = _config()
    cfg["models"]["smollm2-nucleus"]["backend"] = "vlm"
    with pytest.raises(GenmetricsError, match=r"models\.smollm2-nucleus\.backend"):
        _plan(cfg)
    cfg = _config()
    cfg["models"]["smollm2-nucleus"]["backend"] = "vllm"
    cfg["models"]["smollm2-nucleus"]["sampling"] = {"typical_p": 0.9}
    with pytest.raises(GenmetricsError, match=r"models\.smollm2-nucleus\.sampling\.typical_p"):
        _plan(cfg)
    cfg = _config()
    cfg["models"]["sys"] = {
        "texts": {"source": {"kind": "local", "path": str(REPO / "README.md")}},
        "backend": "vllm",
    }
    with pytest.raises(GenmetricsError, match=r"models\.sys\.backend: imported texts"):
        _plan(cfg)


def test_a_vllm_model_needs_an_importable_engine(plan_env, monkeypatch):
    """``backend: vllm`` without its engine importable is a plan error naming the key (so
    ``snakemake -n`` fails), for ``vllm`` itself (not installed here) and for a module named
    by ``$GENMETRICS_VLLM_MODULE``; the fake engine passes."""
    cfg = _config()
    cfg["models"]["smollm2-nucleus"]["backend"] = "vllm"
    assert _plan(cfg).models["smollm2-nucleus"].engine["backend"] == "vllm"  # the fake
    for name in ("", "genmetrics.testing.no_such_engine"):
        monkeypatch.setenv(ENGINE_ENV, name)
        want = name or "vllm"
        if not name and importlib.util.find_spec("vllm") is not None:
            continue  # vllm is installed: nothing to refuse
        with pytest.raises(
            GenmetricsError, match=rf"^models\.smollm2-nucleus\.backend: vllm, but '{want}'"
        ):
            _plan(cfg)


# ------------------------------------------------------------------ a real vLLM (GPU)


def _smollm2() -> Path | None:
    """The SmolLM2-135M folder of the e2e cache, if a run fetched it."""
    cache = REPO / ".cache" / "genmetrics"
    for manifest in sorted(cache.glob("**/model.json")):
        try:
            m = json.loads(manifest.read_text())
        except (OSError, ValueError):
            continue
        if "smollm2" in json.dumps(m).lower():
            return manifest
    return None


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="vllm is not installed")
def test_real_vllm_writes_the_transformers_file_shape(monkeypatch):
    """Run when a GPU and vllm are there (`pip install vllm`; `pytest -m slow -k real_vllm`):
    SmolLM2-135M through vLLM gives the transformers backend's ids, keys and order, the same
    texts for the same seed, other texts for another seed."""
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU visible (vLLM needs one)")
    model = _smollm2()
    if model is None:
        pytest.skip("SmolLM2-135M is not in .cache/genmetrics (run the e2e test once)")
    monkeypatch.delenv(ENGINE_ENV)
    # several engines in one process: a fifth of the GPU each, no CUDA graphs (faster start)
    monkeypatch.setenv(
        "GENMETRICS_VLLM_ENGINE_ARGS", '{"gpu_memory_utilization": 0.2, "enforce_eager": true}'
    )
    settings = {**SETTINGS, "words": 20, "tokens_per_word": 1.4, "shards": 1, "batch_size": 4}
    settings = {**settings, "sampling": {"temperature": 1.0, "top_p": 0.95}}
    settings = {**settings, "dtype": "auto", "backend": "vllm", "tensor_parallel_size": 1}
    prompts = copy.deepcopy(PROMPTS)
    a, a_stats = generate_shard_by_backend(
        prompts, model, settings, seed=0, shard=0, progress=False
    )
    b, _ = generate_shard_by_backend(prompts, model, settings, seed=0, shard=0, progress=False)
    c, _ = generate_shard_by_backend(prompts, model, settings, seed=1, shard=0, progress=False)
    t, t_stats = generate_shard_by_backend(
        prompts, model, {**settings, "backend": "transformers"}, seed=0, shard=0, progress=False
    )
    assert [r["id"] for r in a] == [r["id"] for r in t] == [p["id"] for p in PROMPTS]
    assert all(list(x) == list(y) for x, y in zip(a, t, strict=True))
    assert sorted(a_stats) == sorted(t_stats) and a_stats["backend"]["name"] == "vllm"
    assert a == b and [r["text"] for r in a] != [r["text"] for r in c]
    assert all(len(r["continuation"].split()) <= 20 for r in a)
    # greedy in float32: the same model gives the same words in both engines, up to kernel
    # numerics (near-ties of the argmax): most prompts agree on their first 5 words
    greedy = {**settings, "sampling": {"do_sample": False}, "dtype": "float32"}
    v, _ = generate_shard_by_backend(prompts, model, greedy, seed=0, shard=0, progress=False)
    t, _ = generate_shard_by_backend(
        prompts, model, {**greedy, "backend": "transformers"}, seed=0, shard=0, progress=False
    )
    same = [
        x["continuation"].split()[:5] == y["continuation"].split()[:5]
        for x, y in zip(v, t, strict=True)
    ]
    assert sum(same) >= 0.75 * len(same), same


# ------------------------------------------------------------------ the workflow


def _snakemake(*args: str, cwd: Path, env: dict | None = None) -> str:
    proc = snakemake(*args, cwd=cwd, env=env)
    return proc.stdout + proc.stderr


def _blocks(out: str, rule: str) -> list[str]:
    import re

    blocks = re.split(r"^\[\w{3} \w{3} .*\]$", out, flags=re.M)
    return [b for b in blocks if re.search(rf"^(local)?rule {rule}:", b.strip(), re.M)]


def test_a_vllm_model_dry_runs_with_its_generate_jobs(plan_env, tmp_path, monkeypatch):
    """The default config with one model on ``backend: vllm``: with an importable engine (the
    fake one, ``$GENMETRICS_VLLM_MODULE``) its generate jobs are in the DAG like every other
    model's; where the engine is not importable (vllm is not installed here) the dry run
    itself fails, naming the key, before any job runs."""
    cfg = _config()
    cfg["models"]["smollm2-nucleus"]["backend"] = "vllm"
    path = tmp_path / "vllm.yaml"
    path.write_text(yaml.safe_dump(cfg))
    out = _snakemake("-n", "--cores", "2", "--configfile", str(path), cwd=tmp_path)
    jobs = _blocks(out, "generate")
    assert any("model=smollm2-nucleus" in b for b in jobs)
    assert any("model=smollm2-pure" in b for b in jobs)
    monkeypatch.setenv(ENGINE_ENV, "genmetrics_no_such_engine")
    proc = snakemake("-n", "--cores", "2", "--configfile", str(path), cwd=tmp_path, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "models.smollm2-nucleus.backend: vllm, but 'genmetrics_no_such_engine'" in out
    assert "rule generate" not in out


@pytest.mark.e2e
def test_switching_one_model_to_vllm_reruns_only_its_jobs(offline_run, tmp_path):
    """A copy of the finished offline run (two tiny models on transformers), then one model
    on ``backend: vllm``: the dry run schedules only that model's generate and merge jobs,
    for the changed params; run with the fake engine, its files have the other model's ids,
    row keys and order, and the merged stats name the backend."""
    import shutil

    from genmetrics.io import read_json, read_jsonl

    work, env, _ = offline_run
    copy_ = tmp_path / "project"
    shutil.copytree(work, copy_, symlinks=True)  # copy2: the same mtimes, nothing to redo
    cfg = yaml.safe_load(TEST_CONFIG.read_text())
    targets = [f"results/generations/stories/{m}/seed0.jsonl" for m in ("tiny-pure", "tiny-chat")]
    model = copy_ / Path(env["GENMETRICS_TINY_MODEL"]).name  # the copy's own checkpoint
    env = {"GENMETRICS_TINY_MODEL": str(model), "GENMETRICS_REPO": str(REPO)}
    env[ENGINE_ENV] = FAKE  # backend: vllm is checked importable when the plan loads
    triggers = (
        "--rerun-triggers",
        *yaml.safe_load((REPO / "cluster/profile.yaml").read_text())["rerun-triggers"],
    )
    # targets first: --rerun-triggers and --configfile take several values
    run = ("--cores", "2", "--set-threads", "generate=1", *triggers)
    out = _snakemake(*targets, "-n", *run, "--configfile", str(TEST_CONFIG), cwd=copy_, env=env)
    assert "Nothing to be done" in out
    cfg["models"]["tiny-chat"]["backend"] = "vllm"
    second = tmp_path / "second.yaml"
    second.write_text(yaml.safe_dump(cfg))
    out = _snakemake(*targets, "-n", *run, "--configfile", str(second), cwd=copy_, env=env)
    generate, merge = _blocks(out, "generate"), _blocks(out, "merge_generations")
    shards = cfg["generation"]["shards"]
    assert len(generate) == shards and len(merge) == 1, out[-3000:]
    assert all("model=tiny-chat" in b for b in generate + merge)
    assert "tiny-pure" not in "".join(generate + merge)
    assert all("backend" in b and "Params have changed" in b for b in generate), generate[0]
    _snakemake(
        *targets, *run, "--configfile", str(second), cwd=copy_, env={**env, ENGINE_ENV: FAKE}
    )
    res = copy_ / "results" / "generations" / "stories"
    a, b = read_jsonl(res / "tiny-pure/seed0.jsonl"), read_jsonl(res / "tiny-chat/seed0.jsonl")
    assert [r["id"] for r in a] == [r["id"] for r in b] and len(a) > 10
    assert all(list(x) == list(y) for x, y in zip(a, b, strict=True))
    a_stats, b_stats = (
        read_json(res / "tiny-pure/seed0.stats.json"),
        read_json(res / "tiny-chat/seed0.stats.json"),
    )
    assert sorted(a_stats) == sorted(b_stats)
    assert a_stats["backend"]["name"] == "transformers"
    assert b_stats["backend"] == {**b_stats["backend"], "name": "vllm", "engine": FAKE}
    assert b_stats["backend"]["load_seconds"] >= 0  # one record, the shards' loads summed
    assert b_stats["provenance"][0]["config"]["generation"]["backend"] == "vllm"
    out = _snakemake(*targets, "-n", *run, "--configfile", str(second), cwd=copy_, env=env)
    assert "Nothing to be done" in out


@pytest.mark.parametrize("template", ["base", "chat"])
def test_prompts_encode_as_the_transformers_backend_encodes_them(tiny_lm, template):
    """The batch encoding gives each prompt the ids of the transformers backend's one call per
    text (special tokens for ``base`` only; a chat prompt through the chat template)."""
    from genmetrics.data.prompts import DEFAULT_INSTRUCTION, format_prompt
    from genmetrics.generation.transformers_backend import GenerationSettings
    from genmetrics.generation.vllm_backend import _encode

    _, tok = tiny_lm
    s = GenerationSettings.of({**SETTINGS, "template": template})
    ids, encoded = _encode(PROMPTS, tok, s)
    assert ids == [p["id"] for p in PROMPTS]
    for p, e in zip(PROMPTS, encoded, strict=True):
        text = format_prompt(p["prompt"], template, tok, DEFAULT_INSTRUCTION, "prefix")
        assert e == tok(text, add_special_tokens=template == "base")["input_ids"]
    assert (
        encoded[0]
        != _encode(
            PROMPTS,
            tok,
            GenerationSettings.of(
                {**SETTINGS, "template": "chat" if template == "base" else "base"}
            ),
        )[1][0]
    )
    with pytest.raises(GenmetricsError, match="appears more than once"):
        _encode([*PROMPTS, PROMPTS[0]], tok, s)
