"""Declarative tool worlds (docs/environments-tutorial.md, "A tool world in under 50 lines").

A `WorldSpec` is a typed state, tools with typed arguments, a precondition and an effect on the
state, and task templates. A template makes an `Instance` from a seeded RNG and a difficulty: the
initial state, the prompt, the goal (a predicate on the final state) and the finite argument
domain a search enumerates. `reach_task` is the common template: k random valid tool calls from
the start give a target state; the goal is "the state equals the target", so k calls suffice.

`check_spec` refuses a bad spec at load, naming the spec line (recorded where `tool(...)`,
`task(...)` and `WorldSpec(...)` were written): an unknown type, an effect that leaves the state
outside its schema, a goal that no sequence of tool calls reaches (breadth-first search over
the domain on small instances).
"""

from __future__ import annotations

import copy
import itertools
import json
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

TYPES: dict[str, Callable[[object], bool]] = {
    "int": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "str": lambda v: isinstance(v, str),
    "bool": lambda v: isinstance(v, bool),
    "list[str]": lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v),
    "dict[str, int]": lambda v: isinstance(v, dict) and all(isinstance(k, str) and TYPES["int"](x)
                                                            for k, x in v.items()),
    "dict[str, str]": lambda v: isinstance(v, dict) and all(isinstance(k, str) and isinstance(x, str)
                                                            for k, x in v.items()),
}
ARG_TYPES = ("int", "str", "bool")  # what a JSON tool call carries
State = dict
Args = dict


class SpecError(ValueError):
    """A world spec that cannot be played; the message starts with the spec line."""


def _caller_line(depth: int = 2) -> str:
    frame = sys._getframe(depth)
    return f"{Path(frame.f_code.co_filename).name}:{frame.f_lineno}"


@dataclass(frozen=True)
class ToolSpec:
    name: str
    args: dict[str, str]
    doc: str
    effect: Callable[[State, Args], str]  # changes the state in place; returns the observation
    precondition: Callable[[State, Args], str | None] = lambda s, a: None  # why it is refused, or None
    line: str = ""


@dataclass(frozen=True)
class Instance:
    state: State
    prompt: str
    goal: Callable[[State], bool]
    domain: dict[str, list]  # argument name (else its type) -> the values a search and random traces try
    solution_length: int  # calls the generator used: an upper bound on the shortest solution


@dataclass(frozen=True)
class TaskSpec:
    name: str
    make: Callable[[random.Random, int, "WorldSpec"], Instance]  # (rng, difficulty, the world)
    line: str = ""


@dataclass(frozen=True)
class WorldSpec:
    name: str
    state: dict[str, str]  # field -> type name of TYPES
    tools: list[ToolSpec]
    tasks: list[TaskSpec]
    instructions: str = ""
    line: str = field(default_factory=lambda: _caller_line(3))


def tool(name: str, args: dict[str, str], doc: str, effect, precondition=lambda s, a: None) -> ToolSpec:
    return ToolSpec(name, args, doc, effect, precondition, _caller_line())


def task(name: str, make) -> TaskSpec:
    return TaskSpec(name, make, _caller_line())


def calls(spec: WorldSpec, domain: dict[str, list]):
    """Every (tool, args) with arguments from `domain` (by argument name, else by type)."""
    for t in spec.tools:
        names = list(t.args)
        for values in itertools.product(*(domain.get(n, domain.get(t.args[n], [])) for n in names)):
            yield t, dict(zip(names, values))


def apply(t: ToolSpec, state: State, args: Args) -> tuple[State | None, str]:
    """(the state after the call, its observation); None when the precondition refuses it."""
    why = t.precondition(state, args)
    if why is not None:
        return None, f"error: {why}"
    after = copy.deepcopy(state)
    return after, str(t.effect(after, args))


def key(state: State) -> str:
    return json.dumps(state, sort_keys=True)


def reach_task(name: str, start: Callable[[random.Random], State], describe: Callable[[State], str],
               domain: Callable[[State], dict[str, list]]) -> TaskSpec:
    """k = difficulty random valid calls from `start` make the target; goal: the state equals it."""
    line = _caller_line()

    def walk(rng: random.Random, state: State, dom: dict, difficulty: int, spec: WorldSpec) -> State:
        target = state
        for _ in range(difficulty):
            options = [(t, a) for t, a in calls(spec, dom) if t.precondition(target, a) is None and
                       apply(t, target, a)[0] != target]
            if not options:
                raise SpecError(f"{line}: task {name!r}: no tool call with arguments from its domain changes "
                                f"the state {key(target):.80}")
            t, a = rng.choice(options)
            target = apply(t, target, a)[0]
        return target

    def make(rng: random.Random, difficulty: int, spec: WorldSpec) -> Instance:
        state = start(rng)
        dom = domain(state)
        for _ in range(20):  # a walk that came back to the start is no task
            if key(target := walk(rng, state, dom, difficulty, spec)) != key(state):
                break
        prompt = f"Now: {describe(state)}\nGoal: {describe(target)}\nWhen the goal holds, reply done."
        want = key(target)
        return Instance(state, prompt, lambda s: key(s) == want, dom, difficulty)
    return TaskSpec(name, make, line)
