"""rlvr.engines.local_pool: the in-process engine's rows sampled by local processes over shared
weights (the engine contract itself: tests/engines/test_contract.py, id "local-pool")."""

from __future__ import annotations

import copy
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
import torch

from rlvr import heartbeat
from rlvr.engines import HFEngine, SamplingParams
from rlvr.engines.base import split_rows
from rlvr.engines import local_pool
from rlvr.engines.local_pool import LocalPoolEngine
from rlvr.errors import RlvrError

PROMPTS = ["12+34=", "7+8=", "99+99=", "5+5=", "40+2="]


@pytest.fixture
def pool(tiny_model, tokenizer):
    engine = LocalPoolEngine(copy.deepcopy(tiny_model), tokenizer, workers=2, seed=3, threads=1)
    yield engine
    engine.close()


def rows_of(tokenizer, n: int = 3) -> list[list[int]]:
    return [tokenizer(p, add_special_tokens=False)["input_ids"] for p in PROMPTS for _ in range(n)]


def one_thread_reference(model, tokenizer, rows, seed_state: torch.Tensor, workers: int, params):
    """What the pool should return, computed here: the same split and seeds (from the same
    generator state), each chunk sampled by an HFEngine on one thread, as each worker runs."""
    gen = torch.Generator().set_state(seed_state)
    chunks, seeds = split_rows(rows, workers, gen)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        ref = HFEngine(model, tokenizer)
        out = []
        for chunk, seed in zip(chunks, seeds):
            ref.generator.manual_seed(seed)
            out.extend(ref.generate_ids(chunk, params))
        return out
    finally:
        torch.set_num_threads(threads)


def test_each_chunk_is_an_hf_engine_run_with_its_seed(pool, tokenizer):
    """The split, the seeds and the order are the contract's: the pool's rollouts are exactly
    one-thread HFEngine runs of each chunk with the seed drawn for it."""
    rows, params = rows_of(tokenizer), SamplingParams(max_new_tokens=8)
    state = pool.generator.get_state()
    got = pool.generate_ids(rows, params)
    want = one_thread_reference(copy.deepcopy(pool.model), tokenizer, rows, state, 2, params)
    assert [r.prompt_ids for r in got] == [tuple(r) for r in rows]
    assert [(r.completion_ids, r.logprobs) for r in got] == [(r.completion_ids, r.logprobs) for r in want]


def test_in_place_weight_changes_reach_the_workers(pool, tokenizer):
    """A sync run's optimizer steps the shared tensors in place: the next call samples them,
    with no weights sent (and the workers' joined copies rebuilt)."""
    rows, params = rows_of(tokenizer, 2), SamplingParams(max_new_tokens=8)
    pool.generate_ids(rows, params)
    pids = [w.process.pid for w in pool._workers]
    with torch.no_grad():
        for p in pool.model.parameters():
            p.add_(0.2 * torch.randn_like(p))
    state = pool.generator.get_state()
    got = pool.generate_ids(rows, params)
    assert [w.process.pid for w in pool._workers] == pids  # the same processes: no restart needed
    want = one_thread_reference(copy.deepcopy(pool.model), tokenizer, rows, state, 2, params)
    assert [r.logprobs for r in got] == [r.logprobs for r in want]


def test_loaded_weights_reach_the_workers(pool, tiny_model, tokenizer):
    """An async run's engine holds a copy: the trainer's weights arrive by `load_weights`."""
    rows, params = rows_of(tokenizer, 2), SamplingParams(max_new_tokens=8)
    other = copy.deepcopy(tiny_model)
    with torch.no_grad():
        for p in other.parameters():
            p.mul_(0.7)
    pool.load_weights({k: v.clone() for k, v in other.state_dict().items()}, version=4)
    state = pool.generator.get_state()
    got = pool.generate_ids(rows, params)
    assert {r.policy_version for r in got} == {4}
    want = one_thread_reference(other, tokenizer, rows, state, 2, params)
    assert [r.logprobs for r in got] == [r.logprobs for r in want]


def test_replaced_storage_restarts_the_workers_on_it(pool, tokenizer):
    rows, params = rows_of(tokenizer, 2), SamplingParams(max_new_tokens=8)
    pool.generate_ids(rows, params)
    pids = [w.process.pid for w in pool._workers]
    with torch.no_grad():
        for p in pool.model.parameters():
            p.data = p.data * 0.5  # new storage, not shared: the workers cannot see it
    state = pool.generator.get_state()
    got = pool.generate_ids(rows, params)
    assert all(w.process.pid not in pids for w in pool._workers)
    want = one_thread_reference(copy.deepcopy(pool.model), tokenizer, rows, state, 2, params)
    assert [r.logprobs for r in got] == [r.logprobs for r in want]


