"""Zhuang and Chang: JUPA projections and MMD fine-grained perturbation (owner side).

A data owner perturbs her own records before handing them to a service provider.
Public labelled data (a utility label such as the activity, a privacy label such as the
subject) teach a linear projection ``W`` (coarse-grained perturbation) that keeps the
utility target and blurs the privacy target; then each projected record is pushed
by kernel-MMD gradient steps until a kernel classifier assigns it a privacy class
``t`` drawn at random by the owner (fine-grained perturbation).

**There is no formal privacy guarantee** (ALGORITHMS.md E17). The paper's Theorem 1
equates the attacker's success with the prior of ``t`` without conditioning on the
released ``z``, and restricts the attacker to kernel classifiers trained on
unperturbed public data. A mechanism-aware attacker (trained on records perturbed by
the whole mechanism) can do better: a record released unchanged (``t = s``) lies deep
inside its class, a moved one stops just past the decision boundary. The registered
mechanism therefore states ``guarantee = "none (empirical)"`` and reports measured
attack accuracies (see :mod:`privrelease.audit.inference_attack`).

Projections (ALGORITHMS.md 5.2; all fitted on public data only, so ``W`` is public):

==================== =====================================================================
``jupa``             pencil ``(S_BU + rho1' S_WP, S_WU + rho1 S_BP + rho0 I)`` (eqs 8, 9)
``ruca``             JUPA with ``rho1' = 0``
``dca``              ``(S_BU, Sbar + rho I)``, ``Sbar = S_WU + S_BU`` (eq 5)
``mdr``              ``(S_BU, S_BP + rho I)`` (eq 6)
``pca``              top-K eigenvectors of ``Sbar``
``random-projection`` ``W`` i.i.d. ``N(0, 1) / sqrt(K)`` (Liu, Kargupta, Ryan 2006)
``full-dimensional`` ``W = I`` (no projection)
==================== =====================================================================

``K`` defaults to the number of utility classes minus one. Note on E18: the paper's
verbal roles of ``rho1`` and ``rho1'`` are reversed relative to its formula; we follow
the formula.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

from ...errors import InputDataError, ParameterError
from ...linalg import generalized_eigh, sorted_eigh
from ...noise import make_source

# ---------------------------------------------------------------------------------------------
# scatter matrices (eqs 1-4), vectorised


def _as_matrix(X) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise InputDataError(f"X must be a 2-d matrix, got shape {X.shape}")
    if X.shape[0] < 2:
        raise InputDataError("at least two public records are needed to fit a projection")
    if not np.all(np.isfinite(X)):
        raise InputDataError("X contains NaN or infinite values")
    return X


def _label_columns(y, n: int, what: str) -> list[np.ndarray]:
    """Labels as a list of 1-d integer code arrays (one per target; a 2-d y has one column per target)."""
    if y is None:
        return []
    y = np.asarray(y)
    if y.ndim == 1:
        y = y[:, None]
    if y.ndim != 2 or y.shape[0] != n:
        raise InputDataError(f"{what} labels must have one entry per record ({n}), got shape {y.shape}")
    return [np.unique(y[:, j], return_inverse=True)[1].ravel() for j in range(y.shape[1])]


def scatter_matrices(X, y) -> tuple[np.ndarray, np.ndarray]:
    """Within-class and between-class scatter ``(S_W, S_B)`` of ``X`` for labels ``y``.

    ``S_B = sum_l N_l (mu_l - mu)(mu_l - mu)^T``, ``S_W = Sbar - S_B`` with the total
    scatter ``Sbar = sum_i (x_i - mu)(x_i - mu)^T`` (eqs 1-4).

    >>> X = np.array([[0., 0.], [2., 0.], [0., 4.], [2., 4.]])
    >>> SW, SB = scatter_matrices(X, [0, 0, 1, 1])
    >>> SB.tolist(), SW.tolist()
    ([[0.0, 0.0], [0.0, 16.0]], [[4.0, 0.0], [0.0, 0.0]])
    """
    X = np.asarray(X, dtype=np.float64)
    codes = np.unique(np.asarray(y), return_inverse=True)[1].ravel()
    n_cls = int(codes.max()) + 1
    Xc = X - X.mean(axis=0)
    total = Xc.T @ Xc
    counts = np.bincount(codes, minlength=n_cls).astype(np.float64)
    sums = np.zeros((n_cls, X.shape[1]))
    np.add.at(sums, codes, Xc)
    D = sums / counts[:, None]  # class means minus the overall mean
    SB = (D * counts[:, None]).T @ D
    SW = total - SB
    return (SW + SW.T) / 2, (SB + SB.T) / 2


def _unit_columns(V):
    n = np.linalg.norm(V, axis=0)
    n[n == 0] = 1.0
    return V / n


def _solve_pencil(A, B, k):
    """Top-``k`` generalized eigenvectors of ``(A, B)`` scaled to unit Euclidean length.

    The eigenproblem fixes directions only; scipy returns ``B``-orthonormal vectors, whose
    length shrinks like ``1/sqrt(N)`` with the scatter matrices, so projected records would
    live on a scale set by the number of public records. Unit-length columns [A] keep the
    projected scale comparable to the (standardised) inputs, which the MMD step sizes
    (``alpha = 0.1``) presuppose. A tiny ridge is added if B is numerically singular.
    """
    B = np.asarray(B, dtype=np.float64)
    jitter = 0.0
    for _ in range(8):
        try:
            Bj = B + jitter * np.eye(B.shape[0])
            w, V = generalized_eigh(A, Bj, k=k)
            return w, _unit_columns(V)
        except np.linalg.LinAlgError:
            jitter = max(jitter * 100, 1e-10 * max(1.0, float(np.trace(B)) / B.shape[0]))
    raise ParameterError("the projection pencil's right-hand matrix is singular; increase the ridge (rho0 / rho)")


# ---------------------------------------------------------------------------------------------
# projections


class Projection(TransformerMixin, BaseEstimator):
    """Base class: ``fit(X, y_utility, y_privacy)`` on public data learns ``components_`` (M x K).

    ``transform(X) = X @ components_``. ``y_utility`` / ``y_privacy`` may be 2-d with one column
    per target (several targets: the scatter terms are summed, eq 9).
    """

    name: ClassVar[str] = ""
    needs_labels: ClassVar[bool] = True

    def _k(self, n_utility_classes: int | None, M: int) -> int:
        k = getattr(self, "n_components", None)
        if k is None:
            if n_utility_classes is None:
                raise ParameterError(f"projection '{self.name}' needs n_components (no utility labels given)")
            k = max(1, n_utility_classes - 1)
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= M:
            raise ParameterError(f"n_components must be an integer in [1, {M}], got {k!r}")
        return int(k)

    def _prepare(self, X, y_utility, y_privacy):
        X = _as_matrix(X)
        ys_u = _label_columns(y_utility, X.shape[0], "utility")
        ys_p = _label_columns(y_privacy, X.shape[0], "privacy")
        if self.needs_labels and not ys_u:
            raise InputDataError(f"projection '{self.name}' needs utility labels")
        n_u = int(ys_u[0].max()) + 1 if ys_u else None
        return X, ys_u, ys_p, n_u

    def fit(self, X, y_utility=None, y_privacy=None):
        raise NotImplementedError

    def transform(self, X):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.components_.shape[0]:
            raise InputDataError(f"X must have {self.components_.shape[0]} columns, got shape {X.shape}")
        return X @ self.components_

    def fit_transform(self, X, y_utility=None, y_privacy=None):
        return self.fit(X, y_utility, y_privacy).transform(X)


def _per_target(value, n_targets: int, name: str) -> np.ndarray:
    arr = np.atleast_1d(np.asarray(value, dtype=np.float64))
    if arr.size == 1:
        arr = np.repeat(arr, max(n_targets, 1))
    if n_targets and arr.size != n_targets:
        raise ParameterError(f"{name} has {arr.size} entries but there are {n_targets} privacy targets")
    if np.any(arr < 0) or not np.all(np.isfinite(arr)):
        raise ParameterError(f"{name} must be finite and >= 0, got {value!r}")
    return arr


class JUPA(Projection):
    """Joint Utility/Privacy Analysis (eqs 8-9).

    ``W`` = top-K generalized eigenvectors of
    ``(sum_u S_BU + sum_p rho1'_p S_WP, sum_u S_WU + sum_p rho1_p S_BP + rho0 I)``.

    Parameters
    ----------
    n_components : int or None (default: number of utility classes - 1)
    rho0 : ridge (paper: 0.001)
    rho1 : weight of the between-privacy-class scatter in the denominator (scalar or one per privacy target)
    rho1_prime : weight of the within-privacy-class scatter in the numerator (scalar or one per target)

    Notes
    -----
    With ``rho1 = rho1' = 0`` the pencil is ``(S_BU, S_WU + rho0 I)``; it shares its
    eigenvectors with the DCA pencil ``(S_BU, S_WU + S_BU + rho I)`` (if ``S_BU w = l S_WU w``
    then ``S_BU w = l/(1+l) (S_WU + S_BU) w``), so JUPA reduces to DCA up to the ridges (E18).

    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 4)); yu = np.repeat([0, 1, 2], 20); yp = np.tile([0, 1], 30)
    >>> JUPA().fit(X, yu, yp).components_.shape
    (4, 2)
    """

    name: ClassVar[str] = "jupa"

    def __init__(self, n_components=None, rho0=1e-3, rho1=1.0, rho1_prime=1.0):
        self.n_components = n_components
        self.rho0 = rho0
        self.rho1 = rho1
        self.rho1_prime = rho1_prime

    def fit(self, X, y_utility=None, y_privacy=None):
        X, ys_u, ys_p, n_u = self._prepare(X, y_utility, y_privacy)
        k = self._k(n_u, X.shape[1])
        r1 = _per_target(self.rho1, len(ys_p), "rho1")
        r1p = _per_target(self.rho1_prime, len(ys_p), "rho1_prime")
        if not ys_p and (np.any(r1 > 0) or np.any(r1p > 0)):
            raise InputDataError("JUPA with rho1 or rho1_prime > 0 needs privacy labels")
        rho0 = float(self.rho0)
        if not rho0 >= 0:
            raise ParameterError(f"rho0 must be >= 0, got {self.rho0!r}")
        M = X.shape[1]
        A = np.zeros((M, M))
        B = rho0 * np.eye(M)
        for yu in ys_u:
            SW, SB = scatter_matrices(X, yu)
            A += SB
            B += SW
        for j, yp in enumerate(ys_p):
            SW, SB = scatter_matrices(X, yp)
            A += r1p[j] * SW
            B += r1[j] * SB
        self.eigenvalues_, self.components_ = _solve_pencil(A, B, k)
        self.n_components_ = k
        return self


class RUCA(JUPA):
    """RUCA (Al, Wan, Kung 2017) as the special case ``rho1' = 0`` of JUPA."""

    name: ClassVar[str] = "ruca"

    def __init__(self, n_components=None, rho0=1e-3, rho1=1.0):
        self.n_components = n_components
        self.rho0 = rho0
        self.rho1 = rho1

    @property
    def rho1_prime(self):
        return 0.0


