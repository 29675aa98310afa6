"""gauss-copula's candidate marginals: their counts on the pass executor (copula_measure) and the rounds' accounting."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from privrelease.dp.calibration import calibrate_rho, epsilon_for
from privrelease.engine.passes import ChunkPasses
from privrelease.mechanisms.gauss_mixture import copula_defaults as D
from privrelease.mechanisms.gauss_mixture import copula_plan as P
from privrelease.mechanisms.gauss_mixture.copula_measure import count_pairs
from privrelease.mechanisms.gauss_mixture.copula_tree import NumericTree
from privrelease.mechanisms.gauss_mixture.model_plan import ModelPlan
from privrelease.schema.encoding import EncodedDomain

DOM = EncodedDomain(p=5, numeric=(0, 1), blocks=((2, 5),))
TREES = (NumericTree(0.0, 1.0, max_leaves=1024), NumericTree(0.0, 1.0, max_leaves=1024))


def table(n=3000, seed=0):
    """Two dependent numeric columns, a categorical column driven by the first, a label driven by both."""
    rng = np.random.default_rng(seed)
    a = rng.beta(2, 5, n)
    b = np.clip(a + 0.1 * rng.standard_normal(n), 0, 1)
    c = np.digitize(a, [0.2, 0.4])
    X = np.zeros((n, 5))
    X[:, 0], X[:, 1] = a, b
    X[np.arange(n), 2 + c] = 1.0
    y = (a + b + 0.2 * rng.standard_normal(n) > 0.6).astype(int)
    return X, y


def test_counts_of_streamed_chunks_equal_one_chunk():
    X, y = table()
    one = count_pairs(ChunkPasses(lambda: iter([(X, y)])), plan(), len(X))
    chunks = count_pairs(ChunkPasses(lambda: ((X[i:i + 700], y[i:i + 700]) for i in range(0, len(X), 700))),
                           plan(), len(X))
    assert len(one) == len(plan().pairs) == 6  # 4 attributes (two numeric, one categorical, the label)
    for u, v in zip(one, chunks):
        np.testing.assert_array_equal(u, v)
        assert u.sum() == len(X)


def test_selection_rounds_compose_in_the_calibration():
    for mode in ("gaussian", "zcdp"):
        rho = calibrate_rho(1.0, 1e-6, mode, 0.03, 12)
        eps_sel = math.sqrt(8.0 * 0.03 * rho / 12)
        assert epsilon_for(0.97 * rho, 1e-6, mode, eps_sel, 12) <= 1.0 + 1e-6
        assert epsilon_for(0.97 * rho * 1.01, 1e-6, mode, eps_sel, 12) > 1.0 - 1e-3


def categorical_table(n=3000, seed=0):
    """Three categorical columns (3, 2 and 2 levels), the second driven by the first, and a label."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, n)
    b = (rng.random(n) < 0.2 + 0.3 * a).astype(int)
    c = rng.integers(0, 2, n)
    X = np.zeros((n, 7))
    X[np.arange(n), a] = X[np.arange(n), 3 + b] = X[np.arange(n), 5 + c] = 1.0
    return X, (a + c > 1).astype(int)


CAT = EncodedDomain(p=7, numeric=(), blocks=((0, 3), (3, 5), (5, 7)))


def plan(trees=TREES):
    """A plan of the two numeric columns, the categorical one and the label, every pair a candidate."""
    attrs = P.Attributes(DOM.p, DOM.numeric, tuple(trees), DOM.blocks, 2, D.MODEL_NODE_CELLS)
    return ModelPlan(attrs, tuple(itertools.combinations(range(len(attrs.sizes)), 2)), 3, 0.3)


@pytest.mark.parametrize("missing_rate", [0.0, 0.2, 1.0])
def test_pair_counts_with_a_numeric_column_that_may_be_missing(missing_rate):
    """A numeric column declared ``missing: allowed`` goes through the candidates' pass (with none, some or
    all of its values missing): its missing leaf is a cell of its own and every record is counted."""
    X, y = table()
    rng = np.random.default_rng(3)
    X[rng.random(len(X)) < missing_rate, 0] = np.nan
    trees = (NumericTree(0.0, 1.0, missing=True, max_leaves=1024), TREES[1])
    counts = count_pairs(ChunkPasses(lambda: iter([(X, y)])), plan(trees), len(X))
    for c in counts:
        assert c.sum() == len(X)
