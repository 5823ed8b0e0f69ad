"""Run a repository's tests by id with the code verifier's per-test harness (one test, one run).

A test id is pytest's: `tests/test_mod.py::test_name` (also `::TestClass::test_m`, `[param]`).
Each test runs as its own sandbox run in the harness's "module" mode
(`rlvr.rewards.code.items`): the test file runs only in the *checker* process, the repository's
code only in the *candidate* process, and values cross between them as plain data. So nothing
the repository's code does (exit(0) or pytest.skip at import, patching the runner, threads,
fake result files, a conftest.py, sitecustomize.py or .pth file) can mark a test passed: a
test passes only when the checker ran it and it returned.

The candidate program is built from the tree: every `.py` file is served from memory by an
import hook (nothing is written to disk, no compiled file is ever read), then the module under
test is imported and its public names become the candidate's top-level names. In the test
file, the imports of that module are bound to the candidate (`from mod import f` becomes
`from solution import f`, the harness's name for it); the rest of the file is unchanged.

One module under test per test file: a test file that imports two modules of the repository
(or none) is refused with `HiddenTestError` naming it.
"""

from __future__ import annotations

import ast
import json
from collections import defaultdict
from dataclasses import dataclass

from rlvr.errors import RlvrError
from rlvr.envs.repo.tree import Tree
from rlvr.rewards.code.outcomes import check_outcomes
from rlvr.rewards.sandbox import Execution, Job, Sandbox


class HiddenTestError(RlvrError):
    """A test id or test file that the harness cannot run (the message says which)."""


@dataclass(frozen=True)
class SuiteRun:
    """Per-test outcomes of one run of a repository's tests.

    Attributes:
        outcomes: test id -> (passed: True / False / None = never ran, detail).
        flags: "tampered", "timeout", "tests_not_run", "sandbox_error" when they happened.
    """

    outcomes: dict[str, tuple[bool | None, str]]
    flags: tuple[str, ...] = ()

    def passed(self, ids) -> int:
        return sum(1 for i in ids if self.outcomes.get(i, (None, ""))[0] is True)

    def all_passed(self, ids) -> bool:
        return self.passed(ids) == len(ids)


def split_id(test_id: str) -> tuple[str, str]:
    """`tests/t.py::Class::test_x` -> ("tests/t.py", "Class::test_x"); HiddenTestError if bad."""
    path, sep, name = test_id.partition("::")
    if not sep or not path.endswith(".py") or not name:
        raise HiddenTestError(f"test id {test_id!r} is not PATH.py::NAME (pytest's form)")
    return path, name


def module_of(path: str) -> str:
    """`pkg/sub/mod.py` -> "pkg.sub.mod"; `pkg/__init__.py` -> "pkg"."""
    parts = path[:-3].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def repo_modules(tree: Tree) -> dict[str, str]:
    """Module name -> path, for every .py file of the tree."""
    return {module_of(p): p for p in tree if p.endswith(".py")}


def module_under_test(tree: Tree, test_path: str) -> str:
    """The one module of the repository the test file imports (HiddenTestError otherwise)."""
    try:
        syntax = ast.parse(tree[test_path], test_path)
    except SyntaxError as error:
        raise HiddenTestError(f"{test_path}: the test file does not parse ({error.msg}, line {error.lineno})") from None
    modules = repo_modules(tree)
    found = set()
    for node in ast.walk(syntax):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
            [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else [])
        found |= {n for n in names if n in modules and modules[n] != test_path}
    if len(found) != 1:
        what = "no module" if not found else f"{len(found)} modules ({', '.join(sorted(found))})"
        raise HiddenTestError(f"{test_path} imports {what} of the repository; the harness needs exactly one")
    return found.pop()


