"""Quick reports shared by the report's tests: written once per session by ``run_audit`` on
two small datasets that between them run every section — ``hostile``, a continuous outcome
over five sites whose labels are markup, script and bidi overrides (the replication and the
generalizability sections run), and ``binary``, a two-class outcome over eight studies."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

# Labels a careless template would turn into markup; each sets window.__pwned if executed.
HOSTILE = ['<script>window.__pwned=1</script>', '"><img src=x onerror="window.__pwned=2">',
           "<svg onload=window.__pwned=3>", "s\u202etxt.exe"]


def hostile_data(n_per=60) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    frames = []
    for i, label in enumerate(HOSTILE + ["plain"]):
        X = rng.normal(size=(n_per, 3))
        y = X @ [0.8, -0.4, 0.2] + 0.3 * i + rng.normal(size=n_per)
        frames.append(pd.DataFrame({"<b>a</b>": X[:, 0], "b\"'": X[:, 1], "c": X[:, 2],
                                    "y": y, "site": label}))
    return pd.concat(frames, ignore_index=True)


def binary_data() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    logit = X[:, 0] - 0.5 * X[:, 1]
    frame = pd.DataFrame(X, columns=list("abcd"))
    frame["y"] = (rng.random(400) < 1 / (1 + np.exp(-logit))).astype(int)
    frame["study"] = np.repeat([f"s{i}" for i in range(8)], 50)
    return frame


@pytest.fixture(scope="session")
def quick_reports(tmp_path_factory):
    """``{"hostile": path, "binary": path}`` of two quick reports' ``report.html``."""
    import fcntl
    import os

    from replikit.data.userdata import dataset_from_frame
    from replikit.report import run_audit

    # under pytest-xdist the workers share one set (the run's common temporary directory; the
    # first worker writes it under a lock, the others read it): the reports are bit-identical
    # for the same random state, so it does not matter who writes them
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent
    base = root / "quick-reports"
    base.mkdir(exist_ok=True)
    out = {"hostile": base / "hostile" / "report.html", "binary": base / "binary" / "report.html"}
    with open(base / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (base / "done").exists():
            ds = dataset_from_frame(hostile_data(), target="y", study="site",
                                    name="<i>hostile</i>")
            run_audit(ds, base / "hostile", quick=True, random_state=0, overwrite=True)
            ds = dataset_from_frame(binary_data(), target="y", study="study", name="binary")
            run_audit(ds, base / "binary", quick=True, random_state=0, overwrite=True)
            (base / "done").touch()
    return out
