"""Count what "one result, one vocabulary, plain words" measures, on the installed package.

    python tools/api_census.py            # a table of the counts
    python tools/api_census.py --list     # ... and every offending name and line

The counts (the same script gives the before and after of the refactor):

* public classes: every class in the ``__all__`` of a public module of replikit;
  result types: the public classes that an analysis returns (dataclasses that are not schemes,
  kernels, utilities, configurations or table containers; the list is printed with ``--list``);
  on the base: subclasses of ``replikit.results.Result`` (or ``TestResult`` before it existed);
  ``_repr_html_``, ``plot``, ``to_frame``, ``to_dict``: result types that have them;
* ``confidence_interval`` implementations: ``def confidence_interval`` in src;
* vocabulary breaks: parameters of public functions and classes whose name the vocabulary table
  of DESIGN.md forbids (``ci``, ``boot_interval``, ``seed``, ``n_splits`` ...) or which carry a
  CLI option (``option``/``options``), and ``method`` where it does not choose an estimator;
* import cycles: strongly connected components of the module import graph of src (imports
  inside functions included);
* "seed 00N" and "issue N" lines in src;
* docstring sections of public functions and classes: Examples, References, See Also.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import importlib
import inspect
import pathlib
import re
import sys

import replikit

SRC = pathlib.Path(replikit.__file__).parent
PUBLIC_MODULES = [
    "replikit", "replikit.errors", "replikit.results", "replikit.methods", "replikit.data", "replikit.data.examples",
    "replikit.experiment", "replikit.resampling", "replikit.compare", "replikit.replicate",
    "replikit.multistudy", "replikit.generalize", "replikit.report",
]
# Public classes that are inputs, configurations or building blocks, not results.
NOT_RESULTS = re.compile(
    r"^(Resubstitution|HoldOut|RepeatedKFold|LeaveOneOut|FiveByTwo|Bootstrap|LeaveOneStudyOut|"
    r"CrossStudy|StudyHoldOut|StudyPlan|SplitBlock|Split|StudySpec|PreparedStudy|RankingSample|"
    r"HoldOutCV|LabeledFolds|Scores|Predictions|TaskStore|MultiStudyData|Section|Paragraph|"
    r"Callout|KeyValues|Table|Figure|SectionOutput|AuditContext|Paired|Example)$"
    r"|(Error|Warning|Scheme|Kernel|Utility|Method|Interval|Display)$")
# Forbidden parameter names (DESIGN.md, vocabulary) -> the name to use.
FORBIDDEN = {
    "ci": "interval", "boot_interval": "interval", "ci_method": "interval",
    "ci_resamples": "n_resamples", "n_samples": "n_resamples", "n_boot": "n_resamples",
    "B": "n_resamples", "n_bootstrap": "n_resamples", "n_permutations": "n_resamples", "n_perm": "n_resamples",
    "seed": "random_state", "rng": "random_state",
    "n_splits": "n_folds", "k_folds": "n_folds",
    "n_repetitions": "n_repeats", "n_replications": "n_repeats",
    "credibility": "confidence_level", "ci_level": "confidence_level",
    "margin": "tolerance", "delta": "tolerance", "rope": "tolerance",
    "lower_is_better": "higher_is_better", "p_value": "pvalue",
    "option": "(CLI only)", "options": "(CLI only)", "pval": "pvalue", "p": "pvalue",
}
# Functions whose `method` parameter chooses an estimator/algorithm (the vocabulary's meaning);
# a result's `method` field names the method that made it, which is that meaning too.
METHOD_OK = {
    "estimate_error", "estimate_errors", "r2_se", "r2_confidence_interval", "from_folds",
    "from_predictions", "from_summary", "permutation_test", "adjust_pvalues",
    "optimal_threshold", "partial_conjunction", "replicated_in",
}


def public_objects():
    seen = {}
    for name in PUBLIC_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError:  # an older tree without this module
            continue
        for attr in getattr(module, "__all__", []):
            obj = getattr(module, attr, None)
            if obj is None or inspect.ismodule(obj):
                continue
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            key = f"{obj.__module__}.{obj.__qualname__}"
            seen.setdefault(key, (f"{name}.{attr}", obj))
    return seen


def result_base():
    from replikit import results

    return getattr(results, "Result", None) or results.TestResult


def signature_params(obj):
    target = obj.__init__ if inspect.isclass(obj) else obj
    try:
        return list(inspect.signature(target).parameters)
    except (TypeError, ValueError):
        return []


#: Flags that break the vocabulary (DESIGN.md: a flag is its parameter's name with dashes).
OLD_FLAGS = {"--seed", "--rope", "--margin", "--delta", "--epsilon", "--tau2", "--ci",
             "--resamples", "--ci-resamples", "--folds", "-K", "--repeats", "--replications",
             "--repetitions", "-R", "-m", "--cv", "--jobs", "--datasets", "--rows", "--studies",
             "--n", "--experiments", "--pi"}


def cli_flag_breaks():
    """``command: flag`` for every old-vocabulary flag a command still declares (``meta
    --method`` chose the τ² estimator: counted too)."""
    try:
        import typer.main

        from replikit.cli import app
    except ImportError:  # pragma: no cover
        return []
    out = []

    def walk(node, path):
        subs = getattr(node, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, [*path, name])
            return
        for param in node.params:
            for opt in [*getattr(param, "opts", []), *getattr(param, "secondary_opts", [])]:
                if opt in OLD_FLAGS or (path == ["meta"] and opt == "--method"):
                    out.append(f"{' '.join(path)}: {opt}")

    walk(typer.main.get_command(app), [])
    return out


def import_graph():
    graph = {}
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC.parent).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mod = ".".join(parts)
        package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                names = [f"{target}.{a.name}" for a in node.names]
                deps.update(n for n in names)
                deps.add(target)
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names)
        graph[mod] = deps
    mods = set(graph)
    return {m: {d for d in deps if d in mods and d != m} for m, deps in graph.items()}


def cycles(graph):
    """Import cycles between siblings, as import-linter's ``acyclic_siblings`` sees them: in
    every package, its direct children (a subpackage standing for all its modules) and an
    edge A -> B when any module under A imports any module under B. Returns the strongly
    connected components of more than one sibling (Tarjan)."""
    packages = {m.rsplit(".", 1)[0] for m in graph if "." in m}
    out = []
    for package in sorted(packages):
        depth = package.count(".") + 1

        def sibling(module, package=package, depth=depth):
            if not module.startswith(package + "."):
                return None
            return ".".join(module.split(".")[:depth + 1])

        nodes = {sibling(m) for m in graph} - {None}
        edges = {n: set() for n in nodes}
        for m, deps in graph.items():
            a = sibling(m)
            if a is None:
                continue
            for d in deps:
                b = sibling(d)
                if b is not None and b != a:
                    edges[a].add(b)
        out += _scc(edges)
    return out


def _scc(edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def grep(pattern):
    rx = re.compile(pattern)
    hits = []
    for path in sorted(SRC.rglob("*")):
        if path.suffix not in {".py", ".html", ".j2", ".css", ".md"}:
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if rx.search(line):
                hits.append(f"{path.relative_to(SRC)}:{i}: {line.strip()}")
    return hits


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args(argv)
    objs = public_objects()
    classes = {k: o for k, (n, o) in objs.items() if inspect.isclass(o)}
    results = {k: o for k, o in classes.items()
               if dataclasses.is_dataclass(o) and not NOT_RESULTS.search(o.__name__)}
    base = result_base()
    on_base = [k for k, o in results.items() if issubclass(o, base)]
    has = {attr: [k for k, o in results.items() if hasattr(o, attr)]
           for attr in ("_repr_html_", "plot", "to_frame", "to_dict", "confidence_interval")}
    ci_defs = grep(r"def confidence_interval\(")
    breaks = []
    for _key, (name, obj) in objs.items():
        for p in signature_params(obj):
            if p in FORBIDDEN:
                breaks.append(f"{name}({p}=) -> {FORBIDDEN[p]}")
            if (p == "method" and inspect.isfunction(obj)
                    and obj.__name__ not in METHOD_OK):
                breaks.append(f"{name}(method=) -> a specific name")
    flag_breaks = cli_flag_breaks()
    cyc = cycles(import_graph())
    seeds = grep(r"[Ss]eeds? 00[0-4]|\b00[0-4]\b.*paper|seed-00[0-4]")
    issues = grep(r"[Ii]ssues? [0-9]+|\(#[0-9]+\)")
    documented = {}
    for _key, (name, obj) in objs.items():
        doc = inspect.getdoc(obj) or ""
        documented[name] = doc
    n = len(documented)
    sections = {s: sum(bool(re.search(rf"^{s}\n-+", d, re.M)) for d in documented.values())
                for s in ("Examples", "References", "See Also", "Parameters", "Returns")}
    rows = [
        ("public classes", len(classes)),
        ("result types", len(results)),
        (f"result types on the base ({base.__name__})", len(on_base)),
        ("result types with _repr_html_", len(has["_repr_html_"])),
        ("result types with plot()", len(has["plot"])),
        ("result types with to_frame()", len(has["to_frame"])),
        ("result types with to_dict()", len(has["to_dict"])),
        ("`def confidence_interval` implementations", len(ci_defs)),
        ("vocabulary breaks in public signatures", len(breaks)),
        ("vocabulary breaks in command-line flags", len(flag_breaks)),
        ("import cycles (modules in them)", f"{len(cyc)} ({sum(map(len, cyc))})"),
        ('"seed 00N" lines in src', len(seeds)),
        ('"issue N" lines in src', len(issues)),
        ("public functions and classes", n),
    ]
    rows += [(f"  with {s}", f"{v} ({100 * v / max(n, 1):.0f}%)") for s, v in sections.items()]
    width = max(len(r[0]) for r in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value}")
    if args.list:
        print("\nresult types not on the base:",
              *sorted(set(results) - set(on_base)), sep="\n  ")
        print("\nvocabulary breaks:", *sorted(breaks), sep="\n  ")
        print("\nflag breaks:", *flag_breaks, sep="\n  ")
        print("\ncycles:", *cyc, sep="\n  ")
        print("\nseed lines:", *seeds[:400], sep="\n  ")
        print("\nissue lines:", *issues, sep="\n  ")
        for s in ("Examples", "References", "See Also"):
            missing = [k for k, d in documented.items() if not re.search(rf"^{s}\n-+", d, re.M)]
            print(f"\nwithout {s} ({len(missing)}):", *sorted(missing), sep="\n  ")


if __name__ == "__main__":
    main()
