"""`rlvr serve MODEL` (and `python -m rlvr.serve MODEL`): serve a model folder over an
OpenAI-compatible completions API, with the engine, tokenizer and seed its recipe's plan
chooses (orchestrate/model_parts.py, as `rlvr eval` and `rlvr train` build them).

The flags and the HTTP body are rlvr.serve.command's; the composition is here, above
orchestrate, where the serve package (below it) cannot reach."""

from __future__ import annotations

import argparse
import sys

from rlvr.serve.command import HELP, add_arguments
from rlvr.serve.command import run_serve as serve_with

__all__ = ["add_parser", "main", "run_serve"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    add_arguments(sub.add_parser("serve", help=HELP, description=HELP + ". See docs/rewards-judges.md."))


def run_serve(args: argparse.Namespace) -> int:
    def load_service(limits):
        from rlvr.cli.eval_defaults import REPO, command_plan
        from rlvr.orchestrate.model_parts import load_model_parts
        from rlvr.serve.model_service import ModelService

        # the completions API takes raw text: the server scores with its own rule, not the recipe's reward
        parts = load_model_parts(command_plan(args), args.model, REPO, with_reward=False)
        name = args.name or args.model.resolve().name
        return ModelService(parts.engine, parts.model, parts.tokenizer, name,
                            max_request_tokens=limits.max_request_tokens)

    return serve_with(args, load_service)


def main(argv: list[str] | None = None) -> int:
    """Entry point of `python -m rlvr.serve`: errors as one `rlvr: error:` line, like `rlvr`."""
    from rlvr.errors import RlvrError

    ap = argparse.ArgumentParser(prog="python -m rlvr.serve", description=HELP + ". See docs/rewards-judges.md.")
    add_arguments(ap)
    try:
        return run_serve(ap.parse_args(sys.argv[1:] if argv is None else argv))
    except RlvrError as e:
        print(f"rlvr: error: {e}", file=sys.stderr)
        return 2
