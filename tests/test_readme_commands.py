"""Every command in the README and the documentation pages (``docs/``) still works as written.

Commands are the lines of the pages' ``bash`` blocks and the inline code spans that start
with ``make``, ``snakemake``, ``genmetrics``, ``python`` or ``.venv/bin/``; a block preceded by
``<!-- docs-test: skip (reason) -->`` (cluster-only commands) is left out. Each is checked
the cheapest way that still runs it as written:

* ``make <target>``: the target exists and ``make -n`` resolves its recipe (what the recipe
  runs is tested on its own: a study's config dry-runs in test_workflow.py, ``make test`` is
  this suite, ``make demo`` is the end-to-end run);
* ``snakemake ...``: run as written with ``-n`` added, from the checkout (``--report`` needs a
  finished run: tests/test_report_browser.py builds and opens one);
* ``genmetrics ...`` and ``python -m genmetrics...``: run as written from the checkout, on the
  files of ``examples/`` (outputs under the git-ignored ``results/``);
* commands of the shell or of SLURM (``sbatch``, ``squeue``, ``git``, ``$EDITOR``...) are not
  ours: each is listed in :data:`NOT_OURS` with the reason, and a new one fails this test
  until it is classified.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
#: the documentation site's pages (mkdocs.yml): their commands run as the README's do
DOCS = sorted((REPO / "docs").rglob("*.md"))
#: the line before a code block that is not run, with the reason: ``<!-- docs-test: skip (why) -->``
SKIP_MARKER = re.compile(r"<!-- docs-test: skip \((?P<reason>[^)]+)\) -->")
BIN = Path(sys.executable).parent

#: command prefixes that are not ours, and why they are not run
NOT_OURS = {
    "sbatch": "SLURM; `make test-slurm` runs snakemake --profile cluster on a real one-node SLURM",
    "squeue": "SLURM (as above)",
    "scancel": "SLURM (as above)",
    "tmux": "a terminal multiplexer",
    "git": "git itself",
    "$EDITOR": "your editor",
}


def documented_text() -> str:
    """The README and every page of the documentation site, one after the other."""
    return "\n\n".join(p.read_text(encoding="utf-8") for p in [README, *DOCS])


def code_blocks(text: str) -> list[tuple[str, str, str | None]]:
    """``(language, body, skip reason or None)`` of each fenced code block of ``text``."""
    out = []
    for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = SKIP_MARKER.fullmatch(before.strip())
        out.append((m[1], m[2], skip["reason"] if skip else None))
    return out


def readme_commands(text: str | None = None) -> list[str]:
    """The commands of the README and the documentation pages (or of ``text``), in order,
    without comments, continuation lines joined; blocks marked skip left out."""
    text = documented_text() if text is None else text
    out: list[str] = []
    for lang, block, skip in code_blocks(text):
        if lang != "bash" or skip:
            continue
        for line in re.sub(r"\s*\\\n\s*", " ", block).splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                out.append(_strip_comment(line))
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    for span in re.findall(r"`([^`\n]+)`", prose):
        if re.match(r"(make |snakemake |genmetrics |python |\.venv/bin/)", span) and not (
            _synopsis(span) or (span.startswith("genmetrics ") and len(span.split()) == 2)
        ):  # a synopsis, or a subcommand named in prose, is not a command
            out.append(span.strip())
    return list(dict.fromkeys(out))


def _synopsis(span: str) -> bool:
    """``genmetrics score METRIC --candidate TEXTS [--reference TEXTS]``: placeholders in
    capitals, brackets or angle brackets make a span the form of a command, not one to run."""
    return bool(re.search(r"[\[<]|\b[A-Z]{3,}\b", span))


def _strip_comment(line: str) -> str:
    """``cmd  # comment`` -> ``cmd``; a ``#`` inside quotes (``--format='%i'``) stays."""
    for m in re.finditer(r"\s+#(\s|$)", line):
        before = line[: m.start()]
        if before.count("'") % 2 == 0 and before.count('"') % 2 == 0:
            return before.rstrip()
    return line


