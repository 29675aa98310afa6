"""The pieces of gauss-pca below the mechanism: the per-chunk maps of its passes and the
post-processing of its released statistics into a model (no noise is drawn here).

The maps are module-level functions (picklable: they run on Dask workers as well as on local
chunks), so clipping and row scaling happen identically on every engine. The model functions
use released quantities only. Derivations: the Notes of
:class:`~privrelease.mechanisms.gauss_mixture.gauss_pca.GaussPCA` and ``docs/derivations.md``.
"""

from __future__ import annotations

import math

import numpy as np

from ...engine.preprocess import scale_rows_to_ball
from ...engine.stats import SufficientStats
from ...errors import InputDataError
from ...linalg import fix_signs, psd_repair, psd_sqrt, sorted_eigh, symmetrize
from ...dp.rounding import largest_remainder
from ..base import check_one_hot
from .sensitivities import clip_rows


def mean_direction_basis(S1_full, counts, A_noisy, P):
    """Orthonormal p x P basis: the released class-mean contrasts first (at most C - 1
    directions), then the top eigenvectors of the noisy second moment restricted to their
    orthogonal complement. Only released quantities enter (post-processing)."""
    w = np.maximum(counts, 1.0)
    means = S1_full / w[:, None]
    D = means - (w @ means) / w.sum()  # C x p contrasts, rank <= C - 1
    U, sv, _ = np.linalg.svd(D.T, full_matrices=True)  # U: p x p orthogonal
    rank = int(np.sum(sv > 1e-12 * max(float(sv.max(initial=0.0)), 1e-300)))
    k = min(P, rank, len(counts) - 1)
    if k >= P:
        return fix_signs(U[:, :P])
    N = U[:, k:]  # orthonormal basis of the complement
    _, W = sorted_eigh(N.T @ A_noisy @ N, P - k)
    return fix_signs(np.hstack([U[:, :k], N @ W]))


# ---- the per-chunk maps of the passes (module level: they run on Dask workers) ------------
def _checked_chunk(X, blocks=()) -> np.ndarray:
    """A finite 2-d chunk in [0, 1] whose declared categorical ``blocks`` are one-hot."""
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or not np.all(np.isfinite(X)):
        raise InputDataError("X must be a finite 2-d encoded matrix")
    if X.size and (X.min() < -1e-12 or X.max() > 1 + 1e-12):
        raise InputDataError("X must be encoded into [0, 1] (use privrelease.schema.Encoder)")
    check_one_hot(X, blocks)
    return X


def _centre_pass_map(X, y, bound, blocks=()):
    """Pass 1 of one chunk: (records, sum x, sum ||x||^2, has labels) after scaling into the ball."""
    X = _checked_chunk(X, blocks)
    if bound is not None:
        X = scale_rows_to_ball(X, float(bound))
    return X.shape[0], X.sum(axis=0), float(np.einsum("ij,ij->", X, X)), int(y is not None)


def _clipped_stats_map(X, y, centre, radius, bound, n_classes, blocks=()):
    """Pass 2 of one chunk: per-class statistics of the rows clipped around the DP centre."""
    Z = clip_rows(_checked_chunk(X, blocks), centre, radius, bound)
    st = SufficientStats(p=Z.shape[1])
    return st.update(Z, None if y is None else np.asarray(y, dtype=int), n_classes)


def _within_moments_map(X, y, centre, radius, bound, basis, class_means, within_radius):
    """Pass 3 of one chunk: per-class second moments of ``clip(V^T z - m_y, R_w)``."""
    y = np.asarray(y, dtype=int)
    Tm = clip_rows(_checked_chunk(X), centre, radius, bound) @ basis - class_means[y]
    Wc = Tm * np.minimum(1.0, within_radius / np.maximum(np.linalg.norm(Tm, axis=1), 1e-300))[:, None]
    C, P = class_means.shape
    W2 = np.zeros((C, P, P))
    for c in range(C):
        Wk = Wc[y == c]
        W2[c] += Wk.T @ Wk
    return W2


def _centre_stats(stats: SufficientStats, c: np.ndarray) -> SufficientStats:
    """Statistics of ``x - c`` from those of x (exact algebra, per class)."""
    def one(s):
        s1 = s.s1 - s.n * c
        s2 = s.s2 - np.outer(s.s1, c) - np.outer(c, s.s1) + s.n * np.outer(c, c)
        return SufficientStats(p=s.p, n=s.n, s1=s1, s2=symmetrize(s2))

    out = one(stats)
    out.classes = {k: one(v) for k, v in stats.classes.items()}
    return out


# ---- post-processing of the released statistics into the mixture (no noise here) -------------
def mixture_from_moments(S1, S2, counts, pooled: bool):
    """Class means and covariances from released class sums ``S1`` (C x P), second moments
    ``S2`` (C x P x P) and counts; one pooled within-class covariance when ``pooled``."""
    C = S1.shape[0]
    n_eff = np.maximum(counts, 1.0)
    means = S1 / n_eff[:, None]
    covs = S2 / n_eff[:, None, None] - np.einsum("ci,cj->cij", means, means)
    if pooled and C > 1:
        pooled_cov = (S2.sum(axis=0) - np.einsum("c,ci,cj->ij", n_eff, means, means)) / n_eff.sum()
        covs = np.stack([pooled_cov] * C)
    return means, covs


def mixture_from_within(W2, counts, pooled: bool):
    """Covariances from released within-class second moments ``W2`` (already centred)."""
    C = W2.shape[0]
    n_eff = np.maximum(counts, 1.0)
    if pooled:
        return np.stack([W2.sum(axis=0) / n_eff.sum()] * C)
    return W2 / n_eff[:, None, None]


def shrink_covariances(covs, counts, noise_std: float, shrinkage: float, pooled: bool):
    """Noise-edge shrinkage: a symmetric Gaussian noise matrix with entry std s has spectral norm
    about ``2 sqrt(P) s``; each covariance's eigenvalues are lowered by ``shrinkage`` times that
    edge (divided by the class's count) and clipped at 0 (post-processing)."""
    C, P = covs.shape[0], covs.shape[1]
    n_eff = np.maximum(counts, 1.0)
    if pooled and C > 1:
        edge = 2.0 * math.sqrt(P) * noise_std * math.sqrt(C) / n_eff.sum() * np.ones(C)
    else:
        edge = 2.0 * math.sqrt(P) * noise_std / n_eff
    return np.stack([psd_repair(S, floor=0.0, shift=float(shrinkage) * e) for S, e in zip(covs, edge)])


def sample_mixture(gen, n: int, weights, means, covs, V, centre, residual_variance: float):
    """``n`` records from the released mixture: class sizes by largest remainders, Gaussian
    scores in the basis ``V`` (p x P), isotropic residual outside it; rows shuffled. Returns
    ``(X, class codes)``."""
    C = len(weights)
    k = largest_remainder(weights, n)
    p, P = V.shape
    X = np.empty((n, p))
    y = np.repeat(np.arange(C), k)
    start = 0
    for c in range(C):
        if k[c] == 0:
            continue
        L = psd_sqrt(covs[c])
        T = means[c] + gen.standard_normal((k[c], P)) @ L.T
        X[start:start + k[c]] = T @ V.T
        start += k[c]
    if residual_variance > 0:
        G = gen.standard_normal((n, p))
        G -= (G @ V) @ V.T
        X += math.sqrt(residual_variance) * G
    X += centre
    perm = gen.permutation(n)
    return X[perm], y[perm]
