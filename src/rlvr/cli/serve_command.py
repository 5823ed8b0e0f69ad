"""`rlvr serve MODEL`: serve a model folder over an OpenAI-compatible completions API."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rlvr.errors import ConfigError

HELP = "serve a model folder as an OpenAI-compatible /v1/completions server (for the HTTP judge)"


def add_parser(sub: argparse._SubParsersAction) -> None:
    sv = sub.add_parser("serve", help=HELP, description=HELP + ". See docs/rewards-judges.md.")
    sv.add_argument("model", type=Path, help="a Hugging Face causal LM folder")
    sv.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    sv.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    sv.add_argument("--name", help="the model name clients send (default: the folder's name)")
    sv.add_argument("--seed", type=int, default=0, help="sampling seed for requests without one")
    sv.add_argument("--verbose", action="store_true", help="log every request to stderr")


def run_serve(args: argparse.Namespace) -> int:
    from rlvr.engines.loading import load_model, load_tokenizer
    from rlvr.serve import CompletionServer, ModelService

    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port must be in [0, 65535], got {args.port}")
    name = args.name or args.model.resolve().name
    service = ModelService(load_model(args.model), load_tokenizer(args.model), name, seed=args.seed)
    try:
        server = CompletionServer((args.host, args.port), service, verbose=args.verbose)
    except OSError as e:
        raise ConfigError(f"cannot listen on {args.host}:{args.port} ({e.strerror or e})") from None
    host, port = server.server_address[:2]
    print(f"serving {name!r} on http://{host}:{port}/v1 (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of `python -m rlvr.serve`: errors as one `rlvr: error:` line, like `rlvr`."""
    from rlvr.errors import RlvrError

    ap = argparse.ArgumentParser(prog="python -m rlvr.serve")
    add_parser(ap.add_subparsers(dest="command", required=True))
    try:
        return run_serve(ap.parse_args(["serve", *(sys.argv[1:] if argv is None else argv)]))
    except RlvrError as e:
        print(f"rlvr: error: {e}", file=sys.stderr)
        return 2
