"""docs/environments.md's tutorial: a key-value store with set and get tools."""

from rlvr.envs import Env, StepResult, ToolBox, make_tool
from rlvr.types import Sample


class KVEnv(Env):
    """Store the task's value under `key` with set, then answer with it. Reward 1 when the
    answer is the gold value and the store really holds it: checked on the store itself."""

    def __init__(self, key: str = "x"):
        self.key = key
        self.store: dict[str, str] = {}  # this episode's state: one instance per episode

        def put(key: str, value: str) -> str:
            """Store a value.

            Args:
                key: the name to store it under.
                value: what to store.
            """
            self.store[key] = value
            return "ok"

        def get(key: str) -> str:
            """Read a stored value.

            Args:
                key: the name it was stored under.
            """
            return self.store.get(key, "(nothing stored)")

        self.toolbox = ToolBox([make_tool(put, name="set"), make_tool(get, name="get")])

    def tool_schemas(self) -> list[dict]:
        return self.toolbox.schemas  # a chat template renders them (tools=)

    def reset(self, sample: Sample, seed: int) -> str:
        self.gold = sample.answer
        return sample.prompt

    def step(self, action: str) -> StepResult:
        results = self.toolbox.run(action)
        if results is not None:  # the turn called tools: their results are the observation
            return StepResult(results.observation, tool_calls=results.calls, metrics=dict(results.metrics))
        stored = self.store.get(self.key) == self.gold
        right = stored and action.strip() == self.gold
        return StepResult("", reward=float(right), done=True, stop_reason="answered",
                          metrics={"kv/stored": float(stored)})
