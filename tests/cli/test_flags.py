"""The library speaks parameters, the command line flags: errors and warning lines that name a
parameter in backticks show the running command's flag; old flags keep working a release."""

from __future__ import annotations

import typer
import typer.main as typer_main
from typer.testing import CliRunner

from replikit.cli._common import command_flags, flagify, warning_lines
from replikit.errors import ParameterError, warn


def test_flagify_maps_backticked_parameters_only():
    flags = {"n_resamples": "--n-resamples", "scores": "SCORES"}
    assert flagify("`n_resamples` must be >= 1; column `y` and `scores`.", flags) == \
        "`--n-resamples` must be >= 1; column `y` and `SCORES`."
    assert flagify("no backticks here", flags) == "no backticks here"


def test_warning_lines_and_errors_name_the_running_commands_flags():
    app = typer.Typer()

    @app.command()
    def go(n_resamples: int = typer.Option(10, "--n-resamples")) -> None:
        with warning_lines():
            warn("`n_resamples` is small; results are noisy.")

    @app.command()
    def other() -> None:  # a second command, so that typer keeps the subcommand
        raise ParameterError("`n_resamples` bad")

    result = CliRunner().invoke(app, ["go", "--n-resamples", "5"])
    assert result.exit_code == 0
    assert "replikit: warning: `--n-resamples` is small" in result.output
    command = typer_main.get_command(app).commands["go"]
    assert command_flags(command, "go")["n_resamples"] == "--n-resamples"


def test_library_error_names_the_flag_on_the_command_line(cli):
    code, _, err = cli("estimate", "--data", "missing.csv", "--target", "y")
    assert code == 2
    assert "`--data`" in err and "`data`" not in err


def test_old_flag_warns_once_and_works(cli, tmp_path):
    code, out, err = cli("simulate", "tests", "--datasets", "2", "--n-rows", "40",
                         "--seed", "1", "--help")
    assert code == 0
    assert "`--seed` is now `--random-state`" in err
    assert "`--datasets` is now `--n-datasets`" in err
