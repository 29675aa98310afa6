"""gauss-copula's numeric trees: public geometry, level counts from the leaves, consistent refinement,
snapping to the resolution, and numeric missing values as a cell of their own."""

import math

import numpy as np
import pytest

from privrelease.mechanisms.gauss_mixture.copula_estimate import (
    linear_slopes,
    project_to_simplex,
    refine_levels,
    shrink,
    spread,
)
from privrelease.mechanisms.gauss_mixture.copula_measure import (
    CellCounter,
    Measurement,
    level_nodes,
    selected_counts,
)
from privrelease.mechanisms.gauss_mixture.copula_tree import NumericTree, leaf_cap
from privrelease.mechanisms.gauss_mixture.gauss_copula import GaussCopula
from privrelease.schema.encoding import EncodedDomain


def _exact(tree, leaves):
    """A noiseless measurement of the chosen nodes (their exact counts)."""
    return lambda level, masks: Measurement(("tree_level", level, level_nodes(masks)),
                                            selected_counts([tree], [leaves], level, masks), 0.0)

def _noisy(tree, leaves, g, std):
    """A measurement of the chosen nodes with Gaussian noise of ``std`` drawn from ``g``."""
    def measure(level, masks):
        exact = selected_counts([tree], [leaves], level, masks)
        if exact is None:
            return None
        return Measurement(("tree_level", level, level_nodes(masks)), exact + g.normal(0, std, exact.size), std)
    return measure


def test_levels_nest_and_sum_to_the_leaves():
    t = NumericTree(0, 2.5, 0.1, branching=4)  # 26 grid points 0.0 .. 2.5: atoms
    assert t.grid and t.n_cells == 26 and t.depth == 3
    leaves = np.arange(26, dtype=float)[None, :]
    for lev in range(t.depth):
        c = t.level_counts(leaves, lev)
        assert c.sum() == leaves.sum() and c.shape[1] == t.levels[lev].size - 1
        if lev:
            assert set(np.diff(t.parents(lev))) <= {0, 1}  # each node's children are contiguous
    assert t.grids == t.levels and t.level_of(8) == 1 and t.level_of(1000) == 2 and t.level_of(1) == 0
    t.set_grid_parts(2)  # the measured levels (2, 8, 26 nodes: each bound a node below the coarsest) and halved (5, 14)
    assert [g.size - 1 for g in t.grids] == [2, 5, 8, 14, 26]
    assert t.level_of(8) == 2 and t.level_of(1000) == 4 and t.level_of(1) == 0
    x = np.array([0.0, 0.3 / 2.5, 1.0])
    assert t.index(x).tolist() == [0, 3, 25]
    assert t.coarse_index(x, 0).tolist() == [0, 0, 1]


def test_grids_are_the_measured_levels_with_their_nodes_halved():
    """Ages 0..90 with branching 16: measured levels of 6 and 91 nodes, and the 6 nodes halved (12 nodes
    of 8 values, and each bound a node of its own below the coarsest level); every grid nests in the finer ones and
    its counts sum the leaves; with 1 part the grids are the levels."""
    t = NumericTree(0, 90, 1, True, branching=16)
    t.set_grid_parts(2)
    assert [g.size - 1 for g in t.grids] == [7, 15, 92]  # the missing leaf a node of its own
    assert all(np.array_equal(a, b) for a, b in zip([t.grids[0], t.grids[2]], t.levels))
    for coarse, fine in zip(t.grids, t.grids[1:]):
        assert set(coarse.tolist()) <= set(fine.tolist())
    leaves = np.arange(t.n_cells, dtype=float)[None, :]
    assert all(t.grid_counts(leaves, g).sum() == leaves.sum() for g in range(3))
    assert t.level_of(15) == 1 and t.coarse_index(np.array([np.nan, 0, 1, 8, 9]) / 90, 1).tolist() == [0, 1, 2, 2, 3]
    t.set_grid_parts(1)
    assert [g.size - 1 for g in t.grids] == [7, 92] and t.grid_parts == 1


