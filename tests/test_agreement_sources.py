"""Agreement sets given as upstream ``sources`` (configs/agreement.yaml: all five sets): the
plan routes each set's folder through agreement_fetch, which makes the files from the data
mirror or from the upstream (here file:// URLs of the excerpts in tests/data/upstream/)."""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path

import pytest
from conftest import REPO, SHARED_DATA, realsumm_excerpt_pickles
from test_plan import config, plan_of

from genmetrics import GenmetricsError
from genmetrics.agreement.judgment_sets import read_judgments
from genmetrics.data.upstream import READERS, rows_bytes

DATA = REPO / "tests" / "data" / "upstream"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def agreement_config(monkeypatch, mirror=None) -> dict:
    monkeypatch.setenv("GENMETRICS_REPO", str(REPO))
    monkeypatch.delenv("GENMETRICS_DATA_MIRROR", raising=False)
    cfg = config("configs/agreement.yaml")
    if mirror:
        cfg["data_mirror"] = str(mirror)
    return cfg


def test_every_agreement_set_plans_without_the_mirror(monkeypatch):
    plan = plan_of(agreement_config(monkeypatch))
    ag = plan.agreement
    assert ag.fetched() == ["realsumm", "xsum", "hanna", "contrastive_search", "rankgen"]
    folder = "results/human-agreement/agreement/realsumm/data"
    assert ag.judgment_set("realsumm").path == folder
    assert ag.inputs("realsumm")["data"] == [folder]
    assert ag.settings("realsumm")["path"] == folder
    assert ag.fetch_inputs("realsumm") == []  # downloaded by the job
    s = ag.fetch_settings("xsum")
    assert list(s["sources"]) == ["summaries.jsonl"] and s["cache"].endswith(".cache/genmetrics")
    up = s["sources"]["summaries.jsonl"]["upstream"]
    assert up["reader"] == "xsum_hallucination" and up["commit"].startswith("4abdbb2c807c")
    assert any(
        n.startswith("agreement.sets.realsumm.sources.summaries.jsonl: realsumm/summaries.jsonl ")
        and "downloaded from neulab/REALSumm@a5900e3e36c6" in n
        for n in plan.notes
    )


def test_a_set_missing_a_file_of_its_kind_names_the_key(monkeypatch):
    cfg = agreement_config(monkeypatch)
    del cfg["agreement"]["sets"]["realsumm"]["sources"]["references.jsonl"]
    with pytest.raises(GenmetricsError) as e:
        plan_of(cfg)
    assert str(e.value) == (
        "agreement.sets.realsumm.sources: a realsumm set reads references.jsonl, "
        "summaries.jsonl; no source for references.jsonl"
    )


def _excerpt_sources(cfg: dict, folder: Path) -> dict:
    """configs/agreement.yaml's REALSumm sources with the doc-0 excerpts of the pickles as
    their upstream files (file:// URLs), rows and sha256 of what the reader makes of them."""
    sources = copy.deepcopy(cfg["agreement"]["sets"]["realsumm"]["sources"])
    files = realsumm_excerpt_pickles(folder)
    for src in sources.values():
        up = src["upstream"]
        rows = READERS["realsumm_pickles"](files, up["options"])
        src |= {"rows": len(rows), "sha256": sha(rows_bytes(rows))}
        up["files"] = {
            k: {"url": v.as_uri(), "sha256": sha(v.read_bytes())} for k, v in files.items()
        }
    return sources


