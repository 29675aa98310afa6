"""Formulas of the compression mechanism: sample-size and truncation bounds, covariances, PCA utility (see :mod:`privrelease.mechanisms.compression.mechanism`)."""

from __future__ import annotations

import math

import numpy as np

from ...errors import InputDataError, ParameterError
from ...linalg import top_eigenvectors

#: Constants of Procedure IV.1 (Zhou et al. 2009): C1 ~ 2.5, C2 ~ 7.7, C = sqrt(2)(C1 + C2).
C1 = 2.5
C2 = 7.7
C_PAPER = math.sqrt(2.0) * (C1 + C2)

#: Plain-words statement shown by ``privrelease mechanisms`` and in every certificate.
DISTRIBUTIONAL_EXPLANATION = (
    "Distributional privacy is NOT differential privacy. The release is m random Gaussian mixtures of ALL "
    "records (an m x p table with no row belonging to any person). Its promise (Zhou, Ligett, Wasserman 2009) "
    "only covers datasets inside an assumed class: datasets whose normalised covariance matrices are all "
    "within a small distance (Delta_max) of each other and of a reference, with well-conditioned covariances. "
    "For two such datasets the probability of any released table differs by a factor of at most exp(alpha); "
    "alpha is an asymptotic bound with unspecified constants and o(1) terms, and it can be large for real "
    "sizes (compute it with `privrelease distributional-privacy`). It gives NO guarantee for a person whose "
    "record is unusual enough to move the covariance outside the class, there is no epsilon and no "
    "composition rule, and the column scaling and (by default) the reference are computed from the private "
    "data. Audit a concrete pair of datasets with privrelease.evaluation.distributional.audit_pair."
)


# ---- shared formulas -------------------------------------------------------------------

def min_rows(n: int, p: int) -> int:
    """Lemma IV.4's requirement ``m >= 2 (C1 + C2) ln(2 n p)`` (truncated mass <= 1/n^2)."""
    return int(math.ceil(2.0 * (C1 + C2) * math.log(2.0 * n * p)))


def truncation_threshold(n: int, p: int, m: int, delta_max: float, C: float = C_PAPER) -> float:
    """``tau = C sqrt(ln(2 n p) / m) + Delta_max``, the half-width of the acceptance box of eq. (12)."""
    return float(C * math.sqrt(math.log(2.0 * n * p) / m) + delta_max)


def default_delta_max(n: int, p: int) -> float:
    """Our default ``Delta_max = sqrt(ln(max(p, 2)) / n)``: Lemma IV.5's order for Gaussian data, constant 1.

    The paper gives only an order (O_P(sqrt(log p / n)), eq. 5 and Lemma IV.5); the
    constant 1 is our choice [A] and the certificate says so.
    """
    return math.sqrt(math.log(max(p, 2)) / n)


def normalized_covariance(X, center: bool = False) -> np.ndarray:
    """``Sigma_X = Y^T Y / n`` for ``Y`` = X with each column scaled to squared norm n (eq. 4).

    With ``center=True`` the columns are first centred at their empirical means. A
    column of zero norm stays zero (its row and column of Sigma_X are zero). Given X,
    the rows of the (untruncated) release are i.i.d. N(0, Sigma_X).
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    return _sigma_from_moments(n, X.sum(axis=0), X.T @ X, center)


def _sigma_from_moments(n, s1, s2, center):
    C = s2 - np.outer(s1, s1) / n if center else s2.copy()
    d = np.sqrt(np.clip(np.diag(C), 0.0, None))
    inv = np.divide(1.0, d, out=np.zeros_like(d), where=d > 0)
    S = C * inv[:, None] * inv[None, :]
    return (S + S.T) / 2


def compressed_covariance(Xt) -> np.ndarray:
    """``Xt^T Xt / m``: the analyst's estimate of Sigma_X from the released ``m x p`` table."""
    Xt = np.asarray(Xt, dtype=np.float64)
    if Xt.ndim != 2 or Xt.shape[0] == 0:
        raise InputDataError(f"the compressed table must be a non-empty 2-d array, got shape {Xt.shape}")
    return Xt.T @ Xt / Xt.shape[0]


def top_subspace(S, D: int) -> np.ndarray:
    """Orthonormal ``p x D`` basis of the top-D eigenvectors of the symmetric matrix S."""
    S = np.asarray(S, dtype=np.float64)
    if not (1 <= D <= S.shape[0]):
        raise ParameterError(f"D must be in [1, {S.shape[0]}], got {D}")
    return top_eigenvectors(S, D)


def projector_distance(A, B, D: int) -> float:
    """``||P_D(A) - P_D(B)||_F``, the distance between the top-D eigenprojectors of A and B."""
    U, V = top_subspace(A, D), top_subspace(B, D)
    return float(np.linalg.norm(U @ U.T - V @ V.T, "fro"))


def pca_utility_bound(A, A_plus_B, D: int) -> dict:
    """Proposition III.4 (Zwald-Blanchard): ``||P_D(A) - P_D(A+B)||_F <= ||B||_F / delta_D``.

    ``delta_D = (lambda_D - lambda_{D+1}) / 2`` of A; the bound holds when
    ``||B||_F <= delta_D / 2`` (``applies``). Returns the bound, the measured distance
    and the ingredients.
    """
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(A_plus_B, dtype=np.float64) - A
    lam = np.sort(np.linalg.eigvalsh((A + A.T) / 2))[::-1]
    if not (1 <= D < A.shape[0]):
        raise ParameterError(f"D must be in [1, {A.shape[0] - 1}], got {D}")
    gap = 0.5 * (lam[D - 1] - lam[D])
    bf = float(np.linalg.norm(B, "fro"))
    return {
        "D": D,
        "delta_D": float(gap),
        "B_fro": bf,
        "bound": float(bf / gap) if gap > 0 else math.inf,
        "applies": bool(gap > 0 and bf <= gap / 2),
        "distance": projector_distance(A, A + B, D),
        "max_possible_distance": math.sqrt(2.0 * min(D, A.shape[0] - D)),
    }