def test_a_tree_gets_a_finer_coarsest_level_and_a_one_level_tree_does_not():
    """``top_nodes``: ages 0..90 (two levels at branching 16: 6 and 91 nodes) get 12 nodes of 8 years above
    the same leaves (the bound's leaf part of the first, 0..8), the missing leaf still a node of its own; a five-level tree (0..99,999: 2 coarsest nodes at
    branching 16) gets 10 nodes at branching 10, its depth kept; a one-level tree keeps the branching's level;
    gauss-copula builds its trees with ``TOP_NODES``."""
    t, plain = NumericTree(0, 90, 1, top_nodes=12), NumericTree(0, 90, 1)
    assert t.branching == 8 and [lv.size - 1 for lv in t.levels] == [12, 91] and t.depth == plain.depth == 2
    assert np.array_equal(t.lo, plain.lo) and np.array_equal(t.levels[-1], plain.levels[-1])
    assert t.levels[0][:3].tolist() == [0, 9, 17] and set(np.diff(t.parents(1))) <= {0, 1}
    miss = NumericTree(0, 90, 1, True, top_nodes=12)
    assert [lv.size - 1 for lv in miss.levels] == [13, 92] and miss.levels[0][:3].tolist() == [0, 1, 10]
    a, b = NumericTree(0, 10, 1, top_nodes=12), NumericTree(0, 10, 1)
    assert a.branching == 16 and all(np.array_equal(u, v) for u, v in zip(a.levels, b.levels))
    a, b = NumericTree(0, 99_999, 1, top_nodes=12), NumericTree(0, 99_999, 1)
    assert [lv.size - 1 for lv in a.levels] == [10, 102, 1002, 10_002, 100_000] and a.depth == b.depth == 5
    assert b.levels[0].size - 1 == 2 and np.array_equal(a.levels[-1], b.levels[-1])
    dom = EncodedDomain(p=1, blocks=(), numeric=(0,))
    m = GaussCopula(np.inf, 1e-5, domain=dom, grids=((0.0, 90.0, 1.0),), rng=0).fit(np.linspace(0, 1, 200)[:, None])
    assert [lv.size - 1 for lv in m.cells_[0].levels] == [12, 91]


def test_grid_values_are_multiples_of_the_resolution():
    t = NumericTree(0.05, 10.0, 0.1, branching=16, max_leaves=64)  # 99 grid points: intervals, snapped
    assert not t.grid
    v = t.values(np.arange(1, t.n_cells - 1), np.full(t.n_cells - 2, 0.37))
    dec = 0.05 + v * t.span
    assert np.allclose(dec * 10, np.round(dec * 10), atol=1e-9) and dec.min() >= 0.1 - 1e-9


def test_a_tree_pickles_as_its_parameters_and_comes_back_the_same():
    """A tree travels to Dask workers inside each pass's map: pickled as its public parameters (a few hundred
    bytes, not the 3 MB a tree of 2 ** 16 leaves holds in arrays) and rebuilt equal, its grid parts included."""
    import pickle

    tree = NumericTree(0.0, 60.0, None, True, 16, 2 ** 16, 12)
    tree.set_grid_parts(2)
    raw = pickle.dumps(tree)
    back = pickle.loads(raw)
    assert len(raw) < 2_000 and back.grid_parts == 2
    for name, value in vars(tree).items():
        other = getattr(back, name)
        if isinstance(value, np.ndarray):
            assert np.array_equal(value, other, equal_nan=True), name
        elif isinstance(value, list):
            assert len(value) == len(other) and all(np.array_equal(a, b) for a, b in zip(value, other)), name
        else:
            assert value == other or (np.isnan(value) and np.isnan(other)), name


def test_leaf_cap_is_a_power_of_two_flat_in_n():
    assert leaf_cap(3, 2) == 2 ** 19 and leaf_cap(1000, 6) == 2 ** 10 and leaf_cap(1, 1) == 2 ** 20


