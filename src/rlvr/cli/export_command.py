"""`rlvr export CHECKPOINT OUT_DIR`: a checkpoint as a plain Hugging Face model folder."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "write a checkpoint (or a run's newest) as a plain Hugging Face model folder, LoRA merged"


def add_parser(sub: argparse._SubParsersAction) -> None:
    ex = sub.add_parser("export", help=HELP, description=HELP + ", with the run's tokenizer and chat "
                        "template; transformers and vLLM load it without rlvr. See docs/python-api.md.")
    ex.add_argument("checkpoint", type=Path, metavar="CHECKPOINT",
                    help="runs/NAME/checkpoints/step_N, or a run folder (its newest intact checkpoint)")
    ex.add_argument("out", type=Path, metavar="OUT_DIR", help="a new (or empty) folder")
    ex.add_argument("--tokenizer", type=Path, metavar="DIR",
                    help="the tokenizer's folder (default: model.path of the run's config.toml)")


def run_export(args: argparse.Namespace) -> int:
    from rlvr.orchestrate.export import export_checkpoint

    out = export_checkpoint(args.checkpoint, args.out, args.tokenizer)
    print(f"wrote {out} (load it with transformers.AutoModelForCausalLM.from_pretrained)")
    return 0
