"""The part of the sandbox that runs inside the isolation: one job, or a warm server of jobs.

Stdlib only, no `from __future__`: `program.py` compiles this file's source, joined with the
code harness (`rewards/code/harness.py`), into one .pyc that runs as `python -I -S PROGRAM`;
nothing from rlvr (nor the venv) is importable in there.

A job sees these file descriptors (placed by `remap_fds`):

    0, 1, 2  stdin, stdout, stderr of the program: pipes to the parent
    3        header (read): one marshal'd dict from the parent: mode, limits, uids, payload
    4        results (write): JSON lines for the parent; who may write depends on the mode
    5        secret (read): payload only the "checker" role may read (the tests); else empty

The process that reads the header is the *supervisor* (trusted; our code only). It never runs
model code: it forks *roles* ("candidate" runs model code, "checker" runs trusted test code),
and each role drops to its own uid (when the sandbox starts as root), its rlimits and no
capabilities before it runs anything. The supervisor is not dumpable, so a role of the same
uid cannot read its memory or file descriptors through /proc or ptrace.

Warm mode (`serve`): one long-lived interpreter per sandbox receives a job's six descriptors
over a unix socket, forks J0, which enters fresh pid, mount, network and IPC namespaces and
mounts a private scratch tmpfs; J0 forks J1 (pid 1 there), which runs the job exactly like a
fresh sandbox would. Killing J1 ends every process of the job.
"""

import ctypes
import fcntl
import marshal
import os
import resource
import struct
import sys
import types

# json, select, signal, socket, time and traceback are imported where they are used: each costs
# a fresh sandbox milliseconds of start-up (traceback alone ~15 ms), and warm mode imports them
# all once, in `serve`, before it forks anything.

HEADER_FD, RESULT_FD, SECRET_FD = 3, 4, 5
SCRATCH = "/scratch"  # where warm mode mounts each job's scratch; the header names the real one
_PR_SET_DUMPABLE, _PR_SET_NO_NEW_PRIVS, _PR_SET_SECCOMP, _SECCOMP_MODE_FILTER = 4, 38, 22, 2
_CLONE_NEWNS, _CLONE_NEWIPC = 0x20000, 0x8000000
_CLONE_NEWPID, _CLONE_NEWNET = 0x20000000, 0x40000000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REC, _MS_PRIVATE = 2, 4, 8, 0x4000, 0x40000
_LIBC = ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    """Raise OSError naming `what` when a libc call returned -1."""
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def prctl(option: int, value: int) -> None:
    _check(_LIBC.prctl(option, value, 0, 0, 0), f"prctl({option}, {value})")


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install_seccomp(program: bytes) -> None:
    """Load the run's syscall filter (rewards/sandbox/seccomp.py) for this process and all it
    starts; needs no_new_privs (or CAP_SYS_ADMIN) first."""
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    _check(_LIBC.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0), "prctl(PR_SET_SECCOMP)")


def drop_capabilities() -> None:
    """Empty the effective, permitted and inheritable capability sets (capset, version 3)."""
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)
    data = (ctypes.c_uint32 * 6)()
    _check(_LIBC.capset(header, data), "capset")


def set_limits(limits: dict, nproc_extra: int) -> None:
    """Apply the run's rlimits to this process (and so to everything it starts).

    `nproc_extra` counts the sandbox's own processes where they share the candidate's user
    (RLIMIT_NPROC counts per user and user namespace, not per process tree).
    """
    cpu = int(limits["cpu_s"])
    pairs = [
        (resource.RLIMIT_CPU, (cpu, cpu + 1)),  # SIGXCPU at the soft limit, SIGKILL one s later
        (resource.RLIMIT_AS, (limits["memory_bytes"],) * 2),
        (resource.RLIMIT_NPROC, (limits["processes"] + nproc_extra,) * 2),
        (resource.RLIMIT_FSIZE, (limits["file_size_bytes"],) * 2),
        (resource.RLIMIT_NOFILE, (limits["open_files"],) * 2),
        (resource.RLIMIT_CORE, (0, 0)),
    ]
    for kind, value in pairs:
        resource.setrlimit(kind, value)


