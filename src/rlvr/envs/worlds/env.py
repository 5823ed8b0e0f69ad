"""A world spec as an environment: `WorldEnv` plays one task instance (rlvr.envs.worlds.spec).

The instance comes from the task row, not the episode seed, so the G episodes of a task play
the same instance: its RNG is seeded by a stable hash of the row (source, prompt, answer), so any
task kind gives a stream of distinct instances; a row's `extra` may name its template and
difficulty (the failure curriculum's fresh rows, generator.py). Each turn the policy calls tools in the
Hermes/Qwen form `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (the OpenAI tools
schema is `tool_schemas()`, rendered by a chat template's `tools=`); a turn without a call ends
the episode ("answered") with reward 1 when the goal holds on the true state, whatever the turn
says. Difficulty: `difficulty` (tool calls the generator used), `distractors` (extra tools that
change nothing), `noise` (the chance that a call's observation is lost: "(no response)", its
effect still applied).
"""

from __future__ import annotations

import copy
import random

from rlvr.envs.base import Env, StepResult
from rlvr.envs.tools import Tool, ToolBox
from rlvr.envs.worlds.generator import WorldGenerator, row_difficulty, row_seed, row_template
from rlvr.envs.worlds.spec import ToolSpec, WorldSpec, apply
from rlvr.types import Sample

JSON = {"int": int, "str": str, "bool": bool}
DISTRACTORS = [("get_weather", "city"), ("get_time", "zone"), ("send_note", "text"), ("lookup_word", "word")]


def schema_of(name: str, doc: str, args: dict[str, str]) -> dict:
    props = {a: {"type": {"int": "integer", "str": "string", "bool": "boolean"}[k]} for a, k in args.items()}
    return {"type": "function", "function": {"name": name, "description": doc, "parameters": {
        "type": "object", "properties": props, "required": list(args)}}}


class WorldEnv(Env):
    def __init__(self, spec: WorldSpec, difficulty: int = 1, distractors: int = 0, noise: float = 0.0):
        self.spec, self.difficulty, self.noise = spec, difficulty, noise
        tools = [self._tool(t) for t in spec.tools]
        for name, arg in DISTRACTORS[:distractors]:
            tools.append(Tool(name, lambda **kw: "nothing relevant", schema_of(name, f"{name} ({arg})", {arg: "str"}),
                              {arg: str}, (arg,)))
        self.toolbox = ToolBox(tools)
        self.state: dict = {}

    def _tool(self, t: ToolSpec) -> Tool:
        def call(**args):
            after, observation = apply(t, self.state, args)
            if after is None:
                raise ValueError(observation.removeprefix("error: "))  # the toolbox shows it as an error line
            self.state = after
            return "(no response)" if self.rng.random() < self.noise else observation
        return Tool(t.name, call, schema_of(t.name, t.doc, t.args), {a: JSON[k] for a, k in t.args.items()},
                    tuple(t.args))

    def tool_schemas(self) -> list[dict]:
        return self.toolbox.schemas

    def task_generator(self) -> WorldGenerator:
        return WorldGenerator(self.spec, self.difficulty)

    def reset(self, sample: Sample, seed: int) -> str:
        rng = random.Random(row_seed(sample))
        template = row_template(self.spec, sample, rng)  # a generated row names its template and difficulty
        self.instance = template.make(rng, row_difficulty(sample, self.difficulty), self.spec)
        self.state, self.rng = copy.deepcopy(self.instance.state), random.Random(seed)
        return f"{self.spec.instructions}{self.instance.prompt}"

    def step(self, action: str) -> StepResult:
        results = self.toolbox.run(action)
        if results is not None:
            return StepResult(results.observation, tool_calls=results.calls, metrics=dict(results.metrics))
        met = bool(self.instance.goal(self.state))  # the true state, never the text of the turn
        return StepResult("", reward=float(met), done=True, stop_reason="answered",
                          metrics={"world/goal_met": float(met)})
