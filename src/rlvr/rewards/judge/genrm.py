"""GenRM: a judge model reasons about a response, then says yes or no; the reward is P(yes).

For one (prompt, response, reference) the judge is shown `judge_prompt(...)`, samples k
reasonings r_1..r_k (`ReasonParams`), and for each one reads the next-token distribution p_j
after the text  judge_prompt + r_j + suffix  (suffix = "\\nAnswer:" by default):

    yes_j = sum of p_j(t) over tokens t that say yes,   no_j = likewise for no
    P_j(yes) = yes_j / (yes_j + no_j)                   (normalised over {yes, no})
    reward = (1 / k') * sum_j P_j(yes)                  over the k' samples that said either

A token *says yes* when its text, stripped of whitespace and lower-cased, is a non-empty prefix
of "yes" (" yes", "Yes", "y", "ye" all do); likewise for "no". So a verdict word split over
several tokens is judged by its first token, and a tokenizer that has " yes" as one token and
one that spells it character by character are treated alike. A whitespace-only token (" ",
"\\n") says neither: with a character-level tokenizer put the space into the suffix
("\\nAnswer: ") or its mass is lost to the normalisation (it is not counted as no).

Failures are never a silent 0: a sample whose top tokens hold neither word is left out of the
mean and the verdict carries the flag `judge_no_verdict` with a count in its reason; when no
sample said either, a RewardError is raised (with `reward.on_error = "zero"` it scores 0 and
is counted in `reward/errors`). (Zhang et al. 2024, "Generative Verifiers", arXiv:2408.15240.)
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from rlvr.errors import RewardError
from rlvr.rewards.judge.backend import JudgeBackend, ReasonParams
from rlvr.rewards.verdict import Verdict

DEFAULT_QUESTION = "Is the response a correct and complete answer to the task?"
NO_VERDICT = "judge_no_verdict"


def judge_prompt(prompt: str, response: str, question: str, reference: str = "") -> str:
    """The text the judge reads before reasoning; the reference is shown only when given."""
    ref = f"Reference answer:\n{reference}\n" if reference else ""
    return (f"Judge the response. Think briefly, then answer yes or no.\n"
            f"Task:\n{prompt}\nResponse:\n{response}\n{ref}Question: {question}\nReasoning:")


def says(token: str, word: str) -> bool:
    stripped = token.strip().lower()
    return bool(stripped) and word.startswith(stripped)


def p_yes(top: list[tuple[str, float]]) -> float | None:
    """P(yes) normalised over {yes, no} from (token, logprob) pairs; None if neither appears."""
    yes = sum(math.exp(lp) for tok, lp in top if says(tok, "yes"))
    no = sum(math.exp(lp) for tok, lp in top if says(tok, "no"))
    if yes + no == 0.0:
        return None
    return yes / (yes + no)


@dataclass(frozen=True)
class GenRMJudge:
    """Scores one response by the judge's mean P(yes) over `samples` reasonings.

    Attributes:
        backend: the judge model (see backend.py).
        samples: k, the number of reasonings.
        params: how the reasoning is sampled.
        top: how many next tokens the verdict reads (the HTTP backend asks the server for this
            many `logprobs`; in process the whole vocabulary is read when top >= its size).
        suffix: appended after the reasoning; the verdict is the token after it.
    """

    backend: JudgeBackend
    samples: int = 1
    params: ReasonParams = field(default_factory=ReasonParams)
    top: int = 20
    suffix: str = "\nAnswer:"

    def ask(self, prompt: str, response: str, question: str, reference: str = "") -> Verdict:
        head = judge_prompt(prompt, response, question, reference)
        params = ReasonParams(self.params.max_new_tokens, self.params.temperature,
                              self.params.stop or (self.suffix.strip(),))
        if params.max_new_tokens > 0:
            reasonings = self.backend.reason(head, self.samples, params)
        else:
            reasonings = [""] * self.samples
        tops = self.backend.next_token_logprobs([head + r + self.suffix for r in reasonings], self.top)
        return self.combine([p_yes(t) for t in tops], reasonings)

    def combine(self, probs: list[float | None], reasonings: list[str]) -> Verdict:
        said = [p for p in probs if p is not None]
        missing = len(probs) - len(said)
        if not said:
            raise RewardError(f"judge: none of {len(probs)} sample(s) put 'yes' or 'no' among its "
                              f"top {self.top} next tokens after {self.suffix!r}")
        score = sum(said) / len(said)
        shown = ", ".join(f"{p:.3f}" for p in said)
        first = " ".join(reasonings[0].split())[:80] if reasonings and reasonings[0] else ""
        reason = f"P(yes)={score:.3f} (samples: {shown})" + (f"; reasoning: {first}" if first else "")
        if missing:
            return Verdict(score, reason + f"; {missing}/{len(probs)} sample(s) had no yes/no "
                                           f"in the top {self.top} tokens", (NO_VERDICT,))
        return Verdict(score, reason)


@dataclass(frozen=True)
class JudgeReward:
    """`reward.verifier = "judge"`: the judge's P(yes) that the response answers the prompt
    correctly; the gold answer, when non-empty, is shown to the judge as the reference."""

    judge: GenRMJudge
    question: str = DEFAULT_QUESTION
    needs_prompt = True  # called as fn(response, gold, prompt=...) (orchestrate/scoring.py)

    def __call__(self, response: str, gold: str, *, prompt: str | None = None) -> Verdict:
        if prompt is None:
            raise RewardError("the judge reward needs the prompt; this caller passed none")
        return self.judge.ask(prompt, response, self.question, gold)
