"""fp32 master weights under model.dtype = "bfloat16": small updates add up instead of rounding
away, gradients accumulate in fp32, AdamW's state is fp32, the engine and the checkpoint's
safetensors get the bf16 weights, and a resume continues from the exact fp32 masters."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch
from torch import nn

from rlvr.algo import Objective, outcome_advantages
from rlvr.config import load_config
from rlvr.engines import HFEngine, SamplingParams
from rlvr.engines.loading import load_model
from rlvr.orchestrate import resume, train
from rlvr.train import OptimConfig, Trainer
from rlvr.train.batching import collate
from rlvr.train.checkpoint import read_state
from rlvr.train.master_weights import MasterWeights

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "models" / "tiny-arith"


def rollout_batch(model, tokenizer):
    """Twelve sampled completions of three prompts with GRPO advantages of a made-up reward."""
    engine = HFEngine(copy.deepcopy(model), tokenizer, seed=0)
    groups = engine.generate(["12+34=", "5+77=", "90+9="], 4, SamplingParams(max_new_tokens=5))
    group_ids = torch.arange(3).repeat_interleave(4)
    rewards = torch.tensor([float(i % 3 == 0) for i in range(12)])
    adv = outcome_advantages(rewards, group_ids, baseline="group_mean", scale="group_std")
    return collate([r for g in groups for r in g], adv, group_ids, tokenizer.pad_token_id)


class OneWeight(nn.Module):
    """loss = w * scale: the gradient is `scale` exactly, in any dtype."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(1, dtype=torch.bfloat16))

    def loss(self, scale: float = 1.0) -> torch.Tensor:
        return (self.w * scale).sum()


def adam_steps(module: OneWeight, master: bool, steps: int, lr: float = 1e-3) -> list[float]:
    """The bf16 weight after each of `steps` AdamW steps (the trainer's order: zero, backward,
    step, refresh)."""
    keeper = MasterWeights(module) if master else None
    opt = torch.optim.AdamW(keeper.params if keeper else [module.w], lr=lr, weight_decay=0.0)
    seen = []
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        module.loss().backward()
        opt.step()
        if keeper:
            keeper.refresh_model()
        seen.append(float(module.w.detach()))
    return seen


def test_an_update_below_bf16_resolution_is_lost_without_masters_and_kept_with_them():
    # lr * g/|g| = 1e-3 per step; below 1.0 bf16's step is 2^-8 = 0.0039, so 1 - 1e-3 rounds to 1.
    assert adam_steps(OneWeight(), master=False, steps=10) == [1.0] * 10
    module = OneWeight()
    seen = adam_steps(module, master=True, steps=10)
    # Step 1: the master is 0.999, still 1.0 in bf16; step 2: 0.998 < 1 - 2^-9 (the midpoint),
    # so the weight crosses one bf16 step down to 1 - 2^-8.
    assert seen[0] == 1.0 and seen[1] == 1 - 2 ** -8
    # Ten steps: ~1 - 10e-3 in fp32; the bf16 weight is its rounding.
    reference = nn.Parameter(torch.ones(1))
    opt = torch.optim.AdamW([reference], lr=1e-3, weight_decay=0.0)
    for _ in range(10):
        opt.zero_grad()
        reference.sum().backward()
        opt.step()
    assert seen[-1] == float(reference.detach().bfloat16()) and abs(float(reference) - 0.99) < 1e-6


def test_gradients_accumulate_in_fp32_over_micro_batches():
    module = OneWeight()
    keeper = MasterWeights(module)
    module.loss(1.0).backward()
    module.loss(2 ** -9).backward()  # in bf16, 1 + 2^-9 rounds back to 1
    master = keeper.params[0]
    assert module.w.grad is None and master.grad.dtype == torch.float32
    assert float(master.grad) == 1 + 2 ** -9
    plain = OneWeight()
    plain.loss(1.0).backward()
    plain.loss(2 ** -9).backward()
    assert float(plain.w.grad) == 1.0  # what bf16 accumulation would have kept


def test_a_float32_model_gets_no_masters():
    module = OneWeight().float()
    keeper = MasterWeights(module)
    assert not keeper.active and keeper.params[0] is module.w and not keeper.hooks


@pytest.mark.parametrize("master", [True, False])
def test_trainer_state_is_fp32_and_the_weights_are_its_rounding(tokenizer, master):
    model = load_model(TINY, "bfloat16", fp32_head=True)
    trainer = Trainer(model, Objective(), OptimConfig(lr=1e-4, master_weights=master), micro_batch_size=4)
    trainer.step(rollout_batch(model, tokenizer))
    state = trainer.optimizer_state()
    moments = [s["exp_avg"] for s in trainer.optimizer.state.values()]
    assert {m.dtype for m in moments} == {torch.float32 if master else torch.bfloat16}
    assert ("master_weights" in state) == master
    if master:
        assert all(p.grad is None for p in model.parameters())  # moved into the fp32 masters
        named = dict(model.named_parameters())
        for name, value in state["master_weights"].items():
            assert value.dtype == torch.float32 and torch.equal(named[name], value.bfloat16())
        # The engine's weights are the model's bf16 ones.
        assert all(w.dtype == torch.bfloat16 for w in trainer.engine_weights().values())


