"""The synchronous loop: sample prompts, generate G each, score, advantages, train, sync.

On-policy: the engine samples from the weights of the last optimiser step, so the old
log-probs of the objective are the engine's sampling log-probs.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

from rlvr.algo.curriculum import PassRateTracker
from rlvr.config import Config
from rlvr.errors import ConfigError
from rlvr.engines.loading import pad_token_id
from rlvr.evaluate import greedy_accuracy
from rlvr.evaluate.sampled import sampled_pass_at_k
from rlvr.orchestrate.batch_builder import BatchModels, BatchSpec, build_batch
from rlvr.orchestrate.components import Components
from rlvr.orchestrate.forecast import forecast_metrics
from rlvr.orchestrate.dynamic_sampling import select_groups, update_curriculum
from rlvr.orchestrate.progress import ProgressDisplay
from rlvr.orchestrate.run_folder import RunFolder
from rlvr.orchestrate.scoring import score_groups
from rlvr.orchestrate.tensorboard import TensorBoardLog
from rlvr.orchestrate.step_metrics import rollout_metrics, sample_rows, staleness_metrics
from rlvr.orchestrate.watchdog import Watchdog
from rlvr.rewards.monitors import LengthDrift, Monitor, step_monitor_metrics
from rlvr.tasks import PromptSampler
from rlvr.train.checkpoint import CheckpointSchedule, load_state, save_checkpoint
from rlvr.train.lora import engine_weights
from rlvr.types import Scored


@dataclass
class Produced:
    """A scored batch of groups, with how it was made and the loop state before it was drawn."""

    groups: list[list[Scored]]
    counts: Counter
    generate_s: float
    score_s: float
    state_before: dict
    policy_version: int


class SyncLoop:
    overlapped = False  # generation runs beside training (the async loop sets this)

    def __init__(self, config: Config, parts: Components, folder: RunFolder):
        self.config, self.parts, self.folder = config, parts, folder
        self.sampler = PromptSampler(parts.train_set, seed=config.run.seed)
        self.step = 0
        self.elapsed = 0.0  # training seconds, carried across resumes
        self.compute = {"compute/tokens_generated": 0.0, "compute/tokens_trained": 0.0, "compute/flops": 0.0}
        self.n_params = sum(p.numel() for p in parts.model.parameters())
        self.best = float("-inf")  # best value of eval.keep_best so far
        self.monitor, self.warnings = Monitor(drift=LengthDrift()), []
        s = config.sampling
        self.curriculum = PassRateTracker(threshold=s.retire_at) if s.curriculum != "none" else None
        k = config.checkpoint
        self.schedule = CheckpointSchedule(k.every, k.every_minutes * 60 if k.every_minutes else None)
        self.stop_requested = False  # set by the first Ctrl-C (rlvr.orchestrate.run): stop after this step
        self.watchdog = Watchdog(config.run.stall_timeout_s, folder.path if folder.writes else None)

    def resume_from(self, checkpoint) -> int:
        """Load a verified checkpoint's loop state (its weights were loaded by `build`); None:
        start over (the run was killed before its first checkpoint)."""
        if checkpoint is None:
            self.folder.truncate_after(0)
            return 0
        state = load_state(checkpoint)
        self.parts.trainer.load_optimizer_state(state["optimizer"])
        self.restore_engine_rng(state["engine_rng"], checkpoint)
        self.sampler.load_state(state["sampler"])
        if self.curriculum is not None:
            self.curriculum.load_state_dict(state["curriculum"])
        self.step, self.elapsed = state["step"], state["elapsed"]
        self.compute.update(state.get("compute", {}))
        self.best = state.get("best", self.best)
        if "monitor" in state:  # checkpoints from before the monitor's window was saved lack it
            self.monitor.load_state_dict(state["monitor"])
        if self.parts.critic is not None:
            self.parts.critic.model.load_state_dict(state["critic"])
            self.parts.critic.optimizer.load_state_dict(state["critic_optimizer"])
        self.folder.truncate_after(self.step)
        self.sync_weights()
        self.schedule.written(self.step)
        return self.step

    def restore_engine_rng(self, rng_state, checkpoint) -> None:
        generator = self.parts.engine.generator
        try:
            generator.set_state(rng_state)
        except RuntimeError:  # a CUDA generator's state does not fit a CPU one, and back
            raise ConfigError(f"{checkpoint}: its sampling RNG state comes from another device than this "
                              f"run's engine ({generator.device}); resume with the model.device the run "
                              "started with") from None

    def sync_weights(self) -> None:
        fsdp = self.config.train.fsdp  # the shards gathered on every rank (LoRA is refused with FSDP)
        weights = self.parts.trainer.full_state_dict() if fsdp else engine_weights(self.parts.model)
        self.parts.engine.load_weights(weights, version=self.step)

    def checkpoint(self) -> None:
        state = {"optimizer": self.parts.trainer.optimizer_state(), "elapsed": self.elapsed,
                 "compute": dict(self.compute), "best": self.best, "monitor": self.monitor.state_dict(),
                 **self.critic_state(),
                 **self.next_batch_state()}
        self.save(self.folder.checkpoints, state, self.config.checkpoint.keep)
        self.schedule.written(self.step)

    def save(self, root, state: dict, keep: int) -> None:
        """Under FSDP every rank gathers the weights (a collective) and rank 0 alone writes."""
        weights = self.parts.trainer.full_state_dict() if self.config.train.fsdp else None
        if self.folder.writes:
            save_checkpoint(root, self.step, self.parts.model, state, keep, weights=weights)

    def next_batch_state(self) -> dict:
        """The loop state from which the next batch to train on will be drawn."""
        return self.loop_state()

    def evaluate(self, size: int | None = None) -> float:
        test = self.parts.test_set[: size if size is not None else self.config.eval.size]
        return greedy_accuracy(self.parts.engine, test, self.parts.reward_fn,
                               max_new_tokens=self.config.eval.max_new_tokens, stop=self.parts.sampling.stop)

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
        c = self.config
        while self.step < c.train.steps and not self.stop_requested:
            if c.train.time_limit_s is not None and self.elapsed >= c.train.time_limit_s:
                display.note(f"stopping: train.time_limit_s = {c.train.time_limit_s} reached")
                break
            metrics = self.train_step()
            if self.should_eval():
                with self.watchdog.stage("eval", self.step):
                    metrics.update(self.eval_metrics())
                with self.watchdog.stage("checkpoint", self.step, critical=True):  # the best one
                    self.keep_if_best(metrics)
            if c.eval.forecast_every and self.step % c.eval.forecast_every == 0:
                forecast, message = forecast_metrics([*self.folder.read_metrics(), metrics])
                metrics.update(forecast)
                display.note(message)
            self.folder.append_metrics(metrics)
            if board is not None:
                board.write(metrics)
            if self.schedule.due(self.step):
                with self.watchdog.stage("checkpoint", self.step, critical=True):
                    self.checkpoint()
            display.update(self.step, metrics)
            for warning in self.warnings:
                display.note(f"step {self.step}: monitor: {warning}")
        if self.step > self.schedule.last_step:  # the last step, the time limit, or Ctrl-C
            with self.watchdog.stage("checkpoint", self.step, critical=True):
                self.checkpoint()

    def eval_metrics(self) -> dict[str, float]:
        """Greedy accuracy, and pass@k from `eval.samples` completions per prompt when set."""
        metrics = {"eval/accuracy": self.evaluate()}
        e = self.config.eval
        if e.samples:
            metrics.update(sampled_pass_at_k(self.parts, self.parts.test_set[:e.size], e, self.config.run.seed))
        return metrics

    def keep_if_best(self, metrics: dict[str, float]) -> None:
        """Keep a copy of the checkpoint whose `eval.keep_best` metric is the best so far."""
        name = self.config.eval.keep_best
        if name is None or metrics.get(name, float("-inf")) <= self.best:
            return
        self.best = metrics[name]
        state = {"metric": name, "value": self.best}
        self.save(self.folder.path / "best_checkpoint", state, keep=1)

    def should_eval(self) -> bool:
        e = self.config.eval
        return bool(e.size and self.parts.test_set and e.every and self.step % e.every == 0)

    def train_step(self) -> dict[str, float]:
        """One synchronous step: produce a batch with the current weights, then train on it."""
        return self.consume(self.produce())

    def loop_state(self) -> dict:
        """What must be restored to draw the next batch exactly as this run would have."""
        state = {"sampler": self.sampler.state(), "engine_rng": self.parts.engine.generator.get_state()}
        if self.curriculum is not None:
            state["curriculum"] = self.curriculum.state_dict()
        return state

    def produce(self, step: int | None = None) -> Produced:
        """Draw prompts, generate G completions each, and score them (for `step`, by default
        the next one; the watchdog's stages name it)."""
        c, p, wd = self.config, self.parts, self.watchdog
        step = self.step + 1 if step is None else step
        state = self.loop_state()
        timing = Counter()

        def generate(n: int):
            t0 = time.perf_counter()
            with wd.stage("sample", step):
                samples = self.sampler.next_batch(n, skip=self.is_retired)
            with wd.stage("generate", step):
                rollouts = p.engine.generate([s.prompt for s in samples], c.sampling.group_size, p.sampling)
            t1 = time.perf_counter()
            with wd.stage("score", step):
                scored = score_groups(p.reward_fn, samples, rollouts, c.reward.on_error)
            timing["generate"] += t1 - t0
            timing["score"] += time.perf_counter() - t1
            return scored

        groups, counts = select_groups(generate, c.sampling)
        update_curriculum(self.curriculum, groups, counts)
        if self.curriculum is not None:
            counts.update(self.curriculum.metrics())
        # The oldest weights behind any token of the batch (in-flight updates mix versions).
        oldest = min((s.rollout.policy_version for g in groups for s in g), default=p.engine.policy_version)
        return Produced(groups, counts, timing["generate"], timing["score"], state, oldest)

    def critic_state(self) -> dict:
        critic = self.parts.critic
        if critic is None:
            return {}
        return {"critic": critic.model.state_dict(), "critic_optimizer": critic.optimizer.state_dict()}

    def watch(self, scored: list[Scored]) -> dict[str, float]:
        """Reward-hacking monitors (docs/rewards.md): their metrics, and warnings kept for the
        display when a threshold is crossed."""
        metrics = step_monitor_metrics(scored)
        self.warnings = self.monitor.check(metrics)
        metrics["monitor/warnings"] = float(len(self.warnings))
        return metrics

    def is_retired(self, sample) -> bool:
        return self.curriculum is not None and self.curriculum.is_retired(sample.prompt)

    def consume(self, produced: Produced, wait_s: float = 0.0) -> dict[str, float]:
        """Train on a produced batch, push the new weights to the engine, and report."""
        c, p = self.config, self.parts
        t0 = time.perf_counter()
        with self.watchdog.stage("train", self.step + 1):
            built = build_batch(produced.groups, BatchSpec.from_config(c),
                                BatchModels(p.model, p.ref_model, p.critic, pad_token_id(p.tokenizer)))
            batch, shaping, critic_data = built.batch, built.metrics, built.critic_targets
            metrics: dict[str, float] = {}
            if critic_data is not None:
                shaping.update(p.critic.step(batch, *critic_data))
            if self.step >= c.critic.pretrain_steps or critic_data is None:
                for _ in range(c.train.updates_per_batch):
                    metrics = p.trainer.step(batch)
            else:  # VAPO value pretraining: the critic learns, the policy waits
                metrics = {"critic/pretraining": 1.0}
        self.step += 1
        with self.watchdog.stage("sync", self.step):
            self.sync_weights()
        train_s = time.perf_counter() - t0
        # Sync: the step is generation + training. Async: what the trainer waited + training.
        step_s = train_s + (wait_s if self.overlapped else produced.generate_s + produced.score_s)
        self.elapsed += step_s
        metrics.update(rollout_metrics(produced.groups))
        metrics.update(staleness_metrics(produced.groups, self.step - 1))
        metrics.update({k: float(v) for k, v in produced.counts.items()})
        metrics.update(p.engine.stats())
        metrics.update(self.watch([s for g in produced.groups for s in g]))
        metrics.update(shaping)
        metrics.update(self.count_compute(batch))
        metrics.update({"step": self.step, "time/generate_s": produced.generate_s, "time/score_s": produced.score_s,
                        "time/step_s": step_s, "time/elapsed_s": self.elapsed,
                        "throughput/tokens_per_s": float(batch.completion_mask.sum()) / step_s,
                        "adv/abs_mean": float(batch.adv.abs().sum() / batch.completion_mask.sum()),
                        "async/staleness": float(self.step - 1 - produced.policy_version)})
        self.folder.append_samples(sample_rows(produced.groups, self.step, c.log.samples_per_step))
        return dict(sorted(metrics.items(), key=lambda kv: (kv[0] != "step", kv[0])))

    def count_compute(self, batch) -> dict[str, float]:
        """Cumulative compute, approximated as 2 FLOPs per parameter per token forward and 6
        forward + backward (P = all parameters): generation runs prompt + completion tokens
        forward once, training runs them forward and backward per update, a reference model
        forward once."""
        seen = float(batch.attention_mask.sum())
        updates = self.config.train.updates_per_batch
        ref = 1.0 if self.parts.ref_model is not None else 0.0
        self.compute["compute/tokens_generated"] += float(batch.completion_mask.sum())
        self.compute["compute/tokens_trained"] += seen * updates
        self.compute["compute/flops"] += self.n_params * seen * (2.0 + 6.0 * updates + 2.0 * ref)
        return dict(self.compute)

