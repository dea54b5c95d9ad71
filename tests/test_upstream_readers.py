"""Study data from its public upstream: the readers of genmetrics.data.upstream on small files in
the upstream layouts (tests/data/upstream holds verbatim excerpts of the upstream files, the
REALSumm pickles cut to one document), the restricted pickle reader, the data mirror's checks
(sha256, rows) and the dry run's one-line error. Offline: a download is a file:// URL.

Where ../shared/data is present, each reader's rows for the excerpt equal the rows our copy
there has for the same upstream lines."""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from pathlib import Path

import pytest
import yaml
from conftest import REPO, SHARED_DATA, realsumm_excerpt_pickles
from test_plan import config, plan_of

from genmetrics import GenmetricsError
from genmetrics.data.datasets import load_dataset
from genmetrics.data.mirror import fetch_upstream, resolve_source
from genmetrics.data.upstream import READERS, restricted_unpickle, rows_bytes

DATA = REPO / "tests" / "data" / "upstream"


def read(name: str, files: dict[str, Path], options: dict) -> list[dict]:
    return READERS[name](files, options)


# ------------------------------------------------------------------ readers on written files


def test_python_list_reads_the_literal_without_running_the_file(tmp_path):
    src = tmp_path / "make.py"
    src.write_text(
        "import os\nos.system('touch ran')\nother = ['x']\n"
        "writing_prompts = [\n    'Write a poem.',\n    \"Write about \\u00e9t\\u00e9.\",\n]\n"
    )
    rows = read("python_list", {"source": src}, {"variable": "writing_prompts", "id_prefix": "c-"})
    assert rows == [
        {"id": "c-00", "text": "Write a poem.", "source_index": 0},
        {"id": "c-01", "text": "Write about été.", "source_index": 1},
    ]
    assert not (tmp_path / "ran").exists() and not Path("ran").exists()
    src.write_text("writing_prompts = [open('x').read()]\n")
    with pytest.raises(GenmetricsError, match=r"make.py: line 1: writing_prompts is not a literal"):
        read("python_list", {"source": src}, {"variable": "writing_prompts", "id_prefix": "c-"})


def test_gpt2_samples_split_on_markers_and_cut_at_endoftext(tmp_path):
    bar = "=" * 40
    f = tmp_path / "unconditional.txt"
    f.write_text(
        f"{bar} SAMPLE 1 {bar}\nFirst text.\n\nSecond paragraph.<|endoftext|>Next doc\n"
        f"{bar} SAMPLE 2 {bar}\nNo end token here\n"
    )
    opts = {"setting": "s", "id_prefix": "g-", "model": "m", "decoding": "d"}
    rows = read("gpt2_samples", {"samples": f}, opts)
    assert [(r["id"], r["sample_index"], r["text"], r["cut_at_endoftext"]) for r in rows] == [
        ("g-001", 1, "First text.\n\nSecond paragraph.", True),
        ("g-002", 2, "No end token here\n", False),  # the file's last line end is kept
    ]


def test_webtext_jsonl_drops_only_a_cut_off_last_line(tmp_path):
    f = tmp_path / "webtext.train.jsonl"
    docs = [{"id": i, "ended": True, "length": 3, "text": f"doc {i}\n"} for i in range(3)]
    f.write_text("".join(json.dumps(d) + "\n" for d in docs) + '{"id": 3, "ended": tr')
    rows = read("webtext_jsonl", {"documents": f}, {"limit": 3, "id_prefix": "w-"})
    assert [(r["id"], r["source_id"], r["text"]) for r in rows] == [
        ("w-0000", 0, "doc 0\n"),
        ("w-0001", 1, "doc 1\n"),
        ("w-0002", 2, "doc 2\n"),
    ]
    with pytest.raises(GenmetricsError, match="3 documents, fewer than limit 4"):
        read("webtext_jsonl", {"documents": f}, {"limit": 4, "id_prefix": "w-"})
    f.write_text('{"id": 0, "ended": true, "length": 1, "text": "a"}\nnot json\n{"id": 2}\n')
    with pytest.raises(GenmetricsError, match="line 2: not JSON"):
        read("webtext_jsonl", {"documents": f}, {"limit": 3, "id_prefix": "w-"})


def test_restricted_unpickle_reads_numpy_scalars_and_refuses_code(tmp_path):
    np = pytest.importorskip("numpy")
    ok = tmp_path / "ok.pkl"
    ok.write_bytes(pickle.dumps({"a": [np.float64(0.25), np.int64(-3)], "b": ("x", None)}))
    got = restricted_unpickle(ok)
    assert got == {"a": [0.25, -3], "b": ("x", None)}
    assert type(got["a"][0]) is float and type(got["a"][1]) is int

    class Evil:
        def __reduce__(self):
            return (os.system, ("touch pwned",))

    bad = tmp_path / "bad.pkl"
    bad.write_bytes(pickle.dumps({"x": Evil()}))
    with pytest.raises(
        GenmetricsError, match=r"bad.pkl: not read \(refused global (posix|nt)\.system"
    ):
        restricted_unpickle(bad)
    arr = tmp_path / "array.pkl"
    arr.write_bytes(pickle.dumps(np.zeros(3)))
    with pytest.raises(GenmetricsError, match="array.pkl: not read"):
        restricted_unpickle(arr)


def test_realsumm_rows_from_pickles_in_the_upstream_layout(tmp_path):
    np = pytest.importorskip("numpy")

    def doc(summaries):
        return {
            7: {
                "doc_id": 7,
                "ref_summ": "<t> a  reference . </t>  <t> second . </t>",
                "system_summaries": {
                    f"{n}.txt": {
                        "system_summary": t,
                        "scores": {
                            "rouge_1_f_score": np.float64(0.5),
                            "litepyramid_recall": np.float64(p),
                        },
                    }
                    for n, t, p in summaries
                },
            }
        }

    files = {"abs": tmp_path / "abs.pkl", "ext": tmp_path / "ext.pkl"}
    files["abs"].write_bytes(
        pickle.dumps(
            doc([("z_out", "<t> z . </t>", 0.1), ("a_out", "<t> a . </t> <t> no end", 0.2)])
        )
    )
    files["ext"].write_bytes(pickle.dumps(doc([("e_out", "<t> e . </t>", 0.3)])))
    refs = read("realsumm_pickles", files, {"output": "references"})
    assert refs == [{"id": "realsumm-007", "doc_id": 7, "text": "a reference .\nsecond ."}]
    rows = read("realsumm_pickles", files, {"output": "summaries"})
    assert [(r["id"], r["text"], r["litepyramid_recall"], r["scores"]) for r in rows] == [
        ("realsumm-007.abs.a_out", "a .\nno end", 0.2, {"rouge_1_f_score": 0.5}),
        ("realsumm-007.abs.z_out", "z .", 0.1, {"rouge_1_f_score": 0.5}),
        ("realsumm-007.ext.e_out", "e .", 0.3, {"rouge_1_f_score": 0.5}),
    ]


