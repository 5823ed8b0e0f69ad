"""Defects found reviewing issue 13's refactor (2026-12-01), each pinned by a test that failed
before its fix (they were strict xfails until then). All run on fakes in well under a second each:
1. the async producer recorded a batch's RNG state outside the engine lock (an eval could reseed it);
2. the curriculum saw only the groups dynamic sampling kept, so an all-correct prompt never retired;
3. tokens generated were counted from the loss mask, which mask_truncated zeroes;
4. a resume forgot a best checkpoint written after the last regular one."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from types import SimpleNamespace

import pytest
import torch
from safetensors.torch import save_file

from rlvr.config.schema import Config, EvalSection, RunSection, SamplingSection
from rlvr.orchestrate.loop import Loop
from rlvr.orchestrate.plan import plan_run
from rlvr.orchestrate.producers import AsyncProducer
from rlvr.orchestrate.rollouts import Produced, RolloutSource
from rlvr.orchestrate.run_folder import RunFolder
from rlvr.orchestrate.watchdog import Watchdog
from rlvr.types import Rollout, Sample, Scored


# --- 1. AsyncProducer records a batch's RNG state outside the engine lock ---------------------

class RngSource:
    """A rollout source whose only state is an RNG counter that each draw advances, like the
    engine's torch.Generator; an evaluation reseeds it and puts it back (evaluate/sampled.py)."""

    def __init__(self):
        self.rng, self.drawn_from = 0, []

    def state(self) -> dict:
        return {"rng": self.rng}

    def close(self) -> None:
        pass

    def draw(self, step: int) -> Produced:
        self.drawn_from.append(self.rng)
        self.rng += 1
        rollout = Rollout((1,), (2,), (-0.5,), "x", "stop")
        return Produced([[Scored(Sample(f"p{step}", "1"), rollout, 1.0, "ok")]], Counter(), 0.0, 0.0, 0)


class NoEngine:
    def load_weights(self, weights, version):
        pass


class WatchedLock:
    """The producer's engine lock, noting when the producer thread asks for it."""

    def __init__(self):
        self.lock, self.producer_waits = threading.Lock(), threading.Event()

    def __enter__(self):
        if threading.current_thread().name == "rlvr-producer":
            self.producer_waits.set()
        self.lock.acquire()
        return self

    def __exit__(self, *exc):
        self.lock.release()


