"""The noisy steps of gauss-pca's second stage (basis, dimension, per-class moments, the
within-class pass, residual variance), as a mixin of
:class:`~privrelease.mechanisms.gauss_mixture.gauss_pca.GaussPCA`, which holds the state they
read (radius, budget split, noise source) and documents their sensitivities in its Notes.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from ...dp.calibration import zcdp_noise_multiplier
from ...dp.selection import exponential_mechanism
from ...linalg import mirror, sorted_eigh, upper
from .pca_parts import _within_moments_map, mean_direction_basis
from .sensitivities import moment_sensitivity, residual_sensitivity

#: Default split of the total zCDP budget rho (chosen on gas_drift and musk2, never on HAPT or Adult).
DEFAULT_SPLIT = {
    "centre": 0.04,
    "radius": 0.01,
    "basis": 0.30,
    "counts": 0.02,
    "sums": 0.15,
    "moments": 0.46,
    "residual": 0.02,
}
#: Share of the within-class radius estimate (centring="class" only).
DEFAULT_WITHIN_RADIUS_SHARE = 0.01
#: Extra share taken (from all parts proportionally) when the dimension is selected privately.
DEFAULT_SELECTION_SHARE = 0.05
#: Default dimension P (min(P, p)); chosen on gas_drift and musk2.
DEFAULT_COMPONENTS = 20
DEFAULT_COMPONENT_GRID = (5, 10, 15, 20, 30, 40, 60)
PARTS = tuple(DEFAULT_SPLIT)


class MixtureReleases:
    """Gaussian releases of gauss-pca's model; each spends ``rho_split_[part]``."""

    def _gauss(self, value, sens, part, coords):
        """Gaussian mechanism spending ``rho_split_[part]``; records the noise std."""
        nm = zcdp_noise_multiplier(self.rho_split_[part])
        self.sensitivities_[f"{part}_l2"] = float(sens)
        return self._gaussian(f"{part}_std", np.asarray(value, dtype=np.float64), sens, nm, coords)

    def _release_basis(self, A, S1_full, counts, C: int, R: float) -> np.ndarray:
        """Steps 4-5: the basis (public, or Analyze Gauss on the clipped second moment, with the
        released class-mean directions first) and its dimension P; returns V (p x P)."""
        p = A.shape[0]
        if self.basis is not None:
            V, _ = np.linalg.qr(np.asarray(self.basis, dtype=np.float64))
            self.basis_source_ = "public basis supplied by the user"
            return V
        up = self._gauss(upper(A), moment_sensitivity(R), "basis", coords=p * (p + 1) // 2)
        A_noisy = mirror(up, p)
        _, V_all = sorted_eigh(A_noisy)
        self.basis_source_ = "DP: Analyze Gauss on the clipped second moment"
        if self.n_components == "select":
            P = self._select_dimension(A, V_all, C, R)
        else:
            P = min(DEFAULT_COMPONENTS, p) if self.n_components is None else int(self.n_components)
        if bool(self.mean_directions) and C > 1:
            self.basis_source_ += " + released class-mean directions"
            return mean_direction_basis(S1_full, counts, A_noisy, P)
        return V_all[:, :P]

    def _release_moments(self, cls, V, R: float) -> np.ndarray:
        """Step 6: the per-class second moments in the basis (upper triangles, Gaussian mechanism)."""
        P = V.shape[1]
        S2 = np.stack([V.T @ c.s2 @ V for c in cls])  # C x P x P
        iu = np.triu_indices(P)
        S2u = self._gauss(S2[:, iu[0], iu[1]], moment_sensitivity(R), "moments", coords=P * (P + 1))
        return np.stack([mirror(S2u[c], P) for c in range(len(cls))])

    def _release_residual(self, A, V, R: float) -> None:
        """Step 7: the variance outside the basis, per remaining coordinate (0 when P = p)."""
        p, P = V.shape
        if P >= p:
            self.residual_variance_ = 0.0
            return
        res = float(np.trace(A) - np.trace(V.T @ A @ V))
        res = float(self._gauss(np.array([res]), residual_sensitivity(R), "residual", coords=1)[0])
        self.residual_variance_ = max(res, 0.0) / (self.n_ * (p - P))

    def _within_class_pass(self, V, S1_noisy, counts_noisy, cls, C, P, R):
        """Third pass: second moments of ``w_i = clip(V^T z_i - m_{y_i}, R_w)`` per class.

        ``m_c`` = released class mean (post-processing of the noisy sums and counts), moved
        into the ball of radius R, so ``||t_i - m_c|| <= 2 R``. The within-class radius
        ``R_w = radius_factor * sqrt(T_w~ / n)`` with ``T_w = sum_i ||t_i - m_{y_i}||^2``
        (computed from the pass-2 accumulators: ``tr(V^T A_c V) - 2 m_c . S1_c + n_c ||m_c||^2``);
        each term lies in ``[0, 4 R^2]``, so its sensitivity is ``4 R^2`` (a class change
        swaps one term for another). Then ``w_i`` has ``||w_i|| <= R_w`` and the stacked
        upper triangles have sensitivity ``sqrt(2) R_w^2`` (same argument as
        :func:`moment_sensitivity`).
        """
        n_eff = np.maximum(counts_noisy, 1.0)
        m = S1_noisy / n_eff[:, None]
        nrm = np.linalg.norm(m, axis=1)
        m = m * np.minimum(1.0, R / np.maximum(nrm, 1e-300))[:, None]
        T = 0.0
        for c, st in enumerate(cls):
            T += float(np.trace(V.T @ st.s2 @ V) - 2.0 * m[c] @ (V.T @ st.s1) + st.n * m[c] @ m[c])
        T = float(self._gauss(np.array([T]), 4.0 * R**2, "within_radius", coords=1)[0])
        rms = math.sqrt(max(T, 0.0) / self.n_)
        R_w = float(min(max(float(self.radius_factor) * rms, 1e-3 * R), 2.0 * R))
        W2 = self._passes.run(partial(_within_moments_map, centre=self.centre_, radius=self.radius_,
                                      bound=self.row_norm_bound, basis=V, class_means=m, within_radius=R_w))
        iu = np.triu_indices(P)
        W2u = self._gauss(W2[:, iu[0], iu[1]], moment_sensitivity(R_w), "moments", coords=P * (P + 1))
        self.class_centres_ = m
        self.within_radius_ = R_w
        return np.stack([mirror(W2u[c], P) for c in range(C)])

    def _select_dimension(self, A, V_all, C, R) -> int:
        p = A.shape[0]
        grid = sorted({int(g) for g in self.component_grid if 1 <= int(g) <= p})
        rho_m = self.rho_split_["moments"]
        sigma_m = zcdp_noise_multiplier(rho_m) * moment_sensitivity(R)
        AV = A @ V_all
        captured = np.cumsum(np.einsum("ij,ij->j", V_all, AV))  # tr(V_P^T A V_P) for P = 1..p
        util = np.array([captured[P - 1] - 2.0 * C * P**1.5 * sigma_m for P in grid])
        eps_sel = math.sqrt(8.0 * self.rho_split_["selection"]) if math.isfinite(self.rho_) else math.inf
        du = R**2  # sensitivity of the utility
        self.sensitivities_["selection_utility"] = float(du)
        k = exponential_mechanism(util, eps_sel, du, self.source_)
        self.selection_ = {"grid": grid, "epsilon": eps_sel, "chosen": grid[k]}
        return grid[k]
