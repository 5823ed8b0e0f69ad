"""The options every environment section shares (config/sections_env.py, sections_repo.py):
the limits of one episode, the hybrid reward rule, the credit rule and the failure curriculum."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from rlvr import names
from rlvr.config.section import Section


class EpisodeSection(Section):
    """What every environment takes: the limits of one episode (each ends it with its own stop
    reason) and the hybrid reward rule."""

    max_turns: int = Field(4, ge=1, le=10_000, description="policy turns an episode may take (stop reason max_turns)")
    max_total_tokens: int = Field(512, ge=1, le=16777216, description="tokens of the whole trajectory, prompt included "
                                                         "(max_tokens); at most the model's context")
    max_tool_calls: int = Field(8, ge=1, le=10_000, description="tool calls an episode may make (max_tool_calls)")
    wall_s: float = Field(60.0, gt=0, le=86400, description="wall-clock seconds from reset (wall_time)")
    step_weight: float = Field(0.0, ge=0, le=1000, description="reward = r_T + step_weight * sum of the earlier step "
                                                      "rewards (0: the terminal reward only)")
    workers: int = Field(16, ge=1, le=1024, description="threads that step the environments of a batch in parallel")
    credit: names.ENV_CREDIT.literal() = Field("trajectory", description="how the reward reaches the tokens: one "
                                               "advantage per episode, or per turn (rlvr.envs.credit)")
    turn_discount: float = Field(1.0, gt=0, le=1, description="gamma of env.credit = 'per_turn': a turn's return "
                                                              "discounts each later turn's reward by gamma")
    curriculum: Literal["none", "failures"] = Field("none", description="'failures': draw again, or fresh tasks "
                                                   "like, the tasks none of whose episodes succeeded "
                                                   "(rlvr.envs.failures)")
    failure_pool: int = Field(64, ge=1, le=100_000, description="env.curriculum = 'failures': failed tasks kept")
    failure_mix: float = Field(0.25, ge=0, le=1, description="env.curriculum = 'failures': share of each batch "
                                                             "drawn from the pool, the rest from the base sampler")
    failure_fresh: float = Field(1.0, ge=0, le=1, description="env.curriculum = 'failures': share of the pool's "
                                                              "draws that are fresh tasks with the failure's "
                                                              "features (where the environment has a generator; "
                                                              "the rest replay the failed row)")