def test_refinement_without_noise_returns_the_exact_leaves():
    t = NumericTree(0, 1000, 1.0, branching=8)
    g = np.random.default_rng(0)
    leaves = np.bincount(np.minimum(g.geometric(0.01, 5000), 1000), minlength=1001)[None, :].astype(float)
    top = t.level_counts(leaves, 0)
    out = refine_levels([t], [top], [t.depth], 0.0, _exact(t, leaves), project_to_simplex)
    assert np.allclose(out[0], leaves)


def test_shrinking_keeps_an_atom_and_smooths_what_the_noise_explains():
    g = np.random.default_rng(1)
    prior = np.full(16, 100.0)
    smooth = prior + g.normal(0, 5, 16)  # a flat run of values, 100 a cell, noise std 75
    noisy = smooth + g.normal(0, 75, 16)
    out = shrink(noisy, prior, 75.0)
    assert np.sum((out - smooth) ** 2) < 0.2 * np.sum((noisy - smooth) ** 2)
    spike = prior.copy()
    spike[3] = 5000.0  # an atom: far more than the noise
    noisy = spike + g.normal(0, 75, 16)
    out = shrink(noisy, prior, 75.0)
    assert out[3] > 4800 and np.allclose(out, noisy, atol=0.02 * 5000)
    assert np.array_equal(shrink(noisy[:2], prior[:2], 75.0), noisy[:2])  # two counts: as released
    assert np.array_equal(shrink(noisy, prior, 0.0), noisy)  # without noise: the counts as released


def test_shrinking_lowers_the_squared_error_on_average():
    """James-Stein: for K >= 3 the expected squared error is below the noisy counts' whatever the truth."""
    g = np.random.default_rng(2)
    for truth in (np.full(8, 50.0), np.linspace(0, 400, 8), np.r_[np.zeros(7), 900.0]):
        prior = np.full(8, truth.mean())
        raw = est = 0.0
        for _ in range(400):
            y = truth + g.normal(0, 60, 8)
            raw += np.sum((y - truth) ** 2)
            est += np.sum((shrink(y, prior, 60.0) - truth) ** 2)
        assert est < raw


def test_noisy_children_of_a_smooth_node_come_back_near_the_spread():
    t = NumericTree(0, 90, 1.0, branching=16)
    g = np.random.default_rng(3)
    leaves = t.level_counts(np.full((1, t.n_cells), 0.0), t.depth - 1)
    leaves[0, 1:-1] = 100.0 + g.normal(0, 5, leaves.shape[1] - 2)  # a flat run of values
    top = t.level_counts(leaves, 0)

    def measure(std):
        noise = np.random.default_rng(4)

        def m(level, masks):
            exact = selected_counts([t], [leaves], level, masks)
            return Measurement(("tree_level", level, level_nodes(masks)), exact + noise.normal(0, 75, exact.size), std)
        return m

    shrunk = refine_levels([t], [top], [t.depth], 0.0, measure(75.0), project_to_simplex)[0]
    raw = refine_levels([t], [top], [t.depth], 0.0, measure(0.0), project_to_simplex)[0]  # std 0: not shrunk
    assert np.sum((shrunk - leaves) ** 2) < 0.25 * np.sum((raw - leaves) ** 2)


def test_an_unsplit_node_spreads_by_width_and_not_onto_the_bounds():
    t = NumericTree(0, 1, 0.0, branching=4, max_leaves=18)  # atom, 16 intervals, atom
    leaves = np.zeros((1, 18))
    leaves[0, 1:5] = 10.0
    top = t.level_counts(leaves, 0)
    out = refine_levels([t], [top], [1], 0.0, _exact(t, leaves), project_to_simplex)[0]
    assert out[0, 0] == 0.0 and out.sum() == pytest.approx(40.0)  # the lower bound's atom gets nothing