def test_wikitext_detokenizer_undoes_the_corpus_tokenisation():
    from genmetrics.data.upstream_text import wikitext_detokenize as d

    assert d(" a guest @-@ starring role , in 2000 @,@ 000 ( 3 @.@ 5 % ) . ") == (
        "a guest-starring role, in 2000,000 (3.5%)."
    )
    assert d(" he said \" we 're here \" ; it 's Thurstan 's , not the Smiths ' ") == (
        "he said \"we're here\"; it's Thurstan's, not the Smiths'"
    )
    assert d(" [ it 's ] costs $ 5 , £ 400 and ¥ 2 @.@ 1 billion ... or .23 m ") == (
        "[it's] costs $5, £400 and ¥2.1 billion ... or .23 m"
    )
    # a possessive 's before a quoted title keeps the opening quote's space
    assert d(" Eliot 's ' Preludes ' and 1950 – 51 ") == "Eliot's ' Preludes' and 1950 – 51"


def test_wikitext_raw_articles_sections_and_continued_lines(tmp_path):
    f = tmp_path / "wiki.test.raw"
    long = " ".join(["word"] * 8)
    f.write_bytes(
        (
            f" = Some Title = \r\n {long} . \r\n short one . \r\n = = A @-@ Section = = \r\n"
            f" {long} x \r\n = 1 rad / s k = \r\n 1 Ω . {long} \r\n = Next = \r\n {long} \r\n"
        ).encode()
    )
    opts = {"id_prefix": "w-", "min_words": 8, "continued_lines": ["= 1 rad / s k ="]}
    rows = read("wikitext_raw", {"raw": f}, opts)
    assert [(r["id"], r["title"], r["section"], r["paragraph_index"]) for r in rows] == [
        ("w-00-000", "Some Title", None, 0),
        ("w-00-002", "Some Title", "A-Section", 2),  # the short paragraph 1 is counted, left out
        ("w-01-000", "Next", None, 0),
    ]
    assert rows[1]["text"] == f"{long} x = 1 rad / s k = 1 Ω. {long}"
    rows = read("wikitext_raw", {"raw": f}, {**opts, "continued_lines": []})
    assert [r["title"] for r in rows] == ["Some Title", "Some Title", "1 rad / s k", "Next"]


def test_agnews_cleaning_and_the_train_sample_left_outs(tmp_path):
    from genmetrics.data.upstream_text import agnews_clean

    # the space before a lost "&" goes with the entity, except before amp; (our copy's AT &T)
    raw = r"Turner   Newall #39;s  quot;cut quot; AT amp;T \\ next\line #151; 5 #36;1 gt; x"
    assert agnews_clean(raw) == 'Turner Newall\'s "cut" AT &T\nnext line— 5$1 > x'
    test = tmp_path / "test.csv"
    test.write_text('"3","T1","Same text."\n"1","T2","Other, quoted: ""x"""\n')
    assert read("agnews_csv", {"test": test}, {"id_prefix": "t-"}) == [
        {"id": "t-0000", "label": 2, "label_name": "Business", "title": "T1", "text": "Same text."},
        {
            "id": "t-0001",
            "label": 0,
            "label_name": "World",
            "title": "T2",
            "text": 'Other, quoted: "x"',
        },
    ]
    dev = tmp_path / "dev.tsv"
    dev.write_text("Same  text.\tWorld\nNew one.\tSports\nNew  one.\tWorld\nThird.\tSci/Tech\n")
    rows = read("agnews_tsv", {"dev": dev, "test": test}, {"id_prefix": "s-"})
    assert [(r["id"], r["label"], r["text"]) for r in rows] == [
        ("s-00001", 1, "New one."),  # line 0 is a test description, line 2 repeats line 1
        ("s-00003", 3, "Third."),
    ]
    dev.write_text("no tab here\n")
    with pytest.raises(GenmetricsError, match=r"dev.tsv: line 1: not 'description<TAB>"):
        read("agnews_tsv", {"dev": dev, "test": test}, {"id_prefix": "s-"})


def test_alpaca_outputs_follow_the_instruction_numbering(tmp_path):
    def dump(name, recs):
        (tmp_path / name).write_text(json.dumps(recs))
        return tmp_path / name

    ins = dump("a.json", [{"dataset": "d", "instruction": q, "output": "x"} for q in "ABC"])
    out = dump(
        "b.json",
        [
            {"instruction": q, "dataset": "d", "output": o, "generator": "m"}
            for q, o in ("C3", "A1")
        ],
    )
    assert read("alpaca_instructions", {"outputs": ins}, {})[2] == {
        "id": "alpaca-002",
        "dataset": "d",
        "text": "C",
    }
    rows = read("alpaca_outputs", {"outputs": out, "instructions": ins}, {"decoding": "t"})
    assert [(r["id"], r["source_id"], r["text"]) for r in rows] == [
        ("alpaca-000.m", "alpaca-000", "1"),
        ("alpaca-002.m", "alpaca-002", "3"),
    ]
    dump("b.json", [{"instruction": "Z", "output": "", "generator": "m"}])
    with pytest.raises(GenmetricsError, match="b.json: an instruction not in 'instructions'"):
        read("alpaca_outputs", {"outputs": out, "instructions": ins}, {"decoding": "t"})


