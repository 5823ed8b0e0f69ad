"""The token cursor the maths parsers share: running out is the parser's own refusal, so a
truncated answer is "not a value" (None), never a value read from a made-up token."""

from __future__ import annotations

import pytest

from rlvr.rewards.math.numeric import numeric_value
from rlvr.rewards.math.polynomial import polynomial
from rlvr.rewards.math.tokens import TokenCursor


class _Mine(Exception):
    pass


def test_taking_past_the_end_raises_the_parsers_error():
    class Cursor(TokenCursor):
        error = _Mine

    cursor = Cursor(["1", "+"])
    assert (cursor.take(), cursor.peek(), cursor.take(), cursor.peek()) == ("1", "+", "+", None)
    with pytest.raises(_Mine, match="unexpected end"):
        cursor.take()


@pytest.mark.parametrize("text", ["2*(3+", "(1+2", "\\frac{1}{", "3^"])
def test_truncated_answers_have_no_value(text):
    assert numeric_value(text) is None


@pytest.mark.parametrize("text", ["(x+1", "x^", "2*(x-"])
def test_truncated_answers_are_no_polynomial(text):
    assert polynomial(text) is None
