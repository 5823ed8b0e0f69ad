"""Which phase of a vs_trl.py run sets its peak RSS, rlvr against TRL on the same workload.

    OMP_WAIT_POLICY=PASSIVE python benchmarks/rss_phases.py [--only g7,w1] [--steps 2]

Each side runs in its own process (vs_trl_sides.run_rlvr / run_trl, the same settings as
vs_trl.py), with a thread that reads VmRSS from /proc/self/status every 5 ms and files it
under the innermost phase running then: `generate` (rlvr: `HFEngine.generate_ids`; TRL:
`GRPOTrainer._generate`), `train` (rlvr: `Trainer.step`; TRL: from its `on_step_begin` to its
`on_step_end` callback, outside the nested generation: forward, backward, clipping and the
optimiser step on both sides) or `other` (imports, model load, set-up). Sync runs only: the
phase stack is one list, which an async run's two threads would interleave. It prints each phase's peak and
the process's VmHWM, so an excess in vs_trl.py's table can be put on a phase.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import vs_trl_sides  # noqa: E402


class PhaseRSS:
    """Peak VmRSS per phase; `enter(name)` returns a context manager, phases may nest."""

    def __init__(self, every_s: float = 0.005):
        self.stack, self.peak, self.every_s = ["other"], {}, every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.wait(self.every_s):
            phase, rss = self.stack[-1], vs_trl_sides.rss_mib()
            self.peak[phase] = max(self.peak.get(phase, 0.0), rss)

    def wrap(self, owner, method: str, phase: str) -> None:
        inner = getattr(owner, method)

        def wrapper(*a, **k):
            self.stack.append(phase)
            try:
                return inner(*a, **k)
            finally:
                self.stack.pop()
        setattr(owner, method, wrapper)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def run_side(spec: dict) -> dict:
    import torch

    torch.set_num_threads(spec["threads"])
    tracker = PhaseRSS()
    if spec["side"] == "rlvr":
        from rlvr.engines.hf import HFEngine
        from rlvr.train.trainer import Trainer
        tracker.wrap(HFEngine, "generate_ids", "generate")
        tracker.wrap(Trainer, "step", "train")
    else:
        from transformers import TrainerCallback
        from trl import GRPOTrainer

        class Phase(TrainerCallback):
            def on_step_begin(self, *a, **k):
                tracker.stack.append("train")

            def on_step_end(self, *a, **k):
                tracker.stack.pop()
        tracker.wrap(GRPOTrainer, "_generate", "generate")
        init = GRPOTrainer.__init__

        def with_phase(self, *a, callbacks=None, **k):
            init(self, *a, callbacks=[*(callbacks or []), Phase()], **k)
        GRPOTrainer.__init__ = with_phase
    with tracker:
        result = (vs_trl_sides.run_rlvr if spec["side"] == "rlvr" else vs_trl_sides.run_trl)(spec)
    return {"side": spec["side"], "peak_by_phase_mib": tracker.peak, "vm_hwm_mib": vs_trl_sides.peak_rss_mib(),
            "s_per_step": sorted(result["step_s"])[len(result["step_s"]) // 2]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="g7,w1", help="vs_trl.py workloads, comma-separated")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--side-spec", help=argparse.SUPPRESS)  # internal: run one side in this process
    args = parser.parse_args()
    if args.steps < 2:
        parser.error("--steps must be at least 2 (step 1 is warm-up and left out)")
    if args.side_spec:
        print(json.dumps(run_side(json.loads(Path(args.side_spec).read_text()))))
        return
    import vs_trl

    with tempfile.TemporaryDirectory(prefix="rss_phases-") as tmp:
        root = Path(tmp)
        for name in args.only.split(","):
            spec = vs_trl.specs(name, root, args.steps)
            assert spec["mode"] == "sync"
            row = {}
            for side in ("rlvr", "trl"):
                path = root / f"{name}-{side}.json"
                path.write_text(json.dumps({**spec, "side": side}))
                done = subprocess.run([sys.executable, __file__, "--side-spec", str(path)], capture_output=True,
                                      text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
                if done.returncode:
                    raise SystemExit(f"rss_phases: {name} {side} failed:\n{done.stderr[-2000:]}")
                row[side] = json.loads(done.stdout.strip().splitlines()[-1])
            phases = sorted(set(row["rlvr"]["peak_by_phase_mib"]) | set(row["trl"]["peak_by_phase_mib"]))
            print(f"{name} (load {os.getloadavg()[0]:.1f}): VmHWM rlvr {row['rlvr']['vm_hwm_mib']:.0f} / "
                  f"TRL {row['trl']['vm_hwm_mib']:.0f} MiB; peak VmRSS by phase, rlvr / TRL MiB: "
                  + ", ".join(f"{p} {row['rlvr']['peak_by_phase_mib'].get(p, 0):.0f} / "
                              f"{row['trl']['peak_by_phase_mib'].get(p, 0):.0f}" for p in phases), flush=True)


if __name__ == "__main__":
    main()
