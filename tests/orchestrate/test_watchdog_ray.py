"""The Ray engine under the watchdog: a worker whose chunk runs past the stall timeout is killed
and its chunk redone on a fresh worker (same seed, same rollouts); a chunk that stalls on the
fresh worker too stops the beats, and the watchdog fails the stage."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="Ray is not installed (optional extra `ray`)")

from rlvr.engines.base import SamplingParams  # noqa: E402
from rlvr.engines.loading import load_tokenizer  # noqa: E402
from rlvr.engines.ray_engine import RayEngine, RolloutWorker  # noqa: E402
from rlvr.heartbeat import StallError  # noqa: E402
from rlvr.orchestrate.watchdog import Watchdog  # noqa: E402

TINY = Path(__file__).resolve().parents[2] / "models" / "tiny-arith"
PROMPTS, PARAMS = ["12+34=", "56+7=", "80+19=", "33+33="], SamplingParams(max_new_tokens=4)


class StallingWorker(RolloutWorker):
    """A worker that stops answering: its generate never returns (defined here, so Ray
    pickles it by value)."""

    def generate(self, *args, **kwargs):
        time.sleep(3600)


@pytest.fixture(scope="module")
def local_ray():
    # A private cluster: another process's cluster may run workers from another checkout.
    ray.init(address="local", num_cpus=2, log_to_driver=False, include_dashboard=False)
    yield
    ray.shutdown()


def engine(chunk_timeout_s: float) -> RayEngine:
    e = RayEngine(str(TINY), load_tokenizer(TINY), workers=2, seed=3, chunk_timeout_s=chunk_timeout_s)
    e.generate(PROMPTS[:2], 1, PARAMS)  # workers up and models loaded before any deadline counts
    return e


def texts(groups) -> list[list[tuple]]:
    return [[(r.completion_ids, r.logprobs) for r in g] for g in groups]


@pytest.mark.slow
def test_a_stalled_worker_is_replaced_once_and_its_chunk_redone(local_ray):
    healthy = texts(engine(5.0).generate(PROMPTS, 2, PARAMS))
    stalled = engine(5.0)
    stalled.workers[1] = ray.remote(num_cpus=0)(StallingWorker).remote(*stalled._spec)
    before = stalled.stalls  # a cold start slower than the timeout counts as a stall too
    assert texts(stalled.generate(PROMPTS, 2, PARAMS)) == healthy
    assert stalled.stalls - before == 1  # chunk 1 once; never twice (its redo may be slow on a loaded box)


@pytest.mark.slow
def test_a_chunk_that_stalls_on_its_fresh_worker_too_is_left_to_the_watchdog(local_ray):
    e = engine(3.0)
    e._actor = ray.remote(num_cpus=0)(StallingWorker)  # every replacement stalls as well
    e.workers[0] = e._spawn()
    before = e.stalls
    # Ray's wait turns the interrupt into a SystemError; the watchdog's exit makes it StallError.
    with pytest.raises(StallError, match="stage 'generate' of step 5"):
        with Watchdog(3.0, None, grace_s=30.0) as wd:  # the run's: chunk timeout = stall timeout
            with wd.stage("generate", 5):
                e.generate(PROMPTS, 2, PARAMS)
    assert e.stalls - before == 1, f"restarts: {e.restarts}"
