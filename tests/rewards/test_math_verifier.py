"""Tests for rlvr.rewards: answer extraction, equivalence, failure verdicts and time limits."""

from __future__ import annotations

import signal
import threading
import time
from fractions import Fraction

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.rewards import VERIFIERS, MathVerifier, Verdict, VerifierTimeout, run_with_time_limit
from rlvr.rewards.math import verifier as math_verifier
from rlvr.rewards.math.extract import extract_answer_phrase, extract_last_choice
from rlvr.rewards.math.normalize import choice_letter, to_fraction, top_level_items
from rlvr.rewards.math.verifier import (
    _parse_gold,
    exact_equal,
    extract_boxed,
    extract_last_number,
    too_large,
)

# Found by measurement (math-verify 0.9, sympy 1.14): comparing 9^(9^9) with 1 does not finish
# within math-verify's own 5 s limit; test_pathological_input_really_is_slow keeps it honest.
# A tower plus one: two pure towers are compared exactly (math/power.py), but a sum with a
# huge term is not representable there, so it reaches sympy and only the time limit helps.
PATHOLOGICAL = "so \\boxed{9^{9^{9}} + 1}"
# A gold that is itself a tower gets past the too-large guard.
PATHOLOGICAL_GOLD = "10^{9^{9}}"


def run_in_thread(fn):
    """Call fn() in a non-main thread and return what it returned or raised."""
    outcome = {}

    def target():
        try:
            outcome["value"] = fn()
        except BaseException as error:  # handed back to the test, which inspects it
            outcome["error"] = error

    thread = threading.Thread(target=target)
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive()
    return outcome


# --- correct answers, one per extraction route and comparison path -------------------------


@pytest.mark.parametrize(
    ("response", "gold", "reason"),
    [
        ("68", "68", "correct (via whole)"),
        ("The answer is 68.", "68", "correct (via answer_phrase)"),
        ("\\boxed{68}", "68", "correct (via boxed)"),
        ("<answer>7</answer>", "7", "correct (via answer_tag)"),
        ("-3", "-3", "correct (via whole)"),
        ("x = -3", "-3", "correct (via whole)"),
        ("0.50", "1/2", "correct (via whole)"),  # Fraction("0.50") == Fraction(1, 2)
        ("it costs 1,234 dollars", "1234", "correct (via last_number)"),
        ("\\boxed{\\frac{1}{2}}", "0.5", "correct (via boxed)"),  # math-verify path
        # nested braces: sqrt(4) / 2^2 = 2/4 = 1/2
        ("\\boxed{\\frac{\\sqrt{4}}{2^{2}}}", "1/2", "correct (via boxed)"),
        ("\\boxed{(x+1)^2}", "x^2+2x+1", "correct (via boxed)"),
        ("<answer>$\\frac12$</answer>", "0.5", "correct (via answer_tag)"),
    ],
)
def test_correct_answers_score_one(response, gold, reason):
    assert MathVerifier()(response=response, gold=gold) == Verdict(1.0, reason)


def test_nested_braces_are_matched_by_depth():
    assert extract_boxed("\\boxed{\\frac{a^{2}}{b}} tail}") == "\\frac{a^{2}}{b}"
    assert extract_boxed("\\boxed{\\{1, 2\\}}") == "\\{1, 2\\}"  # escaped braces do not count


def test_last_box_counts():
    verifier = MathVerifier()
    assert verifier(response="first \\boxed{3}, finally \\boxed{5}", gold="5").score == 1.0
    assert verifier(response="first \\boxed{5}, finally \\boxed{3}", gold="5") == Verdict(
        0.0, "wrong: got 3, expected 5"
    )


def test_empty_or_unclosed_last_box_is_a_failed_answer():
    assert extract_boxed("\\boxed{5} then \\boxed{ }") == ""
    assert extract_boxed("\\boxed{5} then \\boxed{6") == ""
    assert extract_boxed("no box here 5") is None
    # the search ends at the empty box: neither a stray number after it nor one before it counts
    empty = Verdict(0.0, "empty or unclosed last box", ("empty_box",))
    assert MathVerifier()(response="I get 4 \\boxed{}", gold="4") == empty
    assert MathVerifier()(response="\\boxed{} 4", gold="4") == empty
    assert MathVerifier()(response="\\boxed{4} then \\boxed{", gold="4") == empty


