"""gauss-copula's stages: only the measurement module reads records or draws noise; the plan's budget
object states every share and is what the certificate prints."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import math

import numpy as np
import pytest
from test_pairs import CAT, categorical_table

from privrelease.mechanisms.gauss_mixture import (
    copula_estimate,
    copula_measure,
    copula_plan,
    copula_sample,
    gauss_copula,
)
from privrelease.mechanisms.gauss_mixture.gauss_copula import GaussCopula

#: What reads records or draws noise: a pass over the data, the Gaussian and exponential mechanisms.
NOISE_OR_DATA = {"_gaussian", "add_gaussian", "exponential_mechanism", "run", "fit_executor", "count_cells",
                 "count_pairs"}
#: What only the budget's side may know: the privacy parameters and their calibration.
BUDGET = {"calibrate_rho", "epsilon_for", "zcdp_noise_multiplier", "epsilon", "delta", "rho_"}


def _names(module) -> set:
    """Every name and attribute a module's code uses (not its docstrings)."""
    tree = ast.parse(inspect.getsource(module))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.alias):
            out.add(node.name.split(".")[-1])
    return out


@pytest.mark.parametrize("module", [copula_plan, copula_estimate, copula_sample], ids=lambda m: m.__name__)
def test_only_the_measurement_reads_records_or_draws_noise(module):
    assert not _names(module) & NOISE_OR_DATA
    assert _names(copula_measure) & NOISE_OR_DATA  # the test can see them where they are


@pytest.mark.parametrize("module", [copula_estimate, copula_sample], ids=lambda m: m.__name__)
def test_estimation_and_sampling_never_see_the_budget(module):
    assert not _names(module) & BUDGET


def test_the_mechanism_draws_noise_only_through_the_measurement():
    assert not _names(gauss_copula) & {"_gaussian", "add_gaussian", "exponential_mechanism"}


def test_the_budget_states_every_share_and_is_what_the_certificate_prints():
    X, y = categorical_table()
    m = GaussCopula(1.0, 1e-6, domain=CAT, n_classes=2, rng=0).fit(X, y)
    b = m.budget_
    assert m.model_plan_ is not None and b.pair_rounds == m.model_plan_.rounds > 0 and not b.mixture
    assert b.rho_split() == m.rho_split_ and b.rho == m.rho_
    parts = b.rho_marginals + b.rho_pairs_measure + b.rho_pairs_select
    assert parts == pytest.approx(b.rho, rel=1e-5) and parts <= b.rho
    assert b.rho_pairs_select == pytest.approx(b.pair_share * b.select_fraction * b.rho)
    assert b.marginals_l2 == m.sensitivities_["marginals_l2"] == math.sqrt(2 * b.histograms)
    assert m.noise_scales_["marginals_std"] == pytest.approx(b.marginals_l2 * b.marginals_noise_multiplier)
    assert m.noise_scales_["model_std"] == pytest.approx(math.sqrt(2) * b.pairs_noise_multiplier)
    assert m.noise_scales_["model_select_epsilon"] == pytest.approx(b.pairs_select_epsilon)
    assert m.certificate_extra()["budget"] == b.as_dict()
    with pytest.raises(dataclasses.FrozenInstanceError):
        b.rho = 2 * b.rho


def test_the_mixture_budget_splits_the_total_between_the_histograms_and_the_mixture():
    X, y = categorical_table()
    m = GaussCopula(1.0, 1e-6, domain=CAT, n_classes=2, rng=0, dependence="mixture").fit(X, y)
    b = m.budget_
    assert not b.pairs and b.rho_split() == m.rho_split_ and set(b.rho_split()) == {"marginals", "mixture"}
    assert b.rho_marginals + b.rho_mixture == pytest.approx(b.rho)
    assert m.mixture_.rho_ <= b.rho_mixture * (1 + 1e-9) and m.mixture_.epsilon == b.epsilon_mixture
    assert "pairs_l2" not in b.as_dict() and m.certificate_extra()["budget"] == b.as_dict()


