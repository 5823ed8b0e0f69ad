"""The run folder's files under kills, garbage and a full disk (issue 26): a rewrite is
new-then-rename, an unreadable line is kept and named, checkpoints the run wrote cannot vanish
without a word, a full disk is one line with the file's whole lines kept."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import rlvr.orchestrate.run_folder as run_folder
import rlvr.train.checkpoint as ckpt
from rlvr.cli.main import main
from rlvr.config import load_config
from rlvr.orchestrate import resume, train
from rlvr.orchestrate.run_folder import RunFolder
from rlvr.train.checkpoint import save_checkpoint

REPO = Path(__file__).resolve().parents[2]
SMALL = ["sampling.prompts_per_step=2", "sampling.group_size=2", "eval.size=0", "log.progress=none"]

# A child that cuts metrics.jsonl back to step 2, as a resume does, and kill -9s itself at its
# Nth call of a file object's write (run_folder loaded from its file: no torch, a fast start).
KILLED_AT_A_WRITE = """
import importlib.util, io, os, signal, sys
spec = importlib.util.spec_from_file_location("run_folder", sys.argv[1])
run_folder = importlib.util.module_from_spec(spec)
spec.loader.exec_module(run_folder)
calls = [0]

def kill_at_the_nth_write(frame, event, arg):
    if event == "c_call" and getattr(arg, "__name__", "") == "write" and isinstance(getattr(arg, "__self__", None), io.IOBase):
        calls[0] += 1
        if calls[0] == int(sys.argv[3]):
            os.kill(os.getpid(), signal.SIGKILL)

sys.setprofile(kill_at_the_nth_write)
run_folder.RunFolder(sys.argv[2]).truncate_after(2)
"""


def config(tmp_path, name, *extra):
    return load_config(REPO / "recipes" / "grpo.toml", [f"run.output_dir={tmp_path}", f"run.name={name}", *SMALL, *extra])


def cli(capsys, *args) -> tuple[int, str]:
    code = main(list(args))
    return code, capsys.readouterr().err.strip()


def test_a_kill_9_during_the_resume_rewrite_loses_no_metrics_line(tmp_path):
    folder = RunFolder(tmp_path)
    lines = [json.dumps({"step": n, "reward/mean": n / 7}) for n in (1, 2, 3)]
    for nth_write in (1, 2, 3):
        folder.metrics.write_text("".join(line + "\n" for line in lines) + "{torn")
        subprocess.run([sys.executable, "-c", KILLED_AT_A_WRITE, run_folder.__file__, str(tmp_path), str(nth_write)],
                       check=False, timeout=60)
        kept = folder.metrics.read_text().splitlines()
        assert kept[:2] == lines[:2], nth_write  # before: an empty file (rewritten in place)
        folder.remove_partials()


def test_a_garbage_line_in_the_middle_of_metrics_is_named_and_kept(tmp_path):
    folder = train(config(tmp_path, "g", "train.steps=2")).folder
    first, second = folder.metrics.read_text().splitlines()
    folder.metrics.write_text(f"{first}\n{{not json\n[1, 2]\n{second}\n")
    result = resume(folder.path, ["train.steps=3"])
    assert any(f"{folder.metrics}: 2 line(s) that are not a step's JSON (line 2, 3) moved to metrics.jsonl.unreadable"
               in note for note in result.notes), result.notes  # before: dropped without a word
    assert (folder.path / "metrics.jsonl.unreadable").read_text() == "{not json\n[1, 2]\n"
    assert [r["step"] for r in folder.read_metrics()] == [1, 2, 3]


def test_deleted_checkpoints_refuse_the_resume_naming_what_is_missing(tmp_path, capsys):
    folder = train(config(tmp_path, "d", "train.steps=2")).folder
    before = folder.metrics.read_text()
    for path in sorted(folder.checkpoints.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    folder.checkpoints.rmdir()
    code, err = cli(capsys, "train", "--resume", str(folder.path))
    assert code == 2 and len(err.splitlines()) == 1, err  # before: exit 0, restarted from step 0
    assert f"{folder.checkpoints / 'step_2'}: the newest checkpoint this run wrote is missing" in err
    assert folder.metrics.read_text() == before
    folder.checkpoints.write_text("a file where the folder belongs")
    code, err = cli(capsys, "train", "--resume", str(folder.path))
    assert code == 2 and f"{folder.checkpoints}: not a folder" in err  # before: FileExistsError


class FullDiskAt:
    """`os` as run_folder sees it, whose write fills the disk halfway through `needle`'s line."""

    def __init__(self, needle: bytes):
        self.needle, self.full = needle, False

    def __getattr__(self, name):
        return getattr(os, name)

    def write(self, fd, data):
        if self.needle in data and not self.full:
            self.full = True
            return os.write(fd, data[: len(data) // 2])
        if self.full:
            raise OSError(errno.ENOSPC, "No space left on device")
        return os.write(fd, data)


def test_a_full_disk_while_appending_metrics_stops_with_one_line_and_whole_lines(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(run_folder, "os", FullDiskAt(b'"step": 2, "adv/abs_mean"'))  # metrics, not the ledger
    code, err = cli(capsys, "train", "grpo", *[f"--set={o}" for o in SMALL], f"--set=run.output_dir={tmp_path}",
                    "--set=train.steps=3", "--set=log.samples_per_step=0")
    metrics = tmp_path / "grpo" / "metrics.jsonl"
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err  # before: OSError 28
    assert f"{metrics}: cannot append the line of step 2 (No space left on device" in err
    assert [json.loads(line)["step"] for line in metrics.read_text().splitlines()] == [1]  # no half line


def test_a_failed_torch_save_is_one_line_and_leaves_no_temporary(tiny_model, tmp_path, monkeypatch):
    def unexpected_pos(*args, **kwargs):  # what torch's zip writer raises when the disk fills
        raise RuntimeError("[enforce fail at inline_container.cc:603] . unexpected pos 4480 vs 4374")

    monkeypatch.setattr(ckpt.torch, "save", unexpected_pos)
    with pytest.raises(ckpt.CheckpointError, match=r"step_1/state.pt: cannot write it \(\[enforce fail"):
        save_checkpoint(tmp_path, 1, tiny_model, {}, keep=1)
    assert list(tmp_path.iterdir()) == []  # before: RuntimeError and .step_1.tmpPID/ left behind
    monkeypatch.setattr(ckpt.torch, "save", lambda *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(tmp_path, 1, tiny_model, {}, keep=1)
    assert list(tmp_path.iterdir()) == []
