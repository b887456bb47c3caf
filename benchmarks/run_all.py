"""``make bench``: run every benchmark script and print one table of their ``BENCH`` lines.

Each ``benchmarks/[!_]*.py`` script (but this one) runs in its own process with this
interpreter and its default (short) arguments, under a per-script timeout; while they run only
a one-line status per script is printed (on stderr). The ``BENCH`` lines the scripts print via
:func:`_timing.bench_row` are gathered into one Markdown table — task, anchor (the tool people
use today, timed on the same work in the same process, or ``goal``), anchor time, replikit time
and the ratio anchor / replikit (for a ``goal`` row: whether replikit is within the goal) —
followed by the machine it was measured on. A script that fails or times out is a row of its
own; a script that prints no ``BENCH`` line is listed as "no bench_row yet".

Run: python benchmarks/run_all.py [--out FILE [--overwrite]] [--timeout 180] [--budget 580]
[--only NAME ...]

``--budget`` keeps ``make bench`` under 10 minutes whatever the scripts do: a script gets at
most the time left, and once the budget is spent the remaining scripts are listed as not run.

The table goes to stdout; with ``--out`` also to FILE (an existing FILE is refused unless
``--overwrite``, as every replikit output).
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _timing import BENCH_PREFIX  # noqa: E402

#: Scripts too long for ``make bench`` (run by hand, see their docstrings): listed in the
#: status table as not run unless named with ``--only``.
MANUAL = {"audit_scale.py": "the audit at 100,000-1,000,000 rows: minutes to hours; run by "
                            "hand (docs/performance.md)",
          "generalize_nstar_few_models.py": "calibration of n*'s interval with few models, not "
                                            "speed; its table is in docs/generalize.md",
          "survival_cv_coverage.py": "coverage of the interval of a cross-validated C-index, "
                                     "not speed (about an hour); its table is in "
                                     "docs/survival.md"}


def _scripts(only: list[str] | None) -> list[Path]:
    me = Path(__file__).resolve().name
    found = sorted(p for p in HERE.glob("[!_]*.py") if p.name != me)
    if only:
        found = [p for p in found if p.stem in only or p.name in only]
    return found


def _run(script: Path, timeout: float) -> dict:
    start = time.perf_counter()
    # its own process group: a timeout kills the script and every process it started (a
    # script's child left running would load the machine for the scripts timed after it)
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=HERE.parent,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return {"script": script.name, "status": f"timed out after {timeout:.0f} s",
                "seconds": time.perf_counter() - start, "rows": _rows(out or ""), "ok": False}
    seconds = time.perf_counter() - start
    rows = _rows(stdout)
    if proc.returncode != 0:
        last = (stderr.strip().splitlines() or ["(no stderr)"])[-1]
        status = f"failed (exit {proc.returncode}): {last[:160]}"
    else:
        status = f"{len(rows)} bench row(s)" if rows else "no bench_row yet"
    return {"script": script.name, "status": status, "seconds": seconds, "rows": rows,
            "ok": proc.returncode == 0}


def _rows(stdout: str) -> list[tuple]:
    rows = []
    for line in stdout.splitlines():
        if line.startswith(BENCH_PREFIX):
            parts = line[len(BENCH_PREFIX):].split("\t")
            parts += [""] * (5 - len(parts))
            task, anchor, a, r, note = parts[:5]
            try:
                a_s, r_s = float(a), float(r)
            except ValueError:
                a_s = r_s = float("nan")
            rows.append((task, anchor, a_s, r_s, note))
    return rows


def _secs(s: float) -> str:
    if s != s:  # NaN
        return "-"
    if s >= 1:
        return f"{s:.2f} s"
    return f"{1e3 * s:.1f} ms" if s >= 1e-3 else f"{1e6 * s:.0f} us"


def _ratio(anchor: str, a: float, r: float) -> str:
    if a != a or r != r or r <= 0:
        return "-"
    if anchor.strip().lower() == "goal":
        return f"within goal: {'yes' if r <= a else 'no'} ({a / r:.2f}x)"
    return f"{a / r:.2f}x"


def machine() -> list[str]:
    """CPU model, cores, RAM, Python and the numeric stack's versions, date (UTC)."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    ram = "?"
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    ram = f"{int(line.split()[1]) / 1024 ** 2:.1f} GiB"
                    break
    except OSError:
        pass
    versions = []
    for mod in ("numpy", "scipy", "sklearn", "pandas"):
        try:
            versions.append(f"{mod} {__import__(mod).__version__}")
        except ImportError:
            versions.append(f"{mod} (not installed)")
    try:
        from importlib.metadata import version
        versions.insert(0, f"replikit {version('replikit')}")
    except Exception:  # noqa: BLE001 - an uninstalled tree still gets a table
        pass
    return [f"CPU: {cpu}; {os.cpu_count()} cores; RAM {ram}",
            f"Python {platform.python_version()} ({platform.system()}); {', '.join(versions)}",
            f"Date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC"]


