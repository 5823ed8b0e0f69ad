"""Composition: weighted sums and gates of verifiers, with every component's score kept.

    reward = 0                                  if some gate g has score_g < threshold_g
    reward = sum_i w_i * score_i / sum_i w_i    otherwise (the weighted mean of the parts)

Format is a gate or a small term that can never outvote correctness (docs/DESIGN.md, "Reward
is a stack"): a part is a *format term* when its name is "format" or starts with "format"
(e.g. "format_strict") or its verifier is a `FormatVerifier`; the *correctness part* is the one
named by `correctness` (default: the first part). At construction the summed weight of the
format terms must be strictly below the correctness weight, so a correct answer with bad format
always out-scores a well-formatted wrong one; otherwise `ValueError`.

Each component gets the same `gold` string, or, when `gold` is a mapping, `gold[name]`
(e.g. {"correct": "42", "instructions": "[...]"}). A Composite is called by keyword,
`reward(response=..., gold=...)`, and calls its components as `rlvr.rewards.calling` does
(built-in verifiers by keyword; a function `(r, g)` positionally).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from rlvr.errors import RewardError
from rlvr.rewards.calling import call_verifier
from rlvr.rewards.format_verifier import FormatVerifier
from rlvr.rewards.verdict import Verdict

Verifier = Callable[..., Verdict]  # verifier(response=..., gold=...), or a function (r, g)


@dataclass(frozen=True)
class CompositeVerdict(Verdict):
    """A Verdict that also keeps each component's score, in order, as (name, score) pairs.

    A tuple rather than a dict keeps the verdict frozen and hashable; `components` gives the
    dict view. A part not run (its gate failed and `short_circuit`) is absent.
    """

    details: tuple[tuple[str, float], ...] = ()

    @property
    def components(self) -> dict[str, float]:
        return dict(self.details)


def is_format_term(name: str, verifier: object) -> bool:
    return name.startswith("format") or isinstance(verifier, FormatVerifier)


def _check_names(parts: Sequence[tuple], gates: Sequence[tuple]) -> None:
    names = [p[0] for p in parts] + [g[0] for g in gates]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"component names must be unique; repeated: {duplicates}")
    if not parts:
        raise ValueError("a Composite needs at least one weighted part")
    for name, _, weight in parts:
        if not (isinstance(weight, (int, float)) and math.isfinite(weight) and weight > 0):
            raise ValueError(f"part {name!r}: weight must be a positive finite number, got {weight!r}")
    for name, _, threshold in gates:
        if not (isinstance(threshold, (int, float)) and 0 < threshold <= 1):
            raise ValueError(f"gate {name!r}: threshold must be in (0, 1], got {threshold!r}")


def _check_format_weight(parts: Sequence[tuple[str, Verifier, float]], correctness: str) -> None:
    """Format terms together must weigh strictly less than the correctness part."""
    weights = {name: weight for name, _, weight in parts}
    if correctness not in weights:
        raise ValueError(f"correctness part {correctness!r} is not among the parts {list(weights)}")
    if is_format_term(correctness, next(v for n, v, _ in parts if n == correctness)):
        raise ValueError(f"the correctness part {correctness!r} is a format term; name the part "
                         f"that checks the answer with correctness=")
    format_weight = sum(w for n, v, w in parts if is_format_term(n, v))
    if format_weight >= weights[correctness]:
        raise ValueError(
            f"format terms weigh {format_weight:g} in total, not less than the correctness part "
            f"{correctness!r} ({weights[correctness]:g}): format could outvote correctness; "
            f"lower the format weight or use format as a gate")


@dataclass(frozen=True, init=False)
class Composite:
    """Weighted parts behind optional gates; see the module docstring for the rule.

        reward = Composite(parts=[("correct", MathVerifier(), 1.0), ("format", FormatVerifier(), 0.1)],
                           gates=[("length", length_ok, 1.0)])

    Attributes:
        parts: (name, verifier, weight) with weight > 0.
        gates: (name, verifier, threshold); the reward is 0 unless every gate scores >= threshold.
        correctness: the name of the part that checks the answer (default: the first part).
        short_circuit: when a gate fails, skip the parts (saves a sandbox run, say); their scores
            are then missing from `components`.
    """

    parts: tuple[tuple[str, Verifier, float], ...]
    gates: tuple[tuple[str, Verifier, float], ...]
    correctness: str
    short_circuit: bool

    def __init__(self, parts: Sequence[tuple[str, Verifier, float]],
                 gates: Sequence[tuple[str, Verifier, float]] = (),
                 correctness: str | None = None, short_circuit: bool = True):
        parts, gates = tuple(map(tuple, parts)), tuple(map(tuple, gates))
        _check_names(parts, gates)
        correctness = parts[0][0] if correctness is None else correctness
        _check_format_weight(parts, correctness)
        for field, value in (("parts", parts), ("gates", gates), ("correctness", correctness),
                             ("short_circuit", short_circuit)):
            object.__setattr__(self, field, value)

    def _gold(self, gold: "str | Mapping[str, str]", name: str) -> str:
        if isinstance(gold, Mapping):
            if name not in gold:
                raise RewardError(f"composite gold has no entry for component {name!r} "
                                  f"(it has {sorted(gold)})")
            return gold[name]
        return gold

    def __call__(self, *, response: str, gold: "str | Mapping[str, str]") -> CompositeVerdict:
        details: list[tuple[str, float]] = []
        flags: list[str] = []
        notes: list[str] = []

        def run(name: str, verifier: Verifier) -> Verdict:
            verdict = call_verifier(verifier, response, self._gold(gold, name))
            details.append((name, float(verdict.score)))
            flags.extend(f for f in verdict.flags if f not in flags)
            notes.append(f"{name}={verdict.score:.2g} ({verdict.reason})")
            return verdict

        failed = [(name, threshold) for name, verifier, threshold in self.gates
                  if run(name, verifier).score < threshold]
        if failed and self.short_circuit:
            return self._gate_failed(failed, details, flags, notes)
        total = sum(w for _, _, w in self.parts)
        score = sum(w * run(name, verifier).score for name, verifier, w in self.parts) / total
        if failed:
            return self._gate_failed(failed, details, flags, notes)
        return CompositeVerdict(score, f"{score:.3g}: " + "; ".join(notes), tuple(flags), tuple(details))

    @staticmethod
    def _gate_failed(failed: list[tuple[str, float]], details: list, flags: list,
                     notes: list) -> CompositeVerdict:
        names = ", ".join(f"{n} < {t:g}" for n, t in failed)
        flags = flags + ["gate_failed"] if "gate_failed" not in flags else flags
        return CompositeVerdict(0.0, f"gate failed ({names}): " + "; ".join(notes), tuple(flags),
                                tuple(details))
