"""Figures: standalone SVG is valid XML, inline SVG fits HTML, user labels never parse as TeX."""

import re
import xml.etree.ElementTree as ET

import matplotlib
import pytest

from replikit._plotting import (
    figures_later,
    new_figure,
    save_svg,
    svg_document,
    svg_inline,
    svg_later,
)


def _figure(label="a < b & c"):
    fig = new_figure()
    ax = fig.add_subplot()
    ax.bar([label, "$x", "cost $5 & $7"], [1, 2, 3])
    ax.set_title(label)
    return fig


def test_standalone_svg_is_valid_xml_with_namespace(tmp_path):
    path = save_svg(_figure(), tmp_path / "f.svg")
    root = ET.parse(path).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    text = open(path, encoding="utf-8").read()
    assert text.startswith("<?xml")


def test_inline_svg_has_no_prologue_and_is_deterministic():
    svg = svg_inline(_figure())
    assert svg.startswith("<svg") and "<?xml" not in svg and "xmlns" not in svg.split(">")[0]
    assert svg_inline(_figure()) == svg


def test_figures_drawn_in_the_background_equal_those_drawn_at_once():
    """Inside figures_later the figures are drawn in a thread while this one makes more
    (with '$' labels and a log axis: mathtext and the rcParams switch of svg_document); each
    is the bytes svg_inline gives, and outside it svg_later draws at once."""
    def make(i):
        fig = _figure(f"cost ${i} & <{i}>")
        ax = fig.axes[0].twinx()
        ax.set_yscale("log")
        ax.plot([0, 1, 2], [1, 10 ** (i % 4 + 1), 100])
        return fig

    expected = [svg_inline(make(i)) for i in range(6)]
    with figures_later():
        futures = [svg_later(make(i)) for i in range(6)]
    assert [f.result() for f in futures] == expected
    assert svg_later(make(0)) == expected[0]


@pytest.mark.parametrize("label", ["$", "price in $", "$\\frac{", "a_$b^c$"])
def test_dollar_signs_in_user_labels_print_literally(label):
    svg = svg_document(_figure(label))
    assert label.replace("&", "&amp;").replace("<", "&lt;") in svg


def test_backend_untouched():
    before = matplotlib.get_backend()
    _figure()
    assert matplotlib.get_backend() == before


def test_log_axis_ticks_keep_their_math():
    fig = new_figure()
    ax = fig.add_subplot()
    ax.loglog([1, 10, 100, 1000], [1, 100, 1e4, 1e6])
    ax.set_xlabel("cost in $")
    svg = re.sub(r"<!--.*?-->", "", svg_document(fig), flags=re.S)  # comments hold the source
    assert "mathdefault" not in svg and "cost in $" in svg


def _font_sizes(svg: str) -> list[float]:
    import re

    return [float(x) for x in re.findall(r"font(?:-size)?: ?(?:[a-z ]*?)([\d.]+)px", svg)]


def test_rendered_text_is_never_below_the_floor():
    from replikit._plotting import MIN_FONT_PT, new_axes, svg_document

    ax = new_axes(4, 3)
    ax.plot([0, 1], [0, 1], label="a")
    ax.text(0.5, 0.5, "tiny", fontsize=5)
    ax.legend(fontsize=6)
    ax.tick_params(labelsize=4)
    ax.set_title("title", fontsize=7)
    sizes = _font_sizes(svg_document(ax.figure))
    assert sizes and min(sizes) >= MIN_FONT_PT


def test_dense_categorical_labels_are_thinned_not_overlapping():
    from replikit._plotting import new_axes, svg_document

    ax = new_axes(4, 3)
    ax.set_yticks(range(60), [f"study {i}" for i in range(60)])
    svg_document(ax.figure)
    shown = [t for t in ax.get_yticklabels() if t.get_visible()]
    assert 2 <= len(shown) < 60
    boxes = sorted((t.get_window_extent().y0, t.get_window_extent().y1) for t in shown)
    assert all(b[0] >= a[1] for a, b in zip(boxes, boxes[1:], strict=False))  # no overlap
    # a sparse axis keeps every label
    ax2 = new_axes(4, 3)
    ax2.set_yticks(range(5), list("abcde"))
    svg_document(ax2.figure)
    assert all(t.get_visible() for t in ax2.get_yticklabels())


@pytest.mark.parametrize("categorical", [False, True])
def test_a_figure_is_laid_out_once_and_keeps_its_layout_engine(monkeypatch, categorical):
    """Rendering lays a figure out once (constrained layout measures every text several
    times: three layouts per figure made up half of a small audit's time), whether or not
    its tick labels need thinning, and the figure keeps its layout engine afterwards."""
    from matplotlib.layout_engine import ConstrainedLayoutEngine

    from replikit._plotting import new_axes

    calls = []
    real = ConstrainedLayoutEngine.execute
    monkeypatch.setattr(ConstrainedLayoutEngine, "execute",
                        lambda self, fig: calls.append(1) or real(self, fig))
    ax = new_axes(4, 3)
    if categorical:
        ax.set_yticks(range(60), [f"study {i}" for i in range(60)])
    else:
        ax.plot([0, 1], [0, 2])
    engine = ax.figure.get_layout_engine()
    svg = svg_document(ax.figure)
    assert len(calls) == 1
    assert ax.figure.get_layout_engine() is engine
    assert "study 0" in svg if categorical else "<svg" in svg


def test_axes_cycle_through_the_colour_blind_safe_palette():
    from replikit._plotting import OKABE_ITO, new_figure

    fig = new_figure()
    axes = fig.subplots(1, 2)
    for ax in axes:
        lines = [ax.plot([0, 1], [i, i])[0] for i in range(3)]
        assert [ln.get_color() for ln in lines] == list(OKABE_ITO[:3])
