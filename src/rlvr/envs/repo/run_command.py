"""The `run` tool: a shell command on a copy of the work tree, inside the sandbox.

Each call is one sandbox run (bubblewrap where present: no network, a private tmpfs, a
read-only system, the sandbox's rlimits). Its program (`_PROGRAM`, stdlib only) writes the
tree, sent on stdin, into the run's scratch folder, adds `python` and a small stand-in for
pytest on the PATH (`python -m pytest [paths or ids]` runs `test*` functions; the real pytest
is not in the sandbox), runs `sh -c COMMAND` there under `timeout_s`, and prints one JSON
line: the command's output (cut to `max_output` characters), its exit code, and the text files
it created, changed or removed. Those changes come back into the work tree (so `sed -i` or a
script that writes a file works); compiled and non-text files never do. Nothing else of the
run survives it: its scratch is gone when it ends.
"""

from __future__ import annotations

import json

from rlvr.envs.repo.tree import SKIPPED_DIRS, SKIPPED_SUFFIXES, Tree, safe_path
from rlvr.rewards.sandbox import Job, Sandbox

_PYTEST = r'''
import importlib.util, os, sys, traceback
class _Raises:
    def __init__(self, kind): self.kind = kind
    def __enter__(self): return self
    def __exit__(self, kind, value, tb):
        if kind is None: raise AssertionError(f"DID NOT RAISE {self.kind}")
        return issubclass(kind, self.kind)
def raises(kind, *args, **kwargs):
    if not args: return _Raises(kind)
    with _Raises(kind): args[0](*args[1:], **kwargs)
class approx:
    def __init__(self, want, rel=1e-6, abs=1e-12): self.want, self.rel, self.abs = want, rel, abs
    def __eq__(self, got): return builtins_abs(got - self.want) <= max(self.rel * builtins_abs(self.want), self.abs)
builtins_abs = abs
def skip(reason=""): raise RuntimeError("skipped: " + reason)
def main(argv):
    targets = [a for a in argv if not a.startswith("-")] or ["tests"]
    files, only = [], {}
    for target in targets:
        path, _, name = target.partition("::")
        if os.path.isdir(path):
            files += sorted(os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs if f.startswith("test") and f.endswith(".py"))
        else:
            files.append(path)
            if name: only.setdefault(path, set()).add(name)
    failed = passed = 0
    for path in files:
        spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except BaseException:
            print(f"ERROR {path}: cannot import\n{traceback.format_exc(limit=2)}"); failed += 1; continue
        for name, fn in vars(module).items():
            if name.startswith("test") and callable(fn) and (path not in only or name in only[path]):
                try:
                    fn(); passed += 1; print(f"PASSED {path}::{name}")
                except BaseException as e:
                    failed += 1; print(f"FAILED {path}::{name} - {type(e).__name__}: {e}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0
'''

_PROGRAM = r'''
import json, os, subprocess, sys
job = json.loads(sys.stdin.read())
base = os.getcwd()
root, shim, bindir = base + "/repo", base + "/.rlvr-shim", base + "/.rlvr-bin"
for folder in (root, shim + "/pytest", bindir):
    os.makedirs(folder, exist_ok=True)
for path, text in job["files"].items():
    os.makedirs(os.path.dirname(os.path.join(root, path)) or root, exist_ok=True)
    with open(os.path.join(root, path), "w") as f:
        f.write(text)
with open(shim + "/pytest/__init__.py", "w") as f:
    f.write(job["pytest"])
with open(shim + "/pytest/__main__.py", "w") as f:
    f.write("import sys, pytest\nsys.exit(pytest.main(sys.argv[1:]))\n")
for name in ("python", "python3"):
    os.symlink(sys.executable, bindir + "/" + name)
env = {"PATH": bindir + ":/usr/bin:/bin", "PYTHONPATH": root + ":" + shim, "HOME": root,
       "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8"}
try:
    done = subprocess.run(["/bin/sh", "-c", job["command"]], cwd=root, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=job["timeout_s"])
    output, code = done.stdout, done.returncode
except subprocess.TimeoutExpired as e:
    output, code = (e.output or b"") + b"\n[timed out after %d s]" % job["timeout_s"], 124
files = {}
for folder, dirs, names in os.walk(root):
    dirs[:] = [d for d in dirs if d not in job["skipped_dirs"]]
    for name in names:
        path = os.path.join(folder, name)
        rel = os.path.relpath(path, root)
        if os.path.islink(path) or name.endswith(tuple(job["skipped_suffixes"])) or os.path.getsize(path) > job["max_file"]:
            continue
        try:
            with open(path, encoding="utf-8") as f:
                files[rel] = f.read()
        except (UnicodeDecodeError, OSError):
            pass
changed = {p: t for p, t in files.items() if job["files"].get(p) != t}
removed = [p for p in job["files"] if p not in files]
print(json.dumps({"output": output.decode(errors="replace")[-job["max_output"]:], "exit_code": code,
                  "changed": changed, "removed": removed}))
'''


def run_in_sandbox(sandbox: Sandbox, tree: Tree, command: str, timeout_s: float, max_output: int) -> tuple[str, Tree]:
    """(the observation, the tree after the command's file changes); see the module docstring."""
    payload = {"files": tree, "command": command, "timeout_s": int(max(1, timeout_s)), "pytest": _PYTEST,
               "max_output": max_output, "skipped_dirs": sorted(SKIPPED_DIRS | {".rlvr-shim", ".rlvr-bin"}),
               "skipped_suffixes": list(SKIPPED_SUFFIXES), "max_file": 256 << 10}
    run = sandbox.run(Job({"mode": "python", "code": _PROGRAM}, json.dumps(payload).encode(), wall_s=timeout_s + 5))
    if run.error is not None:
        raise RuntimeError(f"the sandbox failed: {run.error}")
    try:
        result = json.loads(run.stdout.decode(errors="replace").strip().splitlines()[-1])
    except (ValueError, IndexError):
        why = "timed out" if run.timed_out else f"exit code {run.exit_code}"
        return f"[the command ended the sandbox run: {why}]", tree
    new = dict(tree)
    for path in result["removed"]:
        new.pop(path, None)
    for path, text in result["changed"].items():
        try:
            new[safe_path(path)] = text
        except ValueError:
            continue  # a path outside the repository never comes back
    return f"{result['output']}\n[exit code {result['exit_code']}]", new
