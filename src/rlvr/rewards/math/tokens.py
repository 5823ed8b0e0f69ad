"""A cursor over a token list, shared by the recursive-descent parsers of maths answers
(`numeric` for values, `polynomial` for coefficients)."""

from __future__ import annotations


class TokenCursor:
    """`peek` the next token (None at the end), `take` it; running out raises `error`, the
    parser's own "not mine" exception, so its caller can fall back to another comparison."""

    error: type[Exception] = ValueError

    def __init__(self, tokens: list[str]):
        self.tokens, self.at = tokens, 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise self.error("unexpected end")
        self.at += 1
        return token
