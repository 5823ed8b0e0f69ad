"""A trajectory as one exact token sequence: the prompt, then policy turns and observations.

Token in, token out: the sequence is built only by appending ids, the engine's sampled ids
for a policy turn and the renderer's ids for an observation (rendered and tokenised alone).
It is never decoded and re-encoded: a BPE tokenizer's encode(decode(ids)) may merge the ids
of two turns or of one sampled pair into other ids, and the policy's log-probs would then
belong to tokens it never sampled.

Per completion token (everything after the first prompt):
    loss_mask[t]  1 on policy tokens, 0 on observation / template tokens
    logprobs[t]   the engine's sampling log-prob on policy tokens, 0.0 elsewhere
    versions[t]   the policy version that sampled it; observation tokens take the version of
                  the policy token before them (they carry no gradient; it keeps staleness
                  bookkeeping the same as for single-turn rollouts)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from rlvr.types import Rollout


@dataclass(frozen=True)
class Turn:
    """One policy turn and what the environment answered (what samples.jsonl will store)."""

    action: str  # the policy's text (stop strings and EOS excluded)
    n_policy_tokens: int
    observation: str  # the environment's answer ("" when it said done)
    n_observation_tokens: int  # its ids appended after the turn; 0 when the episode ended here
    reward: float
    tool_calls: int
    finish_reason: str  # the engine's: "stop" or "length"


@dataclass
class Trajectory:
    """The growing token sequence of one episode. `prompt_ids` is the first observation as
    rendered; `ids`, `loss_mask`, `logprobs`, `versions` cover the completion (all that
    follows) and always have the same length."""

    prompt_ids: list[int]
    ids: list[int] = field(default_factory=list)
    loss_mask: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)

    @property
    def total_tokens(self) -> int:
        return len(self.prompt_ids) + len(self.ids)

    def sequence(self) -> list[int]:
        """The ids the engine continues from next turn: prompt and everything since."""
        return self.prompt_ids + self.ids

    def append_policy(self, ids: tuple[int, ...] | list[int], logprobs, versions) -> None:
        """A policy turn: the engine's sampled ids, their sampling log-probs and versions."""
        if not len(ids) == len(logprobs) == len(versions):
            raise ValueError(f"a policy turn needs one log-prob and one version per token: "
                             f"{len(ids)} ids, {len(logprobs)} log-probs, {len(versions)} versions")
        self.ids.extend(ids)
        self.loss_mask.extend([1] * len(ids))
        self.logprobs.extend(float(x) for x in logprobs)
        self.versions.extend(int(v) for v in versions)

    def append_observation(self, ids: list[int]) -> None:
        """Observation (or template) ids: out of the loss, log-prob 0."""
        version = self.versions[-1] if self.versions else 0
        self.ids.extend(ids)
        self.loss_mask.extend([0] * len(ids))
        self.logprobs.extend([0.0] * len(ids))
        self.versions.extend([version] * len(ids))

    def to_rollout(self, text: str, finish_reason: str) -> Rollout:
        """The trajectory as the trainer's `Rollout`: the first prompt as `prompt_ids`, all the
        turns as `completion_ids`, the loss mask and per-token versions kept."""
        versions = tuple(self.versions)
        mixed = versions if versions and min(versions) != max(versions) else ()
        return Rollout(prompt_ids=tuple(self.prompt_ids), completion_ids=tuple(self.ids),
                       logprobs=tuple(self.logprobs), text=text,
                       finish_reason="length" if finish_reason == "length" else "stop",
                       policy_version=versions[0] if versions else 0, token_versions=mixed,
                       loss_mask=tuple(self.loss_mask))


def turn_tokens(rollout: Rollout) -> tuple[tuple[int, ...], tuple[float, ...], tuple[int, ...]]:
    """(ids, log-probs, versions) of one engine rollout, versions spelled out per token."""
    versions = rollout.token_versions or (rollout.policy_version,) * len(rollout.completion_ids)
    return rollout.completion_ids, rollout.logprobs, versions
