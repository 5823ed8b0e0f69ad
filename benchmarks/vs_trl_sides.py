"""One side of `benchmarks/vs_trl.py`, run in its own process so that peak RSS is per run.

    python benchmarks/vs_trl_sides.py SPEC.json OUT.json

SPEC.json (written by vs_trl.py) names the side ("rlvr" or "trl"), the model folder, the
prompt rows in the order both sides consume them, the reward, the sampling and the training
settings. OUT.json gets the per-step wall times, the median split (generation, scoring,
training), the completion tokens, the load average before and after, and the peak RSS.

rlvr runs through `rlvr.orchestrate.train` (what `rlvr train` runs), TRL through
`trl.GRPOTrainer.train()`. A step's time is the cycle from one step's start to the next one's
(rlvr: consecutive `on_step` callbacks, called once a step's metrics line is written and
shown; TRL: consecutive `on_step_begin` callbacks, the last one closed by `on_train_end`), so
either side's per-step logging counts. (Before 2026-12-02 rlvr's cycle was the difference of
consecutive `time/elapsed_s`, which leaves out the metrics line, samples.jsonl and the display:
about 2 ms a demo step, benchmarks/step_overhead.py.)
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import json  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # so that rlvr's reward.function can import last_int from here

_INT = re.compile(r"-?\d+")


def last_int(response: str, gold: str) -> float:
    """WORKLOAD.md's reward: the last integer of the completion equals the gold, 1.0 or 0.0."""
    found = _INT.findall(response)
    return float(bool(found) and int(found[-1]) == int(gold))


def rss_mib(field: str = "VmRSS", pid: int | str = "self") -> float:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":")) / 1024


def peak_rss_mib() -> float:
    """This process's peak resident size (VmHWM). Not ru_maxrss: Linux carries the forking
    parent's peak across exec into it (vs_trl.py's own ~800 MiB floored the small workloads'
    figures until 2026-12-06)."""
    return rss_mib("VmHWM")


class PssPeaks:
    """A thread that samples every `period_s` the PSS (proportional set size) of this process
    and of its children (rlvr's local rollout workers), and keeps the largest children's total
    and the largest whole-tree total. PSS splits each shared page among the processes mapping
    it, so the tree's sum counts the shared weights and copy-on-write pages once; a sample can
    miss a peak shorter than the period (VmHWM cannot, but counts shared pages in full)."""

    def __init__(self, period_s: float = 0.1):
        import threading

        self.children_mib = self.tree_mib = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(period_s,), daemon=True)
        self._thread.start()

    @staticmethod
    def _pss_kib(pid: int) -> int:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                return next(int(line.split()[1]) for line in f if line.startswith("Pss:"))
        except (OSError, StopIteration):
            return 0  # gone between the listing and the read

    def _run(self, period_s: float) -> None:
        import psutil

        me = psutil.Process()
        while not self._stop.wait(period_s):
            children = sum(self._pss_kib(c.pid) for c in me.children(recursive=True)) / 1024
            self.children_mib = max(self.children_mib, children)
            self.tree_mib = max(self.tree_mib, children + self._pss_kib(me.pid) / 1024)

    def stop(self) -> "PssPeaks":
        self._stop.set()
        self._thread.join()
        return self


def children_hwm_mib(into: dict) -> None:
    """Each child process's VmHWM (MiB) into `into` by pid (O(1) per child: a status read)."""
    import psutil

    for child in psutil.Process().children(recursive=True):
        try:
            into[child.pid] = rss_mib("VmHWM", child.pid)
        except (OSError, StopIteration):
            continue  # gone between the listing and the read


def workers_mib(result: dict, pss: "PssPeaks | None") -> float:
    return pss.children_mib if pss is not None else sum(result.get("workers_hwm_mib", {}).values())


def _toml(value) -> str:
    return json.dumps(value) if isinstance(value, (str, list)) else str(value).lower() \
        if isinstance(value, bool) else repr(value)


