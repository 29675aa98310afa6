"""JUPA projections and the MMD fine-grained perturbation (Zhuang and Chang)."""

import numpy as np
import pytest

from privrelease.errors import InputDataError, ParameterError
from privrelease.mechanisms import get_mechanism
from privrelease.mechanisms.projections.jupa import DCA, JUPA, MDR, PROJECTIONS, RUCA, PCAProjection, make_projection, scatter_matrices
from privrelease.mechanisms.projections.mmd import MMDPerturbation


def _data(n=600, seed=0, m=8):
    rng = np.random.default_rng(seed)
    yu = rng.integers(0, 3, n)
    yp = rng.integers(0, 2, n)
    X = rng.normal(size=(n, m))
    X[:, 0] += 2.0 * yu
    X[:, 1] += 1.5 * yp
    X[:, 2] += 0.7 * yu + 0.7 * yp
    return X, yu, yp


def _principal_cosines(A, B):
    Qa, _ = np.linalg.qr(A)
    Qb, _ = np.linalg.qr(B)
    return np.linalg.svd(Qa.T @ Qb, compute_uv=False)


def test_scatter_matrices_match_loops():
    X, yu, _ = _data(120)
    SW, SB = scatter_matrices(X, yu)
    mu = X.mean(0)
    SW_ref = np.zeros((X.shape[1],) * 2)
    SB_ref = np.zeros_like(SW_ref)
    for c in np.unique(yu):
        Xc = X[yu == c]
        mc = Xc.mean(0)
        SW_ref += (Xc - mc).T @ (Xc - mc)
        SB_ref += len(Xc) * np.outer(mc - mu, mc - mu)
    np.testing.assert_allclose(SW, SW_ref, atol=1e-9)
    np.testing.assert_allclose(SB, SB_ref, atol=1e-9)


def test_jupa_reduces_to_dca_when_privacy_terms_vanish():
    X, yu, yp = _data()
    j = JUPA(rho1=0.0, rho1_prime=0.0, rho0=1e-8).fit(X, yu, yp)
    d = DCA(rho=1e-8).fit(X, yu, yp)
    np.testing.assert_allclose(_principal_cosines(j.components_, d.components_), 1.0, atol=1e-6)
    # with large privacy weights the subspace moves away from DCA's
    j2 = JUPA(rho1=1e4, rho1_prime=1e4).fit(X, yu, yp)
    assert _principal_cosines(j2.components_, d.components_).min() < 0.99


def test_ruca_is_jupa_without_rho1_prime_and_mdr_pencil():
    X, yu, yp = _data()
    r = RUCA(rho1=10.0).fit(X, yu, yp)
    j = JUPA(rho1=10.0, rho1_prime=0.0).fit(X, yu, yp)
    np.testing.assert_allclose(_principal_cosines(r.components_, j.components_), 1.0, atol=1e-8)
    m = MDR(rho=1e-3).fit(X, yu, yp)
    SWp, SBp = scatter_matrices(X, yp)
    SWu, SBu = scatter_matrices(X, yu)
    w = m.components_[:, 0]
    lhs = SBu @ w
    rhs = m.eigenvalues_[0] * (SBp + 1e-3 * np.eye(X.shape[1])) @ w
    np.testing.assert_allclose(lhs, rhs, rtol=1e-6, atol=1e-6 * np.abs(lhs).max())


def test_jupa_privacy_weights_reduce_privacy_separation():
    X, yu, yp = _data(2000)
    SWp, SBp = scatter_matrices(X, yp)

    def privacy_ratio(W):
        return np.trace(W.T @ SBp @ W) / np.trace(W.T @ (SWp + SBp) @ W)

    d = DCA().fit(X, yu, yp)
    j = JUPA(rho1=1e4, rho1_prime=1.0).fit(X, yu, yp)
    assert privacy_ratio(j.components_) < privacy_ratio(d.components_)


def test_several_privacy_targets_sum_scatter_terms():
    X, yu, yp = _data()
    yp2 = (X[:, 3] > 0).astype(int)
    j = JUPA(rho1=[1.0, 0.0], rho1_prime=[1.0, 0.0]).fit(X, yu, np.column_stack([yp, yp2]))
    j1 = JUPA(rho1=1.0, rho1_prime=1.0).fit(X, yu, yp)
    np.testing.assert_allclose(_principal_cosines(j.components_, j1.components_), 1.0, atol=1e-8)
    with pytest.raises(ParameterError):
        JUPA(rho1=[1.0, 2.0, 3.0]).fit(X, yu, np.column_stack([yp, yp2]))


