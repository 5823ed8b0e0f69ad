"""`rlvr sft` against TRL's `SFTTrainer` on the same rows, model and batch, side by side in one
run: trained tokens per second of wall time (loss on completions only on both sides).

Rows: the filtered spec-demo rows (prompt/completion, `rlvr spec generate` + `filter` into a
temporary folder); model: models/tiny-spec; batch 32, constant lr 3e-3, no packing, fp32,
CPU. Both sides run in this process, alternating, `--rounds` times; the first round of each
warms up and is reported but not in the ratio.

    python benchmarks/sft_vs_trl.py [--steps 40] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from rlvr.orchestrate import spec_pipeline as pipe  # noqa: E402
from rlvr.orchestrate.sft_run import load_sft_config, sft  # noqa: E402
from rlvr.spec.document import load_spec  # noqa: E402

MODEL = REPO / "models" / "tiny-spec"


def rows(work: Path) -> Path:
    spec = load_spec(REPO / "specs" / "assistant_v1.toml")
    pipe.generate(spec, work, 600, 0, pipe.scripted_teacher(spec, noise=0.3))
    pipe.filter_rows(spec, work)
    return work / pipe.SFT_ROWS


def run_rlvr(data: Path, out: Path, steps: int, name: str) -> tuple[float, int]:
    config = load_sft_config(None, [f"data.train_path={data}", f"model.path={MODEL}", f"run.output_dir={out}",
                                    f"run.name={name}", f"train.steps={steps}", "train.batch_size=32",
                                    "train.micro_batch_size=32", "train.lr=3e-3", "checkpoint.every_minutes=0",
                                    "eval.every=0", "data.max_length=96"])
    tokens = []
    t0 = time.perf_counter()
    sft(config, on_step=lambda s, m: tokens.append(m["sft/tokens"]))
    return time.perf_counter() - t0, int(sum(tokens))


def run_trl(data: Path, out: Path, steps: int) -> tuple[float, int]:
    import datasets
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback
    from trl import SFTConfig, SFTTrainer

    counted = []

    class Count(TrainerCallback):
        def on_step_end(self, args, state, control, **kw):
            return control

    tok = AutoTokenizer.from_pretrained(MODEL)
    model = AutoModelForCausalLM.from_pretrained(MODEL)
    ds = datasets.load_dataset("json", data_files=str(data), split="train")
    args = SFTConfig(output_dir=str(out), max_steps=steps, per_device_train_batch_size=32, learning_rate=3e-3,
                     lr_scheduler_type="constant", completion_only_loss=True, packing=False, max_length=96,
                     report_to=[], save_strategy="no", logging_steps=10_000, use_cpu=True, dataloader_num_workers=0,
                     warmup_steps=0, weight_decay=0.0, seed=0,
                     activation_checkpointing=False)  # TRL's SFTConfig default is on; rlvr's side does not recompute
    trainer = SFTTrainer(model=model, args=args, train_dataset=ds, processing_class=tok, callbacks=[Count()])
    loader = trainer.get_train_dataloader()
    for i, batch in enumerate(loader):  # the trained tokens of the batches it will draw
        if i >= steps:
            break
        counted.append(int((batch["labels"][:, 1:] != -100).sum()))
    t0 = time.perf_counter()
    trainer.train()
    return time.perf_counter() - t0, sum(counted) * steps // max(len(counted), 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = rows(work / "data")
        results = []
        for r in range(args.rounds):
            rs, rt = run_rlvr(data, work / "rlvr", args.steps, f"r{r}")
            ts, tt = run_trl(data, work / f"trl{r}", args.steps)
            results.append({"round": r, "rlvr_tok_s": rt / rs, "trl_tok_s": tt / ts, "rlvr_s": rs, "trl_s": ts})
            print(json.dumps(results[-1]), flush=True)
    timed = results[1:] or results
    ratio = sum(x["rlvr_tok_s"] / x["trl_tok_s"] for x in timed) / len(timed)
    print(json.dumps({"rlvr_over_trl_tokens_per_s": round(ratio, 2), "load": os.getloadavg(),
                      "threads": os.environ.get("OMP_NUM_THREADS")}))


if __name__ == "__main__":
    main()
