"""The optimiser step, weight sync and checkpoints. Receives an objective; never picks one."""

from rlvr.train.trainer import OptimConfig, Trainer

__all__ = ["OptimConfig", "Trainer"]