def test_every_finer_tree_level_reaches_the_estimation_as_a_measurement(monkeypatch):
    """Each round of the numeric trees' finer levels crosses to the estimation as a typed
    :class:`Measurement` naming its nodes (column, group, node), with its noise std: the estimation
    places the noisy counts by the query, not by a mask it kept."""
    import numpy as np

    from privrelease.mechanisms.gauss_mixture import gauss_copula as gc
    from privrelease.schema.encoding import EncodedDomain

    seen, inner = [], gc.level_measurer

    def spy(mech, *args):
        measure = inner(mech, *args)

        def wrapped(level, masks):
            out = measure(level, masks)
            seen.append((mech, level, masks, out))
            return out
        return wrapped

    monkeypatch.setattr(gc, "level_measurer", spy)
    g = np.random.default_rng(0)
    X = np.column_stack([np.round(g.gamma(2.0, 10.0, 3000).clip(0, 90)) / 90, g.random(3000)])
    m = GaussCopula(4.0, domain=EncodedDomain(p=2, numeric=(0, 1), blocks=()), rng=0,
                    grids=((0.0, 90.0, 1.0), (0.0, 1.0, 0.0))).fit(X)
    assert seen and any(out is not None for *_, out in seen)
    for mech, level, masks, out in seen:
        if out is None:
            continue
        assert isinstance(out, copula_measure.Measurement)
        name, lev, nodes = out.query
        assert (name, lev) == ("tree_level", level) and nodes.shape == (out.noisy.size, 3)
        assert out.noise_std == mech.noise_scales_[f"tree_level{level}_std"]
        for j, mask in masks.items():
            mine = nodes[nodes[:, 0] == j]
            assert np.array_equal(mine[:, 1:], np.argwhere(mask))
    assert [ids.tolist() for ids in m.measured_nodes_] == [out.query[2].tolist() for *_, out in seen if out is not None]


def test_histogram_weights_follow_the_cube_root_of_the_cells_and_keep_the_sensitivity():
    w = copula_plan.histogram_weights([12, 2, 16, 54, 3], [False, True, True, True, False])
    assert w[0] == w[4] == 1.0  # a tree's coarsest level and the label's own histogram
    assert sum(x * x for x in w[1:4]) == pytest.approx(3.0)
    assert w[3] / w[1] == pytest.approx(27 ** (1 / 3)) and w[2] / w[1] == pytest.approx(2.0)
    assert copula_plan.histogram_weights([6, 6, 6], [True] * 3) == (1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="squares sum"):
        copula_measure.check_weights(np.array([1.0, 2.0]), 2)


def test_each_histogram_carries_the_release_std_over_its_weight():
    """Round 1 on a 2-level and a 16-level column (weights 2 ** (-1 / 2) and 2 ** (1 / 2)): over 3,000 releases each
    histogram's noise std is the release's std over its weight (not the same std for both)."""
    from privrelease.noise import make_source

    weights = copula_plan.histogram_weights([2, 16], [True, True])
    counts = [np.array([[600.0, 400.0]]), np.full((1, 16), 62.5)]
    noise = [[], []]
    for seed in range(3000):
        m = GaussCopula(1.0, 1e-6, rng=seed)
        m.cells_, m.source_ = [], make_source(seed)
        got = copula_measure.measure_top_levels(m, counts, 1000, 2, 1.0, weights)
        for j in range(2):
            noise[j].extend((got.noisy[j] - counts[j]).ravel())
    sigma = m.noise_scales_["marginals_std"]
    assert got.noise_std == pytest.approx((sigma / weights[0], sigma / weights[1]))
    for j in range(2):
        assert np.std(noise[j]) == pytest.approx(sigma / weights[j], rel=0.05)


