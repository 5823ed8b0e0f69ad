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
from rlvr.rewards.math.power import Factored, power_value, towers_equal

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
    # a written-out literal beyond the bit bound is factored like a computed value (review)
    (WRITTEN.format("power against its 1506 digits"), "2^{5000}", str(2**5000), True),
    (WRITTEN.format("power against 1506 wrong digits"), "2^{5000}", str(2**5000 + 2), False),
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


AMC_KEY = "AMC answer key as AoPS writes it: \\textbf{(E) } value"
AMC_SOLUTION = "AoPS wiki solution ending 'The answer is $\\boxed{\\textbf{(B)}\\ 8}$.'"
SQRT5 = "\\textbf{(E) } 2\\sqrt{5}"
BOXED_B8 = "The answer is $\\boxed{\\textbf{(B)}\\ 8}$."

CHOICES = [
    # (source, response, gold, score)
    (AMC_KEY, "\\boxed{E}", SQRT5, 1),
    (AMC_KEY, "E", SQRT5, 1),
    (AMC_KEY, "\\boxed{D}", SQRT5, 0),  # another letter
    (AMC_KEY, "So $\\boxed{\\textbf{(E)}\\ 2\\sqrt{5}}$", SQRT5, 1),
    (AMC_KEY, "$\\boxed{2\\sqrt{5}}$", SQRT5, 1),  # the option's value, no letter
    (AMC_KEY, "$\\boxed{2\\sqrt{3}}$", SQRT5, 0),  # another value, no letter
    (AMC_KEY, "\\textbf{(A) } 27", "\\textbf{(D) } 27", 0),  # the letter is the answer
    (AMC_KEY, "The answer is (D) or (E).", SQRT5, 0),  # hedge across letters
    (AMC_KEY, "I would pick B, D", "\\textbf{(D) } 27", 0),
    (AMC_SOLUTION, "B", BOXED_B8, 1),
    (AMC_SOLUTION, "C", BOXED_B8, 0),
    (AMC_SOLUTION, "There are $8$ ways, so the answer is 8.", BOXED_B8, 1),
    (AMC_SOLUTION, "There are $7$ ways, so the answer is 7.", BOXED_B8, 0),
]


@pytest.mark.parametrize("source, response, gold, score", CHOICES)
def test_option_golds_match_by_letter_or_by_value(source, response, gold, score):
    assert MathVerifier()(response=response, gold=gold).score == score, source


def test_an_option_gold_is_one_option_with_a_value():
    from rlvr.rewards.math.normalize import choice_option

    assert choice_option(SQRT5) == ("E", "2\\sqrt{5}")
    assert choice_option("\\textbf{(B)}\\ 8") == ("B", "8")
    assert choice_option("(1, 2)") is None  # a tuple, not an option
    assert choice_option("(A) 1 (B) 2") is None  # a list of options is no gold
    assert choice_option("(A)") is None  # a bare letter: `is_choice_gold`'s


THEOREMQA = "TheoremQA answer_type bool, answered in a sentence"
MATH_WORD = "MATH / Omni-MATH word gold (\\text{even}, \\text{diverges}) answered in a sentence"

SENTENCES = [
    # (source, response, gold, score)
    (THEOREMQA, "The statement is True.", "True", 1),
    (THEOREMQA, "The statement is not True.", "True", 0),  # negated
    (THEOREMQA, "The statement is false.", "False", 1),
    (THEOREMQA, "The statement is true.", "False", 0),
    (MATH_WORD, "The function is even.", "\\text{even}", 1),
    (MATH_WORD, "The function is not even.", "\\text{even}", 0),
    (MATH_WORD, "The function is neither odd nor even.", "\\text{even}", 0),
    (MATH_WORD, "It is probably even.", "\\text{even}", 0),  # hedged
    (MATH_WORD, "It is either odd or even.", "\\text{even}", 0),
    (MATH_WORD, "The function is odd.", "\\text{even}", 0),
    (MATH_WORD, "Since f(-x) = f(x), the function is even.", "\\text{even}", 1),
    (MATH_WORD, "Is the function even?", "\\text{even}", 0),  # a question states nothing
    (MATH_WORD, "The sequence diverges.", "\\text{diverges}", 1),
    (MATH_WORD, "The sequence diverges.", "\\text{converges}", 0),
    (MATH_WORD, "The equation has no solution.", "\\text{no solution}", 1),
    (WRITTEN.format("a number gold is not a word gold"), "There are 12 even numbers.", "12", 1),
    (WRITTEN.format("a word gold with a number in the sentence"), "There are 2 even numbers.", "even", 0),
]


