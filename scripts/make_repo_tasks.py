"""Generate the shipped repository tasks (env.kind = "repo"; docs/env-repo.md) and validate them.

    python scripts/make_repo_tasks.py [--seed 0] [--max-per-module 40] [--held-out 3] [--no-validate]

Writes src/rlvr/envs/repo/data/{train,test}.jsonl (the test split: the held-out modules) from
`rlvr.envs.repo.generate.generate(seed, ...)`, deterministic from the seed, then loads each file
with the sandbox so that every task is validated (FAIL_TO_PASS fails before the reference
patch, every listed test passes after it); the validation cache `<file>.validated` is written
beside each file, so that a run loading them does not validate the unchanged rows again.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from rlvr.envs.repo.generate import generate
from rlvr.envs.repo.load import load_repo_tasks
from rlvr.envs.repo.task import task_row
from rlvr.rewards.sandbox import Limits, Sandbox

OUT = Path(__file__).resolve().parents[1] / "src" / "rlvr" / "envs" / "repo" / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-per-module", type=int, default=40)
    parser.add_argument("--held-out", type=int, default=3)
    parser.add_argument("--no-validate", action="store_true")
    args = parser.parse_args()
    start = time.time()
    split = generate(args.seed, args.max_per_module, args.held_out)
    OUT.mkdir(parents=True, exist_ok=True)
    for name, tasks in split.items():
        path = OUT / f"{name}.jsonl"
        path.write_text("".join(json.dumps(task_row(t), sort_keys=True) + "\n" for t in tasks))
        Path(f"{path}.validated").unlink(missing_ok=True)
        modules = sorted({t.extra["module"] for t in tasks})
        print(f"{path}: {len(tasks)} tasks from {len(modules)} modules {modules} ({time.time() - start:.0f} s)")
    if not args.no_validate:
        with Sandbox(Limits(wall_s=60, test_wall_s=5, cpu_s=5), workers=2) as sandbox:
            for name in split:
                load_repo_tasks(OUT / f"{name}.jsonl", sandbox)
                print(f"{name}: every task validated ({time.time() - start:.0f} s)")


if __name__ == "__main__":
    main()
