"""One list of names per axis, each with its one-line meaning.

A `Registry` is the single place a set of choices is spelled out: the config's `Literal` field
comes from `.literal()`, and every dict keyed by those names is built through `.bind(...)`,
which refuses a dict whose keys are not exactly the names (at import, naming the axis and the
names missing or extra). The registries themselves are declared in `rlvr/names.py`.

No torch here and no imports of the rest of rlvr: `rlvr.config` reads these at load.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Literal, Mapping, TypeVar

V = TypeVar("V")
M = TypeVar("M", bound=Mapping)


class RegistryMismatch(Exception):
    """A table keyed by an axis's names disagrees with the axis's registry (a programming
    error, raised at import: never a user's config problem)."""


@dataclass(frozen=True)
class Registry:
    """The ordered choices of one axis. `key`: the config field that picks one ("algo.surrogate"),
    or a description where no single field does."""

    key: str
    helps: Mapping[str, str]

    def __post_init__(self) -> None:
        if not self.helps:
            raise RegistryMismatch(f"{self.key}: a registry needs at least one name")
        blank = [n for n, h in self.helps.items() if not n or not h.strip()]
        if blank:
            raise RegistryMismatch(f"{self.key}: every name needs a one-line help text ({blank})")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.helps)

    def help(self, name: str) -> str:
        return self.helps[name]

    def literal(self):
        """`typing.Literal[...]` of the names, for a pydantic field."""
        return Literal[self.names]  # type: ignore[valid-type]

    def subset(self, key: str, names: Iterable[str]) -> "Registry":
        """The registry of some of these names (same help), e.g. the verifiers a rubric
        criterion may name. An unknown name raises."""
        names = tuple(names)
        if unknown := [n for n in names if n not in self.helps]:
            raise RegistryMismatch(f"{key}: {unknown} are not {self.key} names ({', '.join(self.names)})")
        return Registry(key, {n: self.helps[n] for n in names})

    def bind(self, mapping: M, *, without: Iterable[str] = (), table: str = "a table") -> M:
        """`mapping` itself, after checking that its keys are exactly the names, less `without`
        (choices that need no entry, like "none"). Raises RegistryMismatch naming what differs."""
        without = tuple(without)
        if unknown := [n for n in without if n not in self.helps]:
            raise RegistryMismatch(f"{table}: `without` names {unknown}, which are not {self.key} names")
        expected = [n for n in self.names if n not in without]
        missing = [n for n in expected if n not in mapping]
        extra = [k for k in mapping if k not in expected]
        if missing or extra:
            raise RegistryMismatch(
                f"{table} and the {self.key} registry (rlvr/names.py) disagree: "
                f"missing {missing or 'nothing'}, extra {extra or 'nothing'}; add or remove the "
                "name in both places")
        return mapping
