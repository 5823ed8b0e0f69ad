"""The `rlvr` command. Parses arguments and calls the library; no formulas here."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

from rlvr.cli import (audit_command, env_command, eval_command, eval_judge_command, export_command, fit_command,
                      report_command, serve_command, sft_command, spec_command, verify_command)
from rlvr.cli.demo_env import DEMO_ENVS
from rlvr.errors import RlvrError
from rlvr.orchestrate.stop_signals import SIGTERM_EXIT

EPILOG = """\
examples:
  rlvr demo                                  train the shipped tiny model, show before/after
  rlvr demo --env python                     the tool-use demo: a tiny model learns to call python
  rlvr train recipes/grpo.toml               train with a recipe
  rlvr train grpo --set train.lr=3e-5        recipe by name, with an override
  rlvr train --resume runs/grpo              continue a stopped run (kill -9 included)
  rlvr recipes                               list the recipes
  rlvr eval models/tiny-arith --n 16 --k 1,4,16   pass@k, maj@k, disagreements, report.html
  rlvr fit runs/demo --x tokens              fit the reward-vs-compute sigmoid of a run
  rlvr report runs/demo                      one self-contained HTML page of a run
  rlvr sft recipes/sft/spec_demo.toml       supervised fine-tuning (loss on assistant tokens)
  rlvr spec check specs/assistant_v1.toml   rules that conflict or overlap, categories with no rule
  rlvr export runs/demo hf-model             the newest checkpoint as a plain Hugging Face folder
  rlvr eval-judge --judge function:pkg.m:f   benchmark a judge on the shipped labelled set
  rlvr audit math                            run the reward-hack suite against a verifier
  rlvr serve models/tiny-arith --port 8000   an OpenAI-compatible /v1/completions server (for judges)
  rlvr env check env_guess_number            determinism, isolation, contract and cost of an environment

Every setting is `--set section.key=value`; see recipes/grpo.toml for the sections."""


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="rlvr", description="Reinforcement learning on verifiable rewards.",
                                 epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    tr = sub.add_parser("train", help="train a model with a recipe, or resume a run")
    tr.add_argument("recipe", nargs="?", help="a recipe file or the name of one in recipes/")
    tr.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE",
                    help="override one setting (repeatable)")
    tr.add_argument("--resume", type=Path, metavar="RUN_DIR", help="continue the run in this folder")
    tr.add_argument("--accept-data-change", action="store_true",
                    help="with --resume: continue although the data differs from the run's (recorded in data.json)")
    demo = sub.add_parser("demo", help="GRPO on the shipped tiny model: held-out accuracy before and after")
    demo.add_argument("--set", dest="overrides", action="append", default=[], metavar="SECTION.KEY=VALUE")
    demo.add_argument("--env", choices=sorted(DEMO_ENVS), default=None,
                      help="the tool-use demo instead: GRPO over trajectories on models/tiny-tool, held-out "
                           "greedy success before and after (python: recipes/env_python_demo.toml)")
    rec = sub.add_parser("recipes", help="list the recipes with one line each")
    rec.add_argument("action", nargs="?", choices=["show"], help="show one recipe's resolved settings")
    rec.add_argument("name", nargs="?")
    rec.add_argument("--explain", action="store_true", help="with show: what each chosen name means")
    eval_command.add_parser(sub)
    fit_command.add_parser(sub)
    verify_command.add_parser(sub)
    audit_command.add_parser(sub)
    serve_command.add_parser(sub)
    report_command.add_parser(sub)
    eval_judge_command.add_parser(sub)
    export_command.add_parser(sub)
    sft_command.add_parser(sub)
    spec_command.add_parser(sub)
    env_command.add_env_parser(sub)
    return ap


# Commands that validate or read files before (or without) the training stack: their errors and
# answers must not wait for torch (train/demo import it once the config has passed).
LIGHT_COMMANDS = ("train", "demo", "recipes", "fit", "verify", "audit", "report", "eval-judge", "spec")


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command is None:
        parser().print_help()
        return 0
    with _sigterm_interrupts():
        return _dispatch(args)


def _dispatch(args) -> int:
    try:
        from rlvr.cli import commands  # config modules only: train/demo validate before torch loads

        if args.command not in LIGHT_COMMANDS and not (args.command == "eval" and args.samples):
            commands.load_heavy()
        return {"train": commands.train, "demo": commands.demo, "recipes": commands.recipes,
                "eval": eval_command.run_eval, "fit": fit_command.run_fit,
                "verify": verify_command.run_verify, "audit": audit_command.run_audit_command,
                "serve": serve_command.run_serve, "report": report_command.run_report,
                "eval-judge": eval_judge_command.run_eval_judge, "export": export_command.run_export,
                "sft": sft_command.run_sft, "spec": spec_command.run_spec,
                "env": env_command.run_env}[args.command](args)
    except RlvrError as e:
        print(f"rlvr: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as e:  # a run's RunInterrupted names its folder; Ctrl-C before one has none
        print(f"rlvr: {str(e) or 'interrupted'}", file=sys.stderr)
        return getattr(e, "exit_status", 130)
    except BrokenPipeError:  # `rlvr ... | head` closed the pipe: a reader's choice, not an error
        return _quiet_broken_pipe()


class Terminated(KeyboardInterrupt):
    """SIGTERM outside a training loop's own handler (while torch or the model loads, in eval,
    after the last step): no step is cut short, so there is nothing a checkpoint would keep."""

    exit_status = SIGTERM_EXIT

    def __str__(self) -> str:
        return "terminated (SIGTERM); no training step was in progress"


@contextmanager
def _sigterm_interrupts():
    """SIGTERM ends the command as Ctrl-C does, with a line and 143, instead of a silent -15.
    A run's loop installs its own handler (checkpoint, grace period) and restores this one."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _raise_terminated(signum, frame):
    raise Terminated


def _quiet_broken_pipe() -> int:
    """Point stdout at /dev/null so the interpreter's final flush cannot raise again; 141 is
    what a shell reports for a command ended by SIGPIPE."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 141


if __name__ == "__main__":
    sys.exit(main())