def _program(command: str) -> str:
    first = command.split()[0]
    return first.removeprefix(".venv/bin/")


def classify(command: str) -> str:
    """``make``, ``snakemake``, ``genmetrics`` (also python -m genmetrics...), or a
    :data:`NOT_OURS` key; anything else raises (a new kind of command must be classified)."""
    program = _program(command)
    if program in ("make", "snakemake", "genmetrics"):
        return program
    if program == "python" and " -m genmetrics" in command:
        return "genmetrics"
    if program in NOT_OURS:
        return program
    raise AssertionError(f"README command of no known kind (classify it here): {command}")


def _run(args: str | list[str], cwd: Path, shell: bool = False) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("GENMETRICS_REPO", None)
    return subprocess.run(
        args, cwd=cwd, shell=shell, capture_output=True, text=True, env=env, timeout=600
    )


def _snakemake_dry(command: str) -> str | None:
    """The command to run for a README snakemake command (None: needs a finished run)."""
    words = shlex.split(command.split("&&")[-1].strip())
    if "--report" in words:
        return None
    words[0] = str(BIN / "snakemake")
    if "-n" not in words and "--dry-run" not in words:
        words.insert(1, "-n")
    return shlex.join(words)


def test_readme_commands_are_found_and_classified():
    commands = readme_commands()
    kinds = {c: classify(c) for c in commands}
    assert "make demo" in kinds and "make test" in kinds
    assert sum(k == "genmetrics" for k in kinds.values()) >= 5, kinds
    assert sum(k == "snakemake" for k in kinds.values()) >= 3, kinds


def test_readme_command_extraction_on_a_hand_made_text():
    text = (
        "Run `make demo` or `snakemake -n`, not `pip`, `genmetrics embed` or\n"
        "`genmetrics score METRIC --candidate TEXTS`.\n"
        "```bash\n.venv/bin/genmetrics list   # all metrics\n"
        "genmetrics score x \\\n    --param a=1\n# a comment\n```\n"
        "```python\nimport genmetrics\n```\n"
        "<!-- docs-test: skip (needs a SLURM cluster) -->\n```bash\nsbatch x\n```\n"
    )
    assert readme_commands(text) == [
        ".venv/bin/genmetrics list",
        "genmetrics score x --param a=1",
        "make demo",
        "snakemake -n",
    ]
    with pytest.raises(AssertionError, match="no known kind"):
        classify("curl https://example.org")


def test_readme_make_targets_exist_and_resolve():
    targets = sorted(
        {c.split()[1] for c in readme_commands() if classify(c) == "make" and len(c.split()) > 1}
    )
    phony = re.search(r"^\.PHONY:(.*)$", (REPO / "Makefile").read_text(), re.M)[1].split()
    missing = [t for t in targets if t not in phony]
    assert not missing, f"README names make targets the Makefile lacks: {missing}"
    for t in targets:
        proc = _run(["make", "-n", t], REPO)
        assert proc.returncode == 0, (t, proc.stderr[-1000:])


def test_readme_snakemake_commands_dry_run_as_written():
    runs = [_snakemake_dry(c) for c in readme_commands() if classify(c) == "snakemake"]
    runs = list(dict.fromkeys(r for r in runs if r))
    assert runs
    with ThreadPoolExecutor(2) as pool:
        procs = list(pool.map(lambda r: _run(r, REPO, shell=True), runs))
    failed = [(r, p.stderr[-1500:]) for r, p in zip(runs, procs, strict=True) if p.returncode]
    assert not failed, failed


#: texts per examples/ file in ``make test``'s run of the README's genmetrics commands
EXAMPLE_TEXTS = 20


