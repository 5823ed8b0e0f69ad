"""The sandbox's syscall filter: a classic-BPF seccomp program, assembled here (no library:
libseccomp's Python bindings need the C library and are not on PyPI as a wheel).

What it refuses, with EPERM, to every process of a run:
- new namespaces: `unshare` (any flags), `setns`, and `clone` with any CLONE_NEW* flag (a
  nested user namespace is the usual first step of a kernel exploit, and lets code `chroot`
  and mount); `clone3`, whose flags live in memory seccomp cannot read, gets ENOSYS, so that
  the C library falls back to `clone` (what Docker and systemd do);
- mounting and changing root: mount, umount2, pivot_root, chroot and the new mount API
  (fsopen, fsconfig, fsmount, fspick, move_mount, open_tree, mount_setattr);
- another process's memory or descriptors: ptrace, process_vm_readv/writev, pidfd_getfd;
- the kernel's attack surface that test code never needs: keyctl, add_key, request_key, bpf,
  perf_event_open, userfaultfd, io_uring (its operations bypass seccomp), open_by_handle_at
  and name_to_handle_at, kernel modules, kexec, reboot, swap, acct, quotactl, the clock
  setters, syslog, vhangup, lookup_dcookie, nfsservctl, fanotify_init, and on x86-64 iopl,
  ioperm and uselib.
A syscall of another ABI (i386 `int 0x80` or x32 numbers from an x86-64 process) kills the
process: the numbers above are only those of the native ABI.

Built for x86-64 and aarch64; elsewhere `program()` is None and the sandbox says it has no
filter. Installed by bubblewrap (`--seccomp FD`) for a fresh bwrap sandbox, and by each role
itself (inside.py `install_seccomp`) where the sandbox's own setup needs those calls first
(warm mode's per-job namespaces) or there is no bwrap.
"""

from __future__ import annotations

import os
import platform
import struct
from functools import lru_cache

_AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
_X32_SYSCALL_BIT = 0x40000000
CLONE_NEW_FLAGS = 0x7E020080  # NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, NEWTIME

_REFUSED = {  # name: (x86-64, aarch64); None where that architecture has no such call
    "unshare": (272, 97), "setns": (308, 268), "mount": (165, 40), "umount2": (166, 39),
    "pivot_root": (155, 41), "chroot": (161, 51), "fsopen": (430, 430), "fsconfig": (431, 431),
    "fsmount": (432, 432), "fspick": (433, 433), "move_mount": (429, 429), "open_tree": (428, 428),
    "mount_setattr": (442, 442), "ptrace": (101, 117), "process_vm_readv": (310, 270),
    "process_vm_writev": (311, 271), "pidfd_getfd": (438, 438), "keyctl": (250, 219),
    "add_key": (248, 217), "request_key": (249, 218), "bpf": (321, 280), "perf_event_open": (298, 241),
    "userfaultfd": (323, 282), "io_uring_setup": (425, 425), "io_uring_enter": (426, 426),
    "io_uring_register": (427, 427), "open_by_handle_at": (304, 265), "name_to_handle_at": (303, 264),
    "init_module": (175, 105), "finit_module": (313, 273), "delete_module": (176, 106),
    "kexec_load": (246, 104), "kexec_file_load": (320, 294), "reboot": (169, 142), "swapon": (167, 224),
    "swapoff": (168, 225), "acct": (163, 89), "quotactl": (179, 60), "settimeofday": (164, 170),
    "clock_settime": (227, 112), "clock_adjtime": (305, 266), "adjtimex": (159, 171), "syslog": (103, 116),
    "vhangup": (153, 58), "lookup_dcookie": (212, 18), "nfsservctl": (180, 42), "fanotify_init": (300, 262),
    "iopl": (172, None), "ioperm": (173, None), "uselib": (134, None),
}
_CLONE, _CLONE3 = {"x86_64": 56, "aarch64": 220}, 435

# Classic BPF opcodes and seccomp return values (linux/filter.h, linux/seccomp.h).
_LD_ABS_W, _JEQ, _JGE, _JSET, _RET = 0x20, 0x15, 0x35, 0x45, 0x06
_ALLOW, _KILL_PROCESS, _ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
_EPERM, _ENOSYS = 1, 38
_NR, _ARCH, _ARG0_LOW = 0, 4, 16  # offsets in struct seccomp_data (args[0]: low word first on LE)


def refused_names(machine: str | None = None) -> list[str]:
    index = 0 if (machine or platform.machine()) == "x86_64" else 1
    return [name for name, numbers in _REFUSED.items() if numbers[index] is not None]


@lru_cache(maxsize=None)
def program(machine: str | None = None) -> bytes | None:
    """The filter as `struct sock_filter[]` bytes for this machine (None: not supported)."""
    machine = machine or platform.machine()
    if machine not in _AUDIT_ARCH or not _kernel_has_seccomp():
        return None
    index = 0 if machine == "x86_64" else 1
    refused = [numbers[index] for numbers in _REFUSED.values() if numbers[index] is not None]
    # Labels resolve to jump offsets at the end; every jump goes forward.
    code: list[tuple] = [(_LD_ABS_W, "", "", _ARCH), (_JEQ, "", "kill", _AUDIT_ARCH[machine]),
                         (_LD_ABS_W, "", "", _NR)]
    if machine == "x86_64":
        code.append((_JGE, "kill", "", _X32_SYSCALL_BIT))
    code += [(_JEQ, "eperm", "", nr) for nr in refused]
    code += [(_JEQ, "enosys", "", _CLONE3), (_JEQ, "", "allow", _CLONE[machine]),
             (_LD_ABS_W, "", "", _ARG0_LOW), (_JSET, "eperm", "", CLONE_NEW_FLAGS)]
    labels = {"allow": len(code), "eperm": len(code) + 1, "enosys": len(code) + 2, "kill": len(code) + 3}
    code += [(_RET, "", "", _ALLOW), (_RET, "", "", _ERRNO | _EPERM), (_RET, "", "", _ERRNO | _ENOSYS),
             (_RET, "", "", _KILL_PROCESS)]
    out = []
    for at, (op, jt, jf, k) in enumerate(code):
        offset = lambda label: 0 if not label else labels[label] - at - 1  # noqa: E731
        out.append(struct.pack("=HBBI", op, offset(jt), offset(jf), k))
    return b"".join(out)


def _kernel_has_seccomp() -> bool:
    try:
        with open("/proc/self/status") as status:
            return any(line.startswith("Seccomp:") for line in status)
    except OSError:
        return False


def program_fd(filter_bytes: bytes) -> int:
    """A descriptor holding `filter_bytes` from its start, for bwrap's `--seccomp FD` (the
    caller passes it to the child and closes it)."""
    fd = os.memfd_create("rlvr-seccomp", os.MFD_CLOEXEC)  # pass_fds gives the child its copy
    os.write(fd, filter_bytes)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
