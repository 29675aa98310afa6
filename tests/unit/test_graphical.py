"""The graphical-model estimator (estimation/graphical.py, junction.py, belief.py): the junction tree,
exact inference against brute force over the full joint, mirror-descent fitting and sampling."""

from __future__ import annotations

import itertools
from math import prod

import numpy as np
import pytest

from privrelease.estimation.graphical import (
    GraphicalModel,
    MarginalMeasurement,
    ModelSizer,
    fit_model,
    junction_tree,
    model_cells,
)


def _connected(nodes: set[int], edges) -> bool:
    nodes = set(nodes)
    if not nodes:
        return True
    start = next(iter(nodes))
    seen, stack = {start}, [start]
    while stack:
        c = stack.pop()
        for i, j in edges:
            for a, b in ((i, j), (j, i)):
                if a == c and b in nodes and b not in seen:
                    seen.add(b)
                    stack.append(b)
    return seen == nodes


def _random_graph(rng, n_max=14):
    n = int(rng.integers(1, n_max))
    sizes = tuple(int(s) for s in rng.integers(1, 5, n))
    cliques = [tuple(int(a) for a in rng.choice(n, size=int(rng.integers(1, min(n, 4) + 1)), replace=False))
               for _ in range(int(rng.integers(0, 3 * n)))]
    return sizes, cliques


def test_junction_tree_is_one_tree_with_the_running_intersection_property_on_random_graphs():
    rng = np.random.default_rng(0)
    for _ in range(300):
        sizes, asked = _random_graph(rng)
        cliques, edges = junction_tree(sizes, asked)
        assert all(c == tuple(sorted(c)) for c in cliques)
        assert len(edges) == len(cliques) - 1 and _connected(set(range(len(cliques))), edges)
        for a in range(len(sizes)):  # every attribute's cliques form a connected subtree
            holding = {i for i, c in enumerate(cliques) if a in c}
            assert holding and _connected(holding, edges), (sizes, asked, cliques, edges, a)
        for c in asked:  # every asked clique sits inside a maximal one, and none contains another
            assert any(set(c) <= set(d) for d in cliques)
        assert not any(set(c) <= set(d) for c, d in itertools.permutations(cliques, 2))


def test_junction_tree_fills_in_a_cycle_and_links_components():
    cliques, edges = junction_tree((2, 3, 2, 2, 5), [(0, 1), (1, 2), (2, 3), (3, 0)])
    assert sorted(len(c) for c in cliques) == [1, 3, 3]  # the 4-cycle needs one chord; 4 is alone
    assert len(edges) == 2


def test_model_cells_is_the_sum_over_the_junction_trees_cliques():
    rng = np.random.default_rng(1)
    for _ in range(300):
        sizes, asked = _random_graph(rng)
        cliques, _ = junction_tree(sizes, asked)
        assert model_cells(sizes, asked) == sum(prod(sizes[a] for a in c) for c in cliques)


def test_a_sizer_gives_the_model_cells_of_its_cliques_and_one_more_and_keeps_its_graph():
    rng = np.random.default_rng(2)
    for _ in range(300):
        sizes, asked = _random_graph(rng)
        first = tuple(int(a) for a in rng.choice(len(sizes), min(3, len(sizes)), replace=False))
        sizer = ModelSizer(sizes, asked)
        for extra in (first, (0,), first):  # the sizer's graph is not changed by a question
            assert sizer.cells_with(extra) == model_cells(sizes, asked + [extra])
    with pytest.raises(ValueError, match="outside"):
        ModelSizer((2, 2), [(0, 1)]).cells_with((1, 2))


def _random_model(sizes, asked, rng, total=1000.0, scale=1.5):
    cliques, edges = junction_tree(sizes, asked)
    potentials = [scale * rng.normal(size=[sizes[a] for a in c]) for c in cliques]
    return GraphicalModel(sizes, cliques, edges, potentials, total)


def _log_joint(model: GraphicalModel) -> np.ndarray:
    """``sum_C theta_C(x_C)`` by brute force over the whole domain."""
    logp = np.zeros(model.sizes)
    for clique, theta in zip(model.cliques, model.potentials):
        logp = logp + theta.reshape([s if a in clique else 1 for a, s in enumerate(model.sizes)])
    return logp


def _joint(model: GraphicalModel) -> np.ndarray:
    """The full joint (counts) by brute force over the whole domain."""
    logp = _log_joint(model)
    p = np.exp(logp - logp.max())
    return model.total * p / p.sum()


def _assert_log_partition(model: GraphicalModel):
    logp = _log_joint(model)
    top = logp.max()
    assert model.log_partition == pytest.approx(top + np.log(np.exp(logp - top).sum()), rel=1e-12, abs=1e-9)


