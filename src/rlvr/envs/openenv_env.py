"""An OpenEnv environment server as an rlvr `Env` (extra `openenv`: openenv-core 0.3.0, BSD).

OpenEnv serves an environment over a WebSocket (`/ws`), one session per connection: the client
sends `{"type": "reset", "data": {...}}` or `{"type": "step", "data": action}` and gets back
`{"type": "observation", "data": {"observation": {...}, "reward": r, "done": d}}` or
`{"type": "error", ...}`. This adapter plays one episode per session through openenv-core's
own client (`GenericEnvClient(...).sync()`, plain dicts, nothing of the server's code):

    reset(sample, seed)  connect, then reset(seed=seed, prompt=..., answer=...): the task's
                         prompt and gold go to the server (its environment owns the task, as
                         a local env does), which passes on only what its `reset` accepts.
                         Returns observation[observation_field].
    step(action)         step({action_field: action}); the reply's observation text,
                         reward (None: 0) and done; observation["stop_reason"], when the
                         server names one, is the episode's.
    close()              ends the session, on a daemon thread (a hung server cannot hold
                         the runner).

Text in, text out, as every rlvr env: the observation's ids are rendered once by the runner
(rlvr.envs.render), so the trajectory keeps the exact tokens, as with a local environment.

A server that is down, slow or malformed ends only its episode, with an `EnvFault` whose stop
reason says which (`FAULTS`); the run's failure-rate limit is rlvr.envs.fault_rate's.
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
from numbers import Real

from rlvr.envs.base import Env, EnvFault, StepResult
from rlvr.errors import ConfigError
from rlvr.types import Sample

FAULTS = {
    "openenv_down": "the server refused the connection or closed it mid-episode",
    "openenv_timeout": "no reply within env.message_timeout_s (or no connection within env.connect_timeout_s)",
    "openenv_malformed": "a reply that is not JSON or lacks the observation text, or a reward that is not a number",
    "openenv_server_error": "the server answered with an error message (its environment raised)",
}


def generic_client_class():
    try:
        from openenv.core import GenericEnvClient
    except ImportError:
        raise ConfigError("env.kind = 'openenv' needs openenv-core: pip install 'rlvr[openenv]' "
                          "(openenv-core==0.3.0)") from None
    return GenericEnvClient


def classify(e: BaseException) -> str:
    """The fault name of an exception the client raised (`FAULTS`)."""
    from websockets.exceptions import ConnectionClosed, InvalidHandshake

    timeouts = (TimeoutError, asyncio.TimeoutError)  # one class from Python 3.11, two before
    if isinstance(e, timeouts) or isinstance(e.__cause__, timeouts):  # connect() wraps its own timeout
        return "openenv_timeout"
    if isinstance(e, (ConnectionError, OSError, ConnectionClosed, InvalidHandshake)):
        return "openenv_down"
    if isinstance(e, (ValueError, TypeError, KeyError, AttributeError)):  # json.JSONDecodeError is a ValueError
        return "openenv_malformed"
    return "openenv_server_error"  # the client's RuntimeError("Server error: ...")


class OpenEnvEnv(Env):
    """One episode, one session of the OpenEnv server at `url` (http:// or ws://)."""

    def __init__(self, url: str, *, connect_timeout_s: float = 10.0, message_timeout_s: float = 30.0,
                 observation_field: str = "text", action_field: str = "text"):
        self.url, self.observation_field, self.action_field = url, observation_field, action_field
        self.timeouts = (connect_timeout_s, message_timeout_s)
        self.client = None

    def _call(self, what: str, call):
        try:
            return call()
        except Exception as e:  # deliberate fault tolerance: every client failure ends this episode only
            reason = classify(e)
            raise EnvFault(reason, f"OpenEnv server {self.url}, {what}: {type(e).__name__}: {e}"[:500]) from None

    def reset(self, sample: Sample, seed: int) -> str:
        connect_s, message_s = self.timeouts
        self.client = generic_client_class()(self.url, connect_timeout_s=connect_s,
                                             message_timeout_s=message_s).sync()
        self._call("connect", self.client.connect)
        result = self._call("reset", lambda: self.client.reset(seed=seed, prompt=sample.prompt,
                                                               answer=sample.answer))
        return self._text(result.observation, "reset")

    def step(self, action: str) -> StepResult:
        result = self._call("step", lambda: self.client.step({self.action_field: action}))
        text = self._text(result.observation, "step")
        reward = 0.0 if result.reward is None else result.reward
        if isinstance(reward, bool) or not isinstance(reward, Real) or not math.isfinite(reward):
            raise EnvFault("openenv_malformed", f"OpenEnv server {self.url}, step: reward {reward!r:.60} "
                                                "is not a finite number")
        stop = result.observation.get("stop_reason")
        return StepResult(text if not result.done else "", reward=float(reward), done=bool(result.done),
                          stop_reason=stop if isinstance(stop, str) and stop else None,
                          tool_calls=_count(result.observation.get("tool_calls")))

    def _text(self, observation: object, what: str) -> str:
        text = observation.get(self.observation_field) if isinstance(observation, dict) else None
        if not isinstance(text, str):
            shown = json.dumps(observation, default=str)[:200]
            raise EnvFault("openenv_malformed", f"OpenEnv server {self.url}, {what}: the observation has no "
                                                f"string {self.observation_field!r} (env.observation_field): {shown}")
        return text

    def close(self) -> None:
        client, self.client = self.client, None
        if client is not None:  # best effort, off the runner's thread: a hung server must not hold it
            threading.Thread(target=_quiet_close, args=(client,), daemon=True, name="rlvr-openenv-close").start()


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _quiet_close(client) -> None:
    try:
        client.close()
    except Exception:  # the session is over either way; the server reaps it on disconnect
        pass
