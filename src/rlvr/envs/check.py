"""`rlvr env check`: is an environment fit to train on? (docs/environments-reference.md,
"rlvr env check"). Plays action traces (rlvr.envs.traces) without a model and reports

- determinism: each trace replayed twice on fresh instances gives the same first observation,
  observations, rewards, done flags and stop reasons;
- isolation: each trace played after the others in reverse order, and side by side with all
  the others (round robin, one instance each), gives what it gave alone; state kept outside
  the instance (a module-level global, a class attribute, a shared tool) shows up here;
- the contract: no exception on any action (a model may write anything), stop reasons that
  are not the runner's own names, tool calls within the limit per step, a first observation
  that leaves room for a turn within `max_total_tokens`;
- the cost of `reset` and `step` (mean and max seconds).

Parity (`parity`): one set of traces replayed on two implementations; the observation match
rate, the reward agreement and the fidelity score (the share of steps where observation,
reward and done all agree; a step one side never reached counts as a disagreement).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from rlvr.envs.base import RUNNER_STOP_REASONS, Env
from rlvr.envs.traces import Trace, Transcript, interleaved, replay

TokenCount = Callable[[str], int]  # the first observation's ids as the run's renderer makes them


@dataclass
class CheckReport:
    episodes: int
    steps: int
    determinism: float  # share of traces whose two replays agree
    isolation: float  # share of traces that played the same in another order and side by side
    ended_by_env: float  # share of episodes the environment ended itself within its trace
    stop_reasons: dict[str, int]
    reset_s: tuple[float, float]  # mean, max
    step_s: tuple[float, float]
    first_tokens_max: int | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not self.problems


def first_difference(a: Transcript, b: Transcript) -> str:
    if a.first != b.first:
        return f"first observation {a.first!r:.50} vs {b.first!r:.50}"
    for k, (x, y) in enumerate(zip(a.steps, b.steps), start=1):
        if x != y:
            return f"step {k}: {x!r:.70} vs {y!r:.70}"
    return f"{len(a.steps)} vs {len(b.steps)} steps, errors {a.error!r} vs {b.error!r}"


def agreement(name: str, alone: list[Transcript], other: list[Transcript], what: str, problems: list[str]) -> float:
    bad = [i for i, (a, b) in enumerate(zip(alone, other)) if a.key() != b.key()]
    if bad:
        problems.append(f"{name}: {len(bad)} of {len(alone)} traces {what} (trace {bad[0]}, "
                        f"{first_difference(alone[bad[0]], other[bad[0]])})")
    return 1.0 - len(bad) / max(1, len(alone))


def contract_problems(alone: list[Transcript], max_tool_calls: int | None, first_tokens: list[int],
                      max_total_tokens: int | None) -> list[str]:
    out = []
    raised = [(i, t.error) for i, t in enumerate(alone) if t.error]
    if raised:
        out.append(f"exceptions: {len(raised)} of {len(alone)} episodes raised (trace {raised[0][0]}, "
                   f"{raised[0][1]:.120}); in training each ends with env_error")
    taken = sorted({s[3] for t in alone for s in t.steps if s[2] and s[3] in RUNNER_STOP_REASONS})
    if taken:
        out.append(f"stop reasons: the environment ends episodes with the runner's own names {taken}, "
                   "which count as runner limits (never a success)")
    if max_tool_calls is not None and any(c > max_tool_calls or c < 0 for t in alone for c in t.tool_calls):
        out.append(f"limits: a step reported tool_calls outside 0..env.max_tool_calls ({max_tool_calls})")
    if max_total_tokens is not None and first_tokens and max(first_tokens) >= max_total_tokens:
        i = max(range(len(first_tokens)), key=first_tokens.__getitem__)
        out.append(f"observation length: trace {i}'s first observation is {first_tokens[i]} tokens, "
                   f"env.max_total_tokens = {max_total_tokens} leaves no room for a turn")
    return out


def mean_max(values: list[float]) -> tuple[float, float]:
    return (sum(values) / len(values), max(values)) if values else (0.0, 0.0)


def check_env(make_env: Callable[[], Env], traces: list[Trace], *, max_tool_calls: int | None = None,
              max_total_tokens: int | None = None, count_tokens: TokenCount | None = None) -> CheckReport:
    """Every check of the module docstring on `traces` (a few dozen make it in seconds)."""
    problems: list[str] = []
    alone = [replay(make_env, t) for t in traces]
    determinism = agreement("determinism", alone, [replay(make_env, t) for t in traces],
                            "gave other results when replayed on a fresh instance", problems)
    later = [replay(make_env, t) for t in reversed(traces)][::-1]
    isolation = min(agreement("isolation", alone, later, "played differently after other episodes", problems),
                    agreement("isolation", alone, interleaved(make_env, traces),
                              "played differently side by side with other episodes", problems))
    first_tokens = [count_tokens(t.first) for t in alone if t.first is not None] if count_tokens else []
    problems += contract_problems(alone, max_tool_calls, first_tokens, max_total_tokens)
    stops = Counter(s[3] or "done" for t in alone for s in t.steps if s[2])
    return CheckReport(
        episodes=len(traces), steps=sum(len(t.steps) for t in alone), determinism=determinism,
        isolation=isolation, ended_by_env=sum(stops.values()) / max(1, len(alone)), stop_reasons=dict(stops),
        reset_s=mean_max([t.reset_s for t in alone if t.first is not None]),
        step_s=mean_max([s for t in alone for s in t.step_s]),
        first_tokens_max=max(first_tokens) if first_tokens else None, problems=problems)


@dataclass(frozen=True)
class ParityReport:
    steps: int  # aligned steps: the longer side's count, per trace, summed
    observation_match: float
    reward_agreement: float
    done_agreement: float
    fidelity: float  # share of steps where observation, reward and done all agree
    first_mismatch: str | None


def aligned_rows(t: Transcript) -> list[tuple[str | None, float, bool]]:
    """(observation, reward, done) per step, the first observation as step 0."""
    return [(t.first, 0.0, False)] + [s[:3] for s in t.steps]


def parity(make_a: Callable[[], Env], make_b: Callable[[], Env], traces: list[Trace],
           reward_tol: float = 1e-6) -> ParityReport:
    """`traces` replayed on two implementations, compared step by step (module docstring)."""
    steps = obs = rew = done = full = 0
    first = None
    for i, t in enumerate(traces):
        a, b = replay(make_a, t), replay(make_b, t)
        rows_a, rows_b = aligned_rows(a), aligned_rows(b)
        for k in range(max(len(rows_a), len(rows_b))):
            x = rows_a[k] if k < len(rows_a) else None
            y = rows_b[k] if k < len(rows_b) else None
            o, r, d = (x is not None and y is not None and x[0] == y[0],
                       x is not None and y is not None and abs(x[1] - y[1]) <= reward_tol,
                       x is not None and y is not None and x[2] == y[2])
            steps, obs, rew, done, full = steps + 1, obs + o, rew + r, done + d, full + (o and r and d)
            if first is None and not (o and r and d):
                first = f"trace {i}, step {k}: {x!r:.70} vs {y!r:.70}"
    n = max(1, steps)
    return ParityReport(steps, obs / n, rew / n, done / n, full / n, first)