def _brute(joint: np.ndarray, attrs) -> np.ndarray:
    others = tuple(a for a in range(joint.ndim) if a not in attrs)
    kept = [a for a in range(joint.ndim) if a in attrs]
    return np.transpose(joint.sum(axis=others), [kept.index(a) for a in attrs])


GRAPHS = {
    "cycle needing fill-in": ((2, 3, 2, 4, 3), [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0)]),
    "forest": ((3, 2, 4, 2, 3, 2), [(0, 1), (1, 2), (3, 4)]),
    "triangles and a pair": ((2, 3, 2, 2), [(0, 1, 2), (2, 3), (1, 3)]),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_project_equals_brute_force_over_the_full_joint(name):
    sizes, asked = GRAPHS[name]
    model = _random_model(sizes, asked, np.random.default_rng(2))
    joint = _joint(model)
    _assert_log_partition(model)
    for k in (1, 2, 3):
        for attrs in itertools.permutations(range(len(sizes)), k):
            got = model.project(attrs)
            assert got.shape == tuple(sizes[a] for a in attrs)
            np.testing.assert_allclose(got, _brute(joint, attrs), rtol=1e-9, atol=1e-9, err_msg=str(attrs))


@pytest.mark.parametrize("shift", [0.0, 5e4, -5e4])
def test_potentials_far_beyond_the_floating_point_range_of_exp_are_calibrated_exactly(shift):
    """Potentials of magnitude 1e4 (a near point mass, most separator cells far below their clique's
    maximum) and all shifted by +-5e4: the marginals still equal brute force's, with no inf or nan."""
    sizes, asked = GRAPHS["cycle needing fill-in"]
    model = _random_model(sizes, asked, np.random.default_rng(12), scale=1e4)
    model = GraphicalModel(sizes, model.cliques, model.edges, [t + shift for t in model.potentials], model.total)
    joint = _joint(model)
    _assert_log_partition(model)
    for attrs in [(0,), (1, 2), (4, 0), (3, 1, 4)]:
        got = model.project(attrs)
        assert np.isfinite(got).all()
        np.testing.assert_allclose(got, _brute(joint, attrs), rtol=0, atol=1e-9 * model.total)


def _measure(joint, attrs, std=0.0, rng=None):
    values = _brute(joint, attrs).ravel()
    if std:
        values = values + rng.normal(0.0, std, values.size)
    return MarginalMeasurement(tuple(attrs), values, std or 1.0)


@pytest.mark.parametrize("momentum", [True, False])
def test_fit_with_exact_marginals_of_a_model_on_the_cliques_recovers_them(momentum):
    sizes, asked = GRAPHS["cycle needing fill-in"]
    truth = _random_model(sizes, asked, np.random.default_rng(3), total=5000.0, scale=1.0)
    joint = _joint(truth)
    measured = [(1, 0), (2, 1), (2, 3), (3, 4), (0, 4), (3,)]  # attribute orders not sorted on purpose
    fitted = fit_model(sizes, [_measure(joint, a) for a in measured], truth.total, iters=2000, momentum=momentum)
    for attrs in measured:
        err = np.abs(fitted.project(attrs) - _brute(joint, attrs)).max()
        assert err < 1e-3 * truth.total, (attrs, err)


def test_fit_to_noisy_overlapping_marginals_is_consistent_and_closer_than_the_raw_answers():
    sizes = (3, 4, 2, 3, 2)
    asked = [(0, 1), (1, 2), (2, 3), (3, 4), (0, 2)]
    rng = np.random.default_rng(4)
    truth = _random_model(sizes, asked, rng, total=2000.0, scale=1.0)
    joint = _joint(truth)
    measured = asked + [(0,), (1,), (2,), (3,), (4,), (0, 1, 2)]
    raw, fit = [], []
    for seed in range(5):
        noise = np.random.default_rng(10 + seed)
        ms = [_measure(joint, a, std=40.0, rng=noise) for a in measured]
        model = fit_model(sizes, ms, truth.total, iters=300)
        for m in ms:
            est = model.project(m.attrs)
            assert est.min() >= 0.0 and est.sum() == pytest.approx(truth.total, rel=1e-9)
            real = _brute(joint, m.attrs).ravel()
            raw.append(np.abs(m.values - real).sum())
            fit.append(np.abs(est.ravel() - real).sum())
    assert np.mean(fit) < 0.8 * np.mean(raw), (np.mean(fit), np.mean(raw))


