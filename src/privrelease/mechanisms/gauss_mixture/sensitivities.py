"""Sensitivities and the per-record clipping of gauss-pca (R1, the label inside the record).

Derivations: docs/derivations.md and each function's docstring."""

from __future__ import annotations

import math

import numpy as np

from ...engine.preprocess import scale_rows_to_ball
from ...schema.encoding import EncodedDomain
from ...dp.sensitivities import gram_l2


# ---- sensitivities (R1, label inside the record) -------------------------------------

def centre_sensitivity(domain: EncodedDomain, row_norm_bound: float | None = None) -> float:
    """L2 sensitivity of ``sum_i x_i`` for encoded rows: ``min(sqrt(p1 + 2 p2), 2 B)``.

    Replacing x by x' changes the sum by ``x' - x``. Numeric coordinates lie in [0, 1]
    and each one-hot block changes two coordinates by 1, so
    ``||x - x'||_2^2 <= p1 + 2 p2``; rows scaled into the ball of public radius B (the
    schema's ``row_norm_bound``) also satisfy ``||x - x'|| <= 2 B``. Scaling a row
    towards 0 keeps it in the convex hull of the domain and 0, whose vertices give the
    same first bound.
    """
    s = domain.max_l2_diff
    if row_norm_bound is not None:
        s = min(s, 2.0 * float(row_norm_bound))
    return float(s)


def domain_radius(domain: EncodedDomain, centre: np.ndarray, row_norm_bound: float | None = None) -> float:
    """An upper bound on ``||x - c||_2`` over encoded rows x (public: c is a DP release).

    Notes
    -----
    Unscaled rows: ``||x - c||^2`` is convex, so its maximum over the encoded domain is
    at a vertex, and it separates over columns: numeric coordinate j contributes at most
    ``max(c_j, 1 - c_j)^2``; a one-hot block b at level k contributes ``||e_k - c_b||^2 =
    ||c_b||^2 + 1 - 2 c_k``, largest for the smallest ``c_k``. That maximum is attained.

    Rows scaled into the ball of public radius B (``x -> x min(1, B / ||x||)``) are
    ``lambda x`` with ``lambda in (0, 1]``, so they lie in the convex hull of the domain and
    the origin. The maximum of the convex function over that hull is at a vertex of the
    domain or at 0, so ``r^2 = max(vertex bound, ||c||^2)``; they also lie in the B-ball,
    so ``r <= B + ||c||`` as well. The origin matters when a one-hot block's centre has
    entries above 1/2: for ``c = (0.7, 0.7)`` and ``B = 0.1`` the scaled row ``(0.1, 0)``
    is at squared distance 0.85 while the vertex bound gives 0.58.
    """
    c = np.asarray(centre, dtype=np.float64)
    idx = np.asarray(domain.numeric, dtype=int)
    r2 = float(np.sum(np.maximum(c[idx], 1.0 - c[idx]) ** 2)) if idx.size else 0.0
    for a, b in domain.blocks:
        cb = c[a:b]
        r2 += float(cb @ cb + 1.0 - 2.0 * cb.min())
    if row_norm_bound is None:
        return math.sqrt(max(r2, 0.0))
    c_norm = float(np.linalg.norm(c))
    return min(math.sqrt(max(r2, c_norm**2)), float(row_norm_bound) + c_norm)


def sum_sensitivity(radius: float) -> float:
    """Per-class sums of clipped rows ``t_i`` (``||t_i|| <= R``), all classes stacked: ``2 R``.

    Same class: ``||t' - t|| <= 2 R``. Class changes: one block loses t, another gains t',
    ``sqrt(||t||^2 + ||t'||^2) <= sqrt(2) R``. The maximum is ``2 R``.
    """
    return 2.0 * radius


def moment_sensitivity(radius: float) -> float:
    """Upper triangles of per-class ``sum t t^T`` (or of the global one), stacked: ``sqrt(2) R^2``.

    Same class: ``||upper(t t^T - t' t'^T)||_2 <= ||t t^T - t' t'^T||_F`` and
    ``||t t^T - t' t'^T||_F^2 = ||t||^4 + ||t'||^4 - 2 (t . t')^2 <= 2 R^4``
    (ALGORITHMS.md T2 scaled by R^2; attained by orthogonal t, t' of norm R, for which
    the upper-triangle norm is also ``sqrt(2) R^2``). Class changes: two blocks move by
    ``upper(t t^T)`` and ``upper(t' t'^T)``, each of norm ``<= ||t||^2 <= R^2``, total
    ``<= sqrt(2) R^2``.
    """
    return gram_l2(radius)


COUNT_SENSITIVITY = math.sqrt(2.0)  # a record changing class moves two counts by 1: ||e_y - e_y'||_2


def residual_sensitivity(radius: float) -> float:
    """``sum_i (||z_i||^2 - ||V^T z_i||^2)``: each term lies in [0, R^2], so replacing one changes it by ``<= R^2``."""
    return radius**2


def sq_distance_sensitivity(r_dom: float) -> float:
    """``sum_i ||x_i - c||^2`` with ``||x_i - c|| <= r_dom``: each term in [0, r_dom^2]; sensitivity ``r_dom^2``."""
    return r_dom**2


def clip_rows(X: np.ndarray, centre: np.ndarray, radius: float, row_norm_bound: float | None = None) -> np.ndarray:
    """Rows ``z = (x - c) min(1, R / ||x - c||)`` (after scaling x into the public ball ``||x|| <= B``)."""
    X = np.asarray(X, dtype=np.float64)
    if row_norm_bound is not None:
        X = scale_rows_to_ball(X, float(row_norm_bound))
    Z = X - centre
    norms = np.sqrt(np.einsum("ij,ij->i", Z, Z))
    scale = np.minimum(1.0, radius / np.maximum(norms, 1e-300))
    return Z * scale[:, None]

