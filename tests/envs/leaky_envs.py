"""Environments that break isolation or the contract, for tests/envs/test_env_check.py."""

from __future__ import annotations

from rlvr.envs import Env, StepResult

SEEN: list[str] = []  # module-level state: every episode of the process appends to it


class LeakyEnv(Env):
    """Counts actions in a module-level list: an episode's observations depend on what other
    episodes did before it or beside it."""

    def reset(self, sample, seed):
        return "Say anything."

    def step(self, action):
        SEEN.append(action)
        return StepResult(f"{len(SEEN)} actions so far", done=len(SEEN) % 3 == 0)


class CleanEnv(Env):
    """The same game with the count on the instance."""

    def reset(self, sample, seed):
        self.seen = []
        return "Say anything."

    def step(self, action):
        self.seen.append(action)
        return StepResult(f"{len(self.seen)} actions so far", done=len(self.seen) % 3 == 0)


class GenerousEnv(CleanEnv):
    """CleanEnv that pays 1 on the second action: a parity test's second implementation."""

    def step(self, action):
        out = super().step(action)
        return StepResult(out.observation, reward=float(len(self.seen) == 2), done=out.done)


class RunnerNamesEnv(CleanEnv):
    """Ends with a runner's stop reason and raises on one action."""

    def step(self, action):
        if action == "boom":
            raise RuntimeError("boom")
        return StepResult("", done=True, stop_reason="max_turns")
