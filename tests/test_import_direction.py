"""Imports run one way (DESIGN.md, "Packages" and "From config to a running loop").

Every module under src/rlvr is parsed with `ast` (nothing is imported) and each `import` is
mapped to the rlvr package it names. Imports inside a function ("lazy") and under
`if TYPE_CHECKING:` ("typing") count like module-level ones: they are dependencies all the
same; the failure messages list them apart so that a reader sees which kind broke the rule.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "rlvr"

# The torch-free ground every package may stand on. `registry` / `names`: the one place the
# accepted names of each axis come from (issue 13); listed before the module exists.
GROUND = {"types", "errors", "registry", "names"}
ABOVE_ORCHESTRATE = {"cli", "serve"}

# package -> the rlvr packages it may import: DESIGN.md's table read as a layering.
ALLOWED: dict[str, set[str]] = {
    "types": set(),
    "errors": set(),
    "function_spec": {"errors"},  # "package.module:function" -> the function, torch-free
    "registry": {"types", "errors"},
    "names": {"types", "errors", "registry"},  # the one table of names per axis
    "heartbeat": {"errors"},  # the watchdog's beat: engines and loops call it
    "algo": {"types", "errors", "registry", "names"},  # torch and types only: pure tensor functions
    "models": GROUND,
    "config": GROUND,  # validated settings; knows nothing of how stages work
    "scaling": GROUND,
    "tasks": GROUND | {"config"},
    "rewards": GROUND | {"config"},  # no model code: no models, engines, train, orchestrate
    "engines": GROUND | {"models", "heartbeat"},  # no rewards, no losses, no trainer
    "envs": GROUND | {"engines", "rewards"},  # episodes: an engine's ids, the sandbox, verifiers; no trainer
    "train": GROUND | {"config", "models", "algo"},  # gets an objective; never an engine
    "evaluate": GROUND | {"engines", "rewards", "tasks", "scaling"},  # no training
    "serve": GROUND | {"engines"},  # no training, no cli
    "spec": GROUND,  # a spec file, its checkable domain and the exact judge: no model code
    # rlvr/__init__.py: the Python API's names, imported lazily by their module names (strings,
    # so no edge here): orchestrate.api, config, rewards
    "__init__": set(),
}
# orchestrate wires together every package listed above; cli (parse and call) may import any of them.
ALLOWED["orchestrate"] = set(ALLOWED) - ABOVE_ORCHESTRATE
ALLOWED["cli"] = set(ALLOWED) | {"orchestrate"}

# Third-party imports a package may make beyond the standard library.
THIRD_PARTY_ONLY = {"algo": {"torch"}}
THIRD_PARTY_NEVER = {"rewards": {"transformers", "peft", "vllm", "ray"}}  # model code


@dataclass(frozen=True)
class Edge:
    source: str  # the importing package
    target: str  # the imported top-level name (an rlvr package, or a distribution)
    kind: str  # "eager" | "lazy" (in a function) | "typing" (under TYPE_CHECKING)
    where: str  # file:line

    def __str__(self) -> str:
        return f"{self.source} -> {self.target} ({self.kind}, {self.where})"


def _module_name(path: Path) -> list[str]:
    parts = ["rlvr", *path.relative_to(SRC).with_suffix("").parts]
    return parts[:-1] if parts[-1] == "__init__" else parts


def _imported(node: ast.AST, path: Path) -> list[str]:
    """The dotted names an Import / ImportFrom node brings in (relative ones resolved)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        package = _module_name(path) if path.name == "__init__.py" else _module_name(path)[:-1]
        base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
    # `from rlvr import heartbeat` names the module rlvr.heartbeat, not the package rlvr
    return [f"{base}.{a.name}" for a in node.names] if base == "rlvr" else [base]


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _walk(node: ast.AST, kind: str):
    """(import node, kind) for every import below `node`."""
    for child in ast.iter_child_nodes(node):
        inner = kind
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inner = "lazy" if kind == "eager" else kind
        if isinstance(node, ast.If) and _is_type_checking(node.test) and child in node.body:
            inner = "typing"
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, inner
        yield from _walk(child, inner)


def _package_of(path: Path) -> str:
    """The package a file belongs to; a `__main__.py` is a program (`python -m rlvr.serve`),
    which nothing imports: it stands with the cli, above every package."""
    rel = path.relative_to(SRC)
    if path.name == "__main__.py":
        return "cli"
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def collect_edges() -> list[Edge]:
    edges = []
    for path in sorted(SRC.rglob("*.py")):
        source = _package_of(path)
        for node, kind in _walk(ast.parse(path.read_text(), str(path)), "eager"):
            where = f"{path.relative_to(SRC.parent)}:{node.lineno}"
            for name in _imported(node, path):
                parts = name.split(".")
                target = parts[1] if parts[0] == "rlvr" and len(parts) > 1 else parts[0]
                if target != source:
                    edges.append(Edge(source, target, kind, where))
    return edges


