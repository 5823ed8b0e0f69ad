"""The offline task generator: bug-fix tasks made by breaking small working modules.

For each module NAME of `seed_modules/` (a working pure-Python module and its tests), every
mutation site (`rlvr.envs.repo.mutations`) is tried: the module's tests are run on the mutant
(`failing_tests`), and a mutant some of whose tests fail becomes a task:

    base tree     NAME.py (the bug), tests/test_NAME.py (the tests that still pass), README.md
    test_patch    adds the failing tests back (the hidden tests)
    patch         the inverse edit (the reference fix)
    FAIL_TO_PASS  tests/test_NAME.py::T for the tests the bug breaks; PASS_TO_PASS the others
    problem       names the file and function, and shows the first failing test

Which sites become tasks and which modules are held out is decided by `seed` alone
(`random.Random(seed)`): `held_out` modules (default 3) form the test split, the rest train.
`max_per_module` caps each module's tasks, sampled evenly over the mutation kinds.

Finding the failing tests runs our own modules (trusted, only mutated) in a child process with
the harness's pytest stand-in (`code/modules.pytest_subset`), a timeout per mutant catching
mutants that hang; the sandbox then validates every task when it is loaded (`load.py`).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from rlvr.envs.repo.mutations import KINDS, Mutation, mutations
from rlvr.envs.repo.patches import diff_trees
from rlvr.envs.repo.task import RepoTask

SEED_DIR = Path(__file__).with_name("seed_modules")

# One child process runs the tests against many versions of one module: the harness's stand-in
# for pytest and its collector are read from their files (importing rlvr here would cost a
# second a child), and an alarm stops a test that hangs (our own modules: pure Python loops).
_RUNNER = r'''
import json, signal, sys, types
glue = {"__name__": "__main__"}
for path in sys.argv[1:]:
    exec(compile(open(path).read(), path, "exec"), glue)
job = json.load(sys.stdin)
class Hung(BaseException):
    pass
def alarm(*_):
    raise Hung()
signal.signal(signal.SIGALRM, alarm)
out = []
for source in job["sources"]:
    module = types.ModuleType(job["name"])
    sys.modules[job["name"]] = module
    sys.modules["pytest"] = glue["pytest_subset"]()
    tests = types.ModuleType(glue["TEST_MODULE"])
    sys.modules[glue["TEST_MODULE"]] = tests
    results = {}
    try:
        signal.alarm(2)
        exec(compile(source, job["name"] + ".py", "exec"), module.__dict__)
        exec(compile(job["tests"], "tests.py", "exec"), tests.__dict__)
        for test_id, run in glue["collect"](tests.__dict__, "pytest"):
            signal.alarm(2)
            try:
                run()
                results[test_id] = True
            except Hung:
                raise
            except BaseException:
                results[test_id] = False
    except BaseException:
        results = None
    signal.alarm(0)
    out.append(results)
print(json.dumps(out))
'''


def test_results(name: str, sources: list[str], tests: str) -> list[dict[str, bool] | None]:
    """For each source of module `name`: {test name: passed}, or None if it hung or broke loading."""
    from rlvr.rewards.code import codec, harness, items, modules  # the runner joins their files

    glue = [m.__file__ for m in (codec, harness, modules, items)]
    run = subprocess.run([sys.executable, "-I", "-S", "-c", _RUNNER, *glue], capture_output=True, text=True,
                         input=json.dumps({"name": name, "sources": sources, "tests": tests}), timeout=600)
    if run.returncode != 0:
        raise RuntimeError(f"the generator's test runner failed: {run.stderr[-500:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])


def module_names() -> list[str]:
    """The seed modules that have tests, sorted."""
    return sorted(p.stem for p in SEED_DIR.glob("*.py") if (SEED_DIR / f"test_{p.stem}.py").is_file())


def drop_tests(tests: str, names: set[str]) -> str:
    """The test file without the top-level test functions in `names` (decorators included)."""
    import ast

    lines = tests.splitlines(keepends=True)
    spans = [(min([n.lineno] + [d.lineno for d in n.decorator_list]), n.end_lineno)
             for n in ast.parse(tests).body if isinstance(n, ast.FunctionDef) and n.name in names]
    for start, end in sorted(spans, reverse=True):
        while end < len(lines) and not lines[end].strip():  # the blank lines after it
            end += 1
        del lines[start - 1:end]
    return "".join(lines).rstrip("\n") + "\n"


@dataclass(frozen=True)
class Broken:
    """A mutant and what its tests said."""

    name: str
    index: int
    mutation: Mutation
    results: dict[str, bool]


def _problem(name: str, broken: Broken, tests: str) -> str:
    import ast

    failing = sorted(t for t, ok in broken.results.items() if not ok)
    node = next(n for n in ast.parse(tests).body if isinstance(n, ast.FunctionDef) and n.name == failing[0])
    example = ast.get_source_segment(tests, node)
    where = f"`{broken.mutation.function}` in `{name}.py`" if broken.mutation.function else f"`{name}.py`"
    more = f" ({len(failing)} tests fail in all)" if len(failing) > 1 else ""
    return (f"There is a bug in {where}: this test fails{more}.\n\n```python\n{example}\n```\n\n"
            f"Fix the code (not the tests) so that the test passes and the other tests in "
            f"tests/test_{name}.py keep passing.")


def make_task(broken: Broken, source: str, tests: str) -> RepoTask:
    """The task of one mutant (see the module docstring)."""
    name, test_path = broken.name, f"tests/test_{broken.name}.py"
    failing = {t for t, ok in broken.results.items() if not ok}
    visible = drop_tests(tests, failing)
    buggy = broken.mutation.apply(source)
    base = {f"{name}.py": buggy, test_path: visible,
            "README.md": f"# {name}\n\nRun the tests with `python -m pytest tests`.\n"}
    return RepoTask(
        instance_id=f"{name}__{broken.mutation.kind}-{broken.index}",
        problem_statement=_problem(name, broken, tests),
        test_patch=diff_trees({test_path: visible}, {test_path: tests}),
        fail_to_pass=tuple(f"{test_path}::{t}" for t in sorted(failing)),
        pass_to_pass=tuple(f"{test_path}::{t}" for t, ok in sorted(broken.results.items()) if ok),
        base=base, patch=diff_trees({f"{name}.py": buggy}, {f"{name}.py": source}),
        extra={"module": name, "bug_kind": broken.mutation.kind})


def broken_mutants(name: str) -> list[Broken]:
    """Every mutant of module `name` that makes at least one of its tests fail."""
    source, tests = (SEED_DIR / f"{name}.py").read_text(), (SEED_DIR / f"test_{name}.py").read_text()
    found = mutations(source)
    clean, *each = test_results(name, [source] + [m.apply(source) for m in found], tests)
    if clean is None or not all(clean.values()):
        raise RuntimeError(f"seed module {name}: its own tests do not all pass: {clean}")
    out = []
    for index, (mutation, results) in enumerate(zip(found, each)):
        if results is not None and results.keys() == clean.keys() and not all(results.values()):
            out.append(Broken(name, index, mutation, results))
    return out


def choose(found: list[Broken], rng: random.Random, cap: int) -> list[Broken]:
    """Up to `cap` mutants, round-robin over the kinds in a seeded order (a spread of bug kinds)."""
    by_kind = {k: [b for b in found if b.mutation.kind == k] for k in KINDS}
    for group in by_kind.values():
        rng.shuffle(group)
    chosen = []
    while len(chosen) < cap and any(by_kind.values()):
        for kind in KINDS:
            if by_kind[kind] and len(chosen) < cap:
                chosen.append(by_kind[kind].pop())
    return sorted(chosen, key=lambda b: b.index)


def generate(seed: int = 0, max_per_module: int = 40, held_out: int = 3) -> dict[str, list[RepoTask]]:
    """{"train": [...], "test": [...]}: the tasks of every seed module, split by module."""
    rng = random.Random(seed)
    names = module_names()
    test_modules = set(rng.sample(names, held_out))
    split: dict[str, list[RepoTask]] = {"train": [], "test": []}
    for name in names:
        source, tests = (SEED_DIR / f"{name}.py").read_text(), (SEED_DIR / f"test_{name}.py").read_text()
        for broken in choose(broken_mutants(name), rng, max_per_module):
            split["test" if name in test_modules else "train"].append(make_task(broken, source, tests))
    return split
