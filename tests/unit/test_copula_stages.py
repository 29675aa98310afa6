"""gauss-copula's stages: only the measurement module reads records or draws noise; the plan's budget
object states every share and is what the certificate prints."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import math

import pytest

from privrelease.mechanisms.gauss_mixture import (copula_estimate, copula_measure, copula_plan, copula_sample,
                                                  gauss_copula)
from privrelease.mechanisms.gauss_mixture.gauss_copula import GaussCopula
from test_pairs import CAT, categorical_table

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
