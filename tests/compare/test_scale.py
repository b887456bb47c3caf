"""compare_scores at scale: memory, not time.

A too-large comparison is refused before the work with a clear error naming what to reduce
(``REPLIKIT_MEMORY_LIMIT`` caps the memory probe to provoke it cheaply), and a million-row
Scores table is compared within a bounded amount of memory (slow: a subprocess).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest


def _scores(n_studies: int, n_models: int, n_repeats: int = 10, n_folds: int = 10):
    rng = np.random.default_rng(0)
    shape = (n_studies, n_models, n_repeats, n_folds)
    st, mo, rep, fo = np.meshgrid(*(np.arange(n) for n in shape), indexing="ij")
    value = 0.8 + 0.005 * mo + rng.normal(0.0, 0.02, size=shape)
    return pd.DataFrame({
        "study": np.array([f"s{s:04d}" for s in range(n_studies)])[st.ravel()],
        "model": np.array([f"m{m}" for m in range(n_models)])[mo.ravel()],
        "repeat": rep.ravel(), "fold": fo.ravel(), "metric": "accuracy",
        "value": value.ravel(), "n_train": 900, "n_test": 100})


def test_cli_too_large_is_a_clear_error(tmp_path, cli, monkeypatch):
    path = tmp_path / "scores.csv"
    _scores(3, 4, 2, 5).to_csv(path, index=False)
    monkeypatch.setenv("REPLIKIT_MEMORY_LIMIT", "2K")
    code, out, err = cli("compare", path)
    assert code == 2, err
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.startswith("replikit: error:")]
    assert len(lines) == 1 and "memory" in lines[0] and "reduce" in lines[0], err


@pytest.mark.slow
def test_million_rows_bounded_memory(tmp_path):
    # 1,000 studies x 10 models x 10x10 CV = 1,000,000 rows (75 MiB in memory): the comparison
    # (90,000 tests) adds about 200 MiB to the process (measured 2026-11-23); 1 GiB is the bound
    path = tmp_path / "scores.parquet"
    _scores(1000, 10).to_parquet(path, index=False)
    code = textwrap.dedent(f"""
        import json, resource
        import pandas as pd
        from replikit.compare import compare_scores
        df = pd.read_parquet({str(path)!r})
        compare_scores(df.head(2000))
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        res = compare_scores(df)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps({{"rows": len(df), "tests": len(res.frame),
                           "grown_kib": after - before}}))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["rows"] == 1_000_000 and got["tests"] == 90_000
    assert got["grown_kib"] < 1024 * 1024, got
