"""Old import path of the privacy costs: they live in :mod:`privrelease.dp.costs`."""

from ..dp.costs import ZERO, BudgetSplit, PrivacyCost, check_delta, check_epsilon, parallel, sequential

__all__ = ["PrivacyCost", "BudgetSplit", "ZERO", "sequential", "parallel", "check_epsilon", "check_delta"]