def _module_targets(node: ast.AST, path: Path, modules: set[str]) -> list[str]:
    """The rlvr modules an import names: `from rlvr.a import b` is the module rlvr.a.b when
    there is one, else rlvr.a (b a name in it)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in modules]
    base = node.module or ""
    if node.level:
        package = _module_name(path) if path.name == "__init__.py" else _module_name(path)[:-1]
        base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
    found = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
    return [m for m in found if m in modules]


def collect_module_edges() -> list[Edge]:
    """Module -> module imports inside rlvr (Edge.source and .target are dotted module names)."""
    paths = {".".join(_module_name(p)): p for p in SRC.rglob("*.py")}
    edges = []
    for name, path in sorted(paths.items()):
        for node, kind in _walk(ast.parse(path.read_text(), str(path)), "eager"):
            where = f"{path.relative_to(SRC.parent)}:{node.lineno}"
            edges += [Edge(name, target, kind, where) for target in _module_targets(node, path, set(paths))
                      if target != name]
    return edges


EDGES = collect_edges()
MODULE_EDGES = collect_module_edges()
PACKAGES = {_package_of(p) for p in SRC.rglob("*.py")}
RLVR_EDGES = [e for e in EDGES if e.target in PACKAGES]


def _report(bad: list[Edge]) -> str:
    lines = []
    for kind in ("eager", "lazy", "typing"):
        lines += [f"  [{kind}] {e}" for e in bad if e.kind == kind]
    return "\n".join(lines)


def _cycles(edges: list[Edge]) -> list[list[str]]:
    """Strongly connected components of more than one package (Tarjan's algorithm)."""
    graph: dict[str, set[str]] = {}
    for e in edges:
        graph.setdefault(e.source, set()).add(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_package_has_a_row():
    assert PACKAGES - set(ALLOWED) == set(), "a new package: give it a row in ALLOWED (and DESIGN.md)"


def test_the_walk_sees_all_three_kinds():
    """The parser finds imports of each kind (else the rules below would pass on nothing)."""
    assert {e.kind for e in RLVR_EDGES} == {"eager", "lazy", "typing"}
    assert any(e.source == "orchestrate" and e.target == "train" for e in RLVR_EDGES)


def test_no_cycle_between_packages():
    cycles = _cycles(RLVR_EDGES)
    detail = "\n".join(_report([e for e in RLVR_EDGES if {e.source, e.target} <= set(c)]) for c in cycles)
    assert cycles == [], f"package cycles {cycles}:\n{detail}"


def test_no_cycle_between_modules():
    """No import circle between modules either, inside a package or across: a circle closed
    by a lazy import (one inside a function) is one all the same, only hidden. An import
    under TYPE_CHECKING runs nothing, so a circle it alone closes is not refused here."""
    running = [e for e in MODULE_EDGES if e.kind != "typing"]
    cycles = _cycles(running)
    detail = "\n".join(_report([e for e in running if {e.source, e.target} <= set(c)]) for c in cycles)
    assert cycles == [], f"module cycles {cycles}:\n{detail}"


def test_the_module_walk_resolves_from_imports_to_modules():
    assert Edge("rlvr.orchestrate.batch_builder", "rlvr.orchestrate.batch_steps", "eager",
                "rlvr/orchestrate/batch_builder.py:29") in MODULE_EDGES  # `from rlvr.orchestrate import batch_steps`
    assert any(e.source == "rlvr.orchestrate.plan" and e.target == "rlvr.config" for e in MODULE_EDGES)


def test_each_package_imports_only_what_its_row_allows():
    bad = [e for e in RLVR_EDGES if e.target not in ALLOWED.get(e.source, set())]
    assert bad == [], "imports against the layering of DESIGN.md:\n" + _report(bad)


def test_nothing_below_cli_imports_cli():
    bad = [e for e in RLVR_EDGES if e.target == "cli"]
    assert bad == [], "only cli may import cli:\n" + _report(bad)


def test_only_orchestrate_wires_the_training_parts():
    """The rule as written in the table: outside orchestrate (and the cli above it) no package
    may reach the trainer together with the engines or the rewards."""
    wiring = {p for p, allowed in ALLOWED.items() if "train" in allowed and allowed & {"engines", "rewards"}}
    assert wiring == {"orchestrate", "cli"}


@pytest.mark.parametrize("package", sorted(THIRD_PARTY_ONLY))
def test_third_party_imports_allowed_list(package):
    allowed = THIRD_PARTY_ONLY[package] | set(sys.stdlib_module_names) | {"__future__"}
    bad = [e for e in EDGES if e.source == package and e.target not in PACKAGES and e.target not in allowed]
    assert bad == [], f"{package} may import only {sorted(THIRD_PARTY_ONLY[package])} beyond the standard library:\n" + _report(bad)


@pytest.mark.parametrize("package", sorted(THIRD_PARTY_NEVER))
def test_third_party_imports_refused(package):
    bad = [e for e in EDGES if e.source == package and e.target in THIRD_PARTY_NEVER[package]]
    assert bad == [], f"{package} imports model code:\n" + _report(bad)
