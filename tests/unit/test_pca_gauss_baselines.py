"""Unit tests of the PCA-Gauss baselines and of the utility metrics."""

from __future__ import annotations

import math

import numpy as np
import pytest

from privrelease.errors import ParameterError
from privrelease.evaluation.utility import kmeans_silhouette, krr_rmse, svm_accuracy, tstr
from privrelease.mechanisms import get_mechanism
from privrelease.mechanisms import baselines as B
from privrelease.noise import make_source
from privrelease.schema.encoding import EncodedDomain


def _data(n=600, p=6, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    X = np.clip(0.5 + 0.1 * rng.standard_normal((n, p)) + 0.15 * (2 * y[:, None] - 1), 0, 1)
    return X, y


def test_registered_with_guarantees():
    for name in ("compressive", "jiang-public", "modips", "blocki-jl", "blr"):
        cls = get_mechanism(name)
        assert cls.guarantee == ("(epsilon,delta)-DP" if name == "blocki-jl" else "epsilon-DP")


def test_eps_inf_row_aligned_is_exact_projection():
    X, _ = _data()
    m = B.Compressive(math.inf, n_components=3, output_space="reduced", rng=0).fit(X)
    assert np.allclose(m.transform(X), (X - 0.5) @ m.components_.T)
    assert set(np.unique(np.abs(m.components_) * math.sqrt(3)).round(12)) == {1.0}
    V = np.linalg.qr(np.random.default_rng(1).standard_normal((6, 2)))[0].T
    j = B.JiangPublic(math.inf, n_components=2, public_components=V, rng=0).fit(X)
    back = j.transform(X)
    assert np.allclose(back, (X - 0.5) @ V.T @ V + 0.5)


def test_eps_inf_modips_is_exact_class_gaussians():
    X, y = _data()
    m = B.MODIPS(math.inf, rng=0).fit(X, y)
    for c in (0, 1):
        assert np.allclose(m.means_[c] + 0.5, X[y == c].mean(0))
        assert np.allclose(m.covariances_[c], np.cov(X[y == c].T, bias=True), atol=1e-10)
    Xs, ys = m.sample(100)
    assert Xs.shape == (100, 6) and set(ys) <= {0, 1}


def test_modips_samples_a_table_of_one_column():
    """Its posterior draw of a 1 x 1 covariance comes back from scipy as a scalar (a one-column table crashed)."""
    X, _ = _data(p=1)
    Xs, ys = B.MODIPS(1.0, rng=0).fit(X).sample(50)
    assert Xs.shape == (50, 1) and ys is None


def test_blr_eps_inf_selects_best_and_sensitivity():
    X, y = _data(n=200)
    m = B.BLR(math.inf, n_candidates=20, candidate_size=50, n_queries=30, rng=0).fit(X, y)
    assert m.selected_ == int(np.argmax(m.scores_))
    # one replaced record moves every candidate's utility by at most 1/n
    X1 = X.copy()
    X1[0] = 1 - X1[0]
    m1 = B.BLR(math.inf, n_candidates=20, candidate_size=50, n_queries=30, rng=0).fit(X1, y)
    assert np.max(np.abs(m.scores_ - m1.scores_)) <= B.blr_utility_sensitivity(200) + 1e-12


def test_blocki_labelled_constant_and_shapes():
    X, y = _data()
    m = B.BlockiJL(1.0, delta=1e-5, n_projections=100, rng=0).fit(X, y)
    assert m.w_ == pytest.approx(B.blocki_w(100, 0.95, 1e-5))
    assert "not re-verified" in m.certificate_extra()["w_constant"]
    assert m.sample(20)[0].shape == (20, 6)
    with pytest.raises(ParameterError):
        B.BlockiJL(math.inf, rng=0).fit(X)


def test_sensitivity_formulas():
    dom = EncodedDomain.numeric_box(4)
    assert B.compressive_sensitivity(dom, 9) == 3 * 4
    assert B.projection_l1_sensitivity(dom, 4) == pytest.approx(4.0)
    s = B.modips_sensitivities(dom, class_change=False)
    assert s["second_moments_upper_l1"] == pytest.approx(4 * 5 / 8)


def test_randomized_response_rate():
    y = np.zeros(20000, dtype=int)
    out = B.randomized_response(y, 3, 1.0, make_source(0))
    keep = math.e / (math.e + 2)
    assert abs(np.mean(out == 0) - keep) < 0.02 and set(np.unique(out)) == {0, 1, 2}


def test_utility_metrics():
    X, y = _data()
    assert svm_accuracy(X, y, X, y) > 0.9
    assert krr_rmse(X, X[:, 0], X, X[:, 0]) < 0.1
    r = tstr(X, y, X, y)
    assert r["accuracy"] > 0.9 and r["auc"] > 0.9
    assert kmeans_silhouette(X, 2, sample_size=300) > 0.1


def test_krr_uninformative_features_score_the_target_sd():
    """Training features far from the test data: the centred KRR falls back to the mean predictor."""
    rng = np.random.default_rng(0)
    t = 0.6 + 0.1 * rng.standard_normal(400)
    Xtr, Xte = 100 + rng.standard_normal((400, 3)), rng.standard_normal((400, 3))
    assert abs(krr_rmse(Xtr, t, Xte, t) - t.std()) < 0.01
    assert krr_rmse(Xtr, t, Xte, t, center_target=False) > 0.5  # predicting 0
