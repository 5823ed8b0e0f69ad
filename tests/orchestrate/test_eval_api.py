"""`rlvr.eval_model` (docs/python-api.md): the figures of `rlvr eval` with the same options,
from Python; an unknown or badly typed option is a one-line ConfigError."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import rlvr
from rlvr.cli.main import main
from rlvr.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
MODEL = str(REPO / "models" / "tiny-arith")


def test_eval_model_gives_the_figures_of_rlvr_eval(tmp_path):
    assert main(["eval", MODEL, "--n", "4", "--k", "1,4", "--limit", "6", "--seed", "3",
                 "--out", str(tmp_path / "cli")]) == 0
    cli = json.loads((tmp_path / "cli" / "results.json").read_text())
    output = rlvr.eval_model(MODEL, n=4, k=[1, 4], limit=6, seed=3, out=tmp_path / "api")
    assert output.results_file == tmp_path / "api" / "results.json" and output.report.is_file()
    assert output.results == cli == json.loads(output.results_file.read_text())
    assert output.results["settings"]["seed"] == 3 and set(cli["model"]["pass_at_k"]) == {"1", "4"}
    other_seed = rlvr.eval_model(MODEL, n=4, k=4, limit=6, seed=4, out=tmp_path / "seed4", fresh=True)
    assert other_seed.results["model"]["per_prompt"] != cli["model"]["per_prompt"]  # the seed reached sampling


def test_a_bad_option_is_one_line_naming_it(tmp_path):
    with pytest.raises(ConfigError, match=r"no option 'max_new_token' \(did you mean max_new_tokens\?\)"):
        rlvr.eval_model(MODEL, max_new_token=8, out=tmp_path)
    with pytest.raises(ConfigError, match="--limit: invalid int value: 'six'"):
        rlvr.eval_model(MODEL, limit="six", out=tmp_path)
    with pytest.raises(ConfigError, match="--k 8 is larger than --n 4"):
        rlvr.eval_model(MODEL, n=4, k=8, out=tmp_path)


def test_the_docs_eval_example_runs(tmp_path, monkeypatch, capsys):
    page = (REPO / "docs" / "python-api.md").read_text()
    example = re.findall(r"```python\n(.*?)```", page, re.S)[1]
    monkeypatch.chdir(REPO)  # the example names models/tiny-arith from a checkout
    example = example.replace('out="eval-tiny"', f"out={str(tmp_path)!r}")
    assert str(tmp_path) in example
    namespace: dict = {}
    exec(compile(example, "docs/python-api.md", "exec"), namespace)
    assert "pass@1" in capsys.readouterr().out
    assert namespace["output"].results_file == tmp_path / "results.json"
