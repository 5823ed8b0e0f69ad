"""Profile printing for benchmarks/step_throughput.py: torch.profiler op categories and cProfile."""

from __future__ import annotations

import cProfile
import io
import pstats

# Op categories for the torch-profiler summary (by aten op name, self CPU time).
CATEGORIES = {
    "GEMM (mm/addmm/bmm)": ("aten::mm", "aten::addmm", "aten::bmm", "aten::addmm_", "aten::baddbmm"),
    "attention (sdpa)": ("aten::_scaled_dot_product_flash_attention_for_cpu",
                         "aten::_scaled_dot_product_flash_attention_for_cpu_backward",
                         "aten::_scaled_dot_product_attention_math"),
    "cat / copy (KV cache, rotate_half, masks)": ("aten::cat", "aten::copy_", "aten::index_copy_",
                                                  "aten::index_put_", "aten::slice_scatter"),
}


def torch_profile_summary(prof, phase: str, top: int = 15) -> dict:
    events = [e for e in prof.key_averages() if e.key.startswith("aten::")]
    total = sum(e.self_cpu_time_total for e in events) / 1e6
    cats = {name: 0.0 for name in CATEGORIES}
    cats["elementwise and other aten ops"] = 0.0
    for e in events:
        for name, ops in CATEGORIES.items():
            if e.key in ops:
                cats[name] += e.self_cpu_time_total / 1e6
                break
        else:
            cats["elementwise and other aten ops"] += e.self_cpu_time_total / 1e6
    print(f"\n--- torch.profiler, {phase} of the last step: self CPU time of aten ops, {total:.2f} s "
          "(under the profiler, which slows small ops) ---")
    for name, sec in cats.items():
        print(f"  {name:44s} {sec:6.2f} s  {sec / total:5.1%}")
    shaped = sorted(prof.key_averages(group_by_input_shape=True), key=lambda e: -e.self_cpu_time_total)
    print(f"  top {top} ops by self time, with input shapes:")
    rows = []
    for e in [e for e in shaped if e.key.startswith("aten::")][:top]:
        shapes = str(e.input_shapes)[:70]
        print(f"    {e.self_cpu_time_total / 1e6:6.3f} s  {e.count:5d} calls  {e.key:40s} {shapes}")
        rows.append({"op": e.key, "self_s": e.self_cpu_time_total / 1e6, "calls": e.count, "shapes": shapes})
    return {"aten_self_s": total, "categories_s": cats, "top_ops": rows}


def print_profile(prof: cProfile.Profile, path: str | None, top: int = 25) -> None:
    if path:
        prof.dump_stats(path)
    for key in ("tottime", "cumulative"):
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).strip_dirs().sort_stats(key).print_stats(top)
        print(f"\n--- cProfile of the last step, by {key} ---")
        print(buf.getvalue().split("\n", 4)[-1].rstrip())
