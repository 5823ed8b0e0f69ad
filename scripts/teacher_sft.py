"""What the scripts that make the shipped environment models share (make_env_model.py,
make_tool_model.py, make_arena_model.py): the command line, padding teacher episodes into a
batch, the supervised loop and the model card.

Each script plays its teacher against the real environment and returns episodes as (ids,
labels) rows: labels are -100 on the prompt and observation tokens, so only the policy's turns
(and their EOS) are trained on. Imported by name: the scripts run as `python scripts/X.py`, so
this folder is on the path.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

import torch

Row = tuple[list[int], list[int]]  # (ids, labels) of one episode


def sft_parser(doc: str, out: str, steps: int, batch: int = 32, lr: float = 3e-3) -> argparse.ArgumentParser:
    """--out, --steps, --batch, --lr, --seed with the script's defaults; its docstring as help."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=out)
    ap.add_argument("--steps", type=int, default=steps)
    ap.add_argument("--batch", type=int, default=batch)
    ap.add_argument("--lr", type=float, default=lr)
    ap.add_argument("--seed", type=int, default=0)
    return ap


def pad_batch(rows: list[Row], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids, labels), each (B, T) with T the longest row: right-padded with `pad` / -100."""
    width = max(len(r) for r, _ in rows)
    ids, lab = torch.full((len(rows), width), pad), torch.full((len(rows), width), -100)
    for i, (r, l) in enumerate(rows):
        ids[i, :len(r)], lab[i, :len(l)] = torch.tensor(r), torch.tensor(l)
    return ids, lab


def fine_tune(model, draw_rows: Callable[[], list[Row]], *, steps: int, lr: float, pad: int,
              decay_tail: float | None = None, log_every: int = 50) -> float:
    """AdamW on `steps` batches from `draw_rows()`; returns the last batch's loss.

    decay_tail: None keeps lr constant; f in (0, 1] holds it, then decays it linearly to 0
    over the last f * steps steps."""
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    sched = None
    if decay_tail is not None:
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min(1.0, (steps - s) / (decay_tail * steps)))
    for step in range(steps):
        ids, labels = pad_batch(draw_rows(), pad)
        loss = model(input_ids=ids, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        if sched is not None:
            sched.step()
        if step % log_every == 0 or step == steps - 1:
            print(f"step {step:4d}  loss {loss.item():.4f}", flush=True)
    return loss.item()


def write_card(out: Path, model, args: argparse.Namespace, start: float, final_loss: float, **fields) -> dict:
    """rlvr_model_card.json in `out`: the run's arguments, `fields`, loss, time, parameters."""
    card = {"sft_steps": args.steps, "batch": args.batch, "lr": args.lr, "seed": args.seed, **fields,
            "final_loss": round(final_loss, 4), "seconds": round(time.time() - start, 1),
            "parameters": sum(p.numel() for p in model.parameters())}
    (out / "rlvr_model_card.json").write_text(json.dumps(card, indent=2) + "\n")
    print(json.dumps(card))
    return card
