"""The calibration studies of test_validity_suite.py's CAPABILITIES that it does not run itself
(split in two files so that `pytest -n 2 --dist loadfile` runs the halves on both workers)."""

import pytest

from .test_validity_suite import CAPABILITIES, HERE, check_capability

OTHERS = tuple(c for c in CAPABILITIES if c not in HERE)


def test_the_two_files_run_every_capability_once():
    assert set(HERE) <= set(CAPABILITIES) and OTHERS
    assert sorted(HERE + OTHERS) == sorted(CAPABILITIES)


@pytest.mark.slow
@pytest.mark.parametrize("capability", OTHERS)
def test_calibrated_methods_stay_in_their_bands(capability):
    check_capability(capability)
