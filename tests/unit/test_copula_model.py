"""gauss-copula's graphical model: its plan (candidates, rounds, budget), its rounds (copula_measure.model_rounds)
and a release that keeps what the mixture loses (a near-deterministic pair, a three-way relation with the label)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privrelease.mechanisms.gauss_mixture import copula_defaults as D
from privrelease.mechanisms.gauss_mixture import copula_measure as M
from privrelease.mechanisms.gauss_mixture import copula_plan as CP
from privrelease.mechanisms.gauss_mixture import model_plan as P
from privrelease.mechanisms.gauss_mixture.gauss_copula import GaussCopula
from privrelease.schema.encoding import EncodedDomain


def test_candidates_are_pairs_features_with_the_label_and_triples_with_the_label():
    sizes = (3, 4, 5, 2)  # the label last
    c = P.model_candidates(sizes, 3)
    assert set(c) == {(0, 1), (0, 2), (1, 2), (0, 3), (1, 3), (2, 3), (0, 1, 3), (0, 2, 3), (1, 2, 3)}
    assert P.model_candidates(sizes[:3], None) == ((0, 1), (0, 2), (1, 2))


def test_triples_are_left_out_largest_first_beyond_the_total(monkeypatch):
    sizes = (3, 4, 5, 2)
    base = sum(P.cells_of(sizes, t) for t in [(0, 1), (0, 2), (1, 2), (0, 3), (1, 3), (2, 3)])
    monkeypatch.setattr(D, "MAX_CANDIDATE_TOTAL", base + 24 + 30)  # room for the triples of 24 and 30 cells
    c = P.model_candidates(sizes, 3)
    assert (0, 1, 3) in c and (0, 2, 3) in c and (1, 2, 3) not in c


def test_the_model_budget_spends_epsilon_and_states_every_share():
    dom = EncodedDomain(p=6, numeric=(), blocks=((0, 2), (2, 4), (4, 6)))
    plan = P.plan_model(dom, (), 2, 1000, 1.0, 1e-6)
    b = P.model_budget(1.0, 1e-6, "zcdp", plan)
    assert set(b.rho_split()) == {"marginals", "model_measure", "model_select"}
    assert b.rho_marginals + b.rho_pairs_measure + b.rho_pairs_select == pytest.approx(b.rho)
    assert b.rho_pairs_select == pytest.approx(plan.share * D.SELECT_FRACTION * b.rho)
    assert CP.accounting_epsilon(b, 0.0) == pytest.approx(1.0, rel=1e-3) and CP.accounting_epsilon(b, 0.0) <= 1.0
    assert plan.rounds == P.plan_rounds(plan.attributes.sizes, plan.pairs, 1000, 1.0, 1e-6, plan.share)


def test_the_rounds_are_one_to_two_per_attribute_as_the_typical_candidates_noise_allows():
    sizes, cands = (3, 4, 5, 2), ((0, 1), (0, 2), (1, 2), (0, 3), (1, 3), (2, 3))  # cells 12 15 20 6 8 10
    typical = math.prod([12, 15, 20, 6, 8, 10]) ** (1 / 6)  # their geometric mean, 10.95
    rho = D.MODEL_SHARE * (1 - D.SELECT_FRACTION) * P.calibrate_rho(1.0, 1e-6, "zcdp", D.MODEL_SHARE * D.SELECT_FRACTION, 4)
    for n in (100, 1000, 1500, 2000, 10 ** 6):
        # public facts only: T rounds' noise, sqrt(T / rho_measure), on the typical candidate, within ROUND_NOISE_TVD
        most = rho * (D.ROUND_NOISE_TVD * 2 * n / (math.sqrt(2 / math.pi) * typical)) ** 2
        assert P.plan_rounds(sizes, cands, n, 1.0, 1e-6, D.MODEL_SHARE) == max(4, min(math.floor(most), 8, 6))
    assert [P.plan_rounds(sizes, cands, n, 1.0, 1e-6, D.MODEL_SHARE) for n in (100, 1500, 10 ** 6)] == [4, 5, 6]
    assert P.plan_rounds(sizes, cands, 10 ** 6, math.inf, 1e-6, D.MODEL_SHARE) == 4


def test_one_more_attribute_does_not_halve_the_rounds():
    """The typical candidate is the geometric mean of their cells, not the median, which jumps between the size
    classes of the candidates: nycflights13's attributes (100,000 records) with a date-time's time of day as one
    more attribute moved the median candidate 468 -> 576 cells and the rounds 13 -> 9 (2-way TVD 0.052 -> 0.061)."""
    def rounds(sizes):
        return P.plan_rounds(sizes, P.model_candidates(sizes, len(sizes) - 1), 100_000, 1.0, 1e-6, D.MODEL_SHARE)

    one, parts = rounds((9, 16, 17, 17, 12, 12, 52, 4)), rounds((12, 12, 16, 17, 17, 12, 12, 52, 4))
    assert parts >= one >= 13, (one, parts)


def code_table(n=6000, seed=0):
    """A code (12 levels) and its group (3 levels: code // 4), a numeric column inside its group's range, and
    a label that is the parity of (code + group): a near-deterministic pair and a three-way relation."""
    rng = np.random.default_rng(seed)
    code = rng.integers(0, 12, n)
    group = code // 4
    x = (group + rng.random(n)) / 3.0
    y = ((code + group) % 2 == 0).astype(int) ^ (rng.random(n) < 0.05)
    X = np.zeros((n, 16))
    X[:, 0] = x
    X[np.arange(n), 1 + code] = 1.0
    X[np.arange(n), 13 + group] = 1.0
    return X, y.astype(int), EncodedDomain(p=16, numeric=(0,), blocks=((1, 13), (13, 16)))


def fitted(dependence, seed=0, chunks=None):
    X, y, dom = code_table()
    m = GaussCopula(1.0, 1e-6, domain=dom, n_classes=2, grids=((0.0, 1.0, 0.0),), dependence=dependence, rng=seed)
    if chunks is None:
        return m.fit(X, y)
    return m.fit_passes(lambda: ((X[i:i + chunks], y[i:i + chunks]) for i in range(0, len(X), chunks)))


def agreement(X):
    code, group = np.argmax(X[:, 1:13], axis=1), np.argmax(X[:, 13:16], axis=1)
    return float(np.mean(code // 4 == group))


def test_the_model_keeps_a_code_with_its_group_and_a_number_in_its_area():
    m = fitted("graphical")
    X, y = m.sample(6000)
    assert agreement(X) > 0.9
    group = np.argmax(X[:, 13:16], axis=1)
    inside = (X[:, 0] >= group / 3.0 - 0.03) & (X[:, 0] <= (group + 1) / 3.0 + 0.03)
    assert inside.mean() > 0.85
    code = np.argmax(X[:, 1:13], axis=1)
    assert np.mean(y == ((code + group) % 2 == 0)) > 0.8  # the three-way relation with the label
    assert set(m.rho_split_) == {"marginals", "model_measure", "model_select"} and m.passes_ == 2
    cert = m.certificate_extra()
    assert cert["epsilon_check_dp_accounting"] <= 1.0 + 1e-9 and cert["dependence"]["measured"]


def parity(X, y):
    code, group = np.argmax(X[:, 1:13], axis=1), np.argmax(X[:, 13:16], axis=1)
    return float(np.mean(y == ((code + group) % 2 == 0)))


def test_the_model_keeps_more_of_the_pair_and_the_triple_than_the_mixture():
    """What the model is for: the mixture with its pair tree on the same table (0.90 and 0.87 against 0.99
    and 0.94 at seed 0)."""
    (Xm, ym), (Xg, yg) = fitted("mixture").sample(6000), fitted("graphical").sample(6000)
    assert agreement(Xm) < agreement(Xg) - 0.05 and parity(Xm, ym) < parity(Xg, yg) - 0.03


def test_streamed_chunks_give_the_release_one_chunk_gives():
    a, b = fitted("graphical", seed=3), fitted("graphical", seed=3, chunks=1000)
    assert a.marginals_measured_ == b.marginals_measured_
    np.testing.assert_array_equal(a.sample(500)[0], b.sample(500)[0])


def test_rounds_measure_distinct_candidates_and_never_one_the_size_bound_refuses():
    m = fitted("graphical")
    plan = m.model_plan_
    exact = [np.arange(P.cells_of(plan.attributes.sizes, c), dtype=float) for c in plan.pairs]
    refused = {0, 1, 2}
    seen = []
    chosen = M.model_rounds(m, exact, plan, 0.5, 0.5, lambda: [np.zeros_like(e) for e in exact],
                            lambda: np.ones(len(exact), dtype=bool), lambda r: r not in refused,
                            lambda r, meas: seen.append((r, meas)))
    assert len(chosen) == len(set(chosen)) == plan.rounds and not refused & set(chosen)
    assert [r for r, _ in seen] == chosen
    assert all(meas.query == ("marginal", plan.pairs[r]) and meas.noisy.size == exact[r].size for r, meas in seen)
    assert all(meas.noise_std == pytest.approx(m.noise_scales_["model_std"]) for _, meas in seen)


def test_a_deep_tree_enters_the_model_with_up_to_twelve_nodes_not_its_coarsest_four():
    """A deep tree's coarsest level holds up to TOP_NODES nodes, its branching lowered and its depth kept (at the
    default branching it held 4), and the model takes them: equal-width nodes but the last, a remainder."""
    from privrelease.mechanisms.gauss_mixture.copula_tree import NumericTree, leaf_cap

    t = NumericTree(0.0, 40000.0, 0.01, False, D.DEFAULT_BRANCHING, leaf_cap(7, 2), D.TOP_NODES)
    wide = NumericTree(0.0, 40000.0, 0.01, False, D.DEFAULT_BRANCHING, leaf_cap(7, 2))
    assert wide.levels[0].size - 1 == 4 and t.depth == wide.depth and t.branching < D.DEFAULT_BRANCHING
    top = t.levels[0].size - 1
    assert D.TOP_NODES // 2 < top <= D.TOP_NODES
    P.model_grid(t)
    attrs = CP.Attributes(1, (0,), (t,), (), 0, D.MODEL_NODE_CELLS)
    assert attrs.sizes == (top,)
    share = np.bincount(attrs.codes(np.linspace(0, 1, 16001)[:, None], None)[:, 0], minlength=top) / 16001
    assert np.ptp(share[:-1]) < 0.002 and 0 < share[-1] <= share[0]  # equal-width nodes, the last a remainder


def test_a_refusal_lasts_one_round_so_no_later_round_depends_on_a_draw_not_released():
    """The size test's refusals are forgotten when the round ends: a candidate refused in round 1 (the
    best-scoring one, drawn first at an infinite epsilon) is drawn again and measured in round 2."""
    m = fitted("graphical")
    plan = m.model_plan_
    exact = [np.zeros(P.cells_of(plan.attributes.sizes, c)) for c in plan.pairs]
    exact[0][0] = 1e6  # candidate 0 scores highest
    asked = []

    def fits(r):
        asked.append(r)
        return not (r == 0 and asked.count(0) == 1)  # refused the first time only

    chosen = M.model_rounds(m, exact, plan, math.inf, math.inf, lambda: [np.zeros_like(e) for e in exact],
                            lambda: np.ones(len(exact), dtype=bool), fits, lambda r, meas: None)
    assert chosen[0] != 0 and chosen[1] == 0


def test_a_refusal_is_remembered_while_the_models_graph_stays_and_asked_again_when_it_changes(monkeypatch):
    """``ModelFit.fits`` depends on the model's graph and the candidate alone: a refusal is kept (and the candidate
    left out of ``open_``) while a measurement adds no edge, and asked again once one does."""
    from types import SimpleNamespace

    from privrelease.estimation import graphical as G
    from privrelease.mechanisms.gauss_mixture.copula_estimate import ModelFit

    pairs = [(0, 1), (1, 2), (2, 3), (3, 4), (0, 4), (1, 3)]
    plan = SimpleNamespace(attributes=SimpleNamespace(sizes=(4,) * 5), pairs=pairs, rounds=4)
    first = [G.MarginalMeasurement((a,), np.full(4, 25.0), 1.0) for a in range(5)]
    fit = ModelFit(plan, first, 100, np.random.default_rng(0))
    asked = []
    cells_with = G.ModelSizer.cells_with
    monkeypatch.setattr(G.ModelSizer, "cells_with", lambda self, c: asked.append(c) or cells_with(self, c))
    monkeypatch.setattr(D, "MAX_MODEL_CELLS", 100)  # the chain's 4 x 16 cells fit, its cycle's 3 x 64 do not

    def measure(r):
        fit.record(r, M.Measurement(("marginal", pairs[r]), np.full(16, 6.25), 1.0))

    for r in range(4):
        assert fit.fits(r)
        measure(r)
    assert not fit.fits(4) and not fit.fits(4) and asked.count((0, 4)) == 1
    assert not fit.open_()[4] and fit.open_()[5]
    measure(1)  # no new edge: the refusal stands
    assert not fit.fits(4) and asked.count((0, 4)) == 1 and not fit.open_()[4]
    fit.record(5, M.Measurement(("marginal", (1, 3)), np.full(16, 6.25), 1.0))  # a new edge: asked again
    assert fit.open_()[4]
    fit.fits(4)
    assert asked.count((0, 4)) == 2


def test_compression_merges_two_or_more_rare_levels_into_one_cell_and_recounts_the_candidates():
    dom = EncodedDomain(p=9, numeric=(), blocks=((0, 5), (5, 7), (7, 9)))
    plan = P.plan_model(dom, (), 2, 1000, 1.0, 1e-6)
    assert plan.attributes.sizes == (5, 2, 2, 2)
    out = P.compress_plan(plan, [np.array([900.0, 3.0, 500.0, 0.0, 8.0]), np.array([1.0, 900.0]),
                                 np.array([700.0, 300.0])], floor=10.0)
    # levels 1, 3 and 4 of the first block share cell 2; a single rare level stays a cell of its own
    assert out.attributes.block_merges == ((0, 2, 1, 2, 2), None, None)
    assert out.attributes.sizes == (3, 2, 2, 2) and out.rounds == plan.rounds
    assert set(out.pairs) == set(P.model_candidates((3, 2, 2, 2), 3))
    X = np.zeros((5, 9))
    X[np.arange(5), np.arange(5)] = 1.0
    X[:, 5] = X[:, 7] = 1.0
    assert out.attributes.codes(X, np.zeros(5, dtype=int))[:, 0].tolist() == [0, 2, 1, 2, 2]
    assert P.compress_plan(plan, [np.full(5, 100.0), np.ones(2) * 100, np.ones(2) * 100], floor=10.0) is plan


def test_a_merged_cells_levels_share_it_equally():
    from privrelease.mechanisms.gauss_mixture.copula_sample import expand_levels

    merge = (0, 1, 0, 1, 2, 2, 2, 3)  # cell 1 holds levels 1 and 3, cell 2 levels 4, 5 and 6, level 7 is alone
    cell = np.array([1] * 4000 + [2] * 6000 + [3] * 10)
    out = expand_levels(cell, merge, np.random.default_rng(0))
    assert set(out[:4000]) == {1, 3} and abs(np.mean(out[:4000] == 1) - 0.5) < 0.03
    assert set(out[4000:10000]) == {4, 5, 6} and abs(np.mean(out[4000:10000] == 6) - 1 / 3) < 0.03
    assert set(out[10000:]) == {7}
    assert expand_levels(cell, None, np.random.default_rng(0)) is cell


def rare_table(n=6000, seed=0):
    """A 20-level code whose last 12 levels hold a handful of records each, and its 4-level group."""
    rng = np.random.default_rng(seed)
    p = np.r_[np.full(8, 0.12), np.full(12, 0.04 / 12)]
    code = rng.choice(20, n, p=p / p.sum())
    group = code % 4
    X = np.zeros((n, 24))
    X[np.arange(n), code] = 1.0
    X[np.arange(n), 20 + group] = 1.0
    return X, EncodedDomain(p=24, numeric=(), blocks=((0, 20), (20, 24)))


def test_rare_levels_are_merged_alike_on_streamed_chunks_and_the_release_keeps_every_level():
    X, dom = rare_table()

    def fit(chunks=None):
        m = GaussCopula(1.0, 1e-6, domain=dom, dependence="graphical", rng=5)
        if chunks is None:
            return m.fit(X)
        return m.fit_passes(lambda: ((X[i:i + chunks], None) for i in range(0, len(X), chunks)))

    a, b = fit(), fit(chunks=700)
    merge = a.model_plan_.attributes.block_merges[0]
    assert merge is not None and a.model_plan_.attributes.sizes[0] < 20  # rare levels share a cell
    assert b.model_plan_.attributes.block_merges == a.model_plan_.attributes.block_merges
    assert a.marginals_measured_ == b.marginals_measured_
    Xa = a.sample(6000)[0]
    np.testing.assert_array_equal(Xa, b.sample(6000)[0])
    code = np.argmax(Xa[:, :20], axis=1)
    assert len(set(code[np.asarray(merge)[code] == max(merge)])) > 1  # the merged cell expands to several levels


def test_pair_counts_derive_a_pair_from_its_triple_with_the_label():
    """The candidates' counts: a pair summed out of the pair with the label equals the pair counted alone."""
    rng = np.random.default_rng(0)
    codes = np.stack([rng.integers(0, s, 500) for s in (3, 4, 2)], axis=1)
    pairs = [(0, 1), (0, 1, 2), (1, 2), (0,)]
    for attrs, counts in zip(pairs, CP.pair_counts(codes, (3, 4, 2), pairs)):
        key = np.ravel_multi_index(tuple(codes[:, a] for a in attrs), tuple((3, 4, 2)[a] for a in attrs))
        np.testing.assert_array_equal(counts, np.bincount(key, minlength=counts.size))


