"""`rlvr audit NAME`: run the reward-hack suite against a verifier or a reward function.

Exit status: 0 when no attack collected reward; 1 when some attack did (or a check timed out,
raised, or the network attack reached the host); 2 on a usage error (unknown NAME, ...).
"""

from __future__ import annotations

import argparse

from rlvr import names
from rlvr.errors import ConfigError

HELP = "run the reward-hack suite against a verifier or a reward function; fails if any attack is paid"
KIND_CHOICES = names.PROGRAM_VERIFIER.names


def add_parser(sub: argparse._SubParsersAction) -> None:
    au = sub.add_parser("audit", help=HELP, description=HELP + ". See docs/reward-hacks.md.")
    au.add_argument("name", help=f"a built-in verifier ({', '.join(KIND_CHOICES)}), 'repo' (the agentic "
                                 "attacks on env.kind = 'repo', docs/env-repo.md) or a reward function as "
                                 "package.module:function")
    au.add_argument("--kind", choices=KIND_CHOICES,
                    help="with a function: which attacks apply (default: every text attack)")
    au.add_argument("--option", dest="options", action="append", default=[], metavar="KEY=VALUE",
                    help="a [reward] key, as in `rlvr verify` and a recipe (repeatable), e.g. "
                         "--option template=think_answer; a function takes only template and format_strict, "
                         "which choose the attacks")
    au.add_argument("--budget", type=float, default=10.0, metavar="SECONDS",
                    help="wall-clock budget of one text check (default 10)")
    au.add_argument("--show", choices=("all", "failures"), default="all", help="rows in the table")


def target_of(name: str):
    """A built-in verifier name as is; "package.module:function" imported."""
    if ":" not in name:
        return name
    from rlvr.orchestrate.scoring import import_function

    try:
        return import_function(name)
    except ConfigError as e:
        raise ConfigError(f"rlvr audit {name!r}: {str(e).split(': ', 1)[-1]}") from None


def print_report(report, show: str) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"rlvr audit {report.target}: {report.kind or 'every text'} attack suite")
    for column, justify in (("attack", "left"), ("exploits", "left"), ("expected", "right"),
                            ("reward", "right"), ("seconds", "right"), ("status", "left"), ("reason", "left")):
        table.add_column(column, justify=justify, overflow="ellipsis")
    for o in report.outcomes:
        if show == "failures" and o.status == "ok":
            continue
        style = {"hacked": "bold red", "timeout": "red", "error": "red", "control failed": "yellow"}.get(o.status)
        table.add_row(o.attack.label, o.attack.exploits[:60], f"{o.attack.expected:.3g}", f"{o.score:.3g}",
                      "batch" if o.seconds is None else f"{o.seconds:.3f}", o.status, o.reason[:60], style=style)
    Console(width=200).print(table)


def print_summary(report) -> None:
    attacks = [o for o in report.outcomes if not o.attack.control]
    controls = [o for o in report.outcomes if o.attack.control]
    counts = {s: len(report.with_status(s)) for s in ("hacked", "timeout", "error", "control failed")}
    print(f"{len(attacks)} attacks, {len(controls)} honest controls: {counts['hacked']} attacks collected reward, "
          f"{counts['timeout']} timed out, {counts['error']} raised; "
          f"{len(controls) - counts['control failed']}/{len(controls)} controls scored 1")
    if report.oracle_connections:
        print(f"the network attack reached the host ({report.oracle_connections} connections)")
    if counts["control failed"]:
        print("warning: honest controls scored below 1: the verifier rejects honest answers of that kind, "
              "or --kind does not match it")
    print("FAIL: fix the verifier before training against it" if report.failed else
          "PASS: no attack collected reward")


def run_audit_command(args: argparse.Namespace) -> int:
    from rlvr.cli.verify_command import parse_options
    from rlvr.rewards.audit import run_audit

    if args.name == "repo":
        from rlvr.cli.audit_repo import run_repo_audit_command

        return run_repo_audit_command(args)
    if not args.budget > 0:
        raise ConfigError(f"--budget must be positive, got {args.budget}")
    report = run_audit(target_of(args.name), args.kind, parse_options(args.options), args.budget)
    print_report(report, args.show)
    print_summary(report)
    return 1 if report.failed else 0
