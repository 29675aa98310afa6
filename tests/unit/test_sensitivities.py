"""Verification hooks of ALGORITHMS.md 8: enumerate neighbour pairs on a grid and compare with the constants."""

import itertools
import math

import numpy as np
import pytest

from privrelease.linalg import upper
from privrelease.mechanisms.jiang.pca import moment_sensitivity, paper_moment_sensitivity, projection_sensitivity
from privrelease.mechanisms.baselines.laplace import identity_sensitivity
from privrelease.schema.encoding import EncodedDomain


def _rows(p1, levels):
    """All encoded rows with numeric values in {0, 0.5, 1} and one-hot categorical blocks."""
    nums = list(itertools.product([0.0, 0.5, 1.0], repeat=p1))
    cats = list(itertools.product(*[range(k) for k in levels]))
    rows = []
    for a in nums:
        for c in cats:
            x = list(a)
            for k, lvl in zip(levels, c):
                x += [1.0 if i == lvl else 0.0 for i in range(k)]
            rows.append(x)
    return np.array(rows)


def _domain(p1, levels):
    blocks, start = [], p1
    for k in levels:
        blocks.append((start, start + k))
        start += k
    return EncodedDomain(p=start, numeric=tuple(range(p1)), blocks=tuple(blocks))


def _moment_vectors(R):
    return np.array([np.concatenate([x, upper(np.outer(x, x))]) for x in R])


CASES = [(1, (2, 2, 2)), (2, (3,)), (1, (2, 3)), (3, ()), (2, (2, 2)), (0, (3, 2)), (1, (3,)), (2, (2,))]


@pytest.mark.parametrize("p1, levels", CASES)
def test_moment_sensitivity_bounds_every_pair(p1, levels):
    R = _rows(p1, levels)
    T = _moment_vectors(R)
    # max over pairs of the L1 change of (x, upper(x x^T))
    worst = max(np.abs(T - t).sum(axis=1).max() for t in T)
    dom = _domain(p1, levels)
    assert worst <= moment_sensitivity(dom) + 1e-9
    assert np.abs(R[:, None, :] - R[None, :, :]).sum(-1).max() <= identity_sensitivity(dom) + 1e-9


def test_paper_mixed_sensitivity_is_too_small():
    """Erratum E2: the paper's value is exceeded by a vertex witness (and in most small cases)."""
    exceeded = 0
    for p1, levels in CASES:
        if not levels or p1 == 0:
            continue
        T = _moment_vectors(_rows(p1, levels))
        worst = max(np.abs(T - t).sum(axis=1).max() for t in T)
        exceeded += worst > paper_moment_sensitivity(_domain(p1, levels)) + 1e-9
    assert exceeded >= 3
    # the witness of E2: p1 = 1, three binary categoricals -> 24 > 23
    dom = _domain(1, (2, 2, 2))
    x = np.array([1, 1, 0, 1, 0, 1, 0.0]); x2 = np.array([1, 0, 1, 0, 1, 0, 1.0])
    change = np.abs(_moment_vectors([x])[0] - _moment_vectors([x2])[0]).sum()
    assert change == 24 and paper_moment_sensitivity(dom) == 23 and moment_sensitivity(dom) >= 24


def test_adult_constant():
    dom = _domain(5, (8, 7, 6, 5, 2, 2))
    assert moment_sensitivity(dom) == 134 and paper_moment_sensitivity(dom) == 104


def test_projection_sensitivity_random_orthonormal():
    rng = np.random.default_rng(0)
    p1, levels = 2, (3, 2)
    R = _rows(p1, levels)
    dom = _domain(p1, levels)
    for k in (1, 2, 3):
        for _ in range(20):
            U = np.linalg.qr(rng.standard_normal((dom.p, k)))[0].T
            P = R @ U.T
            worst = max(np.abs(P - q).sum(axis=1).max() for q in P)
            assert worst <= projection_sensitivity(dom, k) + 1e-9
    assert math.isclose(projection_sensitivity(dom, 4), 2 * math.sqrt(2 + 4))
