"""The run's limit on environment faults (docs/env-openenv.md, "Faults").

An episode ended by an `EnvFault` (a remote environment down, slow or malformed) ends alone and
is counted; the run goes on. Once the share of one step's episodes that faulted exceeds
`max_rate` (env.max_failure_rate), the run stops with one line naming the count and the fault
names: a server that is gone would otherwise train on nothing, step after step. One step's
share, not the run's: a server that dies after a thousand good steps stops the run at once.
"""

from __future__ import annotations

from collections import Counter

from rlvr.envs.episodes import Episode
from rlvr.errors import EnvFaultRateError


def fault_metrics(episodes: list[Episode], max_rate: float, where: str) -> dict[str, float]:
    """`env/fault_rate` of this step's episodes; EnvFaultRateError when it exceeds `max_rate`."""
    faulted = Counter(ep.stop_reason for ep in episodes if ep.fault)
    n = sum(faulted.values())
    rate = n / len(episodes) if episodes else 0.0
    if rate > max_rate:
        names = ", ".join(f"{reason} {count}" for reason, count in faulted.most_common())
        first = next(ep.error for ep in episodes if ep.fault)
        raise EnvFaultRateError(f"{where}: {n} of {len(episodes)} episodes of this step ended by environment "
                                f"faults ({names}), over env.max_failure_rate = {max_rate:g}; first: {first}")
    return {"env/fault_rate": rate}
