"""[env] kinds whose environment runs elsewhere: "openenv" (an OpenEnv server) and "emulated"
(a language model given the environment's spec). docs/env-openenv.md. Their faults end one
episode each; `max_failure_rate` bounds a step's share of them (rlvr.envs.fault_rate)."""

from __future__ import annotations

from typing import Literal, Optional

from pydantic import Field, model_validator

from rlvr.config.episode_section import EpisodeSection


class RemoteEnvSection(EpisodeSection):
    """What an environment behind a connection adds: the failure-rate limit."""

    max_failure_rate: float = Field(0.5, ge=0, lt=1, description="the run stops once more than this share of one "
                                                                 "step's episodes ended by a fault (server down, "
                                                                 "slow, malformed)")


class OpenEnvSection(RemoteEnvSection):
    """Episodes played against an OpenEnv environment server through openenv-core's client
    (extra `openenv`; rlvr.envs.openenv_env): one WebSocket session per episode."""

    kind: Literal["openenv"] = "openenv"
    url: str = Field(min_length=1, description="the server's base URL, e.g. 'http://127.0.0.1:8000' "
                                               "(`rlvr env serve-openenv` serves an rlvr env)")
    connect_timeout_s: float = Field(10.0, gt=0, le=3600, description="seconds to open a session (openenv_timeout)")
    message_timeout_s: float = Field(30.0, gt=0, le=86400, description="seconds to wait for one reply to a reset "
                                                                       "or step (openenv_timeout)")
    observation_field: str = Field("text", min_length=1, description="the observation's key holding the text "
                                                                     "shown to the policy")
    action_field: str = Field("text", min_length=1, description="the action's key the policy's turn is sent in")


class EmulatedEnvSection(RemoteEnvSection):
    """A model-emulated environment (rlvr.envs.emulated): each observation, reward and done is
    a language model's reply given the environment's spec and the episode so far, from an
    OpenAI-compatible endpoint (`rlvr serve` is one) or a local model. Runs are flagged
    (env/emulated); `rlvr env check REAL --against ...` measures the emulation's fidelity."""

    kind: Literal["emulated"] = "emulated"
    spec: Optional[str] = Field(None, description="the environment's rules as text (or spec_file)")
    spec_file: Optional[str] = Field(None, description="a text file holding the environment's rules (or spec)")
    emulator: Literal["http", "local"] = Field("http", description="'http': url's /completions; 'local': "
                                                                   "model_path in this process")
    url: Optional[str] = Field(None, description="emulator = 'http': the OpenAI-compatible base URL, e.g. "
                                                 "'http://127.0.0.1:8000/v1'")
    model: Optional[str] = Field(None, description="emulator = 'http': the model name sent (unset: none)")
    model_path: Optional[str] = Field(None, description="emulator = 'local': the emulator model's folder")
    max_new_tokens: int = Field(128, ge=1, le=65536, description="tokens of one emulated reply")
    temperature: float = Field(0.0, ge=0, le=10, description="sampling temperature of the emulator (0: greedy)")
    timeout_s: float = Field(60.0, gt=0, le=86400, description="emulator = 'http': seconds per request")

    @model_validator(mode="after")
    def _one_source(self) -> "EmulatedEnvSection":
        if (self.spec is None) == (self.spec_file is None):
            raise ValueError("env.kind = 'emulated' takes exactly one of env.spec and env.spec_file")
        needed = {"http": ("url", self.url), "local": ("model_path", self.model_path)}[self.emulator]
        if needed[1] is None:
            raise ValueError(f"env.emulator = {self.emulator!r} needs env.{needed[0]}")
        return self
