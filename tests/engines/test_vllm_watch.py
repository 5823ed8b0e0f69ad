"""The watcher that wakes a caller blocked on a vLLM whose engine core died (vllm_watch.py),
on a fake shaped like vLLM 0.32's SyncMPClient: no vLLM needed, so it runs in `make test`."""

from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import Future
from types import SimpleNamespace

import pytest

from rlvr.engines.vllm_watch import watch_engine_core


class Dead(Exception):
    pass


class Client:  # the parts of SyncMPClient read (a class: the watcher holds it by weak reference)
    def __init__(self):
        self.resources, self.outputs_queue, self.utility_results = SimpleNamespace(engine_dead=False), queue.Queue(), {}


def fake_llm():
    client = Client()
    return SimpleNamespace(llm_engine=SimpleNamespace(engine_core=client)), client


def test_a_dead_client_wakes_the_waiting_generate_and_the_pending_utility_call():
    llm, client = fake_llm()
    pending = Future()
    client.utility_results[1] = pending
    assert watch_engine_core(llm, Dead) and watch_engine_core(llm, Dead)  # the second call starts no other
    got = []
    waiter = threading.Thread(target=lambda: got.append(client.outputs_queue.get()), daemon=True)
    waiter.start()
    time.sleep(0.7)
    assert not got and not pending.done()  # alive: nothing is put
    client.resources.engine_dead = True  # what vLLM's monitor sets when the process dies
    waiter.join(timeout=5)
    assert len(got) == 1 and isinstance(got[0], Dead)
    with pytest.raises(Dead):
        pending.result(timeout=5)
    assert [t.name for t in threading.enumerate()].count("rlvr-vllm-core-watch") <= 1


def test_an_llm_without_the_parts_read_is_left_alone():
    assert not watch_engine_core(SimpleNamespace())  # the tests' fakes, an in-process client
    assert not watch_engine_core(SimpleNamespace(llm_engine=SimpleNamespace(engine_core=SimpleNamespace())))
