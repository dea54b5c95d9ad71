"""A tokens-per-word row outside the plausible 0.5 to 20 is warned about, naming the file, the
line and the row (``0.0001`` made every generation one token long, silently)."""

from __future__ import annotations

import pytest
import yaml
from conftest import REPO, placeholder_checkpoint

from genmetrics.models.tokens_per_word import PLAUSIBLE, implausible_rows, with_user_table
from genmetrics.plan import load_plan

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
HEADER = "tokenizer\ttokens_per_word\tmeasured_on\n"


def test_a_user_row_of_0_0001_is_a_warning_of_the_run(monkeypatch, tmp_path):
    monkeypatch.setenv("GENMETRICS_REPO", str(REPO))
    monkeypatch.setenv("GENMETRICS_TINY_MODEL", str(placeholder_checkpoint(tmp_path / "tiny")))
    table = tmp_path / "mine.tsv"
    table.write_text(HEADER + "# mine\nsmollm2\t0.0001\tmeasured in thousands?\n")
    cfg = yaml.safe_load((REPO / "config.yaml").read_text())
    cfg["tokens_per_word_table"] = str(table)
    plan = load_plan(cfg, SCHEMA)
    assert plan.models["smollm2-pure"].generation["bbc"].tokens_per_word == 0.0001
    warned = [n for n in plan.notes if n.startswith("warning:")]
    assert warned == [
        f"warning: tokens_per_word_table: {table}: line 3: row 'smollm2' says 0.0001 tokens per "
        "word, outside the plausible 0.5 to 20: a 50-word budget becomes 1 token(s); check the "
        "row (a typo, or another unit?)"
    ]


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_rows_outside_the_bounds_and_only_those(tmp_path, eol):
    rows = [
        ("low", 0.49),
        ("edge_low", 0.5),
        ("gpt2", 1.243),
        ("edge_high", 20.0),
        ("high", 20.5),
    ]
    body = "".join(f"{n}\t{v}\tnote{eol}" for n, v in rows)
    path = tmp_path / "t.tsv"
    path.write_bytes((HEADER.replace("\n", eol) + f"# a comment{eol}{eol}" + body).encode())
    got = implausible_rows(path)
    assert [g.split(": ")[2:4] for g in got] == [
        ["line 4", "row 'low' says 0.49 tokens per word, outside the plausible 0.5 to 20"],
        ["line 8", "row 'high' says 20.5 tokens per word, outside the plausible 0.5 to 20"],
    ]
    assert all(g.startswith(f"warning: {path}: line ") for g in got)
    assert "becomes 31 token(s)" in got[0] and "becomes 1282 token(s)" in got[1]
    _, notes = with_user_table({"gpt2": 1.243}, path)
    assert [n for n in notes if n.startswith("warning:")] == [
        g.replace("warning: ", "warning: tokens_per_word_table: ", 1) for g in got
    ]


def test_the_shipped_table_is_plausible():
    assert PLAUSIBLE == (0.5, 20.0)
    assert implausible_rows(REPO / "resources" / "tokens_per_word.tsv") == []
