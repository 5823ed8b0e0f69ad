"""Action traces and their replay without a model: what `rlvr env check` plays (docs/
environments-reference.md, "rlvr env check").

A `Trace` is a task, a seed and the actions a policy would write, turn by turn. `random_traces`
makes them from a seeded RNG out of the environment's own tool schemas (well-formed calls with
arguments of the declared types), the task's gold answer, numbers, words and malformed calls,
so that both the success path and the error paths are reached. `replay` plays one trace on one
fresh instance and records a `Transcript`: every observation, reward, done flag and stop reason,
what raised and how long `reset` and each `step` took.
"""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass, field
from typing import Callable

from rlvr.envs.base import Env, StepResult
from rlvr.envs import contract
from rlvr.types import Sample

WORDS = ("yes", "no", "hello", "answer", "x", "42", "-1", "3.5", "")


@dataclass(frozen=True)
class Trace:
    sample: Sample
    seed: int
    actions: tuple[str, ...]


@dataclass
class Transcript:
    """What one replay saw: `steps` holds (observation, reward, done, stop_reason) per action played."""

    first: str | None = None
    steps: list[tuple[str, float, bool, str | None]] = field(default_factory=list)
    error: str | None = None  # "reset: ExcType: message" or "step N: ..."
    reset_s: float = 0.0
    step_s: list[float] = field(default_factory=list)
    tool_calls: list[int] = field(default_factory=list)

    def key(self) -> tuple:
        """What two replays of one trace must agree on."""
        return self.first, tuple(self.steps), self.error


def random_value(schema: dict, rng: random.Random, sample: Sample):
    kind = schema.get("type", "string")
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if kind == "integer":
        return rng.randint(-2, 20)
    if kind == "number":
        return round(rng.uniform(-2, 20), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    return rng.choice([sample.answer, *WORDS[:6], f"{rng.randint(0, 99)}"])


def random_call(tool: dict, rng: random.Random, sample: Sample) -> str:
    fn = tool.get("function", tool)
    props = fn.get("parameters", {}).get("properties", {})
    args = {name: random_value(s, rng, sample) for name, s in props.items()}
    return f'<tool_call>{json.dumps({"name": fn["name"], "arguments": args})}</tool_call>'


def random_action(rng: random.Random, sample: Sample, tools: list[dict] | None) -> str:
    roll = rng.random()
    if tools and roll < 0.55:
        return random_call(rng.choice(tools), rng, sample)
    if roll < 0.7:
        return sample.answer
    if roll < 0.8:
        return '<tool_call>{"name": oops</tool_call>'  # malformed: must become an error line, not a crash
    return rng.choice([*WORDS, str(rng.randint(-5, 120))])


def random_traces(samples: list[Sample], n: int, turns: int, seed: int, tools: list[dict] | None) -> list[Trace]:
    """`n` traces of `turns` actions over `samples` (cycled), all fixed by `seed`."""
    rng = random.Random(seed)
    return [Trace(samples[i % len(samples)], seed * 7919 + i,
                  tuple(random_action(rng, samples[i % len(samples)], tools) for _ in range(turns)))
            for i in range(n)]


def _timed(call: Callable[[], object]) -> tuple[object, float]:
    t0 = time.perf_counter()
    out = call()
    return out, time.perf_counter() - t0


class Replay:
    """One trace on one instance, one action at a time (so replays can interleave)."""

    def __init__(self, env: Env, trace: Trace):
        self.env, self.trace, self.record, self.turn = env, trace, Transcript(), 0

    @property
    def over(self) -> bool:
        r = self.record
        return r.error is not None or r.first is None or self.turn >= len(self.trace.actions) or \
            bool(r.steps and r.steps[-1][2])

    def start(self) -> "Replay":
        try:
            value, self.record.reset_s = _timed(lambda: self.env.reset(self.trace.sample, self.trace.seed))
        except Exception as e:  # the check reports it: a model's episode would end with env_error
            self.record.error = f"reset: {type(e).__name__}: {e}"
            return self
        self.record.first = contract.first_observation(self.env, value)
        return self

    def advance(self) -> None:
        action = self.trace.actions[self.turn]
        self.turn += 1
        try:
            value, seconds = _timed(lambda: self.env.step(action))
        except Exception as e:  # reported, as above
            self.record.error = f"step {self.turn}: {type(e).__name__}: {e}"
            return
        result: StepResult = contract.step_result(self.env, value)
        self.record.step_s.append(seconds)
        self.record.tool_calls.append(result.tool_calls)
        self.record.steps.append((result.observation, float(result.reward), bool(result.done), result.stop_reason))


def replay(make_env: Callable[[], Env], trace: Trace) -> Transcript:
    """Play `trace` alone on a fresh instance."""
    run = Replay(make_env(), trace).start()
    while not run.over:
        run.advance()
    run.env.close()  # as the runner does once an episode ended (a remote session)
    return run.record


def interleaved(make_env: Callable[[], Env], traces: list[Trace]) -> list[Transcript]:
    """Every trace at once, each on its own instance, one step each in turn (round robin): how
    a batch of episodes shares a process."""
    runs = [Replay(make_env(), t).start() for t in traces]
    while live := [r for r in runs if not r.over]:
        for r in live:
            r.advance()
    for r in runs:
        r.env.close()
    return [r.record for r in runs]
