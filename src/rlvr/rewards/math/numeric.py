"""The value of a constant LaTeX expression as a float, without sympy.

`numeric_value("\\frac{3\\sqrt{2}}{4}\\pi")` is about 3.332. Used two ways: to judge a decimal
answer against an exact one ("1.414213562" against `\\sqrt{2}`), and to compare two constant
expressions that math-verify could not parse. Grammar (anything else gives None):

    expr    := term (("+" | "-") term)*
    term    := unary (("*" | "\\cdot" | "\\times" | "/" | "\\div" | nothing) unary)*
    unary   := ("-" | "+") unary | power
    power   := atom ("^" atom)? "!"?
    atom    := number | "\\pi" | "e" | "(" expr ")" | "{" expr "}" | "\\frac" atom atom
             | "\\sqrt" ("[" expr "]")? atom | "\\binom" atom atom | function atom

Floats only, so a power tower overflows (None) instead of running for minutes; factorials
and binomials are limited to small whole numbers.
"""

from __future__ import annotations

import math
import re

from rlvr.rewards.math.tokens import TokenCursor

_TOKEN = re.compile(
    r"\s*(\d+(?:\.\d+)?|\\[a-zA-Z]+|[a-zA-Z]+|[-+*/^(){}\[\]!])"
)
_FUNCTIONS = {
    "sin": math.sin, "cos": math.cos, "tan": math.tan, "ln": math.log, "log": math.log10,
    "exp": math.exp, "arcsin": math.asin, "arccos": math.acos, "arctan": math.atan,
}
_CONSTANTS = {"\\pi": math.pi, "pi": math.pi, "e": math.e}
_SHORT_ARGS = [
    (re.compile(r"\\frac\s*(\d)\s*(\d)"), r"\\frac{\1}{\2}"),
    (re.compile(r"\\frac\s*(\d)\s*\{"), r"\\frac{\1}{"),
    (re.compile(r"\\sqrt\s*(\d)"), r"\\sqrt{\1}"),
    (re.compile(r"\\[dt]?binom\s*(\d)\s*(\d)"), r"\\binom{\1}{\2}"),
]
_OPEN = {"(": ")", "{": "}"}
_STARTS_ATOM = ("(", "{", "\\pi", "pi", "e", "\\frac", "\\sqrt", "\\binom")


class _NotNumeric(Exception):
    """Outside the grammar, or not a real number."""


class _Parser(TokenCursor):
    error = _NotNumeric

    def __init__(self, tokens: list[str], env: dict[str, float]):
        super().__init__(tokens)
        self.env = env

    def expr(self) -> float:
        value = self.term()
        while self.peek() in ("+", "-"):
            value = value + self.term() if self.take() == "+" else value - self.term()
        return value

    def term(self) -> float:
        value = self.unary()
        while (token := self.peek()) is not None:
            if token in ("*", "\\cdot", "\\times"):
                self.take()
                value *= self.unary()
            elif token in ("/", "\\div"):
                self.take()
                value /= self.unary()
            elif token[0].isdigit() or token in _STARTS_ATOM or _function(token) or token in self.env:
                value *= self.unary()
            else:
                break
        return value

    def unary(self) -> float:
        if self.peek() in ("-", "+"):
            return -self.unary() if self.take() == "-" else self.unary()
        value = self.atom()
        if self.peek() == "^":
            self.take()
            value = _real(value ** (-self.atom() if self._minus() else self.atom()))
        if self.peek() == "!":
            self.take()
            value = _factorial(value)
        return value

    def _minus(self) -> bool:
        if self.peek() == "-":
            self.take()
            return True
        return False

    def atom(self) -> float:
        token = self.take()
        if token in _OPEN:
            value = self.expr()
            if self.take() != _OPEN[token]:
                raise _NotNumeric("unbalanced brackets")
            return value
        if token[0].isdigit():
            return float(token)
        if token in _CONSTANTS:
            return _CONSTANTS[token]
        if token in self.env:
            return self.env[token]
        if token == "\\frac":
            return self.atom() / self.atom()
        if token == "\\binom":
            return _binom(self.atom(), self.atom())
        if token == "\\sqrt":
            return self._root()
        if function := _function(token):
            # "\\ln e^2" is ln(e^2): an unbracketed argument takes its exponent with it
            argument = self.atom()
            if self.peek() == "^":
                self.take()
                argument = _real(argument ** (-self.atom() if self._minus() else self.atom()))
            return _real(function(argument))
        raise _NotNumeric(f"unexpected {token!r}")

    def _root(self) -> float:
        degree = 2.0
        if self.peek() == "[":
            self.take()
            degree = self.expr()
            if self.take() != "]":
                raise _NotNumeric("unbalanced root degree")
        radicand = self.atom()
        if radicand < 0:
            raise _NotNumeric("root of a negative number")
        return radicand ** (1.0 / degree)


def _function(token: str):
    return _FUNCTIONS.get(token.lstrip("\\"))


def _real(value) -> float:
    if isinstance(value, complex) or math.isnan(value) or math.isinf(value):
        raise _NotNumeric("not a finite real number")
    return float(value)


def _whole(value: float, limit: int) -> int:
    if value != int(value) or not 0 <= value <= limit:
        raise _NotNumeric("not a small whole number")
    return int(value)


def _factorial(value: float) -> float:
    return float(math.factorial(_whole(value, 170)))


def _binom(n: float, k: float) -> float:
    return float(math.comb(_whole(n, 1000), _whole(k, 1000)))


def tokens(text: str) -> list[str] | None:
    """The grammar's tokens of `text` ("xy" is two letters), or None if it has others."""
    for pattern, replacement in _SHORT_ARGS:
        text = pattern.sub(replacement, text)
    found, position = [], 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            if text[position:].strip():
                return None
            break
        token = match[1]
        letters = token.isalpha() and token not in _FUNCTIONS and token != "pi"
        found += list(token) if letters else [token]
        position = match.end()
    return found


def variables(found: list[str]) -> set[str]:
    """The one-letter variables among `found` tokens (e is the constant, i is refused)."""
    return {token for token in found if len(token) == 1 and token.isalpha() and token != "e"}


def numeric_value(text: str, env: dict[str, float] | None = None) -> float | None:
    """The value of `text` in the grammar above, its variables set from `env`, else None."""
    found = tokens(text)
    if found is None:
        return None
    env = env or {}
    if variables(found) - set(env) or (env and any(_function(token) for token in found)):
        return None  # an unset variable; or "\\sin x^2", whose reading is ambiguous
    return _evaluate(found, env)


def _evaluate(tokens: list[str], env: dict[str, float]) -> float | None:
    if not tokens or len(tokens) > 400 or "i" in env:
        return None
    parser = _Parser(tokens, env)
    try:
        value = _real(parser.expr())
    except (_NotNumeric, ZeroDivisionError, OverflowError, ValueError):
        return None
    return value if parser.peek() is None else None
