"""Any rlvr `Env` served as an OpenEnv environment (extra `openenv`: openenv-core 0.3.0).

Built with openenv-core's own server classes: `RlvrEnvironment` is an
`openenv.core.env_server.Environment` around an rlvr env factory, and `openenv_app` is
`create_fastapi_app` over it (the WebSocket `/ws` sessions an OpenEnv client plays, plus
`/reset`, `/step`, `/health`, `/schema`). One server session is one rlvr episode:

    reset(seed, prompt, answer)  a fresh rlvr env from the factory, reset with
                                 Sample(prompt, answer) and the seed
    step(RlvrAction(text))       the env's StepResult as RlvrObservation(text, reward, done,
                                 stop_reason, tool_calls)

`rlvr env serve-openenv RECIPE_OR_ENV --port N` runs it for a recipe's environment
(rlvr.cli.env_command), and env.kind = "openenv" plays against it (rlvr.envs.openenv_env), so
a local env and the same env behind OpenEnv can be compared with `rlvr env check --against`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Optional
from uuid import uuid4

from openenv.core.env_server import Action, Environment, Observation, State, create_fastapi_app
from pydantic import Field

from rlvr.envs.base import Env
from rlvr.types import Sample


class RlvrAction(Action):
    """The policy's turn, as text (what an rlvr env's `step` takes)."""

    text: str = Field(description="the policy's action text")


class RlvrObservation(Observation):
    """An rlvr env's answer: the observation text and, when done, its stop reason."""

    text: str = Field("", description="the observation shown to the policy ('' when done)")
    stop_reason: Optional[str] = Field(None, description="why the episode ended, when done")
    tool_calls: int = Field(0, ge=0, description="tool calls the action made")


class RlvrEnvironment(Environment[RlvrAction, RlvrObservation, State]):
    """One OpenEnv session: a fresh rlvr env each reset, from `make_env`."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # each session builds its own rlvr env (rlvr's Env is single-use)

    def __init__(self, make_env: Callable[[], Env]):
        super().__init__()
        self.make_env, self.env = make_env, None
        self._state = State(episode_id=None, step_count=0)

    def reset(self, seed: Optional[int] = None, episode_id: Optional[str] = None, prompt: str = "",
              answer: str = "", **kwargs: Any) -> RlvrObservation:
        self.env = self.make_env()
        first = self.env.reset(Sample(prompt, answer), 0 if seed is None else seed)
        self._state = State(episode_id=episode_id or str(uuid4()), step_count=0)
        return RlvrObservation(text=first)

    def step(self, action: RlvrAction, timeout_s: Optional[float] = None, **kwargs: Any) -> RlvrObservation:
        if self.env is None:
            raise RuntimeError("step before reset")
        result = self.env.step(action.text)
        self._state.step_count += 1
        return RlvrObservation(text=result.observation, reward=result.reward, done=result.done,
                               stop_reason=result.stop_reason, tool_calls=result.tool_calls)

    @property
    def state(self) -> State:
        return self._state

    def close(self) -> None:
        if self.env is not None:
            self.env.close()


def openenv_app(make_env: Callable[[], Env], max_sessions: int = 64):
    """The FastAPI app of an OpenEnv server whose sessions play `make_env`'s episodes."""
    return create_fastapi_app(lambda: RlvrEnvironment(make_env), RlvrAction, RlvrObservation,
                              max_concurrent_envs=max_sessions)
