"""Waking a caller blocked on a vLLM whose engine core process died.

vLLM 0.32's multiprocess client (vllm.v1.engine.core_client, SyncMPClient) watches its engine
core process: when the process dies, its monitor thread marks the client dead and shuts it
down, which stops the thread feeding the output queue, but it puts nothing on that queue, and
leaves pending utility calls (`collective_rpc`, what a weight sync uses) unresolved. A
`LLM.generate` already waiting on the queue then waits forever (seen here: `kill -9` of
VLLM::EngineCore mid-generation hung the test for minutes). `watch_engine_core` adds the
missing wake-up: once the client is marked dead, vLLM's own EngineDeadError goes on the queue
and into every pending utility future, so the caller raises it (rlvr.engines.vllm_engine turns
it into VLLMEngineDied, one line, and the run stops to be resumed). It reads vLLM internals
(`resources.engine_dead`, `outputs_queue`, `utility_results`) of the pinned 0.32 release and
does nothing where they are missing (an in-process client, the tests' fakes).
"""

from __future__ import annotations

import threading
import weakref

POLL_S = 0.5


def watch_engine_core(llm, dead_error=None) -> bool:
    """Start the watcher for `llm` (a vllm.LLM) unless its client has one or lacks the parts
    read; True when one runs for it. `dead_error` makes the exception to raise (default: vLLM's
    EngineDeadError, imported when needed)."""
    client = getattr(getattr(llm, "llm_engine", None), "engine_core", None)
    resources = getattr(client, "resources", None)
    if not all(hasattr(client, a) for a in ("outputs_queue", "utility_results")) or resources is None:
        return False
    if getattr(client, "_rlvr_watched", False):
        return True
    client._rlvr_watched = True
    ref, stop = weakref.ref(client), threading.Event()

    def watch():
        while not resources.engine_dead:
            if stop.wait(POLL_S) or ref() is None:  # the client is gone: nothing left to wake
                return
        if (alive := ref()) is not None:
            wake(alive, dead_error)

    weakref.finalize(client, stop.set)
    threading.Thread(target=watch, daemon=True, name="rlvr-vllm-core-watch").start()
    return True


def wake(client, dead_error=None) -> None:
    """vLLM's EngineDeadError to whoever waits on `client`: its output queue and its pending
    utility calls."""
    if dead_error is None:
        from vllm.v1.engine.exceptions import EngineDeadError as dead_error

    client.outputs_queue.put_nowait(dead_error())
    for future in list(client.utility_results.values()):
        if not future.done():
            future.set_exception(dead_error())
