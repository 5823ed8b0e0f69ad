"""Rewards: verifiers that turn `(response, gold)` into a `Verdict`.

A verifier is any callable `(response: str, gold: str) -> Verdict`. `VERIFIERS` maps a program
verifier's config name (rlvr/names.py PROGRAM_VERIFIER) to the factory that builds one (called with that verifier's own options).
"""

from __future__ import annotations

from typing import Callable

from rlvr import names
from rlvr.rewards.code import CodeVerifier
from rlvr.rewards.compose import Composite, CompositeVerdict
from rlvr.rewards.exact_verifier import ExactVerifier
from rlvr.rewards.format_verifier import FormatVerifier
from rlvr.rewards.instructions import InstructionVerifier
from rlvr.rewards.math import MathVerifier
from rlvr.rewards.time_limit import VerifierTimeout, run_with_time_limit
from rlvr.rewards.verdict import Verdict

VERIFIERS: dict[str, Callable[..., object]] = names.PROGRAM_VERIFIER.bind({
    "math": MathVerifier,
    "code": CodeVerifier,
    "format": FormatVerifier,
    "instructions": InstructionVerifier,
    "exact": ExactVerifier,
}, table="VERIFIERS")

__all__ = ["VERIFIERS", "CodeVerifier", "Composite", "CompositeVerdict", "ExactVerifier", "FormatVerifier", "InstructionVerifier", "MathVerifier", "Verdict", "VerifierTimeout", "run_with_time_limit"]
