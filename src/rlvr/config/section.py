"""The base of every config section (schema.py, task_sections.py, sections_env.py)."""

from __future__ import annotations

from typing import Any, Iterator

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator

from rlvr.config.values import check_plain_value


class Section(BaseModel):
    """Every section: unknown keys refused, frozen, floats finite (no NaN, inf, or 1e400), no
    boolean where a number is meant, integers within 64 bits, strings valid Unicode."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _plain(cls, value: Any, info: ValidationInfo) -> Any:
        check_plain_value(value, cls.model_fields[info.field_name].annotation)
        return value


def refuse(problems: Iterator[str]) -> None:
    """ValueError with every sentence, for a pydantic validator (which names the file and line)."""
    if found := list(problems):
        raise ValueError("; ".join(found))
