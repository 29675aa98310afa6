"""gauss-copula's pair tree (its plan in copula_plan, rounds in copula_measure, fit in copula_estimate,
decoding in copula_sample) and its estimation (estimation/tables.py)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from scipy.optimize import minimize

from privrelease.engine.passes import ChunkPasses
from privrelease.estimation import class_tables, fitted_table, rake, transport_projection
from privrelease.mechanisms.gauss_mixture import copula_defaults as D
from privrelease.mechanisms.gauss_mixture import copula_plan as PT
from privrelease.mechanisms.gauss_mixture.copula_sample import joint_quotas
from privrelease.mechanisms.gauss_mixture.gauss_copula import GaussCopula
from privrelease.schema.encoding import EncodedDomain

# a: 6 levels, b = a // 2 (3 levels, a function of a), c: 2 levels, independent; one numeric column
DOM = EncodedDomain(p=12, numeric=(0,), blocks=((1, 7), (7, 10), (10, 12)))


def table(n=6000, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 6, n)
    b = a // 2
    c = rng.integers(0, 2, n)
    x = np.clip(0.15 * a + 0.1 * rng.random(n), 0, 1)
    X = np.zeros((n, 12))
    X[:, 0] = x
    X[np.arange(n), 1 + a] = 1.0
    X[np.arange(n), 7 + b] = 1.0
    X[np.arange(n), 10 + c] = 1.0
    y = (rng.random(n) < 0.2 + 0.1 * b).astype(int)
    return X, y


def codes(X):
    return np.argmax(X[:, 1:7], axis=1), np.argmax(X[:, 7:10], axis=1)


def pair_tvd(X, Xs):
    (a, b), (a2, b2) = codes(X), codes(Xs)
    real = np.bincount(a * 3 + b, minlength=18) / len(a)
    rel = np.bincount(a2 * 3 + b2, minlength=18) / len(a2)
    return 0.5 * np.abs(real - rel).sum()


def fit(eps=4.0, X=None, y=None, **kw):
    X, y = table() if X is None else (X, y)
    return GaussCopula(eps, 1e-5, domain=DOM, n_classes=2, grids=((0.0, 1.0, 0.0),), rng=0, dependence="mixture", **kw).fit(X, y)


def test_the_tree_raises_the_default_marginal_share():
    """With the tree on, "auto" gives the histograms 0.8 of what the pair stage leaves; off, 0.55."""
    on, off = fit(), fit(pair_rounds=0)
    assert on.pair_tree_ is not None and on.marginal_share_ == 0.8
    assert off.pair_tree_ is None and off.marginal_share_ == 0.55
    assert fit(marginal_share=0.6).marginal_share_ == 0.6


# ---- estimation -----------------------------------------------------------------------------------

def test_transport_projection_is_the_least_squares_table_with_the_margins():
    rng = np.random.default_rng(3)
    Y = rng.normal(5.0, 6.0, (3, 4))
    rows, cols = np.array([10.0, 20.0, 6.0]), np.array([12.0, 4.0, 15.0, 5.0])
    T = transport_projection(Y, rows, cols)
    np.testing.assert_allclose(T.sum(axis=1), rows, atol=1e-6)
    np.testing.assert_allclose(T.sum(axis=0), cols, atol=1e-6)
    assert T.min() >= 0
    cons = [{"type": "eq", "fun": lambda t: t.reshape(3, 4).sum(axis=1) - rows},
            {"type": "eq", "fun": lambda t: t.reshape(3, 4).sum(axis=0)[:-1] - cols[:-1]}]
    ref = minimize(lambda t: ((t - Y.ravel()) ** 2).sum(), np.full(12, 3.0), constraints=cons,
                   bounds=[(0, None)] * 12, method="SLSQP", options={"ftol": 1e-12, "maxiter": 500})
    np.testing.assert_allclose(T.ravel(), ref.x, atol=1e-3)


def test_projection_removes_the_noise_floor_that_clipping_keeps():
    """A sparse table (one cell per row) under noise: clipping at 0 keeps about 0.4 sigma per empty cell;
    the projection puts the mass back where the counts are (half the L1 error here)."""
    rng = np.random.default_rng(0)
    true = np.zeros((20, 20))
    true[np.arange(20), rng.permutation(20)] = 100.0
    noisy = true + 30.0 * rng.standard_normal(true.shape)
    T = transport_projection(noisy, true.sum(axis=1), true.sum(axis=0))
    clipped = rake(np.maximum(noisy, 0.0), true.sum(axis=1), true.sum(axis=0))
    assert np.abs(T - true).sum() < 0.6 * np.abs(clipped - true).sum()  # 0.51 on this table


def test_rake_meets_both_margins():
    T = rake(np.ones((2, 3)), np.array([3.0, 7.0]), np.array([5.0, 2.0, 3.0]))
    np.testing.assert_allclose(T.sum(axis=1), [3.0, 7.0])
    np.testing.assert_allclose(T.sum(axis=0), [5.0, 2.0, 3.0])


def test_fitted_table_and_class_tables():
    noisy = np.array([[50.0, -3.0], [2.0, 45.0]])
    rows, cols = np.array([50.0, 50.0]), np.array([50.0, 50.0])
    T = fitted_table(noisy, np.full((2, 2), 25.0), rows, cols, 0.05)
    np.testing.assert_allclose(T.sum(axis=1), rows)
    assert T[0, 0] > 40 and T[1, 1] > 40
    rows_c = np.array([[40.0, 10.0], [10.0, 40.0]])
    cols_c = np.array([[38.0, 12.0], [12.0, 38.0]])
    cond = class_tables(T, rows_c, cols_c)
    assert cond.shape == (2, 2, 2)
    np.testing.assert_allclose(cond.sum(axis=2), 1.0)
    for c in range(2):  # the parent's class counts through the conditionals give the child's class counts
        np.testing.assert_allclose(rows_c[c] @ cond[c], cols_c[c], rtol=1e-6)


# ---- the plan ---------------------------------------------------------------------------------------

def test_plan_offers_the_decodable_attributes_and_is_off_where_noise_dominates():
    m = GaussCopula(1.0, 1e-5, domain=DOM, n_classes=2, grids=((0.0, 1.0, 0.0),), rng=0, dependence="mixture")
    m._setup(DOM.p, 2)
    from privrelease.mechanisms.gauss_mixture.copula_plan import coarse_plan

    coarse = coarse_plan(m.domain_, m.cells_, 10)
    plan = PT.plan_tree(m.domain_, m.cells_, coarse, 6000, 2, 1.0, 1e-5, "zcdp", "auto", 0.2)
    # the numeric column's nodes and the three categorical columns: 3 tree edges, and 2 rounds of second
    # parents (their noise yardstick is under SECOND_MAX_NOISE here)
    assert plan.rounds == 5
    label = plan.attributes.label
    assert all(label not in pr for pr in plan.pairs) and len(plan.pairs) == 6
    assert PT.plan_tree(m.domain_, m.cells_, coarse, 60, 2, 1.0, 1e-5, "zcdp", "auto", 0.2) is None  # noise
    assert PT.plan_tree(m.domain_, m.cells_, coarse, 60, 2, 1.0, 1e-5, "zcdp", 2, 0.2).rounds == 2  # asked for
    assert PT.plan_tree(m.domain_, m.cells_, coarse, 6000, 2, 1.0, 1e-5, "zcdp", 0, 0.2) is None


# ---- the fit and the release ------------------------------------------------------------------------

def test_tree_is_a_spanning_tree_and_spends_its_share():
    m = fit(1.0)
    n_second = sum(s is not None for s in m.pair_tree_.seconds)
    measured = m.pairs_measured_[:len(m.pairs_measured_) - n_second]  # the tree's edges come first
    assert len(measured) == 3 and len(set(m.pairs_measured_)) == len(m.pairs_measured_)
    parts = {a: a for pr in measured for a in pr}  # no cycle: every edge joins two parts

    def root(a):
        while parts[a] != a:
            a = parts[a]
        return a

    for a, b in measured:
        assert root(a) != root(b)
        parts[root(b)] = root(a)
    assert sorted(m.pair_tree_.parents).count(-1) == 1
    split = m.rho_split_
    assert split["pairs_select"] + split["pairs_measure"] == pytest.approx(0.2 * m.rho_)
    assert m.certificate_extra()["epsilon_check_dp_accounting"] <= 1.0 + 1e-6


def test_decoding_along_the_tree_keeps_a_function_of_a_column():
    """b is a function of a: the copula alone smears the pair, the tree keeps it (it fails without the tree)."""
    X, y = table()
    off = fit(4.0, pair_rounds=0)
    on = fit(4.0)
    assert on.pair_tree_ is not None and off.pair_tree_ is None
    t_off, t_on = pair_tvd(X, off.sample(6000)[0]), pair_tvd(X, on.sample(6000)[0])
    assert t_on < 0.06 < t_off, (t_on, t_off)


def test_released_records_are_valid_and_one_way_marginals_hold():
    X, y = table()
    m = fit(4.0)
    Xs, ys = m.sample(6000)
    for a, e in DOM.blocks:
        np.testing.assert_array_equal(Xs[:, a:e].sum(axis=1), 1.0)
    assert Xs[:, 0].min() >= 0 and Xs[:, 0].max() <= 1
    a, a2 = np.argmax(X[:, 1:7], axis=1), np.argmax(Xs[:, 1:7], axis=1)
    assert 0.5 * np.abs(np.bincount(a, minlength=6) / len(a) - np.bincount(a2, minlength=6) / len(a2)).sum() < 0.03


def test_streamed_chunks_give_the_same_release_and_the_model_pickles():
    X, y = table(3000)
    one = fit(2.0, X, y)
    chunked = GaussCopula(2.0, 1e-5, domain=DOM, n_classes=2, grids=((0.0, 1.0, 0.0),), rng=0, dependence="mixture")
    chunked.fit_executor(ChunkPasses(lambda: ((X[i:i + 700], y[i:i + 700]) for i in range(0, len(X), 700))))
    assert chunked.pairs_measured_ == one.pairs_measured_
    np.testing.assert_array_equal(chunked.sample(500)[0], one.sample(500)[0])
    again = pickle.loads(pickle.dumps(one))
    assert again.pair_tree_.order == one.pair_tree_.order
    assert again.sample(100)[0].shape == (100, 12)


def test_second_parents_where_the_measurements_are_precise(monkeypatch):
    """At a large budget the tree's 3 edges are followed by round(0.5 * 3) = 2 rounds of second parents,
    every round calibrated for the 5 planned (its noise sqrt(5 / 3) times the tree alone's); a second
    parent joins a child to an attribute decoded before it; the one-way marginals still hold."""
    X, y = table()
    on = fit(8.0)
    monkeypatch.setattr(D, "SECOND_MAX_NOISE", 0.0)
    off = fit(8.0)
    assert on.pair_plan_.rounds == 5 and off.pair_plan_.rounds == 3
    assert on.noise_scales_["pairs_std"] == pytest.approx(off.noise_scales_["pairs_std"] * np.sqrt(5 / 3), rel=1e-6)
    tree = on.pair_tree_
    seconds = [(a, s[0]) for a, s in zip(tree.order, tree.seconds) if s is not None]
    assert seconds and len(on.pairs_measured_) == 3 + len(seconds) and off.pair_tree_.seconds == (None,) * 4
    pos = {a: i for i, a in enumerate(tree.order)}
    for a, q in seconds:
        assert pos[q] < pos[a] and q != tree.parents[pos[a]]
    assert on.certificate_extra()["epsilon_check_dp_accounting"] <= 8.0 + 1e-6
    Xs, _ = on.sample(6000)
    a, a2 = np.argmax(X[:, 1:7], axis=1), np.argmax(Xs[:, 1:7], axis=1)
    assert 0.5 * np.abs(np.bincount(a, minlength=6) / len(a) - np.bincount(a2, minlength=6) / len(a2)).sum() < 0.03
    assert pair_tvd(X, Xs) < 0.06


def test_joint_quotas_keep_the_groups_and_the_first_parent():
    rng = np.random.default_rng(0)
    cp, cq = rng.integers(0, 3, 500), rng.integers(0, 4, 500)
    cond_p, cond_q = rng.dirichlet(np.ones(5), 3), rng.dirichlet(np.ones(5), 4)
    marg = rng.dirichlet(np.ones(5))
    T = joint_quotas(cp, cq, cond_p, cond_q, marg)
    N = np.bincount(cp * 4 + cq, minlength=12).reshape(3, 4)
    np.testing.assert_allclose(T.sum(axis=2), N, atol=1e-6)
    np.testing.assert_allclose(T.sum(axis=1), N.sum(axis=1)[:, None] * cond_p, atol=1e-3)


def test_quotas_of_many_groups_are_each_groups_largest_remainders():
    from privrelease.dp.rounding import largest_remainder
    from privrelease.mechanisms.gauss_mixture.quotas import quota_assign, quota_assign_groups, rows_largest_remainder

    rng = np.random.default_rng(0)
    f = rng.dirichlet(np.ones(5), 7)
    f[rng.random(f.shape) < 0.3] = 0.0
    f[2] = 0.0  # an all-zero row: equal weights
    sizes = rng.integers(0, 40, 7)
    expected = np.stack([largest_remainder(f[i], sizes[i]) for i in range(7)])
    np.testing.assert_array_equal(rows_largest_remainder(f, sizes), expected)
    group = np.repeat(np.arange(7), sizes)
    S = rng.normal(size=(group.size, 5))
    out = quota_assign_groups(S, group, f, np.random.default_rng(1))
    for i in range(7):  # each group meets its quotas
        np.testing.assert_array_equal(np.bincount(out[group == i], minlength=5), expected[i])
    one = quota_assign(S, f[0], np.random.default_rng(1))  # one group: the quotas of all the rows
    np.testing.assert_array_equal(np.bincount(one, minlength=5), largest_remainder(f[0], group.size))


def test_a_child_takes_at_most_one_second_parent(monkeypatch):
    """With as many extra rounds as children (3 of 4 attributes), the rounds stop once every child that
    can have a second parent has one: the child right after the root has no earlier attribute but its
    parent, so 2 second parents and 5 measurements, not the 6 the plan allows."""
    monkeypatch.setattr(D, "SECOND_PARENTS", 1.0)
    m = fit(8.0)
    tree = m.pair_tree_
    assert m.pair_plan_.rounds == 6 and len(m.pairs_measured_) == 5
    pos = {a: i for i, a in enumerate(tree.order)}
    lates = [max(pr, key=pos.get) for pr in m.pairs_measured_[3:]]
    assert len(set(lates)) == len(lates) == sum(s is not None for s in tree.seconds) == 2


def test_halved_nodes_where_the_measurements_are_precise(monkeypatch):
    """A numeric column of ages 0..90 on a 16-ary tree (measured levels of 6 and 91 nodes; ``TOP_NODES``
    off, as for a deeper tree): at a large budget the tree and the node block use its 6 nodes halved
    (12), the stage's noise yardstick with them at most HALF_MAX_NOISE; at a small one, or with the rule
    off, the measured 6. The one-way histograms are measured alike either way (same noise)."""
    from privrelease.mechanisms.gauss_mixture import copula_plan as P
    monkeypatch.setattr(D, "TOP_NODES", None)
    X, y = table()

    def age_fit(eps):
        return GaussCopula(eps, 1e-5, domain=DOM, n_classes=2, grids=((0.0, 90.0, 1.0),), rng=0, dependence="mixture").fit(X, y)

    hi, lo = age_fit(8.0), age_fit(0.7)
    for m, parts, nodes in ((hi, 2, 12), (lo, 1, 6)):
        t = m.cells_[0]
        assert t.grid_parts == parts and P.n_nodes(t, P.pair_level(t)) == nodes
        a, e = m.coarse_.block(0)
        assert e - a == nodes
    assert PT.tree_noise(hi.pair_plan_, hi.n_, 8.0, 1e-5, hi.accounting_mode_) <= D.HALF_MAX_NOISE
    chunked = GaussCopula(8.0, 1e-5, domain=DOM, n_classes=2, grids=((0.0, 90.0, 1.0),), rng=0, dependence="mixture")
    chunked.fit_executor(ChunkPasses(lambda: ((X[i:i + 700], y[i:i + 700]) for i in range(0, len(X), 700))))
    assert chunked.cells_[0].grid_parts == 2  # streamed chunks: the same rule and the same release
    np.testing.assert_array_equal(chunked.sample(500)[0], hi.sample(500)[0])
    monkeypatch.setattr(D, "HALF_MAX_NOISE", 0.0)
    off = age_fit(8.0)
    assert off.cells_[0].grid_parts == 1 and off.noise_scales_["marginals_std"] == hi.noise_scales_["marginals_std"]
    Xs, _ = hi.sample(6000)  # the ages' one-way marginal holds (the real values snapped to the grid)
    real, rel = (np.bincount(np.rint(Z[:, 0] * 90).astype(int), minlength=91) / len(Z) for Z in (X, Xs))
    assert 0.5 * np.abs(real - rel).sum() < 0.03
