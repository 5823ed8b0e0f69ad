"""`rlvr sft` end to end on a tiny BPE chat model: it learns, resumes bit-identically after an
interruption, refuses what would lose a run, and its checkpoint exports and evaluates."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

from rlvr.cli.main import main
from rlvr.errors import ConfigError
from rlvr.orchestrate.sft_run import load_sft_config, sft


@pytest.fixture
def rows(tmp_path):
    lines = [{"messages": [{"role": "user", "content": f"{a}+{b}?"}, {"role": "assistant", "content": str(a + b)}]}
             for a in range(10, 18) for b in range(10, 14)]
    path = tmp_path / "rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    return path


def config(tmp_path, model, rows, name, *more):
    return load_sft_config(None, [f"data.train_path={rows}", f"model.path={model}", f"run.output_dir={tmp_path}",
                                  f"run.name={name}", "train.steps=6", "train.batch_size=8",
                                  "train.micro_batch_size=4", "train.lr=3e-3", "train.lr_schedule=cosine",
                                  "checkpoint.every=3", *more])


def weights(folder):
    return load_file(str(sorted(folder.checkpoints.glob("step_*"))[-1] / "model.safetensors"))


def without_time(path):
    return [{k: v for k, v in json.loads(line).items() if not k.startswith("time/")}
            for line in path.read_text().splitlines()]


def test_it_learns_and_logs_what_the_data_rules_did(tmp_path, bpe_models, rows):
    losses = []
    result = sft(config(tmp_path, bpe_models["qwen2"], rows, "learn"), on_step=lambda s, m: losses.append(m["sft/loss"]))
    assert result.steps == 6 and losses[-1] < losses[0] * 0.9
    first = json.loads(result.folder.metrics.read_text().splitlines()[0])
    assert first["data/rows"] == 32 and first["data/examples"] == 32 and first["data/no_assistant"] == 0


def test_an_interrupted_run_resumes_to_the_uninterrupted_weights(tmp_path, bpe_models, rows):
    straight = sft(config(tmp_path, bpe_models["qwen2"], rows, "straight")).folder

    def stop_at_3(step, metrics):
        if step == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt, match="interrupted after step 3"):
        sft(config(tmp_path, bpe_models["qwen2"], rows, "cut"), on_step=stop_at_3)
    cut = tmp_path / "cut"
    resumed = sft(load_sft_config(cut / "config.toml"), resume_dir=cut).folder
    assert without_time(resumed.metrics) == without_time(straight.metrics)
    a, b = weights(straight), weights(resumed)
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_a_taken_name_and_a_resume_without_checkpoints_are_refused(tmp_path, bpe_models, rows):
    done = sft(config(tmp_path, bpe_models["qwen2"], rows, "taken")).folder
    with pytest.raises(ConfigError, match="already holds a run"):
        sft(config(tmp_path, bpe_models["qwen2"], rows, "taken"))
    for step in done.checkpoints.iterdir():
        for f in step.iterdir():
            f.unlink()
        step.rmdir()
    with pytest.raises(ConfigError, match="no checkpoint to resume from"):
        sft(load_sft_config(done.config), resume_dir=done.path)


def test_the_cli_trains_exports_and_evaluates_the_checkpoint(tmp_path, bpe_models, rows, capsys):
    recipe = tmp_path / "sft.toml"
    recipe.write_text(f'[model]\npath = "{bpe_models["qwen2"]}"\n[data]\ntrain_path = "{rows}"\npacking = true\n'
                      f'max_length = 64\n[train]\nsteps = 2\nbatch_size = 4\nmicro_batch_size = 2\n')
    assert main(["sft", str(recipe), "--set", f"run.output_dir={tmp_path}", "--set", "run.name=cli"]) == 0
    assert "trained 2 steps on 32 examples of 32 rows" in capsys.readouterr().out
    assert main(["export", str(tmp_path / "cli"), str(tmp_path / "hf")]) == 0
    assert (tmp_path / "hf" / "model.safetensors").is_file() and (tmp_path / "hf" / "tokenizer.json").is_file()
    assert main(["sft", "--set", "data.nope=1"]) == 2  # no recipe: one error line, exit 2


def test_a_recipe_error_names_the_key(tmp_path, rows):
    with pytest.raises(ConfigError, match=r"unknown key 'data.pack' \(did you mean 'data.packing'\?\)"):
        load_sft_config(None, [f"data.train_path={rows}", "data.pack=true"])
    with pytest.raises(ConfigError, match=r"data.*train_path"):
        load_sft_config(None, [])


def test_the_last_steps_test_loss_is_computed_once_and_is_the_results(tmp_path, bpe_models, rows, monkeypatch):
    from rlvr.orchestrate.sft_run import SFTLoop

    real, calls = SFTLoop.test_loss, []
    monkeypatch.setattr(SFTLoop, "test_loss", lambda self: calls.append(self.step) or real(self))
    result = sft(config(tmp_path, bpe_models["qwen2"], rows, "once", f"data.test_path={rows}", "eval.every=3"))
    assert calls == [3, 6]  # before: [3, 6, 6], the final loss again after step 6's evaluation
    last = json.loads(result.folder.metrics.read_text().splitlines()[-1])
    assert result.test_loss == last["sft/test_loss"]
