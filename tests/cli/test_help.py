"""Every command's ``--help`` fits 80 columns whole, shows examples and speaks plain words.

At 80 columns no line is longer than 80 characters, no option name or allowed value is cut,
the help ends with one or more example command lines that use only the command's own options,
and no word a user cannot know appears (see ``_checks.JARGON``).
"""

from __future__ import annotations

import re
import shlex

import pytest

from _checks import assert_plain


def _commands():
    import typer.main

    from replikit.cli import app

    root = typer.main.get_command(app)
    out = {}

    def walk(node, path):
        subs = getattr(node, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, [*path, name])
        else:
            out[" ".join(path)] = node

    walk(root, [])
    return out


COMMANDS = _commands()
GLOBAL = {"--format", "--debug", "--quiet", "-q", "--version", "--help"}


@pytest.fixture
def help_text(cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")

    def get(path):
        code, out, err = cli(*path.split(), "--help")
        assert code == 0, err
        return out

    return get


def test_root_help_fits(help_text):
    text = help_text("")
    assert all(len(line) <= 80 for line in text.splitlines())
    assert_plain(text, "replikit --help")


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_help_fits_80_columns_and_cuts_nothing(path, help_text):
    text = help_text(path)
    long_lines = [line for line in text.splitlines() if len(line) > 80]
    assert not long_lines, f"lines over 80 columns in `replikit {path} --help`:\n" + \
        "\n".join(long_lines)
    command = COMMANDS[path]
    for param in command.params:
        for opt in [*getattr(param, "opts", []), *getattr(param, "secondary_opts", [])]:
            if opt.startswith("--"):
                assert re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", text), \
                    f"`{opt}` is cut or missing in `replikit {path} --help`"
        for choice in getattr(getattr(param, "type", None), "choices", None) or ():
            assert re.search(rf"(?<![\w-]){re.escape(str(choice))}(?![\w-])", text), \
                f"value {choice!r} of `{param.name}` is cut in `replikit {path} --help`"


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_help_shows_examples_with_real_options(path, help_text):
    text = help_text(path)
    assert "Examples:" in text, f"`replikit {path} --help` shows no example"
    block = text.split("Examples:", 1)[1]
    lines = [ln.strip() for ln in block.splitlines()]
    examples = []
    for ln in lines:
        if not ln:
            if examples:
                break
            continue
        examples.append(ln)
    assert examples and all(ex.startswith(f"replikit {path}".strip()) or
                            ex.startswith("replikit --") for ex in examples), examples
    options = {o for p in COMMANDS[path].params
               for o in [*getattr(p, "opts", []), *getattr(p, "secondary_opts", [])]}
    for ex in examples:
        for token in shlex.split(ex.split(" #", 1)[0]):
            flag = token.split("=", 1)[0]
            if flag.startswith("-"):
                assert flag in options or flag in GLOBAL, \
                    f"example `{ex}` uses {flag}, not an option of `replikit {path}`"


@pytest.mark.parametrize("path", sorted(COMMANDS))
def test_help_speaks_plain_words(path, help_text):
    assert_plain(help_text(path), f"`replikit {path} --help`")
