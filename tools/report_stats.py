"""Measure an audit report as a reader meets it (page height, width, screens).

    python tools/report_stats.py replikit-audit/report.html [more reports...] [--shots DIR]

For each report: page height at 1300 px wide and the screens it fills (900 px each), what is
visible before any click (tables, their rows, figures) and what is collapsed, the summary cards
with their states and sentences, and the smallest font size drawn in the figures. Needs
Debian's chromium and chromedriver and selenium (the dev extra).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path

WIDTH, SCREEN = 1300, 900

_JS = """
const vis = e => !e.closest('details:not([open])');
const tables = [...document.querySelectorAll('table')];
const shown = tables.filter(vis);
return {
  height: document.documentElement.scrollHeight,
  tables: tables.length,
  tables_shown: shown.length,
  rows: tables.reduce((n, t) => n + t.tBodies[0]?.rows.length || 0, 0),
  rows_shown: shown.reduce((n, t) => n + (t.tBodies[0]?.rows.length || 0), 0),
  figures: document.querySelectorAll('figure svg').length,
  figures_shown: [...document.querySelectorAll('figure svg')].filter(vis).length,
  details: document.querySelectorAll('details').length,
  cards: [...document.querySelectorAll('#summary a.card')].map(c => [c.dataset.key,
           c.dataset.state]),
};
"""


def _driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = shutil.which("chromium")
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", f"--window-size={WIDTH},{SCREEN}"):
        opts.add_argument(arg)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=opts)


def stats(driver, path: Path, shots: Path | None = None) -> dict:
    driver.set_window_size(WIDTH, SCREEN)
    driver.get(path.resolve().as_uri())
    out = driver.execute_script(_JS)
    out["screens"] = round(out["height"] / SCREEN, 1)
    html = path.read_text(encoding="utf-8")
    sizes = [float(x) for x in re.findall(r"font(?:-size)?: ?(?:[a-z ]*?)([\d.]+)px", html)]
    out["min_figure_font_pt"] = min(sizes) if sizes else None
    doc = json.loads((path.parent / "report.json").read_text(encoding="utf-8"))
    cards = doc.get("summary", {}).get("cards", [])
    out["card_sentences"] = {c["key"]: c["sentence"] for c in cards}
    out["seconds"] = doc["meta"].get("seconds")
    if shots is not None:
        shots.mkdir(parents=True, exist_ok=True)
        driver.set_window_size(WIDTH, min(out["height"] + 100, 30000))
        driver.save_screenshot(str(shots / f"{path.parent.name}.png"))
        driver.set_window_size(WIDTH, SCREEN)
        driver.save_screenshot(str(shots / f"{path.parent.name}-first-screen.png"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path)
    parser.add_argument("--shots", type=Path, default=None)
    args = parser.parse_args()
    driver = _driver()
    try:
        for path in args.reports:
            print(json.dumps({"report": str(path), **stats(driver, path, args.shots)},
                             indent=1, ensure_ascii=False))
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