def test_xsum_hallucination_rows_join_the_three_files(tmp_path):
    (tmp_path / "h.csv").write_text(
        "bbcid,system,summary,hallucination_type,hallucinated_span,"
        "hallucinated_span_start,hallucinated_span_end,worker_id\n"
        + "".join(f"7,{s},{s.lower()} it\\'s.,NULL,NULL,-1,-1,wid_0\n" for s in ("Gold", "PtGen"))
        + "7,BERTS2S,b.,extrinsic,b,1,2,wid_0\n7,BERTS2S,b.,NULL,b,-1,-1,wid_1\n"
        + "7,BERTS2S,b.,intrinsic,b,1,2,wid_0\n"
        + "".join(f"7,{s},{s}.,NULL,NULL,-1,-1,wid_0\n" for s in ("TConvS2S",))
    )
    (tmp_path / "f.csv").write_text(
        'bbcid,system,summary,is_factual,worker_id\n7,TranS2S,"from, factuality.",yes,wid_1\n'
        "7,TranS2S,x,no,wid_0\n"
    )
    (tmp_path / "e.csv").write_text(
        "system_bbcid,R1,R2,RL,BERTScore,Entailment,Faithful,Factual\n"
        "bert_withckpt_7,0.5,0.25,0.5,0.7,1e-05,0.75,0.0\n"
    )
    files = {"faithfulness": "h.csv", "factuality": "f.csv", "scores": "e.csv"}
    rows = read("xsum_hallucination", {k: tmp_path / v for k, v in files.items()}, {})
    assert [
        (r["id"], r["text"], r["n_annotators_with_span"], r["factual_votes"]) for r in rows
    ] == [
        ("7.Gold", "gold it's.", 0, None),
        ("7.BERTS2S", "b.", 1, None),  # wid_1's span has no type: nothing marked
        ("7.TranS2S", "from, factuality.", 0, {"wid_1": "yes", "wid_0": "no"}),
        ("7.PtGen", "ptgen it's.", 0, None),
        ("7.TConvS2S", "TConvS2S.", 0, None),
    ]
    assert rows[1]["faithful"] == 0.75 and rows[1]["entailment"] == 1e-05
    assert list(rows[1])[4:8] == ["text", "faithful", "factual", "rouge1_f"]
    assert "rouge1_f" not in rows[0] and rows[0]["is_reference"] is True
    (tmp_path / "e.csv").write_text(
        "system_bbcid,R1,R2,RL,BERTScore,Entailment,Faithful,Factual\nbart_7,0,0,0,0,0,0,0\n"
    )
    with pytest.raises(GenmetricsError, match=r"e.csv: unknown system 'bart' in bart_7"):
        read("xsum_hallucination", {k: tmp_path / v for k, v in files.items()}, {})


def test_detectgpt_human_joins_each_model_file_s_trimmed_copies(tmp_path):
    def dump(name, originals):
        (tmp_path / name).write_text(json.dumps({"original": originals, "sampled": originals}))
        return tmp_path / name

    files = {
        "xsum_gpt2-xl": dump("a.json", ["a b c", "x y", "x y z"]),
        # longest copies first, each to the longest document it continues: "x y z w" joins
        # "x y z", not the first match "x y" (two postings of one story); "q r" is new
        "xsum_opt-2.7b": dump("b.json", ["x y", "q r", "x y z w", "a b"]),
    }
    rows = read("detectgpt_human", files, {"sources": {"xsum": "BBC"}})
    assert [(r["id"], r["text"], r["models"], r["near_duplicate_of"]) for r in rows] == [
        ("xsum-0000", "a b c", ["gpt2-xl", "opt-2.7b"], None),
        ("xsum-0001", "x y", ["gpt2-xl", "opt-2.7b"], ["xsum-0002"]),
        ("xsum-0002", "x y z w", ["gpt2-xl", "opt-2.7b"], ["xsum-0001"]),
        ("xsum-0003", "q r", ["opt-2.7b"], None),
    ]
    assert rows[0]["source"] == "BBC" and rows[0]["domain"] == "xsum"
    with pytest.raises(GenmetricsError, match=r"'xsum_gpt5' is not '<domain>_<model>'"):
        read("detectgpt_human", {**files, "xsum_gpt5": files["xsum_gpt2-xl"]}, {"sources": {}})


@pytest.fixture(scope="module")
def gpt2_bpe() -> Path:
    """GPT-2's gpt2.tiktoken (the pinned openai-whisper sdist from PyPI; skipped offline)."""
    from genmetrics.data.assets import gpt2_bpe_file

    try:
        return gpt2_bpe_file()
    except GenmetricsError as e:
        pytest.skip(f"GPT-2's BPE ranks are not at hand: {e}")


def test_detectgpt_prompts_follow_each_model_s_rule(gpt2_bpe):
    from genmetrics.data.upstream_detectgpt import _gpt2, _prompt

    enc = _gpt2(gpt2_bpe)
    human = " ".join(f"w{i}" for i in range(40))  # "w0 w1 ...": 2 tokens a word ("w", "0")

    def prompt(model, sample, domain="xsum", original=human):
        return _prompt(original, sample, domain, model, enc)

    assert prompt("gpt2-xl", human) == (" ".join(f"w{i}" for i in range(15)), "exact")
    assert prompt("opt-2.7b", human) == (" ".join(f"w{i}" for i in range(14)) + " w", "exact")
    # davinci: the 30 tokens without their last word; a text of 30 tokens or fewer is whole
    assert prompt("davinci", human) == (" ".join(f"w{i}" for i in range(14)), "exact")
    assert prompt("gpt-4", "w0 w1 w2 more", original="w0 w1 w2") == ("w0 w1 w2", "exact")
    # a sample that does not start with the exact prompt (NeoX: always) gets the shared prefix
    assert prompt("gpt-j-6B", "w0 w1 x") == ("w0 w1 ", "shared-prefix")
    assert prompt("gpt-neox-20b", human[:20] + "!") == (human[:20], "shared-prefix")
    q = "Question: Why? Answer: Because of w1. More"
    assert prompt("gpt-4", "Question: Why? Answer: It is.", "pubmed", q) == (
        "Question: Why? Answer:",
        "exact",
    )