class DCA(Projection):
    """Discriminant Component Analysis (Kung): pencil ``(S_BU, Sbar + rho I)`` (eq 5)."""

    name: ClassVar[str] = "dca"

    def __init__(self, n_components=None, rho=1e-3):
        self.n_components = n_components
        self.rho = rho

    def fit(self, X, y_utility=None, y_privacy=None):
        X, ys_u, _, n_u = self._prepare(X, y_utility, None)
        k = self._k(n_u, X.shape[1])
        M = X.shape[1]
        A = np.zeros((M, M))
        B = float(self.rho) * np.eye(M)
        for yu in ys_u:
            SW, SB = scatter_matrices(X, yu)
            A += SB
            B += SW + SB
        self.eigenvalues_, self.components_ = _solve_pencil(A, B, k)
        self.n_components_ = k
        return self


class MDR(Projection):
    """Multi-class Discriminant Ratio: pencil ``(S_BU, S_BP + rho I)`` (eq 6)."""

    name: ClassVar[str] = "mdr"

    def __init__(self, n_components=None, rho=1e-3):
        self.n_components = n_components
        self.rho = rho

    def fit(self, X, y_utility=None, y_privacy=None):
        X, ys_u, ys_p, n_u = self._prepare(X, y_utility, y_privacy)
        if not ys_p:
            raise InputDataError("MDR needs privacy labels")
        k = self._k(n_u, X.shape[1])
        M = X.shape[1]
        A = np.zeros((M, M))
        B = float(self.rho) * np.eye(M)
        for yu in ys_u:
            A += scatter_matrices(X, yu)[1]
        for yp in ys_p:
            B += scatter_matrices(X, yp)[1]
        self.eigenvalues_, self.components_ = _solve_pencil(A, B, k)
        self.n_components_ = k
        return self


