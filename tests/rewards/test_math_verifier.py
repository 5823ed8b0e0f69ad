"""Tests for rlvr.rewards: answer extraction, equivalence, failure verdicts and time limits."""

from __future__ import annotations

import signal
import threading
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from rlvr.rewards import VERIFIERS, MathVerifier, Verdict, VerifierTimeout, run_with_time_limit
from rlvr.rewards.math_verifier import _parse_gold, extract_boxed, extract_last_number

# Found by measurement (math-verify 0.9, sympy 1.14): comparing 9^(9^9) with 1 does not finish
# within math-verify's own 5 s limit; test_pathological_input_really_is_slow keeps it honest.
PATHOLOGICAL = "so \\boxed{9^{9^{9}}}"


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
        ("68", "68", "correct (via last_number)"),
        ("The answer is 68.", "68", "correct (via last_number)"),
        ("\\boxed{68}", "68", "correct (via boxed)"),
        ("<answer>7</answer>", "7", "correct (via answer_tag)"),
        ("-3", "-3", "correct (via last_number)"),
        ("x = -3", "-3", "correct (via last_number)"),
        ("0.50", "1/2", "correct (via last_number)"),  # Fraction("0.50") == Fraction(1, 2)
        ("it costs 1,234 dollars", "1234", "correct (via last_number)"),
        ("\\boxed{\\frac{1}{2}}", "0.5", "correct (via boxed)"),  # math-verify path
        # nested braces: sqrt(4) / 2^2 = 2/4 = 1/2
        ("\\boxed{\\frac{\\sqrt{4}}{2^{2}}}", "1/2", "correct (via boxed)"),
        ("\\boxed{(x+1)^2}", "x^2+2x+1", "correct (via boxed)"),
        ("<answer>$\\frac12$</answer>", "0.5", "correct (via answer_tag)"),
    ],
)
def test_correct_answers_score_one(response, gold, reason):
    assert MathVerifier()(response, gold) == Verdict(1.0, reason)


def test_nested_braces_are_matched_by_depth():
    assert extract_boxed("\\boxed{\\frac{a^{2}}{b}} tail}") == "\\frac{a^{2}}{b}"
    assert extract_boxed("\\boxed{\\{1, 2\\}}") == "\\{1, 2\\}"  # escaped braces do not count


def test_last_box_counts():
    verifier = MathVerifier()
    assert verifier("first \\boxed{3}, finally \\boxed{5}", "5").score == 1.0
    assert verifier("first \\boxed{5}, finally \\boxed{3}", "5") == Verdict(
        0.0, "wrong: got 3, expected 5"
    )


def test_empty_or_unclosed_last_box_means_no_boxed_answer():
    assert extract_boxed("\\boxed{5} then \\boxed{ }") is None
    assert extract_boxed("\\boxed{5} then \\boxed{6") is None
    # the box is not used, so the next extractor (last number) decides
    assert MathVerifier()("I get 4 \\boxed{}", "4") == Verdict(1.0, "correct (via last_number)")


def test_first_extractor_that_finds_something_wins():
    response = "<answer>7</answer> but \\boxed{8}"
    assert MathVerifier()(response, "8") == Verdict(1.0, "correct (via boxed)")
    by_tag = MathVerifier(extract=("answer_tag", "boxed"))
    assert by_tag(response, "8") == Verdict(0.0, "wrong: got 7, expected 8")


def test_last_number_reads_signs_decimals_and_fractions():
    assert extract_last_number("from 2 to -3.5") == "-3.5"
    assert extract_last_number("10-3") == "3"  # a binary minus is not a sign
    assert extract_last_number("about 3/4 of them.") == "3/4"
    assert extract_last_number("none here") is None


# --- failures -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("response", "gold", "expected"),
    [
        ("\\boxed{12}", "13", Verdict(0.0, "wrong: got 12, expected 13")),
        ("The answer is 67.", "68", Verdict(0.0, "wrong: got 67, expected 68")),
        ("\\boxed{\\frac{1}{3}}", "0.5", Verdict(0.0, "wrong: got \\frac{1}{3}, expected 0.5")),
        ("", "1", Verdict(0.0, "empty completion")),
        ("  \n\t", "1", Verdict(0.0, "empty completion")),
        ("I do not know.", "1", Verdict(0.0, "no answer found")),
    ],
)
def test_wrong_and_missing_answers_score_zero_with_reason(response, gold, expected):
    assert MathVerifier()(response, gold) == expected


def test_too_long_response_is_not_read():
    assert MathVerifier(max_chars=10)("\\boxed{68} " * 2, "68") == Verdict(
        0.0, "response too long (22 chars)"
    )


def test_unknown_extract_name_raises_naming_it_and_the_valid_ones():
    with pytest.raises(ValueError, match=r"'boxxed'.*answer_tag.*boxed.*last_number"):
        MathVerifier(extract=("boxed", "boxxed"))


def test_pathological_input_is_cut_by_the_time_limit():
    start = time.monotonic()
    verdict = MathVerifier(timeout_s=0.2)(PATHOLOGICAL, "1")
    assert time.monotonic() - start < 2.0
    assert verdict == Verdict(0.0, "timed out after 0.2 s", ("timeout",))
    # an interrupted sympy computation leaves nothing broken behind
    assert MathVerifier()("\\boxed{\\frac{1}{2}}", "0.5").score == 1.0


@pytest.mark.slow
def test_pathological_input_really_is_slow():
    # 15 times the limit used above, so that test does not pass vacuously. (Without any limit
    # it was still running after 5 s, math-verify's default.)
    assert MathVerifier(timeout_s=3.0)(PATHOLOGICAL, "1").flags == ("timeout",)


def test_verifier_works_outside_the_main_thread():
    # math-verify's own signal timeouts would raise ValueError here; ours uses a worker thread.
    outcome = run_in_thread(lambda: MathVerifier()("\\boxed{\\frac{1}{2}}", "0.5"))
    assert outcome == {"value": Verdict(1.0, "correct (via boxed)")}


def test_gold_is_parsed_once():
    _parse_gold.cache_clear()
    verifier = MathVerifier()
    for response in ["\\boxed{\\frac{2}{4}}", "\\boxed{\\sqrt{1/4}}", "\\boxed{2^{-1}}"]:
        assert verifier(response, "\\frac{1}{2}").score == 1.0
    assert _parse_gold.cache_info().misses == 1


@settings(max_examples=200, deadline=None)
@given(st.integers())
def test_integer_answers_are_exact(a):
    verifier = MathVerifier()
    assert verifier(f"so the answer is {a}", str(a)).score == 1
    assert verifier(f"so the answer is {a}", str(a + 1)).score == 0


def test_registry_builds_a_math_verifier():
    assert VERIFIERS["math"]()("\\boxed{4}", "4").score == 1.0


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
