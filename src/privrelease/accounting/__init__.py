"""Accounting: privacy costs, composition, budget splits and the persistent ledger."""

from ..dp.costs import ZERO, BudgetSplit, PrivacyCost, check_delta, check_epsilon, parallel, sequential
from .ledger import Ledger

__all__ = ["PrivacyCost", "BudgetSplit", "ZERO", "sequential", "parallel", "check_epsilon", "check_delta", "Ledger"]