def close_fds_except(keep) -> None:
    """Close every descriptor above 2 that is not in `keep` (the role must not inherit them)."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:  # the listdir handle itself, already closed
                pass


def remap_fds(fds, start: int) -> None:
    """Move descriptors `fds` to start, start + 1, ... via high copies so that none clobbers."""
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 100) for fd in fds]
    for offset, fd in enumerate(high):
        os.dup2(fd, start + offset)  # dup2 makes the copy inheritable again
        os.close(fd)


class Job:
    """One run, seen from its supervisor: the header and how to start a role."""

    def __init__(self, header: dict):
        self.header = header

    def spawn(self, role: str, target, keep=()) -> int:
        """Fork a process that becomes `role` (see `enter`), runs `target()`, and exits."""
        pid = os.fork()
        if pid:
            return pid
        status = 70
        try:
            self.enter(role, keep)
            status = target() or 0
        except SystemExit as error:
            status = error.code if isinstance(error.code, int) else 1
        except BaseException:  # a role's last word goes to its stderr; the parent keeps it
            import traceback

            traceback.print_exc()
        _flush_std()
        os._exit(status)

    def enter(self, role: str, keep) -> None:
        """Become `role`: only the descriptors it needs, rlimits, its own uid, no privileges."""
        close_fds_except(set(keep))
        uids = self.header.get("uids")
        shared = self.header["nproc_extra"] + (self.header["mode"] in ("check", "module"))  # checker
        set_limits(self.header["limits"], 0 if uids else shared)
        if uids:
            uid = uids[role]
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
        drop_capabilities()
        prctl(_PR_SET_NO_NEW_PRIVS, 1)
        if self.header.get("seccomp"):  # None when bwrap installed it for the whole sandbox
            install_seccomp(self.header["seccomp"])
        os.umask(0o077)
        scratch = self.header["scratch"]
        os.chdir(scratch if role == "candidate" else "/")
        os.environ.clear()
        os.environ.update(PATH="/usr/bin:/bin", HOME=scratch, TMPDIR=scratch, LANG="C.UTF-8")

    def load_module(self, code: str, name: str) -> tuple:
        """Run model code as module `name`; return (namespace, the exception it raised or None)."""
        module = types.ModuleType(name)
        module.__file__ = "<candidate>"
        sys.modules[name] = module
        try:
            exec(compile(code, "<candidate>", "exec"), module.__dict__)
        except BaseException as error:  # handed to the mode, which reports it its own way
            return module.__dict__, error
        return module.__dict__, None

    def wait(self, pid: int) -> int:
        """Wait for child `pid`; its exit code, or 128 + the signal that killed it."""
        return exit_code(os.waitpid(pid, 0)[1])


def exit_code(wait_status: int) -> int:
    """A shell-style exit code: the process's own, or 128 + the signal that killed it."""
    code = os.waitstatus_to_exitcode(wait_status)
    return code if code >= 0 else 128 - code


def _flush_std() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):  # closed or replaced by the candidate
            pass


def run_program(job: Job) -> int:
    """Role body for mode "python": the header's code as `__main__`, with the job's stdin."""
    _, error = job.load_module(job.header["code"], "__main__")
    if error is None:
        return 0
    if isinstance(error, SystemExit):  # what the interpreter itself would do with it
        if error.code is None or isinstance(error.code, int):
            return error.code or 0
        sys.stderr.write(f"{error.code}\n")
        return 1
    import traceback

    traceback.print_exception(type(error), error, error.__traceback__)
    return 1


def mode_python(job: Job) -> int:
    """Run a whole program; its exit code becomes the job's."""
    pid = job.spawn("candidate", lambda: run_program(job), keep=())
    return job.wait(pid)


MODES = {"python": mode_python}


def read_all(fd: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def run_job() -> None:
    """Supervisor: read the header on fd 3, run its mode, exit with the mode's status."""
    prctl(_PR_SET_DUMPABLE, 0)
    header = marshal.loads(read_all(HEADER_FD))
    os.close(HEADER_FD)
    status = MODES[header["mode"]](Job(header))
    _flush_std()
    os._exit(status & 0xFF)


# --- warm mode ----------------------------------------------------------------------------


def _mount(source, target, fstype, flags, data) -> None:
    enc = lambda text: None if text is None else text.encode()  # noqa: E731
    _check(_LIBC.mount(enc(source), enc(target), enc(fstype), flags, enc(data)), f"mount {target}")


def enter_job_namespaces(order: dict) -> None:
    """J0: new pid/mount/net/IPC namespaces, a private scratch and /dev/shm for this job only."""
    _check(_LIBC.unshare(_CLONE_NEWPID | _CLONE_NEWNS | _CLONE_NEWNET | _CLONE_NEWIPC), "unshare")
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE, None)
    owner = "" if order["scratch_uid"] is None else f",uid={order['scratch_uid']}"
    size = order["scratch_bytes"]
    _mount("tmpfs", SCRATCH, "tmpfs", _MS_NOSUID | _MS_NODEV, f"size={size},mode=0700{owner}")
    _mount("tmpfs", "/dev/shm", "tmpfs", _MS_NOSUID | _MS_NODEV, f"size={size},mode=0700{owner}")