def test_a_parent_spread_keeps_its_mass_and_follows_a_linear_density():
    """A parent's mass goes to its children by a line through its neighbours' densities: the masses sum to the
    parent's, an exactly linear density comes back exactly inside (flat at the first and last node), and a mode or
    a hole gets no slope (the line never goes below zero)."""
    t = NumericTree(0, 99, 1.0, branching=10)  # 100 grid points: 10 parents, the first and last with a bound
    x = np.arange(100.0)
    leaves = (10 + x)[None, :]  # a linear density
    top = t.level_counts(leaves, 0)
    out = spread(top, t, 1)
    assert t.levels[0][:2].tolist() == [0, 11] and np.allclose(t.level_counts(out, 0), top)
    assert np.allclose(out[0, 11:91], leaves[0, 11:91]) and np.allclose(out[0, :11], top[0, 0] / 11)
    peak = np.r_[np.zeros(41), np.full(10, 500.0), np.zeros(49)][None, :]  # a mode alone in one parent
    s = linear_slopes(t.level_counts(peak, 0), t.centres(0), t.level_weights(0))
    assert np.all(s == 0) and np.all(spread(t.level_counts(peak, 0), t, 1) >= 0)
    steep = np.r_[np.zeros(31), np.full(10, 1.0), np.full(10, 900.0), np.zeros(49)][None, :]
    assert np.all(spread(t.level_counts(steep, 0), t, 1) >= 0)


def test_a_smooth_column_comes_back_closer_than_by_flat_shares():
    """A bell-shaped column measured only at its coarse nodes: the linear spread's 20-bin histogram is nearer the
    truth than the flat one's (the slope the flat spread drops is the 20-bin TVD the finer levels' noise cost)."""
    t = NumericTree(0, 999, 1.0, branching=10, top_nodes=10)
    x = np.arange(1000.0)
    leaves = np.exp(-0.5 * ((x - 500) / 150) ** 2)[None, :] * 100
    top = t.level_counts(leaves, 0)
    lin = refine_levels([t], [top], [1], 0.0, _exact(t, leaves), project_to_simplex)[0]
    sizes = np.diff(t.levels[0])
    flat = np.repeat(top / sizes, sizes, axis=1)
    bins = lambda v: np.add.reduceat(v[0], np.arange(0, 1000, 50))
    assert np.abs(bins(lin) - bins(leaves)).sum() < 0.4 * np.abs(bins(flat) - bins(leaves)).sum()


def test_values_piled_on_a_bound_are_measured_alone_once_their_node_splits():
    """A column with 3 % of its records at its lower bound and the rest spread thin (the generated 101-column table's
    x41, a smaller class): the bound is a node of its own below the coarsest level, so the shrinkage sees it as one
    large child and keeps it. Inside a node of small values it had been diluted (about half of it kept) and then,
    under the split threshold, spread over the node's leaves."""
    t = NumericTree(0, 1, 0.001, top_nodes=12)
    assert t.levels[0][:2].tolist() == [0, 101] and t.levels[1][:3].tolist() == [0, 1, 11]
    x = np.linspace(0, 1, t.n_cells)
    leaves = (4.0 + 8.0 * x * (1 - x))[None, :]
    leaves[0, 0] = 410.0  # the atom on the bound, about 3 % of this class
    kept = []
    for seed in range(8):
        g = np.random.default_rng(seed)
        top = t.level_counts(leaves, 0) + g.normal(0, 143, t.levels[0].size - 1)
        out = refine_levels([t], [np.maximum(top, 0)], [t.depth], 3 * 143.0, _noisy(t, leaves, g, 143.0),
                            project_to_simplex)[0]
        kept.append(out[0, 0] / leaves[0, 0])
    assert np.mean(kept) > 0.75


