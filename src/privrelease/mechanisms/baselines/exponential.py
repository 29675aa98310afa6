"""Per-record exponential-mechanism release: the EXP baseline of Jiang et al. 2013, sec. 4."""

from __future__ import annotations

from numbers import Real

import math
from typing import ClassVar

import numpy as np

from ...dp.selection import exponential_mechanism
from ...errors import ParameterError
from ...schema.encoding import EncodedDomain
from ..base import DataIndependentFit, RowAlignedMechanism
from ..constraints import COMMON, Interval


def utility_sensitivity(domain: EncodedDomain) -> float:
    """Sensitivity of the utility ``u(x, xhat) = -||x - xhat||_1`` in the record: ``p1 + 2 p2``.

    For any candidate xhat, ``|u(x, xhat) - u(x', xhat)| <= ||x - x'||_1 <= p1 + 2 p2``
    (triangle inequality; numeric entries in [0, 1], a categorical change flips two dummies).
    """
    return float(domain.max_l1_diff)


class ExponentialRecords(DataIndependentFit, RowAlignedMechanism):
    """Replace every record by a grid record drawn by the exponential mechanism.

    Parameters
    ----------
    epsilon : float in (0, inf]
        Privacy budget; ``inf`` returns the nearest grid record (numeric values rounded
        to the grid, categories unchanged).
    grid_step : float, default 1/20
        Step of the public grid of numeric values on [0, 1] (encoded scale); categorical
        variables range over their declared levels.
    domain : EncodedDomain or None
    rng : None, int or numpy.random.Generator

    Notes
    -----
    Guarantee: epsilon-DP under R1 (one record replaced, n public); row i of the output
    depends on record i only (parallel composition over records).

    Jiang et al. compare with "the exponential mechanism with the utility of
    Blum-Ligett-Roth" without details (ALGORITHMS.md 2.3 [A]); this is the row-aligned
    instantiation of the specification: for one encoded record x, output xhat in the
    grid G (numeric values in ``{0, step, ..., 1}``, one level per categorical variable)
    with probability proportional to ``exp(-epsilon ||x - xhat||_1 / (2 Delta))``,
    ``Delta = p1 + 2 p2`` (:func:`utility_sensitivity`). This is the exponential
    mechanism of McSherry and Talwar (2007), epsilon-DP for one record. Because the L1
    distance is a sum over attributes and G is a product set, the distribution
    factorises: each numeric value v is drawn with weight ``exp(-epsilon |x_j - v| /
    (2 Delta))`` and each categorical level with weight ``exp(-epsilon * 2 [level !=
    x_j] / (2 Delta))`` (the encoded L1 distance of two different levels is 2),
    independently. Each draw is the exact exponential-mechanism sampler of
    :func:`~privrelease.dp.selection.exponential_mechanism`.
    Cost O(n (p1 |G| + sum_j K_j)).
    """

    _parameter_constraints: ClassVar[dict] = {
        **COMMON,
        "grid_step": [Interval(Real, 0, 1, closed="right")],
    }

    name: ClassVar[str] = "exponential"
    summary: ClassVar[str] = ("per-record exponential mechanism over a public grid (L1 utility; "
                              "Jiang et al. sec. 4 EXP baseline), row-aligned")

    def __init__(self, epsilon=1.0, *, grid_step=1 / 20, domain=None, rng=None):
        self.epsilon = epsilon
        self.grid_step = grid_step
        self.domain = domain
        self.rng = rng

    def _grid(self):
        step = self.grid_step
        k = round(1 / step)
        if abs(k * step - 1) > 1e-9:
            raise ParameterError(f"grid_step must divide 1 (e.g. 1/20), got {step!r}")
        return np.linspace(0.0, 1.0, k + 1)

    def _fit_domain(self, eps, dom):
        self.grid_ = self._grid()
        self.domain_ = dom
        delta = utility_sensitivity(dom)
        self.sensitivities_ = {"utility_l1": delta}
        self.budget_split_ = {"exponential mechanism (each record, parallel)": eps}
        self.noise_scales_ = {"temperature 2 Delta / epsilon": 2 * delta / eps if math.isfinite(eps) else 0.0}
        self._set_cost(eps)
        return self

    def transform(self, X):
        X = np.asarray(X, dtype=np.float64)
        dom = self.domain_
        eps = self.privacy_cost_.epsilon
        du = self.sensitivities_["utility_l1"]
        out = np.empty_like(X)
        grid = self.grid_
        num = np.asarray(dom.numeric, dtype=np.int64)
        n = X.shape[0]
        if num.size:
            dist = np.abs(X[:, num, None] - grid[None, None, :])  # (n, p1, |G|)
            idx = exponential_mechanism(-dist, eps, du, self.source_, axis=2)
            out[:, num] = grid[idx]
        for a, b in dom.blocks:
            dist = 2.0 * (1.0 - X[:, a:b])  # encoded L1 distance to each level: 0 or 2
            idx = exponential_mechanism(-dist, eps, du, self.source_, axis=1)
            onehot = np.zeros((n, b - a))
            onehot[np.arange(n), idx] = 1.0
            out[:, a:b] = onehot
        return out

    def certificate_extra(self) -> dict:
        return {"grid_step": float(self.grid_step), "grid_points": int(self.grid_.size)}
