"""LoRA end to end on the tiny model: `rlvr train grpo --set model.lora_rank=8` through the
Python API, adapter-only syncs (sync and async loops), resume, and `rlvr eval` of a checkpoint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlvr.cli.main import main
from rlvr.config import load_config
from rlvr.orchestrate import resume, train

pytest.importorskip("peft", reason="peft is not installed (optional extra `lora`)")

REPO = Path(__file__).resolve().parents[2]
LORA = ["model.lora_rank=8", "train.lr=1e-3", "sampling.prompts_per_step=2", "sampling.group_size=4",
        "eval.size=0", "log.progress=none", "algo.mismatch=token_tis"]
KEYS = ["reward/mean", "loss/policy", "train/grad_norm", "policy/kl_ref", "mismatch/kl"]


def run(tmp_path, name, *extra):
    config = load_config(REPO / "recipes" / "grpo.toml", [f"run.output_dir={tmp_path}", f"run.name={name}", *LORA, *extra])
    return train(config)


def test_lora_grpo_trains_syncs_adapters_and_resumes(tmp_path):
    whole = run(tmp_path, "whole", "train.steps=3")
    rows = whole.folder.read_metrics()
    assert [r["step"] for r in rows] == [1, 2, 3]
    # Step 1 trains from the base (B = 0), so the policy is its own reference; then it moves.
    assert rows[0]["policy/kl_ref"] == 0.0 and rows[2]["policy/kl_ref"] > 0
    for r in rows:  # the engine's adapters, synced after each step, match the trainer's
        assert r["mismatch/kl"] < 1e-6
    step_3 = whole.folder.checkpoints / "step_3"
    assert (step_3 / "adapter_model.safetensors").is_file() and not (step_3 / "model.safetensors").exists()
    # Stop after step 2, resume from the run folder: step 3 is the uninterrupted run's.
    part = run(tmp_path, "part", "train.steps=2")
    resumed = resume(part.folder.path, ["train.steps=3"]).folder.read_metrics()
    assert [r["step"] for r in resumed] == [1, 2, 3]
    for a, b in zip(rows, resumed):
        for key in KEYS:
            assert a[key] == pytest.approx(b[key], rel=1e-5, abs=1e-7), (a["step"], key)


def test_async_lora_with_staleness_0_equals_sync(tmp_path):
    sync = run(tmp_path, "sync", "train.steps=2").folder.read_metrics()
    async0 = run(tmp_path, "async0", "train.steps=2", "orchestrate.mode=async").folder.read_metrics()
    # Same samples and rewards; the sync engine samples with the trainer's own tensors and the
    # async one with a copy of them, whose (generic-path) log-probs can round 1 ulp apart
    # (4.8e-7 seen in the importance weights), so the rest agrees to rounding: loss/policy
    # (~1e-4, a sum of cancelling terms) to 1.3e-7 at step 2.
    assert [m["reward/mean"] for m in sync] == [m["reward/mean"] for m in async0]
    for a, b in zip(sync, async0):
        for key in KEYS:
            assert a[key] == pytest.approx(b[key], rel=1e-5, abs=1e-6), (a["step"], key)


def test_eval_of_a_lora_checkpoint(tmp_path, capsys):
    checkpoint = run(tmp_path, "e", "train.steps=1").folder.checkpoints / "step_1"
    out = tmp_path / "eval"
    code = main(["eval", str(checkpoint), "--tokenizer", str(REPO / "models" / "tiny-arith"), "--n", "2",
                 "--limit", "4", "--max-new-tokens", "8", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    model = json.loads((out / "results.json").read_text())["model"]
    assert model["prompts"] == 4 and model["samples"] == 8


@pytest.fixture(scope="module")
def ray_cluster():
    """The running cluster (.ci/run starts one), else a local one for this module."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (optional extra `ray`)")
    try:
        ray.init(address="auto", log_to_driver=False)
    except ConnectionError:
        ray.init(num_cpus=2, log_to_driver=False, include_dashboard=False)
    yield ray
    ray.shutdown()


@pytest.mark.slow  # ~35 s on 2 shared cores, most of it starting Ray actors
def test_ray_workers_take_adapter_only_weights(ray_cluster, tmp_path):
    from rlvr.orchestrate.run import new_run_folder, open_loop

    config = load_config(REPO / "recipes" / "grpo.toml", [f"run.output_dir={tmp_path}", *LORA, "train.steps=2",
                                                          "orchestrate.backend=ray", "orchestrate.rollout_workers=2"])
    loop = open_loop(config, new_run_folder(config), resume=False)
    rows = [loop.train_step() for _ in range(2)]
    sent = ray_cluster.get(loop.parts.engine.weights_ref)
    assert len(sent) == 2 * 4 * 2 and all(".lora_" in k for k in sent)  # 2 layers x q,k,v,o x A,B
    for r in rows:  # both workers sample from the trainer's adapters
        assert r["mismatch/kl"] < 1e-6


def test_lora_with_a_critic_trains_the_critic_adapters_and_head_only(tmp_path):
    from rlvr.orchestrate.components import build
    from rlvr.orchestrate.plan import plan_run

    config = load_config(REPO / "recipes" / "ppo.toml", [f"run.output_dir={tmp_path}", *LORA, "train.steps=2"])
    critic = build(plan_run(config), REPO).critic.model
    trainable = {n for n, p in critic.named_parameters() if p.requires_grad}
    assert trainable and all("lora_" in n or n.startswith("head.") for n in trainable)
    assert {"head.weight", "head.bias"} <= trainable
    rows = train(config).folder.read_metrics()
    assert [r["step"] for r in rows] == [1, 2] and all(r["critic/value_loss"] >= 0 for r in rows)
