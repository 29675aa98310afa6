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
attack accuracies (see :mod:`privrelease.evaluation.inference_attack`).

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

from ..errors import InputDataError, ParameterError
from ..linalg import generalized_eigh, sorted_eigh
from ..noise import make_source
from .base import RowAlignedMechanism

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


# ---------------------------------------------------------------------------------------------
# MMD fine-grained perturbation (sec. IV-C; ALGORITHMS.md 5.3)

UPDATE_RULES = ("literal", "gradient")


def _sq_dists(A, B):
    d = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
    return np.maximum(d, 0.0)


def _rbf(A, B, sigma):
    """RBF kernel matrix; values below exp(-80) are set to 0 (avoids slow subnormal arithmetic)."""
    arg = _sq_dists(A, B) / (2.0 * sigma * sigma)
    K = np.exp(-np.minimum(arg, 80.0))
    K[arg >= 80.0] = 0.0
    return K


class MMDPerturbation(BaseEstimator):
    """Kernel-MMD label changing of projected records towards a random privacy class.

    ``fit(Zpub, y_privacy)`` takes the *projected* public records with their privacy
    labels, splits them per class into ground-truth ``G`` and verification ``V`` halves
    (stratified 50/50 [A]) and chooses the RBF width ``sigma`` by two-fold cross-validation
    of the MMD label function (eq 10) on the two halves, unless ``sigma`` is given.
    ``perturb(Xhat)`` returns the released records ``Z`` and what happened to each.

    Parameters
    ----------
    sigma : float or None (None: chosen by cross-validation from ``sigma_grid`` x median distance)
    lam : lambda of eq 12 (paper 0.001)
    alpha : learning rate of eq 14 (paper 0.1)
    max_iter : iteration cap T_max (the paper gives none; E18) [A: 1000]
    update : "literal" (default): theta persists, ``theta <- theta - alpha g``, ``z <- z + theta``
        (eqs 11, 14 read literally, momentum-like); "gradient": plain gradient descent on the
        total displacement, ``theta <- theta - alpha g``, ``z = xhat + theta``.
    rng : None (secure OS entropy for the owner's secret targets), int or Generator (experiments)

    Notes
    -----
    Gradient (eq 13, without the factor 2 of eq 12, absorbed in alpha):
    ``g = (1/n_s) sum_{G_s} k(g, z)(g - z)/sigma^2 - (1/n_t) sum_{G_t} k(g, z)(g - z)/sigma^2 + lambda theta``.
    All records are updated together (one kernel matrix per iteration); a record stops
    when its label equals its target or at ``max_iter``.
    """

    def __init__(self, sigma=None, lam=1e-3, alpha=0.1, max_iter=1000, update="literal", split=0.5,
                 sigma_grid=(0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0), rng=None):
        self.sigma = sigma
        self.lam = lam
        self.alpha = alpha
        self.max_iter = max_iter
        self.update = update
        self.split = split
        self.sigma_grid = sigma_grid
        self.rng = rng

    # -- fitting ------------------------------------------------------------------------------
    def fit(self, Z, y_privacy):
        Z = _as_matrix(Z)
        y = np.asarray(y_privacy)
        if y.ndim != 1 or y.shape[0] != Z.shape[0]:
            raise InputDataError("y_privacy must be a 1-d array with one label per record")
        if self.update not in UPDATE_RULES:
            raise ParameterError(f"update must be one of {UPDATE_RULES}, got {self.update!r}")
        if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, (int, np.integer)) or self.max_iter < 1:
            raise ParameterError(f"max_iter must be an integer >= 1, got {self.max_iter!r}")
        for nm in ("lam", "alpha"):
            v = getattr(self, nm)
            if not isinstance(v, (int, float, np.floating)) or not np.isfinite(v) or v < 0:
                raise ParameterError(f"{nm} must be a finite number >= 0, got {v!r}")
        if not 0 < float(self.split) < 1:
            raise ParameterError(f"split must be in (0, 1), got {self.split!r}")
        self.classes_, codes = np.unique(y, return_inverse=True)
        codes = codes.ravel()
        L = self.classes_.size
        if L < 2:
            raise InputDataError("the privacy label needs at least two classes")
        self.source_ = make_source(self.rng)
        gen = self.source_.generator
        # stratified split into ground truth G and verification V (each class needs >= 1 in both)
        is_g = np.zeros(Z.shape[0], dtype=bool)
        perm = gen.permutation(Z.shape[0])
        for c in range(L):  # loop over classes, not records
            idx = perm[codes[perm] == c]
            if idx.size < 2:
                raise InputDataError(f"privacy class {self.classes_[c]!r} has fewer than 2 public records")
            n_g = min(max(1, int(round(idx.size * float(self.split)))), idx.size - 1)
            is_g[idx[:n_g]] = True
        self.G_, self.g_codes_ = Z[is_g], codes[is_g]
        self.V_, self.v_codes_ = Z[~is_g], codes[~is_g]
        if self.sigma is None:
            med = float(np.sqrt(np.median(_sq_dists(Z[perm[:500]], Z[perm[:500]]))))
            med = med if med > 0 else 1.0
            grid = [med * float(f) for f in self.sigma_grid]
            scores = []
            for s in grid:
                a1 = np.mean(self._label_with(self.G_, self.V_, self.v_codes_, s, L) == self.g_codes_)
                a2 = np.mean(self._label_with(self.V_, self.G_, self.g_codes_, s, L) == self.v_codes_)
                scores.append((a1 + a2) / 2)
            self.sigma_scores_ = dict(zip(grid, scores))
            self.sigma_ = grid[int(np.argmax(scores))]
        else:
            if not float(self.sigma) > 0:
                raise ParameterError(f"sigma must be > 0, got {self.sigma!r}")
            self.sigma_ = float(self.sigma)
        self._prepare_label(L)
        return self

    @staticmethod
    def _label_with(Q, R, r_codes, sigma, L, self_term=None):
        """MMD label (eq 10) of the rows of Q with reference set R."""
        K = _rbf(Q, R, sigma)
        onehot = np.zeros((R.shape[0], L))
        onehot[np.arange(R.shape[0]), r_codes] = 1.0
        counts = onehot.sum(0)
        if self_term is None:
            KR = _rbf(R, R, sigma)
            self_term = np.einsum("il,ij,jl->l", onehot, KR, onehot) / counts ** 2
        cross = (K @ onehot) / counts
        return np.argmin(self_term[None, :] - 2 * cross, axis=1)

    def _prepare_label(self, L):
        s = self.sigma_
        onehot = np.zeros((self.V_.shape[0], L))
        onehot[np.arange(self.V_.shape[0]), self.v_codes_] = 1.0
        self._v_onehot = onehot
        self._v_counts = onehot.sum(0)
        KV = _rbf(self.V_, self.V_, s)
        self._v_self = np.einsum("il,ij,jl->l", onehot, KV, onehot) / self._v_counts ** 2
        g_onehot = np.zeros((self.G_.shape[0], L))
        g_onehot[np.arange(self.G_.shape[0]), self.g_codes_] = 1.0
        self._g_onehot = g_onehot
        self._g_counts = g_onehot.sum(0)

    # -- using --------------------------------------------------------------------------------
    def label_codes(self, Z) -> np.ndarray:
        """Privacy class codes (indices into ``classes_``) given by the MMD label function (eq 10)."""
        Z = np.asarray(Z, dtype=np.float64)
        K = _rbf(Z, self.V_, self.sigma_)
        return np.argmin(self._v_self[None, :] - 2 * (K @ self._v_onehot) / self._v_counts, axis=1)

    def label(self, Z) -> np.ndarray:
        return self.classes_[self.label_codes(Z)]

    def perturb(self, Xhat, targets=None):
        """Perturb projected records towards random (or given) target classes.

        Returns ``(Z, info)``; ``info`` holds ``source`` and ``target`` (class labels),
        ``iterations`` (0 when released unchanged) and ``flipped`` (label reached the target).
        """
        Xhat = np.asarray(Xhat, dtype=np.float64)
        if Xhat.ndim != 2 or Xhat.shape[1] != self.G_.shape[1]:
            raise InputDataError(f"records must have {self.G_.shape[1]} columns, got shape {Xhat.shape}")
        n, L = Xhat.shape[0], self.classes_.size
        if targets is None:
            t = self.source_.generator.integers(0, L, size=n)
        else:
            lookup = {c: i for i, c in enumerate(self.classes_.tolist())}
            try:
                t = np.array([lookup[v] for v in np.asarray(targets).tolist()], dtype=np.int64)
            except KeyError as exc:
                raise InputDataError(f"unknown target class {exc.args[0]!r}") from None
        s = self.label_codes(Xhat)
        Z = Xhat.copy()
        theta = np.zeros_like(Z)
        iters = np.zeros(n, dtype=np.int64)
        active = np.flatnonzero(s != t)
        sig2 = self.sigma_ ** 2
        w_s = self._g_onehot / self._g_counts  # (n_G, L): 1/n_l on the record's class column
        for it in range(1, int(self.max_iter) + 1):
            if active.size == 0:
                break
            za = Z[active]
            K = _rbf(za, self.G_, self.sigma_)  # (a, n_G)
            W = K * (w_s[:, s[active]].T - w_s[:, t[active]].T)  # +1/n_s on G_s, -1/n_t on G_t
            g = (W @ self.G_ - W.sum(1)[:, None] * za) / sig2 + self.lam * theta[active]
            theta[active] -= self.alpha * g
            if self.update == "literal":
                Z[active] = za + theta[active]
            else:
                Z[active] = Xhat[active] + theta[active]
            iters[active] = it
            done = self.label_codes(Z[active]) == t[active]
            active = active[~done]
        flipped = self.label_codes(Z) == t
        info = {"source": self.classes_[s], "target": self.classes_[t], "iterations": iters, "flipped": flipped}
        return Z, info


