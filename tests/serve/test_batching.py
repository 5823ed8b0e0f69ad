"""The engine worker: concurrent requests with equal settings share one engine call and get the
answers they would get alone; other settings and seeded sampling stay apart; the queue bound
and the deadline answer 503 and 504 and leave the worker serving."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from rlvr.serve.batching import EngineWorker
from rlvr.serve.completions import BadRequest, parse_request
from rlvr.serve.limits import ServeLimits


def ask(service, body: dict):
    return service.encode(parse_request(body, "tiny", service.vocab_size))


async def answer_all(worker: EngineWorker, encoded: list) -> list:
    """Submit all at once (as concurrent handlers would) and collect answers or BadRequests."""
    task = asyncio.create_task(worker.run())
    try:
        return await asyncio.gather(*(worker.answer(e, time.monotonic()) for e in encoded), return_exceptions=True)
    finally:
        task.cancel()


def test_batched_greedy_requests_equal_each_alone(make_service):
    service = make_service()
    bodies = [{"prompt": ["ab", "abc"], "n": 2, "max_tokens": 12, "temperature": 0, "logprobs": 3}]
    bodies += [{"prompt": p, "max_tokens": 12, "temperature": 0, "logprobs": 3}  # other lengths: padding
               for p in ["hello", "2+2=", "a much longer prompt than the others", "x"]]
    alone = [service.complete(parse_request(b, "tiny", service.vocab_size)) for b in bodies]
    worker = EngineWorker(service, ServeLimits())
    together = asyncio.run(answer_all(worker, [ask(service, b) for b in bodies]))
    assert worker.stats.batches == 1 and worker.stats.largest_batch == len(bodies)  # one engine call
    for a, b in zip(alone, together):
        assert [c["text"] for c in a["choices"]] == [c["text"] for c in b["choices"]]
        for ca, cb in zip(a["choices"], b["choices"]):
            assert ca["logprobs"]["tokens"] == cb["logprobs"]["tokens"]
            assert ca["logprobs"]["token_logprobs"] == pytest.approx(cb["logprobs"]["token_logprobs"], abs=1e-5)
        assert a["usage"] == b["usage"]


def test_different_settings_and_seeded_sampling_are_not_batched(make_service):
    service = make_service()
    bodies = [{"prompt": "a", "max_tokens": 4, "temperature": 0},
              {"prompt": "b", "max_tokens": 5, "temperature": 0},  # another max_tokens
              {"prompt": "c", "max_tokens": 4, "temperature": 0},  # joins the first
              {"prompt": "d", "max_tokens": 4, "temperature": 1.0, "seed": 7},  # seeded: alone
              {"prompt": "d", "max_tokens": 4, "temperature": 1.0, "seed": 7}]
    worker = EngineWorker(service, ServeLimits())
    out = asyncio.run(answer_all(worker, [ask(service, b) for b in bodies]))
    assert worker.stats.batches == 4 and worker.stats.answered == 5
    assert out[3]["choices"][0]["text"] == out[4]["choices"][0]["text"]  # the seed reproduces


def test_batch_rows_are_capped(make_service):
    service = make_service()
    worker = EngineWorker(service, ServeLimits(max_batch_rows=4))
    bodies = [{"prompt": "a", "n": 3, "max_tokens": 2, "temperature": 0}] * 3  # 3 rows each: 3 calls
    asyncio.run(answer_all(worker, [ask(service, b) for b in bodies]))
    assert worker.stats.batches == 3


def test_a_full_queue_is_a_503_and_the_worker_goes_on(make_service):
    service = make_service()
    gate = threading.Event()
    real = service.run_batch
    service.run_batch = lambda batch, stop: (gate.wait(10), real(batch, stop))[1]  # hold the engine
    worker = EngineWorker(service, ServeLimits(queue_size=2))

    async def scenario():
        task = asyncio.create_task(worker.run())
        first = asyncio.create_task(worker.answer(ask(service, {"prompt": "a", "max_tokens": 2}), time.monotonic()))
        await asyncio.sleep(0.05)  # the worker took `first`; the engine is held
        queued = [asyncio.create_task(worker.answer(ask(service, {"prompt": "b", "max_tokens": 2}), time.monotonic()))
                  for _ in range(2)]
        await asyncio.sleep(0)
        with pytest.raises(BadRequest) as refused:
            await worker.answer(ask(service, {"prompt": "c", "max_tokens": 2}), time.monotonic())
        gate.set()
        done = await asyncio.gather(first, *queued)
        task.cancel()
        return refused.value, done

    refused, done = asyncio.run(scenario())
    assert refused.status == 503 and "busy" in refused.message and worker.stats.rejected_queue_full == 1
    assert len(done) == 3 and all(d["choices"] for d in done)


def test_a_request_past_its_deadline_is_a_504_and_its_batch_stops(make_service):
    service = make_service()
    worker = EngineWorker(service, ServeLimits(request_timeout_s=0.2))
    # 32 sampled rows x 900 tokens: seconds of decoding, unless stopped (and all 32 meeting EOS
    # early is negligible).
    slow = ask(service, {"prompt": "a", "n": 32, "max_tokens": 900})

    async def scenario():
        task = asyncio.create_task(worker.run())
        started = time.monotonic()
        with pytest.raises(BadRequest) as late:
            await worker.answer(slow, started)
        waited = time.monotonic() - started
        worker.limits = ServeLimits(request_timeout_s=30)
        quick = await worker.answer(ask(service, {"prompt": "b", "max_tokens": 2}), time.monotonic())
        task.cancel()
        return late.value, waited, quick

    late, waited, quick = asyncio.run(scenario())
    assert late.status == 504 and "took over 0.2 s" in late.message and waited < 1.0
    assert worker.stats.batches_stopped == 1 and worker.stats.timed_out == 1
    assert quick["choices"][0]["text"] is not None and worker.stats.answered == 1


def test_the_wait_window_gathers_a_later_arrival(make_service):
    service = make_service()

    async def two_apart(wait_s: float) -> int:
        worker = EngineWorker(service, ServeLimits(batch_wait_s=wait_s))
        task = asyncio.create_task(worker.run())
        first = asyncio.create_task(worker.answer(ask(service, {"prompt": "a", "max_tokens": 2}), time.monotonic()))
        await asyncio.sleep(0.05)
        await worker.answer(ask(service, {"prompt": "b", "max_tokens": 2}), time.monotonic())
        await first
        task.cancel()
        return worker.stats.batches

    assert asyncio.run(two_apart(0.5)) == 1  # the second arrived inside the first's window
    assert asyncio.run(two_apart(0.0)) == 2


def test_requests_that_timed_out_in_the_queue_free_their_places(make_service):
    # Review finding (2026-12-01): a 504 left its job in the queue until the running batch
    # ended, so a burst of timeouts behind a long batch made every new request a 503.
    service = make_service()
    gate = threading.Event()
    real = service.run_batch
    service.run_batch = lambda batch, stop: (gate.wait(10), real(batch, stop))[1]  # hold the engine
    worker = EngineWorker(service, ServeLimits(queue_size=2, request_timeout_s=30))

    async def scenario():
        task = asyncio.create_task(worker.run())
        first = asyncio.create_task(worker.answer(ask(service, {"prompt": "a", "max_tokens": 2}), time.monotonic()))
        await asyncio.sleep(0.05)  # the worker took `first`; the engine is held
        worker.limits = ServeLimits(queue_size=2, request_timeout_s=0.2)
        late = await asyncio.gather(*(worker.answer(ask(service, {"prompt": "b", "max_tokens": 2}), time.monotonic())
                                      for _ in range(2)), return_exceptions=True)
        waiting_after = len(worker.waiting)
        worker.limits = ServeLimits(queue_size=2, request_timeout_s=30)
        admitted = asyncio.create_task(worker.answer(ask(service, {"prompt": "c", "max_tokens": 2}), time.monotonic()))
        await asyncio.sleep(0.05)
        gate.set()
        done = await asyncio.gather(first, admitted, return_exceptions=True)
        task.cancel()
        return late, waiting_after, done

    late, waiting_after, done = asyncio.run(scenario())
    assert all(isinstance(e, BadRequest) and e.status == 504 for e in late)
    assert waiting_after == 0  # the two dead jobs left the queue
    assert all(isinstance(d, dict) and d["choices"] for d in done), done
