"""Run under `torchrun --nproc_per_node 2` by test_fsdp.py: load the AdamW state and the batch
saved at argv[1], take one FSDP trainer step per micro-batch size listed there, and save what
each rank computed to argv[2]/rank_R.pt."""

from __future__ import annotations

import sys
from pathlib import Path

import torch
import torch.distributed as dist

from rlvr.engines.loading import load_model
from rlvr.train.fsdp import FSDPTrainer

TINY = Path(__file__).resolve().parents[2] / "models" / "tiny-arith"


def main(batch_path: str, out_dir: str) -> None:
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    setup = torch.load(batch_path, weights_only=False)
    trainer = FSDPTrainer(load_model(TINY), setup["objective"], setup["optim"], micro_batch_size=2)
    trainer.load_optimizer_state(setup["warm_optimizer"])
    metrics = []
    for micro_batch_size in setup["micro_batch_sizes"]:
        trainer.micro_batch_size = micro_batch_size
        metrics.append(trainer.step(setup["batch"]))
    grads = {n: p.grad.full_tensor() for n, p in trainer.model.named_parameters()}
    out = {"metrics": metrics, "weights": trainer.full_state_dict(), "grads": grads,
           "optimizer": trainer.optimizer_state()}
    torch.save(out, Path(out_dir) / f"rank_{dist.get_rank()}.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
