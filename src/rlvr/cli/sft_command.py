"""`rlvr sft RECIPE [--set ...]` and `rlvr sft --resume RUN_DIR`: supervised fine-tuning."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "supervised fine-tuning on chat or prompt/completion rows (loss on the assistant's tokens)"


def add_parser(sub: argparse._SubParsersAction) -> None:
    sft = sub.add_parser("sft", help=HELP, description=HELP + "; the same run folder, checkpoints, resume and "
                         "export as `rlvr train`. See docs/spec-training.md.")
    sft.add_argument("recipe", nargs="?", help="an SFT recipe file, or the name of one in recipes/sft/")
    sft.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
                     help="override one setting (repeatable)")
    sft.add_argument("--resume", type=Path, metavar="RUN_DIR", help="continue the SFT run in this folder")


def run_sft(args: argparse.Namespace) -> int:
    from rlvr.errors import ConfigError
    from rlvr.orchestrate.sft_run import load_sft_config, sft

    if args.resume is not None:
        if args.recipe is not None:
            raise ConfigError("rlvr sft --resume RUN_DIR takes no recipe (the run's config.toml is the recipe)")
        config = load_sft_config(args.resume / "config.toml", args.overrides)
    elif args.recipe is None:
        raise ConfigError("rlvr sft: give a recipe (a file, or a name in recipes/sft/) or --resume RUN_DIR")
    else:
        config = load_sft_config(args.recipe, args.overrides)

    def progress(step: int, metrics: dict) -> None:
        test = f"  test loss {metrics['sft/test_loss']:.4f}" if "sft/test_loss" in metrics else ""
        print(f"step {step}/{config.train.steps}  loss {metrics['sft/loss']:.4f}{test}", flush=True)

    result = sft(config, resume_dir=args.resume, on_step=progress)
    c = result.counts
    print(f"trained {result.steps} steps on {c.examples} examples of {c.rows} rows (skipped without an "
          f"assistant turn: {c.no_assistant}, truncated: {c.truncated}, dropped: "
          f"{c.dropped_overlong + c.dropped_empty}); checkpoints in {result.folder.checkpoints}")
    return 0
