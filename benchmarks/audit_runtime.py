"""The default audit's runtime and the fits it makes, against its goal of 60 s on 2 cores.

Runs ``replikit audit`` as a new user does — the default example (ANES, 13,440 rows, 10
surveys), the default six models, every row, one worker per core — as a whole process, and
prints the wall time against the goal of 60 s on a 2-core machine, the seconds of each section
and the fit sets of ``report.json`` (``meta.fit_sets``: fits, models, rows fitted; made once
and shared by the sections). No tool does this work, so the anchor is the goal.

Measured (2-core machine, 2026-11-23): before the fits were shared and made on every row
(main at 24671a3) the audit made 1,300 scikit-learn fits on row subsamples (compare 400 of
13,440 rows, resampling 1,500, replicate 1,000 per study, per-study scores 800) in 71-89 s
serially; see docs/performance.md for the table after.

Run: ``.venv/bin/python benchmarks/audit_runtime.py [--example anes] [--quick]``
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import bench_row  # benchmarks/_timing.py

GOAL_SECONDS = 60.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--example", default="anes")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    exe = Path(sys.executable).with_name("replikit")
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [str(exe), "audit", "--example", args.example, "--out", tmp, "--overwrite",
               *(["--quick"] if args.quick else [])]
        start = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        meta = json.loads((Path(tmp) / "report.json").read_text())["meta"]
    fits = meta.get("fit_sets", {})
    total = sum(f["fits"] for f in fits.values())
    print(f"replikit audit --example {args.example}{' --quick' if args.quick else ''}: "
          f"{wall:.1f} s whole process ({meta['n_rows']:,} rows)")
    print("section seconds:", ", ".join(f"{k} {v:.1f}" for k, v in
                                        meta["section_seconds"].items()))
    for name, f in fits.items():
        print(f"  fit set {name}: {f['fits']} fits of {', '.join(f['models'])}, "
              f"{f['rows_fitted']:,} rows fitted, {meta.get('fit_seconds', {}).get(name, 0):.1f} s")
    print(f"  shared fit sets: {total} fits (the resampling bootstrap and the multistudy rules "
          "fit besides, see docs/performance.md)")
    bench_row(f"audit --example {args.example}{' --quick' if args.quick else ''} (all rows, "
              "whole process)", "goal", GOAL_SECONDS, wall,
              f"{total} fits in the shared sets")


if __name__ == "__main__":
    main()
