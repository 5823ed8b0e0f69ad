"""A bounded pool of failed tasks for `env.curriculum = "failures"` (issue 25; docs/
environments-reference.md, "Failure curriculum"). Unlike prime-rl's difficulty pools, which
give failed prompts less weight, this one aims training at them.

**Mining.** A task fails when none of its G episodes succeeds. The pool keeps, per failed task,
what the failure looked like: its features (the environment's generator's `features`, else
`Sample.extra`'s scalar columns), the commonest stop reason, the first failing tool call (the
tool named in the first `error:` line of an observation, else None), the first failing test
(the first test id not passed in the environment's `report()`, else None) and the turn where
it went wrong (that observation's turn, else the last turn), all read from the first episode.
At most `capacity` tasks: the oldest entry leaves first.

**Drawing.** `mix(base, rng)`: a share `mix` of the batch (rounded; fewer while the pool is
small) is replaced by draws from the pool, entries drawn uniformly without replacement. With a
generator (rlvr.envs.generator), a share `fresh` of those draws are fresh tasks with the entry's
features, not the entry's row; the rest replay the row. Without one, every draw replays.

**Leaving.** A draw made for an entry (its row or a fresh sibling) that succeeds retires the
entry, and the steps from its entry to that first success are kept; a draw that fails counts
as an attempt and adds no entry of its own (the pool holds kinds of failure, not copies).
"""

from __future__ import annotations

import random
import re
from collections import Counter, OrderedDict
from dataclasses import asdict, dataclass

from rlvr.envs.generator import TaskGenerator, checked_features
from rlvr.types import Sample

FRESH_TRIES = 8
_TOOL_ERROR = re.compile(r"error: (?:bad arguments for |)(\w+)(?: raised|:)")


@dataclass
class Failure:
    sample: Sample
    features: dict[str, str]
    stop_reason: str
    failing_call: str | None
    failing_test: str | None
    turn: int
    since: int  # the step it first failed
    attempts: int = 0  # later draws made for it that failed too


def first_error(episode) -> tuple[str | None, int]:
    """(the tool of the first failing call, the turn it happened), or (None, the last turn)."""
    turns = episode.trajectory.turns if episode.trajectory is not None else []
    for k, turn in enumerate(turns, start=1):
        if (m := _TOOL_ERROR.search(turn.observation or "")) is not None:
            return m.group(1), k
    return None, len(turns)


def failing_test(episode) -> str | None:
    """The first test id not passed in the environment's `report()`: a `tests` mapping (id ->
    passed: True / False / None never ran) at its top level or one level down (the repository
    environment's `report()["repo"]["tests"]`); None when the report has none."""
    report = episode.env.report() if episode.env is not None else {}  # None: it failed to start
    for place in (report, *(v for v in report.values() if isinstance(v, dict))):
        tests = place.get("tests")
        if isinstance(tests, dict):
            return next((t for t, passed in tests.items() if passed is not True), None)
    return None


def task_key(s: Sample) -> tuple:
    return s.source, s.prompt, s.answer


def scalar_features(sample: Sample) -> dict[str, str]:
    return {k: str(v) for k, v in sample.extra.items() if isinstance(v, (str, int, float, bool))}


