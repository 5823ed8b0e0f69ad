"""`rlvr serve MODEL`: serve a model folder over an OpenAI-compatible completions API.

The flags and the body are rlvr.serve.command's (also behind `python -m rlvr.serve`)."""

from __future__ import annotations

import argparse

from rlvr.serve.command import HELP, add_arguments, run_serve

__all__ = ["add_parser", "run_serve"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    add_arguments(sub.add_parser("serve", help=HELP, description=HELP + ". See docs/rewards-judges.md."))
