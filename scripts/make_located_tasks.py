"""Write the located tier's task files: the shipped tasks whose reference fix is one token
swapped in one line (rlvr.envs.repo.located.token_fix), same rows, same split by module.

    python scripts/make_located_tasks.py   # -> src/rlvr/envs/repo/data/located_{train,test}.jsonl

The rows are copied unchanged, so the validation cache of the full files holds for them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from rlvr.envs.repo.located import NotLocatable, locate, token_fix
from rlvr.envs.repo.task import task_from_row

DATA = Path(__file__).resolve().parents[1] / "src/rlvr/envs/repo/data"


def located(row: dict, where: str) -> bool:
    try:
        return token_fix(locate(task_from_row(row, where))) is not None
    except NotLocatable:
        return False


def main() -> None:
    for split in ("train", "test"):
        lines = (DATA / f"{split}.jsonl").read_text().splitlines()
        kept = [line for n, line in enumerate(lines, 1) if located(json.loads(line), f"{split}.jsonl:{n}")]
        (DATA / f"located_{split}.jsonl").write_text("\n".join(kept) + "\n")
        shutil.copyfile(DATA / f"{split}.jsonl.validated", DATA / f"located_{split}.jsonl.validated")
        print(f"{split}: {len(kept)} of {len(lines)} tasks")


if __name__ == "__main__":
    main()
