"""The headline score table (genmetrics.analysis.headline): means and stds against pandas,
directions, headlines, families and scales from the registry, the references row, family
order, one seed without "±", the markdown and the HTML report built from it."""

from __future__ import annotations

import html

import numpy as np
import pandas as pd
import pytest

from genmetrics.analysis.aggregate import COLUMNS
from genmetrics.analysis.headline import (
    CLOSER,
    LEGEND_ITEMS,
    LONG_COLUMNS,
    N_REFERENCES,
    N_TEXTS,
    OTHER,
    headline_markdown,
    headline_scores,
    headline_table,
)
from genmetrics.analysis.units import CONVENTION
from genmetrics.metrics.registry import FAMILIES, SCALES, get

#: the families of the test table, in the registry's order
SHOWN = [f for f in FAMILIES if f != OTHER]

# (metric, value name) scored per model seed; "references" scored on the reference-free ones
MODEL_VALUES = [
    ("mauve", "mauve"),  # quality/diversity, first value: mauve ↑
    ("mauve", "frontier_integral"),  # directed, but not the first
    ("mauve", "mean_words"),
    ("self_bleu", "self_bleu"),  # diversity ↓
    ("self_bleu", "mean_words"),
    ("ttr", "ttr"),  # lexical ↑
    ("ttr", "ttr_std"),  # no direction
    ("perplexity", "perplexity"),  # surprisal ↓
    ("zipf", "zipf"),  # no directed value at all
    ("zipf", "zipf_slope"),
    ("coherence", "coherence"),  # coherence ↑
    ("bleu", "bleu"),  # reference ↑
    ("precision_recall", "precision"),  # quality/diversity ↑
    ("precision_recall", "recall"),
]
REFERENCE_FREE = {"self_bleu", "ttr", "perplexity", "zipf"}


def tidy(seeds: dict[str, int], seed: int = 0) -> pd.DataFrame:
    """A tidy scores table: each model scored on every value for ``seeds[model]`` seeds, the
    references (no seed) on the reference-free metrics; random values."""
    rng = np.random.default_rng(seed)
    rows = []
    for model, n in seeds.items():
        for s in range(n):
            for metric, name in MODEL_VALUES:
                ref = "references" if get(metric).reference != "none" else None
                rows.append(["news", model, s, ref, metric, metric, name, rng.normal()])
    for metric, name in MODEL_VALUES:
        if metric in REFERENCE_FREE:
            rows.append(["news", "references", None, None, metric, metric, name, rng.normal()])
    df = pd.DataFrame(rows, columns=COLUMNS)
    df["seed"] = df["seed"].astype("Int64")
    return df


@pytest.fixture
def scores() -> pd.DataFrame:
    return tidy({"big": 2, "small": 2})


def values_only(columns) -> list:
    """The value columns of a wide table (without each family's text sizes)."""
    return [c for c in columns if (c[-1] if isinstance(c, tuple) else c) not in SIZES]


SIZES = (N_TEXTS, N_REFERENCES)


def test_mean_and_std_equal_pandas(scores):
    long = headline_scores(scores)
    assert list(long.columns) == LONG_COLUMNS
    models = scores[scores.model != "references"]
    direct = models.groupby(["model", "entry", "name"])["value"].agg(["mean", "std", "count"])
    factor = [get(e).table_scale(n)[1] for _, e, n in direct.index]  # bleu: 0–100 → 0–1
    direct[["mean", "std"]] = direct[["mean", "std"]].mul(factor, axis=0)
    got = long.set_index(["model", "entry", "value_name"])
    for key in [("big", "mauve", "mauve"), ("small", "self_bleu", "self_bleu")]:
        assert got.loc[key, "mean"] == pytest.approx(direct.loc[key, "mean"], rel=1e-12)
        assert got.loc[key, "std"] == pytest.approx(direct.loc[key, "std"], rel=1e-12)
        assert got.loc[key, "n_seeds"] == 2
    # every long row agrees, and the cell shows that mean ± std
    for r in long[long.model != "references"].itertuples():
        d = direct.loc[(r.model, r.entry, r.value_name)]
        assert (r.mean, r.std) == pytest.approx((d["mean"], d["std"]), rel=1e-12)
    table = headline_table(scores)
    m, s = direct.loc[("big", "ttr", "ttr"), ["mean", "std"]]
    assert table.loc[("news", "big"), ("lexical", "ttr ↑ (0–1)")] == f"{m:.4g} ± {s:.2g}"
    # three seeds: the mean is not the median
    three = tidy({"big": 3}, seed=1)
    values = three[(three.model == "big") & (three.name == "mauve")]["value"]
    got = headline_scores(three).set_index(["model", "value_name"]).loc[("big", "mauve")]
    assert got["mean"] == pytest.approx(values.mean(), rel=1e-12) != values.median()
    assert got["std"] == pytest.approx(values.std(), rel=1e-12) and got["n_seeds"] == 3


