"""Every key a run logs has its line in docs/metrics.md. The golden runs (tests/golden/*.json,
checked against live runs by tests/orchestrate/test_golden_runs.py) hold the keys that each
recipe's steps really write, environments and async included."""

from __future__ import annotations

import json
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def documented_patterns() -> list[re.Pattern]:
    page = (REPO / "docs" / "metrics.md").read_text()
    keys = set(re.findall(r"`([a-z_]+/[^`\s]+|step)`", page))
    # `reward/flag_<name>`, `eval/pass@k`: a placeholder stands for any name or number
    return [re.compile(re.sub(r"\\<[^>]+\\>|@k$", lambda m: "@\\d+" if m.group(0) == "@k" else "[^/]+",
                              re.escape(key).replace(r"\<", "<").replace(r"\>", ">")
                              .replace("<", r"\<").replace(">", r"\>")) + "$")
            for key in keys]


def logged_keys() -> set[str]:
    keys: set[str] = set()
    for path in (REPO / "tests" / "golden").glob("*.json"):
        record = json.loads(path.read_text())
        for line in record.get("metrics", []) if isinstance(record, dict) else []:
            keys |= set(line)
    return keys


def test_the_golden_runs_log_keys_to_check():
    keys = logged_keys()
    assert {"reward/mean", "policy/ratio_mean"} <= keys and any(k.startswith("env/") for k in keys)


def test_every_logged_key_is_defined_in_metrics_md():
    patterns = documented_patterns()
    missing = sorted(k for k in logged_keys() if not any(p.match(k) for p in patterns))
    assert missing == [], f"keys logged but not defined in docs/metrics.md: {missing}"