@pytest.mark.parametrize(
    "model",
    ["gpt2-xl", "opt-2.7b", "gpt-neo-2.7B", "gpt-j-6B", "gpt-neox-20b", "davinci", "gpt-4"],
)
def test_detectgpt_samples_give_our_rows_for_the_same_upstream_records(model, gpt2_bpe):
    """The first 2 records of each upstream xsum file (all 8 models: the ids need them all)."""
    if not SHARED_DATA.exists():
        pytest.skip("needs ../shared/data (our copy of the study data) beside the checkout")
    from genmetrics.data.upstream_detectgpt import MODELS

    files = {f"xsum_{m}": DATA / f"fast-detect-gpt.xsum_{m}.head.json" for m in MODELS}
    ours = SHARED_DATA / "detectgpt_continuations" / f"xsum.{model}.jsonl"
    first = json.loads(ours.read_text(encoding="utf-8").split("\n", 1)[0])
    opts = {"domain": "xsum", "model": model, "decoding": first["decoding"]}
    rows = read("detectgpt_samples", {**files, "gpt2_bpe": gpt2_bpe}, opts)
    by_id = {json.loads(line)["id"]: json.loads(line) for line in ours.open(encoding="utf-8")}
    assert [r["id"] for r in rows] == [f"xsum-0000.{model}", f"xsum-0001.{model}"]
    for row in rows:
        assert rows_bytes([row]) == rows_bytes([by_id[row["id"]]]), row["id"]
    with pytest.raises(GenmetricsError, match="'gpt2_bpe' .* is required for xsum_gpt2-xl"):
        read("detectgpt_samples", files, {**opts, "model": "gpt2-xl"})


# ------------------------------------------------------------------ our copy, same upstream lines

#: (reader, files in tests/data/upstream, options, our file, how many leading rows to compare)
EXCERPTS = [
    (
        "python_list",
        {"source": "make_creative_writing_dataset.head.py"},
        {"variable": "writing_prompts", "id_prefix": "creative-"},
        "creative_prompts/prompts.jsonl",
        4,
    ),
    (
        "gpt2_samples",
        {"samples": "gpt-2-samples.unconditional.head.txt"},
        {
            "setting": "unconditional-t1",
            "id_prefix": "g2xl-unco-t1-",
            "model": "gpt2-1.5B",
            "decoding": "pure sampling (temperature 1, no truncation)",
        },
        "gpt2_generations/gpt2-1.5b_unconditional_t1.jsonl",
        2,
    ),
    (
        "webtext_jsonl",
        {"documents": "webtext.train.head.jsonl"},
        {"limit": 3, "id_prefix": "wt-train-"},
        "webtext/webtext_train_1407.jsonl",
        3,
    ),
    (
        "realsumm_pickles",
        {"abs": "realsumm.abs.doc0.pkl", "ext": "realsumm.ext.doc0.pkl"},
        {"output": "summaries"},
        "realsumm/summaries.jsonl",
        4,
    ),
    (
        "realsumm_pickles",
        {"abs": "realsumm.abs.doc0.pkl", "ext": "realsumm.ext.doc0.pkl"},
        {"output": "references"},
        "realsumm/references.jsonl",
        1,
    ),
    (
        "wikitext_raw",
        {"raw": "wiki.test.head.raw"},  # the first article, CRLF as upstream
        {"id_prefix": "wt2test-", "min_words": 40},
        "wikitext2_test/paragraphs.jsonl",
        6,
    ),
    (
        "agnews_csv",
        {"test": "ag_news.test.head.csv"},
        {"id_prefix": "agnews-test-"},
        "ag_news/test.jsonl",
        40,
    ),
    (
        "agnews_tsv",
        {"dev": "alps.agnews.dev.head.tsv", "test": "ag_news.test.head.csv"},
        {"id_prefix": "agnews-trainsample-"},
        "ag_news/train_sample.jsonl",
        30,
    ),
    (
        "alpaca_instructions",
        {"outputs": "alpaca_eval.llama-2-7b-chat-hf.head.json"},
        {},
        "alpaca_eval/instructions.jsonl",
        3,
    ),
    (
        "alpaca_outputs",
        {
            "outputs": "alpaca_eval.guanaco-7b.head.json",
            "instructions": "alpaca_eval.llama-2-7b-chat-hf.head.json",
        },
        {"decoding": "temperature 0.7, top_p 1.0"},
        "alpaca_eval/guanaco-7b.jsonl",
        3,
    ),
    (
        "xsum_hallucination",
        {
            "faithfulness": "xsum.hallucination_annotations.head.csv",
            "factuality": "xsum.factuality_annotations.head.csv",
            "scores": "xsum.eval_scores.head.csv",
        },  # the lines of two documents, 10138849 and 11154244
        {},
        "xsum_hallucination/summaries.jsonl",
        10,
    ),
    (
        "detectgpt_human",
        {  # the first 3 documents (and samples) of each upstream pubmed file
            f"pubmed_{m}": f"fast-detect-gpt.pubmed_{m}.head.json"
            for m in ("davinci", "gpt-3.5-turbo", "gpt-4")
        },
        {"sources": {"pubmed": "PubMedQA (question + long answer)"}},
        "detectgpt_continuations/human.jsonl",
        3,
    ),
]


