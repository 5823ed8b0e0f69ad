"""A model-emulated environment: a language model, given the environment's spec, plays it.

Each observation, reward and done comes from the emulator model's reply, one JSON object a
line, to a transcript of the episode so far (`emulator_prompt`):

    <spec>
    Task: <the task's prompt>
    Hidden answer: <the task's gold answer>          (the environment knows it; the policy does not)
    Reply to each line with one JSON object: {"observation": ..., "reward": ..., "done": ...}
    Start -> {"observation": "<first observation>"}
    Action: "<the policy's turn, JSON-quoted>"
    -> {"observation": "...", "reward": 0.0, "done": false}
    ...

reset completes after "Start -> ", each step after its "Action: ...\\n-> ", stopping at the
newline. `complete(text) -> str` is the model (an OpenAI-compatible endpoint or a local model,
wired by rlvr.orchestrate.remote_env_choice). A reply that is not such an object ends the
episode with the fault "emulator_malformed", a failing model with "emulator_error" (EnvFault:
counted, not trained on). An emulation can be as wrong as the model is: runs are flagged
(env/emulated, the run report) and `rlvr env check REAL --against EMULATED` scores the fidelity
(rlvr.envs.check.parity). The model sees the gold answer and the seed, so a faithful emulator
can be exact; temperature 0 keeps it deterministic.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from numbers import Real

from rlvr.envs.base import Env, EnvFault, StepResult
from rlvr.errors import RlvrError
from rlvr.types import Sample

FAULTS = {
    "emulator_malformed": "the emulator's reply is not a JSON object with a string observation, a numeric "
                          "reward and a boolean done",
    "emulator_error": "the emulator model failed (endpoint down, timed out, HTTP error, context exceeded)",
}
START = "Start -> "


def emulator_prompt(spec: str, sample: Sample, seed: int) -> str:
    """The transcript's head: the spec, the task, the reply format and the start line."""
    return (f"{spec.strip()}\n\nTask: {sample.prompt}\nHidden answer: {sample.answer}\nSeed: {seed}\n"
            'Reply to each line with one JSON object: {"observation": ..., "reward": ..., "done": ...}\n'
            f"{START}")


def parse_reply(reply: str, first: bool) -> StepResult:
    """One emulator line as a StepResult; EnvFault("emulator_malformed") for anything else."""
    try:
        data = json.loads(reply.strip())
    except ValueError:
        data = None
    obs = data.get("observation") if isinstance(data, dict) else None
    reward = data.get("reward", 0.0) if isinstance(data, dict) else None
    done = data.get("done", False) if isinstance(data, dict) else None
    ok = (isinstance(obs, str) and isinstance(done, bool) and isinstance(reward, Real)
          and not isinstance(reward, bool) and math.isfinite(reward) and not (first and done))
    if not ok:
        raise EnvFault("emulator_malformed", f"emulator reply is not a {'first ' if first else ''}"
                                             f"observation object: {reply.strip()!r:.200}")
    stop = data.get("stop_reason")
    return StepResult(obs if not done else "", reward=float(reward), done=done,
                      stop_reason=stop if isinstance(stop, str) and stop else None)


class EmulatedEnv(Env):
    """One episode of the environment described by `spec`, played by `complete`."""

    def __init__(self, spec: str, complete: Callable[[str], str]):
        self.spec, self.complete = spec, complete
        self.transcript = ""

    def _reply(self) -> str:
        try:
            return self.complete(self.transcript)
        except RlvrError as e:  # the backends' one error type (rlvr.rewards.judge): this episode only
            raise EnvFault("emulator_error", f"emulator: {e}"[:500]) from None

    def reset(self, sample: Sample, seed: int) -> str:
        self.transcript = emulator_prompt(self.spec, sample, seed)
        reply = self._reply()
        first = parse_reply(reply, first=True)
        self.transcript += reply.strip() + "\n"
        return first.observation

    def step(self, action: str) -> StepResult:
        self.transcript += f"Action: {json.dumps(action)}\n-> "
        reply = self._reply()
        result = parse_reply(reply, first=False)
        self.transcript += reply.strip() + "\n"
        return result
