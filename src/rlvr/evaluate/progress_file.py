"""A resumable evaluation: graded samples written chunk by chunk, with the sampler's state.

`rlvr eval` samples the prompts in chunks (by default as many prompts as fill one engine
batch, so the batches, and hence the random stream, are those of a single uninterrupted call).
After each chunk one line is appended to `progress_<side>.jsonl`:

    line 1:   {"settings": {...}}                          what was asked (must match to resume)
    then:     {"chunk": j, "groups": [...], "rng": "<base64 generator state after chunk j>"}

A stopped evaluation rerun with the same settings and `--out` reloads the done chunks, skips
their prompts, restores the generator state and continues: its results equal those of an
uninterrupted run. A line cut short by a kill (the last one only) is dropped and redone.

The rows are prompt groups by default; an evaluation on environments stores its tasks'
episodes (`Progress(..., codec=episodes_eval.TASK_CODEC)`) in the same file layout.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Any, Callable, NamedTuple, Sequence

from rlvr.errors import ConfigError, DatasetError
from rlvr.evaluate.groups import Graded, PromptGroup


def group_to_dict(group: PromptGroup) -> dict:
    return {"prompt": group.prompt, "gold": group.gold, "source": group.source,
            "members": [asdict(m) for m in group.members]}


def group_from_dict(row: dict) -> PromptGroup:
    return PromptGroup(prompt=row["prompt"], gold=row["gold"], source=row["source"],
                       members=tuple(Graded(**m) for m in row["members"]))


class Codec(NamedTuple):
    """How one row (a prompt group, a task's episodes) is written to JSON and read back."""

    to_dict: Callable[[Any], dict]
    from_dict: Callable[[dict], Any]


GROUP_CODEC = Codec(group_to_dict, group_from_dict)


class Progress:
    """The done chunks of one side ("model" or "compare") of an evaluation in folder `out`."""

    def __init__(self, out: Path, side: str, settings: dict, codec: Codec = GROUP_CODEC):
        self.path = out / f"progress_{side}.jsonl"
        self.settings = json.loads(json.dumps(settings))  # as it reads back from JSON
        self.codec = codec
        self.groups: list = []
        self.rng: bytes | None = None
        self.chunks = 0
        if self.path.is_file():
            self._load()

    def _load(self) -> None:
        lines = self.path.read_text(encoding="utf-8").splitlines()
        first = json.loads(lines[0]) if lines else {}
        if first.get("settings") != self.settings:
            changed = sorted(k for k in set(first.get("settings", {})) | set(self.settings)
                             if first.get("settings", {}).get(k) != self.settings.get(k))
            raise ConfigError(f"{self.path}: a partial evaluation with other settings ({', '.join(changed)} "
                              f"differ); use another --out, or --fresh to start over")
        kept = [lines[0]]
        for lineno, line in enumerate(lines[1:], start=2):
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                if lineno != len(lines):
                    raise DatasetError(f"{self.path}:{lineno}: not valid JSON (only a last line cut short by a "
                                       f"kill is dropped)") from None
                break  # torn by a kill mid-write: redo that chunk
            self.groups += [self.codec.from_dict(g) for g in row["groups"]]
            self.rng, self.chunks = base64.b64decode(row["rng"]), self.chunks + 1
            kept.append(line)
        if len(kept) < len(lines):  # drop the torn line; rewritten whole, then renamed over the old file
            scratch = self.path.with_name(self.path.name + ".tmp")
            scratch.write_text("\n".join(kept) + "\n", encoding="utf-8")
            os.replace(scratch, self.path)

    def append(self, groups: Sequence, rng: bytes) -> None:
        row = {"chunk": self.chunks, "groups": [self.codec.to_dict(g) for g in groups],
               "rng": base64.b64encode(rng).decode("ascii")}
        if not self.path.is_file():  # written with the first chunk: a failed start leaves nothing behind
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps({"settings": self.settings}) + "\n", encoding="utf-8")
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        self.groups += list(groups)
        self.rng, self.chunks = rng, self.chunks + 1


def run_chunks(prompts: Sequence, chunk: int, progress: Progress, sample: Callable[[Sequence], list],
               get_rng: Callable[[], bytes], set_rng: Callable[[bytes], None]) -> list:
    """Sample the prompts not yet done, `chunk` at a time, recording each chunk → all P rows
    (while `sample` runs, len(progress.groups) is the index of its chunk's first prompt)."""
    done = len(progress.groups)
    if progress.rng is not None:
        set_rng(progress.rng)
    for start in range(done, len(prompts), chunk):
        progress.append(sample(prompts[start:start + chunk]), get_rng())
    return progress.groups