def test_momentum_reaches_a_lower_loss_than_plain_mirror_descent_in_as_many_iterations():
    sizes, asked = GRAPHS["cycle needing fill-in"]
    rng = np.random.default_rng(13)
    joint = _joint(_random_model(sizes, asked, rng, total=10_000.0))
    ms = [_measure(joint, a, std=2.0, rng=rng) for a in asked + [(0, 2), (1,), (3,)]]
    plain = _loss(fit_model(sizes, ms, 10_000.0, iters=60, momentum=False), ms)
    faster = _loss(fit_model(sizes, ms, 10_000.0, iters=60), ms)
    best = _loss(fit_model(sizes, ms, 10_000.0, iters=1000), ms)
    assert faster - best < 0.5 * (plain - best), (faster, plain, best)


def test_an_attribute_with_no_measurement_comes_out_uniform():
    sizes = (3, 4, 5)
    ms = [MarginalMeasurement((0, 1), np.arange(12.0) * 10, 2.0), MarginalMeasurement((0,), np.array([10.0, 300, 350]), 1.0)]
    model = fit_model(sizes, ms, 660.0, iters=100, cliques_extra=[(1, 2)])
    np.testing.assert_allclose(model.project((2,)), np.full(5, 660.0 / 5), rtol=1e-9)
    pair = model.project((1, 2))  # joined in a clique, still uniform given the measured attribute
    np.testing.assert_allclose(pair / pair.sum(axis=1, keepdims=True), 0.2, rtol=1e-9)


def _loss(model, ms) -> float:
    return sum(float(((model.project(m.attrs).ravel() - m.values) ** 2).sum()) / (2 * m.std**2) for m in ms)


@pytest.mark.parametrize("momentum", [True, False])
def test_a_warm_start_reaches_the_same_loss_in_fewer_iterations(momentum):
    """A model fitted to every measurement but one closing a cycle, warm-started with that one added,
    gets within 10 % of the best loss in fewer iterations than a cold start."""
    sizes = (4, 3, 5, 2, 3, 4)
    asked = [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (0, 5)]
    rng = np.random.default_rng(5)
    joint = _joint(_random_model(sizes, asked, rng, total=3000.0))
    first = [_measure(joint, (a,), std=5.0, rng=rng) for a in range(6)]
    first += [_measure(joint, a, std=5.0, rng=rng) for a in asked[:5]]
    more = first + [_measure(joint, asked[5], std=5.0, rng=rng)]
    earlier = fit_model(sizes, first, 3000.0, iters=1000)
    target = 1.1 * _loss(fit_model(sizes, more, 3000.0, iters=500), more)  # the best loss, near enough

    def fit(k, warm=None):
        return _loss(fit_model(sizes, more, 3000.0, iters=k, warm=warm, momentum=momentum), more)

    enough = next(k for k in range(0, 3000, 5) if fit(k, earlier) <= target)
    assert fit(enough) > target  # the cold start is not there yet
    same = fit_model(sizes, first, 3000.0, iters=0, warm=earlier)  # no iteration: the old model exactly
    np.testing.assert_allclose(same.project((0, 5)), earlier.project((0, 5)), rtol=1e-9)


@pytest.mark.parametrize("name", ["chain", "cycle needing fill-in", "forest"])
def test_sampling_keeps_the_root_clique_within_one_and_other_pairs_within_their_standard_errors(name):
    sizes, asked = GRAPHS.get(name, ((3, 4, 2, 3, 2), [(0, 1), (1, 2), (2, 3), (3, 4)]))
    model = _random_model(sizes, asked, np.random.default_rng(6), total=1.0)
    m = 20_000
    codes = model.sample(m, np.random.default_rng(7))
    assert codes.shape == (m, len(sizes)) and codes.dtype == np.int64
    root = model.cliques[0]
    counts = np.zeros([sizes[a] for a in root])
    np.add.at(counts, tuple(codes[:, a] for a in root), 1)
    assert np.abs(counts - m * model.project(root)).max() <= 1.0
    for attrs in itertools.combinations(range(len(sizes)), 2):
        p = model.project(attrs).ravel()
        got = np.bincount(np.ravel_multi_index(codes[:, list(attrs)].T, [sizes[a] for a in attrs]), minlength=p.size)
        z = (got - m * p) / np.sqrt(np.maximum(m * p * (1 - p), 1e-12))
        assert np.abs(z).max() < 5.0, (attrs, z)


