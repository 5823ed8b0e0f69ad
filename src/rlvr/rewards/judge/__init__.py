"""GenRM judges: a model reasons, then answers yes or no; the reward is its P(yes).

`genrm.py` holds the maths and the prompt; `backend.py` the two-method contract a judge model
meets; `http_backend.py` (an OpenAI-compatible server, standard library) implements it, and
so does `rlvr.orchestrate.judge_backend` (a model in process: it lives with the model code,
since `rewards` imports none).
"""

from rlvr.rewards.judge.backend import JudgeBackend, ReasonParams
from rlvr.rewards.judge.genrm import (
           DEFAULT_QUESTION,
           GenRMJudge,
           JudgeReward,
           judge_prompt,
           p_yes,
)
from rlvr.rewards.judge.http_backend import HttpJudgeBackend

__all__ = ["DEFAULT_QUESTION", "GenRMJudge", "HttpJudgeBackend", "JudgeBackend", "JudgeReward",
           "ReasonParams", "judge_prompt", "p_yes"]