def test_first_extractor_that_finds_something_wins():
    response = "\\boxed{8}, from the 7 we had"
    assert MathVerifier()(response=response, gold="8") == Verdict(1.0, "correct (via boxed)")
    by_number = MathVerifier(extract=("last_number", "boxed"))
    assert by_number(response=response, gold="8") == Verdict(0.0, "wrong: got 7, expected 8")
    # two different commitments are a hedge whatever the order (issue 27)
    for extract in (("answer_tag", "boxed"), ("boxed", "answer_tag")):
        verdict = MathVerifier(extract=extract)(response="<answer>7</answer> but \\boxed{8}", gold="8")
        assert verdict.score == 0 and verdict.flags == ("hedge",)


def test_last_number_reads_signs_decimals_and_fractions():
    assert extract_last_number("from 2 to -3.5") == "-3.5"
    assert extract_last_number("10-3") == "3"  # a binary minus is not a sign
    assert extract_last_number("about 3/4 of them.") == "3/4"
    assert extract_last_number("none here") is None


# --- normalisation: the answer forms bare math-verify misjudges ----------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("2 1/2", Fraction(5, 2)),  # mixed number: 2 + 1/2
        ("-2 1/2", Fraction(-5, 2)),
        ("2\\frac{1}{2}", Fraction(5, 2)),
        ("2 3/2", None),  # not a proper mixed number: undecided, not 2 + 3/2
        ("1,234", 1234),
        ("1 234", 1234),
        ("1\\,234", 1234),
        ("1{,}234,567.5", Fraction(2469135, 2)),
        ("12 34", None),  # groups of three digits only
        ("\\$5.00", 5),
        ("5 dollars", 5),
        ("5\\text{ cm}", 5),
        ("3x", None),  # a variable is not a unit
        ("2 pi", None),
        ("0.\\overline{3}", Fraction(1, 3)),  # 0.333... = 3/9
        ("0.1\\overline{6}", Fraction(1, 6)),  # 1/10 + 6/90 = 15/90
        ("0.(27)", Fraction(3, 11)),  # 27/99
        ("\\dfrac{6}{8}", Fraction(3, 4)),
        ("\\frac52", Fraction(5, 2)),
        ("3/0", None),
    ],
)
def test_to_fraction_reads_normalised_numbers(text, value):
    assert to_fraction(text) == value


@pytest.mark.parametrize(
    ("answer", "gold", "equal"),
    [
        ("50\\%", "50\\%", True),
        ("50", "50\\%", True),  # the gold's unit left out
        ("0.5", "50\\%", True),  # by value
        ("50%", "0.5", True),
        ("25\\%", "50\\%", False),
        ("5", "50\\%", False),
        ("[1, 2)", "[1,2)", True),
        ("[1, 2]", "[1,2)", False),
        ("(-\\infty, 3]", "(-\\infty,3]", True),
        ("2\\sqrt{3}", "\\sqrt{12}", True),  # (2 sqrt 3)^2 = 12
        ("-\\sqrt{4}", "-2", True),
        ("\\sqrt{4}", "-2", False),  # same square, other sign
        ("x = 3", "3", True),
        ("\\sin x", "\\sin(x)", None),  # not exact: math-verify decides
    ],
)
def test_exact_fast_paths(answer, gold, equal):
    assert exact_equal(answer, gold) is equal


