"""Every code block of the README and the documentation pages runs as written.

``bash`` blocks are run by tests/test_readme_commands.py (each command the cheapest way that
still runs it as written); this file runs each ``python`` block as a script, offline, in a
folder laid out as the checkout with short copies of ``examples/``, and checks that every
block is either run or says on the line before it why not
(``<!-- docs-test: skip (reason) -->``)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from test_readme_commands import (
    DOCS,
    README,
    REPO,
    _project_with_short_examples,
    code_blocks,
    documented_text,
)

#: fenced blocks that are shown, not run: output, a config fragment, a file tree
SHOWN = {"", "yaml", "text", "console"}
RUN = {"bash", "python"}


def python_blocks() -> list[tuple[str, str]]:
    """``(page, code)`` of every python block not marked skip."""
    out = []
    for page in [README, *DOCS]:
        for lang, body, skip in code_blocks(page.read_text(encoding="utf-8")):
            if lang == "python" and not skip:
                out.append((str(page.relative_to(REPO)), body))
    return out


def test_every_block_is_run_or_says_why_not():
    langs = {lang for lang, _, _ in code_blocks(documented_text())}
    assert langs <= RUN | SHOWN, f"a code block language that is neither run nor shown: {langs}"
    skipped = [(lang, body) for lang, body, skip in code_blocks(documented_text()) if skip]
    assert all(lang in RUN for lang, _ in skipped), skipped  # a skip marker on a shown block
    pages = {page for page, _ in python_blocks()}
    assert "README.md" in pages and "docs/library.md" in pages, pages


def test_skip_marker_is_read_from_the_line_before_the_block():
    text = (
        "<!-- docs-test: skip (needs a SLURM cluster) -->\n```bash\nsbatch x\n```\n\n"
        "```python\nprint(1)\n```\n"
    )
    assert code_blocks(text) == [
        ("bash", "sbatch x\n", "needs a SLURM cluster"),
        ("python", "print(1)\n", None),
    ]


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return _project_with_short_examples(tmp_path_factory.mktemp("docs") / "project")


@pytest.mark.parametrize(
    "page,code", python_blocks(), ids=[f"{p}:{i}" for i, (p, _) in enumerate(python_blocks())]
)
def test_python_block_runs_as_written(page, code, project):
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, (page, code, proc.stderr[-2000:])


def test_site_builds_offline_with_no_warnings(tmp_path):
    """`make docs`'s build (strict: a broken link or anchor is an error), where the `docs`
    extra is installed (CI installs it before the tests)."""
    pytest.importorskip("mkdocs", reason="the docs extra is not installed (make install-docs)")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "index.html").is_file() and (tmp_path / "library.html").is_file()
