"""Every calibration study at its reduced size: a method replikit claims is calibrated must
stay inside its tolerance band, or this test fails and names the rows.

Each capability's ``validity(size='small')`` is run once with a fixed random state (so the check
is deterministic); the full sizes are in docs/validity.md (``replikit simulate validity``).
"""

import importlib

import pytest

from replikit._calibration import COLUMNS, check_table, format_table, stack_tables

# The capabilities that ship a validity study (``replikit.<capability>.validity``); the
# discovery test in test_validity_cli.py checks the command finds exactly these.
CAPABILITIES = ("replicate", "compare", "generalize", "multistudy", "resampling")


@pytest.mark.slow
@pytest.mark.parametrize("capability", CAPABILITIES)
def test_calibrated_methods_stay_in_their_bands(capability):
    study = importlib.import_module(f"replikit.{capability}.validity").validity
    raw = study(size="small", random_state=0, n_jobs=1)
    assert list(raw.columns[:len(COLUMNS)]) == list(COLUMNS)
    table = stack_tables([raw])
    assert set(table["capability"]) == {capability}
    keys = table[["study", "method", "setting", "quantity"]]
    assert not keys.duplicated().any(), "rows must be told apart by study/method/setting"
    assert (table["claim"] == "calibrated").any(), "no calibrated row: nothing is checked"
    # the capability's own `within` flags agree with its band
    assert raw["within"].astype(bool).tolist() == table["within"].tolist()
    failures = check_table(table)
    assert failures.empty, (f"{len(failures)} calibrated row(s) of {capability} outside their "
                            f"tolerance band:\n{format_table(failures)}")
