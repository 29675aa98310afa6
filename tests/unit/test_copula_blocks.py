"""gauss-copula's node blocks: numeric columns also enter the mixture as one-hot blocks of their
tree's nodes, so that dependence that is not monotone in a numeric column survives."""

import numpy as np
import pandas as pd

from privrelease.mechanisms.gauss_mixture.copula_plan import coarse_plan
from privrelease.mechanisms.gauss_mixture.copula_sample import rank_match_within
from privrelease.mechanisms.gauss_mixture.copula_tree import NumericTree
from privrelease.release import release
from privrelease.schema import Schema
from privrelease.schema.encoding import EncodedDomain


def _u_shaped(n=20000, seed=0):
    """Status "out" for the young and the old, "in" for the middle-aged: no monotone relation."""
    g = np.random.default_rng(seed)
    age = g.integers(0, 91, n)
    out = (age < 18) | (age > 65)
    status = np.where(g.random(n) < np.where(out, 0.95, 0.05), "out", "in")
    region = g.choice(["n", "s", "e", "w"], n)
    df = pd.DataFrame({"age": age, "status": status, "region": region})
    schema = Schema.from_dict({"columns": {
        "age": {"type": "numeric", "lower": 0, "upper": 90, "integer": True},
        "status": {"type": "categorical", "categories": ["in", "out"]},
        "region": {"type": "categorical", "categories": ["n", "s", "e", "w"]}}})
    return df, schema


def _out_share_by_age(df):
    band = pd.cut(df["age"], [-1, 17, 65, 90])
    return df.assign(band=band).groupby("band", observed=True)["status"].apply(lambda s: (s == "out").mean()).to_numpy()


def test_non_monotone_dependence_survives_with_node_blocks():
    """With the blocks the young and the old are "out" far more often than the middle-aged (the
    data: 0.94 and 0.96 against 0.05; the release about 0.69 against 0.28, a Gaussian's scores
    decoded to levels soften it); without them (a monotone copula) the three bands look alike."""
    df, schema = _u_shaped()

    def contrast(params):
        s = _out_share_by_age(release(df, schema, "gauss-copula", 4.0, delta=1e-6, rng=0, **params).data)
        return min(s[0], s[2]) - s[1]

    assert contrast({"dependence": "mixture"}) > 0.3
    assert abs(contrast({"dependence": "mixture", "coarse_cells": 0})) < 0.15
    assert contrast({}) > 0.5  # the default's graphical model measures the (age, status) table itself


def test_blocks_only_when_numeric_columns_are_at_most_the_categorical_ones():
    trees = [NumericTree(0, 90, 1.0), NumericTree(0, 1, 0.0)]
    mixed = EncodedDomain(p=7, numeric=(0, 1), blocks=((2, 4), (4, 7)))
    plan = coarse_plan(mixed, trees, 10)
    assert all(b is not None for b in plan.offsets)
    assert plan.domain.p == 7 + sum(b - a for a, b in plan.offsets) and plan.domain.p2 == 4
    assert plan.offsets[0][0] == 7 and plan.offsets[1][0] == plan.offsets[0][1]
    numeric_heavy = EncodedDomain(p=4, numeric=(0, 1), blocks=((2, 4),))
    assert coarse_plan(numeric_heavy, trees, 10).domain == numeric_heavy
    assert coarse_plan(mixed, trees, 0).domain == mixed


def test_values_stay_inside_their_node_and_follow_the_scores():
    tree = NumericTree(0, 90, 1.0)
    level = tree.level_of(10)
    masses = np.ones(tree.n_cells) / tree.n_cells
    F = np.concatenate([[0.0], np.cumsum(masses)])
    g = np.random.default_rng(0)
    node = g.integers(0, tree.levels[level].size - 1, 500)
    z = g.standard_normal(500)
    x = rank_match_within(z, node, tree, tree.grids[level], F, masses, g)
    assert np.array_equal(tree.coarse_index(x, level), node)
    for v in np.unique(node):  # within a node, a higher score never gets a lower value
        sel = node == v
        order = np.argsort(z[sel])
        assert np.all(np.diff(x[sel][order]) >= 0)


def test_auto_marginal_share_follows_the_noise_yardstick():
    """0.3 when the noise alone would move each column's histogram by more than 0.1 in TVD (wide
    numeric tables), otherwise 0.55; a number is used as given."""
    from privrelease.mechanisms.gauss_mixture.copula_plan import auto_marginal_share

    wide = EncodedDomain.numeric_box(128)
    assert auto_marginal_share(wide, 4688, 1.0, 6, "auto") == 0.3  # gas_drift: tau 0.55
    assert auto_marginal_share(wide, 100_000, 1.0, 6, "auto") == 0.55  # tau 0.026
    mixed = EncodedDomain(p=7, numeric=(0, 1), blocks=((2, 4), (4, 7)))
    assert auto_marginal_share(mixed, 30_000, 1.0, 2, "auto") == 0.55
    assert auto_marginal_share(wide, 4688, float("inf"), 6, "auto") == 0.55
    assert auto_marginal_share(wide, 4688, 1.0, 6, 0.7) == 0.7


def test_a_chunk_whose_values_are_all_missing_is_checked_without_a_numpy_warning():
    """A table whose only numeric column declares missing: allowed and is missing in every record (or a
    chunk of it) printed numpy's "RuntimeWarning: All-NaN slice encountered" and its source line on the
    console of a release that succeeded: the range check took nanmin of a chunk with no value."""
    import warnings

    from privrelease.mechanisms.gauss_mixture.copula_measure import check_encoded

    X = np.full((3, 1), np.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(check_encoded(X, 1, (), (0,))).all()
