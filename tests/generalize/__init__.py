"""Tests of replikit.generalize: a package, so that module names such as test_audit may repeat
across the capabilities test directories."""
