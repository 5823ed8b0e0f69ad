"""Answer forms from outside rlvr's own sets, each class with the near miss that must fail.

Each case names the public suite whose answer convention it follows (MATH = hendrycks/math
answers and solutions, AMC = AoPS wiki AMC solutions, GSM8K = openai/grade-school-math,
OlympiadBench, Omni-MATH); the numbers are written for rlvr, not copied from a labelled set.
(response, gold, score).
"""

from __future__ import annotations

import unicodedata
from fractions import Fraction

import pytest

from rlvr.rewards import MathVerifier
from rlvr.rewards.math.normalize import clean, to_fraction
from rlvr.rewards.math.unicode import unicode_to_latex
from rlvr.rewards.math.words import number_word_value

FORMS = {
    # GSM8K answers are numbers; model replies state them in words ("The answer is four.")
    "number_words": [
        ("Each box holds 6, so the answer is seventeen.", "17", 1),  # GSM8K
        ("#### forty-two", "42", 1),  # GSM8K's final-answer marker
        ("The answer is one hundred and twenty.", "120", 1),
        ("The final answer is three thousand.", "3000", 1),
        ("Answer: two million", "2000000", 1),
        ("The answer is twenty one.", "21", 1),
        ("The answer is minus five.", "-5", 1),
        ("\\boxed{\\text{nine}}", "9", 1),
        ("The answer is seventeen.", "18", 0),  # the next number
        ("The answer is twenty-one.", "12", 0),
        ("The answer is one hundred and five.", "150", 0),
        ("The answer is none.", "0", 0),  # a word that is not a number word
        ("The answer is twelve apples and three pears.", "12", 0),
    ],
    # Unicode maths as typed (OlympiadBench / Omni-MATH replies from chat models)
    "unicode": [
        ("The answer is ¾.", "\\frac34", 1),  # MATH gold form
        ("Answer: 3⅞", "\\frac{31}{8}", 1),  # a mixed number with a vulgar fraction
        ("Answer: −¼", "-\\frac{1}{4}", 1),  # U+2212 minus
        ("The answer is 5√2.", "5\\sqrt{2}", 1),
        ("The answer is √(x+1).", "\\sqrt{x+1}", 1),
        ("Answer: x² + 1", "x^2+1", 1),
        ("The answer is 1.6 × 10⁻¹⁹.", "1.6\\times10^{-19}", 1),
        ("The answer is 4π.", "4\\pi", 1),
        ("The range is everything from 0 up.\nRange: [0, ∞)", "[0,\\infty)", 1),
        ("The answer is (−∞, −1) ∪ (1, ∞).", "(-\\infty,-1)\\cup(1,\\infty)", 1),
        ("\\boxed{\\frac12}", "½", 1),  # a Unicode gold
        ("The floor is 12 m².", "12", 1),  # an area unit typed with a superscript
        ("The area comes to 12 m².", "2", 0),  # the exponent is not a number of its own
        ("The answer is ½.", "\\frac13", 0),
        ("Answer: 2⅓", "\\frac{5}{2}", 0),
        ("Answer: −¼", "\\frac14", 0),  # the sign counts
        ("The answer is 5√2.", "5\\sqrt{3}", 0),
        ("The answer is 1.6 × 10⁻¹⁹.", "1.6\\times10^{19}", 0),
        ("The range is everything above 0.\nRange: (0, ∞)", "[0,\\infty)", 0),
    ],
    # the whole real line (MATH domain answers are intervals; prose replies say it in words)
    "all_reals": [
        ("The answer is all real numbers.", "(-\\infty,\\infty)", 1),  # MATH gold form
        ("\\boxed{\\mathbb{R}}", "(-\\infty, \\infty)", 1),  # Omni-MATH gold form
        ("\\boxed{x \\in \\mathbb{R}}", "(-\\infty,\\infty)", 1),
        ("The domain is $(-\\infty, \\infty)$.", "\\text{all real numbers}", 1),
        ("The answer is all real numbers except 0.", "(-\\infty,\\infty)", 0),
        ("\\boxed{\\mathbb{R}}", "(0, \\infty)", 0),
        ("The answer is all real numbers.", "[0, \\infty)", 0),
    ],
    "empty_set": [
        ("The solution set is $\\varnothing$.", "\\emptyset", 1),  # MATH writes both
        ("\\boxed{\\{\\}}", "\\varnothing", 1),
        ("The solution set is ∅.", "\\emptyset", 1),
        ("\\boxed{\\emptyset}", "\\{0\\}", 0),
        ("\\boxed{\\varnothing}", "0", 0),
    ],
    # equations in the reply's last sentence, written without `$` (GSM8K-style prose)
    "plain_final_equations": [
        ("Factoring gives two roots.\nSo x = 5 or x = -2.", "5, -2", 1),  # MATH list gold
        ("The slope is -1, so the line is y = 3 - x.", "y=-x+3", 1),
        ("Solving both, a = 4, b = 7.", "(4, 7)", 1),
        ("x = 5 is too large, so x = 4.", "4", 1),
        ("The speed is 5 m/s.", "5", 1),  # a unit after "is" is not maths of its own
        ("Factoring gives two roots.\nSo x = 5 or x = -2.", "5, 2", 0),
        ("The slope is 1, so the line is y = x + 3.", "y=-x+3", 0),
        ("Factoring gives two roots.\nSo x = 5 or x = -2.", "5", 0),  # two roots for one
    ],
    "labelled_last_line": [
        ("The function is undefined at 2.\nDomain: (-\\infty, 2) \\cup (2, \\infty)",
         "(-\\infty,2)\\cup(2,\\infty)", 1),  # OlympiadBench interval answer
        ("Checking both ends, the range is closed.\nRange: [1, 5]", "[1,5]", 1),
        ("Checking both ends, the range is half open.\nRange: [1, 5)", "[1,5]", 0),
    ],
    # MATH precalculus writes vectors as pmatrix columns; replies write tuples, and back
    "vectors": [
        ("The cross product is $(4, 0, -2)$.", "\\begin{pmatrix} 4 \\\\ 0 \\\\ -2 \\end{pmatrix}", 1),
        ("\\boxed{\\begin{pmatrix} 4 \\\\ 0 \\\\ -2 \\end{pmatrix}}", "(4, 0, -2)", 1),
        ("\\boxed{\\begin{pmatrix} 1 & 5 \\end{pmatrix}}", "(1, 5)", 1),
        ("\\boxed{\\langle 1, 5 \\rangle}", "\\begin{pmatrix}1\\\\5\\end{pmatrix}", 1),
        ("\\boxed{(1, \\frac{1}{2})}", "\\begin{bmatrix} 1 \\\\ 0.5 \\end{bmatrix}", 1),
        ("The cross product is $(4, 0, 2)$.", "\\begin{pmatrix} 4 \\\\ 0 \\\\ -2 \\end{pmatrix}", 0),
        ("\\boxed{(0, 4, -2)}", "\\begin{pmatrix} 4 \\\\ 0 \\\\ -2 \\end{pmatrix}", 0),  # order
        ("\\boxed{(4, 0)}", "\\begin{pmatrix} 4 \\\\ 0 \\\\ -2 \\end{pmatrix}", 0),  # length
        ("\\boxed{\\{4, 0, -2\\}}", "\\begin{pmatrix} 4 \\\\ 0 \\\\ -2 \\end{pmatrix}", 0),  # a set
        # a row is not a column when both are written as matrices
        ("\\boxed{\\begin{pmatrix} 1 & 5 \\end{pmatrix}}", "\\begin{pmatrix}1\\\\5\\end{pmatrix}", 0),
    ],
    # nested lists as a programmer writes a matrix, against MATH's pmatrix gold
    "nested_lists": [
        ("Answer: [[2, 1], [1, 3]]", "\\begin{pmatrix} 2 & 1 \\\\ 1 & 3 \\end{pmatrix}", 1),
        ("Its inverse is the matrix: [[3, -1], [-1, 2]]",
         "\\begin{pmatrix} 3 & -1 \\\\ -1 & 2 \\end{pmatrix}", 1),
        ("\\boxed{[[1, 2, 3]]}", "\\begin{pmatrix} 1 & 2 & 3 \\end{pmatrix}", 1),
        ("Answer: [[2, 1], [3, 1]]", "\\begin{pmatrix} 2 & 1 \\\\ 1 & 3 \\end{pmatrix}", 0),
        ("Answer: [[2, 1, 0], [1, 3, 0]]", "\\begin{pmatrix} 2 & 1 \\\\ 1 & 3 \\end{pmatrix}", 0),
        ("\\boxed{[[1, 2, 3]]}", "\\begin{pmatrix} 1 \\\\ 2 \\\\ 3 \\end{pmatrix}", 0),  # row vs column

        # entry by entry with the number rules: a repeating decimal (MATH writes 0.\overline{3}),
        # a short approximation
        ("\\boxed{\\begin{pmatrix} 0.\\overline{3} & 0 \\\\ 0 & 1 \\end{pmatrix}}",
         "\\begin{pmatrix} \\frac13 & 0 \\\\ 0 & 1 \\end{pmatrix}", 1),
        ("\\boxed{\\begin{pmatrix} 0.333 & 0 \\\\ 0 & 1 \\end{pmatrix}}",
         "\\begin{pmatrix} \\frac13 & 0 \\\\ 0 & 1 \\end{pmatrix}", 0),
    ],
    # e-notation as calculators and Python print it, against MATH / GSM8K golds
    "e_notation": [
        ("\\boxed{4.5e6}", "4500000", 1),
        ("The answer is 2E-3.", "0.002", 1),
        ("\\boxed{7e2}", "7 \\times 10^{2}", 1),
        ("#### 1.2e+3", "1200", 1),
        ("Multiplying, 25 * 4000 = 1e5.\nAnswer: 1e5", "100000", 1),
        ("\\boxed{6.5 \\times 10^{-4}}", "0.00065", 1),
        ("So the population grows to 4.5e6", "4500000", 1),  # the last number, in e-notation
        ("So the population grows to 4.5e5", "4500000", 0),
        ("\\boxed{1e5}", "10^{5}", 1),  # not 1 * e * 5
        ("\\boxed{1e5}", "10^{6}", 0),
        ("\\boxed{3.2e4}", "320000", 0),  # one power of ten off
        ("\\boxed{4.5e6}", "4.5 \\times 10^{7}", 0),
        ("\\boxed{2e-3}", "0.02", 0),
        ("\\boxed{5e1000}", "5", 0),  # a 4-digit exponent is refused unread
    ],
    # AMC: "$\boxed{\textbf{(C)}\ 14}$" is the AoPS wiki's form; golds are letters in any wrapper
    "letter_options": [
        ("So $\\boxed{\\textbf{(C)}\\ 14}$", "C", 1),  # AMC
        ("\\boxed{\\textbf{(C) } 14}", "C", 1),
        ("$\\boxed{\\text{(C)}~14}$", "(C)", 1),
        ("\\boxed{(C)\\ 14}", "\\textbf{(C)}", 1),
        ("\\boxed{\\mathrm{(C)}\\,14}", "\\text{(C)}", 1),
        ("\\boxed{C}", "\\text{(C)}", 1),
        ("The answer is (C) 14.", "\\textbf{(C)}", 1),
        ("\\boxed{\\textbf{(C)}}", "$\\textbf{C}$", 1),
        ("$C$", "$\\text{C}$", 1),  # Math-Verify's tests write letter golds in \text{}
        ("$D$", "$\\text{C}$", 0),
        ("So $\\boxed{\\textbf{(D)}\\ 14}$", "C", 0),  # the adjacent letter
        ("\\boxed{\\text{(B) } 14}", "\\text{(C)}", 0),
        ("\\boxed{14}", "C", 0),  # the option's value without its letter
        # AMC statements list the options with \qquad: a reply copying them chooses nothing
        ("\\boxed{\\textbf{(A) }\\frac{1}{2}\\qquad\\textbf{(B) }1}", "A", 0),
    ],
}
CASES = [(name, *case) for name, cases in FORMS.items() for case in cases]