def job_zero(order: dict, fds: list, pid_pipe: int) -> None:
    """J0: enter the job's namespaces, fork J1 (pid 1 there, the supervisor), wait for it."""
    status = 71
    try:
        enter_job_namespaces(order)
        pid = os.fork()
        if pid == 0:
            os.close(pid_pipe)
            os.setsid()
            _mount("proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, None)
            remap_fds(fds, 0)
            close_fds_except({HEADER_FD, RESULT_FD, SECRET_FD})
            run_job()
        os.write(pid_pipe, struct.pack("i", pid))
        os.close(pid_pipe)  # the zygote reads until EOF
        for fd in fds:
            os.close(fd)
        _, wait_status = os.waitpid(pid, 0)
        status = exit_code(wait_status)
    except BaseException:  # J0 has no one else to tell: the zygote reports the exit status
        import traceback

        traceback.print_exc()
    os._exit(status)


def _kill_order(sock, job_id: int) -> bool:
    """Zygote: read one message that arrived during a job; is it the order to kill this job?

    Orders for earlier jobs (sent as they were ending) are stale and ignored; end-of-file
    means the parent is gone, which ends the job too.
    """
    import json

    message = sock.recv(1 << 16)
    return not message or json.loads(message).get("kill") == job_id


def _wait_job(sock, order: dict, j0: int, j1: int) -> bool:
    """Zygote: wait for J0 until the deadline or a kill order, then kill J1. Timed out?"""
    import select
    import signal
    import time

    pidfd = os.pidfd_open(j0)
    deadline = time.monotonic() + order["wall_s"]
    try:
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([pidfd, sock], [], [], max(left, 0))
            if pidfd in ready:
                return False
            if not ready or _kill_order(sock, order["job"]):
                break
    finally:
        os.close(pidfd)
    os.kill(j1, signal.SIGKILL)  # pid 1 of the job's namespace: takes every process with it
    os.kill(j0, signal.SIGKILL)
    return not ready


def serve_one(sock, order: dict, fds: list) -> dict:
    """Zygote: run one job in J0/J1 and return its report."""
    pid_r, pid_w = os.pipe()
    j0 = os.fork()
    if j0 == 0:
        os.close(pid_r)
        sock.close()
        job_zero(order, fds, pid_w)
    os.close(pid_w)
    for fd in fds:
        os.close(fd)
    raw = read_all(pid_r)
    os.close(pid_r)
    if len(raw) != 4:  # J0 died before it could start the job: not the job's doing
        os.waitpid(j0, 0)
        return {"job": order["job"], "error": "could not set up the job's namespaces"}
    timed_out = _wait_job(sock, order, j0, struct.unpack("i", raw)[0])
    _, status, usage = os.wait4(j0, 0)
    cpu_s = usage.ru_utime + usage.ru_stime
    return {"job": order["job"], "exit": exit_code(status), "timed_out": timed_out, "cpu_s": cpu_s}


def serve(sock_fd: int) -> None:
    """Zygote main loop: one job at a time, until the parent closes the socket."""
    import json
    import select  # noqa: F401  (imported once here, so that no job pays for it)
    import signal  # noqa: F401
    import socket
    import time  # noqa: F401
    import traceback  # noqa: F401
    import unittest  # noqa: F401  (test files in the unittest style: ~20 ms a run otherwise)

    prctl(_PR_SET_DUMPABLE, 0)
    sock = socket.socket(fileno=sock_fd)
    while True:
        message, fds, _, _ = socket.recv_fds(sock, 1 << 16, 8)
        if not message:
            return
        order = json.loads(message)
        if "kill" in order:  # stale: that job had already ended
            continue
        try:
            report = serve_one(sock, order, fds)
        except Exception as error:  # reported to the parent, which restarts us
            report = {"job": order.get("job"), "error": f"{type(error).__name__}: {error}"}
        sock.send(json.dumps(report).encode())


def main(argv) -> None:
    """Entry point: `job FD_HEADER FD_RESULTS FD_SECRET` (fresh) or `serve FD_SOCKET` (warm)."""
    if argv[0] == "job":
        remap_fds([int(fd) for fd in argv[1:4]], HEADER_FD)
        close_fds_except({HEADER_FD, RESULT_FD, SECRET_FD})
        run_job()
    elif argv[0] == "serve":
        serve(int(argv[1]))
    else:
        raise SystemExit(f"unknown sandbox command {argv[0]!r}")
