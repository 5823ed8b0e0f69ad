"""Tests for rlvr.rewards.sandbox: what each run can and cannot do, in fresh and warm mode.

Programs under test print what they observed (as JSON) and the test reads it; a breach shows
as a wrong observation, not as a crash of the test process.
"""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from pathlib import Path

import pytest

from rlvr.rewards.sandbox import (
    Job,
    Limits,
    Sandbox,
    SandboxUnavailable,
    bwrap_unavailable,
    choose_plan,
)
from rlvr.rewards.sandbox.plan import Plan, cannot_try, python_executable
from rlvr.rewards.sandbox.probe import probe

WHY_NOT = bwrap_unavailable()
needs_bwrap = pytest.mark.skipif(
    WHY_NOT is not None, reason=f"bubblewrap cannot sandbox here: {WHY_NOT}"
)
pytestmark = pytest.mark.sandbox
REPO = Path(__file__).resolve().parents[2]
LIMITS = Limits(
    wall_s=10, cpu_s=10, memory_mb=256, processes=8, file_size_mb=1, open_files=32, output_kb=64
)


@pytest.fixture(scope="module", params=["fresh", "warm"])
def sandbox(request):
    if WHY_NOT is not None:
        pytest.skip(f"bubblewrap cannot sandbox here: {WHY_NOT}")
    with Sandbox(LIMITS, workers=2, mode=request.param) as pool:
        yield pool


def observe(sandbox: Sandbox, code: str) -> dict:
    """Run `code` (which sets a dict `seen`) and return `seen` as the run printed it."""
    run = sandbox.run_python(code + "\nimport json\nprint(json.dumps(seen))\n")
    assert run.exit_code == 0 and run.error is None, (run.stderr[-800:], run.error)
    return json.loads(run.stdout)


def test_a_program_gets_its_stdin_and_gives_its_output_and_exit_code(sandbox):
    run = sandbox.run_python("import sys\nprint(sys.stdin.read().upper())\nsys.exit(3)", b"hello")
    assert (run.stdout, run.exit_code, run.timed_out, run.output_limited) == (
        b"HELLO\n",
        3,
        False,
        False,
    )
    crash = sandbox.run_python("raise ValueError('boom')")
    assert crash.exit_code == 1 and b"ValueError: boom" in crash.stderr


def test_the_isolation_is_reported(sandbox):
    assert sandbox.isolation.kind == "bwrap"
    assert sandbox.isolation.warm == (sandbox.plan.warm)
    assert "no network" in sandbox.isolation.keeps
    assert sandbox.run_python("pass").isolation == sandbox.isolation


def test_there_is_no_network(sandbox):
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.5)
    port = listener.getsockname()[1]
    seen = observe(
        sandbox,
        f"""
import socket
seen = {{"interfaces": [name for _, name in socket.if_nameindex()]}}
for host in ("127.0.0.1", "1.1.1.1"):
    try:
        socket.create_connection((host, {port}), timeout=1)
        seen[host] = "connected"
    except OSError as error:
        seen[host] = type(error).__name__
""",
    )
    assert seen["interfaces"] == ["lo"]
    assert "connected" not in seen.values()
    with pytest.raises(socket.timeout):
        listener.accept()
    listener.close()


def test_the_system_is_read_only_and_only_scratch_is_writable(sandbox):
    seen = observe(
        sandbox,
        """
import os
seen = {"cwd": os.getcwd()}
for path in ["/x", "/usr/x", "/etc/x", "/rlvr-sandbox.pyc", "/proc/sys/kernel/hostname", os.__file__,
             "/scratch/x", "/tmp/y", "/dev/shm/z"]:
    try:
        with open(path, "a") as handle:
            handle.write("x")
        seen[path] = "written"
    except OSError as error:
        seen[path] = type(error).__name__
""",
    )
    written = {path for path, what in seen.items() if what == "written"}
    assert written == {"/scratch/x", "/tmp/y", "/dev/shm/z"}
    assert seen["cwd"] == "/scratch"