def rlvr_config_text(spec: dict, out_dir: str) -> str:
    """The run's TOML: the jsonl prompts, the reward function and the spec's settings."""
    sections = {
        "run": {"name": spec["name"], "seed": 0, "output_dir": out_dir},
        "model": {"path": spec["model_dir"]},
        "task": {"kind": "jsonl", "train_path": spec["prompts_path"]},
        "reward": {"function": "vs_trl_sides:last_int"},
        "sampling": {"group_size": spec["group"], "prompts_per_step": spec["prompts_per_step"],
                     "temperature": 1.0, "top_p": 1.0, "max_new_tokens": spec["new_tokens"],
                     "min_new_tokens": spec["min_new_tokens"], "zero_variance": "keep"},
        "algo": {"baseline": "group_mean", "scale": "group_std", "adv_eps": 1e-4, "surrogate": "ppo_clip",
                 "eps_low": 0.2, "eps_high": 0.2, "aggregation": spec["aggregation"], "kl": "none"},
        "train": {"steps": spec["steps"], "lr": spec["lr"], "micro_batch_size": spec["micro_batch"],
                  "gradient_checkpointing": spec.get("gradient_checkpointing", False), "updates_per_batch": 1,
                  "max_grad_norm": 1.0, "weight_decay": 0.0, "time_limit_s": 1e6},
        "eval": {"size": 0}, "log": {"samples_per_step": 0, "progress": "none"},
        "checkpoint": {"every_minutes": 0.0},
        "orchestrate": {"mode": spec["mode"], "max_staleness": spec["max_staleness"],
                        "rollout_workers": spec.get("rollout_workers", 1)},
    }
    return "\n".join(f"[{name}]\n" + "".join(f"{k} = {_toml(v)}\n" for k, v in body.items())
                     for name, body in sections.items())


def run_rlvr(spec: dict) -> dict:
    from rlvr.config import load_config
    from rlvr.orchestrate import train

    with tempfile.TemporaryDirectory() as tmp:
        common = [f"run.output_dir={tmp}", f"train.steps={spec['steps']}", "eval.size=0",
                  "log.progress=none", "log.samples_per_step=0", "checkpoint.every_minutes=0",
                  "train.time_limit_s=1000000", f"orchestrate.mode={spec['mode']}",
                  f"orchestrate.max_staleness={spec['max_staleness']}",
                  f"train.gradient_checkpointing={str(spec.get('gradient_checkpointing', False)).lower()}",
                  f"orchestrate.rollout_workers={spec.get('rollout_workers', 1)}"]
        if spec.get("recipe"):  # the demo: the recipe itself, with the benchmark's overrides
            config = load_config(spec["recipe"], common)
        else:
            path = Path(tmp) / "recipe.toml"
            path.write_text(rlvr_config_text(spec, tmp))
            config = load_config(path, common)
        ends: list[float] = []  # each step's end, once its metrics line is written and shown
        workers: dict[int, float] = {}  # local rollout workers' VmHWM by pid, read after each step

        def on_step(step, metrics):
            ends.append(time.perf_counter())
            children_hwm_mib(workers)

        rows = train(config, on_step=on_step).folder.read_metrics()
    cycles = [b - a for a, b in zip(ends, ends[1:])]  # steps 2..N, each from the previous one's end
    later = rows[1:]
    med = lambda key: statistics.median(r[key] for r in later)  # noqa: E731
    train_s = [r["time/train_forward_s"] + r["time/backward_s"] + r["time/optimizer_s"] for r in later]
    return {"step_s": cycles, "generation_s": med("time/generate_s"), "scoring_s": med("time/score_s"),
            "training_s": statistics.median(train_s), "workers_hwm_mib": workers, 
            "completion_tokens": [r["response/length_mean"] * spec["group"] * spec["prompts_per_step"]
                                  for r in rows]}


def run_trl(spec: dict) -> dict:
    import torch
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import GRPOTrainer

    score = _trl_reward(spec)

    def reward(prompts, completions, gold, **_):
        return [score(c, g) for c, g in zip(completions, gold)]

    rows = [json.loads(line) for line in Path(spec["prompts_path"]).read_text().splitlines() if line.strip()]
    per_step = spec["prompts_per_step"]
    need = per_step * spec["steps"]
    data = Dataset.from_list([{"prompt": r["prompt"], "gold": str(r["answer"])} for r in spec_order(rows, per_step, need)])
    model = AutoModelForCausalLM.from_pretrained(spec["model_dir"], dtype=torch.float32)
    tok = AutoTokenizer.from_pretrained(spec["model_dir"])
    marks: list[float] = []
    timing = {"generation": [], "scoring": [], "prepare": []}

    class Clock(TrainerCallback):
        def on_step_begin(self, *a, **k):
            marks.append(time.perf_counter())

        def on_train_end(self, *a, **k):
            marks.append(time.perf_counter())

    with tempfile.TemporaryDirectory() as tmp:
        args = trl_args(spec, tmp)
        trainer = GRPOTrainer(model=model, reward_funcs=reward, args=args, train_dataset=data,
                              processing_class=tok, callbacks=[Clock()])
        for method, key in (("_generate", "generation"), ("_calculate_rewards", "scoring"),
                            ("_generate_and_score_completions", "prepare")):
            setattr(trainer, method, _timed(getattr(trainer, method), timing[key]))
        trainer.train()
        history = trainer.state.log_history
    cycles = [b - a for a, b in zip(marks, marks[1:])][1:]  # steps 2..N
    prepare = statistics.median(timing["prepare"][1:])
    return {"step_s": cycles, "generation_s": statistics.median(timing["generation"][1:]),
            "scoring_s": statistics.median(timing["scoring"][1:]),
            "training_s": statistics.median(cycles) - prepare,
            "completion_tokens": [h.get("completions/mean_length", 0) * per_step * spec["group"]
                                  for h in history if "loss" in h]}


