"""The textarena model: scripts/make_arena_model.py (its teacher, played against the real
adapter), models/tiny-arena and recipes/env_textarena_guess_number.toml (loads, trains a step).
Skips with the reason when the optional extra `envs` (textarena) is not installed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("textarena", reason="textarena is the optional extra `envs` (pip install 'rlvr[envs]')")

from rlvr.config import load_config  # noqa: E402
from rlvr.envs import PlainRenderer  # noqa: E402
from rlvr.envs.textarena_env import TextArenaEnv  # noqa: E402
from rlvr.models import build_char_tokenizer  # noqa: E402
from rlvr.orchestrate import train  # noqa: E402
from rlvr.types import Sample  # noqa: E402
from tests.script_loader import load_script  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
RECIPE = REPO / "recipes" / "env_textarena_guess_number.toml"
MODEL = REPO / "models" / "tiny-arena"




mam = load_script("make_arena_model")


def secret_seeds() -> dict[int, int]:
    """secret -> the first game seed whose game has it (read from the game's own state)."""
    found, seed = {}, 0
    while len(found) < mam.HIGH - mam.LOW + 1:
        env = TextArenaEnv(mam.GAME, mam.OPTIONS)
        env.reset(Sample("", str(seed)), 0)
        found.setdefault(env.env.state.game_state["game_number"], seed)
        seed += 1
    return found


def guesses(ids: list[int], labels: list[int], eos: int) -> list[str]:
    tok = build_char_tokenizer()
    trained = [i for i, lab in zip(ids, labels) if lab != -100]
    return tok.decode(trained).split(tok.decode([eos]))[:-1]


def test_the_recipe_plays_what_the_model_was_made_for():
    c = load_config(RECIPE)
    assert c.env.game == mam.GAME and dict(c.env.options) == mam.OPTIONS
    assert {"seed": c.task.seed, "train_size": c.task.train_size, "test_size": c.task.test_size} == mam.TASK
    assert c.env.max_total_tokens <= mam.CONTEXT and c.model.path == "models/tiny-arena"
    card = json.loads((MODEL / "rlvr_model_card.json").read_text())
    assert (card["game"], card["options"], card["context"]) == (mam.GAME, mam.OPTIONS, mam.CONTEXT)
    assert json.loads((MODEL / "config.json").read_text())["max_position_embeddings"] == mam.CONTEXT


def test_the_teacher_plays_textarena_bisecting_to_a_win_or_scanning_from_the_low_end():
    renderer = PlainRenderer(build_char_tokenizer())
    eos = renderer.tokenizer.eos_token_id
    for secret, seed in secret_seeds().items():
        bisect = guesses(*mam.episode(renderer, Sample("", str(seed)), "bisect"), eos)
        scan = guesses(*mam.episode(renderer, Sample("", str(seed)), "scan"), eos)
        assert bisect[-1] == str(secret) and len(bisect) <= 5, (secret, bisect)
        # textarena 0.7.4 takes max_turns + 1 guesses (it checks the limit before counting the turn)
        assert scan == [str(g) for g in range(1, min(secret, 6) + 1)], (secret, scan)


def test_the_trained_tokens_are_the_guesses_only():
    renderer = PlainRenderer(build_char_tokenizer())
    ids, labels = mam.episode(renderer, Sample("", str(secret_seeds()[7])), "bisect")  # 10 lower, 5 higher, 7
    assert guesses(ids, labels, renderer.tokenizer.eos_token_id) == ["10", "5", "7"]
    text = renderer.tokenizer.decode(ids)
    assert text.startswith("You are Player 0. You are playing Guess The Number.")
    assert text.count("<obs>The target number is lower.</obs>") == 1 and "higher" in text


def test_the_recipe_trains_a_step_on_the_shipped_model(tmp_path):
    config = load_config(RECIPE, [f"run.output_dir={tmp_path}", "train.steps=1", "sampling.prompts_per_step=2",
                                  "sampling.group_size=2", "log.progress=none", "checkpoint.every_minutes=0"])
    folder = train(config).folder
    [row] = folder.read_metrics()
    assert row["env/episodes"] == 4.0 and row["loss/policy"] is not None
    for line in folder.samples.read_text().splitlines():
        ep = json.loads(line)["episode"]
        assert ep["stop_reason"] in ("won", "game_over", "invalid_move"), ep  # the game ended it


def test_the_model_script_is_deterministic_from_its_seed(tmp_path, monkeypatch):
    made = []
    for name, seed in (("a", "0"), ("b", "0"), ("c", "1")):
        monkeypatch.setattr(sys, "argv", ["make_arena_model.py", "--out", str(tmp_path / name), "--steps", "1",
                                          "--batch", "2", "--seed", seed])
        mam.main()
        made.append((tmp_path / name / "model.safetensors").read_bytes())
    assert made[0] == made[1] and made[2] != made[0]
