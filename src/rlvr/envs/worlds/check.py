"""`check_spec`: a world spec refused at load, naming its line (see spec.py's docstring)."""

from __future__ import annotations

import random
from collections import deque

from rlvr.envs.worlds.spec import ARG_TYPES, TYPES, Instance, SpecError, WorldSpec, apply, calls, key

SEARCH_SEEDS = 3  # small instances searched per task template
MAX_NODES = 20_000


def schema_problem(spec: WorldSpec, state: dict) -> str | None:
    if set(state) != set(spec.state):
        return f"has fields {sorted(state)}, the schema {sorted(spec.state)}"
    for name, kind in spec.state.items():
        if not TYPES[kind](state[name]):
            return f"sets {name} = {state[name]!r:.60}, not a {kind}"
    return None


def check_types(spec: WorldSpec) -> None:
    for name, kind in spec.state.items():
        if kind not in TYPES:
            raise SpecError(f"{spec.line}: world {spec.name!r}: state field {name!r} has unknown type {kind!r} "
                            f"(known: {', '.join(TYPES)})")
    for t in spec.tools:
        for arg, kind in t.args.items():
            if kind not in ARG_TYPES:
                raise SpecError(f"{t.line}: tool {t.name!r}: argument {arg!r} has unknown type {kind!r} "
                                f"(known: {', '.join(ARG_TYPES)})")


def search(spec: WorldSpec, inst: Instance, depth: int) -> int | None:
    """Fewest calls that reach the goal (breadth first, at most `depth`); None when no sequence
    does; -1 when MAX_NODES states were seen first (undecided: not refused). Raises on a call
    whose effect breaks the schema."""
    seen, frontier = {key(inst.state)}, deque([(inst.state, 0)])
    while frontier and len(seen) < MAX_NODES:
        state, d = frontier.popleft()
        if inst.goal(state):
            return d
        if d == depth:
            continue
        for t, args in calls(spec, inst.domain):
            after, _ = apply(t, state, args)
            if after is None:
                continue
            if (why := schema_problem(spec, after)) is not None:
                raise SpecError(f"{t.line}: tool {t.name!r}: its effect on {args} {why}")
            if key(after) not in seen:
                seen.add(key(after))
                frontier.append((after, d + 1))
    return None if not frontier else -1


def check_spec(spec: WorldSpec, difficulties: tuple[int, ...] = (1, 2)) -> None:
    """Raise SpecError naming the spec line if `spec` cannot be played (module docstring)."""
    check_types(spec)
    for tk in spec.tasks:
        for difficulty in difficulties:
            for seed in range(SEARCH_SEEDS):
                inst = tk.make(random.Random(seed), difficulty, spec)
                if (why := schema_problem(spec, inst.state)) is not None:
                    raise SpecError(f"{tk.line}: task {tk.name!r}: its initial state {why}")
                if search(spec, inst, inst.solution_length + 1) is None:
                    raise SpecError(f"{tk.line}: task {tk.name!r}: no sequence of at most {inst.solution_length + 1} "
                                    f"tool calls reaches the goal (difficulty {difficulty}, seed {seed})")
