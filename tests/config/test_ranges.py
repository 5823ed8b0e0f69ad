"""Every number in the config has a range that means something, shown by `rlvr recipes show
--explain`; values that ran a step forever or overflowed are refused, as are quoted numbers,
unusable run names and folder paths (issue 26)."""

from __future__ import annotations

import pytest

from rlvr.cli.main import main
from rlvr.config import load_config
from rlvr.config.load import section_variants
from rlvr.config.ranges import field_bounds, numeric_fields
from rlvr.config.schema import Config
from rlvr.errors import ConfigError


def every_section(model=Config, prefix=""):
    yield model, prefix
    for key, info in model.model_fields.items():
        for sub in section_variants(info.annotation):
            yield from every_section(sub, f"{prefix}{key}.")


def test_every_number_has_a_lower_and_an_upper_bound():
    unbounded = sorted({key for model, prefix in every_section() for key, info in numeric_fields(model, prefix)
                        if None in (field_bounds(info)[0], field_bounds(info)[2])})
    assert unbounded == []  # before: 120 fields without an upper bound (train.updates_per_batch, algo.eps_high...)


@pytest.mark.parametrize("override, message", [
    ("train.updates_per_batch=1000000", "train.updates_per_batch: Input should be less than or equal to 64"),
    ("train.updates_per_batch=4611686018427387904", "train.updates_per_batch: Input should be less than or equal"),
    ("algo.eps_high=4611686018427387904", "algo.eps_high: Input should be less than or equal to 100"),
    ("algo.eps_high=1e30", "algo.eps_high: Input should be less than or equal to 100"),
    ("sampling.temperature=1e30", "sampling.temperature: Input should be less than or equal to 10"),
    ("algo.adv_eps=1e30", "algo.adv_eps: Input should be less than or equal to 1"),
    ("run.name=", "run.name: empty: the run would write into run.output_dir itself"),
    ("run.name=abc ", "run.name: 'abc ' starts or ends with white space"),
    ("run.name=a/b", "run.name: 'a/b': one folder name, without '/'"),
    ("run.name=" + "x" * 300, "run.name: 300 bytes long; a folder name takes at most 255"),
    ("run.output_dir=/tmp/" + "y" * 300, "run.output_dir: a folder name of 300 bytes in it"),
    ("train.lr='1e-3'", "train.lr: expected a number, not text (write it without quotes) (got '1e-3')"),
    ("eval.k=['1']", "eval.k: expected a number, not text (write it without quotes) (got ['1'])"),
    ("task.kind=[]", "task.kind = '[]': expected one of"),
])
def test_values_that_should_be_refused_name_their_key(override, message):
    with pytest.raises(ConfigError) as refused:
        load_config(None, [override])
    assert message in str(refused.value) and len(str(refused.value).splitlines()) == 1


def test_a_quoted_number_in_a_recipe_names_the_file_and_line(tmp_path):
    recipe = tmp_path / "r.toml"
    recipe.write_text('[train]\nsteps = 3\nlr = "1e-3"\n')
    with pytest.raises(ConfigError, match=rf"{recipe}:3: train.lr: expected a number, not text"):
        load_config(recipe)  # before: read as 0.001 without a word


def test_explain_states_each_range(capsys):
    assert main(["recipes", "show", "grpo", "--explain"]) == 0
    out = capsys.readouterr().out
    for line in ("#   train.updates_per_batch = 1 in [1, 64]", "#   train.lr = 3e-05 in (0, 1]",
                 "#   sampling.temperature = 1.0 in [0.001, 10]", "#   train.betas = (0.9, 0.999) in [0, 1)",
                 "#   eval.k = [1] in [1, 4096]"):
        assert line in out, line
