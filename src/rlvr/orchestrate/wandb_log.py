"""Optional Weights & Biases logging (`log.wandb = true`, extra `rlvr[wandb]`): each step's
metrics line under the names of docs/metrics.md, the run's config as the W&B config.

The W&B files go to RUN_DIR/wandb. `log.wandb_mode = "offline"` (the default) writes them
there and sends nothing (`wandb sync RUN_DIR/wandb/offline-run-*` uploads them later);
"online" streams to the W&B server. The W&B run id is the run folder's (kept in
RUN_DIR/wandb_id), so a resumed rlvr run continues the same W&B run.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from rlvr.config import Config
from rlvr.errors import ConfigError


def wandb_module():
    try:
        import wandb
    except ImportError:
        raise ConfigError("log.wandb = true needs the wandb package (pip install 'rlvr[wandb]')") from None
    return wandb


def run_id(folder: Path) -> str:
    """The run folder's W&B id, made on first use."""
    path = folder / "wandb_id"
    if not path.is_file():
        path.write_text(secrets.token_hex(4), encoding="utf-8")
    return path.read_text(encoding="utf-8").strip()


class WandbLog:
    """Called as `on_step(step, metrics)` after each step; `close` finishes the W&B run."""

    def __init__(self, config: Config, folder: Path):
        wandb, log = wandb_module(), config.log
        (folder / "wandb").mkdir(parents=True, exist_ok=True)
        self.run = wandb.init(project=log.wandb_project, name=config.run.name, id=run_id(folder), resume="allow",
                              dir=str(folder), mode=log.wandb_mode, config=config.model_dump(mode="json"))

    def __call__(self, step: int, metrics: dict[str, float]) -> None:
        self.run.log({k: v for k, v in metrics.items() if isinstance(v, (int, float))}, step=step)

    def close(self) -> None:
        self.run.finish()
