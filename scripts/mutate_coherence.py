"""Delete each cross-field rule of the config, one at a time, in a scratch copy of src/, and
count how many deletions the coherence tests catch.

    python scripts/mutate_coherence.py [pytest target ...]   (default: tests/config)

A rule is one `yield "sentence"` in src/rlvr/config/coherence.py or coherence_run.py; the
mutant replaces it by `pass`. Prints one line a rule (caught / MISSED) and the total.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RULE_FILES = ("src/rlvr/config/coherence.py", "src/rlvr/config/coherence_run.py")


def rule_spans(source: str) -> list[tuple[int, int]]:
    """(first line, last line), 1-based, of each `yield <sentence>` statement."""
    return [(node.lineno, node.end_lineno) for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Yield)]


def mutant(source: str, span: tuple[int, int]) -> str:
    lines = source.splitlines(keepends=True)
    first, last = span
    indent = lines[first - 1][: len(lines[first - 1]) - len(lines[first - 1].lstrip())]
    return "".join(lines[: first - 1] + [f"{indent}pass\n"] + lines[last:])


def caught(scratch: Path, targets: list[str]) -> bool:
    env = {**os.environ, "PYTHONPATH": str(scratch / "src"), "OMP_WAIT_POLICY": "PASSIVE"}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *targets],
                          cwd=REPO, env=env, capture_output=True, text=True)
    return done.returncode != 0


def main(targets: list[str]) -> int:
    total = found = 0
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        shutil.copytree(REPO / "src", scratch / "src")
        for name in RULE_FILES:
            path, source = scratch / name, (REPO / name).read_text()
            for span in rule_spans(source):
                path.write_text(mutant(source, span))
                hit = caught(scratch, targets)
                total, found = total + 1, found + hit
                print(f"{name}:{span[0]}: {'caught' if hit else 'MISSED'}", flush=True)
            path.write_text(source)
    print(f"{found} of {total} deleted rules caught by {' '.join(targets)}")
    return 0 if found == total else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:] or ["tests/config"]))
