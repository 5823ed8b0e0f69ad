"""env.kind = "single_turn" (orchestrate/one_turn_source.py) against the default single-turn
path on recipes/demo.toml: the same rollouts, rewards and training metrics bit for bit, and
the one-turn episode view (records, env/* metrics, the token budget) as the episode runner
(EpisodeSource playing OneTurnEnv, the path it replaced) records it."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlvr.config import load_config
from rlvr.orchestrate import source_choice, train
from rlvr.orchestrate.episode_source import EpisodeSource
from rlvr.orchestrate.learner import Learner

REPO = Path(__file__).resolve().parents[2]
ROLLOUT_FIELDS = ("prompt_ids", "completion_ids", "logprobs", "text", "finish_reason", "policy_version",
                  "token_versions", "support")
ONE_TURN = ['env.kind="single_turn"', "env.max_total_tokens=64"]


@pytest.fixture
def batches(monkeypatch):
    """The scored groups of every training step, taken at the learner."""
    seen, learn = [], Learner.learn

    def recording(self, groups, steps_done):
        seen.append(groups)
        return learn(self, groups, steps_done)

    monkeypatch.setattr(Learner, "learn", recording)
    return seen


def demo(tmp_path, name: str, *extra: str):
    """2 steps of the demo recipe; max_new_tokens 3 so that many completions are cut ("length")."""
    config = load_config(REPO / "recipes" / "demo.toml", [
        f"run.output_dir={tmp_path}", f"run.name={name}", "train.steps=2", "sampling.max_new_tokens=3",
        "eval.size=0", "log.progress=none", "checkpoint.every_minutes=0", *extra])
    return train(config).folder.read_metrics()


def rows_of(groups) -> list:
    return [s for g in groups for s in g]


def steady(row: dict) -> dict:
    return {k: v for k, v in row.items() if not (k.startswith(("time/", "throughput/")) or k.endswith("_s"))}


@pytest.mark.parametrize("sampling", [[], ['sampling.zero_variance="refill"']], ids=["keep", "refill"])
def test_one_turn_episodes_are_the_single_turn_rollouts(tmp_path, batches, sampling):
    plain = demo(tmp_path, "plain", *sampling)
    plain_groups = list(batches)
    batches.clear()
    episodes = demo(tmp_path, "episodes", *ONE_TURN, *sampling)
    assert len(batches) == len(plain_groups) == 2
    truncated = 0
    for a_groups, b_groups in zip(plain_groups, batches):
        assert [len(g) for g in a_groups] == [len(g) for g in b_groups]
        for a, b in zip(rows_of(a_groups), rows_of(b_groups)):
            for field in ROLLOUT_FIELDS:
                assert getattr(a.rollout, field) == getattr(b.rollout, field), field
            assert (a.sample, a.reward, a.reason, a.flags) == (b.sample, b.reward, b.reason, b.flags)
            assert b.episode["stop_reason"] == "answered" and b.episode["step_rewards"] == [a.reward]
            assert b.episode["turns"][0]["finish"] == a.rollout.finish_reason
            truncated += a.rollout.finish_reason == "length"
    assert truncated > 0  # the finish reason was checked on cut completions too
    for a, b in zip(plain, episodes):
        env_keys = {k for k in b if k.startswith("env/")}
        assert steady(a) == {k: v for k, v in steady(b).items() if k not in env_keys}
        assert b["env/turns_mean"] == 1.0 and b["env/stop/answered"] == 1.0 and b["env/dropped"] == 0
        assert b["env/success_rate"] == a["reward/accuracy"]


def test_the_token_budget_cuts_and_drops_as_the_episode_runner_did(tmp_path, batches, monkeypatch):
    """A budget of 7 tokens, operands 1 .. 120: prompts ("a+b=", one token a character) of 7
    or 8 characters leave no room (dropped, about 3 in 10), those of 5 or 6 leave 1-2 tokens for
    a 3-token turn (some cut), those of 4 leave room for all 3."""
    tight = [*ONE_TURN[:1], "env.max_total_tokens=7", "task.low=1", "task.high=120"]
    ours_rows = demo(tmp_path, "source", *tight)
    ours = list(batches)
    batches.clear()
    monkeypatch.setitem(source_choice.SOURCES, "single_turn", EpisodeSource.from_run)  # the runner's path
    runner_rows = demo(tmp_path, "runner", *tight)
    cut = 0
    for a_groups, b_groups in zip(batches, ours):
        assert [g[0].sample for g in a_groups] == [g[0].sample for g in b_groups]
        for a, b in zip(rows_of(a_groups), rows_of(b_groups)):
            assert a.rollout.prompt_ids == b.rollout.prompt_ids
            assert a.rollout.completion_ids == b.rollout.completion_ids
            assert a.rollout.logprobs == pytest.approx(b.rollout.logprobs, abs=0)
            assert a.reward == b.reward and a.episode["stop_reason"] == b.episode["stop_reason"]
            assert a.episode["step_rewards"] == b.episode["step_rewards"]
            if b.episode["stop_reason"] == "max_tokens":
                cut += 1
                assert len(b.rollout.prompt_ids) + len(b.rollout.completion_ids) == 7
                assert b.flags == ("max_tokens",) and b.rollout.finish_reason == "length" and b.reward == 0.0
    assert cut > 0
    for a, b in zip(runner_rows, ours_rows):
        assert {k: v for k, v in a.items() if k.startswith("env/")} == {k: v for k, v in b.items() if k.startswith("env/")}
        assert b["env/dropped"] > 0


def test_one_turn_episodes_take_the_async_producer(tmp_path):
    """The runner path refused orchestrate.mode = "async"; the single-turn source's rows do not
    care which producer draws them: staleness 0 is the synchronous run, number for number."""
    sync = demo(tmp_path, "sync", *ONE_TURN)
    overlapped = demo(tmp_path, "async", *ONE_TURN, 'orchestrate.mode="async"', "orchestrate.max_staleness=0")
    assert [steady(r) for r in sync] == [steady(r) for r in overlapped]