def test_a_worker_killed_mid_generation_is_replaced_and_its_chunk_redone(pool, tokenizer):
    # 60 rows x 48 steps: the kill, 3 steps in, lands well before the chunk's end
    rows, params = rows_of(tokenizer, 12), SamplingParams(max_new_tokens=48, min_new_tokens=48)
    pool.generate_ids(rows[:2], SamplingParams(max_new_tokens=2))  # workers up
    victim = pool._workers[0]

    def kill_once_decoding():
        start = victim.beats.value
        deadline = time.monotonic() + 60
        while victim.beats.value < start + 3 and time.monotonic() < deadline:
            time.sleep(0.002)
        os.kill(victim.process.pid, signal.SIGKILL)

    state = pool.generator.get_state()
    killer = threading.Thread(target=kill_once_decoding)
    killer.start()
    got = pool.generate_ids(rows, params)
    killer.join()
    assert pool.restarts == 1 and pool.stats() == {"engine/worker_restarts": 1.0}
    pool.generator.set_state(state)
    assert [r.completion_ids for r in pool.generate_ids(rows, params)] == [r.completion_ids for r in got]


def test_a_worker_dead_between_calls_is_replaced(pool, tokenizer):
    rows, params = rows_of(tokenizer, 2), SamplingParams(max_new_tokens=8)
    state = pool.generator.get_state()
    before = pool.generate_ids(rows, params)
    pool._workers[1].process.kill()
    pool._workers[1].process.join()
    pool.generator.set_state(state)
    assert [r.completion_ids for r in pool.generate_ids(rows, params)] == [r.completion_ids for r in before]
    assert pool.restarts == 1


def test_workers_die_with_their_parent(tmp_path):
    """A run killed with -9 (or the watchdog's os._exit) leaves no worker behind."""
    script = tmp_path / "parent.py"
    script.write_text(
        "import os, sys, time\n"
        "from rlvr.engines.local_pool import LocalPoolEngine\n"
        "from rlvr.models import build_char_tokenizer, tiny_qwen2\n"
        "model = tiny_qwen2(hidden_size=32, intermediate_size=64, num_layers=1, num_heads=2, num_kv_heads=1)\n"
        "pool = LocalPoolEngine(model, build_char_tokenizer(128), workers=2, threads=1)\n"
        "print(*[w.process.pid for w in pool._workers], flush=True)\n"
        "time.sleep(600)\n")
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    try:
        pids = [int(p) for p in parent.stdout.readline().split()]
        assert len(pids) == 2 and all(_alive(p) for p in pids)
        parent.kill()
        parent.wait()
        deadline = time.monotonic() + 10
        while any(_alive(p) for p in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_alive(p) for p in pids)
    finally:
        parent.kill()


def _alive(pid: int) -> bool:
    """Running, and not a zombie waiting for its (dead) parent's reaper."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_the_callers_stage_is_beaten_while_workers_decode(pool, tokenizer, monkeypatch):
    """The watchdog watches this process's stage; the workers' decode steps count there."""
    monkeypatch.setattr(local_pool, "_POLL_S", 0.005)  # look often: this generation is short
    pool.generate_ids(rows_of(tokenizer, 1), SamplingParams(max_new_tokens=2))  # start outside the stage

    class Stage:
        since = 0.0

    stage = Stage()
    heartbeat.set_current(stage)
    try:
        t0 = time.monotonic()
        pool.generate_ids(rows_of(tokenizer, 8), SamplingParams(max_new_tokens=48, min_new_tokens=48))
    finally:
        heartbeat.set_current(None)
    assert stage.since >= t0


def test_what_the_pool_refuses(tiny_model, tokenizer, pool):
    with pytest.raises(NotImplementedError, match="cannot take weights during a generation"):
        pool.accept_inflight_weights(lambda: None)
    with pytest.raises(ValueError, match="workers >= 1"):
        LocalPoolEngine(tiny_model, tokenizer, workers=0)
    meta = copy.deepcopy(tiny_model).to("meta")
    with pytest.raises(RlvrError, match="samples on the CPU"):
        LocalPoolEngine(meta, tokenizer, workers=2)
