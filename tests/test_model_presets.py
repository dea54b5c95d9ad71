"""Model presets (genmetrics.models.presets): Le Bronnec et al. (2024)'s decoding per model
family, resolved by the plan into each model's generation settings."""

from __future__ import annotations

import copy
import math

import pytest
import yaml
from conftest import REPO, placeholder_checkpoint

from genmetrics import GenmetricsError
from genmetrics.data.prompts import max_new_tokens
from genmetrics.models.presets import PRESETS, get_preset
from genmetrics.plan import load_plan

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
HUB = {"kind": "hub", "repo": "org/model", "revision": "0" * 40}

# Table B.3 as pr-4-llm's configs/generation/*/*.yaml run it (read by hand): preset ->
# (template, tokenizer family, top_p, temperature); every one repetition_penalty 1.18
TABLE_B3 = {
    "pr4llm-llama2": ("base", "llama2", 0.9, 0.6),
    "pr4llm-llama2-chat": ("chat", "llama2", 0.9, 0.6),
    "pr4llm-vicuna": ("chat", "llama2", 0.9, 0.6),
    "pr4llm-mistral": ("base", "mistral", 1.0, 0.7),
    "pr4llm-mistral-instruct": ("chat", "mistral", 1.0, 0.7),
    "pr4llm-pythia": ("base", "pythia", 1.0, 1.0),
}
# Table B.1: tokens per word of each family
TABLE_B1 = {"llama2": 1.360, "mistral": 1.313, "pythia": 1.183}


@pytest.fixture(autouse=True)
def _env(monkeypatch, tmp_path):
    monkeypatch.setenv("GENMETRICS_REPO", str(REPO))
    monkeypatch.setenv("GENMETRICS_TINY_MODEL", str(placeholder_checkpoint(tmp_path / "tiny")))


def config_with(model: dict, checkpoint: dict | None = None) -> dict:
    """The default config plus checkpoint ``llm`` (a hub model, nothing fetched by the plan)
    and model ``m``."""
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    cfg["checkpoints"]["llm"] = {"source": dict(HUB), **(checkpoint or {})}
    cfg["models"]["m"] = {"checkpoint": "llm", **model}
    return cfg


def settings_of(cfg: dict, model: str = "m"):
    return load_plan(cfg, SCHEMA).models[model].generation["bbc"]


def expected_presets() -> dict[str, tuple]:
    out = {}
    for name, row in TABLE_B3.items():
        out[name] = row
        out[f"{name}-creative"] = (*row[:2], 1.0, 1.0)  # creative: T 1, top_p 1 for all
    return out


def test_the_schema_offers_every_preset_and_only_those():
    schema = yaml.safe_load(SCHEMA.read_text())
    model = schema["properties"]["models"]["additionalProperties"]
    assert model["properties"]["preset"]["enum"] == list(PRESETS)
    assert set(PRESETS) == set(expected_presets())


@pytest.mark.parametrize("name", list(expected_presets()))
def test_each_preset_gives_the_paper_s_sampling_and_tokens_per_word(name):
    template, family, top_p, temperature = expected_presets()[name]
    s = settings_of(config_with({"preset": name}))
    assert dict(s.sampling) == {
        "do_sample": True,
        "top_p": top_p,
        "temperature": temperature,
        "repetition_penalty": 1.18,
    }
    assert (s.template, s.tokenizer_family) == (template, family)
    assert s.tokens_per_word == TABLE_B1[family]
    # words 40 (config.yaml), margin 1.25: ceil(68.0), ceil(65.65), ceil(59.15)
    want = {"llama2": 68, "mistral": 66, "pythia": 60}[family]
    assert max_new_tokens(s.words, s.tokens_per_word, s.token_margin) == want
    assert get_preset(name).source.startswith("Le Bronnec et al. (2024), Table B.3")


def test_an_explicit_sampling_key_wins_key_by_key():
    s = settings_of(config_with({"preset": "pr4llm-mistral", "sampling": {"temperature": 0.9}}))
    assert dict(s.sampling) == {
        "do_sample": True,
        "top_p": 1.0,
        "temperature": 0.9,
        "repetition_penalty": 1.18,
    }
    assert settings_of(
        config_with({"preset": "pr4llm-llama2-chat", "template": "base"})
    ).template == ("base")


def test_an_unknown_preset_names_its_key():
    with pytest.raises(GenmetricsError, match=r"^models\.m\.preset: .*'pr4llm-gpt5'"):
        load_plan(config_with({"preset": "pr4llm-gpt5"}), SCHEMA)
    with pytest.raises(GenmetricsError, match=r"^models\.m\.preset: unknown preset 'x'"):
        get_preset("x", "models.m.preset")


