"""Several judge verdicts on one sample, combined by a rule: any, all or majority.

Each judge j gives P_j (its probability that the reasoning is right); its verdict is
P_j >= threshold. The sample's reasoning is right when

    any:       at least one verdict says right
    all:       every verdict says right
    majority:  more than half say right (a tie is not a majority: 2 of 4 is wrong)

and its combined P is the share of verdicts that say right, so the per-sample file shows how
split the judges were. A `--cot-judge` spec names several judges as RULE:SPEC + SPEC [+ ...]
(e.g. `majority:function:a.b:f + model:DIR + reward:c.d:g`); `samples:RULE` reads a samples
file whose `cot_p` holds a list of the judges' P per row.
"""

from __future__ import annotations

from typing import Callable, Sequence

from rlvr.errors import ConfigError
from rlvr.evaluate.cot_pass import CotJudgement

RULES: dict[str, Callable[[Sequence[bool]], bool]] = {
    "any": any,
    "all": all,
    "majority": lambda votes: 2 * sum(votes) > len(votes),
}


def combine(ps: Sequence[float], threshold: float, rule: str) -> CotJudgement:
    """The combined judgement of one sample from its judges' P's (module docstring)."""
    votes = [p >= threshold for p in ps]
    return CotJudgement(sum(votes) / len(votes), bool(RULES[rule](votes)))


def split_spec(spec: str) -> tuple[str | None, list[str]]:
    """(rule, [judge specs]) of a --cot-judge spec; (None, [spec]) for a single judge."""
    rule, _, rest = spec.partition(":")
    if rule not in RULES:
        return None, [spec]
    parts = [p.strip() for p in rest.split(" + ")]
    if not rest.strip() or any(not p for p in parts):
        raise ConfigError(f"--cot-judge {spec!r}: expected {rule}:SPEC + SPEC [+ ...] (judges joined by ' + ')")
    return rule, parts