@pytest.mark.parametrize(("form", "response", "gold", "score"), CASES)
def test_answer_forms_and_their_near_misses(form, response, gold, score):
    verdict = MathVerifier()(response=response, gold=gold)
    assert verdict.score == score, f"{form}: {response!r} vs {gold!r}: {verdict.reason}"


def test_every_forms_class_has_a_near_miss_that_fails():
    for name, cases in FORMS.items():
        assert {score for _, _, score in cases} == {0, 1}, name


def test_every_unicode_vulgar_fraction_reads_as_its_value():
    fractions = [chr(c) for c in range(0xBC, 0x2190) if "VULGAR FRACTION" in unicodedata.name(chr(c), "")]
    assert len(fractions) >= 19  # ¼ ½ ¾ and ⅐ ... ⅞, ↉
    for char in fractions:
        expected = Fraction(unicodedata.numeric(char)).limit_denominator(10)
        assert to_fraction(clean(char)) == expected, char
        assert to_fraction(clean("3" + char)) == 3 + expected, char  # mixed
        assert to_fraction(clean("−" + char)) == -expected, char  # U+2212


@pytest.mark.parametrize("exponent", [0, 1, 9, 10, 23, 99, 123, -5, -31])
def test_superscript_and_e_notation_exponents_are_exact(exponent):
    superscript = str(exponent).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))
    expected = Fraction(3) * Fraction(10) ** exponent
    assert to_fraction(clean(f"3 × 10{superscript}")) == expected
    assert to_fraction(clean(f"3e{exponent}")) == expected
    assert to_fraction(clean(f"3E{exponent:+d}")) == expected
    assert to_fraction(clean(f"3e{exponent + 1}")) != expected


def test_unicode_text_without_maths_is_unchanged():
    assert unicode_to_latex("The café is 5 km away.") == "The café is 5 km away."
    assert unicode_to_latex("x ≤ 3 and y ≥ −2") == "x \\le  3 and y \\ge  -2"


@pytest.mark.parametrize(
    ("words", "value"),
    [
        ("zero", 0), ("nineteen", 19), ("ninety-nine", 99), ("one hundred", 100),
        ("a hundred", 100), ("three hundred and two", 302), ("one thousand and five", 1005),
        ("a thousand", 1000), ("forty-two thousand three hundred", 42300),
        ("one million two hundred thousand", 1_200_000), ("seven billion", 7 * 10**9),
        ("negative eight", -8), ("Twenty-One.", 21),
    ],
)
def test_number_words_up_to_billions(words, value):
    assert number_word_value(words) == value


@pytest.mark.parametrize(
    "words",
    ["a", "and", "twelve three", "twenty hundred", "five thousand thousand", "thousand million",
     "nineteen eighty", "twelve apples", "one and two", "second", "none", ""],
)
def test_text_that_is_not_one_number_in_words_is_not_read(words):
    assert number_word_value(words) is None