def test_default_k_and_all_projections_fit():
    X, yu, yp = _data()
    for name in PROJECTIONS:
        p = make_projection(name).fit(X, yu, yp)
        k = X.shape[1] if name in ("full-dimensional", "identity") else 2
        assert p.transform(X).shape == (X.shape[0], k)
    assert PCAProjection(n_components=3).fit(X).components_.shape == (8, 3)
    with pytest.raises(ParameterError):
        make_projection("nope")
    with pytest.raises(ParameterError):
        make_projection("dca", rho1=3)
    with pytest.raises(InputDataError):
        JUPA().fit(X, yu, None)


def _two_clusters(seed=0):
    rng = np.random.default_rng(seed)
    A = rng.normal([0.0, 0.0], 0.5, size=(100, 2))
    B = rng.normal([4.0, 0.0], 0.5, size=(100, 2))
    return np.vstack([A, B]), np.repeat([0, 1], 100)


@pytest.mark.parametrize("update", ["literal", "gradient"])
def test_mmd_step_flips_label_on_constructed_example(update):
    Z, y = _two_clusters()
    m = MMDPerturbation(sigma=1.0, update=update, rng=0).fit(Z, y)
    x = np.array([[1.0, 0.0], [1.2, 0.3]])
    assert m.label(x).tolist() == [0, 0]
    out, info = m.perturb(x, targets=[1, 1])
    assert info["flipped"].all()
    assert m.label(out).tolist() == [1, 1]
    assert np.all(out[:, 0] > x[:, 0] + 0.5)  # moved towards the target cluster at x = 4
    assert np.all(out[:, 0] < 4.0)  # ... stopping once the label flips, not inside the target
    # a record whose label already equals its target is released unchanged
    same, info2 = m.perturb(x, targets=[0, 0])
    np.testing.assert_array_equal(same, x)
    assert (info2["iterations"] == 0).all()


def test_mmd_iteration_cap_and_random_targets():
    Z, y = _two_clusters()
    m = MMDPerturbation(sigma=1.0, alpha=1e-9, max_iter=3, rng=0).fit(Z, y)
    out, info = m.perturb(np.zeros((5, 2)), targets=[1] * 5)
    assert (info["iterations"] == 3).all() and not info["flipped"].any()
    m2 = MMDPerturbation(rng=1).fit(Z, y)
    _, info = m2.perturb(Z)
    assert 0.35 < np.mean(info["target"] == 1) < 0.65
    assert info["flipped"].mean() > 0.6


def test_literal_reading_can_run_away_while_gradient_reading_converges():
    """Read literally (theta persists, z <- z + theta) the walk has momentum and no friction but
    lambda: a record at the centre of its own cluster is pushed out and never reaches the target."""
    Z, y = _two_clusters()
    x = np.zeros((1, 2))
    lit, info_l = MMDPerturbation(sigma=1.0, update="literal", max_iter=300, rng=0).fit(Z, y).perturb(x, [1])
    grd, info_g = MMDPerturbation(sigma=1.0, update="gradient", max_iter=300, rng=0).fit(Z, y).perturb(x, [1])
    assert info_g["flipped"].all() and np.linalg.norm(grd) < 4
    assert not info_l["flipped"].any() and np.linalg.norm(lit) > 10


def test_mmd_sigma_chosen_by_cross_validation_and_bad_params():
    Z, y = _two_clusters()
    m = MMDPerturbation(rng=0).fit(Z, y)
    assert m.sigma_ in m.sigma_scores_ and max(m.sigma_scores_.values()) > 0.95
    with pytest.raises(ParameterError):
        MMDPerturbation(update="nope").fit(Z, y)
    with pytest.raises(ParameterError):
        MMDPerturbation(max_iter=0).fit(Z, y)


def test_registered_owner_side_mechanism():
    cls = get_mechanism("jupa-mmd")
    assert cls.guarantee == "none (empirical)"
    X, yu, yp = _data()
    mech = cls(public_X=X[:400], public_utility=yu[:400], public_privacy=yp[:400], rng=0).fit()
    out = mech.transform(X[400:])
    assert out.shape == (200, 2)
    assert mech.private_diagnostics()["flipped_fraction"] > 0.5 and "flipped_fraction" not in mech.certificate_extra()
    with pytest.raises(InputDataError):
        cls().fit()


def test_majority_share_detects_a_constant_attacker():
    """A constant attacker scores exactly chance on balanced cells; the diagnostic shows it as 1.0."""
    from privrelease.audit.inference_attack import _majority_share

    assert _majority_share(np.array(["m"] * 10)) == 1.0
    assert _majority_share(np.array([0, 1, 0, 1])) == 0.5
    assert _majority_share(np.array([2, 2, 2, 1])) == 0.75
