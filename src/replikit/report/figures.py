"""Matplotlib figures as inline SVG for the report (see :mod:`replikit._plotting`)."""

from __future__ import annotations

from .._plotting import new_figure, svg_inline

__all__ = ["svg_from_figure", "new_figure"]


def svg_from_figure(fig) -> str:
    """Render ``fig`` to an SVG string fit for inlining in HTML (deterministic, no prologue, no
    namespace declarations)."""
    return svg_inline(fig)