def test_pair_counts_over_several_row_blocks_and_shared_tails(monkeypatch):
    """Rows counted a block at a time, and marginals that end in the same attributes (keyed once), give every
    marginal's exact counts."""
    monkeypatch.setattr(CP, "PAIR_COUNT_ROWS", 64)
    rng = np.random.default_rng(1)
    sizes = (3, 5, 4, 2)
    codes = np.stack([rng.integers(0, s, 1000) for s in sizes], axis=1)
    pairs = [(0, 2, 3), (1, 2, 3), (0, 1), (2, 3), (1, 3), (0, 1, 2, 3), (3,)]
    for attrs, counts in zip(pairs, CP.pair_counts(codes, sizes, pairs)):
        key = np.ravel_multi_index(tuple(codes[:, a] for a in attrs), tuple(sizes[a] for a in attrs))
        np.testing.assert_array_equal(counts, np.bincount(key, minlength=counts.size))


def test_cell_order_is_lexsort_by_cell_then_key():
    """The sampler's ordering of records (by cell, by a continuous key inside a cell) is lexsort's, for small cells
    (a radix sort) and large ones."""
    from privrelease.mechanisms.gauss_mixture.copula_sample import cell_order

    rng = np.random.default_rng(2)
    key = rng.random(5000)
    for top in (12, 40_000):
        cell = rng.integers(0, top, 5000)
        np.testing.assert_array_equal(cell_order(cell, key), np.lexsort((key, cell)))