def wait_until(predicate, timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not predicate() and time.monotonic() < deadline:
        time.sleep(0.005)
    return predicate()


def test_async_checkpoint_state_is_the_state_the_batch_was_drawn_from_even_during_an_eval():
    source = RngSource()
    producer = AsyncProducer(source, NoEngine(), Watchdog(0, None), max_staleness=0, steps=4)
    producer.engine_lock = lock = WatchedLock()
    producer.start(0)
    try:
        producer.next(1)  # batch 0 drawn from rng 0; the producer now waits for the weights of step 1
        lock.producer_waits.clear()  # it left the engine before handing batch 0 over
        # The loop publishes, then evaluates; the producer thread may wake only once the eval
        # has the engine. Publishing inside the eval makes that interleaving certain.
        with producer.engine_for_eval():
            saved, source.rng = source.rng, 1000  # the eval's manual_seed(seed + 1)
            producer.publish({"w": torch.zeros(1)}, 1)
            # the producer wakes: today it records batch 1's state at once; a fixed one first
            # asks for the engine, which the eval holds
            assert wait_until(lambda: producer.pending_states or lock.producer_waits.is_set())
            source.rng = saved  # the eval puts the generator back
        assert wait_until(lambda: len(source.drawn_from) == 2)
        assert source.drawn_from[1] == 1  # the draw itself used the restored state...
        assert producer.next_state() == {"rng": 1}  # ...and a checkpoint now must store that state
    finally:
        producer.close()


# --- 2. The curriculum never sees the groups dynamic sampling drops -----------------------------

class SolvesEasyPrompts:
    """Every completion of an 'easy' prompt is its gold; a hard prompt gets '0' and '1'."""

    generator = torch.Generator().manual_seed(0)
    policy_version = 0

    def generate(self, prompts, n, params):
        return [[Rollout((1,), (2,), (-0.1,), "e" if p.startswith("easy") else str(j % 2), "stop")
                 for j in range(n)] for p in prompts]


def test_no_positive_resampling_retires_solved_prompts_under_zero_variance_dropping():
    config = Config(run=RunSection(seed=0),
                    sampling=SamplingSection(prompts_per_step=4, group_size=2, zero_variance="drop",
                                             curriculum="no_positive_resampling", retire_at=0.9))
    train_set = [Sample("easy0", "e"), Sample("easy1", "e"), Sample("hard0", "1"), Sample("hard1", "1")]
    parts = SimpleNamespace(train_set=train_set, engine=SolvesEasyPrompts(), sampling=None,
                            reward_fn=lambda response, gold: float(response == gold))
    source = RolloutSource(config, parts, Watchdog(0, None))
    produced = source.draw(1)
    assert sorted(g[0].sample.prompt for g in produced.groups) == ["hard0", "hard1"]  # the filter works
    assert produced.counts["curriculum/retired"] == 2  # easy0 and easy1 passed 2/2 >= 0.9


# --- a Loop on fakes (sections 3 and 4) ---------------------------------------------------

class TinyModel(torch.nn.Module):
    """Just what save_checkpoint calls: parameters, state_dict and save_pretrained."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(2))

    def save_pretrained(self, path, safe_serialization=True, state_dict=None):
        path.mkdir(parents=True, exist_ok=True)
        save_file({k: v.detach().clone() for k, v in (state_dict or self.state_dict()).items()},
                  str(path / "model.safetensors"))


def fake_parts(trained: list | None = None):
    """The parts a Loop reads, as fakes; `trained` collects each trained batch's loss tokens."""
    trained = [] if trained is None else trained
    engine = SimpleNamespace(generator=torch.Generator().manual_seed(0), policy_version=0,
                             load_weights=lambda weights, version: None, stats=lambda: {})
    schedule = SimpleNamespace(state_dict=lambda: {}, load_state_dict=lambda state: None)
    trainer = SimpleNamespace(engine_weights=lambda: {}, checkpoint_weights=lambda: None, schedule=schedule,
                              optimizer_state=lambda: {}, load_optimizer_state=lambda state: None,
                              step=lambda batch: trained.append(float(batch.completion_mask.sum())) or {})
    return SimpleNamespace(model=TinyModel(), ref_model=None, critic=None, engine=engine, trainer=trainer,
                           tokenizer=SimpleNamespace(pad_token_id=0, eos_token_id=0, save_pretrained=lambda folder: None),
                           train_set=[Sample(f"q{i}", "1") for i in range(4)], test_set=[], sampling=None,
                           reward_fn=lambda response, gold: 1.0)


# --- 3. compute/tokens_generated and throughput count only the trained tokens ------------------

def rollout(n_tokens: int, finish: str) -> Rollout:
    return Rollout((5,), tuple(range(1, n_tokens + 1)), tuple([-0.5] * n_tokens), "x", finish)


def test_tokens_generated_counts_truncated_completions_that_mask_truncated_leaves_out_of_the_loss(tmp_path):
    config = Config(run=RunSection(output_dir=str(tmp_path), stall_timeout_s=0),
                    sampling=SamplingSection(prompts_per_step=1, group_size=2, max_new_tokens=4,
                                             mask_truncated=True))
    folder = RunFolder(tmp_path / "run")
    folder.create("")
    trained: list[float] = []
    loop = Loop(plan_run(config), fake_parts(trained), folder)
    # one group: a finished 2-token completion (reward 1) and a truncated 4-token one (reward 0)
    groups = [[Scored(Sample("p", "1"), rollout(2, "stop"), 1.0, ""),
               Scored(Sample("p", "1"), rollout(4, "length"), 0.0, "")]]
    metrics = loop.consume(Produced(groups, Counter(), 0.0, 0.0, 0, wait_s=1.0))
    assert trained == [2.0]  # the loss saw only the finished row: right
    assert metrics["compute/tokens_generated"] == 2 + 4  # but both completions were sampled


# --- 4. A resumed run forgets the best eval value written after its checkpoint ---------------

def best_value(folder: RunFolder) -> float:
    (best,) = (folder.path / "best_checkpoint").glob("step_*")
    return torch.load(best / "state.pt", weights_only=False)["value"]


def test_a_resumed_run_keeps_the_better_best_checkpoint_written_after_its_last_checkpoint(tmp_path):
    config = Config(run=RunSection(output_dir=str(tmp_path), stall_timeout_s=0),
                    sampling=SamplingSection(prompts_per_step=2, group_size=2),
                    eval=EvalSection(keep_best="eval/accuracy"))
    folder = RunFolder(tmp_path / "run")
    folder.create(json.dumps({}))
    first = Loop(plan_run(config), fake_parts(), folder)
    first.state.step = 2
    first._keep_if_best({"eval/accuracy": 0.5})
    first.checkpoint()  # step_2 holds best = 0.5
    first.state.step = 3
    first._keep_if_best({"eval/accuracy": 0.8})  # best_checkpoint/step_3; then kill -9
    assert best_value(folder) == 0.8

    again = Loop(plan_run(config), fake_parts(), folder)
    again.resume_from(folder.checkpoints / "step_2")
    again.state.step = 3  # step 3 trained again, its eval now worse than the best seen
    again._keep_if_best({"eval/accuracy": 0.6})
    assert best_value(folder) == 0.8
