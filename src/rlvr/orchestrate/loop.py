"""The training loop, the same for every producer: take a batch of scored groups from the
producer, build the batch and train (the learner), hand the new weights back, log, evaluate,
checkpoint. Sync, async with bounded staleness and in-flight updates differ only in the
producer (orchestrate/producers.py); the batch chain is orchestrate/batch_builder.py.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from rlvr.evaluate import greedy_accuracy
from rlvr.evaluate.sampled import sampled_pass_at_k
from rlvr.orchestrate.exact_async import ExactAsyncProducer, inflight_forward
from rlvr.orchestrate.episode_eval import EpisodeEvaluator, run_eval_metrics
from rlvr.orchestrate.forecast import forecast_metrics
from rlvr.orchestrate.learner import Learned, Learner
from rlvr.orchestrate.plan import SINGLE_TURN_KINDS, RunPlan
from rlvr.orchestrate.parts import Parts
from rlvr.orchestrate.producers import PRODUCERS, Producer
from rlvr.orchestrate.progress import ProgressDisplay
from rlvr.orchestrate.rollouts import Produced
from rlvr.orchestrate.run_folder import RunFolder
from rlvr.orchestrate.scoring import concurrency_of
from rlvr.orchestrate.source_choice import SOURCES
from rlvr.orchestrate.step_metrics import (COMPUTE_KEYS, add_compute, policy_tokens, rollout_metrics, sample_rows,
                                          staleness_metrics)
from rlvr.orchestrate.tensorboard import TensorBoardLog
from rlvr.orchestrate.watchdog import Watchdog
from rlvr.rewards.monitors import LengthDrift, Monitor, step_monitor_metrics
from rlvr.train.rng import seed_global_generators
from rlvr.train.checkpoint import CheckpointSchedule, list_checkpoints, load_state, read_state, save_checkpoint
from rlvr.types import Scored


@dataclass
class LoopState:
    """What the loop carries from step to step, and across a resume."""

    step: int = 0
    elapsed: float = 0.0  # training seconds
    best: float = float("-inf")  # the best value of eval.keep_best so far
    compute: dict[str, float] = field(default_factory=lambda: dict.fromkeys(COMPUTE_KEYS, 0.0))


def make_producer(plan: RunPlan, parts: Parts, watchdog: Watchdog) -> Producer:
    """The plan's producer (PRODUCERS) drawing from its source (SOURCES)."""
    c = plan.config
    o = c.orchestrate
    source = SOURCES[plan.source](c, parts, watchdog)
    options = dict(max_staleness=o.max_staleness, inflight_updates=o.inflight_updates, steps=c.train.steps)
    if plan.producer == "async" and o.exact:  # the fixed schedule (orchestrate/exact_async.py)
        forward = inflight_forward(o.inflight_at, c.sampling.max_new_tokens)
        return ExactAsyncProducer(source, parts.engine, watchdog, inflight_forward=forward, **options)
    return PRODUCERS[plan.producer](source, parts.engine, watchdog, **options)


