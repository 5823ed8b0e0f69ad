"""The no-positive-resampling curriculum (ScaleRL, arXiv:2510.13786; after POLARIS).

A prompt the policy already solves almost always gives a zero-variance group and costs
generation for no gradient. After each visit, a prompt whose pass rate over its latest group
reaches the threshold (the paper: "pass rate >= 0.9") is retired for the rest of the run.
The paper speaks of a prompt's historical pass rate; rlvr takes that of the latest group,
because the policy of earlier visits is stale (a prompt failed at step 10 and solved 8/8 at
step 500 is solved now). This is a deliberate difference, tested.

With G completions a prompt is retired when at least 0.9 G pass: 8 of 8, 9 of 10, 15 of 16.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence


class PassRateTracker:
    """Per-prompt pass rates and the set of retired prompts, keyed by a stable prompt id
    (e.g. `Sample.source`). Plain Python state: `state_dict` / `load_state_dict` round-trip
    through a checkpoint, so a resumed run retires exactly the same prompts."""

    def __init__(self, threshold: float = 0.9, success: float = 1.0):
        if not 0.0 < threshold <= 1.0:
            raise ValueError(f"pass-rate threshold must be in (0, 1], got {threshold}")
        self.threshold = threshold
        self.success = success  # a completion passes when its reward >= success
        self._last_rate: dict[str, float] = {}
        self._attempts: dict[str, int] = {}
        self._retired: set[str] = set()

    def update(self, key: str, rewards: Sequence[float]) -> bool:
        """Record one group of rewards for prompt `key`; True when this visit retires it."""
        if not rewards:
            raise ValueError(f"prompt {key!r}: an empty group has no pass rate")
        rate = sum(r >= self.success for r in rewards) / len(rewards)
        self._last_rate[key] = rate
        self._attempts[key] = self._attempts.get(key, 0) + len(rewards)
        if rate >= self.threshold and key not in self._retired:
            self._retired.add(key)
            return True
        return False

    def is_retired(self, key: str) -> bool:
        return key in self._retired

    def active(self, keys: Iterable[str]) -> list[str]:
        """The keys not retired, in their order."""
        return [k for k in keys if k not in self._retired]

    def pass_rate(self, key: str) -> float | None:
        """Pass rate of the latest group of `key`, or None if never seen."""
        return self._last_rate.get(key)

    def metrics(self) -> dict[str, float]:
        return {"curriculum/retired": float(len(self._retired)),
                "curriculum/seen": float(len(self._last_rate))}

    def state_dict(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "success": self.success,
                "last_rate": dict(self._last_rate), "attempts": dict(self._attempts),
                "retired": sorted(self._retired)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if (state["threshold"], state["success"]) != (self.threshold, self.success):
            raise ValueError(
                f"checkpoint curriculum has threshold={state['threshold']}, success={state['success']}; "
                f"this run has threshold={self.threshold}, success={self.success}")
        self._last_rate = dict(state["last_rate"])
        self._attempts = dict(state["attempts"])
        self._retired = set(state["retired"])