def test_the_fitted_model_stays_within_its_size_bound(monkeypatch):
    """The size test counts the cliques a warm-started refit carries: the fitted model, the final one included,
    never holds more than ``MAX_MODEL_CELLS`` cells (counting the measured sets alone, carried cliques merged past
    it)."""
    rng = np.random.default_rng(1)
    n, k, levels = 4000, 14, 6
    z = rng.normal(size=(n, 3))
    codes = np.stack([np.digitize(z[:, j % 3] + 0.7 * rng.normal(size=n), np.linspace(-1.5, 1.5, levels - 1))
                      for j in range(k)], axis=1)
    X = np.zeros((n, k * levels))
    for j in range(k):
        X[np.arange(n), j * levels + codes[:, j]] = 1.0
    y = (z[:, 0] > 0).astype(int)
    dom = EncodedDomain(p=k * levels, numeric=(), blocks=tuple((j * levels, (j + 1) * levels) for j in range(k)))
    monkeypatch.setattr(D, "MAX_MODEL_CELLS", 1500)
    for seed in range(3):
        m = GaussCopula(8.0, 1e-6, domain=dom, n_classes=2, dependence="graphical", rng=seed).fit(X, y)
        sizes = m.model_.sizes
        assert sum(math.prod(sizes[a] for a in c) for c in m.model_.cliques) <= 1500


