"""Exact comparison of polynomials in one variable, without sympy.

`polynomial("(x+1)^2")` is `(1, 2, 1)`: the coefficients of x^0, x^1, x^2 as `Fraction`s, so
two answers are equal polynomials exactly when their tuples are. Grammar (anything else gives
None, and math-verify decides):

    expr   := term (("+" | "-") term)*
    term   := factor (("*" | "\\cdot" | "\\times" | nothing) factor)*
    factor := "-" factor | "+" factor | base ("^" exponent)?
    base   := number | letter | "(" expr ")" | "{" expr "}" | "\\left(" expr "\\right)"

At most one distinct letter, never "e" or "i" (constants, not variables); exponents are
whole numbers up to `MAX_DEGREE`, so the work is bounded by the text's length times
`MAX_DEGREE` squared. `gaussian` reads the same grammar with "i" as its one letter, for
complex answers "a + bi".
"""

from __future__ import annotations

import re
from fractions import Fraction

from rlvr.rewards.math.tokens import TokenCursor

MAX_DEGREE = 32
_TOKEN = re.compile(
    r"\s*(\d{1,40}(?:\.\d{1,40})?|[a-zA-Z]|\\cdot|\\times|\\left\(|\\right\)|[-+*^(){}])"
)
_ENDS_TERM = ("+", "-", ")", "}", "\\right)", "^")
_OPEN = {"(": ")", "{": "}", "\\left(": "\\right)"}

Poly = tuple[Fraction, ...]


class _NotPolynomial(Exception):
    """The text is outside the grammar in the module docstring."""


def _trim(coefficients: list[Fraction]) -> Poly:
    while len(coefficients) > 1 and coefficients[-1] == 0:
        coefficients.pop()
    return tuple(coefficients)


def _add(p: Poly, q: Poly, sign: int = 1) -> Poly:
    size = max(len(p), len(q))
    zeros = [Fraction(0)] * size
    padded_p, padded_q = (list(p) + zeros)[:size], (list(q) + zeros)[:size]
    return _trim([a + sign * b for a, b in zip(padded_p, padded_q)])


def _mul(p: Poly, q: Poly) -> Poly:
    if len(p) + len(q) - 2 > MAX_DEGREE:
        raise _NotPolynomial("degree too high")
    product = [Fraction(0)] * (len(p) + len(q) - 1)
    for i, a in enumerate(p):
        for j, b in enumerate(q):
            product[i + j] += a * b
    return _trim(product)


class _Parser(TokenCursor):
    """Recursive descent over the tokens of one answer; see the module docstring."""

    error = _NotPolynomial

    def __init__(self, tokens: list[str], unit: bool = False):
        super().__init__(tokens)
        self.letters = set()
        self.unit = unit  # read "i" as the letter (see `gaussian`)

    def expr(self) -> Poly:
        value = self.term()
        while self.peek() in ("+", "-"):
            sign = 1 if self.take() == "+" else -1
            value = _add(value, self.term(), sign)
        return value

    def term(self) -> Poly:
        value = self.factor()
        while (token := self.peek()) is not None and token not in _ENDS_TERM:
            if token in ("*", "\\cdot", "\\times"):
                self.take()
            value = _mul(value, self.factor())
        return value

    def factor(self) -> Poly:
        if self.peek() in ("-", "+"):
            sign = -1 if self.take() == "-" else 1
            return _mul((Fraction(sign),), self.factor())
        value = self.base()
        if self.peek() == "^":
            self.take()
            exponent = self.base()
            power = exponent[0] if len(exponent) == 1 else None
            if power is None or power.denominator != 1 or not 0 <= power <= MAX_DEGREE:
                raise _NotPolynomial("exponent must be a small whole number")
            result: Poly = (Fraction(1),)
            for _ in range(int(power)):
                result = _mul(result, value)
            return result
        return value

    def base(self) -> Poly:
        token = self.take()
        if token in _OPEN:
            value = self.expr()
            if self.take() != _OPEN[token]:
                raise _NotPolynomial("unbalanced brackets")
            return value
        if token[0].isdigit():
            return (Fraction(token),)
        if token.isalpha() and token != "e" and (token != "i" or self.unit):
            self.letters.add(token)
            return (Fraction(0), Fraction(1))
        raise _NotPolynomial(f"unexpected {token!r}")


def polynomial(text: str) -> tuple[str | None, Poly] | None:
    """(its letter or None, its coefficients) for a polynomial in at most one letter, else None."""
    return _read(text, unit=False)


def gaussian(text: str) -> tuple[Fraction, Fraction] | None:
    """(a, b) for "a + bi" with rational a, b ("3 - 4i", "i + 1", "-4 + 0i", "2(1+i)"), else None.

    Only answers of degree at most 1 in i: a + bi equals c + di exactly when a = c and b = d
    whether "i" is read as the imaginary unit or as a variable, so this agrees with
    math-verify whichever reading it takes; "i^2" (where the two differ) is left to it.
    """
    read = _read(text, unit=True)
    if read is None or read[0] not in (None, "i") or len(read[1]) > 2:
        return None
    coefficients = read[1] + (Fraction(0),) * (2 - len(read[1]))
    return coefficients[0], coefficients[1]


def _read(text: str, unit: bool) -> tuple[str | None, Poly] | None:
    text = text.strip().strip("$")
    tokens, position = [], 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            return None
        tokens.append(match[1])
        position = match.end()
        if text[position:].strip() == "":
            break
    parser = _Parser(tokens, unit)
    try:
        value = parser.expr()
    except _NotPolynomial:
        return None
    if parser.peek() is not None or len(parser.letters) > 1:
        return None
    return (next(iter(parser.letters), None), value)
