"""The value format of the code verifier: plain data as JSON-ready trees, both ways.

Stdlib only, no `from __future__`: `sandbox/program.py` ships this source into the sandbox
before `code/harness.py`, and the parent imports it to decode what the sandbox sends, so that
both sides read and write one format. Types are checked exactly, never with isinstance: an
object that is not plain data (a subclass with an always-true `__eq__`) cannot be encoded.
"""

import math

MAX_DEPTH = 64
MAX_INT_BITS = 14_000  # ~4200 decimal digits: under Python's int-to-text limit (4300 digits)
_SCALARS = (type(None), bool, int, float, str)


def encode_value(value, depth: int = 0):
    """Turn plain data into JSON-ready data; anything else raises TypeError.

    Types are checked exactly (`type(x) is int`), never with isinstance: a subclass can
    override `__eq__`. Lists and scalars stay JSON; every other container becomes a one-key
    object naming its type, so that a JSON object is always a tag and decoding is unambiguous.
    """
    kind = type(value)
    if depth > MAX_DEPTH:
        raise TypeError(f"value nested deeper than {MAX_DEPTH}")
    if kind is float and not math.isfinite(value):
        return {"float": repr(value)}
    if kind is int and value.bit_length() > MAX_INT_BITS:
        raise TypeError(
            f"integer of {value.bit_length()} bits is too large to pass (limit {MAX_INT_BITS})"
        )
    if kind in _SCALARS:
        return value
    if kind is list:
        return [encode_value(item, depth + 1) for item in value]
    if kind in (tuple, set, frozenset):
        return {kind.__name__: [encode_value(item, depth + 1) for item in value]}
    if kind is dict:
        return {
            "dict": [
                [encode_value(k, depth + 1), encode_value(v, depth + 1)] for k, v in value.items()
            ]
        }
    if kind is bytes:
        return {"bytes": value.hex()}
    if kind is complex:
        return {"complex": [encode_value(value.real), encode_value(value.imag)]}
    raise TypeError(
        f"cannot pass a {kind.__name__!s:.60} value across the sandbox (plain data only)"
    )


def decode_value(tree, depth: int = 0):
    """Inverse of `encode_value`; anything it could not have produced raises ValueError."""
    if depth > MAX_DEPTH:
        raise ValueError(f"value nested deeper than {MAX_DEPTH}")
    if type(tree) in _SCALARS:
        return tree
    if type(tree) is list:
        return [decode_value(item, depth + 1) for item in tree]
    if type(tree) is not dict or len(tree) != 1:
        raise ValueError("malformed encoded value")
    ((tag, body),) = tree.items()
    if tag == "float" and body in ("nan", "inf", "-inf"):
        return float(body)
    if tag == "bytes" and type(body) is str:
        return bytes.fromhex(body)
    if type(body) is not list:
        raise ValueError(f"malformed encoded {tag!s:.20}")
    items = [decode_value(item, depth + 1) for item in body]
    if tag in ("tuple", "set", "frozenset"):
        return {"tuple": tuple, "set": set, "frozenset": frozenset}[tag](items)
    if tag == "dict" and all(type(pair) is list and len(pair) == 2 for pair in items):
        return {key: item for key, item in items}
    if tag == "complex" and len(items) == 2 and all(type(x) in (int, float) for x in items):
        return complex(*items)
    raise ValueError(f"unknown value tag {tag!s:.20}")
