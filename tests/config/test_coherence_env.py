"""The rules of [env] (config/coherence_env.py) and its sections (config/sections_env.py): one
case each that breaks only that rule, refused at load with a sentence naming the key(s)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlvr.config import dump_config, load_config
from rlvr.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
GAME = ['task.kind="guess_number"', "eval.size=0"]
ENV = ['env.kind="guess_number"', *GAME]
TOOL = ['env.kind="python_tool"', "eval.size=0"]

CASES = {
    # vLLM plays episodes under its own rules (config/coherence_run.py vllm_incoherences)
    "env_vllm_on_ray": ([*ENV, 'model.engine="vllm"', 'orchestrate.backend="ray"'], "(Ray workers with vLLM) is not built"),
    "env_replay": ([*ENV, 'algo.sampling_mask="replay"', "sampling.top_p=0.9"],
                   "algo.sampling_mask = 'replay' with env.kind = 'guess_number' is not built"),
    "game_without_its_task": (['env.kind="guess_number"', "eval.size=0"],
                              "plays task.kind = 'guess_number' games, not task.kind = 'arithmetic'"),
    "tool_on_a_game": ([*TOOL, 'task.kind="guess_number"'], "task.kind = 'guess_number' is a game"),
    "eval_turn_above_trajectory": (['env.kind="guess_number"', 'task.kind="guess_number"', "sampling.max_new_tokens=4",
                                    "eval.max_new_tokens=8", "env.max_total_tokens=8"],
                                   "eval.max_new_tokens (8, one turn of an evaluation episode) must be below "
                                   "env.max_total_tokens (8"),
    "env_per_token_advantages": ([*ENV, 'algo.advantage="gae"', 'algo.baseline="none"', 'algo.scale="none"'],
                                 "the critic and token returns do not know the turns of a trajectory"),
    "env_dynamic_sampling": ([*ENV, 'sampling.zero_variance="drop"'], "sampling.zero_variance = 'drop'"),
    "env_overlong": ([*ENV, "sampling.overlong_cache=4"], "the overlong penalty reads a completion's length"),
    "turn_above_trajectory": ([*ENV, "env.max_total_tokens=8"],
                              "sampling.max_new_tokens (8, one turn) must be below env.max_total_tokens (8"),
    "sql_without_query_tasks": (['env.kind="sql"', 'env.db_path="shop.sqlite"', "eval.size=0"],
                                "env.kind = 'sql' needs tasks whose gold answer is a SQL query"),
    "game_low_above_high": ([*ENV, "task.low=30", "task.high=20"], "task.low (30) is above task.high (20)"),
}


@pytest.mark.parametrize("overrides, sentence", CASES.values(), ids=CASES.keys())
def test_each_rule_refuses_its_case_at_load(overrides, sentence):
    with pytest.raises(ConfigError) as info:
        load_config(None, overrides)
    assert sentence in str(info.value)


def test_neighbours_load():
    assert load_config(None, ENV).env.kind == "guess_number"
    assert load_config(None, TOOL).env.tool_parser == "json_tags"  # python_tool on arithmetic tasks
    assert load_config(None, [*ENV, "sampling.max_new_tokens=4", "env.max_total_tokens=8"]).env.max_total_tokens == 8
    assert load_config(None, ['env.kind="guess_number"', 'task.kind="guess_number"']).eval.size == 200  # episodes
    assert load_config(None, GAME).env.kind == "none"  # a guess_number task alone: one-shot guesses
    # every engine samples from token ids (Engine.generate_ids): Ray workers and vLLM play episodes
    assert load_config(None, [*ENV, 'orchestrate.backend="ray"']).orchestrate.backend == "ray"
    assert load_config(None, [*ENV, 'model.engine="vllm"']).model.engine == "vllm"


def test_an_option_of_another_env_kind_is_refused_naming_it():
    with pytest.raises(ConfigError) as info:
        load_config(None, [*ENV, "env.tool_timeout_s=3.0"])
    assert "env.tool_timeout_s" in str(info.value)


def test_the_default_is_no_environment_and_an_env_config_round_trips(tmp_path):
    assert load_config(None, []).env.kind == "none"
    config = load_config(REPO / "recipes" / "env_guess_number.toml", [])
    saved = tmp_path / "config.toml"
    saved.write_text(dump_config(config))
    assert load_config(saved, []) == config
