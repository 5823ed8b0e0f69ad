"""`rlvr.eval_model`: `rlvr eval` from Python (docs/python-api.md).

The keywords are `rlvr eval`'s options (`--max-new-tokens` is `max_new_tokens=`), turned back
into its command line and parsed by its own parser, so that defaults, checks and figures are the
command's: the same `results.json` in `out`, the same report. Not called `evaluate`, which is
the package `rlvr.evaluate` (an API name equal to a subpackage's would be replaced on import).
"""

from __future__ import annotations

import argparse
import difflib
from pathlib import Path
from typing import Any

from rlvr.errors import ConfigError


def eval_model(model: str | Path | None = None, *, task: str | None = None, n: int = 16,
               k: int | list[int] | None = None, out: str | Path = "eval-results", **options: Any):
    """Sample `n` completions per prompt of `task` (None: "arithmetic", or with a `recipe=` that
    has [env], its held-out tasks played `n` times as episodes) from the model folder (or
    checkpoint) `model` and grade them as `rlvr eval` does; returns its `EvalOutput` (`.results` is the
    results.json dict: pass@k, maj@k, best-of-n with confidence intervals; `.folder`, `.report`).
    `options`: any other option of `rlvr eval` (limit=, seed=, temperature=, compare=,
    samples=, recipe=, fresh=True, ...); an unknown one is a ConfigError naming it."""
    from rlvr.cli import eval_command

    ks = ",".join(str(v) for v in ([k] if isinstance(k, int) else k)) if k is not None else None
    parser = eval_parser()
    argv = [str(model)] if model is not None else []
    argv += command_line({"task": task, "n": n, "k": ks, "out": out, **options}, parser)
    try:
        args = parser.parse_args(argv)
    except argparse.ArgumentError as e:
        raise ConfigError(f"rlvr.eval_model: {e}") from None
    return eval_command.evaluate_args(args)


def eval_parser() -> argparse.ArgumentParser:
    """The `rlvr eval` subcommand's parser, raising instead of exiting on a bad value."""
    from rlvr.cli import eval_command

    sub = argparse.ArgumentParser(prog="rlvr").add_subparsers()
    eval_command.add_parser(sub)
    parser = sub.choices["eval"]
    parser.exit_on_error = False
    return parser


def command_line(options: dict[str, Any], parser: argparse.ArgumentParser) -> list[str]:
    """{"max_new_tokens": 8, "fresh": True} -> ["--max-new-tokens", "8", "--fresh"]; None and
    False leave an option out (its default)."""
    flags = {a.dest: a for a in parser._actions if a.option_strings and a.dest != "help"}
    argv: list[str] = []
    for name, value in options.items():
        if name not in flags:
            close = difflib.get_close_matches(name, flags, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ConfigError(f"rlvr.eval_model: no option {name!r}{hint}; the options are rlvr eval's: "
                              f"{', '.join(sorted(flags))}")
        action = flags[name]
        if value is None or value is False:
            continue
        if isinstance(action, argparse._StoreTrueAction):
            argv.append(action.option_strings[0])
        else:
            argv += [action.option_strings[0], str(value)]
    return argv
