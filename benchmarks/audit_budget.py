"""The audit's time budget: any table up to 20,000 rows and 200 encoded columns in 60 s.

Runs ``replikit audit --data FILE --target COL [--study COL]`` as a whole process (the default
six models, one worker per core) on the tables that were slow before the audit planned its time
(docs/performance.md, "How the audit budgets its time"), and prints each wall time against the
goal of 60 s on a 2-core machine (with the CPU seconds of all its processes, which a loaded
machine inflates less), the expected time the audit printed before any fit, and what the time
budget changed (the report's data notes):

- ``gapminder``: 1,704 rows, a 142-level ``country`` column (145 encoded columns), target
  ``lifeExp``, study ``continent``;
- ``wage``: the ISLR Wage survey, 3,000 rows, target ``wage``, no study;
- ``synthetic-regression`` / ``synthetic-classification``: 20,000 rows x 200 encoded columns
  made here (:func:`synthetic`): 20 numeric columns and categoricals of 100, 50, 30 and 4
  levels (180 dummy columns), ten sites as studies.

gapminder and Wage are not shipped: give their CSV files with ``--gapminder`` and ``--wage``
(R's ``gapminder::gapminder`` and ``ISLR::Wage`` written with ``write.csv``); a table not
given is skipped. No tool does this work, so the anchor is the goal.

Run: ``.venv/bin/python benchmarks/audit_budget.py [--gapminder FILE] [--wage FILE]
[--only NAME ...]`` (several minutes: each table is one whole audit; not in ``make bench``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from _timing import bench_row  # benchmarks/_timing.py

GOAL_SECONDS = 60.0


def synthetic(task: str, *, n: int = 20_000, seed: int = 0) -> pd.DataFrame:
    """A table of ``n`` rows that encodes to 200 columns: 20 numeric features, categoricals
    of 100, 50, 30 and 4 levels (99 + 49 + 29 + 3 dummies) and a ``site`` study column of ten
    sites; the outcome depends on a few numeric columns, on the levels of the two largest
    categoricals and on the site (``y``: continuous, or two classes for classification)."""
    rng = np.random.default_rng(seed)
    num = rng.normal(size=(n, 20))
    frame = pd.DataFrame(num, columns=[f"x{i:02d}" for i in range(20)])
    signal = num[:, 0] + 0.5 * num[:, 1] - 0.5 * num[:, 2] * num[:, 3]
    for name, levels in (("region", 100), ("occupation", 50), ("school", 30), ("tier", 4)):
        # skewed level frequencies, as real categoricals have
        p = rng.dirichlet(np.full(levels, 0.7))
        codes = rng.choice(levels, size=n, p=p)
        frame[name] = [f"{name}{c:03d}" for c in codes]
        if levels >= 50:
            signal += 0.8 * rng.normal(size=levels)[codes]
    site = rng.integers(0, 10, size=n)
    frame["site"] = [f"site{s}" for s in site]
    signal += 0.3 * rng.normal(size=10)[site]
    noise = rng.normal(size=n)
    if task == "classification":
        frame["y"] = np.where(signal + noise > np.median(signal), "yes", "no")
    else:
        frame["y"] = signal + noise
    return frame


def run_audit(path: Path, target: str, study: str | None, out: Path) -> dict:
    """One whole-process audit: wall seconds, the expected-time line, the report's meta."""
    exe = Path(sys.executable).with_name("replikit")
    cmd = [str(exe), "audit", "--data", str(path), "--target", target, "--out", str(out),
           "--overwrite", *(["--study", study] if study else [])]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    expected = next((line for line in proc.stderr.splitlines()
                     if line.startswith("expected time")), "")
    meta = json.loads((out / "report.json").read_text())["meta"]
    return {"wall": wall, "cpu": cpu, "expected": expected, "meta": meta}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gapminder", type=Path, help="gapminder CSV (target lifeExp)")
    parser.add_argument("--wage", type=Path, help="ISLR Wage CSV (target wage)")
    parser.add_argument("--only", nargs="*", help="names of the tables to run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        tables = []
        if args.gapminder:
            tables.append(("gapminder", args.gapminder, "lifeExp", "continent"))
        if args.wage:
            tables.append(("wage", args.wage, "wage", None))
        for task in ("regression", "classification"):
            path = tmp / f"synthetic-{task}.csv"
            synthetic(task).to_csv(path, index=False)
            tables.append((f"synthetic-{task}", path, "y", "site"))
        for name, path, target, study in tables:
            if args.only and name not in args.only:
                continue
            load = os.getloadavg()[0]  # a loaded machine: read the CPU seconds too
            res = run_audit(path, target, study, tmp / name)
            meta = res["meta"]
            print(f"{name}: {res['wall']:.1f} s whole process ({meta['n_rows']:,} rows), "
                  f"{res['cpu']:.0f} CPU s (all processes; load average before "
                  f"{load:.1f}); goal {GOAL_SECONDS:.0f} s")
            if res["expected"]:
                print(f"  {res['expected']}")
            print("  section seconds:", ", ".join(f"{k} {v:.1f}" for k, v in
                                                  meta["section_seconds"].items()))
            changed = [note for note in meta.get("data_notes", [])
                       if note.startswith("the time budget")]
            for note in changed:
                print(f"  {note}")
            bench_row(f"audit --data {name} (whole process)", "goal", GOAL_SECONDS,
                      res["wall"], "models changed by the time budget" if changed
                      else "default models unchanged")


if __name__ == "__main__":
    main()
