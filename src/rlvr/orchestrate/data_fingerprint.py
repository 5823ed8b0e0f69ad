"""The data a run reads, fingerprinted in `runs/NAME/data.json`, so that a resume on other data
is refused instead of training on it unnoticed.

Each split (train, test) is fingerprinted by the rows read, after loading and splitting: their
number and the sha256 of every row's prompt, answer and extra columns in order. Edited answers,
cut or added rows and a shuffle all change it, whatever the task kind (a file, the `datasets`
library, a generator). The files named by `task.train_path` / `task.test_path` are recorded too
(bytes and sha256), to name the file in the refusal. `accept_data_change` continues on the new
data and appends the change (step, time, both fingerprints) to data.json's "changes".
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from rlvr.errors import ConfigError
from rlvr.orchestrate.run_folder import RunFolder, rewrite
from rlvr.types import Sample

SPLITS = ("train", "test")


def rows_fingerprint(samples: list[Sample]) -> dict[str, Any]:
    """{"rows": n, "sha256": hex} of the rows in order (prompt, answer, extra columns)."""
    digest = hashlib.sha256()
    for s in samples:
        extra = json.dumps(s.extra, sort_keys=True, default=repr) if s.extra else ""
        for part in (s.prompt, s.answer, extra):
            encoded = part.encode("utf-8", "surrogatepass")
            digest.update(len(encoded).to_bytes(8, "little") + encoded)  # lengths: no two rows read as one
    return {"rows": len(samples), "sha256": digest.hexdigest()}


def file_fingerprint(path: Path) -> dict[str, Any]:
    with open(path, "rb") as f:
        return {"path": str(path), "bytes": path.stat().st_size, "sha256": hashlib.file_digest(f, "sha256").hexdigest()}


def fingerprint(task, train_set: list[Sample], test_set: list[Sample], resolve) -> dict[str, Any]:
    """The fingerprint of both splits; `resolve(path)` finds a task path as the loader did."""
    result = {}
    for split, samples in zip(SPLITS, (train_set, test_set)):
        entry = rows_fingerprint(samples)
        path = getattr(task, f"{split}_path", None)
        if path is not None and Path(resolve(path)).is_file():
            entry["file"] = file_fingerprint(Path(resolve(path)))
        result[split] = entry
    return result


def record(folder: RunFolder, data: dict[str, Any], changes: list | None = None) -> None:
    if folder.writes:
        rewrite(folder.data, json.dumps({**data, "changes": changes or []}, indent=1) + "\n")


def differences(before: dict[str, Any], now: dict[str, Any], task) -> list[str]:
    """A phrase for each split whose rows differ, naming its file (or the task kind)."""
    found = []
    for split in SPLITS:
        old, new = before.get(split, {}), now[split]
        if old.get("sha256") == new["sha256"] and old.get("rows") == new["rows"]:
            continue
        name = (new.get("file") or old.get("file") or {}).get("path") or f"task.kind = {task.kind!r}"
        how = (f"{old.get('rows')} rows then, {new['rows']} now" if old.get("rows") != new["rows"]
               else f"the same {new['rows']} rows, but their content or order changed")
        found.append(f"{name}: the {split} rows differ from those the run started on ({how})")
    return found


def check_same_data(folder: RunFolder, now: dict[str, Any], task, step: int, accept_change: bool) -> list[str]:
    """Refuse (ConfigError) a resume whose data differs from data.json, unless `accept_change`
    (then recorded). Returns notes: a folder of an older rlvr gets its fingerprint now."""
    if not folder.data.is_file():
        record(folder, now)
        return [f"{folder.data}: no data fingerprint (a run of an older rlvr); recorded the data it resumes on"]
    try:
        saved = json.loads(folder.data.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ConfigError(f"{folder.data}: unreadable ({e}); move it away to resume without the data check") from None
    changed = differences(saved, now, task)
    if not changed:
        return []
    if not accept_change:
        raise ConfigError("; ".join(changed) + f" (recorded in {folder.data}). Resume on the data the run "
                          "started on, or pass --accept-data-change to continue on this data (recorded)")
    entry = {"at_step": step, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
             "before": {k: saved.get(k) for k in SPLITS}, "after": now}
    record(folder, now, [*saved.get("changes", []), entry])
    return [f"continuing on changed data, as asked (--accept-data-change; recorded in {folder.data}): "
            + "; ".join(changed)]
