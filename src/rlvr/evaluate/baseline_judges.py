"""Two model-free judges for `rlvr eval-judge --judge function:...`: baselines that a real
judge should beat, and a way to run the benchmark with no judge model at hand.

- `arithmetic_check`: re-checks every equation `a op b = c` (op one of + - * /) written in
  the prompt followed by the response (so the demo task's "23+45=" + "68" is one equation).
  P(yes) = (true + 1) / (true + false + 2), Laplace's rule: 0.5 when nothing can be checked.
  It reads the working, not the answer: a right calculation of the wrong quantity passes.
- `longer_is_better`: the verbosity bias, alone. P(yes) = L / (L + 40) for L characters;
  for a pair, P(A better) = L_A / (L_A + L_B).

Both answer a pair (`judge_bench.PAIR_QUESTION`) by comparing the two responses' scores.
"""

from __future__ import annotations

import re

from rlvr.evaluate.judge_bench import PAIR_QUESTION, split_pair

EQUATION = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s*([-+*/])\s*(\d+(?:\.\d+)?)\s*=\s*(\d+(?:\.\d+)?)")
OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
       "/": lambda a, b: a / b if b else float("nan")}


def checked_equations(text: str) -> tuple[int, int]:
    """(equations that hold, equations that do not) among those written in `text`."""
    holds = fails = 0
    for a, op, b, c in EQUATION.findall(text):
        if abs(OPS[op](float(a), float(b)) - float(c)) <= 1e-9 * max(1.0, abs(float(c))):
            holds += 1
        else:
            fails += 1
    return holds, fails


def _arithmetic(prompt: str, response: str) -> float:
    holds, fails = checked_equations(prompt + response)
    return (holds + 1) / (holds + fails + 2)


def arithmetic_check(prompt: str, response: str, question: str, reference: str) -> float:
    if question == PAIR_QUESTION:
        a, b = split_pair(response)
        return 0.5 + (_arithmetic(prompt, a) - _arithmetic(prompt, b)) / 2
    return _arithmetic(prompt, response)


def longer_is_better(prompt: str, response: str, question: str, reference: str) -> float:
    if question == PAIR_QUESTION:
        a, b = split_pair(response)
        return len(a) / (len(a) + len(b)) if a or b else 0.5
    return len(response) / (len(response) + 40)