@pytest.mark.parametrize(
    ("answer", "gold", "equal"),
    [
        ("(x+1)^2", "x^2+2x+1", True),  # (x+1)(x+1) = x^2 + 2x + 1
        ("\\left(x+1\\right)^{2}", "x^{2}+2x+1", True),
        ("(x+1)(x-1)", "x^2-1", True),
        ("(x+1)^2", "x^2+x+1", False),
        ("2^{10}", "1024", True),
        ("t^2", "x^2", None),  # a renamed variable: math-verify decides
        ("e^2", "e^{2}", True),  # e is a constant, not a variable: equal by value
        ("x^{100}", "(x^{50})^2", True),  # over MAX_DEGREE: equal by value at sample points
        ("\\sin x^2", "\\sin(x^2)", None),  # a function of a variable: math-verify decides
    ],
)
def test_polynomial_fast_path(answer, gold, equal):
    assert exact_equal(answer, gold) is equal


@settings(max_examples=12, deadline=None)
@given(
    st.lists(st.integers(1, 9) | st.integers(-9, -1), min_size=1, max_size=3),
    st.integers(-9, 9),
)
def test_polynomial_fast_path_agrees_with_math_verify(roots, shift):
    # prod (x - r) against its expansion plus `shift` (equal exactly when shift == 0)
    factored = "".join(f"(x{-r:+d})" for r in roots)
    expanded = sympy.expand(sympy.sympify(factored.replace(")(", ")*(")) + shift)
    expanded = sympy.latex(expanded)
    assert exact_equal(factored, expanded) is math_verifier._math_verify_equal(factored, expanded)


def test_fast_paths_agree_with_math_verify():
    for answer, gold in [("[1, 2)", "[1,2)"), ("2\\sqrt{3}", "\\sqrt{12}"), ("(0, 5)", "(0,5)")]:
        assert exact_equal(answer, gold) is math_verifier._math_verify_equal(answer, gold) is True


@pytest.mark.parametrize(
    ("text", "letter"),
    [("(B)", "B"), ("B)", "B"), ("b.", "B"), ("\\text{(B)}", "B"), ("option B", "B"),
     ("(B) 42", "B"), ("A, B", None), ("42", None)],
)
def test_choice_letter(text, letter):
    assert choice_letter(text) == letter


@pytest.mark.parametrize(
    ("response", "gold", "score"),
    [
        ("answer: b", "B", 1.0),
        ("B)", "B", 1.0),
        ("I pick option B because 12 > 7.", "B", 1.0),
        ("The answer is (A), (B), (C) or (D).", "B", 0.0),  # a hedge
        ("A, B, C, D", "B", 0.0),
    ],
)
def test_multiple_choice(response, gold, score):
    assert MathVerifier()(response=response, gold=gold).score == score


def test_restated_question_is_not_the_answer():
    assert extract_last_number("19. Let me re-read the question: what is 12 + 7?") == "19"
    assert extract_last_number("What is 12 + 7?") is None
    assert extract_last_choice("(C). Was it (A) or (B)?") == "(C)"


def test_answer_phrase_ends_at_its_sentence_or_reason():
    assert extract_answer_phrase("The answer is 19, since 12 + 7 = 19.") == "19"
    assert extract_answer_phrase("**Final Answer:** $5.00.") == "$5.00"
    assert extract_answer_phrase("answer: 3. Then more text 4.") == "3"
    assert extract_answer_phrase("No phrase here, just 4.") is None


def test_hedges_score_zero():
    assert top_level_items("1, 2, 19") == ["1", "2", "19"]
    assert top_level_items("(1, 2)") == ["(1, 2)"]
    assert top_level_items("1,234") == ["1,234"]
    verifier = MathVerifier()
    hedged = Verdict(0.0, "hedge: several answers in 19 or 20", ("hedge",))
    assert verifier(response="The answer is 19 or 20.", gold="19") == hedged
    assert verifier(response="2, 3, 5, 19", gold="19").flags == ("hedge",)
    assert verifier(response="\\boxed{1, 19}", gold="1, 19").score == 1.0  # a list gold takes a list


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(-999, 999), min_size=2, max_size=8, unique=True), st.data())
def test_stuffed_candidate_lists_score_zero(candidates, data):
    gold = data.draw(st.sampled_from(candidates))
    listing = ", ".join(map(str, candidates))
    verifier = MathVerifier()
    for response in (listing, f"The answer is {listing}.", f"\\boxed{{{listing}}}"):
        assert verifier(response=response, gold=str(gold)).score == 0.0


