"""Which isolation a run gets, the command line that sets it up, and what it keeps.

Three kinds, best first:

- "bwrap": bubblewrap with new pid, network, IPC and UTS namespaces, an empty root with only
  /usr, the interpreter's prefix and a few /etc files bound read-only, a private tmpfs scratch
  folder (also /tmp) and /dev/shm, `--die-with-parent`, `--new-session`.
- "unshare": util-linux `unshare` with new network and pid namespaces (and a private /proc);
  the host filesystem stays visible, limited only by file permissions.
- "none": a plain child process; allowed only when the caller opts in (`allow_unisolated`).

All kinds add the rlimits of `Limits` and the wall-clock kill. When rlvr runs as root, every
role of every run also gets its own random uid: RLIMIT_NPROC is never enforced for root, and a
uid of its own keeps a run from signalling or reading any other process.
"""

from __future__ import annotations

import os
import secrets
import shutil
import sys
from dataclasses import dataclass

from rlvr.rewards.sandbox import seccomp
from rlvr.rewards.sandbox.program import PROGRAM_IN_BWRAP, program_path
from rlvr.rewards.sandbox.types import Isolation, Limits

SCRATCH_IN_BWRAP = "/scratch"
# When rlvr is not root, RLIMIT_NPROC counts every process of the sandbox's user namespace, so
# the sandbox's own processes are added to the candidate's budget: bwrap's pid 1 and the
# supervisor; in warm mode also the zygote and J0 (the checker is added by the sandbox side).
NPROC_EXTRA_FRESH, NPROC_EXTRA_WARM = 2, 4
_UID_BASE, _UID_SPAN = 3_000_000, 1 << 22
_ETC_FILES = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime")
SANDBOX_ENV = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}


def python_executable() -> str:
    """The real interpreter behind `sys.executable` (a venv's python is only a link to it)."""
    return os.path.realpath(sys.executable)


def _python_roots(python: str) -> list[str]:
    """Folders the interpreter needs that /usr does not already cover, outermost only.

    For this process's own interpreter that is its prefix and base prefix; for another one,
    the folder above its bin/ (its standard library must live there).
    """
    found = {os.path.dirname(os.path.dirname(python))}
    if python == python_executable():
        found |= {os.path.realpath(p) for p in (sys.base_prefix, sys.base_exec_prefix)}
    roots = sorted(p for p in found if not (p + "/").startswith("/usr/"))
    return [p for p in roots if not any(p.startswith(r + "/") for r in roots if r != p)]


def _hidden_from_others(python: str) -> str | None:
    """The first folder of the interpreter that other users cannot enter, or None."""
    for root in _python_roots(python):
        for folder in [*_ancestors(root), root]:
            if not os.stat(folder).st_mode & 0o005 == 0o005:
                return folder
    return None


def _ancestors(path: str) -> list[str]:
    """ "/a/b/c" -> ["/a", "/a/b"]."""
    parts = path.strip("/").split("/")[:-1]
    return ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]


