"""Finished episodes as the loop's scored groups; the episode source behind a producer."""

from __future__ import annotations

import itertools

import pytest
import torch

from rlvr.engines.base import SamplingParams
from rlvr.engines.hf import HFEngine
from rlvr.envs import EpisodeLimits, EpisodeRunner, PlainRenderer
from rlvr.envs.guess_number import GuessNumberEnv, guess_number_samples
from rlvr.envs.scored import EpisodeScoring, episode_groups
from rlvr.models.tiny_qwen2 import tiny_qwen2
from rlvr.orchestrate.episode_source import EpisodeSource
from rlvr.orchestrate.producers import SyncProducer
from rlvr.orchestrate.watchdog import Watchdog
from rlvr.tasks import PromptSampler
from rlvr.train.batching import collate
from rlvr.types import Sample


def test_groups_of_g_episodes_with_rewards_flags_and_masks(scripted, char_tok):
    guesses = itertools.cycle(["50", "7", "7", "x"])  # row order: task 0's 3 episodes, then task 1's
    engine = scripted(lambda text: next(guesses))
    tasks = [Sample("guess", "50"), Sample("guess", "7")]
    flat = [t for t in tasks for _ in range(3)]
    with EpisodeRunner(engine, PlainRenderer(char_tok), SamplingParams(), EpisodeLimits(max_turns=2)) as runner:
        episodes = runner.run(GuessNumberEnv, flat, list(range(6)))
    groups, dropped = episode_groups(episodes, 3)
    assert [[s.sample for s in g] for g in groups] == [[tasks[0]] * 3, [tasks[1]] * 3]
    rewards = [[s.reward for s in g] for g in groups]
    assert rewards == [[e.reward for e in episodes[:3]], [e.reward for e in episodes[3:]]]
    assert {r for g in rewards for r in g} == {0.0, 1.0}  # some solved, some not: a signal to learn from
    for g in groups:
        for s in g:
            assert (s.flags == ("max_turns",)) == (s.reason == "max_turns")
            assert len(s.rollout.loss_mask) == len(s.rollout.completion_ids) == len(s.rollout.logprobs)
    assert dropped["env/dropped"] == 0
    batch = collate([s.rollout for g in groups for s in g], torch.zeros(6), torch.arange(6), 0)
    assert batch.completion_mask.shape[1] == max(len(s.rollout.completion_ids) for g in groups for s in g)


def test_hybrid_rule():
    assert EpisodeScoring().reward([0.2, 0.3, 1.0]) == 1.0
    assert EpisodeScoring(step_weight=0.5).reward([0.2, 0.3, 1.0]) == pytest.approx(1.25)
    assert EpisodeScoring().reward([]) == 0.0


def test_groups_refuse_mixed_tasks(scripted, char_tok):
    engine = scripted(lambda text: "1")
    with EpisodeRunner(engine, PlainRenderer(char_tok), SamplingParams(), EpisodeLimits(max_turns=1)) as runner:
        episodes = runner.run(GuessNumberEnv, [Sample("a", "1"), Sample("b", "2")], [0, 1])
    with pytest.raises(ValueError, match="not all of one task"):
        episode_groups(episodes, 2)
    with pytest.raises(ValueError, match="do not split into groups of 3"):
        episode_groups(episodes, 3)


def test_episode_source_behind_the_sync_producer_replays_from_its_state(char_tok):
    torch.manual_seed(0)
    model = tiny_qwen2(hidden_size=32, intermediate_size=64, num_layers=1, num_heads=4, num_kv_heads=2)
    engine = HFEngine(model, char_tok, seed=0)
    runner = EpisodeRunner(engine, PlainRenderer(char_tok), SamplingParams(max_new_tokens=6),
                           EpisodeLimits(max_turns=2, max_total_tokens=300))
    source = EpisodeSource(runner, GuessNumberEnv, PromptSampler(guess_number_samples(8, seed=0), seed=0),
                           prompts=2, group_size=4, seed=0)
    producer = SyncProducer(source, engine, Watchdog(60.0, None), steps=2)
    before = producer.next_state()
    first = producer.next(1)
    assert [len(g) for g in first.groups] == [4, 4]
    assert first.counts["env/episodes"] == 8.0 and "env/turns_mean" in first.counts
    source.load_state(before, None)
    again = producer.next(1)
    ids = lambda p: [s.rollout.completion_ids for g in p.groups for s in g]  # noqa: E731
    assert ids(again) == ids(first)
    runner.close()