def test_the_structural_zeros_are_the_empty_tails_of_each_group():
    """A numeric node with no released count beyond a group's last node with one (or before its first) is a
    structural zero of the model; an empty node between two with counts is not."""
    from privrelease.estimation.graphical import MarginalMeasurement
    from privrelease.mechanisms.gauss_mixture.copula_estimate import empty_tails

    counts = np.array([[5.0, 0.0], [0.0, 3.0], [2.0, 0.0], [0.0, 0.0]])  # (nodes, classes)
    first = [MarginalMeasurement((0, 2), counts.ravel(), 1.0), MarginalMeasurement((1,), np.array([0.0, 4, 0]), 1.0)]
    (a, zero), (b, single) = empty_tails(first, (4, 3, 2), 2)
    assert a == (0, 2) and b == (1,)
    np.testing.assert_array_equal(zero, [[False, True], [False, False], [False, True], [True, True]])
    np.testing.assert_array_equal(single, [True, False, True])


# ---- a numeric column's cells cut from its released masses ----------------------------------------------
class _Leaves:
    """A tree's public geometry as mass_cuts reads it: leaves of equal width, the missing leaf first."""

    def __init__(self, values: int, missing: bool = False):
        self.missing, self.n_cells = missing, values + int(missing)
        self.weights = np.r_[[0.0] * int(missing), np.ones(values)]


