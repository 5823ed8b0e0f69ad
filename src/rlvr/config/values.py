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
NAME_MAX = 255  # bytes of one path component on Linux and macOS file systems (ENAMETOOLONG past it)
PATH_MAX = 3800  # of PATH_MAX's 4096 bytes, what output_dir may take: the run's files go below it
# Config numbers become float32 scalars in torch ops (clamp bounds, learning rates), and torch
# raises "cannot be converted to type float without overflow" above this.
FLOAT32_MAX = 3.4028234663852886e38


def leaf_types(annotation: Any) -> set:
    """The plain types a field's annotation admits at any depth (Optional, list, Annotated,
    Literal values' types), e.g. list[Annotated[int, ...]] → {int}."""
    if isinstance(annotation, type) and not typing.get_args(annotation):
        return {annotation}
    if typing.get_origin(annotation) is typing.Literal:
        return {type(v) for v in typing.get_args(annotation)}
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is typing.Annotated:
        args = args[:1]
    return set().union(*(leaf_types(a) for a in args)) if args else {annotation}


def numbers_only(annotation: Any) -> bool:
    """A number field (int or float, in any container) that takes no text."""
    leaves = leaf_types(annotation)
    return bool(leaves & {int, float}) and str not in leaves


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
            if numbers_only(annotation):  # pydantic's lax mode reads '1e-3' as 1e-3 without a word
                raise ValueError("expected a number, not text (write it without quotes)")
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


def check_run_name(name: str) -> str:
    """run.name is one folder under run.output_dir: not empty ("" would write into output_dir
    itself), no '/', not '.' or '..', no leading or trailing space, at most NAME_MAX bytes."""
    if not name:
        raise ValueError("empty: the run would write into run.output_dir itself; give it a name")
    if name != name.strip():
        raise ValueError(f"{name!r} starts or ends with white space (a folder name easy to miss); strip it")
    if "/" in name or "\0" in name or name in (".", ".."):
        raise ValueError(f"{name!r}: one folder name, without '/' (set run.output_dir for the parent folder)")
    if len(name.encode("utf-8", "surrogatepass")) > NAME_MAX:
        raise ValueError(f"{len(name.encode('utf-8', 'surrogatepass'))} bytes long; a folder name takes at most "
                         f"{NAME_MAX}")
    return name


def check_folder_path(path: str) -> str:
    """run.output_dir: not empty, no NUL, every component at most NAME_MAX bytes, at most PATH_MAX."""
    raw = path.encode("utf-8", "surrogatepass")
    if not path or "\0" in path:
        raise ValueError("needs a folder path (no NUL character)")
    longest = max(raw.split(b"/"), key=len)
    if len(longest) > NAME_MAX:
        raise ValueError(f"a folder name of {len(longest)} bytes in it; each takes at most {NAME_MAX}")
    if len(raw) > PATH_MAX:
        raise ValueError(f"{len(raw)} bytes long; at most {PATH_MAX} (the run's files go below it)")
    return path
