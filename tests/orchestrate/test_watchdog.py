"""The watchdog (rlvr.orchestrate.watchdog): a stage with no progress for the timeout fails the
run with its name, its step and every thread's stack; a slow stage that keeps beating does not.

Timeouts are 0.5-1 s so that each test takes seconds. The in-process runs raise `StallError`
in pytest's main thread exactly as they would in the CLI's (inside the watchdog's `with` it is
still the `StallInterrupt` that unwinds the run); two subprocess runs check the exit
status through `rlvr train`, including the final `os._exit` when the main thread cannot be
interrupted."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from rlvr import heartbeat
from rlvr.config import load_config
from rlvr.heartbeat import StallError, StallInterrupt
from rlvr.orchestrate import train
from rlvr.orchestrate.watchdog import STALL_FILE, Watchdog

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))  # the fakes are named by `reward.function = "stall_fakes:..."`
import stall_fakes  # noqa: E402

SMALL = ["sampling.prompts_per_step=2", "sampling.group_size=2", "eval.size=0", "log.progress=none",
         "train.steps=2"]


@pytest.fixture(autouse=True)
def release_blocked_threads():
    stall_fakes.RELEASE.clear()
    yield
    stall_fakes.RELEASE.set()  # a stuck producer thread left behind by a test ends here


class Exits:
    """Stands in for os._exit: records the status instead of ending pytest."""

    def __init__(self):
        self.status, self.called = None, threading.Event()

    def __call__(self, status: int) -> None:
        self.status = status
        self.called.set()


def stuck_in_a_named_function(stage, step, watchdog):
    with watchdog.stage(stage, step):
        stall_fakes.RELEASE.wait()


def test_a_stalled_thread_interrupts_the_main_thread_and_dumps_every_stack(tmp_path):
    exits = Exits()
    with Watchdog(0.5, tmp_path, grace_s=5.0, exit=exits) as wd:
        worker = threading.Thread(target=stuck_in_a_named_function, args=("score", 7, wd), daemon=True,
                                  name="stuck-worker")
        t0 = time.monotonic()
        worker.start()
        with pytest.raises(StallInterrupt, match=r"stage 'score' of step 7 \(thread stuck-worker\)"):
            time.sleep(30)  # the main thread, waiting on the worker like the async trainer does
        elapsed = time.monotonic() - t0
    assert 0.5 <= elapsed < 0.5 + 1.0  # timeout + a poll interval, with slack for a loaded machine
    dump = (tmp_path / STALL_FILE).read_text()
    assert "stalled: stage 'score' of step 7 on thread stuck-worker" in dump
    stuck_stack = dump.split("--- thread stuck-worker")[1].split("--- thread")[0]
    assert "[stalled]" in stuck_stack and "stuck_in_a_named_function" in stuck_stack
    assert "--- thread MainThread" in dump
    assert not exits.called.is_set()  # the main thread unwound: no forced exit


def test_no_stage_open_for_the_timeout_is_a_stall_between_stages(tmp_path):
    # Like an async trainer waiting for rollouts while the producer waits for weights.
    with Watchdog(0.5, tmp_path, exit=Exits()) as wd:
        with wd.stage("train", 4):
            pass
        with pytest.raises(StallInterrupt, match=r"stage 'between stages \(none open\)' of step 4"):
            time.sleep(30)


def test_beats_keep_a_slow_stage_alive():
    with Watchdog(0.4, None, exit=Exits()) as wd:
        with wd.stage("generate", 1):
            for _ in range(15):  # 1.5 s in all, a beat every 0.1 s
                time.sleep(0.1)
                heartbeat.beat()
    assert wd.stalled is None


def test_the_end_of_a_nested_stage_is_progress_for_the_outer_one():
    with Watchdog(0.5, None, exit=Exits()) as wd:
        with wd.stage("eval", 3):
            for _ in range(4):  # 1.2 s in the outer stage, never 0.5 s without an inner one ending
                with wd.stage("generate", 3):
                    time.sleep(0.3)
    assert wd.stalled is None


def test_a_checkpoint_in_progress_on_the_main_thread_is_finished_before_the_stall_is_raised(tmp_path):
    exits = Exits()
    written = []
    # A beat every 0.1 s against a 1 s timeout: a loaded machine may delay a beat by several
    # tenths without the write itself looking stalled (it did at 0.5 s, under load ~10).
    with Watchdog(1.0, tmp_path, grace_s=0.4, exit=exits) as wd:
        threading.Thread(target=stuck_in_a_named_function, args=("generate", 4, wd), daemon=True).start()
        with pytest.raises(StallInterrupt, match="'generate' of step 4"):
            with wd.stage("checkpoint", 3, critical=True):
                for _ in range(25):  # 2.5 s of writing: the stall fires meanwhile
                    time.sleep(0.1)
                    heartbeat.beat()
                written.append("step_3")
    assert written == ["step_3"]
    assert not exits.called.is_set()  # neither was the process ended during the write


def test_a_checkpoint_write_that_is_itself_stalled_is_interrupted(tmp_path):
    # The atomic rename (rlvr.train.checkpoint) keeps the previous checkpoint whole.
    t0 = time.monotonic()
    with Watchdog(0.5, tmp_path, grace_s=5.0, exit=Exits()) as wd:
        with pytest.raises(StallInterrupt, match="stage 'checkpoint' of step 3 \\(thread MainThread\\)"):
            with wd.stage("checkpoint", 3, critical=True):
                time.sleep(30)
    assert time.monotonic() - t0 < 0.5 + 1.5  # interrupted, not deferred to the end of the write


def test_a_main_thread_that_cannot_be_interrupted_is_ended_after_the_grace(tmp_path, capsys):
    exits = Exits()
    wd = Watchdog(0.5, tmp_path, grace_s=0.5, exit=exits)
    # Started off the main thread, the watchdog cannot signal it: only the final exit remains.
    starter = threading.Thread(target=wd.start)
    starter.start()
    starter.join()
    t0 = time.monotonic()
    threading.Thread(target=stuck_in_a_named_function, args=("train", 2, wd), daemon=True).start()
    assert exits.called.wait(5.0)
    elapsed = time.monotonic() - t0
    wd.stop()
    assert exits.status == 2
    assert 0.5 + 0.5 <= elapsed < 0.5 + 0.5 + 1.0
    assert "did not unwind within 0.5 s: exiting now" in capsys.readouterr().err


def test_timeout_zero_turns_it_off(tmp_path):
    wd = Watchdog(0, tmp_path)
    with wd:
        with wd.stage("train", 1):
            assert heartbeat.current() is None  # nothing recorded: beats cost one attribute read
    assert wd._monitor is None and not (tmp_path / STALL_FILE).exists()


def run_config(tmp_path, *overrides, name="run"):
    return load_config(REPO / "recipes" / "grpo.toml",
                       [f"run.output_dir={tmp_path}", f"run.name={name}", *SMALL, *overrides])


def test_a_reward_function_that_never_returns_fails_the_run_with_stage_and_step(tmp_path):
    config = run_config(tmp_path, "reward.function=stall_fakes:reward_stuck_forever", "run.stall_timeout_s=1")
    t0 = time.monotonic()
    with pytest.raises(StallError, match=r"stage 'score' of step 1 \(thread MainThread\)"):
        train(config)
    assert time.monotonic() - t0 < 1 + 2 + 3  # timeout + grace, with slack for model loading
    dump = (tmp_path / "run" / STALL_FILE).read_text()
    assert "reward_stuck_forever" in dump.split("[stalled]")[1].split("--- thread")[0]


def test_an_engine_whose_generate_never_returns_fails_the_run(tmp_path, monkeypatch):
    import rlvr.orchestrate.run as run_module

    real_build = run_module.build

    def build_with_stuck_engine(*args, **kwargs):
        parts = real_build(*args, **kwargs)
        parts.engine = stall_fakes.StuckEngine(parts.engine)
        return parts

    monkeypatch.setattr(run_module, "build", build_with_stuck_engine)
    with pytest.raises(StallError, match="stage 'generate' of step 1"):
        train(run_config(tmp_path, "run.stall_timeout_s=1"))
    dump = (tmp_path / "run" / STALL_FILE).read_text()
    stuck_stack = dump.split("[stalled]")[1].split("--- thread")[0]
    assert "stall_fakes.py" in stuck_stack and "in generate" in stuck_stack


def test_a_stalled_async_producer_fails_the_run_from_its_own_heartbeat(tmp_path):
    config = run_config(tmp_path, "reward.function=stall_fakes:reward_stuck_forever", "run.stall_timeout_s=1",
                        "orchestrate.mode=async", "orchestrate.max_staleness=1")
    with pytest.raises(StallError, match=r"stage 'score' of step 1 \(thread rlvr-producer\)"):
        train(config)


def test_slow_but_progressing_scoring_and_decoding_do_not_trip_it(tmp_path, monkeypatch):
    # Scoring: 4 samples x 0.25 s = 1 s a step against a 0.6 s timeout; each sample is progress.
    scored = train(run_config(tmp_path, "reward.function=stall_fakes:reward_slow_but_moving",
                              "run.stall_timeout_s=0.6", name="slow_reward"))
    assert scored.steps == 2
    # Decoding: 8 forced decode steps x 0.12 s = ~1 s a generation; each decode step is progress.
    import rlvr.engines.hf as hf

    real_sample_next = hf.sample_next

    def slow_sample_next(*args, **kwargs):
        time.sleep(0.12)
        return real_sample_next(*args, **kwargs)

    monkeypatch.setattr(hf, "sample_next", slow_sample_next)
    decoded = train(run_config(tmp_path, "sampling.min_new_tokens=8", "run.stall_timeout_s=0.6", name="slow_decode"))
    assert decoded.steps == 2
    assert not (tmp_path / "slow_reward" / STALL_FILE).exists() and not (tmp_path / "slow_decode" / STALL_FILE).exists()


def cli(tmp_path, *overrides) -> tuple[subprocess.CompletedProcess, float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(HERE)])}
    args = [sys.executable, "-m", "rlvr.cli.main", "train", "grpo", "--set", f"run.output_dir={tmp_path}"]
    for o in [*SMALL, "run.stall_timeout_s=1", *overrides]:
        args += ["--set", o]
    t0 = time.monotonic()
    done = subprocess.run(args, cwd=REPO, env=env, capture_output=True, text=True, timeout=180)
    return done, time.monotonic() - t0


def test_the_cli_exits_non_zero_with_one_line_naming_the_stage_and_step(tmp_path):
    done, _ = cli(tmp_path, "reward.function=stall_fakes:reward_stuck_forever")
    assert done.returncode == 2
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("rlvr: error: stalled: stage 'score' of step 1")
    assert "reward_stuck_forever" in (tmp_path / "grpo" / STALL_FILE).read_text()


def test_the_cli_exits_after_the_grace_when_the_stuck_main_thread_ignores_the_interrupt(tmp_path):
    done, wall = cli(tmp_path, "reward.function=stall_fakes:reward_stuck_deaf")
    assert done.returncode == 2
    assert "did not unwind within 2 s: exiting now" in done.stderr.strip().splitlines()[-1]
    assert "reward_stuck_deaf" in (tmp_path / "grpo" / STALL_FILE).read_text()