def _runs(starts, mass):
    starts = np.asarray(starts)
    return np.add.reduceat(np.asarray(mass, dtype=float), starts[:-1])


def test_mass_cuts_give_an_atom_a_cell_and_share_the_rest_between_mass_and_width(monkeypatch):
    monkeypatch.setattr(D, "CUT_WIDTH_WEIGHT", 0.5)
    mass = np.zeros(100)
    mass[0], mass[1:20] = 5000.0, 100.0  # an atom, a dense run, an empty stretch
    cut = P.mass_cuts(_Leaves(100), mass, 8)
    assert cut[0] == 0 and cut[1] == 1 and cut[-1] == 100 and len(cut) - 1 <= 8  # the atom alone
    dense = sum(1 for a in cut[1:-1] if a < 20)
    assert dense >= 4  # most cells where the records are ...
    assert cut[-2] >= 20  # ... and the empty stretch still a cell of its own (its zeros are structural)
    monkeypatch.setattr(D, "CUT_WIDTH_WEIGHT", 0.0)
    assert P.mass_cuts(_Leaves(100), mass, 8)[-2] < 20  # by mass alone the stretch joins the last run


def test_mass_cuts_keep_the_missing_leaf_alone_and_only_use_allowed_edges():
    mass = np.r_[300.0, np.full(64, 10.0)]
    cut = P.mass_cuts(_Leaves(64, missing=True), mass, 4, allowed=np.arange(1, 66, 16))
    assert cut == (0, 1, 17, 33, 49, 65)
    assert _runs(cut, mass).tolist() == [300.0, 160.0, 160.0, 160.0, 160.0]
    assert P.mass_cuts(_Leaves(8), np.zeros(8), 4) is None


