"""A judging pass that resumes after a stop: every judged sample is appended to a file at once.

`cot_progress.jsonl` in the output folder (one per side):

    line 1:  {"settings": {"judge": SPEC, "question": ..., "rule": ...}}   must match to resume
    then:    {"key": [source, prompt, sample index, response], "ps": [P_1, ...]}   one a sample

A stopped `rlvr eval --cot-judge` rerun with the same settings and `--out` asks the judges only
about the samples not in the file, and its judgements equal those of an uninterrupted pass
(the judges' P's are stored, the threshold is applied afterwards). A line cut short by a kill
(the last one only) is dropped and that sample judged again. Other settings fail with one
error naming the file, rather than mixing two judges' verdicts.
"""

from __future__ import annotations

import json
from pathlib import Path

from rlvr.errors import ConfigError, DatasetError


class CotProgress:
    """The judged samples of one pass: P's by sample key, appended to `path` as they come."""

    def __init__(self, path: Path, settings: dict):
        self.path, self.settings = path, settings
        self.done: dict[str, list[float]] = {}
        if path.is_file():
            self._load()
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps({"settings": settings}) + "\n", encoding="utf-8")

    @staticmethod
    def key(source: str, prompt: str, index: int, response: str) -> str:
        return json.dumps([source, prompt, index, response])

    def _load(self) -> None:
        lines = self.path.read_text(encoding="utf-8").splitlines()
        try:
            head = json.loads(lines[0]) if lines else {}
        except json.JSONDecodeError:
            head = {}
        if head.get("settings") != self.settings:
            raise ConfigError(f"{self.path}: an earlier CoT judging pass with other settings "
                              f"({head.get('settings')}); delete the file or use another --out")
        kept = lines[:1]
        for lineno, line in enumerate(lines[1:], start=2):
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                if lineno == len(lines):  # torn by a kill mid-append: judged again
                    break
                raise DatasetError(f"{self.path}:{lineno}: not valid JSON") from None
            self.done[json.dumps(row["key"])] = [float(p) for p in row["ps"]]
            kept.append(line)
        # rewritten without a torn tail, so that the next append starts on a fresh line
        self.path.write_text("".join(line + "\n" for line in kept), encoding="utf-8")

    def record(self, key: str, ps: list[float]) -> None:
        self.done[key] = ps
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps({"key": json.loads(key), "ps": ps}) + "\n")
            f.flush()
