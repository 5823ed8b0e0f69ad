"""`Attack`: one reply of the reward-hack suite (attacks.py, code/attacks.py) and the score a
sound verifier must give it; a module of its own so that both suites import it one way."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from rlvr import names
from rlvr.rewards.code.tests import CodeTests

KINDS = names.PROGRAM_VERIFIER.names  # the built-in verifiers an attack can target
TEXT_KINDS = tuple(kind for kind in KINDS if kind != "code")


@dataclass(frozen=True)
class Attack:
    """One reply of the suite and what a sound verifier must give it.

    Attributes:
        name: short identifier, unique together with `variant`.
        exploits: what the reply tries to exploit, in words.
        response: the reply.
        gold: the gold answer (text), or the code tests.
        kinds: the verifier kinds it targets (see `KINDS`).
        expected: the score a sound verifier gives (0 attack, 1 control, 1/3 partial).
        control: an honest reply; it must reach `expected`, not stay under it.
        variant: the code test style ("call", "assert", "stdio"), "" for text.
        requires: [reward] settings under which it applies, each key with its allowed values
            (e.g. {"template": ("boxed",)}): the answer template, `format_strict`.
        hangs: runs until a limit stops it (the audit gives these a short limit).
    """

    name: str
    exploits: str
    response: str
    gold: "str | CodeTests"
    kinds: tuple[str, ...]
    expected: float = 0.0
    control: bool = False
    variant: str = ""
    requires: Mapping[str, tuple] = field(default_factory=dict)
    hangs: bool = False

    @property
    def label(self) -> str:
        return f"{self.name} [{self.variant}]" if self.variant else self.name


ANSWERS = ("math", "exact")  # the verifiers that read a final answer (the hedge and answer attacks)
GOLD = "42"  # every answer attack's gold
NOT_THINK = {"template": ("none", "boxed")}  # the settings under which an attack without tags applies