@pytest.mark.parametrize(
    "reader,files,options,ours,n", EXCERPTS, ids=[f"{e[0]}:{e[3]}" for e in EXCERPTS]
)
def test_reader_gives_our_rows_for_the_same_upstream_lines(
    reader, files, options, ours, n, tmp_path
):
    if not SHARED_DATA.exists():
        pytest.skip("needs ../shared/data (our copy of the study data) beside the checkout")
    pickles = realsumm_excerpt_pickles(tmp_path)  # the pickle excerpts are kept as JSON
    written = {p.name: p for p in pickles.values()}
    rows = read(reader, {k: written.get(v, DATA / v) for k, v in files.items()}, options)
    assert len(rows) == n
    by_id = {}
    with open(SHARED_DATA / ours, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            by_id[row["id"]] = row
    for row in rows:
        assert rows_bytes([row]) == rows_bytes([by_id[row["id"]]]), row["id"]


# ------------------------------------------------------------------ downloads, mirror, dry run


def _gpt2_source(tmp_path: Path, rows_sha: str, rows: int = 2) -> dict:
    up = DATA / "gpt-2-samples.unconditional.head.txt"
    return {
        "kind": "upstream",
        "file": "gpt2_generations/head.jsonl",
        "rows": rows,
        "sha256": rows_sha,
        "upstream": {
            "repo": "openai/gpt-2",
            "commit": "a3aa7de9e11b1849eb029cd8b76cdfc71f3f1824",
            "files": {
                "samples": {
                    "url": up.as_uri(),
                    "path": "gpt-2-samples/unconditional.txt",
                    "sha256": hashlib.sha256(up.read_bytes()).hexdigest(),
                }
            },
            "reader": "gpt2_samples",
            "options": EXCERPTS[1][2],
        },
    }


def test_fetch_upstream_makes_the_recorded_rows_or_says_which_reader_differs(tmp_path):
    rows = read(
        "gpt2_samples", {"samples": DATA / "gpt-2-samples.unconditional.head.txt"}, EXCERPTS[1][2]
    )
    want = hashlib.sha256(rows_bytes(rows)).hexdigest()
    src = _gpt2_source(tmp_path, want)
    out = resolve_source(src, tmp_path / "cache", "datasets.g.source")
    assert out.read_bytes() == rows_bytes(rows) and out.name == "head.jsonl"
    assert [
        r["id"] for r in load_dataset("g", {"source": src, "format": "jsonl"}, tmp_path / "cache")
    ] == [
        "g2xl-unco-t1-001",
        "g2xl-unco-t1-002",
    ]
    with pytest.raises(
        GenmetricsError,
        match=r"datasets.g.source.sha256: the rows made from openai/gpt-2@a3aa7de9e11b gpt-2-samples/unconditional.txt have sha256 .* reader 'gpt2_samples'",
    ):
        fetch_upstream(_gpt2_source(tmp_path, "0" * 64), tmp_path / "cache2", "datasets.g.source")
    with pytest.raises(GenmetricsError, match=r"datasets.g.source.rows: .* has 2 rows, not the 3"):
        fetch_upstream(
            _gpt2_source(tmp_path, want, rows=3), tmp_path / "cache3", "datasets.g.source"
        )
    bad = _gpt2_source(tmp_path, want)
    bad["upstream"]["files"]["samples"]["sha256"] = "1" * 64
    with pytest.raises(
        GenmetricsError,
        match=r"upstream.files.samples.sha256: sha256 mismatch .*GENMETRICS_DATA_MIRROR",
    ):
        fetch_upstream(bad, tmp_path / "cache4", "datasets.g.source")


def test_fetch_upstream_runs_a_reader_of_several_files(tmp_path):
    """The AG News train sample's source as configs/agnews_pr.yaml has it (dev.tsv and
    test.csv), on the excerpts: each file is fetched and checked, the reader gets both."""
    up = {"dev": DATA / "alps.agnews.dev.head.tsv", "test": DATA / "ag_news.test.head.csv"}
    files = {
        k: {"url": v.as_uri(), "path": v.name, "sha256": hashlib.sha256(v.read_bytes()).hexdigest()}
        for k, v in up.items()
    }
    opts = {"id_prefix": "agnews-trainsample-"}
    rows = read("agnews_tsv", up, opts)
    src = {
        "kind": "upstream",
        "file": "ag_news/train_sample.jsonl",
        "rows": 30,
        "sha256": hashlib.sha256(rows_bytes(rows)).hexdigest(),
        "upstream": {"repo": "forest-snow/alps", "commit": "3c7ef2c9" * 5, "files": files},
    }
    src["upstream"] |= {"reader": "agnews_tsv", "options": opts}
    out = resolve_source(src, tmp_path / "cache", "models.q1.texts.source")
    assert out.read_bytes() == rows_bytes(rows)
    spec = {"source": src, "format": "jsonl", "label_fields": ["label_name"]}
    got = load_dataset("t", spec, tmp_path / "cache")
    assert [(r["id"], r["label_name"]) for r in got[:2]] == [
        ("agnews-trainsample-00000", "Sci/Tech"),
        ("agnews-trainsample-00001", "Sci/Tech"),
    ]


def test_the_mirror_copy_is_checked_by_sha256_and_rows(tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "gpt2_generations").mkdir(parents=True)
    copy = mirror / "gpt2_generations" / "head.jsonl"
    copy.write_text('{"id": "a", "text": "x"}\n{"id": "b", "text": "y"}\n')
    sha = hashlib.sha256(copy.read_bytes()).hexdigest()
    src = {**_gpt2_source(tmp_path, sha, rows=2), "mirror_path": str(copy)}
    rows = load_dataset("g", {"source": src, "format": "jsonl"}, tmp_path / "cache")
    assert [r["id"] for r in rows] == ["a", "b"]
    with pytest.raises(
        GenmetricsError, match=r"datasets.g.source.rows: .*head.jsonl has 2 rows, not the 5"
    ):
        load_dataset("g", {"source": {**src, "rows": 5}, "format": "jsonl"}, tmp_path / "cache")
    copy.write_text('{"id": "a", "text": "changed"}\n{"id": "b", "text": "y"}\n')
    with pytest.raises(
        GenmetricsError,
        match=rf"datasets.g.source.sha256: the data mirror's {copy} has sha256 \w+, not the {sha}",
    ):
        load_dataset("g", {"source": src, "format": "jsonl"}, tmp_path / "cache")


def _study(monkeypatch, mirror: Path | None) -> dict:
    monkeypatch.setenv("GENMETRICS_REPO", str(REPO))
    if mirror is None:
        monkeypatch.delenv("GENMETRICS_DATA_MIRROR", raising=False)
    else:
        monkeypatch.setenv("GENMETRICS_DATA_MIRROR", str(mirror))
    return config("configs/biographies.yaml")


def test_a_study_without_its_data_stops_the_plan_naming_dataset_upstream_and_mirror(
    monkeypatch, tmp_path
):
    cfg = _study(monkeypatch, None)
    plan = plan_of(cfg)  # a reader makes the rows: the job downloads the upstream
    assert any(
        n.startswith(
            "datasets.bios.source: wikitext2_test/paragraphs.jsonl downloaded from "
            "Tylogi/TyloQuant@7989d038b13c data/wikitext-2-raw/wiki.test.raw"
        )
        for n in plan.notes
    )
    del cfg["datasets"]["bios"]["source"]["upstream"]["reader"]  # an upstream without a reader
    with pytest.raises(GenmetricsError) as e:
        plan_of(cfg)
    msg = str(e.value)
    assert msg.startswith(
        "datasets.bios.source: wikitext2_test/paragraphs.jsonl needs the data mirror"
    )
    assert (
        "GENMETRICS_DATA_MIRROR" in msg
        and "Tylogi/TyloQuant@7989d038b13c data/wikitext-2-raw/wiki.test.raw" in msg
    )
    assert "\n" not in msg
    cfg = _study(monkeypatch, tmp_path / "empty-mirror")
    with pytest.raises(
        GenmetricsError,
        match=r"^datasets.bios.source: wikitext2_test/paragraphs.jsonl is not in the data mirror .*does not exist",
    ):
        plan_of(cfg)


def test_a_study_reads_the_mirror_and_records_it(monkeypatch, tmp_path):
    mirror = tmp_path / "mirror"
    (mirror / "wikitext2_test").mkdir(parents=True)
    cfg = _study(monkeypatch, mirror)
    src = cfg["datasets"]["bios"]["source"]
    (mirror / src["file"]).write_text("wrong bytes\n")
    with pytest.raises(
        GenmetricsError,
        match=r"datasets.bios.source.sha256: the data mirror's .*paragraphs.jsonl has sha256",
    ):
        plan_of(cfg)
    if not SHARED_DATA.exists():
        pytest.skip("needs ../shared/data for a mirror copy with the recorded sha256")
    plan = plan_of(_study(monkeypatch, SHARED_DATA))
    path = str(SHARED_DATA / src["file"])
    names = list(plan.datasets)  # bios and its few-shot variants
    assert names and all(plan.datasets[n].local_files == [path] for n in names)
    assert plan.dataset_spec(names[0])["source"]["mirror_path"] == path
    assert any(
        n.startswith("datasets.bios.source: wikitext2_test/paragraphs.jsonl from the data mirror")
        for n in plan.notes
    )


def test_every_study_source_names_a_pinned_upstream_with_digests():
    for path in sorted((REPO / "configs").glob("*.yaml")):
        text = path.read_text()
        settings = [line for line in text.splitlines() if not line.lstrip().startswith("#")]
        assert not any("shared/data" in line for line in settings), path.name
        cfg = yaml.safe_load(text)
        for name, d in (cfg.get("datasets") or {}).items():
            src = d["source"]
            if src["kind"] in ("pypi", "npm", "url", "hub"):
                continue
            assert src["kind"] == "upstream", (path.name, name)
            up = src["upstream"]
            assert len(up["commit"]) == 40 and up["files"], (path.name, name)
            assert all(f.get("sha256") for f in up["files"].values()), (path.name, name)
            if SHARED_DATA.exists():
                data = (SHARED_DATA / src["file"]).read_bytes()
                assert hashlib.sha256(data).hexdigest() == src["sha256"], (path.name, name)
                assert data.count(b"\n") == src["rows"], (path.name, name)


@pytest.mark.parametrize(
    "study,key,folder,upstream",
    [
        ("agreement", "agreement.sets.realsumm.path", "realsumm", "neulab/REALSumm@a5900e3e36c6"),
        (
            "omniinput_compare",
            "omniinput.classifiers.agnews-sports.train.path",
            "ag_news/train_sample.jsonl",
            "forest-snow/alps@3c7ef2c98249 data/agnews/dev.tsv",
        ),
    ],
)
def test_a_path_in_an_unset_mirror_stops_the_plan_naming_it_and_its_upstream(
    monkeypatch, tmp_path, study, key, folder, upstream
):
    """The shipped configs name upstream sources; a config that reads a mirror folder by
    path (here the study's own, that key set to the path) stops at plan time without one."""

    def with_path(cfg):
        *parents, last = key.split(".")[:-1]
        node = cfg
        for k in parents:
            node = node[k]
        node[last] = {"path": f"$GENMETRICS_DATA_MIRROR/{folder}"}
        if study == "agreement":
            node[last]["kind"] = "realsumm"
        return cfg

    monkeypatch.setenv("GENMETRICS_REPO", str(REPO))
    monkeypatch.delenv("GENMETRICS_DATA_MIRROR", raising=False)
    with pytest.raises(GenmetricsError) as e:
        plan_of(with_path(config(f"configs/{study}.yaml")))
    msg = str(e.value)
    assert msg.startswith(f"{key}: {folder} needs the data mirror (the GENMETRICS_DATA_MIRROR ")
    assert "config key data_mirror" in msg and f"made from {upstream}" in msg and "\n" not in msg
    # the config's data_mirror takes the variable's place: the error is then a missing file
    # (REALSumm's, the first of the set's upstream sources checked in the mirror)
    cfg = with_path(config(f"configs/{study}.yaml"))
    cfg["data_mirror"] = str(tmp_path / "mirror")
    with pytest.raises(GenmetricsError, match=rf"{tmp_path}/mirror/"):
        plan_of(cfg)


def test_what_a_config_needs_from_the_mirror():
    from genmetrics.data.mirror import mirror_needs

    def load(name):
        return yaml.safe_load((REPO / "configs" / name).read_text())

    for name in (
        "biographies.yaml",
        "agnews_pr.yaml",
        "instruction_diversity.yaml",
        "summary_diversity.yaml",
        "face_scaling.yaml",
        "omniinput_compare.yaml",
        "agreement.yaml",
    ):
        assert mirror_needs(load(name)) == [], name
    cfg = {
        "note": "# ../shared/data in a comment is no need",
        "datasets": {
            "a": {"source": {"kind": "upstream", "upstream": {"reader": "wikitext_raw"}}},
            "b": {"source": {"kind": "upstream", "upstream": {"reader": "no_such_reader"}}},
            "c": {"source": {"kind": "pypi"}},
        },
        "models": {"m": {"texts": {"source": {"kind": "upstream", "upstream": {}}}}},
        "x": [{"path": "${GENMETRICS_DATA_MIRROR}/hanna"}],
    }
    assert mirror_needs(cfg) == ["datasets.b.source", "models.m.texts.source", "x[0].path"]


def test_face_scaling_plans_every_download_with_the_dataset_in_the_reader_options(monkeypatch):
    monkeypatch.setenv("GENMETRICS_REPO", str(REPO))
    monkeypatch.delenv("GENMETRICS_DATA_MIRROR", raising=False)
    plan = plan_of(config("configs/face_scaling.yaml"))
    src = plan.models["gpt-j-6B"].texts_for("writing")["source"]
    assert src["file"] == "detectgpt_continuations/writing.gpt-j-6B.jsonl"
    assert src["upstream"]["options"]["domain"] == "writing"  # "{dataset}" filled in
    assert src["sha256"] == "8d5ca2ad403eb6b705c93ca8f8e2a19bdfd762457881a24dad16860d0e095bf8"
    assert len(src["upstream"]["files"]) == 25  # every domain's file, and GPT-2's BPE
    assert any(
        n.startswith("models.gpt-4.texts.source (dataset pubmed): detectgpt_continuations/")
        and "downloaded from baoguangsheng/fast-detect-gpt" in n
        for n in plan.notes
    )


def test_omniinput_classifier_texts_come_from_ag_news_upstream_or_the_mirror(monkeypatch, tmp_path):
    """configs/omniinput_compare.yaml plans without the data mirror (its classifier's AG News
    train and test rows are made by the job from their upstream), and the job's paths are the
    rows made from the (here file://) upstream, or the mirror's copy when one is set."""

    def sha(path):
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()

    monkeypatch.setenv("GENMETRICS_REPO", str(REPO))
    monkeypatch.delenv("GENMETRICS_DATA_MIRROR", raising=False)
    plan = plan_of(config("configs/omniinput_compare.yaml"))
    s = plan.omniinput.classifier_settings("agnews-sports")
    assert s["train"]["source"]["upstream"]["reader"] == "agnews_tsv"
    assert s["heldout"]["source"]["file"] == "ag_news/test.jsonl"
    assert "mirror_path" not in s["train"]["source"] and s["cache"].endswith(".cache/genmetrics")
    assert any(
        n.startswith("omniinput.classifiers.agnews-sports.heldout.source: ag_news/test.jsonl ")
        and "downloaded from suuuch/TransformerClassification@0d9808e1978c" in n
        for n in plan.notes
    )
    # the job: the upstream files (the excerpts, as file:// URLs) made into the rows
    from genmetrics.studies.omniinput_compare.jobs import labelled_paths

    test = DATA / "ag_news.test.head.csv"
    rows = read("agnews_csv", {"test": test}, {"id_prefix": "agnews-test-"})
    src = {
        **s["heldout"]["source"],
        "rows": len(rows),
        "sha256": hashlib.sha256(rows_bytes(rows)).hexdigest(),
    }
    src["upstream"] = {
        **src["upstream"],
        "files": {"test": {"url": test.as_uri(), "sha256": sha(test)}},
    }
    job = {**s, "train": {"path": "t.jsonl"}, "heldout": {"source": src}}
    got = labelled_paths({**job, "cache": str(tmp_path / "c")})
    assert got["train"] == {"path": "t.jsonl"}
    assert Path(got["heldout"]["path"]).read_bytes() == rows_bytes(rows)
    # with a mirror: its checked copy is the path
    (tmp_path / "m" / "ag_news").mkdir(parents=True)
    (tmp_path / "m" / "ag_news" / "test.jsonl").write_bytes(rows_bytes(rows))
    mirrored = {**src, "mirror_path": str(tmp_path / "m" / "ag_news" / "test.jsonl")}
    got = labelled_paths({"train": {"path": "t.jsonl"}, "heldout": {"source": mirrored}})
    assert got["heldout"]["path"] == mirrored["mirror_path"] and got["train"]["path"] == "t.jsonl"
    if SHARED_DATA.exists():  # the recorded rows are our copy's
        for part in ("train", "heldout"):
            f = SHARED_DATA / s[part]["source"]["file"]
            assert sha(f) == s[part]["source"]["sha256"], part


def test_contrastive_search_ab_gives_our_rows_for_the_same_upstream_items(tmp_path):
    """Items 0, 1, 50 and 100 of the upstream annotations (book, book, wikinews, wikitext):
    ids count per upstream domain, wikitext is our wikitext103, the annotators' sentences are
    a/b/tie with their counts; each row is our copy's row of that id, byte for byte."""
    path = DATA / "contrastive_search.human_ab.excerpt.json"
    rows = read("contrastive_search_ab", {"annotations": path}, {})
    assert [r["id"] for r in rows] == [
        "csab-book-00",
        "csab-book-01",
        "csab-wikinews-00",
        "csab-wikitext-00",
    ]
    assert rows[3]["domain"] == "wikitext103" and rows[0]["system_a"] == "contrastive_decoding"
    assert rows[0]["annotations"] == {
        "annotator_1": "a",
        "annotator_2": "b",
        "annotator_3": "tie",
        "annotator_4": "b",
    }
    assert rows[0]["votes"] == {"a": 1, "b": 2, "tie": 1}
    if SHARED_DATA.exists():
        ours = SHARED_DATA / "contrastive_search" / "human_ab.jsonl"
        by_id = {json.loads(line)["id"]: line for line in ours.open(encoding="utf-8")}
        for row in rows:
            assert rows_bytes([row]).decode("utf-8") == by_id[row["id"]], row["id"]
    bad = json.loads(path.read_text(encoding="utf-8"))
    bad[1]["human_annotation"]["annotator_2"] = "both are bad."
    (tmp_path / "bad.json").write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(
        GenmetricsError, match=r"bad.json: item 1: no key or choice 'both are bad.'"
    ):
        read("contrastive_search_ab", {"annotations": tmp_path / "bad.json"}, {})


def test_rankgen_ab_gives_our_items_and_judgments_for_the_same_upstream_rows(tmp_path):
    """The first 6 rows (2 HITs) of each upstream CSV: items by HIT in order, the systems of
    Input.Order, the preferred text from the reason (also "text 1."); our rows byte for
    byte (the judgments' running number counts over both files: 309 GPT-2 rows first)."""
    files = {m: DATA / f"rankgen.{m}.head.csv" for m in ("gpt2_medium", "t5_xxl_c4")}
    items = read("rankgen_ab", files, {"output": "items"})
    judgments = read("rankgen_ab", files, {"output": "judgments"})
    assert [r["id"] for r in items] == [
        "rankgen-gpt2m-000",
        "rankgen-gpt2m-001",
        "rankgen-t5xxl-000",
        "rankgen-t5xxl-001",
    ]
    assert [(r["system_1"], r["system_2"]) for r in items[:2]] == [
        ("rankgen-beam", "nucleus"),
        ("nucleus", "rankgen-beam"),
    ]
    assert [r["preferred"] for r in judgments[:6]] == [1, 2, 2, 2, 2, 2]
    assert judgments[3]["preferred_system"] == "rankgen-beam"  # Text 2 of nucleus,beam
    assert judgments[6]["id"] == "rankgen-t5xxl-000.Writer1.0006"
    if SHARED_DATA.exists():
        folder = SHARED_DATA / "rankgen_ab"
        ours = {json.loads(x)["id"]: x for x in (folder / "items.jsonl").open(encoding="utf-8")}
        for row in items:
            assert rows_bytes([row]).decode("utf-8") == ours[row["id"]], row["id"]
        ours_j = (folder / "judgments.jsonl").read_text(encoding="utf-8").splitlines()
        for n, row in enumerate(judgments):
            k = n if n < 6 else n - 6 + 309
            row["id"] = row["id"][:-4] + f"{k:04d}"
            assert rows_bytes([row]).decode("utf-8") == ours_j[k] + "\n", row["id"]
    bad = files["t5_xxl_c4"].read_text(encoding="utf-8").replace(",Text 1", ",I pick 1", 1)
    (tmp_path / "t5.csv").write_text(bad, encoding="utf-8")
    with pytest.raises(GenmetricsError, match=r"t5.csv: line \d+: the reason does not start"):
        read("rankgen_ab", {**files, "t5_xxl_c4": tmp_path / "t5.csv"}, {"output": "items"})


def test_hanna_scores_give_our_rows_written_compact():
    """The Human and BertGeneration rows of the upstream table, 2 stories each: a row per
    story (system blocks of ``prompts``), the criteria means, the 3 raters, the 72 metrics
    without their category mark, no Human Avg or LLM-judge column; our rows byte for byte
    in the compact JSON our copy uses (story ids there count blocks of 96)."""
    from genmetrics.data.upstream import COMPACT_READERS

    path = DATA / "hanna.metric_scores_llm.excerpt.csv"
    rows = read("hanna_scores", {"scores": path}, {"prompts": 2})
    assert [(r["id"], r["system"], r["prompt_id"]) for r in rows] == [
        ("hanna-s0000", "Human", "hanna-p00"),
        ("hanna-s0001", "Human", "hanna-p01"),
        ("hanna-s0002", "BertGeneration", "hanna-p00"),
        ("hanna-s0003", "BertGeneration", "hanna-p01"),
    ]
    assert [r["text_available"] for r in rows] == [True, True, False, False]
    assert rows[0]["human_raters"]["RE"] == [4, 5, 2] and len(rows[0]["metrics"]) == 72
    assert rows[0]["metrics"]["BLEU"] == 100.0 and "Beluga-13B RE 1" not in rows[0]["metrics"]
    assert "hanna_scores" in COMPACT_READERS
    assert rows_bytes(rows[:1], compact=True).startswith(b'{"id":"hanna-s0000","story_id":0,')
    if SHARED_DATA.exists():
        ours = (SHARED_DATA / "hanna" / "scores.jsonl").read_bytes().splitlines(keepends=True)
        for row in rows:
            story = 96 * (row["story_id"] // 2) + row["story_id"] % 2
            row |= {"id": f"hanna-s{story:04d}", "story_id": story}
            assert rows_bytes([row], compact=True) == ours[story], row["id"]
    with pytest.raises(GenmetricsError, match=r"Relevance is not a list of 3$"):
        read("hanna_scores", {"scores": path}, {"prompts": 3})


def test_face_demo_samples_keep_each_line_stripped_with_its_line_as_id(tmp_path, gpt2_bpe):
    """FACE's demo draw: a line's id is its line number, lines 0–499 are the test split and
    500– valid, an empty or bare "." line is left out, the text is stripped and its GPT-2 BPE
    count is recorded."""
    from genmetrics.data.upstream_detectgpt import _gpt2

    enc = _gpt2(gpt2_bpe)
    lines = ["  Two words ", "", ".", *[f"text {i}" for i in range(3, 500)], " Last one."]
    (tmp_path / "demo_model.txt").write_text("\n".join(lines), encoding="utf-8")
    files = {"samples": tmp_path / "demo_model.txt", "gpt2_bpe": gpt2_bpe}
    opts = {"model": "gpt2-small-117M", "decoding": "pure sampling"}
    rows = read("face_demo_samples", files, opts)
    assert len(rows) == len(lines) - 2
    assert rows[0] == {
        "id": "g2s-face-0000",
        "model": "gpt2-small-117M",
        "decoding": "pure sampling",
        "split": "test",
        "text": "Two words",
        "n_tokens_gpt2": len(enc.encode("Two words")),
    }
    assert rows[1]["id"] == "g2s-face-0003"  # lines 1 and 2 ("" and ".") left out
    assert (rows[-1]["id"], rows[-1]["split"], rows[-1]["text"]) == (
        "g2s-face-0500",
        "valid",
        "Last one.",
    )
    with pytest.raises(GenmetricsError, match="needs exactly samples, gpt2_bpe"):
        read("face_demo_samples", {"samples": files["samples"]}, opts)


def test_face_demo_samples_give_our_rows_for_the_same_upstream_lines(gpt2_bpe):
    """The first 6 lines of FACE's data/demo_model.txt (at the pinned commit) give our copy's
    rows byte for byte."""
    if not SHARED_DATA.exists():
        pytest.skip("needs ../shared/data (our copy of the study data) beside the checkout")
    ours = SHARED_DATA / "gpt2_generations" / "gpt2-small_pure_face.jsonl"
    by_id = {json.loads(line)["id"]: json.loads(line) for line in ours.open(encoding="utf-8")}
    files = {"samples": DATA / "face.demo_model.head.txt", "gpt2_bpe": gpt2_bpe}
    first = by_id["g2s-face-0000"]
    opts = {"model": first["model"], "decoding": first["decoding"]}
    rows = read("face_demo_samples", files, opts)
    assert [r["id"] for r in rows] == [f"g2s-face-{i:04d}" for i in range(6)]
    for row in rows:
        assert rows_bytes([row]) == rows_bytes([by_id[row["id"]]]), row["id"]
