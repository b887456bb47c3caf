"""The code in README.md and docs/*.md runs as a reader would paste it.

Each page's blocks run in order, in one empty temporary directory that holds the shipped sample
files under the names the pages use (:data:`FILES`), with a non-interactive matplotlib backend:

- a ```python block is executed in the page's one namespace;
- a ```bash / ```sh / ```shell block runs each line that starts with ``replikit `` (a line
  ending in ``\\`` continues on the next; ``# ...`` is a comment); a ```console block runs each
  line that starts with ``$ replikit `` (other lines are output), and ``$ cat NAME`` followed by
  lines writes those lines to NAME first, as the reader sees it. The commands run in-process
  through the typer app and must exit with code 0.

A comment on the line before a block changes that:

- ``<!-- not run: why -->``: the block is left out (it needs the reader's own file, a browser,
  ...); the reason is on the page for the reader too.
- ``<!-- run: --quick -->`` (shell blocks): every command runs with ``--quick`` added (a full
  audit takes minutes); the page says so in its text.

``tools/count_doc_blocks.py`` prints how many blocks of each page run.
"""

from __future__ import annotations

import contextlib
import io
import pathlib
import re
import shlex
import shutil
from dataclasses import dataclass

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELLS = ("bash", "sh", "shell", "console")
FENCE = re.compile(r"(?:<!--\s*(not run|run):\s*([^>]*?)\s*-->\s*\n)?```([A-Za-z]*)\n(.*?)```",
                   re.S)


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page."""

    page: str
    index: int  # 1-based among the page's blocks of its kind (python or shell)
    kind: str  # 'python' or 'shell'
    language: str
    code: str
    marker: str | None  # 'not run', 'run' or None
    option: str  # the marker's text: the reason, or the options added

    @property
    def runs(self) -> bool:
        return self.marker != "not run" and (self.kind == "python" or bool(self.commands()))

    def commands(self) -> list[tuple[str, list[str]]]:
        """``('cat', [name, content])`` and ``('replikit', args)`` steps of a shell block."""
        steps: list[tuple[str, list[str]]] = []
        lines = self.code.splitlines()
        console = self.language == "console"
        i = 0
        while i < len(lines):
            line = lines[i]
            i += 1
            if console:
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            while line.rstrip().endswith("\\") and i < len(lines):
                line = line.rstrip()[:-1] + " " + lines[i].strip()
                i += 1
            if console and line.startswith("cat ") and len(line.split()) == 2:
                body = []
                while i < len(lines) and not lines[i].startswith("$ "):
                    body.append(lines[i])
                    i += 1
                steps.append(("cat", [line.split()[1], "\n".join(body) + "\n"]))
                continue
            if not line.startswith("replikit "):
                continue
            args = shlex.split(line, comments=True)[1:]
            if self.marker == "run":
                args += [a for a in shlex.split(self.option) if a not in args]
            steps.append(("replikit", args))
        return steps


def page_blocks(page: pathlib.Path) -> list[Block]:
    """The python and shell blocks of a page, in order."""
    out, counts = [], {"python": 0, "shell": 0}
    for marker, option, language, code in FENCE.findall(page.read_text()):
        kind = "python" if language == "python" else "shell" if language in SHELLS else None
        if kind is None:
            continue
        counts[kind] += 1
        out.append(Block(page.name, counts[kind], kind, language, code, marker or None,
                         option))
    return out


def tally() -> list[dict]:
    """Per page: python and shell blocks run and not run (shell blocks without a replikit
    command, e.g. ``make demo``, are counted apart)."""
    rows = []
    for page in PAGES:
        blocks = page_blocks(page)
        py = [b for b in blocks if b.kind == "python"]
        sh = [b for b in blocks if b.kind == "shell"]
        rows.append({
            "page": page.relative_to(ROOT).as_posix(),
            "python run": sum(b.runs for b in py),
            "python not run": sum(not b.runs for b in py),
            "shell run": sum(b.runs for b in sh),
            "shell not run": sum(b.marker == "not run" for b in sh),
            "shell, no replikit command": sum(b.marker != "not run" and not b.commands()
                                              for b in sh),
        })
    return rows


def tally_table() -> str:
    """:func:`tally` as a Markdown table with a total row."""
    rows = tally()
    cols = list(rows[0])
    total = {"page": "total", **{c: sum(r[c] for r in rows) for c in cols[1:]}}
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in [*rows, total]]
    return "\n".join(lines)


def sample_files(where: pathlib.Path) -> None:
    """The files the pages' commands read, under the names the pages use: every shipped
    sample (:func:`replikit.data.examples.entry_sample`) and the built-in examples as CSV
    (``nwtco.csv`` = ``nwtco().frame()``, ``nwtco_binary.csv``, ...)."""
    from replikit.data import examples

    for name in examples.ENTRY_SAMPLES:
        path = examples.entry_sample(name)
        shutil.copy(path, where / path.name)
    for name, load in examples.EXAMPLES.items():
        load().frame().to_csv(where / f"{name}.csv", index=False)


def run_command(args: list[str]) -> tuple[int, str]:
    """``replikit ARGS`` in-process: exit code and what it printed. ``> FILE`` writes stdout
    there; a pipe runs the part before it."""
    from replikit.cli import main

    if "|" in args:
        args = args[:args.index("|")]
    target = None
    if ">" in args:
        k = args.index(">")
        args, target = args[:k], args[k + 1]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(args)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    if target is not None:
        pathlib.Path(target).write_text(out.getvalue())
    return code, out.getvalue() + err.getvalue()


def test_block_tally(capsys):
    """Every page parses; the table is what ``tools/count_doc_blocks.py`` prints."""
    table = tally_table()
    with capsys.disabled():
        print("\n" + table)
    assert table.count("\n") == len(PAGES) + 2


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    """The sample files, written once for every page."""
    where = tmp_path_factory.mktemp("samples")
    sample_files(where)
    return where


# The pages whose code runs longest run in test_docs_code_more.py: a file runs on one worker
# under `pytest -n 2 --dist loadfile`, and all pages in one file were the longest file of the
# suite (collected near its end); with these apart the two files take about the same time.
ELSEWHERE = ("runner.md", "compare.md", "resampling.md")


def runnable_pages(*, here: bool) -> list[pathlib.Path]:
    """The pages with a block that runs: those this file runs (``here``) or the others."""
    return [p for p in PAGES if any(b.runs for b in page_blocks(p))
            and (p.name not in ELSEWHERE) == here]


@pytest.mark.slow
@pytest.mark.parametrize("page", runnable_pages(here=True), ids=lambda p: p.name)
def test_page_code_runs(page, samples, tmp_path, monkeypatch):
    run_page(page, samples, tmp_path, monkeypatch)


def run_page(page, samples, tmp_path, monkeypatch):
    """Run every block of ``page`` in order; fail naming every block and command that fails."""
    import matplotlib

    matplotlib.use("Agg")
    for path in samples.iterdir():
        shutil.copy(path, tmp_path / path.name)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "120")
    namespace: dict = {"__name__": f"docs_{page.stem}"}
    failures = []  # every failing block and command of the page, not only the first
    for block in page_blocks(page):
        if not block.runs:
            continue
        where = f"{page.name}, {block.kind} block {block.index}"
        if block.kind == "python":
            try:
                exec(compile(block.code, where, "exec"), namespace)
            except Exception as exc:  # the message says which block of which page
                failures.append(f"{where} fails: {type(exc).__name__}: {exc}")
            continue
        for step, args in block.commands():
            if step == "cat":
                pathlib.Path(args[0]).write_text(args[1])
                continue
            code, printed = run_command(args)
            if code != 0:
                failures.append(f"{where}: `replikit {shlex.join(args)}` exits with {code}: "
                                + printed.strip()[-600:])
    if failures:
        pytest.fail("\n".join(failures))


def test_shell_blocks_parse_as_the_reader_types_them(tmp_path):
    page = tmp_path / "p.md"
    page.write_text(
        "<!-- run: --quick -->\n```bash\nmake demo\nreplikit audit --data a.csv \\\n"
        "    --target y   # a comment\n```\n\n"
        "```console\n$ cat s.csv\nstudy,r2\nA,0.4\n$ replikit meta s.csv\nsome output\n```\n\n"
        "<!-- not run: needs your file -->\n```sh\nreplikit audit --data mine.csv\n```\n"
        "```text\nreplikit not a command\n```\n")
    quick, console, skipped = page_blocks(page)
    assert quick.commands() == [("replikit", ["audit", "--data", "a.csv", "--target", "y",
                                              "--quick"])]
    assert console.commands() == [("cat", ["s.csv", "study,r2\nA,0.4\n"]),
                                  ("replikit", ["meta", "s.csv"])]
    assert not skipped.runs and skipped.option == "needs your file"
