"""The report in a real browser: headless Chromium opens reports written by
``run_audit`` and checks what a reader meets — no console errors, no network request, the
summary cards first and linked to their sections, collapsed tables that expand, sortable
tables that sort, a print layout with the summary on page 1, a page that fits a phone's width (390 px: tables
scroll inside their own box) and is at most eight screens long at 1,300 px with the detail
folded — and that hostile labels in the data (script tags, event handlers, bidi overrides)
execute nothing.

Needs Debian's ``chromium`` and ``chromium-driver`` (``.ci/run`` installs them) and selenium
(the ``dev`` extra). Outside CI the module is skipped when the browser is missing; in CI
(``CI=true``) a missing browser is a failure. Screenshots go to ``$REPLIKIT_SCREENSHOTS`` when
set (else the test's temporary directory).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
if not (CHROMIUM and DRIVER):
    if os.environ.get("CI") == "true":
        raise RuntimeError("the browser test needs chromium and chromedriver in CI "
                           "(.ci/run installs them)")
    pytest.skip("chromium/chromedriver not installed", allow_module_level=True)
webdriver = pytest.importorskip("selenium.webdriver")

#: The default report's page at most this many screens of 900 px at 1,300 px wide.
SCREENS, SCREEN = 8, 900


@pytest.fixture(scope="module")
def reports(quick_reports):
    return quick_reports


@pytest.fixture(scope="module")
def browser():
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--no-first-run", "--disable-background-networking", "--disable-sync",
                "--disable-component-update", "--window-size=1300,900"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    yield driver
    driver.quit()


def _open(driver, path: Path):
    driver.get_log("performance")  # drain what earlier pages logged
    driver.get_log("browser")
    driver.get(path.resolve().as_uri())
    driver.execute_script("return document.readyState")
    return driver


def _requests(driver) -> list[str]:
    urls = []
    for entry in driver.get_log("performance"):
        msg = json.loads(entry["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
    return urls


def _shot(driver, name: str, tmp_path: Path) -> Path:
    folder = Path(os.environ.get("REPLIKIT_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(1300, min(int(height) + 100, 16000))
    path = folder / f"{name}.png"
    driver.save_screenshot(str(path))
    driver.set_window_size(1300, 900)
    assert path.stat().st_size > 10_000  # a rendered page, not a blank one
    return path


@pytest.mark.parametrize("name", ["hostile", "binary"])
def test_opens_clean_no_errors_no_network(reports, browser, name, tmp_path):
    d = _open(browser, reports[name])
    errors = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors
    urls = _requests(d)
    assert urls and all(u.startswith(("file:", "data:", "about:")) for u in urls), urls
    assert d.execute_script("return window.__pwned === undefined")
    _shot(d, f"report-{name}", tmp_path)


@pytest.mark.parametrize("name", ["hostile", "binary"])
def test_summary_cards_first_and_linked(reports, browser, name):
    d = _open(browser, reports[name])
    doc = json.loads((reports[name].parent / "report.json").read_text())
    cards = d.find_elements("css selector", "#summary a.card")
    assert len(cards) == len(doc["summary"]["cards"]) >= 3
    states = [c.get_attribute("data-state") for c in cards]
    assert states == [c["state"] for c in doc["summary"]["cards"]]
    for card in cards:
        target = card.get_attribute("href").split("#", 1)[1]
        assert d.execute_script("return document.getElementById(arguments[0]) !== null", target)
    # the summary is the first thing under the title, above the fold at 1300x900
    top = d.execute_script("return document.getElementById('summary').getBoundingClientRect().top")
    assert top < 400
    first = cards[0]
    first.click()
    assert d.execute_script("return location.hash") == "#" + first.get_attribute("data-key")


def test_hostile_labels_are_shown_as_text(reports, browser):
    d = _open(browser, reports["hostile"])
    text = d.find_element("tag name", "body").text
    assert "<script>window.__pwned=1</script>" in text
    assert d.execute_script("return document.querySelectorAll('script').length") == 1
    assert d.execute_script("return document.querySelectorAll('img').length") == 0
    # the bidi override is neutralised: shown as a visible marker, never applied
    assert "\u202e" not in text and "s\u27e8U+202E\u27e9txt.exe" in text


def test_collapsed_tables_expand_and_sortable_tables_sort(reports, browser):
    d = _open(browser, reports["binary"])
    details = d.find_elements("css selector", "details.table-details")
    for det in [*details, *d.find_elements("css selector", "details.section-more")]:
        assert det.get_attribute("open") is None
    for more in d.find_elements("css selector", "details.section-more"):  # a reader opens
        d.execute_script("arguments[0].scrollIntoView()", more)  # each section's Details
        more.find_element("css selector", ":scope > summary").click()
        assert more.get_attribute("open") is not None
    if details:
        det = details[0]
        d.execute_script("arguments[0].scrollIntoView()", det)
        det.find_element("tag name", "summary").click()
        assert det.get_attribute("open") is not None
    tables = d.find_elements("css selector", "table.sortable")
    assert tables
    sorted_one = False
    for table in tables:
        rows = table.find_elements("css selector", "tbody tr")
        if len(rows) < 3 or not table.is_displayed():
            continue
        headers = table.find_elements("css selector", "thead th")
        for i, th in enumerate(headers):
            col = [r.find_elements("tag name", "td")[i].text if len(
                r.find_elements("tag name", "td")) > i else "" for r in rows]
            try:
                nums = [float(c.replace("\u2212", "-").replace(",", "")) for c in col]
            except ValueError:
                continue
            d.execute_script("arguments[0].scrollIntoView()", th)
            th.click()
            after = [float(r.find_elements("tag name", "td")[i].text.replace("\u2212", "-")
                           .replace(",", "")) for r in table.find_elements("css selector",
                                                                           "tbody tr")]
            assert after == sorted(nums)
            assert th.get_attribute("aria-sort") == "ascending"
            th.click()
            assert th.get_attribute("aria-sort") == "descending"
            sorted_one = True
            break
        if sorted_one:
            break
    assert sorted_one, "no numeric column found to sort"


def test_print_puts_summary_on_page_one_and_opens_details(reports, browser, tmp_path):
    d = _open(browser, reports["binary"])
    d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    try:
        assert d.execute_script(
            "return getComputedStyle(document.querySelector('nav.toc')).display") == "none"
        bottom = d.execute_script(
            "return document.getElementById('summary').getBoundingClientRect().bottom")
        assert bottom < 11.7 * 96  # fits on the first A4 page
    finally:
        d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    d.execute_script("window.dispatchEvent(new Event('beforeprint'))")
    assert all(det.get_attribute("open") is not None
               for det in d.find_elements("tag name", "details"))
    pdf = base64.b64decode(d.execute_cdp_cmd("Page.printToPDF", {"printBackground": True})["data"])
    assert pdf.startswith(b"%PDF") and pdf.count(b"/Type /Page") >= 2
    (tmp_path / "report.pdf").write_bytes(pdf)


def _page_size(driver, path: Path, width: int) -> tuple[int, int]:
    """``(scrollWidth, scrollHeight)`` of the report at a viewport ``width`` px wide (a phone
    below 500 px), the details closed as a reader finds them."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": SCREEN, "deviceScaleFactor": 1, "mobile": width < 500})
    try:
        _open(driver, path)
        return tuple(driver.execute_script(
            "var e = document.documentElement; return [e.scrollWidth, e.scrollHeight];"))
    finally:
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