def test_directions_and_arrows_come_from_the_registry(scores):
    long = headline_scores(scores).drop_duplicates("entry").set_index("entry")
    for entry in ("self_bleu", "mauve", "ttr", "coherence", "bleu"):
        metric = get(entry)
        assert long.loc[entry, "direction"] == next(d for d in metric.values.values() if d)
    # a likelihood of one set of texts: best is the human texts' value, not the lowest
    assert long.loc["perplexity", "direction"] == CLOSER
    assert long.loc["self_bleu", "direction"] == "lower"
    assert long.loc["mauve", "direction"] == "higher"
    columns = list(headline_table(scores).columns)
    assert ("diversity", "self_bleu ↓ (0–1)") in columns
    assert ("quality/diversity", "mauve ↑ (0–1)") in columns
    assert ("surprisal", "perplexity ≈ (≥ 1)") in columns
    assert ("quality/diversity", "precision_recall: precision ↑ (0–1)") in columns


def test_headline_is_the_first_directed_value_or_the_pair(scores):
    long = headline_scores(scores)
    names = set(long["value_name"])
    want = {"mauve", "self_bleu", "ttr", "perplexity", "coherence", "bleu", "precision", "recall"}
    assert names == want  # kNN precision and recall: the pair (quality, diversity)
    assert "mean_words" not in names and "ttr_std" not in names  # no direction
    assert "frontier_integral" not in names  # not the first of mauve's values
    assert "zipf" not in set(long["entry"])  # no directed value: no column
    assert len(values_only(headline_table(scores).columns)) == len(names)


def test_references_row_only_where_references_were_scored(scores):
    table = headline_table(scores)
    assert ("news", "references") in table.index
    refs = table.loc[("news", "references")]
    scored = {c for c in values_only(table.columns) if pd.notna(refs[c])}
    assert scored == {
        ("diversity", "self_bleu ↓ (0–1)"),
        ("lexical", "ttr ↑ (0–1)"),
        ("surprisal", "perplexity ≈ (≥ 1)"),
    }
    assert "±" not in refs[("diversity", "self_bleu ↓ (0–1)")]  # one text set, no seeds
    assert list(table.index.get_level_values("model")) == ["big", "small", "references"]
    # references scored only on values without a direction (Zipf): no row at all
    no_headline = scores[(scores.model != "references") | (scores.metric == "zipf")]
    assert (no_headline.model == "references").any()
    assert ("news", "references") not in headline_table(no_headline).index


def test_families_in_documented_order(scores):
    families = list(dict.fromkeys(headline_table(scores).columns.get_level_values(0)))
    assert families == [f for f in FAMILIES if f in families]
    assert families == [
        "quality/diversity",
        "diversity",
        "lexical",
        "reference",
        "surprisal",
        "coherence",
    ]
    # within a family: by metric name, a pair in its registered order (precision, recall)
    qd = list(headline_table(scores)["quality/diversity"].columns)
    assert qd == [
        N_TEXTS,
        N_REFERENCES,
        "mauve ↑ (0–1)",
        "precision_recall: precision ↑ (0–1)",
        "precision_recall: recall ↑ (0–1)",
    ]


def test_one_seed_has_no_plus_minus():
    df = tidy({"big": 2, "single": 1})
    table = headline_table(df)
    single = table.loc[("news", "single"), values_only(table.columns)].dropna()
    big = table.loc[("news", "big"), values_only(table.columns)].dropna()
    assert len(single) == len(big) == 8
    assert not any("±" in v for v in single) and all("±" in v for v in big)
    long = headline_scores(df)
    one = long[long.model == "single"]
    assert (one.n_seeds == 1).all() and one["std"].isna().all()
    value = df[(df.model == "single") & (df.name == "mauve")]["value"].item()
    assert table.loc[("news", "single"), ("quality/diversity", "mauve ↑ (0–1)")] == f"{value:.4g}"


def test_unregistered_metric_keeps_every_value_under_other_without_arrow(scores):
    extra = scores.iloc[:2].copy()
    extra[["metric", "entry"]] = "retired_metric"
    extra["name"] = ["alpha", "mean_words"]
    long = headline_scores(pd.concat([scores, extra]))
    other = long[long.family == OTHER]
    assert list(other.value_name) == ["alpha"] and other.direction.isna().all()
    columns = list(headline_table(pd.concat([scores, extra])).columns)
    assert columns[-1] == (OTHER, "retired_metric: alpha")