# --- failures -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "gold", "expected"),
    [
        ("\\boxed{12}", "13", Verdict(0.0, "wrong: got 12, expected 13")),
        ("The answer is 67.", "68", Verdict(0.0, "wrong: got 67, expected 68")),
        ("\\boxed{\\frac{1}{3}}", "0.5", Verdict(0.0, "wrong: got \\frac{1}{3}, expected 0.5")),
        ("", "1", Verdict(0.0, "empty completion")),
        ("  \n\t", "1", Verdict(0.0, "empty completion")),
        ("I do not know how to solve this.", "1", Verdict(0.0, "no answer found")),
    ],
)
def test_wrong_and_missing_answers_score_zero_with_reason(response, gold, expected):
    assert MathVerifier()(response=response, gold=gold) == expected


def test_too_long_response_is_not_read():
    assert MathVerifier(max_chars=10)(response="\\boxed{68} " * 2, gold="68") == Verdict(
        0.0, "response too long (22 chars)"
    )


def test_unknown_extract_name_raises_naming_it_and_the_valid_ones():
    with pytest.raises(ValueError, match=r"'boxxed'.*answer_tag.*boxed.*last_number"):
        MathVerifier(extract=("boxed", "boxxed"))


def test_pathological_input_is_cut_by_the_time_limit():
    start = time.monotonic()
    verdict = MathVerifier(timeout_s=0.2)(response=PATHOLOGICAL, gold=PATHOLOGICAL_GOLD)
    assert time.monotonic() - start < 2.0
    assert verdict == Verdict(0.0, "timed out after 0.2 s", ("timeout",))
    # an interrupted sympy computation leaves nothing broken behind
    assert MathVerifier()(response="\\boxed{\\frac{1}{2}}", gold="0.5").score == 1.0


@pytest.mark.slow
def test_pathological_input_really_is_slow():
    # 15 times the limit used above, so that test does not pass vacuously. (Without any limit
    # it was still running after 5 s, math-verify's default.)
    assert MathVerifier(timeout_s=3.0)(response=PATHOLOGICAL, gold=PATHOLOGICAL_GOLD).flags == ("timeout",)


@pytest.mark.parametrize("answer", ["12345!", "9^{9^{9}} + 1", "10^{1000000} \\cdot x"])
def test_too_large_answers_are_refused_without_sympy(answer):
    start = time.monotonic()
    verdict = MathVerifier()(response=f"\\boxed{{{answer}}}", gold="1")
    assert time.monotonic() - start < 0.05
    assert verdict.flags == ("too_large",)


@pytest.mark.parametrize("answer", ["9^{9^{9}}", "10^{1000000}", "2^{3^{4^{5}}}"])
def test_integer_towers_are_decided_exactly_without_sympy(answer):
    # pure integer powers are compared by their prime factorisation (math/power.py): read, not
    # refused, and still fast
    start = time.monotonic()
    verdict = MathVerifier()(response=f"\\boxed{{{answer}}}", gold="1")
    assert time.monotonic() - start < 0.05
    assert verdict.score == 0.0 and verdict.reason.startswith("wrong")


@pytest.mark.parametrize(
    "response",
    [
        "1" * 19990,  # one 20,000-digit literal: seconds inside sympy's C code, past any alarm
        "1 " * 9995,  # a 10,000-item list
        "answer is " * 1999,
        "\\boxed{" * 2800,
        "(" * 19990,
        "What is 1 + " * 1666 + "?",
    ],
)
def test_long_adversarial_replies_are_judged_in_bounded_time(response):
    start = time.monotonic()
    assert MathVerifier()(response=response, gold="5").score == 0.0
    assert time.monotonic() - start < 1.5


@pytest.mark.parametrize("answer", ["2^{10}", "10!", "2^{100}"])
def test_ordinary_powers_are_not_too_large(answer):
    assert not too_large(answer)


