"""What the estimators accept when used directly (not through the release pipeline): every fact their
calibration rests on is declared or checked, never read from the private data."""

from __future__ import annotations

import numpy as np
import pytest

from privrelease.audit import TranscriptSource
from privrelease.engine.stats import SufficientStats
from privrelease.errors import InputDataError, ParameterError
from privrelease.mechanisms.gauss_mixture.gauss_copula import GaussCopula
from privrelease.mechanisms.gauss_mixture.gauss_pca import GaussPCA


def test_labelled_data_without_a_declared_class_count_is_refused():
    """The number of classes is a public fact (the schema's levels); read from the labels (highest code + 1),
    one relabelled record would change it and the released class weights. Refused in one line, no noise drawn."""
    X = np.random.default_rng(0).random((200, 3))
    y = np.r_[np.zeros(199, int), 4]
    for cls in (GaussCopula, GaussPCA):
        src = TranscriptSource(0)
        with pytest.raises(ParameterError, match="needs n_classes") as err:
            cls(1.0, rng=src).fit(X, y)
        assert "\n" not in str(err.value) and src.draws == []
    stats = SufficientStats.from_matrix(X, y, 5)
    with pytest.raises(ParameterError, match="needs n_classes"):
        GaussPCA(1.0, rng=0).fit_stats(stats)
    with pytest.raises(InputDataError, match="outside the declared 3 classes"):
        GaussPCA(1.0, n_classes=3, rng=0).fit_stats(stats)
    assert GaussPCA(1.0, n_classes=5, rng=0).fit(X, y).n_classes_ == 5


def test_budget_goes_only_to_statistics_that_run():
    """With as many components as encoded columns the residual variance is never released, and with one
    class the within-class pass never runs: their shares go to the released statistics, so the split
    the certificate shows is the one spent."""
    X = np.random.default_rng(1).random((300, 3))
    m = GaussPCA(1.0, n_components=3, rng=0).fit(X)
    assert "residual" not in m.rho_split_ and m.residual_variance_ == 0.0
    assert sum(m.rho_split_.values()) == pytest.approx(m.rho_)
    spent = {k[:-4] for k in m.noise_scales_ if k.endswith("_std")}
    assert spent == set(m.rho_split_), (spent, m.rho_split_)
    one = GaussPCA(1.0, n_components=2, n_classes=1, rng=0).fit(X, np.zeros(300, int))
    assert {k[:-4] for k in one.noise_scales_ if k.endswith("_std")} == set(one.rho_split_) == \
        {"centre", "radius", "basis", "counts", "sums", "moments", "residual"}
    c = GaussCopula(1.0, n_components=3, coarse_cells=0, dependence="mixture", rng=0).fit(X)  # no node blocks
    assert "rho_mixture_residual" not in c.budget_split_
    assert sum(c.budget_split_.values()) == pytest.approx(c.rho_)
    assert GaussPCA(1.0, n_components=2, rng=0).fit(X).rho_split_["residual"] > 0  # P < p: it runs


def _multi_hot_pair():
    """One numeric column and one categorical block of three levels; the neighbour's record is multi-hot."""
    from privrelease.schema.encoding import EncodedDomain

    dom = EncodedDomain(p=4, numeric=(0,), blocks=((1, 4),))
    X = np.zeros((100, 4))
    X[:, 0], X[:, 1] = 0.5, 1.0
    bad = X.copy()
    bad[0] = [1.0, 0.0, 1.0, 1.0]  # moves the centre's sum by sqrt(0.25 + 3) = 1.80 > sqrt(1 + 2) = 1.73
    return dom, X, bad


@pytest.mark.parametrize("how", ["fit", "fit_passes"])
@pytest.mark.parametrize("cls", [GaussPCA, GaussCopula])
def test_multi_hot_rows_are_refused_by_the_estimators(cls, how):
    """The calibrated sensitivities assume one-hot blocks; the estimators check them themselves, in memory
    and in every streamed chunk (not only the release pipeline's encoder), before any noise is drawn."""
    dom, X, bad = _multi_hot_pair()
    src = TranscriptSource(0)
    m = cls(1.0, domain=dom, rng=src)
    with pytest.raises(InputDataError, match="not one-hot in the categorical block of columns 1..3") as err:
        m.fit(bad) if how == "fit" else m.fit_passes(lambda: iter([(X[50:], None), (bad[:50], None)]))
    assert "\n" not in str(err.value) and src.draws == []
    assert cls(1.0, domain=dom, rng=0).fit(X).privacy_cost_.epsilon == 1.0


def test_every_mechanism_checks_one_hot_blocks():
    from privrelease.mechanisms.base import check_one_hot

    check_one_hot(np.array([[0.3, 1.0, 0.0], [0.2, 0.0, 1.0]]), ((1, 3),))
    for row in ([0.3, 1.0, 1.0], [0.3, 0.0, 0.0]):
        with pytest.raises(InputDataError, match="not one-hot"):
            check_one_hot(np.array([row]), ((1, 3),))
    from privrelease.mechanisms.baselines.laplace import LaplaceIdentity

    dom, X, bad = _multi_hot_pair()
    with pytest.raises(InputDataError, match="not one-hot"):
        LaplaceIdentity(1.0, domain=dom, rng=0).fit(bad)
