"""The import-linter contracts of pyproject.toml cover every private module of the capabilities,
so a new one cannot slip past "report and cli use only the capabilities' public modules"."""

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("compare", "replicate", "multistudy", "generalize", "resampling", "experiment")


def test_private_modules_are_all_forbidden_to_report_and_cli():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contract = next(c for c in config["contracts"] if c.get("source_modules") == ["replikit.report",
                                                                              "replikit.cli"])
    private = {f"replikit.{pkg}.{p.stem}" for pkg in PACKAGES
               for p in (ROOT / "src" / "replikit" / pkg).glob("_*.py") if p.stem != "__init__"}
    assert private == set(contract["forbidden_modules"])


def test_every_capability_is_a_layer():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["type"] == "layers")["layers"]
    capabilities = {m.strip() for m in layers[2].split("|")}
    assert capabilities == {f"replikit.{p}" for p in PACKAGES if p != "experiment"}
