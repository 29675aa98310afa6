"""Sensitivities shared by several mechanisms (one definition each; derivations in the docstrings).

All are replace-one (R1) sensitivities over encoded rows: numeric coordinates in
[0, 1], each categorical variable a one-hot block (``p1`` numeric columns, ``p2``
categorical variables; :class:`~privrelease.schema.encoding.EncodedDomain`).
"""

from __future__ import annotations

import math

from ..schema.encoding import EncodedDomain


def second_moment_l1(domain: EncodedDomain) -> float:
    """L1 sensitivity of ``upper(sum_i x_i x_i^T)`` (with diagonal) under R1: ``p1 (p1+1)/2 + 2 p1 p2 + p2 (p2+1)``.

    Notes
    -----
    Replace x by x'. Numeric x numeric products (upper triangle with diagonal) lie in
    [0, 1], so each changes by at most 1: ``p1 (p1 + 1) / 2``. A numeric x dummy
    product is nonzero for one level per categorical variable; when the level changes
    one product leaves and another enters, at most 1 each: ``2 p1 p2``. Dummy x dummy:
    the diagonal entry of the old and the new level change by 1 each (``2 p2``), and
    for each pair of distinct variables one nonzero product leaves and one enters
    (``2 p2 (p2 - 1) / 2``): ``p2 (p2 + 1)`` in all (ALGORITHMS.md 2.1, erratum E2).

    >>> second_moment_l1(EncodedDomain.numeric_box(3))
    6.0
    """
    p1, p2 = domain.p1, domain.p2
    return float(p1 * (p1 + 1) / 2 + 2 * p1 * p2 + p2 * (p2 + 1))


def first_and_second_moment_l1(domain: EncodedDomain) -> float:
    """L1 sensitivity of ``(sum x, upper(sum x x^T))``: ``(p1 + 2 p2) + second_moment_l1``.

    The sum moves by ``||x' - x||_1 <= p1 + 2 p2`` (a category change moves two
    dummies); the second moment as in :func:`second_moment_l1`.

    >>> first_and_second_moment_l1(EncodedDomain.numeric_box(3))
    9.0
    """
    return float(domain.max_l1_diff) + second_moment_l1(domain)


def gram_l2(radius: float) -> float:
    """L2 sensitivity of ``upper(sum_i t_i t_i^T)`` for ``||t_i||_2 <= R`` under R1: ``sqrt(2) R^2``.

    Notes
    -----
    The upper triangle is a subset of the entries, so its L2 norm is at most the
    Frobenius norm, and ``||t t^T - t' t'^T||_F^2 = ||t||^4 + ||t'||^4 - 2 (t . t')^2
    <= 2 R^4`` (ALGORITHMS.md T2, scaled by R^2); orthogonal t, t' of norm R attain it
    (e.g. ``t = R e_1``, ``t' = R e_2``: two diagonal entries move by R^2). Under
    add/remove the constant would be R^2 (Dwork et al. 2014 state that case).

    >>> round(gram_l2(1.0), 6)
    1.414214
    """
    return math.sqrt(2.0) * float(radius) ** 2


def _upper_l1_constant(d: int) -> float:
    """``c_d`` with ``||upper(a a^T - b b^T)||_1 <= c_d R^2`` for ``||a||, ||b|| <= R`` in ``R^d`` (see below)."""
    return 1.0 if d == 1 else math.sqrt(d * (d + 3) / 2.0)


def gram_upper_l1(P: int, radius: float, target_bound: float = 0.0, class_change: bool = False) -> float:
    """L1 sensitivity under R1 of ``upper(sum_i w_i w_i^T)`` (with diagonal), ``w = z`` or ``w = (z, t)``.

    ``z in R^P`` with ``||z||_2 <= R``; with ``target_bound = b > 0`` a last coordinate
    ``t in [-b, b]`` is appended. ``class_change=True``: the statistics are stacked per
    class and a replacement may move the record to another class.

    Notes
    -----
    Write ``D = a a^T - a' a'^T`` for the replaced vector a and its replacement a', and
    ``U(D) = sum_{i <= j} |D_ij|`` (the L1 norm of the upper triangle with diagonal).

    *Same class, ``w = z`` (dimension d = P).* For ``P = 1``, ``|a^2 - a'^2| <= R^2``.
    For ``P >= 2`` split U into the diagonal (P entries) and the strict upper triangle
    (``m = P (P - 1) / 2`` entries). By Cauchy-Schwarz ``U(D) <= sqrt(P) ||diag D||_2 +
    sqrt(m) ||off||_2`` where ``||diag D||_2^2 + 2 ||off||_2^2 = ||D||_F^2``, and
    ``||D||_F^2 = ||a||^4 + ||a'||^4 - 2 (a . a')^2 <= 2 R^4``. Maximising the linear form
    on that ellipse gives ``U(D) <= ||D||_F sqrt(P + m / 2) = R^2 sqrt(P (P + 3) / 2)``.
    For ``P = 2`` this is attained: ``a = R (cos s, sin s)``, ``a' = R (-sin s, cos s)``
    give ``D = R^2 (cos 2s, sin 2s, -cos 2s)`` on the upper triangle, ``U = R^2 (2 |cos 2s|
    + |sin 2s|)``, maximal ``sqrt(5) R^2``, above the bound ``P R^2`` used before (whose
    proof bounded the diagonal change by ``| ||a||^2 - ||a'||^2 |`` instead of
    ``sum_i |a_i^2 - a'_i^2|``, which reaches ``2 R^2``).

    *Same class with a target.* The blocks of D are the P x P block, the cross terms
    ``t a_z - t' a'_z`` and ``t^2 - t'^2``: ``U(D) <= c_P R^2 + sqrt(P) (|t| + |t'|) R + b^2
    <= c_P R^2 + 2 sqrt(P) b R + b^2`` (``c_P`` the constant above). The Cauchy-Schwarz
    bound in dimension ``P + 1`` with ``||w||^2 <= R^2 + b^2`` is also valid; the smaller is used.

    *Triangle bound (and class change).* ``U(a a^T) = (||a||_1^2 + ||a||_2^2) / 2`` and
    ``||a||_1 <= sqrt(P) R + b``, so ``U(a a^T) + U(a' a'^T) <= (sqrt(P) R + b)^2 + R^2 + b^2``.
    When the record changes class one class block loses ``a a^T`` and another gains
    ``a' a'^T``, so this is the class-change sensitivity (attained by flat vectors), and it
    also bounds the same-class case. The stacked statistics' sensitivity is the maximum
    of the two cases.

    Checked numerically (worst cases found by optimisation, P = 1..6) in the unit tests.

    >>> round(gram_upper_l1(2, 1.0), 4), gram_upper_l1(1, 1.0), round(gram_upper_l1(3, 1.0, class_change=True), 9)
    (2.2361, 1.0, 4.0)
    """
    P = int(P)
    R, b = float(radius), float(target_bound)
    tri = (math.sqrt(P) * R + b) ** 2 + R**2 + b**2
    if class_change:
        return tri
    if b > 0:
        blocks = _upper_l1_constant(P) * R**2 + 2.0 * math.sqrt(P) * b * R + b**2
        cs = _upper_l1_constant(P + 1) * (R**2 + b**2)
        return min(tri, blocks, cs)
    return min(tri, _upper_l1_constant(P) * R**2)
