"""Pure tensor functions of the algorithms: advantages, returns, GAE, ratios, surrogates,
aggregation, KL, value losses, reward shaping, filters and the curriculum.

Imports only torch and `rlvr.types`. Each axis is a plain dict from name to function.
"""

from rlvr.algo.advantages import BASELINES, SCALES, outcome_advantages
from rlvr.algo.aggregation import AGGREGATIONS
from rlvr.algo.curriculum import PassRateTracker
from rlvr.algo.filters import GroupFilter, nonzero_variance_groups
from rlvr.algo.gae import decoupled_gae, gae_advantages, length_adaptive_lambda
from rlvr.algo.kl import KL_ESTIMATORS, kl_estimate, kl_reward_penalty
from rlvr.algo.objective import Objective
from rlvr.algo.ratios import RATIO_LEVELS
from rlvr.algo.returns import (
    discounted_returns,
    masked_whiten,
    outcome_token_rewards,
    reinforce_pp_advantages,
)
from rlvr.algo.shaping import overlong_penalty, truncation_mask
from rlvr.algo.surrogates import SURROGATES
from rlvr.algo.value import VALUE_LOSSES, explained_variance

__all__ = [
    "AGGREGATIONS",
    "BASELINES",
    "GroupFilter",
    "KL_ESTIMATORS",
    "Objective",
    "PassRateTracker",
    "RATIO_LEVELS",
    "SCALES",
    "SURROGATES",
    "VALUE_LOSSES",
    "decoupled_gae",
    "discounted_returns",
    "explained_variance",
    "gae_advantages",
    "kl_estimate",
    "kl_reward_penalty",
    "length_adaptive_lambda",
    "masked_whiten",
    "nonzero_variance_groups",
    "outcome_advantages",
    "outcome_token_rewards",
    "overlong_penalty",
    "reinforce_pp_advantages",
    "truncation_mask",
]
