"""The program the sandbox runs: `inside.py` and the code harness, as one compiled file.

Run as `python -I -S PROGRAM.pyc` (isolated mode, no site packages), so that nothing inside
the sandbox needs rlvr, the venv, or any file of the project: the sandbox binds only the
system, the interpreter and this one file. It is compiled once per rlvr process, which saves
each fresh sandbox about 10 ms of compiling.
"""

from __future__ import annotations

import atexit
import importlib.util
import marshal
import os
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

from rlvr.rewards.code import codec, harness, items, modules
from rlvr.rewards.sandbox import inside

PROGRAM_IN_BWRAP = "/rlvr-sandbox.pyc"


@lru_cache(maxsize=1)
def sandbox_source() -> str:
    """inside.py, the value codec, the code harness (code/harness.py, modules.py, items.py:
    their modes registered), then the call to `main`."""
    sources = (inside, codec, harness, modules, items)
    parts = [Path(module.__file__).read_text() for module in sources]
    register = "MODES.update(HARNESS_MODES, collect=mode_collect, module=mode_module)\n"
    return "\n\n".join([*parts, register + "main(sys.argv[1:])\n"])


# Run by another interpreter to compile the program for itself: source on stdin, pyc to argv[1].
_COMPILE = (
    "import importlib.util, marshal, sys; "
    "code = compile(sys.stdin.read(), '<rlvr-sandbox>', 'exec'); "
    "open(sys.argv[1], 'wb').write(importlib.util.MAGIC_NUMBER + bytes(12) + marshal.dumps(code))"
)


@lru_cache(maxsize=None)
def program_path(python: str) -> str:
    """A world-readable .pyc of `sandbox_source()` for `python` (no secrets in it).

    Removed when this process exits.
    """
    folder = tempfile.mkdtemp(prefix="rlvr-sandbox-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    os.chmod(folder, 0o755)  # a run with its own uid must read it where there is no bwrap
    path = os.path.join(folder, "program.pyc")
    if python == os.path.realpath(sys.executable):
        code = compile(sandbox_source(), "<rlvr-sandbox>", "exec")
        # A pyc header: magic, flags (0: timestamp-based), then mtime and source size (unused).
        Path(path).write_bytes(importlib.util.MAGIC_NUMBER + bytes(12) + marshal.dumps(code))
    else:  # bytecode is per interpreter version: let that interpreter compile it
        subprocess.run(
            [python, "-I", "-S", "-c", _COMPILE, path], input=sandbox_source().encode(), check=True
        )
    os.chmod(path, 0o644)
    return path


def python_command(python: str, program: str, *args: str) -> list[str]:
    """`python -I -S PROGRAM args...`: isolated mode, no site packages, no user files."""
    return [python, "-I", "-S", program, *args]