def trl_args(spec: dict, out_dir: str):
    """TRL's GRPOConfig for the spec: the same batch, sampling, loss, optimiser and schedule."""
    from trl import GRPOConfig

    return GRPOConfig(
        output_dir=out_dir, per_device_train_batch_size=spec["prompts_per_step"] * spec["group"],
        gradient_accumulation_steps=1, num_generations=spec["group"], max_completion_length=spec["new_tokens"],
        generation_kwargs={"min_new_tokens": spec["min_new_tokens"]} if spec["min_new_tokens"] else None,
        temperature=1.0, top_p=1.0, top_k=0, beta=0.0, epsilon=0.2, scale_rewards="group",
        loss_type="dapo" if spec["aggregation"] == "token_mean" else "grpo",
        learning_rate=spec["lr"], lr_scheduler_type="constant", warmup_steps=0, weight_decay=0.0,
        adam_beta1=0.9, adam_beta2=0.999, adam_epsilon=1e-8, max_grad_norm=1.0,
        # TRL's GRPOConfig turns activation checkpointing on by default; rlvr's is off: both as the spec says
        activation_checkpointing=spec.get("gradient_checkpointing", False),
        max_steps=spec["steps"], logging_steps=1, report_to="none", save_strategy="no", use_cpu=True,
        shuffle_dataset=False, seed=0, dataloader_num_workers=0, disable_dropout=True, bf16=False)


def spec_order(rows: list[dict], per_step: int, need: int) -> list[dict]:
    """The prompts in the order rlvr's PromptSampler (seed 0 = run.seed) draws them, so that
    TRL, reading its dataset unshuffled, gets the same prompts at every step."""
    from rlvr.tasks.sampler import PromptSampler
    from rlvr.types import Sample

    sampler = PromptSampler([Sample(prompt=r["prompt"], answer=str(r["answer"])) for r in rows], seed=0)
    picks = [s for _ in range(need // per_step) for s in sampler.next_batch(per_step)]
    return [{"prompt": s.prompt, "answer": s.answer} for s in picks]


def _trl_reward(spec: dict):
    if spec["reward"] == "last_int":
        return last_int
    from rlvr.rewards import MathVerifier

    verifier = MathVerifier()
    return lambda response, gold: verifier(response=response, gold=gold).score


def _timed(fn, into: list[float]):
    def wrapper(*a, **k):
        t0 = time.perf_counter()
        out = fn(*a, **k)
        into.append(time.perf_counter() - t0)
        return out
    return wrapper


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text())
    import torch

    torch.set_num_threads(spec["threads"])
    if spec["side"] == "rlvr":
        import rlvr.orchestrate  # noqa: F401  (so that RSS after import counts each side's library)
    else:
        import trl.trainer.grpo_trainer  # noqa: F401
    load_before, rss_import = os.getloadavg(), rss_mib()
    # Reading smaps_rollup walks a process's page tables: at 10 Hz that CPU time slowed a
    # 2-thread training phase by 10-30% on 2 cores, so the PSS sampler runs only when asked.
    pss = PssPeaks() if spec.get("pss") else None
    t0 = time.perf_counter()
    result = run_rlvr(spec) if spec["side"] == "rlvr" else run_trl(spec)
    if pss is not None:
        pss.stop()
    result.update({
        "side": spec["side"], "mode": spec["mode"], "wall_s": time.perf_counter() - t0,
        "load_before": load_before, "load_after": os.getloadavg(), "rss_after_import_mib": rss_import,
        # With local rollout workers: their peak PSS (sampled, --pss) or else their VmHWM is
        # added to this process's VmHWM, a bound from above on the tree (the pages they share
        # with it count twice, and in full without --pss).
        "peak_rss_own_mib": peak_rss_mib(), "workers_peak_mib": workers_mib(result, pss),
        "peak_rss_mib": peak_rss_mib() + workers_mib(result, pss),
        "peak_tree_pss_mib": pss.tree_mib if pss is not None else None,
        "s_per_step": statistics.median(result["step_s"])})
    Path(sys.argv[2]).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
