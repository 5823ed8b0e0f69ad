"""Pure tensor functions of the algorithms: advantages, ratios, surrogates, aggregation, KL.

Imports only torch and `rlvr.types`. Each axis is a plain dict from name to function.
"""

from rlvr.algo.advantages import BASELINES, SCALES, outcome_advantages
from rlvr.algo.aggregation import AGGREGATIONS
from rlvr.algo.kl import KL_ESTIMATORS
from rlvr.algo.objective import Objective
from rlvr.algo.ratios import RATIO_LEVELS
from rlvr.algo.surrogates import SURROGATES

__all__ = [
    "AGGREGATIONS",
    "BASELINES",
    "KL_ESTIMATORS",
    "Objective",
    "RATIO_LEVELS",
    "SCALES",
    "SURROGATES",
    "outcome_advantages",
]
