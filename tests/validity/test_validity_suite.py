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
# The studies take about 80 s together, too long for one file under `pytest -n 2 --dist
# loadfile` (a file runs on one worker, and this one is collected last): this file runs these,
# test_validity_suite_others.py every other capability of CAPABILITIES (about half the time).
HERE = ("replicate", "multistudy")
# what a capability's own tests expect of the same run: exactly the table's columns, and the
# methods and number of its calibrated rows (checked here, on the one run of the study)
OWN = {"resampling": ({"nested CV"}, 12)}


@pytest.mark.slow
@pytest.mark.parametrize("capability", HERE)
def test_calibrated_methods_stay_in_their_bands(capability):
    check_capability(capability)


def check_capability(capability):
    """Run ``capability``'s small validity study and fail naming every calibrated row outside
    its band."""
    study = importlib.import_module(f"replikit.{capability}.validity").validity
    raw = study(size="small", random_state=0, n_jobs=1)
    assert list(raw.columns[:len(COLUMNS)]) == list(COLUMNS)
    table = stack_tables([raw])
    assert set(table["capability"]) == {capability}
    keys = table[["study", "method", "setting", "quantity"]]
    assert not keys.duplicated().any(), "rows must be told apart by study/method/setting"
    assert (table["claim"] == "calibrated").any(), "no calibrated row: nothing is checked"
    if capability in OWN:
        methods, n_rows = OWN[capability]
        assert list(raw.columns) == list(COLUMNS)
        calibrated = table[table["claim"] == "calibrated"]
        assert set(calibrated["method"]) == methods and len(calibrated) == n_rows
    # the capability's own `within` flags agree with its band
    assert raw["within"].astype(bool).tolist() == table["within"].tolist()
    failures = check_table(table)
    assert failures.empty, (f"{len(failures)} calibrated row(s) of {capability} outside their "
                            f"tolerance band:\n{format_table(failures)}")
