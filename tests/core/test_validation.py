import numpy as np
import pytest

from replikit._validation import (
    check_1d_array,
    check_alternative,
    check_choice,
    check_float,
    check_int,
    check_probability,
    check_same_length,
)
from replikit.errors import DataError, ParameterError, ParameterTypeError


def test_choice_lists_allowed_values():
    with pytest.raises(ParameterError, match=r"`method` must be one of 'a', 'b'; got 'c'"):
        check_choice("c", "method", ["a", "b"])
    assert check_alternative("Two-Sided") == "two-sided"


def test_numbers():
    assert check_int(np.int64(3), "n", min_value=1) == 3
    with pytest.raises(ParameterTypeError, match="`n` must be an int"):
        check_int(2.5, "n")
    with pytest.raises(ParameterError, match="`n` must be >= 2; got 1"):
        check_int(1, "n", min_value=2)
    with pytest.raises(ParameterError, match="finite"):
        check_float(float("nan"), "x")
    with pytest.raises(ParameterError, match="strictly between 0 and 1"):
        check_probability(1.0, "p")
    assert check_probability(1.0, "p", open_interval=False) == 1.0


def test_arrays():
    np.testing.assert_array_equal(check_1d_array([1, 2], "x"), [1.0, 2.0])
    with pytest.raises(DataError, match=r"`x` must be finite; found 1 NaN/inf value\(s\) at positions \[1\]"):
        check_1d_array([1, np.nan, 3], "x")
    with pytest.raises(DataError, match="one-dimensional"):
        check_1d_array([[1, 2]], "x")
    with pytest.raises(DataError, match="numeric"):
        check_1d_array(["a"], "x")
    with pytest.raises(DataError, match="`a` has 2, `b` has 3"):
        check_same_length([("a", [1, 2]), ("b", [1, 2, 3])])
