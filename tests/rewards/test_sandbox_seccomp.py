"""The sandbox's syscall filter (rewards/sandbox/seccomp.py), attacked from inside a run in
fresh and warm mode: every refused call fails with EPERM (clone3 with ENOSYS), a nested user
namespace and a chroot inside it are impossible, and what ordinary code does (fork,
subprocess, threads, files) still works."""

from __future__ import annotations

import json

import pytest

from rlvr.rewards.sandbox import Limits, Sandbox, bwrap_unavailable
from rlvr.rewards.sandbox import seccomp

WHY_NOT = bwrap_unavailable() or (None if seccomp.program() else "no seccomp filter for this machine")
pytestmark = [pytest.mark.sandbox, pytest.mark.skipif(WHY_NOT is not None, reason=f"cannot test here: {WHY_NOT}")]
LIMITS = Limits(wall_s=20, cpu_s=10, memory_mb=256, processes=8, file_size_mb=1, open_files=32, output_kb=64)
X86, ARM = 0, 1

ATTACK = """
import ctypes, json, os, platform, subprocess, threading
libc = ctypes.CDLL(None, use_errno=True)
def errno_of(nr, *args):
    ctypes.set_errno(0)
    result = libc.syscall(nr, *[ctypes.c_long(a) for a in args])
    return 0 if result != -1 else ctypes.get_errno()
seen = {"calls": {name: errno_of(nr) for name, nr in CALLS.items()}}
seen["unshare_newuser"] = errno_of(UNSHARE, 0x10000000)
seen["clone_newuser"] = errno_of(CLONE, 0x10000000 | 17, 0, 0, 0, 0)  # SIGCHLD: a child if allowed
seen["chroot"] = errno_of(CHROOT_NR, ctypes.addressof(ctypes.create_string_buffer(b"/scratch")))
seen["clone3"] = errno_of(435, 0, 0)
seen["seccomp_mode"] = open("/proc/self/status").read().split("Seccomp:")[1].split()[0]
pid = os.fork()
if pid == 0:
    os._exit(7)
seen["fork"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
seen["subprocess"] = subprocess.run(["/usr/bin/env", "true"]).returncode
t = threading.Thread(target=lambda: None); t.start(); t.join()
open("/scratch/f", "w").write("ok"); seen["file"] = open("/scratch/f").read()
"""


def attack_code() -> str:
    import platform

    arch = X86 if platform.machine() == "x86_64" else ARM
    calls = {name: numbers[arch] for name, numbers in seccomp._REFUSED.items() if numbers[arch] is not None}
    clone = seccomp._CLONE[platform.machine()]
    head = f"CALLS = {calls!r}\nUNSHARE = {calls['unshare']}\nCLONE = {clone}\nCHROOT_NR = {calls['chroot']}\n"
    return head + ATTACK + "print(json.dumps(seen))\n"


@pytest.fixture(scope="module", params=["fresh", "warm"])
def seen(request):
    with Sandbox(LIMITS, workers=1, mode=request.param) as pool:
        assert any("syscall filter" in k for k in pool.isolation.keeps)
        run = pool.run_python(attack_code())
    assert run.exit_code == 0 and run.error is None, (run.stderr[-1500:], run.error)
    return json.loads(run.stdout)


def test_every_refused_call_gets_eperm(seen):
    assert {name: e for name, e in seen["calls"].items() if e != 1} == {}
    assert len(seen["calls"]) >= 45


def test_no_nested_namespace_and_no_chroot(seen):
    assert seen["unshare_newuser"] == 1 and seen["clone_newuser"] == 1 and seen["chroot"] == 1
    assert seen["clone3"] == 38  # ENOSYS: only the filter answers so; the C library falls back to clone
    assert seen["seccomp_mode"] == "2"


def test_ordinary_code_still_runs(seen):
    assert (seen["fork"], seen["subprocess"], seen["file"]) == (7, 0, "ok")


def test_the_program_is_well_formed():
    program = seccomp.program()
    assert len(program) % 8 == 0 and len(program) // 8 < 256  # jumps are one byte
    assert seccomp.program("riscv64") is None
