"""Sources of the PCA basis used by the PCA-Gauss family (Chanyaswad, Liu, Mittal; ALGORITHMS.md 3.3-3.7).

A *basis* is a ``P x M`` matrix ``V`` with orthonormal rows plus the public centre
``c`` (the midpoint ``0.5`` of every encoded column: encoded data lie in [0, 1]) around
which records are projected: ``z = V (x - c)``. Algorithms 2 and 3 need ``V`` to be
independent of the data that the Gaussian model is fitted on, or paid from the budget.
Four sources, selected by the ``pca_source`` parameter of the mechanisms:

``"laplace"`` (LapPCA, 002 sec. VII, corrected)
    epsilon-DP. Release the upper triangle of ``S = sum_i u_i u_i^T`` with
    ``u_i = x_i - c`` plus Laplace noise, mirror, take the top-P eigenvectors.
``"analyze-gauss"`` (AG-PCA = Analyze Gauss, Dwork-Talwar-Thakurta-Zhang 2014)
    (epsilon, delta)-DP. Rows scaled to the unit ball, Gaussian noise on the upper
    triangle of the Gram matrix, top-P eigenvectors.
``"public"``
    No budget: components given by the user (a ``P x M`` array or a ``.npy``/``.csv``
    file) or computed from public records (an encoded matrix) the user supplies.
``"split"``
    A fraction of the records (a data-independent random subset of row positions) is
    set aside and LapPCA is run on it with the *full* epsilon; the model is fitted on
    the other records. The two parts are disjoint and the partition does not depend on
    the data, so the costs compose in parallel (a replacement under R1 keeps the
    record's position and so touches one part only): total epsilon, not 2 epsilon.

Domain used for every sensitivity here (stated, not the paper's [-a, a]): encoded
rows ``x in [0, 1]^M`` (one-hot blocks included), centre ``c = 0.5 * 1``, so
``u = x - c in [-1/2, 1/2]^M``, i.e. the paper's box with ``a = 1/2``, and
``||u||_2 <= sqrt(M) / 2``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...errors import InputDataError, ParameterError
from ...linalg import mirror, top_eigenvectors, upper
from ...dp.calibration import analytic_gaussian_multiplier
from ...dp.costs import PrivacyCost
from ...dp.sensitivities import box_second_moment_l1, gram_l2

PCA_SOURCES = ("laplace", "analyze-gauss", "public", "split")
CENTRE = 0.5  # public centre of every encoded coordinate


@dataclass
class PCABasis:
    """A ``P x M`` orthonormal basis, the public centre, and what it cost."""

    components: np.ndarray  # (P, M), orthonormal rows
    centre: np.ndarray  # (M,)
    source: str
    cost: PrivacyCost = field(default_factory=lambda: PrivacyCost(0.0))
    sensitivities: dict = field(default_factory=dict)
    noise_scales: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    released: dict = field(default_factory=dict)  # the noisy statistics it was computed from (DP outputs)

    @property
    def n_components(self) -> int:
        return int(self.components.shape[0])

    def project(self, X: np.ndarray) -> np.ndarray:
        """``z = V (x - c)`` for each row."""
        return (np.asarray(X, dtype=np.float64) - self.centre) @ self.components.T

    def back(self, Z: np.ndarray) -> np.ndarray:
        """``x = c + V^T z`` (rows)."""
        return np.asarray(Z, dtype=np.float64) @ self.components + self.centre


def public_centre(p: int) -> np.ndarray:
    return np.full(p, CENTRE)


def centred_second_moment(stats, centre: np.ndarray) -> np.ndarray:
    """``sum_i (x_i - c)(x_i - c)^T`` from ``(n, s1, s2)`` without a second pass."""
    s1 = stats.s1
    return stats.s2 - np.outer(centre, s1) - np.outer(s1, centre) + stats.n * np.outer(centre, centre)


# ---- sensitivities ----------------------------------------------------------------

def lap_pca_sensitivity(p: int) -> float:
    """L1 sensitivity of ``upper(sum_i (x_i - c)(x_i - c)^T)`` under R1: ``M (M + 1) / 8``.

    Each entry of ``u u^T`` with ``u in [-1/2, 1/2]^M`` lies in [-1/4, 1/4]; T1 of
    ALGORITHMS.md with ``a = 1/2``: the upper triangle with diagonal changes by at most
    ``M (M + 1) a^2 / 2 = M (M + 1) / 8`` (tight: ``u = a 1`` replaced by ``u' = 0``).
    The paper's Prop. 3 (``M^2 a^2 / N`` on all entries of the empirically centred
    covariance) is wrong because empirical centring moves every record (erratum E9);
    centring at the public point ``c`` avoids that factor of about 4.
    """
    return box_second_moment_l1(p, CENTRE)


def analyze_gauss_l2_sensitivity() -> float:
    """L2 sensitivity of ``upper(sum_i w_i w_i^T)`` for ``||w_i||_2 <= 1`` under R1: ``sqrt(2)``.

    ``||w w^T - w' w'^T||_F^2 = ||w||^4 + ||w'||^4 - 2 (w.w')^2 <= 2`` (T2); the upper
    triangle is a subset of the entries, so its L2 norm is at most the Frobenius norm.
    Under add/remove it would be 1 (Dwork et al. 2014 state that case).
    """
    return gram_l2(1.0)


# ---- sources ----------------------------------------------------------------------

def laplace_basis(stats, k: int, epsilon: float, source, noise_scales: dict | None = None) -> PCABasis:
    """LapPCA (corrected, public centre): epsilon-DP top-k basis from noisy ``sum u u^T``.

    Noise ``Lap(M (M + 1) / (8 epsilon))`` on each upper-triangle entry, mirrored
    (symmetric by construction); eigenvectors of a symmetric matrix are unaffected by
    the paper's optional diagonal shift, so none is applied. Cost ``O(n M^2 + M^3)``.
    The scale is written into ``noise_scales`` (when given) before the draw.
    """
    p = stats.p
    c = public_centre(p)
    S = centred_second_moment(stats, c)
    sens = lap_pca_sensitivity(p)
    with source.value_bound(max(stats.n / 4.0, 1.0)):  # entries of u u^T lie in [-1/4, 1/4]
        scale = source.laplace_noise_scale(sens, epsilon, p * (p + 1) // 2)  # calibrated before the draw
        if noise_scales is not None:
            noise_scales["lap_pca"] = scale
        noisy, _ = source.add_laplace(upper(S), sens, epsilon, coords=p * (p + 1) // 2)
    V = top_eigenvectors(mirror(noisy, p), k).T.copy()
    return PCABasis(V, c, "laplace", PrivacyCost(epsilon), {"lap_pca_upper_l1": sens},
                    {"lap_pca": scale}, released={"second_moment_upper": noisy})


def analyze_gauss_basis(stats, k: int, epsilon: float, delta: float, source,
                        noise_scales: dict | None = None) -> PCABasis:
    """AG-PCA: (epsilon, delta)-DP top-k basis (Analyze Gauss on unit-norm rows).

    Rows ``w = (x - c) / (sqrt(M) / 2)`` have ``||w||_2 <= 1`` (public scaling, no
    data-dependent clipping). ``A = sum w w^T`` gets Gaussian noise on its upper
    triangle with ``std = Delta_2 * s(epsilon, delta)``, ``Delta_2 = sqrt(2)`` (R1, T2)
    and ``s`` from the analytic Gaussian mechanism; mirrored; top-k eigenvectors.
    The standard deviation is written into ``noise_scales`` (when given) before the draw.
    """
    p = stats.p
    c = public_centre(p)
    A = centred_second_moment(stats, c) / (p / 4.0)
    mult = analytic_gaussian_multiplier(epsilon, delta)
    d2 = analyze_gauss_l2_sensitivity()
    with source.value_bound(max(float(stats.n), 1.0)):  # entries of w w^T lie in [-1, 1]
        std = source.gaussian_noise_std(d2, mult, p * (p + 1) // 2)  # calibrated before the draw
        if noise_scales is not None:
            noise_scales["analyze_gauss_std"] = std
        noisy, _ = source.add_gaussian(upper(A), d2, mult, coords=p * (p + 1) // 2)
    V = top_eigenvectors(mirror(noisy, p), k).T.copy()
    return PCABasis(V, c, "analyze-gauss", PrivacyCost(epsilon, delta), {"gram_upper_l2": d2},
                    {"analyze_gauss_std": std}, released={"gram_upper": noisy})


def load_public_components(value, p: int) -> np.ndarray:
    """A user-given public basis: a ``(k, M)`` or ``(M, k)`` array, or a ``.npy`` / ``.csv`` file of one."""
    if isinstance(value, (str, Path)):
        path = Path(value)
        if not path.exists():
            raise InputDataError(f"public basis file {path} does not exist")
        if path.suffix == ".npy":
            value = np.load(path)
        else:
            value = np.loadtxt(path, delimiter=",", ndmin=2)
    V = np.asarray(value, dtype=np.float64)
    if V.ndim != 2 or p not in V.shape:
        raise InputDataError(f"a public basis must be a (k, {p}) matrix, got shape {V.shape}")
    if V.shape[1] != p:
        V = V.T
    Q, R = np.linalg.qr(V.T)  # orthonormalise the rows (post-processing of public input)
    Q = Q * np.where(np.diag(R) < 0, -1.0, 1.0)
    return Q.T.copy()


def public_basis(k: int, p: int, *, components=None, public_data=None) -> PCABasis:
    """Basis from public input only (no budget): given components, or PCA of public records."""
    c = public_centre(p)
    if components is not None:
        V = load_public_components(components, p)
        if V.shape[0] < k:
            raise ParameterError(f"the public basis has {V.shape[0]} components, n_components = {k}")
        return PCABasis(V[:k], c, "public", notes=["basis given as public input (no budget)"])
    if public_data is None:
        raise ParameterError("pca_source='public' needs public_components or public_data")
    Xp = np.asarray(public_data, dtype=np.float64)
    if Xp.ndim != 2 or Xp.shape[1] != p:
        raise InputDataError(f"public_data must be an encoded matrix with {p} columns, got shape {Xp.shape}")
    U = Xp - Xp.mean(axis=0)
    V = top_eigenvectors(U.T @ U, k).T.copy()
    return PCABasis(V, c, "public",
                    notes=[f"basis from {Xp.shape[0]} public records supplied by the user (no budget)"])


def split_rows(n: int, fraction: float, source) -> np.ndarray:
    """Boolean mask of the row positions set aside for the basis (data-independent)."""
    m = int(round(n * fraction))
    if m < 2 or n - m < 2:
        raise InputDataError(f"split_fraction={fraction} leaves too few records on one side (n = {n})")
    mask = np.zeros(n, dtype=bool)
    mask[source.generator.choice(n, size=m, replace=False)] = True
    return mask
