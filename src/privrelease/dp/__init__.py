"""DP primitives shared by the mechanisms, each in one place, below them.

* :mod:`.costs` - privacy costs, budget splits, composition, parameter checks;
* :mod:`.calibration` - noise calibration apart from sampling (analytic Gaussian,
  zCDP budget and its (epsilon, delta) conversion, Laplace scale);
* :mod:`.selection` - the exponential mechanism (sampled exactly by the noise source);
* :mod:`.rounding` - largest-remainder rounding of released weights;
* :mod:`.sensitivities` - sensitivities used by more than one mechanism.

Layering: ``dp`` imports from ``noise``, ``linalg``, ``schema`` and ``errors`` only;
``accounting`` and ``mechanisms`` import from it.
"""

from .calibration import (
    analytic_gaussian_multiplier,
    calibrate_rho,
    epsilon_for,
    laplace_scale,
    zcdp_noise_multiplier,
)
from .costs import ZERO, BudgetSplit, PrivacyCost, check_delta, check_epsilon, parallel, sequential
from .rounding import largest_remainder
from .selection import exponential_mechanism, selection_rate

__all__ = [
    "PrivacyCost", "BudgetSplit", "ZERO", "sequential", "parallel", "check_epsilon", "check_delta",
    "analytic_gaussian_multiplier", "zcdp_noise_multiplier", "calibrate_rho", "epsilon_for", "laplace_scale",
    "exponential_mechanism", "selection_rate", "largest_remainder",
]