def test_a_preset_on_imported_texts_is_refused():
    cfg = config_with({"preset": "pr4llm-llama2"})
    cfg["models"]["m"] = {"texts": {"source": {"kind": "local", "path": "x.jsonl"}}}
    cfg["models"]["m"]["preset"] = "pr4llm-llama2"
    with pytest.raises(GenmetricsError, match=r"^models\.m\.preset: imported texts"):
        load_plan(cfg, SCHEMA)


def test_the_checkpoint_s_family_must_agree_with_the_preset_or_be_a_variant_row():
    """A checkpoint naming another family is an error naming both keys; a variant row of the
    preset's family (``llama2-pr4llm-webtext``: the value pr-4-llm's webtext configs imply)
    is used instead of the preset's."""
    cfg = config_with({"preset": "pr4llm-llama2-chat"}, {"tokenizer_family": "mistral"})
    with pytest.raises(
        GenmetricsError,
        match=r"^checkpoints\.llm\.tokenizer_family: 'mistral' contradicts models\.m\.preset",
    ):
        load_plan(cfg, SCHEMA)
    cfg = config_with({"preset": "pr4llm-vicuna"}, {"tokenizer_family": "llama2-pr4llm-webtext"})
    s = settings_of(cfg)
    assert (s.tokenizer_family, s.tokens_per_word) == ("llama2-pr4llm-webtext", 1.368)
    assert math.ceil(449 * s.tokens_per_word) == 615  # pr-4-llm's webtext budget


def test_a_checkpoint_template_that_contradicts_the_preset_is_an_error_unless_the_model_chooses():
    cfg = config_with({"preset": "pr4llm-llama2-chat"}, {"template": "base"})
    with pytest.raises(
        GenmetricsError, match=r"^checkpoints\.llm\.template: 'base' contradicts models\.m\.preset"
    ):
        load_plan(cfg, SCHEMA)
    cfg["models"]["m"]["template"] = "chat"
    assert settings_of(cfg).template == "chat"
    # a checkpoint that says nothing: the preset's template, not the schema's default (base)
    assert settings_of(config_with({"preset": "pr4llm-vicuna"})).template == "chat"
    assert settings_of(config_with({"preset": "pr4llm-vicuna"}, {"template": "chat"})).template == (
        "chat"
    )


def test_a_preset_change_changes_only_that_model_s_generation_params():
    """The values are the generate job's params: another preset reruns that model's jobs and
    no other's; naming a preset whose values a model already spells out changes nothing."""
    cfg = config_with({"preset": "pr4llm-llama2"})
    plan = load_plan(cfg, SCHEMA)
    other = copy.deepcopy(cfg)
    other["models"]["m"]["preset"] = "pr4llm-llama2-creative"
    plan2 = load_plan(other, SCHEMA)
    for name, model in plan.models.items():
        for ds in model.datasets:
            same = plan.generation_settings(ds, name) == plan2.generation_settings(ds, name)
            assert same == (name != "m"), name
    spelled = copy.deepcopy(cfg)
    spelled["models"]["m"] = {
        "checkpoint": "llm",
        "sampling": dict(PRESETS["pr4llm-llama2"].sampling),
    }
    spelled["checkpoints"]["llm"]["tokenizer_family"] = "llama2"
    assert load_plan(spelled, SCHEMA).generation_settings("bbc", "m") == plan.generation_settings(
        "bbc", "m"
    )


def test_the_webtext_study_shows_the_papers_models_by_preset(monkeypatch):
    """configs/webtext.yaml's commented block (the paper's models on a cluster) is a valid
    config fragment: with it the plan gives Llama-2 and Mistral the decoding of Table B.3 and
    the budget of Table B.1."""
    monkeypatch.setenv("GENMETRICS_REPO", str(REPO))
    text = (REPO / "configs" / "webtext.yaml").read_text()
    cfg = yaml.safe_load(text)
    start = text.index("# The paper's models on a GPU cluster")
    block = text[start : text.index("\nmodels:\n", start)].splitlines()[1:]
    extra = yaml.safe_load(
        "\n".join(line[4:] for line in block if line.startswith("#   ")).replace(
            "<commit>", "a" * 40
        )
    )
    for key, value in extra.items():
        cfg[key].update(value)
    plan = load_plan(cfg, REPO / "workflow" / "schemas" / "config.schema.yaml")
    llama = plan.models["llama2-7b-chat"].generation["webtext"]
    assert (llama.template, llama.tokens_per_word) == ("chat", 1.36)
    assert llama.sampling["temperature"] == 0.6 and llama.sampling["top_p"] == 0.9
    mistral = plan.models["mistral-7b"].generation["webtext"]
    assert (mistral.template, mistral.tokens_per_word, mistral.sampling["temperature"]) == (
        "base",
        1.313,
        0.7,
    )