def test_markdown_has_legend_and_one_table_per_family(scores):
    md = headline_markdown(headline_table(scores))
    assert all(f"- {item}\n" in md for item in LEGEND_ITEMS) and "[scores.csv](scores.csv)" in md
    headings = [line[3:] for line in md.splitlines() if line.startswith("## ")]
    assert headings == SHOWN
    # the references have no quality/diversity score: no row in that table
    qd = md.split("## quality/diversity")[1].split("## ")[0]
    assert "| news | references |" not in qd and "| news | big |" in qd
    assert "| news | references |" in md.split("## lexical")[1].split("## ")[0]


def test_html_report_shows_the_headline_tables_and_links_the_full_table(scores, tmp_path):
    from genmetrics.report.html import write_html_report

    scores.to_csv(tmp_path / "scores.csv", index=False)
    out = tmp_path / "report.html"
    write_html_report(out, tmp_path / "scores.csv", figures=[])
    page = out.read_text(encoding="utf-8")
    assert "href='scores.csv'" in page and "the full table" in page
    assert page.count("<table") == len(SHOWN)
    assert "self_bleu ↓ (0–1)" in page and "mauve ↑ (0–1)" in page and "±" in page
    assert html.escape(CONVENTION) in page and "Divided by 100 in this table: bleu." in page
    assert "None" not in page  # an unscored cell is "–"
    assert N_TEXTS in page and N_REFERENCES in page  # the text sizes, per family
    assert "mauve.mean_words" not in page and "ttr_std" not in page  # no longer the pivot


def test_header_names_the_value_only_where_the_metric_has_several(scores):
    extra = scores[(scores.metric == "self_bleu") & (scores.name == "self_bleu")].copy()
    extra["entry"] = "self_bleu_n3"  # a second entry of a metric with one directed value
    columns = list(headline_table(pd.concat([scores, extra]))["diversity"].columns)
    assert columns == [N_TEXTS, "self_bleu ↓ (0–1)", "self_bleu_n3 ↓ (0–1)"]
    qd = list(headline_table(scores)["quality/diversity"].columns)
    assert "precision_recall: precision ↑ (0–1)" in qd  # it has four directed values


def test_headers_and_legend_show_each_values_scale_on_the_tables_convention(scores):
    long = headline_scores(scores).drop_duplicates(["entry", "value_name"])
    for r in long.itertuples():
        registered = get(r.metric).scale(r.value_name)
        want = "0–1" if registered in ("%", "0–100") else registered
        assert r.scale == want, (r.metric, r.value_name)
    columns = list(headline_table(scores).columns)
    assert ("reference", "bleu ↑ (0–1)") in columns  # sacrebleu's 0–100, divided by 100
    assert ("coherence", "coherence ↑ (−1–1)") in columns  # a cosine
    md = headline_markdown(headline_table(scores))
    assert f"(0–1) {SCALES['0–1']}" in md and f"(≥ 1) {SCALES['≥ 1']}" in md
    assert "(%)" not in md and "(0–100)" not in md  # no proportion on another scale
    assert "Divided by 100 in this table: bleu." in md  # stated once, in the legend


def test_a_column_where_every_model_sits_at_a_bound_is_flagged_saturated():
    """Precision 1.0 (and 0.995) for both models: every model within 0.01 of 1, the bound of
    its 0–1 scale, so each model's precision carries the saturation line, appended to its own
    warnings; MAUVE (random values) and the human texts' rows are not flagged. The
    ``warnings`` column as read back from scores.csv: NaN where a record warned of nothing."""
    df = tidy({"big": 2, "small": 2})
    precision = df["name"] == "precision"
    df.loc[precision, "value"] = [1.0, 0.995, 1.0, 1.0]
    df["warnings"] = pd.Series(np.nan, index=df.index, dtype=object)
    first = df.index[precision & (df["model"] == "big")][0]
    df.loc[first, "warnings"] = "zero k-NN radii"
    long = headline_scores(df).set_index(["model", "value_name"])
    for model in ("big", "small"):
        lines = long.loc[(model, "precision"), "warnings"].split(" | ")
        assert lines[-1].startswith("saturated: every model within 0.01 of 1"), lines
    assert "zero k-NN radii" in long.loc[("big", "precision"), "warnings"]
    flagged = long["warnings"].fillna("").str.contains("saturated:")
    assert set(long.index[flagged]) == {("big", "precision"), ("small", "precision")}
