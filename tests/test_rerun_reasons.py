"""Rerun reasons name the changed parameters, old → new (genmetrics.plan.rerun_reasons)."""

from __future__ import annotations

from genmetrics.plan.rerun_reasons import (
    MAX_CHANGES,
    changed_leaves,
    describe_params_change,
    install,
)


def test_one_changed_key_of_a_nested_settings_dict_is_named_with_both_values():
    old = {"metric": "mattr", "params": {"window": 10, "seed": 0}, "reference": None}
    new = {"metric": "mattr", "params": {"window": 8, "seed": 0}, "reference": None}
    assert describe_params_change([repr(old)], [repr(new)]) == "params.window: 10 → 8"


def test_two_changed_params_are_paired_by_shape_not_by_order():
    # a score's settings and its upstream (generation settings) both changed; a code digest not
    settings = ({"metric": "mauve", "params": {"k": 5}}, {"metric": "mauve", "params": {"k": 7}})
    upstream = (
        {"candidate_generation": {"model": "gpt2", "settings": {"temperature": 1.0}}},
        {"candidate_generation": {"model": "gpt2", "settings": {"temperature": 0.7}}},
    )
    olds = [repr(settings[0]), repr(upstream[0])]
    news = [repr(upstream[1]), repr(settings[1])]
    assert changed_leaves(olds, news) == [
        ("candidate_generation.settings.temperature", 1.0, 0.7),
        ("params.k", 5, 7),
    ]
    text = describe_params_change(olds, news)
    assert "params.k: 5 → 7" in text and "settings.temperature: 1.0 → 0.7" in text
    assert "metric" not in text and "gpt2" not in text


def test_added_and_removed_keys_say_unset():
    old = {"params": {"k": 5}}
    new = {"params": {"k": 5, "num_buckets": 10}}
    assert describe_params_change([repr(old)], [repr(new)]) == "params.num_buckets: (unset) → 10"
    assert describe_params_change([repr(new)], [repr(old)]) == "params.num_buckets: 10 → (unset)"


def test_plain_values_long_values_and_many_changes():
    assert describe_params_change(["'abc123'"], ["'def456'"]) == "value: 'abc123' → 'def456'"
    long_old, long_new = repr({"t": "x" * 200}), repr({"t": "y" * 200})
    text = describe_params_change([long_old], [long_new])
    assert text.startswith("t: 'xxx") and "…" in text and len(text) < 140
    old = {f"k{i:02d}": i for i in range(MAX_CHANGES + 3)}
    new = {k: v + 1 for k, v in old.items()}
    text = describe_params_change([repr(old)], [repr(new)])
    assert text.endswith("; and 3 more") and text.startswith("k00: 0 → 1")


def test_install_replaces_snakemake_s_text_only():
    from snakemake.persistence import ParamsChange

    assert install() and install()  # idempotent
    change = ParamsChange(
        only_old={repr({"params": {"window": 10}})},
        only_new={repr({"params": {"window": 8}})},
        files={"results/scores/x.json"},
    )
    assert str(change) == "params.window: 10 → 8"
    assert bool(change) and not ParamsChange() and str(ParamsChange()) == "No params change"
