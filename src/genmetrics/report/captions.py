"""The captions of the figures, one source for both reports.

Each figure's caption is a reStructuredText file in ``workflow/report/`` that its rule's
``report(...)`` flag names (``snakemake --report`` renders it beside the figure); the one-page
summary (:mod:`genmetrics.report.html`) renders the same file under the same figure.
:data:`CAPTIONS` says which file describes which figure (``tests/test_report.py`` checks it
against the ``report(...)`` flags of ``rules/*.smk``).

Conventions of :func:`caption_html`:

* Snakemake renders a caption with Jinja first; the one template a caption may hold is an
  include of a rule's output, ``.. include:: {{ snakemake.output.<name> }}``: the one-page
  page draws that table itself, so the directive is dropped (``drop_includes``); any other
  Jinja is an error naming the caption file;
* docutils warnings stop the rendering (an unescaped ``|x|``, a broken directive): the error
  names the caption file; raw HTML and file inclusion are off.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from genmetrics import GenmetricsError
from genmetrics.paths import RESULTS, inside_workdir


@dataclass(frozen=True)
class Caption:
    """A figure's title on the one-page summary and its caption file in ``workflow/report``."""

    file: str
    title: str


#: figure path pattern -> its caption (every figure whose rules name one caption; the
#: agreement figure has one per kind of judgment set and is not on the one-page summary)
CAPTIONS: dict[str, Caption] = {
    RESULTS.correlation_figure: Caption("heatmap.rst", "How the metrics move together"),
    RESULTS.pr_figure: Caption("pr_scatter.rst", "The precision–recall plane"),
    RESULTS.pr_curves_figure: Caption("pr_curves.rst", "Precision–recall curves (PRD)"),
    RESULTS.spectra_figure: Caption("spectra.rst", "Surprisal spectra (FACE)"),
    RESULTS.scaling_figure: Caption("scaling.rst", "Valid-cell ratio (FACE-2)"),
    RESULTS.scaling_spectra_figure: Caption(
        "scaling_spectra.rst", "Surprisal spectra per model size (FACE-2)"
    ),
    RESULTS.length_figure: Caption("length.rst", "Which scores follow text length"),
    RESULTS.sweep_figure: Caption("pr_sweep.rst", "Precision and recall against N and k"),
    RESULTS.mauve_bars_figure: Caption("mauve_bars.rst", "MAUVE per model"),
    RESULTS.few_shot_figure: Caption(
        "few_shot.rst", "Precision and recall against the number of in-context examples"
    ),
    RESULTS.featurizer_robustness_figure: Caption(
        "featurizer_robustness.rst", "How stable the models' ranking is across featurizers"
    ),
    RESULTS.paired_figure: Caption("paired.rst", "Which model is better: paired differences"),
    RESULTS.omni_toy_figure: Caption("omniinput_toy.rst", "OmniInput toy validation"),
    RESULTS.omni_figure: Caption("omniinput_runs.rst", "OmniInput precision–recall curves"),
    RESULTS.omni_compare_figure: Caption("omniinput_compare.rst", "OmniInput model comparison"),
}
#: the caption of the headline score table (the one-page summary's introduction to its scores)
HEADLINE_CAPTION = "headline.rst"

_INCLUDE = re.compile(
    r"^\.\. include:: *\{\{ *snakemake\.output\.\w+ *\}\}[ \t]*\n(?:[ \t]+:\w+:.*\n?)*", re.M
)


def _dropped_includes(text: str) -> str:
    """``text`` without its includes of a rule's output (the page draws that table itself, or
    the Snakemake report shows it); a sentence that announced one with a closing colon ends
    instead by saying where the table is, so that no caption ends on ``…:`` and nothing."""
    out = []
    pos = 0
    for m in _INCLUDE.finditer(text):
        before = text[pos : m.start()].rstrip()
        if before.endswith(":"):
            before = before[:-1] + " (shown in the Snakemake report)."
        out.append(before + "\n\n")
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    """``results/figures/omniinput_compare_{comparison}.png`` → a regex matching the end of a
    path under any results folder (``results_dir``: the default root is dropped, so
    ``results/webtext/figures/...`` matches too; wildcards: one or more characters other
    than ``/``)."""
    pattern = pattern.removeprefix(RESULTS.root + "/")
    parts = re.split(r"\{\w+\}", pattern)
    return re.compile(r"(?:^|/)" + "[^/]+".join(map(re.escape, parts)) + "$")


def caption_of(figure: str | Path) -> Caption:
    """The caption of a figure file (a path that ends in one of :data:`CAPTIONS`' patterns)."""
    path = Path(figure).as_posix()
    for pattern, caption in CAPTIONS.items():
        if _pattern_regex(pattern).search(path):
            return caption
    raise GenmetricsError(
        f"{figure}: no caption names this figure (genmetrics.report.captions.CAPTIONS lists each "
        "figure's workflow/report/*.rst)"
    )


def caption_files(workflow_dir: str | Path) -> list[str]:
    """Every caption file the one-page summary may show (the figures' and the headline
    table's), under the workflow's folder (``workflow.basedir``): inputs of the
    ``html_report`` rule, so that editing a caption rebuilds the page. Paths inside the
    working folder are relative to it (:func:`genmetrics.paths.inside_workdir`)."""
    folder = Path(workflow_dir).resolve() / "workflow" / "report"
    names = sorted({c.file for c in CAPTIONS.values()} | {HEADLINE_CAPTION})
    return [inside_workdir(str(folder / name)) for name in names]


def find_caption(name: str, files: Sequence[str | Path]) -> Path:
    """The file called ``name`` among the caption ``files`` (the rule's inputs)."""
    for f in files:
        if Path(f).name == name:
            return Path(f)
    given = ", ".join(sorted(Path(f).name for f in files)) or "none"
    raise GenmetricsError(f"caption {name} is not among the caption files given ({given})")


def caption_html(path: str | Path, drop_includes: bool = True) -> str:
    """The caption file ``path`` (reStructuredText) as an HTML fragment (docutils' body)."""
    from docutils.core import publish_parts
    from docutils.utils import SystemMessage

    text = Path(path).read_text(encoding="utf-8")
    if drop_includes:
        text = _dropped_includes(text)
    if "{{" in text or "{%" in text:
        raise GenmetricsError(
            f"{path}: a Jinja template other than `.. include:: {{{{ snakemake.output.<name> }}}}`"
            " (the one-page summary renders captions without Snakemake)"
        )
    settings = {
        "halt_level": 2,  # warnings stop
        "report_level": 5,  # no system messages in the page
        "file_insertion_enabled": False,
        "raw_enabled": False,
        "input_encoding": "utf-8",
        "output_encoding": "unicode",
    }
    try:
        parts = publish_parts(
            text, source_path=str(path), writer="html", settings_overrides=settings
        )
    except SystemMessage as e:
        raise GenmetricsError(f"{path}: the caption does not render: {e}") from None
    return parts["body"].strip()