def test_measured_edges_are_the_coarsest_level_the_grid_and_every_measured_node():
    from privrelease.mechanisms.gauss_mixture.copula_tree import NumericTree

    t = NumericTree(0.0, 4095.0, 1.0, False, 16, 2 ** 12)  # 4096 leaves: levels of 16, 258 and 4096 nodes (256, 16 and 1 leaves)
    nodes = np.array([[0, 0, 3], [1, 0, 5], [0, 1, 3]])  # column 0's node 3 of level 1 (twice), column 1's node 5
    edges = P.measured_edges(t, 0, 0, [(1, nodes)])
    assert set(edges) == set(t.levels[0]) | {33, 49}  # node 3 of level 1 (the lower bound its node 0): leaves 33 to 48


def test_the_models_numeric_cells_follow_the_released_mass_and_the_sampler_stays_inside_them():
    """A column whose records fill a fifth of its public range: the grid's equal-width nodes put them in three
    cells, the cut from released masses in most of them; codes and sampled values agree on the cells."""
    from privrelease.mechanisms.gauss_mixture.copula_sample import rank_match_within
    from privrelease.mechanisms.gauss_mixture.copula_tree import NumericTree

    t = NumericTree(0.0, 1000.0, 1.0, False, D.DEFAULT_BRANCHING, 2 ** 12, D.TOP_NODES)
    P.model_grid(t)
    attrs = CP.Attributes(1, (0,), (t,), (), 0, D.MODEL_NODE_CELLS)
    g = np.random.default_rng(0)
    x = np.clip(g.normal(450, 40, 20000), 0, 1000).round() / 1000.0
    leaves = np.bincount(t.index(x), minlength=t.n_cells).astype(float)
    plan = P.ModelPlan(attrs, (), 1, 0.5)
    assert t.levels[1][2] - t.levels[1][1] == 10  # level 1: the bound, then nodes of 10 leaves; those around 450 measured
    measured = [(1, np.array([[0, 0, i] for i in range(37, 53)]))]
    cut = P.compress_plan(plan, [], 1.0, [leaves], measured).attributes
    assert cut.sizes == attrs.sizes
    held = lambda a: (np.bincount(a.codes(x[:, None], None)[:, 0], minlength=a.sizes[0]) > 200).sum()
    assert held(attrs) <= 4 and held(cut) >= 8
    node = cut.codes(x[:, None], None)[:, 0]
    F = np.r_[0.0, np.cumsum(leaves / leaves.sum())]
    v = rank_match_within(g.random(x.size), node, t, cut.starts(0), F, leaves / leaves.sum(), g)
    assert (cut.codes(v[:, None], None)[:, 0] == node).all()


