"""`env.kind = "single_turn"`: every task a one-turn episode, generated and scored by the
single-turn source's own code (`RolloutSource`: one `engine.generate`, batched scoring by the
reward stack, dynamic sampling, the curriculum), then described as episodes.

Why not the episode runner: measured on recipes/demo.toml, both give the same tokens,
log-probs, rewards and losses, so nothing is gained by a second generation path, and the
runner lacks what single-turn runs use (engines without `generate_ids`, max_batch chunks,
dynamic sampling, the curriculum); it also lost the verifier's reason and flags and marked a
turn cut at max_new_tokens as stopped (docs/environments.md, "One path for single-turn
tasks"). What the episode view adds on top, as the runner would have recorded it:

- `env.max_total_tokens`: a task whose prompt alone fills the budget is not generated and is
  counted in `env/dropped` (and, as the runner's, in `env/episodes` and the stop shares); a turn past the budget is cut to it before scoring (finish
  "length", reward 0, flag and stop reason "max_tokens").
- each row's `Scored.episode` record and the `env/*` metrics (envs/episodes.py
  `episode_metrics`), seeds `seed * 1_000_003 + step * 10_007 + row` as `EpisodeSource`'s
  (the row in the trained batch; a one-turn episode does not read its seed);
- `env.credit` (trajectory, or per-turn, which on one turn is the trajectory's rule).
"""

from __future__ import annotations

import dataclasses
from collections import Counter

from rlvr.config.schema import Config
from rlvr.envs.base import STOP_MAX_TOKENS
from rlvr.envs.credit import credit_rule
from rlvr.envs.episodes import Episode, episode_metrics
from rlvr.envs.one_turn import one_turn_episode
from rlvr.envs.scored import episode_record
from rlvr.envs.trajectory import Trajectory
from rlvr.errors import ConfigError
from rlvr.orchestrate.episode_source import turn_credit
from rlvr.orchestrate.parts import Parts
from rlvr.orchestrate.rollouts import Produced, RolloutSource
from rlvr.orchestrate.watchdog import Watchdog
from rlvr.types import Rollout, Sample, Scored


class OneTurnSource(RolloutSource):
    """A `RolloutSource` whose rows are also one-turn episodes (see the module)."""

    def __init__(self, config: Config, parts: Parts, watchdog: Watchdog):
        super().__init__(config, parts, watchdog)
        self.budget = config.env.max_total_tokens
        self.credit = credit_rule(config.env.credit, turn_credit(config))
        # id() -> the rollout, for this draw's rollouts cut at the budget: the dict holds them, so
        # that a refill round's new rollout cannot take the id() of a dropped group's cut one
        self._cut: dict[int, Rollout] = {}
        self._dropped: list[Episode] = []  # this draw's episodes whose prompt left no room

    def draw(self, step: int) -> Produced:
        self._cut.clear()
        self._dropped.clear()
        produced = super().draw(step)
        if not produced.groups:  # else the trainer fails deep inside collate on an empty batch
            raise ConfigError(f"env.max_total_tokens = {self.budget} leaves no room to generate: every prompt drawn "
                              f"for step {step} has at least {self.budget} tokens; raise env.max_total_tokens")
        seed = self.config.run.seed
        episodes, groups, row = list(self._dropped), [], 0  # the dropped count as episodes, as the runner's
        for group in produced.groups:
            described = []
            for s in group:
                ep = one_turn_episode(s, seed * 1_000_003 + step * 10_007 + row, cut=id(s.rollout) in self._cut)
                episodes.append(ep)
                described.append(dataclasses.replace(s, episode=episode_record(ep)))
                row += 1
            groups.append(described)
        produced.groups = self.credit(groups)
        produced.counts.update(episode_metrics(episodes))
        self._cut.clear()
        return produced

    def _generate(self, samples: list[Sample]) -> list[list[Rollout]]:
        """The kept prompts' completions, cut to the budget; an empty group for a prompt that
        leaves no room (it is never generated, as the runner ends such an episode at once)."""
        tok = self.parts.tokenizer
        room = [self.budget - len(tok(s.prompt, add_special_tokens=False)["input_ids"]) for s in samples]
        kept = [s for s, r in zip(samples, room) if r > 0]
        generated = iter(super()._generate(kept) if kept else [])
        return [[self._cut_to(x, r) for x in next(generated)] if r > 0 else [] for r in room]

    def _cut_to(self, rollout: Rollout, room: int) -> Rollout:
        if len(rollout.completion_ids) <= room:
            return rollout
        n = room
        cut = dataclasses.replace(rollout, completion_ids=rollout.completion_ids[:n], logprobs=rollout.logprobs[:n],
                                  token_versions=rollout.token_versions[:n], support=rollout.support[:n],
                                  text=self.parts.tokenizer.decode(rollout.completion_ids[:n], skip_special_tokens=True),
                                  finish_reason="length")
        self._cut[id(cut)] = cut
        return cut

    def _score(self, samples: list[Sample], rollouts: list[list[Rollout]]) -> tuple[list[list[Scored]], Counter]:
        """The reward stack on every answered turn; a cut turn scores 0 unscored; a prompt
        with no room leaves no group (`env/dropped` counts its G episodes)."""
        kept = [(s, g) for s, g in zip(samples, rollouts) if g]
        groups, counts = super()._score([s for s, _ in kept], [[r for r in g if id(r) not in self._cut]
                                                                for _, g in kept])
        dropped = [s for s, g in zip(samples, rollouts) if not g]
        tok = self.parts.tokenizer
        self._dropped += [Episode(s, -1, trajectory=Trajectory(tok(s.prompt, add_special_tokens=False)["input_ids"]),
                                  stop_reason=STOP_MAX_TOKENS) for s in dropped for _ in range(self.config.sampling.group_size)]
        counts["env/dropped"] += self.config.sampling.group_size * len(dropped)
        out = []
        for (sample, group), scored in zip(kept, groups):
            answered = iter(scored)
            out.append([Scored(sample, r, 0.0, STOP_MAX_TOKENS, (STOP_MAX_TOKENS,)) if id(r) in self._cut
                        else next(answered) for r in group])
        return out, counts
