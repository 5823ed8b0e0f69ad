"""The textarena adapter (rlvr.envs.textarena_env): each checked game plays offline, its game
fixed by the task's seed; refusals name the id; episodes run through the batched runner and a
2-step training run. Skips with the reason when the optional extra `envs` is not installed."""

from __future__ import annotations

import json
import random
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("textarena", reason="textarena is the optional extra `envs` (pip install 'rlvr[envs]')")

from rlvr.config import load_config  # noqa: E402
from rlvr.envs.base import EpisodeLimits  # noqa: E402
from rlvr.envs.episodes import EpisodeRunner  # noqa: E402
from rlvr.envs.render import PlainRenderer  # noqa: E402
from rlvr.envs.textarena_env import OFFLINE_GAMES, TextArenaEnv, textarena_env  # noqa: E402
from rlvr.errors import ConfigError  # noqa: E402
from rlvr.engines.base import SamplingParams  # noqa: E402
from rlvr.orchestrate import train  # noqa: E402
from rlvr.tasks.game_seeds import game_seed_splits  # noqa: E402
from rlvr.types import Sample  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
MOVES = {"GuessTheNumber-v0": ["10", "5", "15", "3"], "TowerOfHanoi-v0": ["A C", "A B", "C B", "A C"],
         "Mastermind-v0": ["1 2 3 4", "2 3 4 5", "3 4 5 6"], "FrozenLake-v0": ["down", "right", "down", "right"]}


def play(game: str, seed: int) -> list[str]:
    env = TextArenaEnv(game)
    seen = [env.reset(Sample("label", str(seed)), 999)]
    for move in MOVES[game]:
        result = env.step(move)
        seen.append(f"{result.observation}|{result.reward}|{result.done}|{result.stop_reason}")
        if result.done:
            break
    return seen


@pytest.mark.parametrize("game", sorted(OFFLINE_GAMES.values()))
def test_a_checked_game_is_fixed_by_its_seed_and_leaves_the_global_random_alone(game):
    play(game, 0)  # the first import of a game's module may draw from `random`
    random.seed(5)
    expected = random.random()
    random.seed(5)
    first = play(game, 11)
    assert play(game, 11) == first and random.random() == expected
    assert first[0].strip() and "[" not in first[1].split("|")[0][:1]  # the game's text; the action is not echoed
    if game != "TowerOfHanoi-v0":  # Hanoi has one start position; the others draw theirs
        assert any(play(game, s) != first for s in (12, 13, 14))


def test_guess_the_number_feedback_and_the_win():
    # GuessTheNumber-v0 (1..20): find the secret of seed 11 by bisection, then check the reward.
    env = TextArenaEnv("GuessTheNumber-v0")
    env.reset(Sample("", "11"), 0)
    low, high = 1, 20
    for _ in range(6):
        guess = (low + high) // 2
        result = env.step(str(guess))  # bracket_actions: sent as "[guess]"
        if result.done:
            break
        assert result.reward == 0.0 and result.observation in ("The target number is higher.",
                                                               "The target number is lower.")
        low, high = (guess + 1, high) if "higher" in result.observation else (low, guess - 1)
    assert (result.done, result.reward, result.stop_reason) == (True, 1.0, "won")


def test_two_invalid_moves_end_the_game():
    env = TextArenaEnv("Mastermind-v0")
    env.reset(Sample("", "3"), 0)
    first = env.step("no digits here")
    assert not first.done and "invalid move" in first.observation
    assert env.step("still none").stop_reason == "invalid_move"


def test_games_in_threads_stay_their_own():
    with ThreadPoolExecutor(8) as pool:
        runs = list(pool.map(lambda s: play("FrozenLake-v0", s % 3), range(24)))
    assert all(run == play("FrozenLake-v0", i % 3) for i, run in enumerate(runs))


