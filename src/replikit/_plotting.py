"""Figures for every capability: created without pyplot (so the user's backend is never
switched) and rendered to SVG, inline for the HTML report or as a standalone file.

``new_figure`` returns a :class:`matplotlib.figure.Figure` with its own Agg canvas; it never calls
``matplotlib.use``; its axes cycle through the Okabe–Ito palette (distinguishable under the
common colour-vision deficiencies; Okabe & Ito 2008). ``svg_document`` gives a valid standalone SVG file (XML prologue, SVG and
xlink namespaces), ``svg_inline`` the same drawing fit for inlining in HTML (no prologue; the
HTML parser puts ``<svg>`` in the SVG namespace by itself). Both are deterministic: the same
figure gives the same bytes (fixed id salt, no dates or creator metadata).
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import os
import re

__all__ = ["new_figure", "new_axes", "axes_or_new", "svg_document", "svg_inline", "save_svg",
           "svg_later", "figures_later", "short_labels", "OKABE_ITO", "MIN_FONT_PT", "LONG_TEXT"]

_XMLNS = re.compile(r'\s+xmlns(:\w+)?="[^"]*"')

#: Okabe & Ito (2008) colour-blind-safe palette, black last (used for the axes' colour cycle).
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
             "#000000")
#: The smallest text size of a rendered figure, in points (legible at 100% zoom).
MIN_FONT_PT = 9.0


def _figure_class():
    from matplotlib.figure import Figure

    class _Figure(Figure):
        """A Figure whose axes start with the Okabe–Ito colour cycle (``subplots`` goes
        through ``add_subplot``)."""

        def add_subplot(self, *args, **kwargs):
            ax = super().add_subplot(*args, **kwargs)
            ax.set_prop_cycle(color=OKABE_ITO)
            return ax

        def add_axes(self, *args, **kwargs):
            ax = super().add_axes(*args, **kwargs)
            ax.set_prop_cycle(color=OKABE_ITO)
            return ax

    return _Figure


def new_figure(width: float = 6.4, height: float = 3.6):
    """A matplotlib figure with an Agg canvas, outside pyplot (no display needed)."""
    return _figure_class()(figsize=(width, height), layout="constrained")


def new_axes(width: float = 6.4, height: float = 3.6):
    """The single axes of a :func:`new_figure`."""
    return new_figure(width, height).add_subplot()


#: Set while replikit draws figures for itself (the audit's report): then no figure goes
#: through pyplot, so a notebook running an audit shows the audit's cards, not every figure.
_OFF_PYPLOT = contextvars.ContextVar("replikit_off_pyplot", default=False)


@contextlib.contextmanager
def off_pyplot():
    """Draw every figure made inside outside pyplot (for figures replikit embeds itself)."""
    token = _OFF_PYPLOT.set(True)
    try:
        yield
    finally:
        _OFF_PYPLOT.reset(token)


def _pyplot_in_use() -> bool:
    """True in a notebook or wherever the user has imported pyplot: a figure made there should
    be pyplot's, so that it shows (inline in Jupyter, in a window in a script)."""
    import sys

    if _OFF_PYPLOT.get():
        return False
    if "matplotlib.pyplot" in sys.modules:
        return True
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    shell = get() if callable(get) else None
    return shell is not None and "Terminal" not in type(shell).__name__


def axes_or_new(ax=None, width: float = 6.4, height: float = 3.6):
    """``ax`` if given, else the axes of a new figure (the ``ax=None`` convention of every
    plot function).

    In a notebook, or once the user has imported pyplot, the new figure is pyplot's (so a
    notebook shows it inline, as scikit-learn's displays do); elsewhere it is made outside
    pyplot, leaving the backend alone. The report and the command line always pass their own
    ``ax``.
    """
    if ax is not None:
        return ax
    if _pyplot_in_use():
        import matplotlib.pyplot as plt

        fig = plt.figure(figsize=(width, height), layout="constrained",
                         FigureClass=_figure_class())
        return fig.add_subplot()
    return new_axes(width, height)