def test_project_files_are_not_in_the_sandbox(sandbox):
    seen = observe(
        sandbox,
        f"import os\nseen = {{'repo': os.path.exists({str(REPO)!r}), 'root': sorted(os.listdir('/'))}}",
    )
    assert seen["repo"] is False
    assert set(seen["root"]) <= {
        "usr",
        "bin",
        "sbin",
        "lib",
        "lib32",
        "lib64",
        "libx32",
        "etc",
        "proc",
        "dev",
        "scratch",
        "tmp",
        "rlvr-sandbox.pyc",
        *{Path(python_executable()).parts[1]},
    }


def test_nothing_a_run_writes_is_seen_by_the_next(sandbox):
    marker = uuid.uuid4().hex
    for path in ("/scratch", "/tmp", "/dev/shm"):
        sandbox.run_python(f"open('{path}/{marker}', 'w').write('x')")
    for _ in range(3):  # whichever runner takes the next runs
        seen = observe(
            sandbox,
            "import os\nseen = {p: os.listdir(p) for p in ('/scratch', '/tmp', '/dev/shm')}",
        )
        assert not any(marker in names for names in seen.values())


def test_runs_have_no_capabilities_and_their_own_pid_namespace(sandbox):
    code = """
import os
status = open('/proc/self/status').read()
seen = {"uid": os.getuid(), "caps": status.split('CapEff:')[1].split()[0],
        "pids": [p for p in os.listdir('/proc') if p.isdigit()]}
"""
    first, second = observe(sandbox, code), observe(sandbox, code)
    assert int(first["caps"], 16) == 0
    assert len(first["pids"]) <= 4  # this run's own processes only; nothing of the host
    if os.geteuid() == 0:  # a random uid for every run, never root
        assert 0 != first["uid"] != second["uid"] != 0


def test_a_run_cannot_signal_rlvr_or_break_the_sandbox(sandbox):
    run = sandbox.run_python(
        "import os, signal\nos.kill(-1, signal.SIGKILL)\nos.kill(os.getppid(), signal.SIGKILL)"
    )
    assert run.error is None
    assert sandbox.run_python("print('still here')").stdout == b"still here\n"


def assert_strays_are_killed(**sandbox_options) -> None:
    """A run that leaves a detached, SIGTERM-proof process behind and then hangs: after its
    wall-clock limit, no process of it may be left on the host."""
    marker = f"rlvr-stray-{uuid.uuid4().hex}"
    stray = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"
    code = (
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', {stray!r}, {marker!r}], start_new_session=True)\n"
        "time.sleep(60)\n"
    )
    with Sandbox(Limits(wall_s=1.5), workers=1, **sandbox_options) as quick:
        run = quick.run_python(code)
    assert run.timed_out and run.wall_s < 6
    time.sleep(0.2)
    assert not any(marker in _cmdline(pid) for pid in os.listdir("/proc") if pid.isdigit())


def test_the_wall_clock_limit_kills_every_process_of_the_run(sandbox):
    assert_strays_are_killed(mode="warm" if sandbox.plan.warm else "fresh")


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
    except OSError:  # the process ended while we looked
        return ""


def test_output_past_the_cap_stops_the_run(sandbox):
    run = sandbox.run_python("import sys\nwhile True:\n    sys.stdout.write('x' * 4096)")
    assert run.output_limited and len(run.stdout) == LIMITS.output_kb << 10
    assert run.wall_s < LIMITS.wall_s / 2


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("b = bytearray(512 << 20)", "MemoryError"),  # memory_mb=256
        ("open('big', 'wb').write(bytes(2 << 20))", "OSError"),  # file_size_mb=1 (EFBIG)
        ("handles = [open('/dev/null') for _ in range(64)]", "OSError"),  # open_files=32
    ],
)
def test_rlimits_apply(sandbox, code, expected):
    seen = observe(
        sandbox,
        f"try:\n    {code}\n    seen = 'allowed'\nexcept Exception as error:\n    seen = type(error).__name__",
    )
    assert seen == expected


def test_the_process_limit_stops_a_fork_bomb(sandbox):
    seen = observe(
        sandbox,
        """
import os, time
children = 0
for _ in range(100):
    try:
        if os.fork() == 0:
            time.sleep(5)
            os._exit(0)
        children += 1
    except OSError:
        break
seen = children
""",
    )
    assert seen < LIMITS.processes  # processes=8, this process included


