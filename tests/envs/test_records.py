"""What a run keeps of an episode: its record for samples.jsonl, its success, and which
episodes cannot become a training row."""

from __future__ import annotations

import json

from rlvr.engines.base import SamplingParams
from rlvr.envs import EpisodeLimits, EpisodeRunner, PlainRenderer, episode_metrics
from rlvr.envs.guess_number import GuessNumberEnv
from rlvr.envs.scored import episode_groups
from rlvr.types import Sample


def play(engine, tok, samples, limits):
    with EpisodeRunner(engine, PlainRenderer(tok), SamplingParams(max_new_tokens=8), limits) as runner:
        return runner.run(GuessNumberEnv, samples, list(range(len(samples))))


def test_the_record_holds_every_turn_and_the_stop_reason(scripted, char_tok):
    guesses = iter(["3", "9", "7"])
    [ep] = play(scripted(lambda text: next(guesses)), char_tok, [Sample("guess", "7")], EpisodeLimits(max_turns=4))
    [[row]], _ = episode_groups([ep], 1)
    record = json.loads(json.dumps(row.episode))  # plain JSON values
    assert [t["action"] for t in record["turns"]] == ["3", "9", "7"]
    assert [t["observation"] for t in record["turns"]] == ["3 is too low: guess higher.", "9 is too high: guess lower.", ""]
    assert record["step_rewards"] == [0.0, 0.0, 1.0] and record["stop_reason"] == "solved" and record["success"]
    assert [t["policy_tokens"] for t in record["turns"]] == [2, 2, 2]  # the digit and EOS
    assert sum(t["observation_tokens"] for t in record["turns"]) == row.rollout.loss_mask.count(0)
    assert record["tokens"] == len(row.rollout.prompt_ids) + len(row.rollout.completion_ids)


def test_success_needs_the_environment_to_end_it_with_reward_1(scripted, char_tok):
    solved, lost = play(scripted(lambda text: "7"), char_tok, [Sample("guess", "7"), Sample("guess", "8")],
                        EpisodeLimits(max_turns=2))
    assert (solved.success, lost.success) == (True, False)
    metrics = episode_metrics([solved, lost])
    assert metrics["env/success_rate"] == 0.5 and metrics["env/stop/max_turns"] == 0.5
    assert metrics["env/stop/wall_time"] == 0.0  # every runner reason is in each line


def test_an_episode_without_a_policy_token_is_dropped_and_counted(scripted, char_tok):
    long_prompt = Sample("x" * 40, "7")
    episodes = play(scripted(lambda text: "7"), char_tok, [long_prompt, Sample("guess", "7")],
                    EpisodeLimits(max_total_tokens=30))
    assert episodes[0].stop_reason == "max_tokens" and not episodes[0].trajectory.ids
    groups, counts = episode_groups(episodes, 1)
    assert [g[0].sample.prompt for g in groups] == ["guess"] and counts["env/dropped"] == 1