@pytest.mark.parametrize("name", ["hostile", "binary"])
def test_page_fits_a_phone_and_eight_screens(reports, browser, name):
    width, _ = _page_size(browser, reports[name], 390)
    assert width <= 390, f"the page is {width} px wide on a 390 px phone"
    _, height = _page_size(browser, reports[name], 1300)
    assert height <= SCREENS * SCREEN, f"the page is {height} px long at 1,300 px wide"


def test_tables_scroll_in_their_box_and_figures_scale(reports, browser):
    d = browser
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": 390, "height": SCREEN, "deviceScaleFactor": 1, "mobile": True})
    try:
        _open(d, reports["hostile"])
        d.execute_script("document.querySelectorAll('details').forEach("
                         "function (x) { x.open = true; })")
        page = d.execute_script("return document.documentElement.clientWidth")
        boxes = d.execute_script("""
            return Array.from(document.querySelectorAll('.tablewrap')).map(function (w) {
              return [w.getBoundingClientRect().right, w.scrollWidth > w.clientWidth,
                      getComputedStyle(w).overflowX]; });""")
        assert boxes and all(right <= page + 0.5 for right, _, _ in boxes)
        assert any(wide for _, wide, _ in boxes)  # some table is wider than a phone: it scrolls
        assert all(overflow == "auto" for _, wide, overflow in boxes if wide)
        figures = d.execute_script("""
            return Array.from(document.querySelectorAll('figure svg')).map(function (f) {
              return f.getBoundingClientRect().right; });""")
        assert figures and max(figures) <= page + 0.5
        assert d.execute_script("return document.documentElement.scrollWidth") <= page
    finally:
        d.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_detail_is_folded_and_the_key_figure_shown(reports, browser):
    d = _open(browser, reports["hostile"])
    sections = d.find_elements("css selector", "section.report-section")
    assert len(sections) >= 5
    for sec in sections:
        more = sec.find_elements("css selector", ":scope > details.section-more")
        assert all(m.get_attribute("open") is None for m in more)
        if sec.get_attribute("id") in ("resampling", "compare", "replicate", "generalize"):
            figure = sec.find_element("css selector", ":scope > figure")
            assert figure.is_displayed()
