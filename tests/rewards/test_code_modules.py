"""Collecting and running test files (code/modules.py, code/items.py) in this process, with a
fake candidate channel: ids, the pytest subset, and what counts as a pass. No sandbox needed;
the same code runs in the sandbox's checker (test_code_verifier.py runs it there)."""

from __future__ import annotations

import sys

import pytest

from rlvr.rewards.code.harness import CandidateFailed, decode_value, encode_value
from rlvr.rewards.code.items import collect, run_item
from rlvr.rewards.code.modules import CollectError, load_tests


class FakeChannel:
    """Answers the checker's requests from a dict of plain functions, as the candidate would."""

    def __init__(self, functions: dict, dead: bool = False):
        self.functions, self.dead, self.broken = functions, dead, None

    def ask(self, request: dict) -> dict:
        if self.dead:
            self.broken = "dead"
            raise CandidateFailed("dead")
        function = self.functions.get(request["name"])
        if function is None:
            return {"raised": "NameError", "message": "not defined"}
        if request["op"] == "get":
            return {"callable": True}
        try:
            args, kwargs = decode_value(request["args"]), decode_value(request["kwargs"])
            return {"value": encode_value(function(*args, **kwargs))}
        except Exception as error:
            return {"raised": type(error).__name__, "message": str(error)}


@pytest.fixture(autouse=True)
def _restore_modules():
    saved = {name: sys.modules.get(name) for name in ("pytest", "solution", "test_solution")}
    yield
    for name, module in saved.items():  # load_tests puts its own pytest and solution there
        if module is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = module


def ids_of(text: str, style: str = "pytest") -> list[str]:
    return [test_id for test_id, _ in collect(load_tests(text, None), style)]


def results_of(text: str, functions: dict, style: str = "pytest") -> dict[str, tuple]:
    channel = FakeChannel(functions)
    items = collect(load_tests(text, channel), style)
    return {test_id: run_item(run, channel) for test_id, run in items}


STACKED = """
import pytest
@pytest.mark.parametrize("x", [0, 1])
@pytest.mark.parametrize("y", ["a", None])
def test_grid(x, y):
    pass
@pytest.mark.parametrize("v", [1, 1, [2], pytest.param(3, id="three")])
def test_ids(v):
    pass
@pytest.mark.parametrize("a,b", [(1, 2)], ids=["one-two"])
def test_named(a, b):
    pass
"""


def test_parametrize_ids_follow_pytest():
    # the decorator nearest the function comes first in the id and varies slowest (as pytest)
    assert ids_of(STACKED) == [
        "test_grid[a-0]", "test_grid[a-1]", "test_grid[None-0]", "test_grid[None-1]",
        "test_ids[1]", "test_ids[11]", "test_ids[v2]", "test_ids[three]", "test_named[one-two]",
    ]  # fmt: skip


COLLECTED = """
import unittest
from doctest import testmod
from solution import add, helper_test, test_from_the_answer
def test_plain(): pass
def helper(): pass
class TestGroup:
    def test_method(self): pass
    def not_a_test(self): pass
class TestWithInit:
    def __init__(self): pass
    def test_never(self): pass
class Later(unittest.TestCase):
    def test_b(self): pass
    def test_a(self): pass
def test_off(): pass
test_off.__test__ = False
test_alias = helper
"""


def test_only_the_files_own_tests_are_collected():
    # imported names (a stdlib function, proxies of the candidate's) are never tests; classes with __init__
    # are skipped as pytest skips them; unittest sorts its method names
    assert ids_of(COLLECTED) == [
        "test_plain", "TestGroup::test_method", "Later::test_a", "Later::test_b", "test_alias",
    ]  # fmt: skip
    assert ids_of(COLLECTED, "unittest") == ["Later::test_a", "Later::test_b"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("def test_x(tmp_path):\n    pass\n", "needs fixture 'tmp_path'"),
        (
            "import pytest\n@pytest.fixture(params=[1, 2])\ndef f(): pass\ndef test_x(f): pass\n",
            "has params",
        ),
        (
            "import pytest\n@pytest.mark.parametrize('a,b', [(1,)])\ndef test_x(a, b): pass\n",
            "row 0 has 1 values",
        ),
    ],
)
def test_files_whose_tests_cannot_be_collected_say_why(text, message):
    with pytest.raises(CollectError, match=message):
        ids_of(text)


PASSES_AND_FAILS = """
import sys, unittest
import pytest
from solution import add

@pytest.fixture
def numbers():
    yield (2, 3)

def test_fixture(numbers):
    assert add(*numbers) == 5
def test_approx():
    assert add(0.1, 0.2) == pytest.approx(0.3)
def test_raises():
    with pytest.raises(TypeError, match="unsupported"):
        add(1, "x")
def test_pytest_skip():
    pytest.skip("not today")
@pytest.mark.skip(reason="later")
def test_skip_mark():
    pass
@pytest.mark.skipif(True, reason="never")
def test_skipif_mark():
    pass
@pytest.mark.xfail
def test_xfail_that_fails():
    assert add(1, 1) == 3
def test_system_exit():
    sys.exit(0)
def test_skiptest():
    raise unittest.SkipTest("skip")
def test_importorskip():
    pytest.importorskip("no_such_module_anywhere")
def test_nothing_raised():
    with pytest.raises(ValueError):
        add(1, 2)
class Case(unittest.TestCase):
    def test_ok(self):
        self.assertEqual(add(1, 2), 3)
    @unittest.skip("no")
    def test_skipped(self):
        pass
    @unittest.expectedFailure
    def test_expected_failure(self):
        self.assertEqual(add(1, 1), 3)
    def test_exit(self):
        raise SystemExit(0)
"""


def test_only_a_normal_return_passes_and_every_skip_fails():
    results = results_of(PASSES_AND_FAILS, {"add": lambda a, b: a + b})
    passed = sorted(test_id for test_id, (ok, _, _) in results.items() if ok)
    assert passed == ["Case::test_ok", "test_approx", "test_fixture", "test_raises"]
    assert results["test_pytest_skip"][1] == "skipped, counted as failed: not today"
    assert results["Case::test_expected_failure"][:2] == (
        False,
        "Failed: an expected failure or unexpected success is not a pass",
    )
    assert all(ran for _, _, ran in results.values())


def test_a_test_that_catches_a_dead_candidate_still_fails():
    text = "import solution\ndef test_x():\n    try:\n        solution.f()\n    except BaseException:\n        pass\n"
    channel = FakeChannel({}, dead=True)
    ((_, run),) = collect(load_tests(text, channel), "pytest")
    assert run_item(run, channel) == (False, "the candidate stopped answering: dead", False)