def test_fetch_makes_the_realsumm_folder_from_its_upstream(monkeypatch, tmp_path):
    from genmetrics.agreement.jobs import fetch_set

    cfg = agreement_config(monkeypatch)
    sources = _excerpt_sources(cfg, tmp_path)
    made = fetch_set({"sources": sources, "cache": str(tmp_path / "c")}, tmp_path / "d", "rs")
    assert [p.name for p in made] == ["references.jsonl", "summaries.jsonl"]
    judged = read_judgments("realsumm", tmp_path / "d")
    assert len(judged.table) == 4 and set(judged.table["item"]) == {"0"}
    if SHARED_DATA.exists():  # rows of our copy, byte for byte (the excerpt: 4 systems)
        for name in ("references.jsonl", "summaries.jsonl"):
            ours = (SHARED_DATA / "realsumm" / name).read_bytes().splitlines(keepends=True)
            got = (tmp_path / "d" / name).read_bytes().splitlines(keepends=True)
            assert got and set(got) <= set(ours), name
    # a wrong recorded digest is the reader's error, naming the set's file
    sources["summaries.jsonl"]["sha256"] = "0" * 64
    with pytest.raises(
        GenmetricsError,
        match=r"^agreement.sets.rs.sources.summaries.jsonl.sha256: the rows made from neulab/",
    ):
        fetch_set({"sources": sources, "cache": str(tmp_path / "c2")}, tmp_path / "e", "rs")


@pytest.mark.skipif(not SHARED_DATA.exists(), reason="needs ../shared/data as the data mirror")
def test_with_the_mirror_the_fetch_copies_its_checked_files(monkeypatch, tmp_path):
    from genmetrics.agreement.jobs import fetch_set

    plan = plan_of(agreement_config(monkeypatch, SHARED_DATA))
    ag = plan.agreement
    assert ag.fetch_inputs("realsumm") == [
        str(SHARED_DATA / "realsumm" / f) for f in ("references.jsonl", "summaries.jsonl")
    ]
    fetch_set(ag.fetch_settings("xsum"), tmp_path / "x", "xsum")
    ours = SHARED_DATA / "xsum_hallucination" / "summaries.jsonl"
    assert (tmp_path / "x" / "summaries.jsonl").read_bytes() == ours.read_bytes()
    judged = read_judgments("xsum_hallucination", tmp_path / "x")
    assert judged.table["item"].nunique() == 498  # 4 systems x 498 documents
    fetch_set(ag.fetch_settings("contrastive_search"), tmp_path / "cs", "contrastive_search")
    assert len(read_judgments("contrastive_search_ab", tmp_path / "cs").table) == 150
    fetch_set(ag.fetch_settings("hanna"), tmp_path / "h", "hanna")
    assert len(read_judgments("hanna", tmp_path / "h").table) == 1056
    fetch_set(ag.fetch_settings("rankgen"), tmp_path / "rg", "rankgen")
    table = read_judgments("rankgen_ab", tmp_path / "rg").table  # an item per row, its votes
    assert len(table) == 200 and table["votes"].map(len).sum() == 609
    for name in ag.fetched():  # every recorded digest and count is our copy's
        for src in ag.fetch_settings(name)["sources"].values():
            data = (SHARED_DATA / src["file"]).read_bytes()
            assert (sha(data), data.count(b"\n")) == (src["sha256"], src["rows"]), src["file"]


def test_fetch_writes_hanna_compact_as_our_copy(monkeypatch, tmp_path):
    """HANNA's rows are written compact (our scores.jsonl's form): the digest the fetch checks
    is of those bytes; the excerpt's 2 systems x 2 stories."""
    from genmetrics.agreement.jobs import fetch_set

    cfg = agreement_config(monkeypatch)
    src = copy.deepcopy(cfg["agreement"]["sets"]["hanna"]["sources"]["scores.jsonl"])
    path = DATA / "hanna.metric_scores_llm.excerpt.csv"
    rows = READERS["hanna_scores"]({"scores": path}, {"prompts": 2})
    src |= {"rows": 4, "sha256": sha(rows_bytes(rows, compact=True))}
    src["upstream"] |= {
        "files": {"scores": {"url": path.as_uri(), "sha256": sha(path.read_bytes())}},
        "options": {"prompts": 2},
    }
    fetch_set({"sources": {"scores.jsonl": src}, "cache": str(tmp_path / "c")}, tmp_path / "h")
    made = (tmp_path / "h" / "scores.jsonl").read_bytes()
    assert made.startswith(b'{"id":"hanna-s0000","story_id":0,"system":"Human",')
    table = read_judgments("hanna", tmp_path / "h").table
    assert sorted(table["system"].unique()) == ["BertGeneration", "Human"]