# ---------------------------------------------------------------------------------------------
# the owner-side mechanism


class JUPAMMDPerturbation(RowAlignedMechanism):
    """Owner-side release: public projection (JUPA or a special case) then MMD label changing.

    Parameters
    ----------
    public_X : encoded public records (M columns, same encoding as the owner's records)
    public_utility, public_privacy : their utility and privacy labels
    projection : "jupa" (default), "ruca", "dca", "mdr", "pca", "random-projection", "full-dimensional"
    projection_params : dict of projection parameters (e.g. ``{"rho1": 100}``)
    fine : apply the MMD fine-grained step (default True)
    lam, alpha, max_iter, update, sigma : MMD parameters (see :class:`MMDPerturbation`)
    rng : None (OS entropy: real use), int or Generator (experiments)

    Notes
    -----
    Guarantee: **none (empirical)**. No neighbouring relation applies: each record is
    transformed by a deterministic public projection followed by a label-changing walk
    whose only secret is the random target class. The paper's Theorem 1 does not hold
    against an attacker who knows the mechanism (ALGORITHMS.md E17); the measured attack
    accuracies (paper's attacker and mechanism-aware attacker) are what this release can
    report, see :func:`privrelease.evaluation.inference_attack.evaluate`. Nothing about the
    owner's records is used to fit: the projection and the kernel width come from public
    data; the owner's records are only transformed. Everything in ``public_*`` is public.
    """

    name: ClassVar[str] = "jupa-mmd"
    guarantee: ClassVar[str] = "none (empirical)"
    relation: ClassVar[str] = "none: owner-side per-record perturbation learned from public data (no formal guarantee, E17)"
    summary: ClassVar[str] = ("Zhuang-Chang owner-side perturbation: JUPA projection + MMD label changing; "
                              "measured attack accuracy only")
    contract_release: ClassVar[bool] = False  # owner-side: run by `privrelease perturb`, not `release`
    columns: ClassVar[str] = "z1..zK, the projected coordinates: NOT the schema's columns"

    def __init__(self, public_X=None, public_utility=None, public_privacy=None, *, projection="jupa",
                 projection_params=None, fine=True, lam=1e-3, alpha=0.1, max_iter=1000, update="literal",
                 sigma=None, domain=None, rng=None):
        self.public_X = public_X
        self.public_utility = public_utility
        self.public_privacy = public_privacy
        self.projection = projection
        self.projection_params = projection_params
        self.fine = fine
        self.lam = lam
        self.alpha = alpha
        self.max_iter = max_iter
        self.update = update
        self.sigma = sigma
        self.domain = domain
        self.rng = rng

    def fit(self, X=None, y=None):
        """Learn the projection and the MMD reference sets from the public data (``X`` is not used)."""
        if self.public_X is None or self.public_utility is None or self.public_privacy is None:
            raise InputDataError("jupa-mmd needs public data: public_X, public_utility and public_privacy")
        P = _as_matrix(self.public_X)
        self.source_ = make_source(self.rng)
        params = dict(self.projection_params or {})
        if self.projection == "random-projection":
            params.setdefault("rng", self.source_.generator)
        self.projection_ = make_projection(self.projection, **params).fit(P, self.public_utility, self.public_privacy)
        yp = np.asarray(self.public_privacy)
        yp = yp if yp.ndim == 1 else yp[:, 0]
        if self.fine:
            self.mmd_ = MMDPerturbation(sigma=self.sigma, lam=self.lam, alpha=self.alpha, max_iter=self.max_iter,
                                        update=self.update, rng=self.source_.generator)
            self.mmd_.fit(self.projection_.transform(P), yp)
        self.output_columns_ = [f"z{i + 1}" for i in range(self.projection_.components_.shape[1])]
        self.sensitivities_, self.noise_scales_, self.budget_split_ = {}, {}, {}
        self.notes_ = ["no formal privacy guarantee (ALGORITHMS.md E17): report measured attack accuracies"]
        return self

    def transform(self, X):
        Xhat = self.projection_.transform(X)
        if not self.fine:
            self.last_info_ = None
            return Xhat
        Z, info = self.mmd_.perturb(Xhat)
        self.last_info_ = info
        return Z

    def certificate_extra(self) -> dict:
        d = {"projection": self.projection, "n_components": int(self.projection_.components_.shape[1])}
        if self.fine:
            d["sigma"] = self.mmd_.sigma_
            if getattr(self, "last_info_", None) is not None:
                d["flipped_fraction"] = float(np.mean(self.last_info_["flipped"]))
        return d