def test_the_models_threshold_zeroes_a_numeric_histograms_tails_not_a_thin_run_between_counts():
    from privrelease.mechanisms.gauss_mixture.copula_estimate import denoise

    noisy = np.array([3.0, -2.0, 50.0, 4.0, -1.0, 60.0, 2.0, 5.0])
    out = denoise(noisy, 120.0, 10.0, tails=True)
    assert out[[0, 1, 6, 7]].tolist() == [0, 0, 0, 0] and out[3] > 0 and out[4] == 0
    assert out.sum() == pytest.approx(120.0)
    assert denoise(noisy, 120.0, 10.0)[3] == 0  # categorical levels: every cell below the floor


def test_a_tail_cell_apart_from_the_range_passes_the_floors_rate_once_for_every_cell_beyond_it():
    """A cell past empty-looking ones joins the range only at the Bonferroni level for the cells beyond the range
    (9 of them: 2.80 stds where the floor is 2); one next to the range, or a real far mode, joins at the floor; a
    bound's (the outermost) joins at the floor alone, the cells between it and the range left empty."""
    from privrelease.mechanisms.gauss_mixture.copula_estimate import denoise, kept_cells

    def kept(v):
        return np.flatnonzero(kept_cells(np.asarray(v, dtype=np.float64), 20.0, 10.0)).tolist()

    bulk = [300.0, 900.0, 500.0]
    far = np.array(bulk + [-4.0, 3.0, -9.0, 25.0, 1.0, -2.0, 6.0, -7.0, 0.0])  # 25 = 2.5 stds of 10
    assert kept(far) == [0, 1, 2]
    out = denoise(far, 1700.0, 20.0, tails=True, std=10.0)
    assert out[3:].sum() == 0 and out.sum() == pytest.approx(1700.0)
    assert denoise(far, 1700.0, 20.0, tails=True)[6] > 0  # without the std: the floor alone, as before
    assert kept(bulk + [-4.0, 3.0, 26.0, 0.0]) == [0, 1, 2, 3, 4, 5]  # 4 cells beyond: 2.53 stds
    assert kept(bulk + [-4.0, 3.0, 24.0, 0.0]) == [0, 1, 2]
    assert kept(bulk + [-4.0, 3.0, -9.0, 1.0, 22.0]) == [0, 1, 2, 7]  # a pile at the bound, alone
    assert kept([22.0, 3.0] + bulk) == [0, 2, 3, 4]
    assert kept(bulk + [21.0, 22.0, 3.0, 1.0]) == [0, 1, 2, 3, 4]  # next to the range
    assert kept([-3.0, 2.0, 210.0, 5.0, 900.0, 700.0]) == [2, 3, 4, 5]  # a far mode, with the dip before it
    assert kept([3.0, 5.0, -1.0]) == []
    rng = np.random.default_rng(0)
    empty = rng.normal(0.0, 10.0, (4000, 10))
    grown = np.mean([kept_cells(np.r_[bulk, e], 20.0, 10.0)[3:].any() for e in empty])
    # about three times the floor's rate (0.023): the cell next to the range and the bound's at the floor, the eight
    # between together at it; the floor alone on each cell: 1 - 0.977 ** 10 = 0.21
    assert grown < 0.08
    assert np.mean((empty >= 20.0).any(axis=1)) > 0.15


def test_a_numeric_columns_missing_cell_is_no_part_of_its_tails():
    """The missing values' cell (the tree's first) is kept at its noisy count, below the floor or not, and does not
    end the ordered range's leading tail: before, a missing share under the floor was zeroed as a tail cell (a
    table's 3.2 % released as 0.0 %), and one above it kept every empty cell between it and the range's mass."""
    from privrelease.estimation.graphical import MarginalMeasurement
    from privrelease.mechanisms.gauss_mixture.copula_estimate import (
        denoise,
        empty_tails,
    )

    noisy = np.array([7.0, 4.0, -3.0, 50.0, 60.0, 2.0])  # missing, then the ordered cells
    out = denoise(noisy, 120.0, 10.0, tails=True, unordered=1)
    assert out[0] > 0 and out[[1, 2, 5]].tolist() == [0, 0, 0]
    assert out.sum() == pytest.approx(120.0)
    big = denoise(np.array([40.0, 4.0, -3.0, 50.0, 60.0, 2.0]), 150.0, 10.0, tails=True, unordered=1)
    assert big[0] > 0 and big[[1, 2, 5]].tolist() == [0, 0, 0]
    counts = np.array([40.0, 0.0, 0.0, 50.0, 60.0, 0.0])
    (_, zero), = empty_tails([MarginalMeasurement((0,), counts, 1.0)], (6,), 1, [1])
    np.testing.assert_array_equal(zero, [False, True, True, False, False, True])
    (_, empty_missing), = empty_tails([MarginalMeasurement((0,), np.r_[0.0, counts[1:]], 1.0)], (6,), 1, [1])
    assert empty_missing[0]


