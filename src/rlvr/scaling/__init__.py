"""Reward against RL compute: the ScaleRL sigmoid, its fit, extrapolation and plots."""

from rlvr.scaling.fit import FitError, FitSettings, fit_sigmoid
from rlvr.scaling.sigmoid import compute_at_gain, sigmoid_reward
from rlvr.scaling.sigmoid_fit import ExtrapolationRefused, SigmoidFit

__all__ = ["ExtrapolationRefused", "FitError", "FitSettings", "SigmoidFit", "compute_at_gain", "fit_sigmoid",
           "sigmoid_reward"]
