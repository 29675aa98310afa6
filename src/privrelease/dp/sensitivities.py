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
