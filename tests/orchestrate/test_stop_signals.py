"""SIGTERM does what Ctrl-C does (issue 26): stop after the step, checkpoint, one line naming
the folder, exit 143; past run.sigterm_grace_s it stops at once from the last checkpoint; a
stop at once names what it interrupted (a checkpoint is not the next step)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

import rlvr.train.checkpoint as ckpt
from rlvr.cli.main import main
from rlvr.config import load_config
from rlvr.orchestrate import train
from rlvr.orchestrate.run_folder import RunInterrupted
from rlvr.train.checkpoint import list_checkpoints

REPO = Path(__file__).resolve().parents[2]
SMALL = ["sampling.prompts_per_step=2", "sampling.group_size=2", "eval.size=0", "log.progress=none"]
CALLS_PER_STEP = 4  # prompts_per_step x group_size
PREEMPTED = """
import signal, time
calls = [0]

def reward(response, gold):
    calls[0] += 1
    if calls[0] == {at_call}:
        signal.raise_signal(signal.SIGTERM)  # the scheduler, in the middle of a step
    if calls[0] >= {at_call}:
        time.sleep({sleep_s})
    return float(len(response) % 2)
"""


def preempted_reward(tmp_path, monkeypatch, at_call: int, sleep_s: float) -> str:
    name = f"preempted_{at_call}_{str(sleep_s).replace('.', '_')}"
    (tmp_path / f"{name}.py").write_text(PREEMPTED.format(at_call=at_call, sleep_s=sleep_s))
    monkeypatch.syspath_prepend(str(tmp_path))
    return f"{name}:reward"


def test_sigterm_checkpoints_the_step_and_exits_143_naming_the_folder(tmp_path, capfd, monkeypatch):
    function = preempted_reward(tmp_path, monkeypatch, at_call=2 * CALLS_PER_STEP + 1, sleep_s=0)
    code = main(["train", "grpo", *[f"--set={o}" for o in SMALL], f"--set=run.output_dir={tmp_path}", "--set=run.name=t",
                 "--set=train.steps=100", f"--set=reward.function={function}"])
    err, run = capfd.readouterr().err.strip(), tmp_path / "t"  # capfd: the handler writes to fd 2
    assert code == 143, err  # before: the process died of the signal (-15), no message, no checkpoint
    assert err.splitlines() == [
        "rlvr: SIGTERM: stopping after this step to write a checkpoint (at most run.sigterm_grace_s = 20 s; then at once)",
        f"rlvr: terminated (SIGTERM) after step 3 (checkpoint written); resume with `rlvr train --resume {run}`"]
    assert [p.name for p in list_checkpoints(run / "checkpoints")] == ["step_3"]


def test_past_the_grace_period_sigterm_stops_at_once_from_the_last_checkpoint(tmp_path, capsys, monkeypatch):
    function = preempted_reward(tmp_path, monkeypatch, at_call=2 * CALLS_PER_STEP + 1, sleep_s=1.0)
    started = time.monotonic()
    code = main(["train", "grpo", *[f"--set={o}" for o in SMALL], f"--set=run.output_dir={tmp_path}", "--set=run.name=g",
                 "--set=train.steps=100", "--set=checkpoint.every=1", "--set=run.sigterm_grace_s=0.2",
                 f"--set=reward.function={function}"])
    err, run = capsys.readouterr().err.strip(), tmp_path / "g"
    assert code == 143 and time.monotonic() - started < 60, err
    assert err.splitlines()[-1] == (f"rlvr: terminated (SIGTERM) during step 3, 0.2 s after SIGTERM "
                                    f"(run.sigterm_grace_s); resume with `rlvr train --resume {run}` "
                                    f"(from step 2, the last checkpoint)")
    assert [p.name for p in list_checkpoints(run / "checkpoints")] == ["step_1", "step_2"]


def test_two_ctrl_cs_during_a_checkpoint_name_that_checkpoint(tmp_path, monkeypatch):
    real_save = ckpt.torch.save

    def two_ctrl_cs_at_step_3(state, f, *args, **kwargs):
        if state.get("step") == 3:
            signal.raise_signal(signal.SIGINT)  # asks to stop after this step
            signal.raise_signal(signal.SIGINT)  # stop now
        return real_save(state, f, *args, **kwargs)

    monkeypatch.setattr(ckpt.torch, "save", two_ctrl_cs_at_step_3)
    config = load_config(REPO / "recipes" / "grpo.toml", [f"run.output_dir={tmp_path}", "run.name=c", *SMALL,
                                                          "train.steps=5", "checkpoint.every=1"])
    with pytest.raises(RunInterrupted) as stopped:
        train(config)
    assert str(stopped.value) == (f"interrupted during step 3's checkpoint; resume with `rlvr train --resume "
                                  f"{tmp_path / 'c'}` (from step 2, the last checkpoint)")  # before: "during step 4"
    assert stopped.value.exit_status == 130
    assert sorted(p.name for p in (tmp_path / "c" / "checkpoints").iterdir()) == ["step_1", "step_2"]


def test_sigterm_while_the_model_loads_exits_143_with_a_line_and_leaves_no_folder(tmp_path, capsys, monkeypatch):
    import rlvr.orchestrate.run as run_module

    real_build = run_module.build

    def preempted_build(*args, **kwargs):
        signal.raise_signal(signal.SIGTERM)  # the scheduler, before the loop's handler exists
        return real_build(*args, **kwargs)

    monkeypatch.setattr(run_module, "build", preempted_build)
    before = signal.getsignal(signal.SIGTERM)  # SIG_DFL, or what an earlier test's library installed
    code = main(["train", "grpo", *[f"--set={o}" for o in SMALL], f"--set=run.output_dir={tmp_path}", "--set=run.name=m"])
    err = capsys.readouterr().err.strip()
    assert code == 143, err  # before: the process died of the signal (-15) with no word
    assert err.splitlines() == ["rlvr: terminated (SIGTERM); no training step was in progress"]
    assert not (tmp_path / "m").exists()  # a new run validates before its folder exists
    assert signal.getsignal(signal.SIGTERM) is before  # the command gives the handler back
