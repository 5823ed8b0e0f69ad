"""The range of every number a config takes, as `rlvr recipes show NAME --explain` prints it:
the bounds each field's pydantic constraints (config/schema.py, task_sections.py,
sections_env.py) state, read back from the model, so the page and the check cannot differ."""

from __future__ import annotations

from typing import Any, Iterator

from pydantic import BaseModel

from rlvr.config.values import leaf_types, numbers_only


def bounds(metadata: list) -> tuple[Any, bool, Any, bool]:
    """(low, low included, high, high included) from a field's Ge/Gt/Le/Lt metadata (None: open)."""
    low = high = None
    low_in = high_in = True
    for m in metadata:
        for name in ("ge", "gt", "le", "lt"):
            value = getattr(m, name, None)
            if value is None:
                continue
            if name in ("ge", "gt"):
                low, low_in = value, name == "ge"
            else:
                high, high_in = value, name == "le"
    return low, low_in, high, high_in


def field_bounds(info) -> tuple[Any, bool, Any, bool]:
    """A field's bounds; for a list of bounded numbers (eval.k) its items'."""
    found = bounds(info.metadata)
    for arg in getattr(info.annotation, "__args__", ()):
        if found[0] is None and found[2] is None:  # Annotated[int, Field(...)] items: the Field's own
            found = bounds([c for m in getattr(arg, "__metadata__", ()) for c in getattr(m, "metadata", [m])])
    return found


def number(value) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"


def interval(low, low_in: bool, high, high_in: bool) -> str:
    left = "(-inf" if low is None else f"{'[' if low_in else '('}{number(low)}"
    right = "inf)" if high is None else f"{number(high)}{']' if high_in else ')'}"
    return f"{left}, {right}"


def numeric_fields(model: type[BaseModel], prefix: str) -> Iterator[tuple[str, Any]]:
    """(dotted key, field info) of every number field of a section (not its subsections)."""
    for key, info in model.model_fields.items():
        if numbers_only(info.annotation) and bool not in leaf_types(info.annotation):
            yield f"{prefix}{key}", info


def range_lines(section: BaseModel, prefix: str) -> list[str]:
    """`#   train.lr = 1e-05 in (0, 1]` for each number of `section` and its subsections."""
    lines = [f"#   {key} = {getattr(section, key.rsplit('.', 1)[1])!r} in {interval(*field_bounds(info))}"
             for key, info in numeric_fields(type(section), prefix)]
    for key in type(section).model_fields:
        value = getattr(section, key)
        if isinstance(value, BaseModel):
            lines += range_lines(value, f"{prefix}{key}.")
    return lines
