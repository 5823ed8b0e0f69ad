"""A bounded pool of failed tasks for `env.curriculum = "failures"` (issue 25; docs/
environments-reference.md, "Failure curriculum"). Unlike prime-rl's difficulty pools, which
give failed prompts less weight, this one draws them again.

A task fails when none of its G episodes succeeds. The pool keeps, per failed task, what the
failure looked like: the task's features (`Sample.extra`'s scalar columns), the commonest stop
reason, the first failing tool call (the tool named in the first `error:` line of an
observation, else None) and the turn where it went wrong (that observation's turn, else the
last turn). At most `capacity` tasks: the oldest entry leaves first. A task leaves when a later
draw of it succeeds, and the steps it stayed are recorded.

`mix(base, rng)`: a share `mix` of the batch (rounded) is replaced by pool tasks, drawn
uniformly; the rest is the base sampler's draw. Not built: synthesising fresh tasks from the
failing features (the pool replays the same rows) and held-out success per feature.
"""

from __future__ import annotations

import random
import re
from collections import Counter, OrderedDict
from dataclasses import dataclass

from rlvr.types import Sample

_TOOL_ERROR = re.compile(r"error: (?:bad arguments for |)(\w+)(?: raised|:)")


@dataclass
class Failure:
    sample: Sample
    features: dict[str, str]
    stop_reason: str
    failing_call: str | None
    turn: int
    since: int  # the step it first failed


def first_error(episode) -> tuple[str | None, int]:
    """(the tool of the first failing call, the turn it happened), or (None, the last turn)."""
    turns = episode.trajectory.turns if episode.trajectory is not None else []
    for k, turn in enumerate(turns, start=1):
        if (m := _TOOL_ERROR.search(turn.observation or "")) is not None:
            return m.group(1), k
    return None, len(turns)


def task_key(s: Sample) -> tuple:
    return s.source, s.prompt, s.answer


class FailurePool:
    def __init__(self, capacity: int, mix: float):
        self.capacity, self.mix_share = capacity, mix
        self.entries: OrderedDict[tuple, Failure] = OrderedDict()
        self.retired_steps: list[int] = []  # steps each retired failure stayed unsolved
        self.replayed = 0

    def observe(self, step: int, groups: list[tuple[Sample, list]]) -> None:
        """After a step: each (task, its episodes); failed tasks enter, solved ones retire."""
        for sample, episodes in groups:
            key = task_key(sample)
            if any(ep.success for ep in episodes):
                if (gone := self.entries.pop(key, None)) is not None:
                    self.retired_steps.append(step - gone.since)
                continue
            if key in self.entries:
                continue
            call, turn = first_error(episodes[0])
            stop = Counter(ep.stop_reason for ep in episodes).most_common(1)[0][0]
            features = {k: str(v) for k, v in sample.extra.items() if isinstance(v, (str, int, float, bool))}
            self.entries[key] = Failure(sample, features, stop, call, turn, step)
            while len(self.entries) > self.capacity:
                self.entries.popitem(last=False)

    def mix(self, base: list[Sample], rng: random.Random) -> list[Sample]:
        """`base` with round(mix * len) of its places taken by pool tasks (fewer while the pool is small)."""
        k = min(round(self.mix_share * len(base)), len(self.entries))
        picks = [f.sample for f in rng.sample(list(self.entries.values()), k)] if k else []
        self.replayed = k
        return picks + base[: len(base) - k]

    def metrics(self, step: int) -> dict[str, float]:
        out = {"failures/pool_size": float(len(self.entries)), "failures/replayed": float(self.replayed),
               "failures/retired": float(len(self.retired_steps))}
        if self.entries:
            out["failures/unsolved_steps_mean"] = sum(step - f.since for f in self.entries.values()) / len(self.entries)
        for reason, n in Counter(f.stop_reason for f in self.entries.values()).items():
            out[f"failures/stop/{reason}"] = float(n)
        for tool, n in Counter(f.failing_call for f in self.entries.values() if f.failing_call).items():
            out[f"failures/tool/{tool}"] = float(n)
        for (name, value), n in Counter(kv for f in self.entries.values() for kv in f.features.items()).items():
            out[f"failures/feature/{name}={value}"] = float(n)
        return out

    def state(self) -> dict:
        """Plain lists and strings (a checkpoint loads them without pickled classes)."""
        rows = [[[f.sample.prompt, f.sample.answer, f.sample.source, dict(f.sample.extra)], f.features,
                 f.stop_reason, f.failing_call, f.turn, f.since] for f in self.entries.values()]
        return {"entries": rows, "retired_steps": list(self.retired_steps)}

    def load_state(self, state: dict) -> None:
        failures = [Failure(Sample(*row[0]), *row[1:]) for row in state["entries"]]
        self.entries = OrderedDict((task_key(f.sample), f) for f in failures)
        self.retired_steps = list(state["retired_steps"])