@pytest.mark.parametrize("game, sentence", [
    ("TicTacToe-v0", "not a textarena game checked to run offline and single-player"),
    ("Wordle-v0", "word games download nltk data"),
    ("GuessTheNumbr-v0", "is not a textarena game (did you mean 'GuessTheNumber-v0'?)"),
])
def test_unchecked_and_unknown_games_are_refused_by_name(game, sentence):
    with pytest.raises(ConfigError) as info:
        TextArenaEnv(game)
    assert sentence in str(info.value)


def test_a_wrong_option_fails_when_the_factory_is_built():
    with pytest.raises(ConfigError, match="env.options for 'GuessTheNumber-v0'.*no_such"):
        textarena_env("GuessTheNumber-v0", {"no_such": 1})
    assert "between 1 and 5" in textarena_env("GuessTheNumber-v0", {"max_number": 5})().reset(Sample("", "1"), 0)


def test_a_non_integer_seed_names_the_task():
    with pytest.raises(ValueError, match="t#3: a textarena task's answer is its game seed"):
        TextArenaEnv("GuessTheNumber-v0").reset(Sample("x", "seven", "t#3"), 0)


def test_game_seed_tasks_are_distinct_and_fixed_by_their_seed():
    train_rows, test_rows = game_seed_splits(seed=4, train_size=50, test_size=10, name="textarena")
    seeds = [s.answer for s in train_rows + test_rows]
    assert len(set(seeds)) == 60  # no held-out seed is a training one
    assert game_seed_splits(seed=4, train_size=50, test_size=10, name="textarena")[0] == train_rows
    assert game_seed_splits(seed=5, train_size=50, test_size=10, name="textarena")[0] != train_rows


def test_the_runner_plays_textarena_episodes(scripted, char_tok):
    engine = scripted(lambda text: "10")  # always guesses 10: a game of seed s ends won or after max_turns
    runner = EpisodeRunner(engine, PlainRenderer(char_tok), SamplingParams(max_new_tokens=4),
                           EpisodeLimits(max_turns=3, max_total_tokens=2000))
    samples = [Sample("", str(s)) for s in (1, 1, 2)]
    with runner:
        episodes = runner.run(textarena_env("GuessTheNumber-v0"), samples, [0, 1, 2])
    assert [len(ep.trajectory.turns) for ep in episodes][0] == len(episodes[1].trajectory.turns)  # same game
    for ep in episodes:
        assert ep.stop_reason in ("won", "max_turns", "invalid_move") and ep.error is None


RUN = """
[model]
path = "{model}"
[task]
kind = "textarena"
train_size = 20
test_size = 5
[env]
kind = "textarena"
game = "GuessTheNumber-v0"
max_turns = 3
max_total_tokens = 1024
[sampling]
group_size = 2
prompts_per_step = 2
max_new_tokens = 4
[train]
steps = 1
[eval]
size = 0
[log]
progress = "none"
[checkpoint]
every_minutes = 0
"""


def test_a_textarena_run_trains(tmp_path):
    # GuessTheNumber-v0's first message is ~520 characters, past tiny-env's 256 positions: a copy
    # with 1024 (RoPE runs past its trained length; this checks the wiring, not the play).
    model = tmp_path / "tiny-env-1024"
    shutil.copytree(REPO / "models" / "tiny-env", model)
    config = json.loads((model / "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**config, "max_position_embeddings": 1024}))
    recipe = tmp_path / "textarena.toml"
    recipe.write_text(RUN.format(model=model))
    folder = train(load_config(recipe, [f"run.output_dir={tmp_path}"])).folder
    [row] = folder.read_metrics()
    assert row["env/episodes"] == 4.0 and row["loss/policy"] is not None
    for line in folder.samples.read_text().splitlines():
        ep = json.loads(line)["episode"]
        assert ep["stop_reason"] in ("won", "invalid_move", "game_over", "max_turns", "max_tokens"), ep
        for t in ep["turns"][:-1]:  # answered by the game: a hint or its invalid-move notice
            assert "The target number is" in t["observation"] or "invalid move" in t["observation"], t


def test_textarena_tasks_need_the_textarena_env():
    with pytest.raises(ConfigError, match="task.kind = 'textarena' rows are game seeds"):
        load_config(None, ['task.kind="textarena"', "eval.size=0"])
