"""Finished episodes → the loop's scored groups (GRPO over trajectories).

The G episodes of one task form one group, so group-relative advantages compare trajectories
of the same task. Each episode becomes one `Scored`: its rollout is the whole trajectory
(`Trajectory.to_rollout`: the first prompt, then every turn, with the loss mask), its text is
the policy's last turn (what a verifier of the final answer reads), and its reward is

    reward = r_T + step_weight * sum_{t < T} r_t

where r_1..r_T are the step rewards in order and r_T the terminal one (the environment's
last step: a verifier's score in `ToolEnv`, 1 for a solved game). `step_weight = 0` (the
default) trains on the terminal reward alone; per-turn credit is rlvr.envs.credit.

An episode that ended at a runner limit carries its stop reason as a flag; one whose
environment failed to start (no trajectory), or whose first observation left no room for a
policy token (no completion), cannot become a row and is left out of its group, counted in
`env/dropped`; so is one ended by an `EnvFault` (a remote server's failure says nothing about
the policy, so it is not trained on as a failure).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from rlvr.envs.base import RUNNER_STOP_REASONS, STOP_MAX_TOKENS
from rlvr.envs.episodes import Episode
from rlvr.types import Scored


@dataclass(frozen=True)
class EpisodeScoring:
    """How step rewards combine into a trajectory's reward (see the module)."""

    step_weight: float = 0.0

    def reward(self, step_rewards: list[float]) -> float:
        if not step_rewards:
            return 0.0
        return step_rewards[-1] + self.step_weight * sum(step_rewards[:-1])


def episode_scored(ep: Episode, scoring: EpisodeScoring = EpisodeScoring()) -> Scored:
    """One finished episode as a `Scored` row."""
    traj = ep.trajectory
    text = traj.turns[-1].action if traj.turns else ""
    finish = "length" if ep.stop_reason == STOP_MAX_TOKENS else "stop"
    reason = ep.stop_reason if ep.error is None else f"{ep.stop_reason}: {ep.error}"
    flags = (ep.stop_reason,) if ep.stop_reason in RUNNER_STOP_REASONS else ()
    return Scored(ep.sample, traj.to_rollout(text, finish), scoring.reward(ep.step_rewards), reason, flags,
                  episode=episode_record(ep))


def episode_record(ep: Episode) -> dict:
    """The whole trajectory as samples.jsonl stores it (plain JSON values): every turn (the policy's action, the observation that answered it, the step
    reward, tool calls, token counts, the engine's finish reason), the stop reason and error."""
    traj = ep.trajectory
    turns = [{"action": t.action, "observation": t.observation, "reward": t.reward, "tool_calls": t.tool_calls,
              "policy_tokens": t.n_policy_tokens, "observation_tokens": t.n_observation_tokens,
              "finish": t.finish_reason} for t in traj.turns]
    return {"seed": ep.seed, "turns": turns, "tool_calls": ep.tool_calls, "step_rewards": list(ep.step_rewards),
            "stop_reason": ep.stop_reason, "success": ep.success, "error": ep.error,
            "prompt_tokens": len(traj.prompt_ids), "tokens": traj.total_tokens}


def episode_groups(episodes: list[Episode], group_size: int,
                   scoring: EpisodeScoring = EpisodeScoring()) -> tuple[list[list[Scored]], Counter]:
    """Consecutive runs of `group_size` episodes (one task each) → groups, and the count of
    episodes left out for having no trajectory or no completion token."""
    if len(episodes) % group_size:
        raise ValueError(f"{len(episodes)} episodes do not split into groups of {group_size}")
    groups, counts = [], Counter()
    for start in range(0, len(episodes), group_size):
        members = episodes[start:start + group_size]
        if len({id(ep.sample) for ep in members}) != 1:
            raise ValueError(f"episodes {start}..{start + group_size - 1} are not all of one task")
        kept = [episode_scored(ep, scoring) for ep in members
                if ep.trajectory is not None and ep.trajectory.ids and not ep.fault]
        counts["env/dropped"] += len(members) - len(kept)
        if kept:
            groups.append(kept)
    return groups, counts