def _project_with_short_examples(folder: Path) -> Path:
    """A folder laid out as the checkout for the README's genmetrics commands: its
    ``config.yaml``, ``.cache`` (warm models and features) and ``.venv`` linked, and
    ``examples/`` with the first :data:`EXAMPLE_TEXTS` texts of each file."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("config.yaml", ".cache", ".venv"):
        if (REPO / name).exists():
            (folder / name).symlink_to(REPO / name)
    (folder / "examples").mkdir()
    for path in (REPO / "examples").glob("*.jsonl"):
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        (folder / "examples" / path.name).write_text("".join(lines[:EXAMPLE_TEXTS]))
    return folder


def _run_genmetrics_commands(cwd: Path) -> None:
    runs = [c for c in readme_commands() if classify(c) == "genmetrics"]
    assert any("--featurizer" in c for c in runs) and any("--evaluator" in c for c in runs)
    failed = []
    for command in runs:
        shell = command if command.startswith(".venv/") else f"{BIN}/{command}"
        if command.startswith("python "):
            shell = f"{sys.executable} {command.removeprefix('python ')}"
        if command.startswith(".venv/") and not (cwd / ".venv").exists():
            shell = f"{BIN}/{command.removeprefix('.venv/bin/')}"
        proc = _run(shell, cwd, shell=True)
        if proc.returncode:
            failed.append((command, (proc.stdout + proc.stderr)[-800:]))
    assert not failed, failed


def test_readme_genmetrics_commands_run_as_written(tmp_path):
    """Every genmetrics command as written, in a folder laid out as the checkout with 20
    texts per examples/ file (SmolLM2's surprisal of each text is most of the cost on 2
    cores): ``config.yaml`` names the featurizers, the features land in the shared
    cache, outputs under ``results/``. ``make test-slow`` runs them on the whole files from
    the checkout itself."""
    _run_genmetrics_commands(_project_with_short_examples(tmp_path / "project"))


@pytest.mark.slow
def test_readme_genmetrics_commands_run_as_written_from_the_checkout():
    """As above, from the checkout on the whole examples/ files, as a user runs them."""
    _run_genmetrics_commands(REPO)


def first_screen_outputs(text: str | None = None) -> list[str]:
    """The result files the README's first table promises (before its first ``##``)."""
    text = README.read_text() if text is None else text
    head = text[: text.index("\n## ")]
    out = []
    for row in re.findall(r"^\| (`results/.*?) \|", head, re.M):
        for path in re.findall(r"`(results/[^`]+)`", row):
            m = re.fullmatch(r"(.*)\.\{(\w+),(\w+)\}", path)
            out += [f"{m[1]}.{m[2]}", f"{m[1]}.{m[3]}"] if m else [path]
    return out


def test_the_first_screen_promises_only_what_the_demo_makes():
    """Every output the README's first table names is an output of the default config's
    DAG (a ``{dataset}``-style pattern matches one) or of ``make demo``'s recipe; the
    picture it shows is in the repository."""
    promised = first_screen_outputs()
    assert len(promised) >= 10, promised
    proc = _run([str(BIN / "snakemake"), "-n", "--cores", "2"], REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    made = {
        p.strip()
        for line in re.findall(r"^\s*output: (.*)$", proc.stdout, re.M)
        for p in line.split(",")
    }
    # on an empty folder every target is scheduled; a finished run lists none: then its files
    made |= {str(p.relative_to(REPO)) for p in (REPO / "results").rglob("*") if p.is_file()}
    demo = re.search(r"^demo:.*\n((?:\t.*\n)+)", (REPO / "Makefile").read_text(), re.M)[1]
    missing = []
    for path in promised:
        pattern = re.sub(r"\\\{\w+\\\}", r"[^/]+", re.escape(path))
        if not any(re.fullmatch(pattern, m) for m in made) and path not in demo:
            missing.append(path)
    assert not missing, f"README promises outputs the demo does not make: {missing}"
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README.read_text()):
        assert (REPO / image).is_file(), image
