"""Environments where the policy answers with the help of tools.

`ToolEnv`: each turn the policy either calls tools (the observation is their results) or
answers (no tool call in its turn: the episode ends, "answered", and the reward is the
verifier's score of that turn against the task's gold answer; any verifier of the reward
stack fits, `(response=, gold=) -> Verdict`).

`python_tool_env(sandbox, verifier)`: a `ToolEnv` factory with one tool, `python(code)`, that
runs the code in the reward stack's sandbox (`rlvr.rewards.sandbox.Sandbox`: bubblewrap where
present, the same limits as the code verifier) and shows its output.
"""

from __future__ import annotations

from collections.abc import Callable

from rlvr.envs.base import Env, StepResult
from rlvr.envs.tools import ToolBox
from rlvr.rewards.sandbox import Sandbox
from rlvr.rewards.verdict import Verdict
from rlvr.types import Sample

Verifier = Callable[..., Verdict]  # verifier(response=..., gold=...) -> Verdict


class ToolEnv(Env):
    """Tools until an answer; the answer is scored by `verifier` (see the module)."""

    def __init__(self, toolbox: ToolBox, verifier: Verifier, instructions: str = ""):
        self.toolbox, self.verifier, self.instructions = toolbox, verifier, instructions
        self.sample: Sample | None = None

    def reset(self, sample: Sample, seed: int) -> str:
        self.sample = sample
        return f"{self.instructions}{sample.prompt}"

    def step(self, action: str) -> StepResult:
        results = self.toolbox.run(action)
        if results is not None:
            return StepResult(results.observation, metrics=dict(results.metrics), tool_calls=results.calls)
        verdict = self.score(action)
        metrics = {"answer/correct": float(verdict.score >= 1.0)}
        if "error" in verdict.flags:  # the scorer failed and scored 0 (reward.on_error = "zero")
            metrics["answer/reward_errors"] = 1.0
        return StepResult("", reward=float(verdict.score), done=True, stop_reason="answered", metrics=metrics)

    def tool_schemas(self) -> list[dict]:
        return self.toolbox.schemas

    def score(self, answer: str) -> Verdict:
        """The answer's verdict against the task's gold (a subclass may score otherwise: a run
        scores with its whole reward stack, rlvr.orchestrate.env_choice)."""
        return self.verifier(response=answer, gold=self.sample.answer)


PYTHON_INSTRUCTIONS = ('You may run Python: write <tool_call>{"name": "python", "arguments": '
                       '{"code": "print(...)"}}</tool_call> and read its output. '
                       'When you know the answer, reply with it and no tool call.\n')


def sandbox_python(sandbox: Sandbox, max_chars: int = 1000) -> Callable[[str], str]:
    """The `python` tool bound to `sandbox`: stdout, or why the run failed."""

    def python(code: str) -> str:
        """Run a Python program and return what it printed.

        Args:
            code: the whole program; print what you want to see.
        """
        run = sandbox.run_python(code)
        if run.error is not None:
            raise RuntimeError(f"the sandbox failed: {run.error}")
        out = run.stdout.decode(errors="replace")
        if run.timed_out:
            return out[:max_chars] + f"\n[timed out after {sandbox.limits.wall_s} s]"
        if run.exit_code != 0:
            err = run.stderr.decode(errors="replace")
            return (out + err)[-max_chars:] + f"\n[exit code {run.exit_code}]"
        return out[:max_chars]

    return python


def python_tool_env(sandbox: Sandbox, verifier: Verifier, instructions: str = PYTHON_INSTRUCTIONS) -> Callable[[], Env]:
    """A factory of `ToolEnv`s with the sandboxed `python(code)` tool (one sandbox, shared:
    it runs `workers` programs at a time and queues the rest)."""
    toolbox = ToolBox([sandbox_python(sandbox)])
    return lambda: ToolEnv(toolbox, verifier, instructions)
