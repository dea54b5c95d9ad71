"""Model presets: a paper's decoding, prompt template and tokenizer family, by name.

``models.<m>.preset: <name>`` fills that model's ``sampling`` (its own ``sampling`` keys win,
key by key), its ``template`` (unless ``models.<m>.template`` is given) and the tokenizer
family of its budget (unless the checkpoint names one: it must then be the preset's family or
a variant row of it, ``<family>-...``, e.g. ``llama2-pr4llm-webtext``). A checkpoint whose
own ``template`` contradicts the preset's is an error naming both keys. The plan resolves
presets (:func:`resolve`): a generate job's params hold the values, so changing a preset's
values reruns exactly the models that name it.

The ``pr4llm-*`` presets are Le Bronnec et al. (2024), "Exploring Precision and Recall to
assess the quality and diversity of LLMs" (ACL), Table B.3, as their code runs them:
``configs/generation/{webtext,wikipedia_bio,creative}/*.yaml`` of AlexVerine/pr-4-llm
(commit 3a25efb), every one with ``do_sample: true`` and ``repetition_penalty: 1.18``:

=========================  ==============================  =====  ===========  =========
preset                     pr-4-llm configs                top_p  temperature  template
=========================  ==============================  =====  ===========  =========
pr4llm-llama2              llama{7b,13b,70b}.yaml          0.9    0.6          base
pr4llm-llama2-chat         llama{7b,13b,70b}-chat.yaml     0.9    0.6          chat
pr4llm-vicuna              vicuna.yaml (vicuna-7b-v1.5)    0.9    0.6          chat
pr4llm-mistral             mistral.yaml (7B-v0.1)          1.0    0.7          base
pr4llm-mistral-instruct    mistral-chat.yaml (v0.2)        1.0    0.7          chat
pr4llm-pythia              pythia{6.9b,12b}.yaml           1.0    1.0          base
=========================  ==============================  =====  ===========  =========

(pythia: wikipedia_bio and creative only.) ``<preset>-creative`` is the same model on the
creative-writing task, where every model samples with top_p 1.0, temperature 1.0
(``configs/generation/creative/*.yaml``).

**top_k: the paper's text and its code differ.** The authors' configs set no ``top_k``, so
their ``generate`` calls ran transformers' default, top-50 sampling; the paper's Table B.3
gives top_p and temperature only (top_p 1.0, temperature 1.0 reads as sampling from the
whole vocabulary). The presets leave ``top_k`` unset, as the code ran them (top-50, recorded
as ``backend.sampling.top_k`` 50 in each generation's stats); for the text's reading add
``sampling: {top_k: 0}`` to the model (its own keys win over the preset's).

Tokenizer families: ``llama2`` (Vicuna v1.5 is Llama 2 fine-tuned, with its 32,000-token
SentencePiece vocabulary), ``mistral``, ``pythia``: the rows of Table B.1 in
``resources/tokens_per_word.tsv``.

The authors wrap chat prompts as ``[INST] … [/INST]`` (Llama-2-chat, Mistral-Instruct) and
``USER: … \\n\\nASSISTANT:`` (Vicuna) by hand; genmetrics' ``template: chat`` uses the
tokenizer's own chat template (:func:`genmetrics.data.prompts.format_prompt`), which for
Llama-2-chat and Mistral-Instruct is that ``[INST]`` wrapper. The preset records the
authors' wrapper (:attr:`ModelPreset.chat_wrapper`) as documentation only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from genmetrics import GenmetricsError

CITATION = (
    "Le Bronnec et al. (2024), Table B.3; AlexVerine/pr-4-llm 3a25efb "
    "configs/generation/{webtext,wikipedia_bio,creative}/*.yaml"
)


@dataclass(frozen=True)
class ModelPreset:
    """What a preset sets: sampling, template, tokenizer family (a tokens-per-word row)."""

    name: str
    template: str  # chat | base
    tokenizer_family: str
    sampling: Mapping[str, Any] = field(default_factory=dict)
    source: str = CITATION
    chat_wrapper: str | None = None  # the authors' hand-made chat format (documentation)


def _pr4llm() -> dict[str, ModelPreset]:
    inst, vicuna = "[INST] … [/INST]", "USER: … \n\nASSISTANT:"  # pr-4-llm chat_tokens
    # name: (template, tokenizer family, top_p, temperature, chat wrapper)
    models = {
        "pr4llm-llama2": ("base", "llama2", 0.9, 0.6, None),
        "pr4llm-llama2-chat": ("chat", "llama2", 0.9, 0.6, inst),
        "pr4llm-vicuna": ("chat", "llama2", 0.9, 0.6, vicuna),
        "pr4llm-mistral": ("base", "mistral", 1.0, 0.7, None),
        "pr4llm-mistral-instruct": ("chat", "mistral", 1.0, 0.7, inst),
        "pr4llm-pythia": ("base", "pythia", 1.0, 1.0, None),
    }
    out = {}
    for name, (template, family, top_p, temperature, wrapper) in models.items():
        for preset, (p, t) in ((name, (top_p, temperature)), (f"{name}-creative", (1.0, 1.0))):
            sampling = {"do_sample": True, "top_p": p, "temperature": t, "repetition_penalty": 1.18}
            out[preset] = ModelPreset(
                preset, template, family, MappingProxyType(sampling), chat_wrapper=wrapper
            )
    return out


#: every preset by name (the schema's ``models.<m>.preset`` enum lists the same names)
PRESETS: dict[str, ModelPreset] = _pr4llm()


def get_preset(name: str, where: str = "preset") -> ModelPreset:
    try:
        return PRESETS[name]
    except KeyError:
        raise GenmetricsError(
            f"{where}: unknown preset {name!r}; known: {', '.join(PRESETS)}"
        ) from None


def resolve(
    name: str,
    model: Mapping[str, Any],
    checkpoint: Mapping[str, Any],
    *,
    model_key: str,
    checkpoint_key: str,
    checkpoint_template: str | None,
) -> dict[str, Any]:
    """``{"template", "tokenizer_family", "sampling"}`` of a model that names preset ``name``.

    ``model``: ``models.<m>`` (its ``template`` and ``sampling`` keys win over the preset's);
    ``checkpoint``: ``checkpoints.<c>``, whose ``tokenizer_family`` must be the preset's
    family or a variant row of it (``<family>-...``); ``checkpoint_template``: the
    checkpoint's ``template`` as the config gives it (None: not given), which must agree with
    the preset's unless the model gives its own. Errors name the keys (``model_key``,
    ``checkpoint_key``)."""
    preset = get_preset(name, f"{model_key}.preset")
    family = checkpoint.get("tokenizer_family")
    if family is not None and not (
        family == preset.tokenizer_family or family.startswith(f"{preset.tokenizer_family}-")
    ):
        raise GenmetricsError(
            f"{checkpoint_key}.tokenizer_family: {family!r} contradicts {model_key}.preset: "
            f"{name} (tokenizer family {preset.tokenizer_family!r}); leave it unset, or name "
            f"{preset.tokenizer_family!r} or a row '{preset.tokenizer_family}-...'"
        )
    template = model.get("template")
    if template is None:
        if checkpoint_template not in (None, preset.template):
            raise GenmetricsError(
                f"{checkpoint_key}.template: {checkpoint_template!r} contradicts "
                f"{model_key}.preset: {name} (template {preset.template!r}); set "
                f"{model_key}.template to choose"
            )
        template = preset.template
    return {
        "template": template,
        "tokenizer_family": family or preset.tokenizer_family,
        "sampling": {**preset.sampling, **(model.get("sampling") or {})},
    }
