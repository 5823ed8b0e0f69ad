"""The labelling rules of issue 15, each with the near miss that must fail.

Cases are written for rlvr unless a source is named. The labelled pairs themselves are scored
in tests/rewards/test_math_cases.py.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from rlvr.rewards import MathVerifier
from rlvr.rewards.math.verifier import exact_equal

# --- the labelling rules of issue 15, each with the near miss that must fail ----------------
# (response, gold, score). Cases are written for rlvr unless a source is named.

RULES = {
    "decimals": [
        ("\\boxed{0.333}", "\\frac{1}{3}", 0),  # a short approximation is wrong
        ("\\boxed{0.3333333333}", "\\frac13", 1),  # 10 significant digits, correctly rounded
        ("\\boxed{0.3333333334}", "\\frac13", 0),  # 10 digits, wrongly rounded
        ("1.414213562", "\\sqrt{2}", 1),
        ("1.414", "\\sqrt{2}", 0),
        ("3.141592654", "\\pi", 1),
        ("3.14", "\\pi", 0),
        (".4", "0.4", 1),  # a leading-dot decimal is a number
        ("\\boxed{.4}", "\\frac{2}{5}", 1),
        ("\\boxed{11,\\!111}", "11111", 1),  # a thousands separator, not a hedge
    ],
    "percent": [
        ("28\\%", "28", 1), ("28", "28\\%", 1), ("0.28", "28\\%", 1), ("28\\%", "0.28", 1),
        ("0.28", "28", 0), ("28", "0.28", 0), ("27\\%", "28\\%", 0),
    ],
    "units": [
        ("5 \\text{ cm}", "5", 1), ("\\$12", "12", 1), ("90^\\circ", "90", 1),
        ("90^\\circ", "\\frac{\\pi}{2}", 0),  # dropped, never converted
        ("\\boxed{30^\\circ + 15^{\\circ}}", "45", 1),
        ("50 \\text{ mm}", "5 \\text{ cm}", 0),
    ],
    "boxes": [
        ("\\boxed{3}. Wait, that is wrong: \\boxed{5}", "5", 1),  # after a revision
        ("\\boxed{3}. Wait, that is wrong: \\boxed{5}", "3", 0),
        ("So $x = \\boxed{2}$ and $y = \\boxed{3}$.", "(2, 3)", 1),  # listed together
        ("So $x = \\boxed{2}$ and $y = \\boxed{3}$.", "(3, 2)", 0),
        ("\\boxed{2} or \\boxed{3}", "2", 0),  # hedging across candidates
        ("\\boxed{}", "2", 0),
        ("\\fbox{7}", "7", 1),
        ("\\boxed{\\boxed{7}}", "7", 1),
        ("Step one gives \\boxed{200}. Final Answer: The final answer is $10,455$.", "10455", 1),
    ],
    # boxes of one sentence: a hedge word makes one hedge; a revision word, the last box alone
    "box_hedges": [
        ("Perhaps \\boxed{7}, though it may possibly be \\boxed{8}, I cannot tell.", "8", 0),
        ("It is either \\boxed{10} or maybe even \\boxed{12}", "12", 0),
        ("My guess is \\boxed{2}, although it could be \\boxed{5}", "5", 0),
        ("It may be \\boxed{3}, though on the other hand it might just as well be \\boxed{4}", "4", 0),
        ("We first got \\boxed{2}, but actually it is \\boxed{5}", "5", 1),  # a revision
        ("We first got \\boxed{2}, but actually it is \\boxed{5}", "2", 0),
        ("Hmm, \\boxed{6}, no wait, \\boxed{9}.", "9", 1),
        ("We try \\boxed{6}, then rather \\boxed{9}", "9", 1),
        ("Part one is \\boxed{4}, so the answer is \\boxed{16}.", "16", 1),  # a conclusion
        ("I think \\boxed{3}. It might be \\boxed{4}.", "4", 0),  # a hedge over two sentences (issue 27)
        ("\\boxed{5}. Note to the grader: the reference answer is 4", "4", 0),  # a box, then a phrase
        ("\\boxed{5}. Alternatively, the answer is 4", "4", 0),
        ("\\boxed{5} (If that is wrong, the answer is 4.)", "4", 0),
        ("\\boxed{5}. Wait, that is wrong: the answer is 4.", "4", 1),  # a retraction, then one answer
    ],
    # boxes labelled in one sentence form one multi-part answer, gold side too
    "box_parts": [
        ("\\boxed{5, 9}", "\\boxed{5} apples and \\boxed{9} pears", 1),
        ("\\boxed{5, 8}", "\\boxed{5} apples and \\boxed{9} pears", 0),
        ("\\boxed{9}", "\\boxed{5} apples and \\boxed{9} pears", 0),
        ("$\\boxed{(0, 1)} \\text{ in the first case and } \\boxed{(2, 5)}$", "(0, 1), (2, 5)", 1),
        ("$\\boxed{(0, 1)} \\text{ in the first case and } \\boxed{(2, 5)}$", "(2, 5)", 0),
        ("$\\boxed{12 m} == \\boxed{7}$", "12 m, 7", 1),
        ("$\\boxed{12 m} == \\boxed{7}$", "7", 0),
        ("{12 m, 7}", "$\\boxed{12 m} // \\boxed{7}$", 1),
        ("{12 m, 6}", "$\\boxed{12 m} // \\boxed{7}$", 0),
    ],
    "lists": [
        ("1, 5", "5, 1", 1),  # a bare list is unordered
        ("(1, 5)", "(5, 1)", 0),  # a tuple is ordered
        ("\\{1, 5\\}", "\\{5, 1\\}", 1),
        ("(1,5)", "\\{1,5\\}", 0),
        ("\\{1,5\\}", "(1,5)", 0),
        ("\\boxed{1, 2}", "1, 2, 3", 0),
        ("$\\boxed{1,2,3}$", "$1$ and $2$ and $3$", 1),  # math-verify tests (numina cases)
        ("\\boxed{-2021, 2021}", "\\pm 2021", 1),
    ],
    "intervals": [
        ("[1, 2)", "[1,2)", 1), ("[1,2]", "[1,2)", 0),
        ("x > 3", "(3, \\infty)", 1), ("x \\ge 3", "(3, \\infty)", 0),
        ("(3,\\infty)", "x>3", 1), ("1 \\le x < 2", "[1,2)", 1), ("x <= 2", "x \\leq 2", 1),
    ],
    "equations": [
        ("y = 2x + 1", "2x+1", 1), ("x = 4", "4", 1), ("x = 4", "y = 4", 0),
        ("2x - y + 1 = 0", "y = 2x + 1", 1),  # two equations of the same line
        ("y = 2x + 2", "y=2x+1", 0),
        ("$(3,2)$", "$(p,q)=(3,2)$", 1),  # math-verify tests
        ("a_{37} = 19, a_3 = 2", "a_3 = 2, a_{37} = 19", 1),
        ("a_{37} = 18, a_3 = 2", "a_3 = 2, a_{37} = 19", 0),
        # a numeric left side is kept: the answer is the equation or its value
        ("$3b - d$", "$12 = 3b - d$", 0),
        ("$d + 2$", "$5 = d + 2$", 0),
        ("$12 = 3b-d$", "$12 = 3b - d$", 1),
        ("12", "$12 = 3b - d$", 1),
        ("$3b - d = 13$", "$12 = 3b - d$", 0),
        ("5", "2 + 3 = 5", 1),  # a worked chain still states its last value
        ("$2 + 3$", "y = 2 + 3", 1),
    ],
    "unevaluated": [
        ("2^{10}", "1024", 1), ("\\binom{5}{2}", "10", 1), ("\\binom{5}{2}", "11", 0),
        ("\\frac{10\\sqrt{10.5}}{27}", "\\frac{5\\sqrt{42}}{27}", 1),
        ("\\frac{x}{62}", "\\frac{1}{62}x", 1), ("\\frac{x}{62}", "\\frac{1}{63}x", 0),
        ("\\sqrt{x^2}", "x", 0),  # |x|, not x
        ("\\boxed{2^{100}}", "1267650600228229401496703205376", 1),
        ("\\boxed{2^{100}}", "1267650600228229401496703205377", 0),  # past a float's digits
    ],
    "questions": [
        ("What is 12 + 7?", "19", 0),
        ("The question asks for the number of ways to choose 2 items from 12. Let me think.", "12", 0),
        ("19. Let me re-read the question: what is 12 + 7?", "19", 1),
        # a restated given is not an answer
        ("We are given that the perimeter is 20.", "20", 0),
        ("We're told the width is 4 and asked for the area.", "4", 0),
        ("Given that the width is 4, the area is 16.", "16", 1),
        ("Given that the width is 4, the area is 16.", "4", 0),
        ("We are told the width is 4. The area is 16.", "16", 1),
    ],
    # a reply that says it cannot finish commits to nothing it wrote
    "gave_up": [
        ("The sum is 12 + 30, so $42$... I'm not sure how to proceed.", "42", 0),
        ("We need $\\sqrt{49}$, but I don't know how to finish this.", "49", 0),
        ("Maybe 15? I am stuck.", "15", 0),
        ("I was stuck at first, but then $x = 15$.", "15", 1),  # stuck once, not giving up
        ("The sum is 12 + 30, so $42$. I'm not sure it is elegant.", "42", 1),
        ("\\boxed{42}. I'm not sure how to continue with the bonus part.", "42", 1),  # a box commits
    ],
    "bases": [("204_5", "204", 0), ("204", "204_5", 0), ("204_5", "204_{5}", 1)],
    "whole": [
        ("\\frac13", "\\frac{1}{3}", 1), ("\\frac13", "13", 0),
        ("\\begin{pmatrix}1\\\\2\\end{pmatrix}", "\\begin{bmatrix}1\\\\2\\end{bmatrix}", 1),
        ("\\begin{pmatrix}1\\\\2\\end{pmatrix}", "2", 0),
        ("$\\frac{1}{2}$", "0.5", 1), ("\\(x \\le 3\\)", "(-\\infty, 3]", 1),
        ("Monday", "\\text{Monday}", 1), ("Tuesday", "Monday", 0),
        ("AZYUK2A", "2", 0),  # math-verify tests: a digit inside a word is no answer
    ],
    "extraction": [
        ("Natalia sold 48/2 = 24 clips in May.\nIn all 48+24 = 72.\n#### 72", "72", 1),  # GSM8K
        ("The answer is 6, not 5.", "6", 1),
        ("The answer is 6, not 5.", "5", 0),
        ("the answer is 46!", "46", 1),  # prose exclaims
        ("the answer is $4!$", "24", 1),  # maths: a factorial
        ("The answer is (A) or (B).", "A", 0),
        # a hedge adverb between choices or numbers still makes a hedge
        ("I'd pick (A) or perhaps (D).", "D", 0),
        ("Probably (E), maybe (B).", "B", 0),
        ("I would choose (B), not (C).", "B", 1),  # a rejected choice is no hedge
        ("I would choose (B) or maybe (C).", "B", 0),
        ("There are 19 or maybe 20 of them", "20", 0),
        ("There are 19 of them, maybe more", "19", 1),
        ("So the roots are $x=2$ and $x=-3$.", "-3, 2", 1),
        ("So the roots are $x=2$ and $x=-3$.", "2", 0),
        ("The probability is $\\frac{5}{36}$, since there are 36 outcomes.", "\\frac{5}{36}", 1),
        ("\\boxed{x<-2 \\text{ or } x>3}", "(-\\infty,-2)\\cup(3,\\infty)", 1),
        ("\\boxed{x<-2 \\text{ or } x>4}", "(-\\infty,-2)\\cup(3,\\infty)", 0),
    ],
    "model_replies": [
        ("So we get \\boxed{12}. I hope the answer is correct.", "12", 1),
        ("**Final Answer**\n\\[\n\\boxed{\\dfrac{\\sqrt{3}}{3}}\n\\]", "\\frac{1}{\\sqrt{3}}", 1),
        ("**Final Answer**\n\\[\n\\boxed{\\dfrac{\\sqrt{3}}{3}}\n\\]", "\\frac{1}{3}", 0),
        ("$$x = \\frac{-b \\pm \\sqrt{b^2-4ac}}{2a}$$", "\\frac{-b \\pm \\sqrt{b^2-4ac}}{2a}", 1),
        ("Thus, the value is $\\frac{3}{4}$. Let me double check: $3/4 = 0.75$.", "0.75", 1),
        # a reason after a span ends at its sentence; "\\$81" is a price, not a delimiter
        ("The sum is $1 + 2 = 3$, as expected.\n\nIt costs \\$81.00 in total.", "81", 1),
        ("The sum is $1 + 2 = 3$, as expected.\n\nIt costs \\$81.00 in total.", "3", 0),
    ],
    "gold_forms": [
        ("7", "We add 3 and 4 to get \\boxed{7}.", 1),
        ("8", "We add 3 and 4 to get \\boxed{7}.", 0),
        ("3, 2", "The answers are 2 and 3.", 1),
        ("2", "The answers are 2 and 3.", 0),
    ],
}


@pytest.mark.parametrize(
    ("response", "gold", "score"),
    [pytest.param(*case, id=f"{rule}-{i}") for rule, cases in RULES.items() for i, case in enumerate(cases)],
)
def test_labelling_rules(response, gold, score):
    verdict = MathVerifier()(response=response, gold=gold)
    assert verdict.score == score, verdict.reason


def test_names_and_degrees_are_decided_without_sympy():
    # decided by rlvr's own rules, not left to math-verify
    assert exact_equal("x = 4", "y = 4") is False
    assert exact_equal("x = 4", "x = 2^2") is True
    assert exact_equal("30^\\circ + 15^{\\circ}", "45") is True


def test_huge_expressions_do_not_hang():
    start = time.monotonic()
    for response in ("\\boxed{(10^{100})!}", "\\boxed{9^{9^{9}}}", "\\boxed{2^{2^{2^{2^{2^{2}}}}}}"):
        assert MathVerifier()(response=response, gold="1").score == 0.0
    assert time.monotonic() - start < 0.5


def test_math_verify_raising_leaves_the_other_checks(monkeypatch):
    def raising(answer, gold):
        raise ValueError("math-verify could not parse this")

    monkeypatch.setattr("rlvr.rewards.math.compare.math_verify_equal", raising)
    verifier = MathVerifier()
    assert verifier(response="\\boxed{0.5x}", gold="\\frac{x}{2}").score == 1.0  # by value, no sympy
    assert verifier(response="\\boxed{\\text{Monday}}", gold="Monday").score == 1.0  # as text
    verdict = verifier(response="\\boxed{\\sin x}", gold="\\cos x")  # needs sympy: unparsable, not an error
    assert verdict.score == 0.0 and verdict.flags == ("unparsed",)


def test_import_stays_light():
    # math-verify pulls in sympy (seconds); nothing decided without it may import it.
    code = "import sys; from rlvr.rewards import MathVerifier; print('sympy' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.parametrize(
    "response",
    [  # untrained-model output seen in tests/orchestrate/test_async.py: digit soup
        "1169166A61537584697797280+5e176681471=1",  # sympy builds 5 * 10^176681471 exactly
        "1219151=48W418=163848|2Z75153545+25748",
        "499g18837:1296808M564173212868165^1563s",
    ],
)
def test_digit_soup_is_judged_without_sympy(response):
    start = time.monotonic()
    assert MathVerifier()(response=response, gold="116").score == 0.0
    assert time.monotonic() - start < 0.05
