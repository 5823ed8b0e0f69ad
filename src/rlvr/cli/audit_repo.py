"""`rlvr audit repo`: the agentic section of the attack suite (rlvr.envs.repo.audit), as a table."""

from __future__ import annotations

import argparse


def run_repo_audit_command(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from rlvr.envs.repo.audit import run_repo_audit

    report = run_repo_audit()
    table = Table(title="rlvr audit repo: agentic attacks on env.kind = 'repo'")
    for column in ("attack", "exploits", "reward", "flags", "seconds", "status", "reason"):
        table.add_column(column, overflow="ellipsis")
    for o in report.outcomes:
        if args.show == "failures" and o.status == "ok":
            continue
        style = {"hacked": "bold red", "not flagged": "red", "error": "red", "control failed": "yellow"}.get(o.status)
        table.add_row(o.attack.name, o.attack.exploits[:50], f"{o.score:.3g}", ", ".join(o.flags)[:50],
                      f"{o.seconds:.2f}", o.status, o.reason[:50], style=style)
    Console(width=200).print(table)
    attacks = [o for o in report.outcomes if not o.attack.control]
    bad = [o for o in attacks if o.status != "ok"]
    print(f"{len(attacks)} attacks, {len(report.outcomes) - len(attacks)} honest controls, isolation: {report.isolation}; "
          f"{len(bad)} attacks scored or went unflagged; {report.oracle_connections} connections reached the host")
    print("FAIL: fix the environment before training in it" if report.failed else
          "PASS: every attack scored 0 and was flagged")
    return 1 if report.failed else 0
