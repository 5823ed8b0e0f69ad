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
    with pytest.raises(ConfigError, match="in an environment run needs algo.seq_mean_token_sum_norm.constant"):
        load_config(None, ["algo.aggregation=seq_mean_token_sum_norm", "env.kind=guess_number",
                           "task.kind=guess_number"])
    # SAPO's temperatures live in [algo.sapo]: required when it is chosen, refused when it is not
    for sets in (["algo.surrogate=sapo"], ["algo.surrogate=sapo", "algo.sapo.tau_pos=1.0"]):
        with pytest.raises(ConfigError, match=r"algo\.sapo\.tau_neg is required"):
            load_config(None, sets)
    with pytest.raises(ConfigError, match=r"algo\.sapo\.tau_pos / algo\.sapo\.tau_neg is read only when algo\.surrogate = 'sapo'"):
        load_config(None, ["algo.sapo.tau_pos=1.0", "algo.sapo.tau_neg=1.05"])
    with pytest.raises(ConfigError, match=r"algo\.sapo_tau_pos is read only when algo\.surrogate = 'sapo'"):
        load_config(None, ["algo.sapo_tau_pos=1.0", "algo.sapo_tau_neg=1.05"])  # an old flat key, no SAPO
    for spelling in ("sapo.tau", "sapo_tau"):  # the keyed form, and the old flat one migrated
        sapo = load_config(None, ["algo.surrogate=sapo", f"algo.{spelling}_pos=1.0", f"algo.{spelling}_neg=1.05"])
        assert sapo.algo.surrogate == "sapo" and sapo.algo.options("surrogate").tau_neg == 1.05


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


@pytest.mark.parametrize("override, problem", [
    ("train.lr=inf", "train.lr: Input should be a finite number"),
    ("train.lr=nan", "train.lr: Input should be a finite number"),
    ("train.lr=1e999", "train.lr: Input should be a finite number"),  # TOML reads it as inf
    ("algo.eps_high=1e300", "algo.eps_high: number beyond float32's range"),
    ("train.lr=2.0", "train.lr: Input should be less than or equal to 1"),
    ("train.betas=[0.9, nan]", "train.betas.1: Input should be a finite number"),
    ("train.betas=[0.9, 1.0]", "train.betas.1: Input should be less than 1"),
    ("train.steps=true", "train.steps: expected a number or text, not the boolean true"),
    ("sampling.stop=[true]", "sampling.stop: expected a number or text, not the boolean true"),
    ("model.fp32_head=1", "model.fp32_head: expected true or false"),
    ("run.seed=9223372036854775808", "run.seed: integer outside the 64-bit range"),  # 2**63
    ("run.seed=-1", "run.seed: Input should be greater than or equal to 0"),
    ("run.name=\ud800", "run.name: text holds a lone surrogate \\ud800 at character 0"),
    ("sampling.temperature=1e-300", "sampling.temperature: Input should be greater than or equal to 0.001"),
    ("task.test_size=8100", "task.test_size = 8100 leaves no training problem: the operand range gives 8100"),
    ("task.ops=/", "task.ops = '/': use some of '+', '-', '*'"),
    ("task.high=100000", "gives 9998200081 problems; at most 1000000 are enumerated"),
])
def test_unusable_numbers_and_text_are_refused_naming_the_key(override, problem):
    with pytest.raises(ConfigError) as e:
        load_config(None, [override])
    assert str(e.value).startswith("--set: ") and problem in str(e.value)


def test_limits_themselves_are_accepted():
    c = load_config(None, ["train.lr=1", "run.seed=9223372036854775807", "sampling.temperature=0.001",
                           "task.test_size=8099", "task.ops=+-*"])
    assert (c.train.lr, c.run.seed, c.sampling.temperature, c.task.test_size) == (1, 2**63 - 1, 0.001, 8099)


def test_text_fields_take_set_values_as_written():
    c = load_config(None, ["run.name=2024", "model.path=1e5", "run.output_dir='quoted'"])
    assert (c.run.name, c.model.path, c.run.output_dir) == ("2024", "1e5", "quoted")


def test_recipe_read_errors_name_the_file_line_and_byte(tmp_path):
    path = tmp_path / "r.toml"
    path.write_bytes(b"[train]\nsteps = 3\n# caf\xe9\n")
    with pytest.raises(ConfigError, match=rf"^{path}:3: not valid UTF-8 \(byte 0xe9 at byte offset 23\)"):
        load_config(path)  # 8 + 10 + 5
    with pytest.raises(ConfigError, match=rf"^{tmp_path}: cannot read the recipe"):
        load_config(tmp_path)
    path.write_text("[train]\n" + "x = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(path)


def test_a_long_bad_value_stays_one_short_line():
    with pytest.raises(ConfigError) as e:
        load_config(None, ["train.steps=" + "x" * 10_000])
    assert "\n" not in str(e.value) and len(str(e.value)) < 200