def _system_binds(python: str) -> list[str]:
    """bwrap arguments for a read-only system: /usr, its top-level links, the interpreter."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = "/" + name
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in _ETC_FILES:
        args += ["--ro-bind-try", path, path]
    for root in _python_roots(python):
        # bwrap would create the folders above a bind with the host's modes (/root: 0700), and a
        # run with its own uid could not reach its interpreter's standard library.
        for above in _ancestors(root):
            args += ["--perms", "0755", "--dir", above]
        args += ["--ro-bind", root, root]
    return args + ["--ro-bind", program_path(python), PROGRAM_IN_BWRAP]


@dataclass(frozen=True)
class Plan:
    """One way to isolate runs: its kind, warm or fresh, whether rlvr runs as root, and the
    interpreter that runs model code (its real path)."""

    kind: str
    warm: bool
    root: bool
    python: str

    def argv(self, command: list[str], limits: Limits, seccomp_fd: int | None = None) -> list[str]:
        """The full command line that runs `command` under this isolation; `seccomp_fd` holds
        the syscall filter for bwrap to load (`bwrap_loads_filter`)."""
        if self.kind == "bwrap":
            load = ["--seccomp", str(seccomp_fd)] if seccomp_fd is not None else []
            return self._bwrap_argv(limits) + load + command
        if self.kind == "unshare":
            user = [] if self.root else ["--user", "--map-root-user"]
            return [
                "unshare",
                *user,
                "--net",
                "--pid",
                "--fork",
                "--kill-child",
                "--mount-proc",
                *command,
            ]
        return command

    def _bwrap_argv(self, limits: Limits) -> list[str]:
        size = str(limits.scratch_mb << 20)
        namespaces = "--unshare-pid --unshare-net --unshare-ipc --unshare-uts --unshare-cgroup-try"
        if self.root:  # no user namespace: the roles switch to their own uids instead
            caps = ["CAP_SETUID", "CAP_SETGID"] + (["CAP_SYS_ADMIN"] if self.warm else [])
        else:
            namespaces += " --unshare-user --disable-userns"
            caps = ["CAP_SYS_ADMIN"] if self.warm else []
        # Order matters: /dev/shm is mounted before /dev turns read-only, /tmp before / does.
        devices = f"--proc /proc --dev /dev --perms 1777 --size {size} --tmpfs /dev/shm"
        scratch = f"--remount-ro /dev --perms 1777 --size {size} --tmpfs {SCRATCH_IN_BWRAP}"
        finish = f"--symlink {SCRATCH_IN_BWRAP} /tmp --remount-ro / --chdir /"
        return [
            *f"bwrap --die-with-parent --new-session {namespaces}".split(),
            *_system_binds(self.python),
            *f"{devices} {scratch} {finish}".split(),
            *[arg for cap in caps for arg in ("--cap-add", cap)],
        ]

    def program(self) -> str:
        """Where the sandbox program is, as seen from inside this isolation."""
        return PROGRAM_IN_BWRAP if self.kind == "bwrap" else program_path(self.python)

    def uids(self) -> dict | None:
        """Fresh random uids for the roles of one run (root only; else None: no switch)."""
        if not self.root:
            return None
        first = _UID_BASE + secrets.randbelow(_UID_SPAN)
        return {"candidate": first, "checker": first + _UID_SPAN}

    def bwrap_loads_filter(self) -> bool:
        """A fresh bwrap sandbox gets the syscall filter from bwrap (`--seccomp FD`), for every
        process in it; warm mode's zygote needs unshare and mount for each job, so there (and
        without bwrap) each role loads it itself before running anything."""
        return self.kind == "bwrap" and not self.warm and seccomp.program() is not None

    def header_extra(self, limits: Limits, uids: dict | None, scratch: str) -> dict:
        extra = NPROC_EXTRA_WARM if self.warm else NPROC_EXTRA_FRESH
        return {
            "limits": limits.for_header(),
            "uids": uids,
            "nproc_extra": extra,
            "scratch": scratch,
            "seccomp": None if self.bwrap_loads_filter() else seccomp.program(),
        }

    def isolation(self) -> Isolation:
        return Isolation(self.kind, self.warm, self._keeps())

    def _keeps(self) -> tuple[str, ...]:
        own = ("own uid per run",) if self.root else ()
        filtered = ("syscall filter (no new namespaces, mount, ptrace, keyctl, bpf, ...)",) \
            if seccomp.program() is not None else ()
        common = (
            "rlimits (cpu, memory, processes, file size, open files)",
            "wall-clock kill",
            *filtered,
            *own,
        )
        if self.kind == "bwrap":
            fresh = (
                ("fresh pid, mount, network and IPC namespaces per run",)
                if self.warm
                else ("own pid namespace", "own network namespace")
            )
            return (
                "no network",
                "read-only system (/usr and the interpreter only)",
                "private tmpfs scratch",
                *fresh,
                *common,
            )
        if self.kind == "unshare":
            return (
                "no network",
                "own pid namespace",
                "scratch folder; host files visible",
                *common,
            )
        return ("scratch folder; host files and network visible", *common)


def cannot_try(plan: Plan) -> str | None:
    """Why `plan` cannot even be tried here, or None."""
    program = {"bwrap": "bwrap", "unshare": "unshare"}.get(plan.kind)
    if program and shutil.which(program) is None:
        return f"`{program}` is not installed" + (
            " (Debian package bubblewrap)" if plan.kind == "bwrap" else ""
        )
    hidden = _hidden_from_others(plan.python) if plan.root and plan.kind != "bwrap" else None
    if hidden:
        return (
            f"runs drop to their own uid, which cannot enter {hidden} to reach the interpreter "
            f"{plan.python}; use bwrap, or an interpreter other users can read (python=...)"
        )
    return None
