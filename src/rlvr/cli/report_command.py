"""`rlvr report RUN_DIR`: one self-contained HTML page of a training run."""

from __future__ import annotations

import argparse
from pathlib import Path

HELP = "write RUN_DIR/report.html: metric curves, the compute fit, monitor warnings, a samples browser"


def add_parser(sub: argparse._SubParsersAction) -> None:
    rep = sub.add_parser("report", help=HELP, description=HELP + ". See docs/evaluation.md.")
    rep.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    rep.add_argument("--out", type=Path, help="output file (default RUN_DIR/report.html)")


def run_report(args: argparse.Namespace) -> int:
    from rlvr.evaluate.run_report import write_run_report

    print(f"wrote {write_run_report(args.run_dir, args.out)}")
    return 0