def table(results: list[dict]) -> str:
    lines = ["| task | anchor | anchor time | replikit time | ratio (anchor / replikit) |"
             " script |",
             "|---|---|---:|---:|---|---|"]
    for res in results:
        for task, anchor, a, r, note in res["rows"]:
            t = f"{task} ({note})" if note else task
            lines.append(f"| {t} | {anchor} | {_secs(a)} | {_secs(r)} | "
                         f"{_ratio(anchor, a, r)} | {res['script']} |")
        if not res["ok"]:
            lines.append(f"| — | — | — | — | {res['status']} | {res['script']} |")
        elif not res["rows"]:
            status = res["status"] if res.get("manual") else "no bench_row yet"
            lines.append(f"| — | — | — | — | {status} | {res['script']} |")
    lines.append("")
    lines.append("| script | wall time | status |")
    lines.append("|---|---:|---|")
    for res in results:
        lines.append(f"| {res['script']} | {res['seconds']:.1f} s | {res['status']} |")
    lines.append("")
    lines += [f"- {m}" for m in machine()]
    lines.append(f"- Total: {sum(r['seconds'] for r in results):.0f} s for {len(results)} "
                 "scripts (default runs)")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, help="also write the Markdown table to this file")
    ap.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per script")
    ap.add_argument("--budget", type=float, default=580.0,
                    help="seconds for all scripts (make bench stays under 10 minutes): a "
                    "script gets at most what is left, and none starts once it is spent")
    ap.add_argument("--only", nargs="+", help="run only these scripts (stem or file name)")
    args = ap.parse_args(argv)
    if args.out is not None and args.out.exists() and not args.overwrite:
        print(f"run_all: --out {str(args.out)!r} exists; pass --overwrite to replace it.",
              file=sys.stderr)
        return 2
    scripts = _scripts(args.only)
    results = []
    start = time.perf_counter()
    for i, script in enumerate(scripts, 1):
        if script.name in MANUAL and not args.only:
            results.append({"script": script.name, "seconds": 0.0, "rows": [], "ok": True,
                            "manual": True,
                            "status": f"not run by make bench: {MANUAL[script.name]}"})
            continue
        left = args.budget - (time.perf_counter() - start)
        if left < 5:
            results.append({"script": script.name, "seconds": 0.0, "rows": [], "ok": False,
                            "status": f"not run: the {args.budget:.0f} s budget was spent"})
            print(f"[{i}/{len(scripts)}] {script.name}: not run (budget spent)",
                  file=sys.stderr, flush=True)
            continue
        print(f"[{i}/{len(scripts)}] {script.name} ...", end="", file=sys.stderr, flush=True)
        res = _run(script, min(args.timeout, left))
        print(f" {res['seconds']:.1f} s, {res['status']}", file=sys.stderr, flush=True)
        results.append(res)
    text = table(results)
    print(text, end="")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.out.with_name(args.out.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, args.out)
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
