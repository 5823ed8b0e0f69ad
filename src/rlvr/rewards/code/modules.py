"""Test files as people write them: a pytest module or a unittest module that imports `solution`.

Stdlib only, no `from __future__`: joined after `code/harness.py` into the sandbox program,
whose names (`Channel`, `CandidateProxy`, `CandidateFailed`, `describe`, ...) it uses.

The test file runs only in the checker process, from the harness's own copy (fd 5), as
module `test_solution`; its text is never changed. `import solution` there gives a module of
proxies: `from solution import add` asks the candidate process whether `add` is a function
(then calls go to it by value) or a plain value. `import pytest` gives `pytest_subset`: the
part of pytest's API that test files commonly use (below), not pytest itself, which is not in
the sandbox.

Collection (`collect`) runs the file with no candidate at all, so the list of tests (the
denominator of the score) is the file's alone: test functions named `test*` and methods
`test*` of classes `Test*` (pytest style), `unittest.TestCase` subclasses (both styles), all
defined by the file itself, parametrize expanded. Each test then runs by its id, one test per
sandbox run. A test passes only if it returns normally (unittest: its result holds no error,
failure, skip, expected failure or unexpected success) while the candidate kept answering;
`SystemExit`, `unittest.SkipTest` and `pytest.skip` (a skip mark included) are failures.
"""

import types

if __name__ != "__main__":  # imported by rlvr; inside the sandbox program these are joined in
    from rlvr.rewards.code.harness import CandidateFailed, CandidateProxy, decode_value

TEST_MODULE = "test_solution"


class Skipped(BaseException):
    """pytest.skip / importorskip / a skip mark: here a failed test, never a passed one."""


class Failed(BaseException):
    """pytest.fail, and pytest.raises when nothing was raised."""


class CollectError(Exception):
    """The file's tests cannot be collected (the message says which test and why)."""


class Mark:
    """`pytest.mark.NAME(...)`: applied to a function or class, it is appended to `pytestmark`."""

    def __init__(self, name: str, args: tuple = (), kwargs=None):
        self.name, self.args, self.kwargs = name, args, kwargs or {}

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]):  # pytest's rule, too
            target = args[0]
            target.pytestmark = [*getattr(target, "pytestmark", []), self]
            return target
        return Mark(self.name, self.args + args, {**self.kwargs, **kwargs})


class MarkGenerator:
    def __getattr__(self, name: str) -> Mark:
        if name.startswith("_"):
            raise AttributeError(name)
        return Mark(name)


class Param:
    """`pytest.param(*values, id=..., marks=...)`."""

    def __init__(self, values: tuple, id=None, marks=()):
        self.values, self.id = values, id
        self.marks = list(marks) if isinstance(marks, (list, tuple)) else [marks]


class RaisesContext:
    """`pytest.raises(kind, match=...)`: passes when the block raises `kind` (a dead candidate's
    CandidateFailed never counts as the expected exception)."""

    def __init__(self, kind, match=None):
        self.kind, self.match, self.value, self.type = kind, match, None, None

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback) -> bool:
        if kind is None:
            raise Failed(f"DID NOT RAISE {self.kind!r}")
        if issubclass(kind, CandidateFailed) or not issubclass(kind, self.kind):
            return False
        import re

        if self.match is not None and not re.search(self.match, str(value)):
            raise AssertionError(f"Regex pattern {self.match!r} does not match {str(value)!r}")
        self.value, self.type = value, kind
        return True


class Approx:
    """`pytest.approx`: numbers within max(rel * |expected|, abs); sequences and dicts item-wise."""

    __hash__ = None

    def __init__(self, expected, rel=None, abs=None):
        self.expected = expected
        self.rel = 1e-6 if rel is None and abs is None else rel or 0.0
        self.abs = 1e-12 if abs is None and rel is None else abs or 0.0

    def __eq__(self, other) -> bool:
        return self._close(other, self.expected)

    def _close(self, got, want) -> bool:
        if type(want) in (list, tuple):
            return type(got) in (list, tuple) and len(got) == len(want) and all(
                self._close(g, w) for g, w in zip(got, want)
            )
        if type(want) is dict:
            return type(got) is dict and got.keys() == want.keys() and all(
                self._close(got[k], want[k]) for k in want
            )
        if type(want) in (int, float) and type(got) in (int, float):
            if want in (float("inf"), float("-inf")):
                return got == want
            return abs(got - want) <= max(self.rel * abs(want), self.abs)
        return got == want

    def __repr__(self) -> str:
        return f"approx({self.expected!r})"


def _raises(kind, *args, match=None, **kwargs):
    context = RaisesContext(kind, match)
    if not args:
        return context
    with context:
        args[0](*args[1:], **kwargs)
    return context


def _skip(reason: str = "", **_):
    raise Skipped(reason)


def _fail(reason: str = "", pytrace: bool = True):
    raise Failed(reason)


def _importorskip(name: str, minversion=None, reason=None):
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        raise Skipped(reason or f"could not import {name!r}") from None


def _fixture(function=None, *, scope="function", params=None, autouse=False, ids=None, name=None):
    def mark(target):
        target.rlvr_fixture = {"name": name or target.__name__, "autouse": autouse, "params": params}
        return target

    return mark(function) if function is not None else mark


def pytest_subset() -> types.ModuleType:
    """The `pytest` the test file imports: raises, approx, skip, fail, importorskip, param,
    mark (parametrize; skip and skipif fail the test; others are ignored), fixture."""
    module = types.ModuleType("pytest")
    module.__dict__.update(
        raises=_raises, approx=Approx, skip=_skip, fail=_fail, importorskip=_importorskip,
        param=lambda *values, id=None, marks=(): Param(values, id, marks),
        mark=MarkGenerator(), fixture=_fixture, skip_exception=Skipped, fail_exception=Failed,
    )  # fmt: skip
    return module


def solution_module(channel) -> types.ModuleType:
    """`solution` in the checker: each name is a proxy to a candidate function, or its value.

    Without a channel (collection) every name is a proxy that cannot be called.
    """
    module = types.ModuleType("solution")

    def look_up(name: str):
        if name.startswith("__") and name != "__all__":
            raise AttributeError(name)
        if channel is None:
            return [] if name == "__all__" else CandidateProxy(None, name)
        reply = channel.ask({"op": "get", "name": name})
        if "raised" in reply:
            raise AttributeError(f"module 'solution' has no attribute {name!r}")
        if reply.get("callable") is True:
            return CandidateProxy(channel, name)
        return decode_value(reply.get("value"))

    module.__getattr__ = look_up
    return module


def load_tests(text: str, channel):
    """Run the test file as module `test_solution` in the checker; its namespace."""
    import sys

    sys.modules["solution"] = solution_module(channel)
    sys.modules["pytest"] = pytest_subset()
    module = types.ModuleType(TEST_MODULE)
    module.__file__ = "test_solution.py"
    sys.modules[TEST_MODULE] = module
    exec(compile(text, "test_solution.py", "exec"), module.__dict__)
    return module.__dict__
