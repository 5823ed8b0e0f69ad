"""Power towers and huge powers of integers, compared exactly without expanding them.

`9^{9^9}` has 370 million digits and `2^{2^{2^{2^2}}}` 19,729: sympy (and so math-verify)
either runs into the time limit or compares them wrongly. Yet whether two such expressions
are equal is a question about integers that stay small: a positive integer has one prime
factorisation, so `a^X = c^Y` exactly when every prime has the same exponent on both sides.

`power_value` reads an expression made only of positive integer literals, `^` (right
associative, with `{}` or `()` grouping) and products (`\\cdot`, `\\times`, `*`), and returns
its value in one canonical form:

- an `int` when the value has at most `MAX_BITS` bits (computed exactly, it is small);
- otherwise a `Factored`: the prime factorisation as sorted (prime, exponent) pairs, where an
  exponent is again an `int` or, when itself beyond `MAX_BITS` bits, a `Factored`.

Because the two forms never overlap (a `Factored` is always larger than any `int` here) and a
factorisation is unique, two values are equal exactly when their canonical forms are equal
(`towers_equal`). Anything this cannot represent exactly (a sum with a huge term, a base
whose factorisation trial division cannot finish, a negative exponent) gives None: the rest
of the verifier decides, under its time limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_BITS = 4096
_TRIAL_LIMIT = 100_000  # trial division up to here proves a cofactor below its square prime
_TOKEN = re.compile(r"\s*(\d+|\\cdot|\\times|[*^{}()])")


@dataclass(frozen=True)
class Factored:
    """A positive integer too large to write out, as its (prime, exponent) pairs, sorted."""

    factors: tuple[tuple[int, "int | Factored"], ...]


class _Unrepresentable(Exception):
    """The expression leaves the exact forms above (the caller returns None)."""


def _factorise(n: int) -> dict[int, int]:
    """Prime factorisation of a positive int by trial division; raises when it cannot finish."""
    factors: dict[int, int] = {}
    p = 2
    while p * p <= n and p <= _TRIAL_LIMIT:
        while n % p == 0:
            factors[p] = factors.get(p, 0) + 1
            n //= p
        p += 1 if p == 2 else 2
    if n > 1:
        if p * p <= n:
            raise _Unrepresentable("a factor beyond trial division")
        factors[n] = factors.get(n, 0) + 1
    return factors


def _as_factors(value: "int | Factored") -> dict[int, "int | Factored"]:
    return dict(value.factors) if isinstance(value, Factored) else dict(_factorise(value))


def _canonical(factors: dict[int, "int | Factored"]) -> "int | Factored":
    """The int when the product has at most MAX_BITS bits, else the Factored form."""
    factors = {p: e for p, e in factors.items() if e != 0}
    huge = Factored(tuple(sorted(factors.items())))
    if any(isinstance(exponent, Factored) for exponent in factors.values()):
        return huge
    # (bit_length - 1) <= log2(p): a lower bound, so the product is built only when small
    if sum(e * (p.bit_length() - 1) for p, e in factors.items()) > MAX_BITS:
        return huge
    value = 1
    for prime, exponent in factors.items():
        value *= prime**exponent
    return value if value.bit_length() <= MAX_BITS else huge


def _add_exponents(a: "int | Factored", b: "int | Factored") -> "int | Factored":
    """a + b for exponents; a huge exponent plus anything else is not a product: raise."""
    if isinstance(a, int) and isinstance(b, int):
        return _canonical(_factorise(a + b)) if (a + b).bit_length() > MAX_BITS else a + b
    if a == 0:
        return b
    if b == 0:
        return a
    raise _Unrepresentable("a sum with a huge term")


def multiply(a: "int | Factored", b: "int | Factored") -> "int | Factored":
    """The product, in canonical form."""
    if a == 0 or b == 0:
        return 0
    if isinstance(a, int) and isinstance(b, int) and (a * b).bit_length() <= MAX_BITS:
        return a * b
    factors = _as_factors(a)
    for prime, exponent in _as_factors(b).items():
        factors[prime] = _add_exponents(factors.get(prime, 0), exponent)
    return _canonical(factors)


def power(base: "int | Factored", exponent: "int | Factored") -> "int | Factored":
    """base ** exponent in canonical form, never expanding a value beyond MAX_BITS bits."""
    if base in (0, 1) or exponent == 0:
        return 1 if exponent == 0 else base
    if isinstance(base, int) and isinstance(exponent, int):
        if exponent * (base.bit_length() - 1) <= MAX_BITS and (value := base**exponent).bit_length() <= MAX_BITS:
            return value
    return _canonical({p: multiply(k, exponent) for p, k in _as_factors(base).items()})


class _Parser:
    """Recursive descent over the tokens of one expression (see the module docstring)."""

    def __init__(self, text: str):
        self.tokens, at = [], 0
        text = text.strip()
        while at < len(text):
            match = _TOKEN.match(text, at)
            if match is None:
                raise _Unrepresentable(f"not a power expression at {at}")
            self.tokens.append(match[1])
            at = match.end()
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise _Unrepresentable(f"expected {expected!r}, got {token!r}")
        self.at += 1
        return token

    def product(self) -> "int | Factored":
        value = self.tower()
        while self.peek() in ("\\cdot", "\\times", "*"):
            self.take()
            value = multiply(value, self.tower())
        return value

    def tower(self) -> "int | Factored":
        base = self.atom()
        if self.peek() != "^":
            return base
        self.take("^")
        return power(base, self.tower())  # right associative: 2^{2^{2}} is 2^(2^2)

    def atom(self) -> "int | Factored":
        token = self.take()
        if token.isdigit():
            if len(token) > 2 * MAX_BITS:
                return _too_long()
            n = int(token)  # beyond MAX_BITS a literal is Factored, like a computed value
            return n if n.bit_length() <= MAX_BITS else _canonical(_factorise(n))
        closing = {"{": "}", "(": ")"}.get(token)
        if closing is None:
            raise _Unrepresentable(f"unexpected {token!r}")
        value = self.product()
        self.take(closing)
        return value


def _too_long() -> int:
    raise _Unrepresentable("an integer literal too long to read")


def power_value(text: str) -> "int | Factored | None":
    """The canonical value of an integer power expression ("9^{9^9}", "2^{65536}",
    "(2^3)^4", "2^{10} \\cdot 5^{10}", "1024"), or None when `text` is not one or leaves the
    exact forms (see the module docstring)."""
    if len(text) > 2000:
        return None
    try:
        parser = _Parser(text)
        if not parser.tokens:
            return None
        value = parser.product()
        return value if parser.peek() is None else None
    except (_Unrepresentable, RecursionError):
        return None


def towers_equal(answer: str, gold: str) -> bool | None:
    """True/False when both sides are integer power expressions with at least one `^`, else
    None. Exact: "9^{9^9}" = "9^{387420489}" = "3^{774840978}", "2^{65535}" != "2^{2^{16}}"."""
    if "^" not in answer and "^" not in gold:
        return None
    answer_value, gold_value = power_value(answer), power_value(gold)
    if answer_value is None or gold_value is None:
        return None
    return answer_value == gold_value
