"""The checks every config value passes, whatever its field: see `Section` in schema.py.

pydantic's lax mode reads `true` as 1 for an int or float field; a 400-digit integer, or a
float past 3.4e38, reaches torch as an overflow deep inside a run; a lone surrogate (from a mis-decoded command
line) fails only when the resolved config is written. These checks refuse them at load time.
Non-finite floats are refused by pydantic itself (`allow_inf_nan=False`).
"""

from __future__ import annotations

import math
import typing
from typing import Any

INT64_LIMIT = 2**63
# Config numbers become float32 scalars in torch ops (clamp bounds, learning rates), and torch
# raises "cannot be converted to type float without overflow" above this.
FLOAT32_MAX = 3.4028234663852886e38


def admits_bool(annotation: Any) -> bool:
    """Whether a field's type accepts a boolean anywhere (bool, Optional[bool], list[bool]...)."""
    if annotation is bool:
        return True
    return any(admits_bool(arg) for arg in typing.get_args(annotation))


def check_plain_value(value: Any, annotation: Any) -> None:
    """ValueError for a boolean in a non-boolean field, an integer outside 64 bits, or a string
    that is not valid Unicode, at any depth of lists and tuples (sections check themselves)."""
    if annotation in (bool, typing.Optional[bool]) and value is not None and not isinstance(value, bool):
        raise ValueError("expected true or false")
    stack, bool_ok = [value], admits_bool(annotation)
    while stack:
        v = stack.pop()
        if isinstance(v, bool):
            if not bool_ok:
                raise ValueError(f"expected a number or text, not the boolean {str(v).lower()}")
        elif isinstance(v, int):
            if not -INT64_LIMIT <= v < INT64_LIMIT:
                raise ValueError("integer outside the 64-bit range")
        elif isinstance(v, float):
            if math.isfinite(v) and abs(v) > FLOAT32_MAX:  # NaN, inf: pydantic's finite check
                raise ValueError("number beyond float32's range (3.4e38), the range training computes in")
        elif isinstance(v, str):
            check_unicode(v)
        elif isinstance(v, (list, tuple)):
            stack.extend(v)


def check_unicode(text: str) -> None:
    """ValueError naming the first lone surrogate (U+D800..U+DFFF) of `text`: such a string
    cannot be written as UTF-8, so the run folder's config.toml could not hold it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(f"text holds a lone surrogate \\u{ord(text[e.start]):04x} at character {e.start} "
                         f"(not valid Unicode)") from None
