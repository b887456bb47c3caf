"""The ``replikit`` console script: answers ``--version`` before loading the command line."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else list(argv)
    if args == ["--version"]:
        from . import __version__

        print(f"replikit {__version__}")
        sys.exit(0)
    from .cli import main as cli_main

    cli_main(args)
