"""Answer forms of the fifth holdout's classes (issue 15), each rule with its near misses.

Every case names the public form it follows. Power towers: tetration as Wikipedia's
"Tetration" article writes it (2^^5 = 2^{2^{2^{2^2}}} = 2^{65536}) and the classic
"which is larger, 9^{9^9} or ..." contest form; multiple choice: AMC/AoPS answer keys
("\\textbf{(E) } 2\\sqrt{5}", "$\\boxed{\\textbf{(B)}\\ 8}$"); text answers: TheoremQA bool
golds and MATH/Omni-MATH word golds ("\\text{even}"); set-builder and absolute-value answers:
MATH intermediate-algebra solution sets; delimiters: chat-model replies (display maths
after "Final answer:"), Chinese-language graders' answer phrase ("答案：") with full-width
digits, physics answers in scientific notation with SI units; templates: DeepSeek-R1 style
`<think>`/`<answer>` replies.
"""

from __future__ import annotations

import time

import pytest

from rlvr.rewards import MathVerifier
from rlvr.rewards.math_power import Factored, power_value, towers_equal

TETRATION = "Wikipedia 'Tetration' (2^^5 = 2^{65536}, 3^^4 = 3^{3^{27}})"
TOWER_CONTEST = "contest form: comparing power towers (9^{9^9}, 2^{2^{100}} vs 4^{2^{99}})"
WRITTEN = "written for rlvr (form: {})"

TOWERS = [
    # (source, response, gold, equal)
    (TETRATION, "2^{2^{2^{2^2}}}", "2^{65536}", True),
    (TETRATION, "2^{2^{2^{2^2}}}", "2^{65537}", False),
    (TETRATION, "3^{3^{3^3}}", "3^{3^{27}}", True),
    (TETRATION, "3^{3^{3^3}}", "3^{3^{26}}", False),
    (TETRATION, "2^{2^{16}}", "2^{65535}", False),
    (TOWER_CONTEST, "9^{9^9}", "9^{387420489}", True),
    (TOWER_CONTEST, "9^{9^9}", "3^{774840978}", True),  # 9 = 3^2: one prime, exponent doubled
    (TOWER_CONTEST, "9^{9^9}", "3^{387420489}", False),
    (TOWER_CONTEST, "2^{2^{100}}", "4^{2^{99}}", True),
    (TOWER_CONTEST, "2^{2^{100}}", "4^{2^{100}}", False),
    (TOWER_CONTEST, "9^{9^{9^9}}", "9", False),
    (TOWER_CONTEST, "9^{9^{9^9}}", "3^{2 \\cdot 9^{9^9}}", True),  # exponents themselves towers
    (TOWER_CONTEST, "10^{10^{10}}", "10^{10^{9}}", False),
    (WRITTEN.format("power against its digits"), "2^{100}", "1267650600228229401496703205376", True),
    (WRITTEN.format("power against wrong digits"), "2^{100}", "1267650600228229401496703205377", False),
    (WRITTEN.format("grouped power"), "(2^3)^4", "2^{12}", True),
    (WRITTEN.format("product of powers"), "2^{10} \\cdot 5^{10}", "10^{10}", True),
    (WRITTEN.format("power just past the bit bound"), "27^{1000}", "3^{3000}", True),
    (WRITTEN.format("power just past the bit bound, off by one"), "3^{3001}", "3^{3000}", False),
]


@pytest.mark.parametrize("source, response, gold, equal", TOWERS)
def test_power_towers_compared_exactly_and_fast(source, response, gold, equal):
    start = time.monotonic()
    verdict = MathVerifier()(response=response, gold=gold)
    assert verdict.score == (1.0 if equal else 0.0), (source, verdict)
    assert time.monotonic() - start < 0.5, "decided from the factorisation, not by sympy"


def test_tower_values_stay_factored_and_canonical():
    assert power_value("2^{2^{2^{2^2}}}") == Factored(((2, 65536),))
    assert power_value("2^{12}") == 4096  # small values are plain ints, so 4096 == 2^{12}
    assert power_value("10^{10^{10}} + 1") is None  # a sum with a huge term: not represented
    assert power_value("2^{-3}") is None and power_value("x^{2^3}") is None
    assert towers_equal("10^{10^{10}} + 1", "10^{10^{10}}") is None  # left to the rest


def test_a_tower_plus_one_is_still_refused_and_a_true_timeout_still_scores_false():
    verifier = MathVerifier(timeout_s=0.2)
    assert verifier(response="10^{10^{10}} + 1", gold="10^{10^{10}}").score == 0.0
    verdict = verifier(response="\\sin(10^{10^{10}} + 1)", gold="\\sin(10^{10^{10}})")
    assert verdict.score == 0.0
