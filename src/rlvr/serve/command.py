"""The serve command's flags and its HTTP body, shared by `rlvr serve` and `python -m
rlvr.serve` (both: rlvr/cli/serve_command.py, which builds the model's engine from its recipe's
plan, as training does). Importing this module loads neither torch nor starlette: the CLI's
parser reads it for `rlvr --help`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rlvr.serve.limits import ServeLimits
    from rlvr.serve.model_service import ModelService

HELP = "serve a model folder as an OpenAI-compatible /v1/completions server (for the HTTP judge)"
# flag -> (ServeLimits field, type, help); the defaults are ServeLimits'.
LIMIT_FLAGS = {
    "--max-body-bytes": ("max_body_bytes", int, "larger request bodies get a 413"),
    "--max-request-tokens": ("max_request_tokens", int, "n x (prompt tokens + max_tokens) over a request; more is a 400"),
    "--queue-size": ("queue_size", int, "requests waiting for the model; one more gets a 503"),
    "--max-batch-rows": ("max_batch_rows", int, "rows (prompt x n) in one engine call"),
    "--batch-wait-s": ("batch_wait_s", float, "wait this long for more requests to batch"),
    "--request-timeout-s": ("request_timeout_s", float, "from arrival to answer; later is a 504"),
    "--read-timeout-s": ("read_timeout_s", float, "for a request to arrive whole; later is a 408"),
    "--max-connections": ("max_connections", int, "open connections in all; one more gets a 503"),
    "--max-connections-per-client": ("max_connections_per_client", int,
                                     "open connections from one address; one more gets a 503"),
}


def add_arguments(sv: argparse.ArgumentParser) -> None:
    from rlvr.serve.limits import ServeLimits

    sv.add_argument("model", type=Path, help="a Hugging Face causal LM folder")
    sv.add_argument("--recipe", metavar="NAME_OR_FILE", help="the recipe whose model.engine, chat template and "
                    "seed the server uses (default: the run's config.toml for a checkpoint in a run folder, "
                    "else the demo recipe)")
    sv.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    sv.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    sv.add_argument("--name", help="the model name clients send (default: the folder's name)")
    sv.add_argument("--seed", type=int, default=0, help="sampling seed for requests without one")
    sv.add_argument("--verbose", action="store_true", help="log every request to stderr")
    defaults = ServeLimits()
    for flag, (field, kind, text) in LIMIT_FLAGS.items():
        default = getattr(defaults, field)
        sv.add_argument(flag, type=kind, default=default, dest=field, help=f"{text} (default {default})")


def run_serve(args: argparse.Namespace, load_service: "Callable[[ServeLimits], ModelService]") -> int:
    """Listen on --host/--port (before loading: a taken port fails in a second), build the
    service (`load_service`: the caller's composition of engine and model), serve until Ctrl-C."""
    from rlvr.serve.app import bind, build_app, serve
    from rlvr.serve.limits import ServeLimits, allow_open_files

    limits = ServeLimits(**{field: getattr(args, field) for field, _, _ in LIMIT_FLAGS.values()})
    allow_open_files(limits)
    sock = bind(args.host, args.port)
    try:
        service = load_service(limits)
        host, port = sock.getsockname()[:2]
        print(f"serving {service.name!r} on http://{host}:{port}/v1 (Ctrl-C stops)", flush=True)
        serve(build_app(service, limits), sock, limits, verbose=args.verbose)
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        sock.close()
    return 0