def test_the_graphical_model_takes_histograms_per_class_only_for_a_label_of_few_classes():
    """Public plan: with the graphical model a label of more than MODEL_MAX_CLASSES classes gets one group (each
    class's histograms would carry their own noise; the model's rounds measure the label's pairs); the mixture, or a
    label of 2 or 3 classes, per class as before; ``by_label=True`` still forces it."""
    from privrelease.mechanisms.gauss_mixture import copula_defaults as D
    from privrelease.mechanisms.gauss_mixture.copula_plan import plan_cells

    def groups(classes, max_classes, by_label="auto"):
        return plan_cells(100_000, classes, 5, [2, 2], 0.5, by_label, 3.0, True, max_classes)[0]

    assert D.MODEL_MAX_CLASSES == 3
    assert [groups(c, D.MODEL_MAX_CLASSES) for c in (2, 3, 4, 7)] == [2, 3, 1, 1]
    assert [groups(c, None) for c in (2, 4, 7)] == [2, 4, 7]
    assert groups(7, D.MODEL_MAX_CLASSES, by_label=True) == 7


def test_a_release_with_a_label_of_five_classes_counts_one_group():
    """End to end: the default on a table whose 5-class label would fill per-class histograms by size alone
    (n / C = 4,000 records) plans one group, and still releases every class."""
    import pandas as pd

    from privrelease.schema import Schema
    from privrelease.synthesizer import Synthesizer

    g = np.random.default_rng(3)
    n = 20_000
    y = g.choice(list("abcde"), n, p=[0.6, 0.2, 0.1, 0.07, 0.03])
    df = pd.DataFrame({"x": np.round(g.gamma(2.0, 10.0, n) + (y == "a") * 5, 1), "c": g.choice(["u", "v"], n), "y": y})
    schema = Schema.from_dict({"columns": {
        "x": {"type": "numeric", "lower": 0, "upper": 200, "step": 0.1},
        "c": {"type": "categorical", "categories": ["u", "v"]},
        "y": {"type": "categorical", "categories": list("abcde"), "role": "label"}}})
    syn = Synthesizer(schema, epsilon=1.0, delta=1e-6, rng=0).fit(df)
    assert syn.mechanism_.model_ is not None and syn.mechanism_.groups_ == 1
    assert set(syn.released_["y"]) == set("abcde")


def test_a_class_the_data_leave_empty_gets_no_records():
    """End to end: a label whose declared levels hold an empty one (a draft's ``(other)``) is measured per class
    (three classes), and the empty class, whose DP size only its noise gives, is released with no records, where
    before it got a few dozen whose every column came from its own noise histograms."""
    import pandas as pd

    from privrelease.schema import Schema
    from privrelease.synthesizer import Synthesizer

    g = np.random.default_rng(4)
    n = 6000
    y = g.choice(["f", "m"], n)
    df = pd.DataFrame({"age": np.clip(np.rint(g.normal(44, 17, n)), 16, 94), "x": np.round(g.gamma(2.0, 8.0, n), 2),
                       "y": y})
    schema = Schema.from_dict({"columns": {
        "age": {"type": "numeric", "lower": 4, "upper": 1024, "integer": True},
        "x": {"type": "numeric", "lower": 0, "upper": 256, "step": 0.01},
        "y": {"type": "categorical", "categories": ["f", "m", "(other)"], "role": "label", "other": "(other)"}}})
    for seed in (4, 5):  # seeds whose noise gave the empty class 5 and 67 records' worth (18 and 39 rows)
        syn = Synthesizer(schema, epsilon=1.0, rng=seed).fit(df)
        assert syn.mechanism_.groups_ == 3 and syn.mechanism_.class_sizes_[2] == 0
        assert not (syn.released_["y"] == "(other)").any()
        assert set(syn.released_["y"]) == {"f", "m"}


def test_class_sizes_drop_a_class_below_its_noise_and_keep_the_public_total():
    from privrelease.mechanisms.gauss_mixture.copula_estimate import class_sizes

    sizes = class_sizes(np.array([3100.0, 2850.0, 30.0]), 6000.0, 20.0)
    assert sizes[2] == 0 and sizes.sum() == pytest.approx(6000.0)
    assert class_sizes(np.array([3100.0, 2850.0, 50.0]), 6000.0, 20.0)[2] > 0
    assert class_sizes(np.array([3100.0, 2850.0, 3.0]), 6000.0, 0.0)[2] > 0  # noiseless: every class kept