class PCAProjection(Projection):
    """Top-K eigenvectors of the total scatter ``Sbar`` (uses no labels except for the default K)."""

    name: ClassVar[str] = "pca"
    needs_labels: ClassVar[bool] = False

    def __init__(self, n_components=None):
        self.n_components = n_components

    def fit(self, X, y_utility=None, y_privacy=None):
        X, _, _, n_u = self._prepare(X, y_utility, None)
        k = self._k(n_u, X.shape[1])
        Xc = X - X.mean(axis=0)
        self.eigenvalues_, self.components_ = sorted_eigh(Xc.T @ Xc, k=k)
        self.n_components_ = k
        return self


class RandomProjection(Projection):
    """``W`` with i.i.d. ``N(0, 1/K)`` entries (Liu, Kargupta, Ryan 2006); ``rng`` seeds it."""

    name: ClassVar[str] = "random-projection"
    needs_labels: ClassVar[bool] = False

    def __init__(self, n_components=None, rng=None):
        self.n_components = n_components
        self.rng = rng

    def fit(self, X, y_utility=None, y_privacy=None):
        X, _, _, n_u = self._prepare(X, y_utility, None)
        k = self._k(n_u, X.shape[1])
        gen = make_source(self.rng).generator
        self.components_ = gen.standard_normal((X.shape[1], k)) / math.sqrt(k)
        self.n_components_ = k
        return self


