"""The process group of a `torchrun` launch: which rank this process is, and the few
collectives the loop needs outside FSDP itself (summing metrics).

torchrun sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT for each process; the
group is made from them. Collectives on CPU tensors go through gloo; where CUDA is present the
group also gets nccl for CUDA tensors and each rank is pinned to GPU LOCAL_RANK, where
`model.device = "cuda"` puts its model. Only the gloo (CPU) path has been run and tested.
"""

from __future__ import annotations

import atexit
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

from rlvr.config import Config
from rlvr.errors import ConfigError

LAUNCH = "torchrun --nproc_per_node N -m rlvr.cli.main train RECIPE --set train.fsdp=true"


@dataclass(frozen=True)
class Ranks:
    rank: int
    world_size: int

    @property
    def is_main(self) -> bool:
        """Rank 0 alone writes the run folder and prints."""
        return self.rank == 0


def join_process_group(config: Config) -> Ranks | None:
    """The ranks of a `train.fsdp` run, the group joined; None without `train.fsdp`.

    Raises ConfigError when `train.fsdp` is set but the process was not started by torchrun
    with two or more processes. (What the rest of the config must be for a sharded run is
    checked at load: config/coherence_run.py `fsdp_incoherences`.)"""
    if not config.train.fsdp:
        return None
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if world_size < 2:
        raise ConfigError(f"train.fsdp = true needs 2 or more processes (WORLD_SIZE is {world_size}); "
                          f"launch with `{LAUNCH}`")
    backend = "gloo"
    if torch.cuda.is_available():
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
        backend = "cpu:gloo,cuda:nccl"
    if not dist.is_initialized():
        dist.init_process_group(backend)
        atexit.register(_leave)
    return Ranks(dist.get_rank(), dist.get_world_size())


def _leave() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()


def reduce_metrics(sums: dict[str, float], *, max_prefix: str = "time/") -> dict[str, float]:
    """Sum each metric over the ranks (they are partial sums of full-batch quantities); the
    timings take the slowest rank's value instead, since the step waits for it.

    Every rank must call this with the same keys in the same order."""
    names = sorted(sums)
    values = torch.tensor([sums[n] for n in names], dtype=torch.float64)
    timed = torch.tensor([n.startswith(max_prefix) for n in names])
    total, slowest = values.where(~timed, 0.0), values.where(timed, 0.0)
    dist.all_reduce(total, op=dist.ReduceOp.SUM)
    dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
    return {n: float(v) for n, v in zip(names, total.where(~timed, slowest))}
