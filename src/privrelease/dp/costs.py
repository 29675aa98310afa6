"""Immutable privacy costs, budget splits and composition rules (read by the accounting layer).

A :class:`PrivacyCost` describes what one release spends; a mechanism reports one in
``privacy_cost_``. Costs compose sequentially (epsilons and deltas add) or in
parallel over disjoint record sets (the maximum; valid under add/remove neighbours,
and under replace-one only when a replacement cannot move a record between parts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..errors import ParameterError


def check_epsilon(epsilon, name: str = "epsilon", allow_inf: bool = True) -> float:
    """Validate a privacy parameter: a float in (0, inf] (inf only where allowed)."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)):
        raise ParameterError(f"{name} must be a number > 0, got {epsilon!r}")
    epsilon = float(epsilon)
    if math.isnan(epsilon) or epsilon <= 0 or (epsilon == math.inf and not allow_inf):
        raise ParameterError(f"{name} must be a number in (0, {'inf]' if allow_inf else 'inf)'}, got {epsilon}")
    return epsilon


def check_delta(delta, name: str = "delta") -> float:
    if isinstance(delta, bool) or not isinstance(delta, (int, float)):
        raise ParameterError(f"{name} must be a number in [0, 1), got {delta!r}")
    delta = float(delta)
    if math.isnan(delta) or not (0 <= delta < 1):
        raise ParameterError(f"{name} must be a number in [0, 1), got {delta}")
    return delta


@dataclass(frozen=True)
class PrivacyCost:
    """(epsilon, delta) spent by one release; ``rho`` (zCDP) when the mechanism is Gaussian."""

    epsilon: float
    delta: float = 0.0
    rho: float | None = None

    def __post_init__(self):
        if not (self.epsilon >= 0) or not (0 <= self.delta <= 1):
            raise ParameterError(f"invalid privacy cost ({self.epsilon}, {self.delta})")

    def __add__(self, other: "PrivacyCost") -> "PrivacyCost":
        rho = None if self.rho is None or other.rho is None else self.rho + other.rho
        return PrivacyCost(self.epsilon + other.epsilon, self.delta + other.delta, rho)

    def to_dict(self) -> dict:
        d = {"epsilon": self.epsilon, "delta": self.delta}
        if self.rho is not None:
            d["rho"] = self.rho
        return d


ZERO = PrivacyCost(0.0, 0.0)


def sequential(*costs: PrivacyCost) -> PrivacyCost:
    """Basic sequential composition: epsilons and deltas add."""
    total = ZERO
    for c in costs:
        total = total + c
    return total


def parallel(*costs: PrivacyCost) -> PrivacyCost:
    """Parallel composition over disjoint record sets: the maximum of each parameter."""
    if not costs:
        return ZERO
    return PrivacyCost(max(c.epsilon for c in costs), max(c.delta for c in costs))


@dataclass(frozen=True)
class BudgetSplit:
    """Named shares of a total epsilon; shares are validated to sum to at most 1.

    >>> BudgetSplit(1.0, {"moments": 0.5, "projection": 0.5}).epsilon("moments")
    0.5
    """

    total: float
    shares: dict = field(default_factory=dict)

    def __post_init__(self):
        s = sum(self.shares.values())
        if any(v <= 0 for v in self.shares.values()):
            raise ParameterError(f"budget shares must be positive, got {self.shares}")
        if s > 1 + 1e-12:
            raise ParameterError(f"budget shares sum to {s:.6g} > 1: {self.shares}")

    def epsilon(self, part: str) -> float:
        return self.total * self.shares[part]

    def to_dict(self) -> dict:
        return {k: self.total * v for k, v in self.shares.items()}
