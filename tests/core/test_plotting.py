"""Figures: standalone SVG is valid XML, inline SVG fits HTML, user labels never parse as TeX."""

import re
import xml.etree.ElementTree as ET

import matplotlib
import pytest

from replikit._plotting import new_figure, save_svg, svg_document, svg_inline


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
