"""The FSDP trainer on 2 CPU processes (gloo) against the one-process trainer."""

from __future__ import annotations

import copy
import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from rlvr.algo import Objective
from rlvr.config import load_config
from rlvr.errors import ConfigError
from rlvr.train import OptimConfig, Trainer
from rlvr.train.distributed import join_process_group
from rlvr.train.fsdp import rank_rows

from .test_trainer import rollout_batch

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "OMP_NUM_THREADS": "1"}


def torchrun(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """2 processes on this machine; --standalone picks a free port for the rendezvous."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2", *args]
    proc = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def test_rank_rows_split_contiguously_with_equal_micro_batch_counts():
    # 7 rows over 2 ranks: rank 0 rows 0-3, rank 1 rows 4-6; mbs 1 → 4 micro-batches each, the
    # last one of rank 1 empty (it then joins the collectives with a zero gradient).
    r0, r1 = rank_rows(7, 0, 2, 1), rank_rows(7, 1, 2, 1)
    assert [t.tolist() for t in r0] == [[0], [1], [2], [3]]
    assert [t.tolist() for t in r1] == [[4], [5], [6], []]
    assert [t.tolist() for t in rank_rows(7, 1, 2, 2)] == [[4, 5], [6]]


def test_fsdp_step_matches_the_one_process_step(tiny_model, tokenizer, tmp_path):
    # 11 rows (uneven 6/5 split), token-mean aggregation (its weights depend on the whole batch),
    # active clipping of ratio and of the gradient norm, two steps: micro-batch 2, then 1 (an
    # empty micro-batch on rank 1), from a warm AdamW state that must be loaded into the shards.
    full = rollout_batch(tiny_model, tokenizer)
    batch = full.rows(torch.arange(11))
    objective = Objective(aggregation="token_mean")
    optim = OptimConfig(lr=1e-4, max_grad_norm=0.05)
    warm = Trainer(copy.deepcopy(tiny_model), objective, optim, micro_batch_size=12)
    warm.step(dataclasses.replace(full, adv=-full.adv))
    setup = {"batch": batch, "objective": objective, "optim": optim, "micro_batch_sizes": [2, 1],
             "warm_optimizer": warm.optimizer_state()}
    torch.save(setup, tmp_path / "setup.pt")
    torchrun(str(REPO / "tests" / "train" / "fsdp_worker.py"), str(tmp_path / "setup.pt"), str(tmp_path), cwd=tmp_path)

    # the FSDP model runs every row's prompt (no prompt sharing under FSDP), so the reference does too
    ref = Trainer(tiny_model, objective, optim, micro_batch_size=2, share_prompts=False)
    ref.load_optimizer_state(setup["warm_optimizer"])
    ref_metrics = []
    for micro_batch_size in setup["micro_batch_sizes"]:
        ref.micro_batch_size = micro_batch_size
        ref_metrics.append(ref.step(batch))
    ranks = [torch.load(tmp_path / f"rank_{r}.pt", weights_only=False) for r in (0, 1)]
    for got in ranks:  # every rank holds the same full weights (what its engine gets)
        for mine, theirs in zip(got["metrics"], ref_metrics):
            assert mine.keys() == theirs.keys()
            for name in ("loss/policy", "train/grad_norm", "policy/clip_low_frac", "policy/clip_high_frac",
                         "policy/approx_kl", "policy/entropy"):
                assert mine[name] == pytest.approx(theirs[name], abs=1e-5), name
        assert theirs["train/grad_norm"] > optim.max_grad_norm  # clipping was active
        ref_weights = ref.model.state_dict()
        assert got["weights"].keys() == ref_weights.keys()
        for name, w in ref_weights.items():
            torch.testing.assert_close(got["weights"][name], w, atol=1e-5, rtol=0, msg=name)
        for name, p in ref.model.named_parameters():  # the clipped gradient of the last step
            torch.testing.assert_close(got["grads"][name], p.grad, atol=1e-6, rtol=1e-4, msg=name)
        ref_opt = ref.optimizer_state()
        assert got["optimizer"]["state"].keys() == ref_opt["state"].keys()
        for i, state in ref_opt["state"].items():
            torch.testing.assert_close(got["optimizer"]["state"][i]["exp_avg"], state["exp_avg"], atol=1e-6, rtol=1e-4)
            assert float(got["optimizer"]["state"][i]["step"]) == float(state["step"]) == 3.0


def test_fsdp_without_torchrun_is_a_config_error(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    config = load_config(REPO / "recipes" / "grpo.toml", ["train.fsdp=true"])
    with pytest.raises(ConfigError, match="torchrun --nproc_per_node"):
        join_process_group(config)
    with pytest.raises(ConfigError, match="orchestrate.mode = 'sync'"):  # refused at load, before torchrun matters
        load_config(REPO / "recipes" / "grpo.toml", ["train.fsdp=true", "orchestrate.mode=async"])
    assert join_process_group(load_config(REPO / "recipes" / "grpo.toml")) is None


SMALL = ["--set", "train.steps=2", "--set", "sampling.prompts_per_step=4", "--set", "sampling.group_size=4",
         "--set", "train.micro_batch_size=3", "--set", "eval.every=2", "--set", "eval.size=8",
         "--set", "log.progress=plain", "--set", "checkpoint.every=1"]
TIMING = ("time/", "throughput/")  # wall-clock, differs between any two runs


@pytest.mark.slow  # about a minute on 2 cores: a one-process run, then torchrun with 2 ranks
def test_torchrun_train_writes_one_run_folder_matching_one_process(tmp_path):
    import json

    from safetensors.torch import load_file

    from rlvr.train.checkpoint import list_checkpoints, load_state

    common = ["train", "grpo", *SMALL, "--set", f"run.output_dir={tmp_path}"]
    one = subprocess.run([sys.executable, "-m", "rlvr.cli.main", *common, "--set", "run.name=one"],
                         cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=300, check=False)
    assert one.returncode == 0, one.stderr[-3000:]
    two = torchrun("-m", "rlvr.cli.main", *common, "--set", "run.name=two", "--set", "train.fsdp=true", cwd=tmp_path)
    assert two.stdout.count("run folder:") == 1  # rank 1 prints nothing
    assert sorted(p.name for p in tmp_path.iterdir()) == ["one", "two"]
    rows = {name: [json.loads(line) for line in (tmp_path / name / "metrics.jsonl").read_text().splitlines()]
            for name in ("one", "two")}
    assert [r["step"] for r in rows["two"]] == [1, 2]
    for a, b in zip(rows["one"], rows["two"]):
        assert a.keys() == b.keys()
        for key, value in a.items():
            if not key.startswith(TIMING) and value is not None:
                assert b[key] == pytest.approx(value, rel=1e-5, abs=1e-5), key
    assert (tmp_path / "one" / "samples.jsonl").read_text() == (tmp_path / "two" / "samples.jsonl").read_text()
    # The checkpoint holds whole weights and the one-process optimizer layout.
    [a_dir, b_dir] = [list_checkpoints(tmp_path / n / "checkpoints")[-1] for n in ("one", "two")]
    a_w, b_w = load_file(a_dir / "model.safetensors"), load_file(b_dir / "model.safetensors")
    assert a_w.keys() == b_w.keys()
    for name in a_w:
        torch.testing.assert_close(b_w[name], a_w[name], atol=1e-5, rtol=0, msg=name)
    a_opt, b_opt = load_state(a_dir)["optimizer"], load_state(b_dir)["optimizer"]
    assert a_opt["state"].keys() == b_opt["state"].keys()
    for i in a_opt["state"]:
        torch.testing.assert_close(b_opt["state"][i]["exp_avg_sq"], a_opt["state"][i]["exp_avg_sq"], atol=1e-9, rtol=1e-4)
