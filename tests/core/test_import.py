"""`import replikit` and `replikit --version` load nothing heavy (import ≤ 0.3 s).

Times are measured in benchmarks/startup.py; here the property behind them is checked: the
heavy libraries are not imported until a name that needs them is used.
"""

import subprocess
import sys

HEAVY = ("numpy", "scipy", "pandas", "sklearn", "matplotlib", "duckdb", "typer", "rich")


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "; import sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_import_replikit_is_light():
    loaded = _modules_after("import replikit")
    assert not [m for m in HEAVY if m in loaded]


def test_capability_packages_are_light():
    loaded = _modules_after("import replikit.compare, replikit.replicate, replikit.multistudy, "
                            "replikit.generalize, replikit.resampling, replikit.experiment")
    assert not [m for m in ("scipy", "pandas", "sklearn", "matplotlib", "duckdb") if m in loaded]


def test_version_entry_point_loads_no_command_line():
    code = ("import sys; sys.argv = ['replikit', '--version']\n"
            "from replikit._entry import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass")
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys; print(' '.join(sys.modules))"],
                         capture_output=True, text=True, check=True).stdout
    assert out.startswith("replikit ")
    assert not [m for m in HEAVY if m in set(out.split())]


def test_lazy_names_resolve():
    import replikit

    assert replikit.Verdict.__name__ == "Verdict"
    assert issubclass(replikit.DataError, replikit.ReplikitError)
    assert set(replikit.__all__) >= {"Verdict", "TestResult", "ConfidenceInterval"}
