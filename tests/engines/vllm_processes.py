"""vLLM's engine-core processes, found to be killed by the fault tests (the real-vLLM ones)."""

from __future__ import annotations


def engine_cores(pid: int | None = None) -> list:
    """psutil processes of vLLM's engine cores among the descendants of `pid` (this process by
    default); vLLM names them VLLM::EngineCore (the short name may be cut to 15 characters)."""
    import psutil

    found = []
    for p in psutil.Process(pid).children(recursive=True):
        try:
            if "EngineCore" in " ".join(p.cmdline()) + p.name():
                found.append(p)
        except psutil.Error:  # a process that ended while we looked
            continue
    return found