@pytest.mark.parametrize("name", ["cycle needing fill-in", "triangles and a pair"])
def test_stratified_sampling_keeps_every_clique_close_and_each_pair_unbiased(name):
    sizes, asked = GRAPHS[name]
    model = _random_model(sizes, asked, np.random.default_rng(6), total=1.0)
    m = 20_000
    iid, strat = (model.sample(m, np.random.default_rng(7), stratified=s) for s in (False, True))

    def worst(codes, attrs):
        p = model.project(attrs).ravel()
        got = np.bincount(np.ravel_multi_index(codes[:, list(attrs)].T, [sizes[a] for a in attrs]), minlength=p.size)
        return np.abs(got - m * p).max()

    for c in model.cliques:  # every clique within a few records of the model's counts (independent draws: ~100)
        assert worst(strat, c) <= 3.0 < worst(iid, c) or c == model.cliques[0]
    for attrs in itertools.combinations(range(len(sizes)), 2):  # still draws from the model
        p = model.project(attrs).ravel()
        z = (np.bincount(np.ravel_multi_index(strat[:, list(attrs)].T, [sizes[a] for a in attrs]), minlength=p.size)
             - m * p) / np.sqrt(np.maximum(m * p * (1 - p), 1e-12))
        assert np.abs(z).max() < 5.0, (attrs, z)


def test_seeded_sampling_is_reproducible():
    model = _random_model((3, 2, 4), [(0, 1), (1, 2)], np.random.default_rng(8))
    a = model.sample(500, np.random.default_rng(9))
    b = model.sample(500, np.random.default_rng(9))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, model.sample(500, np.random.default_rng(10)))


@pytest.mark.parametrize("bad, message", [
    (MarginalMeasurement((0, 0), np.zeros(4), 1.0), "distinct"),
    (MarginalMeasurement((0, 3), np.zeros(4), 1.0), "distinct"),
    (MarginalMeasurement((0, 1), np.zeros(5), 1.0), "5 values for 6 cells"),
    (MarginalMeasurement((0,), np.zeros(2), 0.0), "positive noise std"),
    (MarginalMeasurement((0,), np.array([1.0, np.nan]), 1.0), "finite"),
])
def test_a_malformed_measurement_is_refused_in_one_line(bad, message):
    with pytest.raises(ValueError, match=message):
        fit_model((2, 3), [bad], 10.0)


def test_structural_zeros_get_no_mass_whatever_the_measurements_say():
    """Cells declared empty (``zeros``) come out empty, in the model's marginals and in its samples, even where
    a pair measurement gives them counts; a warm start keeps them empty; the other cells are fitted as before."""
    sizes = (4, 3, 2)
    rng = np.random.default_rng(11)
    one = MarginalMeasurement((0, 2), np.array([500.0, 400, 300, 200, 0, 0, 0, 0]), 20.0)  # (0, 2): row-major
    pair = MarginalMeasurement((0, 1), rng.uniform(30, 60, 12), 20.0)  # gives attribute 0's 3rd and 4th levels mass
    empty = np.array([[False, False], [False, False], [True, True], [False, True]])
    model = fit_model(sizes, [one, pair], 1400.0, iters=200, zeros=[((0, 2), empty)])
    assert model.project((0, 2))[empty].max() < 1e-30
    assert model.project((0, 2))[~empty].min() > 50.0
    warm = fit_model(sizes, [one, pair, MarginalMeasurement((1, 2), np.full(6, 233.0), 20.0)], 1400.0, iters=50,
                     warm=model, zeros=[((2, 0), empty.T)])  # the same zeros, named in the other order
    assert warm.project((0, 2))[empty].max() < 1e-30
    codes = warm.sample(5000, np.random.default_rng(1))
    assert not empty[codes[:, 0], codes[:, 2]].any()
    free = fit_model(sizes, [one, pair], 1400.0, iters=200)  # without the zeros the pair puts mass there
    assert free.project((0, 2))[empty].min() > 1.0


def test_a_structural_zero_holds_through_warm_refits_on_a_growing_graph():
    """Cells inside a structural zero stay empty however the free potentials drift: here the pair measurements'
    totals fall short of the public total, so each step shifts the live cells' potentials down together (no live
    marginal changes) while the zero's cells, which get no gradient, stay; the model's rounds warm-start each fit
    from the last on a growing graph. With a finite log-potential (-200) the zero's cell took 224 of 1,400 records."""
    rng = np.random.default_rng(3)
    sizes = (3, 4, 4, 4, 4)
    measured = [MarginalMeasurement((0,), np.array([700.0, 700.0, 0.0]), 20.0)]
    measured += [MarginalMeasurement((0, a), rng.uniform(50, 120, 12), 5.0) for a in range(1, 5)]
    measured += [MarginalMeasurement(ab, rng.uniform(20, 160, 16), 5.0) for ab in [(1, 2), (2, 3), (3, 4)]]
    zeros = [((0,), np.array([False, False, True]))]
    model = None
    for i in range(len(measured)):
        model = fit_model(sizes, measured[:i + 1], 1400.0, iters=300, warm=model, zeros=zeros)
        assert model.project((0,))[2] == 0.0
    assert model.project((0,)).sum() == pytest.approx(1400.0)
    assert not (model.sample(2000, np.random.default_rng(0))[:, 0] == 2).any()
