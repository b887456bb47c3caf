"""``replikit meta --measure``: reported statistics converted on the way in, as metafor's escalc.

Reference: metafor 5.1-12 on Molloy et al. (2014)'s correlations (``dat.molloy2014``), REML
iterated to convergence:

    dat <- escalc("ZCOR", ri=ri, ni=ni, data=dat.molloy2014)
    res <- rma(yi, vi, data=dat, method="REML", control=list(threshold=1e-12, maxiter=10000))
    pr <- predict(res, transf=transf.ztor)
    sprintf("%.15g", c(res$beta, res$tau2, pr$pred, pr$ci.lb, pr$ci.ub))
"""

from __future__ import annotations

import json

import pandas as pd
import pytest

#: Molloy, G. J., O'Carroll, R. E. & Ferguson, E. (2014). Conscientiousness and medication
#: adherence: a meta-analysis. Annals of Behavioral Medicine, 47(1), 92-101 (metadat's
#: ``dat.molloy2014``): correlation ri and sample size ni of 16 studies.
MOLLOY = pd.DataFrame({
    "study": [f"study {i + 1}" for i in range(16)],
    "ni": [109, 749, 55, 107, 72, 65, 174, 326, 58, 771, 56, 91, 116, 537, 158, 65],
    "ri": [0.187, 0.162, 0.340, 0.320, 0.270, 0.000, 0.175, 0.050, 0.260, 0.010, -0.090,
           0.370, 0.000, 0.150, 0.240, 0.040],
})

#: z-scale estimate and tau2 (the same as with test="knha"); the Wald CI back-transformed
Z, TAU2 = 0.1499171485175, 0.00810956082430392


@pytest.fixture
def molloy(tmp_path):
    path = tmp_path / "molloy.csv"
    MOLLOY.to_csv(path, index=False)
    return path


def test_zcor_matches_metafor(cli, molloy):
    code, out, err = cli("meta", molloy, "--measure", "ZCOR", "--estimate", "ri", "--n", "ni",
                         "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    result = data["result"][0] if isinstance(data["result"], list) else data["result"]
    assert result["estimate"] == pytest.approx(Z, rel=1e-7)
    assert result["tau2"] == pytest.approx(TAU2, rel=1e-7)
    back = data["back_transformed"]
    assert back["statistic"] == "r"
    assert back["estimate"] == pytest.approx(0.148804017690012, rel=1e-7)
    assert "ZCOR" in err  # the conversion is said on stderr


def test_human_output_says_the_back_transform(cli, molloy):
    code, out, _ = cli("meta", molloy, "--measure", "zcor", "--estimate", "ri", "--n", "ni")
    assert code == 0
    assert "Back-transformed to r" in out


@pytest.mark.parametrize("args, flag", [
    (["--measure", "ZCOR", "--estimate", "rr", "--n", "ni"], "`--estimate`"),
    (["--measure", "ZCOR", "--estimate", "ri"], "`--n`"),
    (["--n", "ni"], "`--n`"),
    (["--measure", "ZCOR", "--estimate", "ri", "--n", "ni", "--effect", "ri"], "`--effect`"),
    (["--measure", "XYZ", "--n", "ni"], "`--measure`"),
    (["--measure", "AUC", "--estimate", "ri", "--n", "ni"], "`--n-pos`"),
])
def test_errors_are_one_line_naming_the_flag(cli, molloy, args, flag):
    code, _, err = cli("meta", molloy, *args)
    assert code == 2
    lines = [ln for ln in err.splitlines() if ln.startswith("replikit: error:")]
    assert len(lines) == 1 and flag in lines[0], err
    assert "Traceback" not in err
