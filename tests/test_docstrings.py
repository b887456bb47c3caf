"""numpydoc docstrings on every public function and class (DESIGN.md, API conventions).

Checked with numpydoc's own validator: a summary, every parameter documented with a type and a
description, a Returns section for functions, Examples (run by ``test_doctests.py``) and See
Also. Result classes may list their fields under Attributes instead of Parameters (a user reads
them; a function builds them). Every public function of a capability that computes a
statistical method has a References section: the paper it implements, as Author (Year), in
full. The functions that compute no method (plots, parsers, table helpers) are listed in
``NO_METHOD`` with what they are.
"""

from __future__ import annotations

import dataclasses
import inspect
import re

import pytest

from _checks import public_objects, public_result_types

OBJECTS = public_objects()
RESULTS = set(public_result_types())

#: numpydoc's checks that a public docstring must pass.
CHECKS = {
    "GL08": "no docstring",
    "SS01": "no summary", "SS02": "summary starts lower-case", "SS03": "summary has no period",
    "PR01": "parameters not documented", "PR02": "unknown parameters documented",
    "PR03": "parameters in the wrong order", "PR04": "parameter without type",
    "PR07": "parameter without description",
    "RT01": "no Returns section",
    "EX01": "no Examples section",
    "SA01": "no See Also section",
}

CAPABILITIES = ("replikit.compare", "replikit.replicate", "replikit.multistudy",
                "replikit.generalize", "replikit.resampling")

def _no_method() -> dict[str, str]:
    """Public functions of the capabilities that compute no statistical method (so cite no
    paper), with why: each capability's ``tests/<capability>/test_results_contract.py`` lists
    its own in ``NO_METHOD``."""
    import importlib.util
    import pathlib

    out: dict[str, str] = {}
    for path in sorted(pathlib.Path(__file__).parent.glob("*/test_results_contract.py")):
        spec = importlib.util.spec_from_file_location(f"_nomethod_{path.parent.name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        out.update(getattr(module, "NO_METHOD", {}))
    return out


NO_METHOD = _no_method()


def _attributes(doc: str) -> set[str]:
    match = re.search(r"^Attributes\n-+\n(.*?)(?:^\S[^\n]*\n-+\n|\Z)", doc, re.M | re.S)
    if not match:
        return set()
    names = set()
    for line in match.group(1).splitlines():
        if line and not line.startswith(" "):
            for name in line.split(":")[0].split(","):
                names.add(name.strip())
    return names


@pytest.mark.parametrize("key", sorted(OBJECTS))
def test_numpydoc(key):
    from numpydoc.validate import validate

    public, obj = OBJECTS[key]
    result = validate(key)
    doc = inspect.getdoc(obj) or ""
    errors = []
    for code, message in result["errors"]:
        if code not in CHECKS:
            continue
        if code == "RT01" and inspect.isclass(obj):
            continue
        if code in ("PR01", "PR07", "PR04") and (key in RESULTS or dataclasses.is_dataclass(obj)):
            # a result documents its fields under Attributes (or Parameters)
            if code == "PR01":
                missing = set(re.findall(r"\*?\*?(\w+)", message.split("documented", 1)[0]))
                missing -= {"Parameters", "not"}
                if missing <= _attributes(doc):
                    continue
            else:
                continue
        errors.append(f"{code} {message}")
    assert not errors, f"{public}: " + "; ".join(errors)


@pytest.mark.parametrize("key", sorted(k for k, (_, o) in OBJECTS.items()
                                       if inspect.isfunction(o) and o.__module__.startswith(
                                           CAPABILITIES)))
def test_methods_cite_their_paper(key):
    public, obj = OBJECTS[key]
    if public.rsplit(".", 1)[1] in NO_METHOD or key in NO_METHOD:
        return
    doc = inspect.getdoc(obj) or ""
    assert re.search(r"^References\n-+\n", doc, re.M), \
        f"{public} has no References section (or list it in NO_METHOD with why)"
    refs = doc.split("References", 1)[1]
    assert re.search(r"\(\d{4}[a-z]?\)", refs), f"{public}: References cite no Author (Year)"