def test_the_cpu_limit_ends_a_busy_loop():
    if WHY_NOT is not None:
        pytest.skip(f"bubblewrap cannot sandbox here: {WHY_NOT}")
    with Sandbox(Limits(wall_s=30, cpu_s=1), workers=1, mode="fresh") as quick:
        run = quick.run_python("while True:\n    pass")
    assert not run.timed_out and run.exit_code in (128 + 24, 128 + 9)  # SIGXCPU, then SIGKILL
    assert run.wall_s < 20


def test_the_pool_runs_in_parallel(sandbox):
    start = time.monotonic()
    runs = sandbox.map([Job.python("import time; time.sleep(0.8)")] * 4)
    assert all(run.exit_code == 0 for run in runs)
    assert time.monotonic() - start < 3.0  # 4 x 0.8 s on 2 workers: about 1.6 s


def test_runs_in_turn_each_have_their_own_limit_and_share_the_budget(sandbox):
    # test_wall_s 1, wall_s 2.6: a hang costs 1 s and the next run still runs; a second
    # hang spends all but ~0.6 s; the fourth finds less than nothing left and is not run
    limits = Limits(wall_s=2.6, test_wall_s=1)
    hang, quick = Job.python("import time; time.sleep(60)"), Job.python("print('ok')")
    with Sandbox(limits, workers=1, mode="warm" if sandbox.plan.warm else "fresh") as pool:
        pool.run(quick)  # the warm sandbox starts outside the budget
        runs = pool.run_in_turn([hang, quick, hang, hang, quick])
    assert [run and run.timed_out for run in runs[:3]] == [True, False, True]
    assert runs[1].stdout == b"ok\n" and 0.9 < runs[0].wall_s < 1.5
    assert runs[3] is None or runs[3].timed_out and runs[3].wall_s < 0.7
    assert runs[4] is None


@needs_bwrap
def test_a_dead_warm_sandbox_is_restarted():
    with Sandbox(LIMITS, workers=1, mode="warm") as pool:
        pool.run_python("pass")
        os.killpg(pool._runners[0]._process.pid, 9)  # the zygote, from outside
        time.sleep(0.1)
        assert pool.run_python("print(1)").stdout == b"1\n"


def test_unisolated_runs_are_refused_without_opt_in(monkeypatch, tmp_path):
    with pytest.raises(SandboxUnavailable, match="allow_unisolated"):
        Sandbox(isolation="none")
    monkeypatch.setenv("PATH", str(tmp_path))  # neither bwrap nor unshare can be found
    with pytest.raises(
        SandboxUnavailable, match=r"bwrap: `bwrap` is not installed.*apt-get install bubblewrap"
    ):
        choose_plan()


def test_bad_options_are_named():
    with pytest.raises(ValueError, match="wall_s"):
        Limits(wall_s=0)
    with pytest.raises(ValueError, match="isolation"):
        Sandbox(isolation="docker")


def _usable(kind: str) -> str | None:
    """An interpreter that a `kind` run can use here, or None (it then gets skipped)."""
    root = os.geteuid() == 0
    for python in (python_executable(), "/usr/bin/python3"):
        plan = Plan(kind, False, root, os.path.realpath(python))
        if os.path.exists(python) and not (cannot_try(plan) or probe(plan)):
            return python
    return None


@pytest.mark.parametrize("kind", ["unshare", "none"])
def test_the_fallbacks_keep_limits_and_what_they_promise(kind):
    python = _usable(kind)
    if python is None:
        pytest.skip(f"isolation {kind!r} cannot run here")
    with Sandbox(LIMITS, isolation=kind, allow_unisolated=True, python=python) as pool:
        assert pool.isolation.kind == kind and not pool.isolation.warm
        seen = observe(
            pool,
            """
import os, socket
try:
    bytearray(512 << 20)
    memory = "allowed"
except MemoryError:
    memory = "MemoryError"
seen = {"uid": os.getuid(), "memory": memory, "interfaces": [n for _, n in socket.if_nameindex()]}
""",
        )
    assert seen["memory"] == "MemoryError"
    if kind == "unshare":
        assert seen["interfaces"] == ["lo"]
    if os.geteuid() == 0:
        assert seen["uid"] != 0
    if kind == "unshare" or os.geteuid() == 0:  # a pid namespace, or a uid to kill by
        assert_strays_are_killed(isolation=kind, allow_unisolated=True, python=python)