class IdentityProjection(Projection):
    """``W = I`` ("Full-Dimensional" rows of the paper's tables)."""

    name: ClassVar[str] = "full-dimensional"
    needs_labels: ClassVar[bool] = False

    def __init__(self):
        pass

    def fit(self, X, y_utility=None, y_privacy=None):
        X = _as_matrix(X)
        self.components_ = np.eye(X.shape[1])
        self.n_components_ = X.shape[1]
        return self


PROJECTIONS: dict[str, type[Projection]] = {
    c.name: c for c in (JUPA, RUCA, DCA, MDR, PCAProjection, RandomProjection, IdentityProjection)
}
PROJECTIONS["identity"] = IdentityProjection


def make_projection(name: str, **params) -> Projection:
    """Build a projection by name (``jupa``, ``ruca``, ``dca``, ``mdr``, ``pca``, ``random-projection``,
    ``full-dimensional``/``identity``), refusing unknown parameters with the valid list."""
    if name not in PROJECTIONS:
        raise ParameterError(f"unknown projection '{name}'; available: {', '.join(sorted(PROJECTIONS))}")
    cls = PROJECTIONS[name]
    valid = set(cls().get_params(deep=False))
    unknown = sorted(set(params) - valid)
    if unknown:
        raise ParameterError(f"projection '{name}' has no parameter(s) {unknown}; its parameters: {sorted(valid)}")
    return cls(**params)