def _overlaps(labels, vertical: bool) -> int:
    """How many times too dense the visible tick ``labels`` are along their axis (1 = fine)."""
    boxes = [t.get_window_extent() for t in labels if t.get_visible() and t.get_text()]
    if len(boxes) < 2:
        return 1
    if vertical:
        spans = sorted((b.y0, b.y1) for b in boxes)
    else:
        spans = sorted((b.x0, b.x1) for b in boxes)
    need = max(hi - lo for lo, hi in spans) * 1.1
    gaps = [b[0] - a[0] for a, b in zip(spans, spans[1:], strict=False)]
    have = min(gaps) if gaps else need
    return 1 if have >= need else int(-(-need // max(have, 1e-9)))


def _lay_out(fig) -> None:
    """What a draw does to place the axes (their aspect, then the layout engine), without
    drawing: the saved figure's draw does the drawing once."""
    try:  # matplotlib's own steps of Figure.draw (private: fall back to a whole draw)
        from matplotlib.backend_bases import _get_renderer

        renderer = _get_renderer(fig)
        arrange = fig._get_draw_artists
    except (ImportError, AttributeError):  # pragma: no cover - another matplotlib
        fig.draw_without_rendering()
        return
    arrange(renderer)  # applies every axes' aspect and locator
    engine = fig.get_layout_engine()
    if fig.axes and engine is not None:
        engine.execute(fig)


def legible(fig, min_size: float = MIN_FONT_PT):
    """Make ``fig`` legible at 100% zoom: no text under ``min_size`` points, and tick labels
    on a fixed (categorical) axis that would then overlap thinned to every k-th label (the axis
    keeps all its ticks).

    Plot functions may draw small annotations; this pass, run on every rendered figure, is
    the one place the floor is enforced. Returns ``fig``.
    """
    from matplotlib.text import Text

    # One layout per figure, and no draw before it: ``get_ticklabels`` makes the lazy tick
    # labels itself (constrained layout measures every text several times; it runs when the
    # figure is saved, or in the second pass below, whose positions the saved figure keeps).
    engine = fig.get_layout_engine()
    for ax in fig.get_axes():
        for name, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            labels = axis.get_ticklabels(which="both")
            if labels and min(t.get_fontsize() for t in labels) < min_size:
                ax.tick_params(axis=name, which="both", labelsize=min_size)
    for text in fig.findobj(Text):
        if text.get_text() and text.get_fontsize() < min_size:
            text.set_fontsize(min_size)
    from matplotlib.ticker import FixedLocator

    fixed = [(vertical, axis) for ax in fig.get_axes()
             for vertical, axis in ((False, ax.xaxis), (True, ax.yaxis))
             if isinstance(axis.get_major_locator(), FixedLocator)]
    if not fixed:  # automatic locators choose fewer ticks by themselves: no second draw
        return fig
    _lay_out(fig)  # the label extents at their final sizes, laid out
    for vertical, axis in fixed:
        labels = axis.get_ticklabels()
        step = _overlaps(labels, vertical)
        if step > 1:
            for i, t in enumerate(labels):
                t.set_visible(i % step == 0)
    if engine is not None:
        # keep this layout (made with every label shown: thinning only frees room) rather
        # than lay the figure out again when it is saved
        fig.set_layout_engine("none")
    return fig


#: A figure's text longer than this (characters) is cut: no caption of replikit's is this long,
#: so such a text is a label from the data; a tick or legend label this long is shortened to
#: :data:`replikit._labels.MAX_LABEL` characters, distinct from its neighbours.
LONG_TEXT = 120


def _short_formatter(inner, shorten):
    """A tick formatter that gives ``inner``'s labels through ``shorten`` (a list of labels to
    a list of labels)."""
    from matplotlib.ticker import Formatter

    class _Short(Formatter):
        _replikit_short = True

        def set_axis(self, axis):
            super().set_axis(axis)
            inner.set_axis(axis)

        def set_locs(self, locs):
            inner.set_locs(locs)

        def __call__(self, x, pos=None):
            return shorten([inner(x, pos)])[0]

        def format_ticks(self, values):
            return shorten(list(inner.format_ticks(values)))

        def get_offset(self):
            return inner.get_offset()

    return _Short()


def short_labels(fig):
    """Shorten the long labels of ``fig`` before it is laid out (a label of a hundred thousand
    characters made the layout take a minute and the SVG megabytes).

    The labels of the audit's input (:func:`replikit._labels.current`) take their short forms
    everywhere, as in the report's tables and sentences; any other tick or legend label longer
    than :data:`LONG_TEXT` characters is cut to ``MAX_LABEL`` characters, distinct from the
    others on its axis or legend; any other text longer than that is cut. Control characters
    are shown as visible code points. Returns ``fig``.
    """
    from matplotlib.legend import Legend
    from matplotlib.text import Text
    from matplotlib.ticker import LogFormatter, ScalarFormatter

    from ._labels import Abbreviations, abbreviate, current, visible_controls

    known = current()

    def one(text: str) -> str:
        text = visible_controls(known.apply(text) if known else text)
        return text

    def group(labels: list[str]) -> list[str]:
        labels = [one(str(t)) for t in labels]
        if max(map(len, labels), default=0) <= LONG_TEXT:
            return labels
        ab = Abbreviations(labels)
        return [ab.short.get(t, t) if len(t) > LONG_TEXT else t for t in labels]

    for legend in fig.findobj(Legend):
        texts = legend.get_texts()
        for text, new in zip(texts, group([t.get_text() for t in texts]), strict=True):
            text.set_text(new)
    for ax in fig.get_axes():
        for axis in (ax.xaxis, ax.yaxis):
            fmt = axis.get_major_formatter()
            # labels (categories, fixed labels, functions of the position): through group;
            # numbers are left to their formatters (offsets, mathtext)
            if not isinstance(fmt, ScalarFormatter | LogFormatter) and \
                    not getattr(fmt, "_replikit_short", False):
                axis.set_major_formatter(_short_formatter(fmt, group))
    for text in fig.findobj(Text):
        label = text.get_text()
        if label:
            new = one(label)
            new = abbreviate(new, LONG_TEXT) if len(new) > LONG_TEXT else new
            if new != label:
                text.set_text(new)
    return fig


def svg_document(fig) -> str:
    """Render ``fig`` as a standalone SVG document (valid XML, opens in any viewer).

    Mathtext is switched off for every text of the figure but the tick formatters' own
    ``$\\mathdefault{...}$`` labels: labels come from user data, and a ``$`` in a study or
    column name must print as a dollar sign.
    """
    import matplotlib
    from matplotlib.text import Text

    # Labels come from user data (study, model and column names): a '$' must print as a dollar,
    # not start mathtext (which raises on unbalanced or invalid TeX). Make the lazy tick labels
    # with mathtext off (:func:`legible`), then keep mathtext only for the formatters'
    # own '$\mathdefault{...}$' strings (log-axis ticks such as 10^2).
    engine = fig.get_layout_engine()
    short_labels(fig)  # before any layout: a long label is slow to measure
    with matplotlib.rc_context({"text.parse_math": False}):
        legible(fig)
    for text in fig.findobj(Text):
        label = text.get_text()
        text.set_parse_math(label.startswith("$") and label.endswith("$")
                            and "\\mathdefault" in label)
    buf = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "replikit"}):
        fig.savefig(buf, format="svg", metadata={"Creator": None, "Date": None,
                                                 "Format": None, "Type": None})
    if engine is not None and fig.get_layout_engine() is not engine:
        fig.set_layout_engine(engine)  # the caller's figure keeps its layout engine
    return re.sub(r"<metadata>.*?</metadata>", "", buf.getvalue(), flags=re.S)


