"""Audit report sections, one module per capability (discovered automatically)."""