def test_checkpoint_masters_restore_exactly(tokenizer):
    model = load_model(TINY, "bfloat16", fp32_head=True)
    trainer = Trainer(model, Objective(), OptimConfig(lr=1e-4), micro_batch_size=4)
    trainer.step(rollout_batch(model, tokenizer))
    saved = trainer.optimizer_state()
    fresh = Trainer(load_model(TINY, "bfloat16", fp32_head=True), Objective(), OptimConfig(lr=1e-4), micro_batch_size=4)
    fresh.load_optimizer_state(saved)
    for name, value in fresh.master.state_dict().items():
        assert torch.equal(value, saved["master_weights"][name]), name
    with pytest.raises(Exception, match="master weights do not match"):
        fresh.load_optimizer_state({**saved, "master_weights": {"nope": torch.zeros(1)}})


ARGS = ["model.dtype=bfloat16", "train.lr=1e-4", "sampling.prompts_per_step=2", "sampling.group_size=4",
        "eval.size=0", "log.progress=none"]


def run(tmp_path, name, *extra):
    config = load_config(REPO / "recipes" / "grpo.toml", [f"run.output_dir={tmp_path}", f"run.name={name}", *ARGS, *extra])
    return train(config)


@pytest.mark.parametrize("lora", [False, True], ids=["full", "lora"])
def test_a_resumed_bf16_run_equals_the_uninterrupted_one(tmp_path, lora):
    extra = ("model.lora_rank=4", "train.lr=1e-3") if lora else ()
    if lora:
        pytest.importorskip("peft")
    whole = run(tmp_path, "whole", "train.steps=3", *extra)
    part = run(tmp_path, "part", "train.steps=2", *extra)
    resumed = resume(part.folder.path, ["train.steps=3"])
    a, b = whole.folder.read_metrics(), resumed.folder.read_metrics()
    keys = ("reward/mean", "loss/policy", "train/grad_norm")
    assert [[r[k] for k in keys] for r in a] == [[r[k] for k in keys] for r in b]
    s_whole = read_state(whole.folder.checkpoints / "step_3")["optimizer"]
    s_resumed = read_state(resumed.folder.checkpoints / "step_3")["optimizer"]
    if lora:  # peft keeps the adapters fp32 on a bf16 base: stepped as they are, no masters
        assert "master_weights" not in s_whole
        return
    assert s_whole["master_weights"].keys() == s_resumed["master_weights"].keys()
    for name, value in s_whole["master_weights"].items():
        assert torch.equal(value, s_resumed["master_weights"][name]), name


@pytest.mark.slow  # ~1 min: three processes
def test_a_bf16_run_killed_mid_run_resumes_to_the_uninterrupted_masters(tmp_path):
    """kill -9 once step_2's checkpoint is on disk (the process is then generating or training
    step 3), resume: the final fp32 masters and bf16 weights are the uninterrupted run's."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from safetensors.torch import load_file

    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "OMP_NUM_THREADS": "1"}
    sets = [*ARGS, "train.steps=4", "checkpoint.every=1", f"run.output_dir={tmp_path}"]

    def start(*args):
        return subprocess.Popen([sys.executable, "-m", "rlvr.cli.main", *args], cwd=tmp_path, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def launch(name):
        return start("train", "grpo", *[f"--set={o}" for o in (*sets, f"run.name={name}")])

    assert launch("whole").wait(timeout=300) == 0
    victim, deadline = launch("killed"), time.time() + 300
    while not (tmp_path / "killed" / "checkpoints" / "step_2").is_dir() and victim.poll() is None:
        assert time.time() < deadline
        time.sleep(0.005)
    assert victim.poll() is None, "the run ended before it could be killed"
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    resumed = start("train", "--resume", str(tmp_path / "killed"))
    assert resumed.wait(timeout=300) == 0, resumed.stderr.read()
    a, b = (tmp_path / n / "checkpoints" / "step_4" for n in ("whole", "killed"))
    masters_a, masters_b = (read_state(p)["optimizer"]["master_weights"] for p in (a, b))
    assert masters_a.keys() == masters_b.keys() and masters_a
    assert all(torch.equal(masters_a[k], masters_b[k]) for k in masters_a)
    weights_a, weights_b = load_file(a / "model.safetensors"), load_file(b / "model.safetensors")
    assert all(weights_a[k].dtype == torch.bfloat16 and torch.equal(weights_a[k], weights_b[k]) for k in weights_a)