def svg_inline(fig) -> str:
    """Render ``fig`` as an ``<svg>`` element for inlining in HTML: no XML prologue or DOCTYPE,
    namespace declarations dropped (the HTML parser supplies them)."""
    svg = svg_document(fig)
    svg = svg[svg.index("<svg"):]
    head_end = svg.index(">")
    return _XMLNS.sub("", svg[:head_end]) + svg[head_end:]


_LATER: contextvars.ContextVar = contextvars.ContextVar("replikit_figures_later", default=None)


@contextlib.contextmanager
def figures_later():
    """Inside it, :func:`svg_later` renders each figure in one background thread, in the
    order given, while the caller goes on (the audit's figures, about 0.4 s each, are drawn
    while the next section's fits run in worker processes and this process waits). The
    figures must not be touched once given; on leaving, every rendering has finished.
    Matplotlib's state shared between threads is read-only here: the figures are drawn
    outside pyplot, each on its own canvas, fonts are cached per thread, and rcParams change
    only inside :func:`svg_document`, for settings read when a figure is drawn or saved
    (which it sets on every text of the figure it renders)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="replikit-figures") as pool:
        token = _LATER.set(pool)
        try:
            yield
        finally:
            _LATER.reset(token)


def svg_later(fig):
    """:func:`svg_inline` of ``fig``: the ``<svg>`` string at once, or, inside
    :func:`figures_later`, a :class:`concurrent.futures.Future` of it."""
    pool = _LATER.get()
    if pool is None:
        return svg_inline(fig)
    # the thread draws under the caller's context: the labels it shortens (_labels.shortened)
    return pool.submit(contextvars.copy_context().run, svg_inline, fig)


def save_svg(fig, path: str | os.PathLike) -> str:
    """Write ``fig`` to ``path`` as a standalone SVG file (atomically); return the path."""
    from ._outputs import write_text_atomic

    return str(write_text_atomic(path, svg_document(fig)))
