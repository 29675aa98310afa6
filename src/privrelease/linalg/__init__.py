"""Deterministic linear algebra used by the mechanisms (no privacy parameters here).

Conventions: eigenvalues sorted descending, eigenvectors with a deterministic sign
(largest-magnitude entry positive), symmetric matrices kept exactly symmetric.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg


def upper_indices(d: int) -> tuple[np.ndarray, np.ndarray]:
    """Row/column indices of the upper triangle including the diagonal (``d (d+1) / 2`` entries)."""
    return np.triu_indices(d)


def upper(A: np.ndarray) -> np.ndarray:
    """The upper triangle (with diagonal) of a square matrix as a vector."""
    return A[np.triu_indices(A.shape[0])]


def mirror(u: np.ndarray, d: int) -> np.ndarray:
    """Inverse of :func:`upper`: a symmetric ``d x d`` matrix from its upper triangle.

    >>> mirror(np.array([1., 2., 3.]), 2).tolist()
    [[1.0, 2.0], [2.0, 3.0]]
    """
    A = np.zeros((d, d))
    iu = np.triu_indices(d)
    A[iu] = u
    return A + np.triu(A, 1).T


def symmetrize(A: np.ndarray) -> np.ndarray:
    return (A + A.T) / 2.0


def fix_signs(V: np.ndarray) -> np.ndarray:
    """Make the largest-magnitude entry of each column positive (deterministic signs).

    >>> fix_signs(np.array([[0.6, 0.0], [-0.8, -1.0]])).tolist()
    [[-0.6, -0.0], [0.8, 1.0]]
    """
    if V.size == 0:
        return V
    idx = np.argmax(np.abs(V), axis=0)
    signs = np.sign(V[idx, np.arange(V.shape[1])])
    signs[signs == 0] = 1.0
    return V * signs


def sorted_eigh(A: np.ndarray, k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Eigenvalues (descending) and eigenvectors (columns) of a symmetric matrix.

    Only the top ``k`` are returned when ``k`` is given.

    >>> w, V = sorted_eigh(np.diag([1., 3., 2.]), k=2)
    >>> w.tolist(), V[:, 0].tolist()
    ([3.0, 2.0], [0.0, 1.0, 0.0])
    """
    A = symmetrize(np.asarray(A, dtype=np.float64))
    w, V = np.linalg.eigh(A)
    order = np.argsort(w)[::-1]
    w, V = w[order], V[:, order]
    if k is not None:
        w, V = w[:k], V[:, :k]
    return w, fix_signs(V)


def top_eigenvectors(A: np.ndarray, k: int) -> np.ndarray:
    """The ``p x k`` matrix of the top-k eigenvectors (columns, signs fixed) of a symmetric matrix.

    >>> top_eigenvectors(np.diag([1., 3., 2.]), 2).T.tolist()
    [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
    """
    k = int(k)
    if not (1 <= k <= np.shape(A)[0]):
        raise ValueError(f"k must be in [1, {np.shape(A)[0]}], got {k}")
    return sorted_eigh(A, k)[1]


def generalized_eigh(A: np.ndarray, B: np.ndarray, k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Solve ``A w = lambda B w`` for symmetric A and symmetric positive definite B.

    Returns eigenvalues descending and B-orthonormal eigenvectors (columns).
    """
    A = symmetrize(np.asarray(A, dtype=np.float64))
    B = symmetrize(np.asarray(B, dtype=np.float64))
    w, V = scipy.linalg.eigh(A, B)
    order = np.argsort(w)[::-1]
    w, V = w[order], V[:, order]
    if k is not None:
        w, V = w[:k], V[:, :k]
    return w, fix_signs(V)


def psd_repair(S: np.ndarray, floor: float | None = None, shift: float = 0.0) -> np.ndarray:
    """Nearest-in-spectrum symmetric PSD matrix: eigenvalues lowered by ``shift``, then raised to ``floor``.

    Default floor ``1e-9 * max(1, trace(S)/d)`` (``floor=0`` clips at zero). Post-processing only.

    >>> R = psd_repair(np.array([[1., 2.], [2., 1.]]))
    >>> bool(np.all(np.linalg.eigvalsh(R) > 0)), bool(np.allclose(R, R.T))
    (True, True)
    """
    S = symmetrize(np.asarray(S, dtype=np.float64))
    d = S.shape[0]
    if d == 0:
        return S
    if floor is None:
        floor = 1e-9 * max(1.0, float(np.trace(S)) / d)
    w, V = np.linalg.eigh(S)
    w = np.maximum(w - float(shift), floor)
    return symmetrize((V * w) @ V.T)


def psd_sqrt(S: np.ndarray) -> np.ndarray:
    """A square root ``L = Q diag(sqrt(max(w, 0)))`` (``L L^T = S``) of a symmetric matrix ``S = Q diag(w) Q^T``.

    Negative eigenvalues (rounding) count as 0; robust for badly scaled PSD input (no
    Cholesky). ``mean + G @ L.T`` with standard normal rows ``G`` draws from ``N(mean, S)``.

    >>> L = psd_sqrt(np.diag([4., -1.]))
    >>> (L @ L.T).tolist()
    [[4.0, 0.0], [0.0, 0.0]]
    """
    w, V = np.linalg.eigh(symmetrize(np.asarray(S, dtype=np.float64)))
    return V * np.sqrt(np.maximum(w, 0.0))


def haar_orthonormal(n_rows: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    """``n_rows x dim`` matrix with Haar-distributed orthonormal rows (QR of a Gaussian, sign-corrected)."""
    if n_rows > dim:
        raise ValueError("cannot have more orthonormal rows than the dimension")
    G = rng.standard_normal((dim, n_rows))
    Q, R = np.linalg.qr(G)
    Q = Q * np.sign(np.diag(R))
    return Q.T


def projector(V: np.ndarray) -> np.ndarray:
    """Orthogonal projector onto the column span of V (orthonormal columns)."""
    return V @ V.T