@pytest.mark.parametrize("source, response, gold, score", SENTENCES)
def test_a_word_gold_stated_in_a_final_sentence(source, response, gold, score):
    assert MathVerifier()(response=response, gold=gold).score == score, source


MATH_SETS = "MATH intermediate algebra solution set (set-builder, |x - a| inequality)"
RECIPE = "word-problem answer in cups (mixed number, MATH prealgebra style)"
CHAT = "chat-model reply: display maths after 'Final answer:'"
CHINESE = "Chinese-language grader answer phrase (答案：) with full-width digits"
PHYSICS = "physics answer in scientific notation with an SI unit (\\approx, \\mathrm{J})"
R1 = "DeepSeek-R1 style <think>/<answer> reply"
RESTATED = "reply that restates the question after its answer"
ALL_BUT = "(-\\infty,-1]\\cup[1,\\infty)"

FORMS = [
    # (source, response, gold, score)
    (MATH_SETS, "\\{x \\mid x > 2\\}", "(2, \\infty)", 1),
    (MATH_SETS, "\\{x \\mid x \\ge 2\\}", "(2, \\infty)", 0),  # closedness
    (MATH_SETS, "\\{x : x \\le 3\\}", "(-\\infty, 3]", 1),
    (MATH_SETS, "|x| \\ge 1", ALL_BUT, 1),
    (MATH_SETS, "|x| > 1", ALL_BUT, 0),
    (MATH_SETS, "|x - 3| < 2", "(1, 5)", 1),
    (MATH_SETS, "|x + 1| \\le 4", "[-5, 3]", 1),
    (MATH_SETS, "|x + 1| \\le 4", "[-3, 5]", 0),  # the sign of the shift
    (RECIPE, "Answer: $7\\frac{1}{8}$ cups", "7.125", 1),
    (RECIPE, "Answer: $7\\frac{1}{4}$ cups", "7.125", 0),
    (CHAT, "Final answer:\n\n$$\n15\n$$", "15", 1),
    (CHAT, "Final answer:\n\n$$\n16\n$$", "15", 0),
    (CHAT, "Final answer:\n\\[\n\\frac{1}{2}\n\\]", "0.5", 1),
    (CHINESE, "答案：３", "3", 1),
    (CHINESE, "答案：４", "3", 0),
    (CHINESE, "最终答案是 １２", "12", 1),
    (PHYSICS, "Final answer: $E \\approx 3.98 \\times 10^{-19}\\ \\mathrm{J}$.", "3.98e-19", 1),
    (PHYSICS, "Final answer: $E \\approx 3.98 \\times 10^{-18}\\ \\mathrm{J}$.", "3.98e-19", 0),
    (PHYSICS, "$x \\approx 3.14$", "\\pi", 0),  # an approximation of an exact gold: rule 1
    (PHYSICS, "$2\\mathrm{i}$", "2", 0),  # i is a number, not a unit
    (RESTATED, "x = 4.\n\n(The question was: if 2x + 1 = 9, find x.)", "4", 1),
    (RESTATED, "x = 4.\n\n(The question was: if 2x + 1 = 9, find x.)", "9", 0),
    (R1, "<think>\nThe answer is 5.\n</think>\n<answer></answer>", "5", 0),  # committed empty
    (R1, "<think>\nThe answer is 5.\n</think>\n<answer>5</answer>", "5", 1),
    (R1, "<think>\nTwo plus six is 8, so", "8", 0),  # cut off mid-thought: nothing committed
    (R1, "<think>\nTwo plus six is 8.\n</think>\nThe answer is 8.", "8", 1),
    (R1, "Let me compute $7 \\times 8 = 56$, then $56 - 14 = 42$. Hmm, I'm not sure what "
         "the question wants next.", "42", 0),  # gave up: no committed answer
    (R1, "$7 \\times 8 = 56$, then $56 - 14 = 42$. The answer is $42$.", "42", 1),
]


@pytest.mark.parametrize("source, response, gold, score", FORMS)
def test_solution_sets_delimiters_and_templates(source, response, gold, score):
    assert MathVerifier()(response=response, gold=gold).score == score, source
