"""Config errors name the file, line and key, with a did-you-mean; nothing is rewritten."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlvr.config import Config, dump_config, load_config, parse_override
from rlvr.errors import ConfigError


def write(tmp_path, text: str):
    path = tmp_path / "r.toml"
    path.write_text(text)
    return path


def test_unknown_key_names_file_line_and_suggestion(tmp_path):
    path = write(tmp_path, "[train]\nsteps = 3\nlrr = 1e-4\n")
    with pytest.raises(ConfigError) as e:
        load_config(path)
    assert f"{path}:3: unknown key 'train.lrr' (did you mean 'train.lr'?)" in str(e.value)


def test_unknown_section_lists_the_valid_ones(tmp_path):
    with pytest.raises(ConfigError, match=r"unknown key 'trian' \(did you mean 'train'\?\)"):
        load_config(write(tmp_path, "[trian]\nsteps = 1\n"))


def test_wrong_type_and_impossible_value(tmp_path):
    path = write(tmp_path, "[sampling]\ngroup_size = 'eight'\n[algo]\neps_low = -0.5\n")
    with pytest.raises(ConfigError) as e:
        load_config(path)
    msg = str(e.value)
    assert f"{path}:2: sampling.group_size" in msg and "'eight'" in msg
    assert f"{path}:4: algo.eps_low" in msg


def test_overrides_are_typed_and_blamed_on_set():
    c = load_config(None, ["train.lr=3e-4", "sampling.stop=['x', 'y']", "run.name=abc"])
    assert c.train.lr == 3e-4 and c.sampling.stop == ["x", "y"] and c.run.name == "abc"
    with pytest.raises(ConfigError, match=r"^--set: sampling.group_size"):
        load_config(None, ["sampling.group_size=0"])
    with pytest.raises(ConfigError, match="expected section.key=value"):
        parse_override("train.lr")


def test_incoherent_combination_is_rejected_not_rewritten():
    with pytest.raises(ConfigError, match="kl_coef > 0 needs algo.kl"):
        load_config(None, ["algo.kl_coef=0.1"])
    with pytest.raises(ConfigError, match="needs algo.aggregation_constant"):
        load_config(None, ["algo.aggregation=seq_mean_token_sum_norm"])
    for sets in (["algo.surrogate=sapo"], ["algo.surrogate=sapo", "algo.sapo_tau_pos=1.0"],
                 ["algo.sapo_tau_pos=1.0", "algo.sapo_tau_neg=1.05"]):
        with pytest.raises(ConfigError, match="sapo_tau_neg are set exactly when"):
            load_config(None, sets)
    sapo = load_config(None, ["algo.surrogate=sapo", "algo.sapo_tau_pos=1.0", "algo.sapo_tau_neg=1.05"])
    assert sapo.algo.surrogate == "sapo"


def test_config_is_frozen_and_round_trips(tmp_path):
    c = load_config(None, ["train.steps=7"])
    with pytest.raises(Exception):
        c.train.steps = 8
    again = load_config(write(tmp_path, dump_config(c)))
    assert again == c and isinstance(again, Config)


def test_every_shipped_recipe_loads():
    recipes = sorted((Path(__file__).resolve().parents[2] / "recipes").glob("*.toml"))
    assert recipes
    for r in recipes:
        load_config(r)