class Loop:
    """One run's loop. Not meant to be subclassed: a new way of producing rollouts is a
    `Producer`, a new training rule belongs in the learner or the batch chain."""

    def __init__(self, plan: RunPlan, parts: Parts, folder: RunFolder):
        config = plan.config
        self.plan, self.config, self.parts, self.folder = plan, config, parts, folder
        seed_global_generators(config.run.seed)  # a reward's random / np.random; a resume restores them
        self.state = LoopState()
        self.watchdog = Watchdog(config.run.stall_timeout_s, folder.path if folder.writes else None)
        self.producer = make_producer(plan, parts, self.watchdog)
        self.learner = Learner(plan, parts)
        self.monitor, self.warnings = Monitor(drift=LengthDrift()), []
        k = config.checkpoint
        self.schedule = CheckpointSchedule(k.every, k.every_minutes * 60 if k.every_minutes else None)
        self.resume_notes: list[str] = []  # what resume_from found in the run files (unreadable lines)
        self.doing = "the start"  # what an interrupt stops: "step N", "step N's checkpoint" (for its message)
        self.stop_requested = False  # set by the first Ctrl-C (rlvr.orchestrate.run): stop after this step
        self.n_params = sum(p.numel() for p in parts.model.parameters())

    @property
    def step(self) -> int:
        return self.state.step

    def run(self, display: ProgressDisplay) -> None:
        c = self.config
        board = TensorBoardLog(self.folder.path / "tensorboard") if c.log.tensorboard and self.folder.writes else None
        try:
            with self.watchdog:
                self._run(display, board)
        finally:
            if board is not None:
                board.close()

    def _run(self, display: ProgressDisplay, board: TensorBoardLog | None) -> None:
        self.producer.start(self.state.step, self.learner.engine_weights)
        try:
            while self._should_go_on(display):
                metrics = self.train_step()
                self._after_step(metrics, display, board)
        except BaseException:
            self.producer.close(wait=False)
            raise
        self.producer.close()
        if self.state.step > self.schedule.last_step:  # the last step, the time limit, or Ctrl-C
            with self.watchdog.stage("checkpoint", self.state.step, critical=True):
                self.checkpoint()

    def _should_go_on(self, display: ProgressDisplay) -> bool:
        t = self.config.train
        if self.state.step >= t.steps or self.stop_requested:
            return False
        if t.time_limit_s is not None and self.state.elapsed >= t.time_limit_s:
            display.note(f"stopping: train.time_limit_s = {t.time_limit_s} reached")
            return False
        return True

    def train_step(self) -> dict[str, float]:
        """Take the next batch from the producer and train on it."""
        self.doing = f"step {self.state.step + 1}"
        return self.consume(self.producer.next(self.state.step + 1))

    def consume(self, produced: Produced) -> dict[str, float]:
        """Train on a produced batch, hand the new weights to the producer, and report."""
        s, wd = self.state, self.watchdog
        t0 = time.perf_counter()
        with wd.stage("train", s.step + 1):
            learned = self.learner.learn(produced.groups, s.step)
        s.step += 1
        with wd.stage("sync", s.step):
            self.producer.publish(self.learner.engine_weights(), s.step)
        step_s = time.perf_counter() - t0 + produced.wait_s
        s.elapsed += step_s
        self.folder.append_samples(sample_rows(produced.groups, s.step, self.config.log.samples_per_step))
        self.folder.append_ledger({"step": s.step, "policy_version": produced.policy_version,
                                   "prompts": [g[0].sample.source for g in produced.groups if g]})
        return self._report(produced, learned, step_s)

    def _after_step(self, metrics: dict[str, float], display: ProgressDisplay, board) -> None:
        """Evaluate, forecast, log and checkpoint as the recipe asks."""
        c, wd, step = self.config, self.watchdog, self.state.step
        if self._eval_due():
            with wd.stage("eval", step):
                metrics.update(self.eval_metrics())
            with wd.stage("checkpoint", step, critical=True):  # the best one
                self._keep_if_best(metrics)
        if c.eval.forecast_every and step % c.eval.forecast_every == 0:
            forecast, message = forecast_metrics([*self.folder.read_metrics(), metrics])
            metrics.update(forecast)
            display.note(message)
        self.folder.append_metrics(metrics)
        if board is not None:
            board.write(metrics)
        if self.schedule.due(step):
            with wd.stage("checkpoint", step, critical=True):
                self.checkpoint()
        display.update(step, metrics)
        for warning in self.warnings:
            display.note(f"step {step}: monitor: {warning}")

    def _report(self, produced: Produced, learned: Learned, step_s: float) -> dict[str, float]:
        """The step's metrics line (definitions in docs/metrics.md)."""
        s, batch = self.state, learned.batch
        metrics = dict(learned.train_metrics)
        metrics.update(rollout_metrics(produced.groups))
        metrics.update(staleness_metrics(produced.groups, s.step - 1))
        metrics.update({k: float(v) for k, v in produced.counts.items()})
        metrics.update(self.parts.engine.stats())
        metrics.update(self.watch([x for g in produced.groups for x in g]))
        metrics.update(learned.batch_metrics)
        generated = sum(policy_tokens(x.rollout) for g in produced.groups for x in g)
        metrics.update(add_compute(s.compute, batch, generated, self.n_params, self.config.train.updates_per_batch,
                                   has_ref=self.parts.ref_model is not None))
        metrics.update({"step": s.step, "time/generate_s": produced.generate_s, "time/score_s": produced.score_s,
                        "time/step_s": step_s, "time/elapsed_s": s.elapsed,
                        "throughput/tokens_per_s": generated / step_s,
                        "adv/abs_mean": float(batch.adv.abs().sum() / batch.completion_mask.sum().clamp(min=1)),
                        "async/staleness": float(s.step - 1 - produced.policy_version)})
        return dict(sorted(metrics.items(), key=lambda kv: (kv[0] != "step", kv[0])))

    def watch(self, scored: list[Scored]) -> dict[str, float]:
        """Reward-hacking monitors (docs/rewards.md): their metrics, and warnings kept for the
        display when a threshold is crossed."""
        metrics = step_monitor_metrics(scored)
        self.warnings = self.monitor.check(metrics)
        metrics["monitor/warnings"] = float(len(self.warnings))
        return metrics

    # Evaluation and checkpoints.

    def evaluate(self, size: int | None = None) -> float:
        """Greedy held-out accuracy (an environment run: the greedy episodes' success rate)."""
        test = self.parts.test_set[: size if size is not None else self.config.eval.size]
        if self.config.env.kind not in SINGLE_TURN_KINDS:
            return self._episode_eval(test, samples=0)["eval/accuracy"]
        with self.producer.engine_for_eval() as engine:
            return greedy_accuracy(engine, test, self.parts.reward_fn, max_new_tokens=self.config.eval.max_new_tokens,
                                   stop=self.parts.sampling.stop, how=concurrency_of(self.config.reward))

    def _episode_eval(self, test: list, samples: int) -> dict[str, float]:
        """Evaluation on episodes (orchestrate/episode_eval.py), `samples` sampled ones a task."""
        c = self.config
        evaluator = EpisodeEvaluator.from_source(self.producer.source, c.env.workers)
        with self.producer.engine_for_eval() as engine:
            return run_eval_metrics(evaluator, engine, test, c.eval.model_copy(update={"samples": samples}),
                                    self.parts.sampling.stop, c.run.seed)

    def eval_metrics(self) -> dict[str, float]:
        """Greedy accuracy, and pass@k from `eval.samples` completions per prompt when set; an
        environment run plays the held-out tasks as episodes (greedy, then eval.samples each)."""
        e = self.config.eval
        if self.config.env.kind not in SINGLE_TURN_KINDS:
            return self._episode_eval(self.parts.test_set[:e.size], e.samples)
        metrics = {"eval/accuracy": self.evaluate()}
        if e.samples:
            with self.producer.engine_for_eval():
                metrics.update(sampled_pass_at_k(self.parts.engine, self.parts.reward_fn, self.parts.sampling.stop,
                                                 self.parts.test_set[:e.size], e, self.config.run.seed,
                                                 concurrency_of(self.config.reward)))
        return metrics

    def _eval_due(self) -> bool:
        e = self.config.eval
        return bool(e.size and self.parts.test_set and e.every and self.state.step % e.every == 0)

    def _keep_if_best(self, metrics: dict[str, float]) -> None:
        """Keep a copy of the checkpoint whose `eval.keep_best` metric is the best so far."""
        name = self.config.eval.keep_best
        if name is None or metrics.get(name, float("-inf")) <= self.state.best:
            return
        self.state.best = metrics[name]
        self._save(self.folder.path / "best_checkpoint", {"metric": name, "value": self.state.best}, keep=1)

    def checkpoint(self) -> None:
        s = self.state
        self.doing = f"step {s.step}'s checkpoint"
        state = {**self.learner.state_dict(), "elapsed": s.elapsed, "compute": dict(s.compute), "best": s.best,
                 "monitor": self.monitor.state_dict(), **self.producer.next_state()}
        self._save(self.folder.checkpoints, state, self.config.checkpoint.keep)
        self.folder.record_checkpoint(s.step)
        self.schedule.written(s.step)
        self.doing = f"the end of step {s.step}"

    def _save(self, root, state: dict, keep: int) -> None:
        weights = self.learner.checkpoint_weights()  # under FSDP a collective: every rank calls it
        if self.folder.writes:
            save_checkpoint(root, self.state.step, self.parts.model, state, keep, weights=weights,
                            tokenizer=self.parts.tokenizer)

    def _best_on_disk(self) -> float:
        """The value of best_checkpoint/ (written at an eval, maybe after the last regular
        checkpoint: forgetting it would let a worse eval replace it)."""
        name, kept = self.config.eval.keep_best, list_checkpoints(self.folder.path / "best_checkpoint")
        if name is None or not kept:
            return float("-inf")
        saved = read_state(kept[-1])
        return saved["value"] if saved.get("metric") == name else float("-inf")

    def resume_from(self, checkpoint) -> int:
        """Load a verified checkpoint's loop state (its weights were loaded by `build`); None:
        start over (the run was killed before its first checkpoint)."""
        if checkpoint is None:
            self.resume_notes = self.folder.truncate_after(0)
            return 0
        saved, s = load_state(checkpoint, self.config.run.seed), self.state
        self.learner.load_state_dict(saved)
        self.producer.load_state(saved, checkpoint)
        s.step, s.elapsed = saved["step"], saved["elapsed"]
        s.best = max(saved.get("best", s.best), self._best_on_disk())
        s.compute.update(saved.get("compute", {}))
        if "monitor" in saved:  # checkpoints from before the monitor's window was saved lack it
            self.monitor.load_state_dict(saved["monitor"])
        self.resume_notes = self.folder.truncate_after(s.step)
        self.producer.publish(self.learner.engine_weights(), s.step)
        self.schedule.written(s.step)
        return s.step
