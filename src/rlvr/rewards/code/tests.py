"""The tests a code answer is checked against, and how outputs are compared (in the parent).

Five styles, one `CodeTests` value each:

    {"style": "assert", "entry_point": "add",
     "tests": ["def check(candidate):\\n    assert candidate(1, 2) == 3"]}
    {"style": "call", "entry_point": "add", "tests": [{"args": [1, 2], "expected": 3}]}
    {"style": "stdio", "tests": [{"stdin": "1 2\\n", "stdout": "3\\n"}]}
    {"style": "stdio", "inputs": ["1 2\\n"], "outputs": ["3\\n"]}   (APPS's input_output)
    {"style": "pytest", "tests": ["from solution import add\\ndef test_add():\\n    assert ..."]}
    {"style": "unittest", "tests": ["import unittest\\nfrom solution import add\\nclass ..."]}

The pytest and unittest styles take one test file, as written; its tests are collected from it
(`code/modules.py`), and the answer is module `solution`.

Optional keys: "program_prefix" (code put before the answer, e.g. a HumanEval prompt whose
completion is the answer) and "test_helpers" (trusted code run before each assert-style test,
e.g. the same prompt, so that a test can call a helper such as HumanEval's `poly` from a copy
the answer cannot redefine).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from rlvr.errors import RewardError
from rlvr.rewards.code.codec import encode_value

STYLES = ("assert", "call", "stdio", "pytest", "unittest")
MODULE_STYLES = ("pytest", "unittest")  # one test file; its tests are collected from it
COMPARISONS = ("lines", "tokens", "exact")


@dataclass(frozen=True)
class CallCase:
    """One function call and the value it must return (compared outside the sandbox)."""

    args: tuple = ()
    expected: Any = None
    kwargs: dict = field(default_factory=dict)


@dataclass(frozen=True)
class IOCase:
    """One run of a whole program: its stdin, and the stdout it must print."""

    stdin: str
    stdout: str


@dataclass(frozen=True)
class CodeTests:
    """The tests of one code task; see the module docstring for the JSON form.

    Attributes:
        style: "assert" (`check(candidate)` functions), "call" (cases), "stdio" (cases),
            "pytest" or "unittest" (one test file that imports from `solution`).
        tests: assert-style sources, `CallCase`s, `IOCase`s, or the test file's text, by style.
        entry_point: the function under test (styles "assert" and "call").
        program_prefix: code placed before the answer in the program that runs.
        test_helpers: trusted code run before each assert-style test, in the checker.
    """

    style: str
    tests: tuple
    entry_point: str = ""
    program_prefix: str = ""
    test_helpers: str = ""

    def __post_init__(self) -> None:
        if self.style not in STYLES:
            raise RewardError(f"unknown code test style {self.style!r}; expected one of {STYLES}")
        if not self.tests:
            raise RewardError(f"a {self.style} code task needs at least one test")
        if self.style in MODULE_STYLES and len(self.tests) != 1:
            raise RewardError(f"a {self.style} code task has one test file; got {len(self.tests)}")
        if self.style in ("assert", "call") and not self.entry_point.isidentifier():
            raise RewardError(
                f"style {self.style!r} needs entry_point, a function name; got {self.entry_point!r}"
            )
        kind = {"call": CallCase, "stdio": IOCase}.get(self.style, str)
        wrong = [i for i, test in enumerate(self.tests) if not isinstance(test, kind)]
        if not wrong and self.style == "call":
            wrong = [i for i, test in enumerate(self.tests) if not _passable(test)]
        if wrong:
            raise RewardError(
                f"{self.style} tests must be {kind.__name__} values (call arguments: plain "
                f"data the sandbox can pass); test(s) {wrong} are not"
            )

    @classmethod
    def parse(cls, gold: "str | CodeTests") -> "CodeTests":
        """A `CodeTests` as it is, or one read from its JSON form (RewardError if malformed)."""
        if isinstance(gold, CodeTests):
            return gold
        try:
            spec = json.loads(gold)
            style, tests = spec["style"], _io_pairs(spec) or spec["tests"]
            extra = {
                k: spec[k] for k in ("entry_point", "program_prefix", "test_helpers") if k in spec
            }
            return cls(style, tuple(_test_from_json(style, test) for test in tests), **extra)
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            raise RewardError(
                f"malformed code tests ({type(error).__name__}: {error}) in {gold[:120]!r}"
            ) from None


def _io_pairs(spec: dict) -> list | None:
    """stdio cases given as APPS's `input_output` does: {"inputs": [...], "outputs": [...]}."""
    if spec.get("style") != "stdio" or "tests" in spec or "inputs" not in spec:
        return None
    inputs, outputs = spec["inputs"], spec["outputs"]
    if type(inputs) is not list or type(outputs) is not list or len(inputs) != len(outputs):
        raise ValueError("stdio 'inputs' and 'outputs' must be two lists of one length")
    return [{"stdin": i, "stdout": o} for i, o in zip(inputs, outputs)]


def _passable(case: CallCase) -> bool:
    """Can the case's arguments cross into the sandbox (plain data only)?"""
    try:
        encode_value([list(case.args), dict(case.kwargs)])
    except TypeError:
        return False
    return True


def _test_from_json(style: str, test: Any) -> Any:
    if style == "call":
        return CallCase(tuple(test.get("args", ())), test["expected"], dict(test.get("kwargs", {})))
    if style == "stdio":
        return IOCase(str(test["stdin"]), str(test["stdout"]))
    if not isinstance(test, str):
        raise TypeError(f"a {style} test is source text, got {type(test).__name__}")
    return test


def values_match(got: Any, expected: Any, rel_tol: float = 1e-6, abs_tol: float = 1e-9) -> bool:
    """Python equality on plain data, except: floats within tolerance (NaN equals NaN), and
    lists and tuples interchangeable (JSON cannot say tuple).

    Both sides are plain data decoded by the parent (`codec.decode_value`), so no
    candidate-defined `__eq__` ever runs here.
    """
    sequences = (list, tuple)
    if type(got) in sequences and type(expected) in sequences:
        return len(got) == len(expected) and all(
            values_match(g, e, rel_tol, abs_tol) for g, e in zip(got, expected)
        )
    if type(got) is dict and type(expected) is dict:
        return got.keys() == expected.keys() and all(
            values_match(got[k], expected[k], rel_tol, abs_tol) for k in got
        )
    if float in (type(got), type(expected)) and {type(got), type(expected)} <= {int, float}:
        if math.isnan(got) or math.isnan(expected):
            return math.isnan(got) and math.isnan(expected)
        return math.isclose(got, expected, rel_tol=rel_tol, abs_tol=abs_tol)
    return got == expected


def outputs_match(got: str, expected: str, comparison: str = "lines") -> bool:
    """Compare a program's stdout with the expected one.

    "lines": line by line, trailing spaces and trailing empty lines ignored (most judges);
    "tokens": the whitespace-separated tokens; "exact": byte for byte.
    """
    if comparison == "exact":
        return got == expected
    if comparison == "tokens":
        return got.split() == expected.split()
    return _lines(got) == _lines(expected)


def _lines(text: str) -> list[str]:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines
