"""Break the batch chain once per mutation, in a scratch copy of the repository, and report
which of the chain's tests catch each break (issue 13: "break the code once and see a test fail").

    PYTHONPATH=src python scripts/mutate_batch_chain.py [test files...]

Defaults to tests/orchestrate/test_batch_chain.py and test_batch_golden.py. The working tree is
never modified; each mutation gets a fresh copy of src/ in a temporary folder.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
STEPS, BUILDER = "src/rlvr/orchestrate/batch_steps.py", "src/rlvr/orchestrate/batch_builder.py"
BREAKS = [  # (name, file, text, replacement): each text must occur exactly once
    ("KL sign in the group advantage", STEPS, "rewards - kl_penalty.sum(1)", "rewards + kl_penalty.sum(1)"),
    ("KL penalty negated", STEPS, "    return penalty, {\"reward/kl", "    penalty = -penalty\n    return penalty, {\"reward/kl"),
    ("KL sign in GAE", STEPS, "token_rewards = token_rewards - kl_penalty", "token_rewards = token_rewards + kl_penalty"),
    ("KL sign in REINFORCE++", "src/rlvr/algo/returns.py", "token_rewards - kl_penalty * mask",
     "token_rewards + kl_penalty * mask"),
    ("truncation mask skipped", BUILDER, "mask, more = steps.mask_truncated_rows(", "_, more = steps.mask_truncated_rows("),
    ("advantage not masked", BUILDER, "    adv = adv * mask\n", ""),
    ("LM weights from shaped rewards", BUILDER, "imitation_weights(mask, outcomes.rewards,", "imitation_weights(mask, rewards,"),
    ("mismatch keeps the engine's pi_old", BUILDER, "old_logp=trainer_logp, is_weight", "is_weight"),
    ("overlong penalty sign", STEPS, "return rewards + penalty,", "return rewards - penalty,"),
    ("lam_critic ignored", STEPS, "lam_critic=spec.lam if spec.lam_critic is None else spec.lam_critic",
     "lam_critic=spec.lam"),
    ("covariance before the truncation mask", BUILDER, "covariance_selection(adv, batch.old_logp, mask,",
     "covariance_selection(adv, batch.old_logp, batch.completion_mask,"),
    ("log-probs without temperature", STEPS, "batch_logprobs(model, batch, temperature)", "batch_logprobs(model, batch)"),
]


def run_with_break(scratch: Path, path: str, old: str, new: str, tests: list[str]) -> list[str]:
    """The failing test names with one break applied to a fresh copy of src/."""
    shutil.rmtree(scratch / "src", ignore_errors=True)
    shutil.copytree(REPO / "src", scratch / "src")
    target = scratch / path
    text = target.read_text()
    if text.count(old) != 1:
        raise SystemExit(f"{path}: the text to break occurs {text.count(old)} times, not once: {old!r}")
    target.write_text(text.replace(old, new))
    env = {**os.environ, "PYTHONPATH": str(scratch / "src")}
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests],
                       cwd=REPO, env=env, capture_output=True, text=True)
    return sorted({line.split("::")[-1].split("[")[0].split(" ")[0] for line in r.stdout.splitlines()
                   if line.startswith("FAILED")})


def main() -> None:
    tests = sys.argv[1:] or ["tests/orchestrate/test_batch_chain.py", "tests/orchestrate/test_batch_golden.py"]
    caught = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, path, old, new in BREAKS:
            failed = run_with_break(Path(tmp), path, old, new, tests)
            caught += bool(failed)
            print(f"{'caught' if failed else 'MISSED'}  {name}: {', '.join(failed) or '-'}")
    print(f"{caught}/{len(BREAKS)} breaks caught")


if __name__ == "__main__":
    main()