def bind_test_file(text: str, module: str) -> str:
    """The test file with its imports of `module` bound to the candidate (see the module)."""
    lines = text.splitlines(keepends=True)
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.module == module and not node.level:
            start = node.lineno - 1
            lines[start] = lines[start].replace(f"from {module} import", "from solution import", 1)
        elif isinstance(node, ast.Import) and any(a.name == module for a in node.names):
            if len(node.names) != 1:
                raise HiddenTestError(f"`import {module}` must be on a line of its own in the test file")
            alias = node.names[0].asname or module
            if "." in alias:
                raise HiddenTestError(f"`import {module}` of a dotted module needs `as NAME` in the test file")
            start = node.lineno - 1
            lines[start] = lines[start].replace(node_text(node, module), f"import solution as {alias}", 1)
    return "".join(lines)


def node_text(node: ast.Import, module: str) -> str:
    alias = node.names[0].asname
    return f"import {module} as {alias}" if alias else f"import {module}"


_BOOT = '''import importlib, importlib.abc, importlib.util, sys
_RLVR_SOURCES = {sources}
class _RlvrTree(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        for candidate, package in ((name.replace(".", "/") + "/__init__.py", True), (name.replace(".", "/") + ".py", False)):
            if candidate in _RLVR_SOURCES:
                spec = importlib.util.spec_from_loader(name, self, origin=candidate, is_package=package)
                spec.has_location = False
                return spec
        return None
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        source = _RLVR_SOURCES[module.__spec__.origin]
        module.__file__ = module.__spec__.origin
        exec(compile(source, module.__spec__.origin, "exec"), module.__dict__)
sys.meta_path.insert(0, _RlvrTree())
_rlvr_module = importlib.import_module({module!r})
globals().update({{k: v for k, v in vars(_rlvr_module).items() if not k.startswith("__") or k == "__all__"}})
'''


def candidate_program(tree: Tree, module: str) -> str:
    """The candidate's program: the tree's .py files behind an import hook, `module` imported."""
    sources = {p: t for p, t in sorted(tree.items()) if p.endswith(".py")}
    return _BOOT.format(sources=repr(sources), module=module)


def jobs_for_file(tree: Tree, test_path: str, names: list[str], test_wall_s: float) -> list[Job]:
    """One harness job per test name of one test file."""
    if test_path not in tree:
        raise HiddenTestError(f"test file {test_path} is not in the repository")
    module = module_under_test(tree, test_path)
    header = {"mode": "module", "style": "pytest", "module": "solution", "entry_point": "",
              "code": candidate_program(tree, module), "call_timeout_s": test_wall_s}
    text = bind_test_file(tree[test_path], module)
    return [Job(header, secret=json.dumps({"module": text, "ids": [name]}).encode()) for name in names]


def run_tests(sandbox: Sandbox, tree: Tree, test_ids: list[str]) -> SuiteRun:
    """Run each test id on `tree` (see the module); the files in parallel, a file's tests in turn."""
    by_file: dict[str, list[str]] = defaultdict(list)
    for test_id in dict.fromkeys(test_ids):
        path, name = split_id(test_id)
        by_file[path].append(name)
    sequences = [jobs_for_file(tree, path, names, sandbox.limits.test_wall_s) for path, names in by_file.items()]
    outcomes, flags = {}, set()
    for (path, names), runs in zip(by_file.items(), sandbox.map_in_turn(sequences)):
        for name, run in zip(names, runs):
            outcomes[f"{path}::{name}"] = _outcome(run, flags)
    return SuiteRun(outcomes, tuple(sorted(flags)))


def _outcome(run: Execution | None, flags: set) -> tuple[bool | None, str]:
    if run is None:
        flags.add("tests_not_run")
        return None, "not run: the tests' wall_s was spent"
    (outcome,), tampered = check_outcomes(1, run)
    for flag, hit in (("tampered", tampered), ("timeout", run.timed_out),
                      ("sandbox_error", run.error is not None), ("tests_not_run", outcome[0] is None)):
        if hit:
            flags.add(flag)
    return outcome