def test_an_empty_bound_is_not_given_its_noise_and_a_pile_on_it_is_kept():
    """Ages over public bounds 0..65 with none at either bound, a table of a few thousand records (a noise std of 65 a
    count): kept as measured, an empty bound's node kept its positive noise (1.3 % of the ages at exactly 0 on a
    held-out table). Its count must reach the tails' floor (``bound_kept``): over 40 seeded releases of the levels an
    empty bound gets records where the noise alone passes that floor (about 1 in 20), and a pile of 8 stds on the
    lower bound is kept within the noise."""
    t = NumericTree(0, 65, 0.001, top_nodes=12)
    smooth = np.ones((1, t.n_cells))
    smooth *= 4600 / smooth.sum()
    smooth[0, [0, -1]] = 0.0
    piled = smooth.copy()
    piled[0, 0] = 8 * 65.0
    on_bounds, kept = [], []
    for seed in range(40):
        g = np.random.default_rng(seed)
        for leaves, out in ((smooth, on_bounds), (piled, kept)):
            top = t.level_counts(leaves, 0) + g.normal(0, 65, t.levels[0].size - 1)
            est = refine_levels([t], [np.maximum(top, 0)], [t.depth], 3 * 65.0, _noisy(t, leaves, g, 65.0),
                                project_to_simplex)[0]
            out.extend(est[0, [0, -1]] if out is on_bounds else [est[0, 0] / leaves[0, 0]])
    assert np.mean(on_bounds) < 12.0  # 8.5 (22 with the bound's node kept as measured, records on 41 % of them)
    assert 0.8 < np.mean(kept) < 1.2


def test_missing_values_are_a_cell_and_come_back_as_nan():
    """NaN in a column declared missing: its own leaf (a node of the coarsest level), counted once;
    the release gives NaN to about the same share of records."""
    g = np.random.default_rng(1)
    n = 20000
    x = np.round(g.random(n) * 50) / 50
    x[g.random(n) < 0.2] = np.nan
    X = np.column_stack([x, g.random(n)])
    t = NumericTree(0, 50, 1.0, missing=True)
    k = t.index(x)
    assert np.all((k == 0) == np.isnan(x)) and t.levels[0][:2].tolist() == [0, 1]
    dom = EncodedDomain(p=2, numeric=(0, 1), blocks=())
    counter = CellCounter(p=2, numeric=(0, 1), cells=(t, NumericTree(0, 1)), blocks=(), n_classes=None, nan_ok=(0,))
    assert counter(X, None)[2][0][0, 0] == np.isnan(x).sum()
    m = GaussCopula(4.0, domain=dom, rng=0, grids=((0, 50, 1.0), (0, 1, 0)), missing=(True, False)).fit(X)
    Xs, _ = m.sample(20000)
    assert abs(np.isnan(Xs[:, 0]).mean() - 0.2) < 0.02 and not np.isnan(Xs[:, 1]).any()
    fin = Xs[~np.isnan(Xs[:, 0]), 0] * 50
    assert np.allclose(fin, np.round(fin), atol=1e-9)


def test_nan_is_refused_where_missing_is_not_declared():
    from privrelease.errors import InputDataError

    X = np.array([[0.5, np.nan], [0.2, 0.3]] * 10)
    with pytest.raises(InputDataError, match="finite"):
        GaussCopula(1.0, rng=0, missing=(True, False)).fit(X)
    assert GaussCopula.capabilities.missing_numeric and math.isfinite(leaf_cap(1, 1))


def test_atoms_without_a_declared_precision_come_back_as_written():
    """A column recorded at whole ages but declared without `step` (continuous): the value 27 held by
    30 % of the records came back as 27.0000087 and its neighbours (KS 0.17 on a public table); the
    leaves are public, so each released value is the shortest number of its leaf."""
    import pandas as pd
    from scipy.stats import ks_2samp

    from privrelease import release
    from privrelease.schema import Schema

    rng = np.random.default_rng(0)
    n = 4000
    age = rng.choice([22.0, 27.0, 32.0, 37.5, 42.0], n, p=[0.25, 0.3, 0.2, 0.1, 0.15])
    df = pd.DataFrame({"age": age, "y": rng.choice(["a", "b"], n)})
    schema = Schema.from_dict({"columns": {"age": {"type": "numeric", "lower": 15, "upper": 60},
                                           "y": {"type": "categorical", "categories": ["a", "b"], "role": "label"}}})
    out = release(df, schema, "gauss-copula", 1.0, rng=0).data
    assert abs((out["age"] == 27.0).mean() - 0.3) < 0.03
    assert ks_2samp(df["age"], out["age"]).statistic < 0.05
