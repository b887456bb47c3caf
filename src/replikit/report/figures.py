"""Matplotlib figures as inline SVG: deterministic, no external references, no XML prologue."""

from __future__ import annotations

import io
import re

__all__ = ["svg_from_figure", "new_figure"]

_XMLNS = re.compile(r'\s+xmlns(:\w+)?="[^"]*"')


def new_figure(width: float = 6.4, height: float = 3.6):
    """A matplotlib figure on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def svg_from_figure(fig) -> str:
    """Render ``fig`` to an SVG string fit for inlining in HTML.

    Text stays text (``svg.fonttype='none'``), ids are salted deterministically so the same
    figure gives the same bytes, metadata is omitted and namespace declarations (which are URLs)
    are dropped — the HTML parser places inline ``<svg>`` in the SVG namespace by itself.
    """
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "replikit"}):
        fig.savefig(buf, format="svg", metadata={"Creator": None, "Date": None,
                                                 "Format": None, "Type": None})
    svg = buf.getvalue()
    svg = svg[svg.index("<svg"):]
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    head_end = svg.index(">")
    svg = _XMLNS.sub("", svg[:head_end]) + svg[head_end:]
    return svg