class FailurePool:
    def __init__(self, capacity: int, mix: float, generator: TaskGenerator | None = None, fresh: float = 1.0):
        self.capacity, self.mix_share, self.generator, self.fresh = capacity, mix, generator, fresh
        self.entries: OrderedDict[tuple, Failure] = OrderedDict()
        self.retired_steps: list[int] = []  # steps from entry to first success, per retired failure
        self.drawn_from: dict[tuple, tuple] = {}  # this step's pool draws: task key -> its entry's key
        self.replayed = self.synthesized = 0

    def features_of(self, sample: Sample) -> dict[str, str]:
        return checked_features(self.generator, sample) if self.generator is not None else scalar_features(sample)

    def observe(self, step: int, groups: list[tuple[Sample, list]]) -> None:
        """After a step: each (task, its episodes); failed tasks enter, solved ones retire."""
        for sample, episodes in groups:
            key = task_key(sample)
            target = self.drawn_from.get(key, key)
            if any(ep.success for ep in episodes):
                if (gone := self.entries.pop(target, None)) is not None:
                    self.retired_steps.append(step - gone.since)
            elif target in self.entries:
                self.entries[target].attempts += 1
            else:
                self.entries[key] = self._mined(step, sample, episodes)
                while len(self.entries) > self.capacity:
                    self.entries.popitem(last=False)
        self.drawn_from = {}

    def _mined(self, step: int, sample: Sample, episodes: list) -> Failure:
        call, turn = first_error(episodes[0])
        stop = Counter(ep.stop_reason for ep in episodes).most_common(1)[0][0]
        return Failure(sample, self.features_of(sample), stop, call, failing_test(episodes[0]), turn, step)

    def mix(self, base: list[Sample], rng: random.Random) -> list[Sample]:
        """`base` with round(mix * len) of its places taken by pool draws (fewer while the pool is small)."""
        k = min(round(self.mix_share * len(base)), len(self.entries))
        picked = rng.sample(list(self.entries.items()), k) if k else []
        draws, self.drawn_from, self.synthesized = [], {}, 0
        for key, failure in picked:
            if self.generator is not None and rng.random() < self.fresh:
                task = self._fresh(key, failure, rng)
                self.synthesized += 1
            else:
                task = failure.sample
            self.drawn_from[task_key(task)] = key
            draws.append(task)
        self.replayed = k - self.synthesized
        return draws + base[: len(base) - k]

    def _fresh(self, key: tuple, failure: Failure, rng: random.Random) -> Sample:
        """A generated task with the failure's features, other than its own row (a few draws:
        a feature value with one task, e.g. a 1-value band, gives that row back)."""
        for _ in range(FRESH_TRIES):
            task = self.generator.generate(failure.features, rng)
            if task_key(task)[1:] != key[1:]:  # another problem, not the same one under a new name
                return task
        return task

    def metrics(self, step: int) -> dict[str, float]:
        out = {"failures/pool_size": float(len(self.entries)), "failures/replayed": float(self.replayed),
               "failures/synthesized": float(self.synthesized), "failures/retired": float(len(self.retired_steps))}
        if self.entries:
            waits = [step - f.since for f in self.entries.values()]
            out["failures/unsolved_steps_mean"] = sum(waits) / len(waits)
            out["failures/unsolved_steps_max"] = float(max(waits))
        if self.retired_steps:
            out["failures/retired_steps_mean"] = sum(self.retired_steps) / len(self.retired_steps)
        entries = self.entries.values()
        for reason, n in Counter(f.stop_reason for f in entries).items():
            out[f"failures/stop/{reason}"] = float(n)
        for tool, n in Counter(f.failing_call for f in entries if f.failing_call).items():
            out[f"failures/tool/{tool}"] = float(n)
        out["failures/failing_test"] = float(sum(f.failing_test is not None for f in entries))
        for (name, value), n in Counter(kv for f in entries for kv in f.features.items()).items():
            out[f"failures/feature/{name}={value}"] = float(n)
        return out

    def state(self) -> dict:
        """Plain lists, dicts and strings (a checkpoint loads them without pickled classes)."""
        rows = []
        for f in self.entries.values():
            row = asdict(f)
            row["sample"] = [f.sample.prompt, f.sample.answer, f.sample.source, dict(f.sample.extra)]
            rows.append(row)
        return {"entries": rows, "retired_steps": list(self.retired_steps)}

    def load_state(self, state: dict) -> None:
        failures = [Failure(**(row | {"sample": Sample(*row["sample"])})) for row in state["entries"]]
        self.entries = OrderedDict((task_key(f.sample), f) for f in failures)
        self.retired_steps = list(state["retired_steps"])