def test_positions_inside_the_cells_carry_the_dependence_the_cells_show():
    from privrelease.mechanisms.gauss_mixture.copula_sample import within_scores

    g = np.random.default_rng(0)
    a = g.integers(0, 16, 20000)
    cells = np.column_stack([a, np.clip(a + g.integers(-1, 2, a.size), 0, 15), g.integers(0, 16, a.size)])
    Z = within_scores(cells, g)
    r = np.corrcoef(Z, rowvar=False)
    assert r[0, 1] > 0.9 and abs(r[0, 2]) < 0.05 and abs(r[1, 2]) < 0.05


def test_a_near_identical_numeric_pair_stays_near_identical_inside_its_cells():
    """x and y (y = x within a few hundredths) agree within 0.1 in 96 % of real rows; with each value drawn inside
    its cell alone they agreed in about 40 % of released rows."""
    import pandas as pd

    from privrelease.release import release
    from privrelease.schema import Schema

    g = np.random.default_rng(1)
    x = np.round(np.clip(g.normal(5, 1.5, 8000), 0, 10), 2)
    df = pd.DataFrame({"x": x, "y": np.round(np.clip(x + g.normal(0, 0.03, x.size), 0, 10), 2),
                       "c": np.where(x + g.normal(0, 1, x.size) > 5, "a", "b")})
    schema = Schema.from_dict({"columns": {"x": {"type": "numeric", "lower": 0, "upper": 10, "step": 0.01},
                                           "y": {"type": "numeric", "lower": 0, "upper": 10, "step": 0.01},
                                           "c": {"type": "categorical", "categories": ["a", "b"]}}})
    out = release(df, schema, "gauss-copula", 4.0, delta=1e-6, rng=0).data
    assert np.mean(np.abs(df.x - df.y) < 0.1) > 0.9
    assert np.mean(np.abs(out.x - out.y) < 0.1) > 0.6


def test_a_level_whose_boundary_cuts_a_cell_gathers_on_its_side_of_the_cell():
    """Two cells of equal width; level A fills the first and runs into the second, level B fills the rest of the
    second: inside the second cell A's records take the left end, B's the right end, and within each level the
    positions keep their order. Checked to fail with the tilt's sign reversed."""
    from privrelease.mechanisms.gauss_mixture.copula_sample import (
        guiding_levels,
        level_tilts,
    )

    g = np.random.default_rng(0)
    cell = np.r_[np.zeros(1000, int), np.ones(200, int), np.ones(800, int)]
    level = np.r_[np.zeros(1200, int), np.ones(800, int)]
    u = g.random(cell.size)
    t = level_tilts(cell, level, np.array([1.0, 1.0]), u)
    a, b = t[1000:1200], t[1200:]
    assert a.mean() < 0.4 and b.mean() > 0.6
    assert np.all(np.diff(t[1000:1200][np.argsort(u[1000:1200])]) >= 0)  # increasing in u
    # the first cell (an edge: its own density on the left) slopes down toward the second, where A thins
    assert 0.35 < t[:1000].mean() < 0.5
    assert guiding_levels(cell[:, None], np.zeros((cell.size, 0), int)).tolist() == [-1]  # no categorical: no tilt
    noise = g.integers(0, 3, cell.size)  # a categorical column unrelated to the cells is not the guide
    assert guiding_levels(cell[:, None], np.column_stack([noise, level])).tolist() == [1]


def test_an_atom_or_missing_neighbour_tilts_nothing():
    """A cell next to an atom (width 0) or the missing cell reads no slope from it."""
    from privrelease.mechanisms.gauss_mixture.copula_sample import level_tilts

    g = np.random.default_rng(1)
    cell = np.r_[np.zeros(500, int), np.ones(500, int)]
    level = np.zeros(1000, int)
    u = g.random(1000)
    assert level_tilts(cell, level, np.array([0.0, 1.0]), u) == pytest.approx(u)
