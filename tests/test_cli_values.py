"""Command-line values are checked as the config checks them: ``--interval`` keys within the
schema's bounds, integers where integers are wanted, numbers in decimal only (``--param
k=010`` is not 8). Each bad value is one line on stderr naming the option, exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from genmetrics import GenmetricsError
from genmetrics.cli import INTERVAL_KEYS, main
from genmetrics.io import write_jsonl

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def texts(tmp_path_factory):
    rng = np.random.default_rng(0)
    words = "the a cat dog sat ran on under mat log".split()
    rows = [
        {"id": f"t{i}", "prompt_id": f"p{i // 2}", "text": " ".join(rng.choice(words, 80))}
        for i in range(24)
    ]
    path = tmp_path_factory.mktemp("values") / "texts.jsonl"
    write_jsonl(path, rows)
    return str(path)


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("level=1.5", "--interval level: must be a number in (0, 1), got 1.5"),
        ("level=.nan", "--interval level: must be a number in (0, 1), got nan"),
        ("level=1", "--interval level: must be a number in (0, 1), got 1"),
        ("level=0", "--interval level: must be a number in (0, 1), got 0"),
        ("seed=-1", "--interval seed: must be an integer in [0, 4294967295], got -1"),
        ("seed=4294967296", "--interval seed: must be an integer in [0, 4294967295]"),
        ("seed=.inf", "--interval seed: must be an integer in [0, 4294967295], got inf"),
        ("resamples=-5", "--interval resamples: must be an integer in [20, 100000], got -5"),
        ("resamples=1", "--interval resamples: must be an integer in [20, 100000], got 1"),
        ("resamples=19", "--interval resamples: must be an integer in [20, 100000], got 19"),
        ("resamples=2.5", "--interval resamples: must be an integer in [20, 100000], got 2.5"),
        ("resamples=100001", "--interval resamples: must be an integer in [20, 100000]"),
        ("resamples=true", "--interval resamples: must be an integer in [20, 100000], got True"),
        ("resamples=010", "--interval resamples: 010 is read as 8 by YAML 1.1"),
        ("resamples=0x20", "--interval resamples: 0x20 is read as 32 by YAML 1.1"),
        ("resamples=1_000", "--interval resamples: 1_000 is read as 1000 by YAML 1.1"),
        ("seed=1:30", "--interval seed: 1:30 is read as 90 by YAML 1.1"),
        ("level=0_5.0", "--interval level: 0_5.0 is read as 5.0 by YAML 1.1"),
        ("scheme=bogus", "--interval scheme: must be one of half | replacement, got 'bogus'"),
    ],
)
def test_bad_interval_values_exit_2_naming_the_option(capsys, texts, value, message):
    code, out, err = run(capsys, "score", "distinct_n", "--candidate", texts, "--interval", value)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith(f"genmetrics: error: {message}")


def test_interval_values_at_the_bounds_are_taken(capsys, texts):
    args = ("score", "distinct_n", "--candidate", texts, "--param", "n=2", "--interval")
    code, out, _ = run(capsys, *args, "resamples=20.0", "level=0.5", "seed=4294967295")
    assert code == 0
    got = json.loads(out)["interval"]
    assert (got["resamples"], got["level"], got["seed"]) == (20, 0.5, 4294967295)
    assert isinstance(got["resamples"], int)
    lo, hi = got["lower"]["distinct_2"], got["upper"]["distinct_2"]
    assert lo < hi  # twenty resamples: an interval with a width


@pytest.mark.parametrize(
    ("value", "read_as"),
    [("010", "8"), ("0x10", "16"), ("0b110", "6"), ("1_0", "10"), ("1:10", "70"), ("+010", "8")],
)
def test_param_numbers_are_decimal_only(capsys, texts, value, read_as):
    """Each value was read as a valid sample size (8, 16, ...) of 80-word texts: no error."""
    args = ("score", "hdd", "--candidate", texts, "--param", f"sample={value}")
    code, out, err = run(capsys, *args)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert err.startswith(f"genmetrics: error: --param sample: {value} is read as {read_as} by")


def test_param_decimal_numbers_and_strings_still_read(capsys, texts):
    code, out, _ = run(capsys, "score", "hdd", "--candidate", texts, "--param", "sample=10")
    assert code == 0 and json.loads(out)["params"]["sample"] == 10
    code, out, _ = run(
        capsys, "score", "self_bleu", "--candidate", texts, "--param", "tokenizer=whitespace"
    )
    assert code == 0 and json.loads(out)["params"]["tokenizer"] == "whitespace"


def test_a_config_string_in_octal_is_refused_not_read_as_8():
    """``sample: "010"`` in a config (a string, which the strict file reading lets through) was
    read as YAML when no constraint took the string: 8. It is an error naming the key now."""
    from genmetrics.metrics import get

    m = get("hdd")
    with pytest.raises(GenmetricsError, match=r"^metrics\.h\.params\.sample: 010 is read as 8"):
        m.check_params({"sample": "010"}, "metrics.h.params")
    assert m.check_params({"sample": "10"}, "metrics.h.params")["sample"] == 10


def test_interval_keys_are_the_schema_s():
    """The CLI's bounds and defaults of ``--interval`` are those of the config schema's
    ``metrics.<entry>.interval``."""
    from genmetrics.params import Interval, Options
    from genmetrics.scoring.intervals import DEFAULTS

    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())
    entry = schema["properties"]["metrics"]["additionalProperties"]["properties"]
    props = next(s for s in entry["interval"]["oneOf"] if s.get("type") == "object")["properties"]
    assert set(props) == set(INTERVAL_KEYS) == set(DEFAULTS)
    for key, prop in props.items():
        if "$ref" in prop:
            prop = {**schema["definitions"][prop["$ref"].rsplit("/", 1)[1]], **prop}
        param = INTERVAL_KEYS[key]
        assert param.default == prop["default"] == DEFAULTS[key], key
        (c,) = param.constraints
        if prop["type"] == "string":
            assert isinstance(c, Options) and set(c.values) == set(prop["enum"])
            continue
        assert isinstance(c, Interval) and c.type is {"integer": int, "number": float}[prop["type"]]
        left = prop.get("minimum", prop.get("exclusiveMinimum"))
        right = prop.get("maximum", prop.get("exclusiveMaximum"))
        closed = {(True, True): "both", (True, False): "left", (False, True): "right"}.get(
            ("minimum" in prop, "maximum" in prop), "neither"
        )
        assert (c.left, c.right, c.closed) == (left, right, closed), key