def test_verifier_works_outside_the_main_thread():
    # math-verify's own signal timeouts would raise ValueError here; ours uses a worker thread.
    outcome = run_in_thread(lambda: MathVerifier()(response="\\boxed{\\frac{1}{2}}", gold="0.5"))
    assert outcome == {"value": Verdict(1.0, "correct (via boxed)")}


def test_gold_is_parsed_once():
    _parse_gold.cache_clear()
    verifier = MathVerifier()
    # symbolic answers: no exact fast path applies, so each one goes to math-verify
    for response in ["\\boxed{2\\sin(x)\\cos(x)}", "\\boxed{2\\cos x\\sin x}", "\\boxed{\\sin(x+x)}"]:
        assert verifier(response=response, gold="\\sin(2x)").score == 1.0
    assert _parse_gold.cache_info().misses == 1


@settings(max_examples=200, deadline=None)
@given(st.integers())
def test_integer_answers_are_exact(a):
    verifier = MathVerifier()
    assert verifier(response=f"so the answer is {a}", gold=str(a)).score == 1
    assert verifier(response=f"so the answer is {a}", gold=str(a + 1)).score == 0


def test_registry_builds_a_math_verifier():
    assert VERIFIERS["math"]()(response="\\boxed{4}", gold="4").score == 1.0


# --- run_with_time_limit --------------------------------------------------------------------


def swallow_everything_while_sleeping(seconds):
    """Like math-verify and sympy: a broad `except Exception` around the slow part."""
    try:
        time.sleep(seconds)
    except Exception:  # the point of the test: our timeout must get through this
        return "swallowed"
    return "finished"


def test_time_limit_in_main_thread_gets_through_except_exception():
    start = time.monotonic()
    with pytest.raises(VerifierTimeout, match="timed out after 0.1 s"):
        run_with_time_limit(swallow_everything_while_sleeping, 0.1, 5.0)
    assert time.monotonic() - start < 1.0


def swallow_one_alarm():
    """Like mpmath's few bare `except:` blocks: even our BaseException is caught once."""
    try:
        time.sleep(5.0)
    except BaseException:  # the point of the test: the alarm repeats until it gets through
        pass
    time.sleep(5.0)
    return "finished"


def test_time_limit_repeats_until_it_gets_through():
    start = time.monotonic()
    with pytest.raises(VerifierTimeout):
        run_with_time_limit(swallow_one_alarm, 0.1)
    assert time.monotonic() - start < 1.0


def test_time_limit_passes_results_and_errors_through():
    assert run_with_time_limit(lambda a, b=0: a + b, 1.0, 2, b=3) == 5
    with pytest.raises(ZeroDivisionError):
        run_with_time_limit(lambda: 1 / 0, 1.0)
    outcome = run_in_thread(lambda: run_with_time_limit(lambda: 1 / 0, 1.0))
    assert isinstance(outcome["error"], ZeroDivisionError)


def test_time_limit_restores_previous_handler_and_timer():
    def outer_handler(signum, frame):
        raise AssertionError("outer timer must not fire during the test")

    previous = signal.signal(signal.SIGALRM, outer_handler)
    try:
        signal.setitimer(signal.ITIMER_REAL, 100.0)
        with pytest.raises(VerifierTimeout):
            run_with_time_limit(time.sleep, 0.05, 5.0)
        remaining, _ = signal.setitimer(signal.ITIMER_REAL, 0)
        assert signal.getsignal(signal.SIGALRM) is outer_handler
        assert 99.0 < remaining < 100.0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_time_limit_outside_main_thread_abandons_the_worker():
    release = threading.Event()
    try:
        start = time.monotonic()
        outcome = run_in_thread(lambda: run_with_time_limit(release.wait, 0.1, 10.0))
        assert isinstance(outcome["error"], VerifierTimeout)
        assert time.monotonic() - start < 1.0
        assert run_in_thread(lambda: run_with_time_limit(sum, 1.0, [1, 2])) == {"value": 3}
    finally:
        release.set()  # let the abandoned worker end
