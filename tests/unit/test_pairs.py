"""gauss-copula's pair stage (mechanisms/gauss_mixture/pairs.py) and the tilt estimation (estimation/)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privrelease.dp.calibration import calibrate_rho, epsilon_for
from privrelease.engine.passes import ChunkPasses
from privrelease.estimation import Measurement, PoolFit
from privrelease.mechanisms.gauss_mixture import pairs as P
from privrelease.mechanisms.gauss_mixture.copula_tree import NumericTree
from privrelease.mechanisms.gauss_mixture.gauss_copula import GaussCopula
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


def test_coarse_codes_are_a_coarse_tree_level_with_the_missing_leaf_its_own_cell():
    tree = NumericTree(0, 100, 1, True, branching=4, max_leaves=1000)  # 101 grid values and the missing leaf
    assert P.pair_level(tree) == 1 and P.n_nodes(tree, 1) == 8  # nodes of 16 values (7) and the missing one
    codes = P.coarse_codes(np.array([np.nan, 0.0, 0.15, 0.16, 1.0]), tree)
    assert codes.tolist() == [0, 1, 1, 2, 7]


def test_counts_of_streamed_chunks_equal_one_chunk():
    X, y = table()
    plan = P.plan_pairs(DOM, TREES, len(X), 2, 1.0, 1e-5, "gaussian", 3, 0.3)
    one = P.count_pairs(ChunkPasses(lambda: iter([(X, y)])), plan, len(X))
    chunks = P.count_pairs(ChunkPasses(lambda: ((X[i:i + 700], y[i:i + 700]) for i in range(0, len(X), 700))),
                           plan, len(X))
    assert len(one) == len(plan.pairs) == 6  # 4 attributes (two numeric, one categorical, the label)
    for u, v in zip(one, chunks):
        np.testing.assert_array_equal(u, v)
        assert u.sum() == len(X)


def test_raking_meets_an_exact_measurement():
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 3, size=(5000, 2))
    target = np.array([[900, 300, 400], [300, 900, 400], [400, 400, 1000]], dtype=float).ravel()
    fit = PoolFit(codes, (3, 3), 5000.0)
    fit.add(Measurement((0, 1), target, 0.0))
    fit.fit(20)
    got = fit.marginal((0, 1))
    assert np.abs(got - target).max() < 0.05 * 5000 / 9
    # fresh records weighted by the fitted tilt follow the target too
    fresh = rng.integers(0, 3, size=(20000, 2))
    w = np.exp(fit.tilt.log_weight(fresh))
    est = np.bincount(fresh[:, 0] * 3 + fresh[:, 1], weights=w, minlength=9)
    np.testing.assert_allclose(est / est.sum(), target / target.sum(), atol=0.02)


def test_raking_leaves_cells_within_the_noise_band_alone():
    codes = np.repeat(np.arange(2), 500)[:, None]
    fit = PoolFit(codes, (2,), 1000.0)
    fit.add(Measurement((0,), np.array([520.0, 480.0]), 30.0))  # within one noise std of 500 / 500
    fit.fit(5)
    np.testing.assert_allclose(fit.marginal((0,)), [500.0, 500.0])


def test_selection_rounds_compose_in_the_calibration():
    for mode in ("gaussian", "zcdp"):
        rho = calibrate_rho(1.0, 1e-6, mode, 0.03, 12)
        eps_sel = math.sqrt(8.0 * 0.03 * rho / 12)
        assert epsilon_for(0.97 * rho, 1e-6, mode, eps_sel, 12) <= 1.0 + 1e-6
        assert epsilon_for(0.97 * rho * 1.01, 1e-6, mode, eps_sel, 12) > 1.0 - 1e-3


def test_pair_stage_spends_its_share_and_takes_one_more_pass():
    X, y = table()
    off = GaussCopula(1.0, 1e-5, domain=DOM, n_classes=2, pair_rounds=0, rng=0).fit(X, y)
    on = GaussCopula(1.0, 1e-5, domain=DOM, n_classes=2, pair_model="tilt", pair_rounds=3, rng=0).fit(X, y)
    assert getattr(off, "pairs_", None) is None and off.pair_plan_ is None
    assert on.passes_ == off.passes_ + 1 and len(on.pairs_measured_) == 3
    assert len(set(on.pairs_measured_)) == 3  # a candidate is measured at most once
    split = on.rho_split_
    assert split["pairs_select"] == pytest.approx(0.3 * P.SELECT_FRACTION * on.rho_)
    assert split["pairs_measure"] == pytest.approx(0.3 * (1 - P.SELECT_FRACTION) * on.rho_)
    cert = on.certificate_extra()
    assert cert["epsilon_check_dp_accounting"] <= 1.0 + 1e-6
    Xs, ys = on.sample(500)
    assert Xs.shape == (500, 5) and ys.shape == (500,)
    np.testing.assert_array_equal(Xs[:, 2:].sum(axis=1), 1.0)


def test_pair_stage_improves_the_measured_pair():
    """With a large budget the tilted release fits the pair the copula misses (a, c) better."""
    X, y = table(6000)
    m = GaussCopula(8.0, 1e-5, domain=DOM, n_classes=2, pair_model="tilt", pair_rounds=6, rng=0).fit(X, y)
    att = m.pair_attributes_

    def joint(Xr, yr, a, b):
        c = att.codes(Xr, yr)
        return np.bincount(c[:, a] * att.sizes[b] + c[:, b], minlength=att.sizes[a] * att.sizes[b]) / len(Xr)

    real = joint(X, y, 0, 2)
    tilted = joint(*m.sample(6000), 0, 2)
    copula = joint(*m._sample_copula(6000), 0, 2)
    assert np.abs(tilted - real).sum() < np.abs(copula - real).sum()


@pytest.mark.parametrize("missing_rate", [0.0, 0.2, 1.0])
def test_pair_counts_with_a_numeric_column_that_may_be_missing(missing_rate):
    """A numeric column declared ``missing: allowed`` goes through the pair pass (with none, some or
    all of its values missing): its missing leaf is a cell of its own and every record is counted."""
    X, y = table()
    rng = np.random.default_rng(3)
    X[rng.random(len(X)) < missing_rate, 0] = np.nan
    trees = (NumericTree(0.0, 1.0, missing=True, max_leaves=1024), TREES[1])
    plan = P.plan_pairs(DOM, trees, len(X), 2, 1.0, 1e-5, "gaussian", 3, 0.3)
    counts = P.count_pairs(ChunkPasses(lambda: iter([(X, y)])), plan, len(X))
    for c in counts:
        assert c.sum() == len(X)
