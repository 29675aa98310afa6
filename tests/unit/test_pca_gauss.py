"""Unit tests of the PCA-Gauss family: sensitivities by exhaustive search, epsilon=inf, streaming, errors."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from privrelease.engine import SufficientStats
from privrelease.errors import InputDataError, ParameterError
from privrelease.linalg import haar_orthonormal, upper
from privrelease.mechanisms import get_mechanism
from privrelease.mechanisms.pca_gauss.basis import analyze_gauss_l2_sensitivity, lap_pca_sensitivity, load_public_components
from privrelease.mechanisms.pca_gauss.gmm import PCAGMM
from privrelease.mechanisms.pca_gauss.unsupervised import PCAGauss
from privrelease.mechanisms.pca_gauss.supervised import PCAGaussSupervised
from privrelease.mechanisms.pca_gauss.common import moment_sensitivities, residual_sensitivity, spectrum_sensitivity

GRID = (0.0, 0.5, 1.0)


def _grid(M):
    return np.array(list(itertools.product(GRID, repeat=M)))


def _data(n=1500, p=8, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    X = np.clip(0.5 + 0.08 * rng.standard_normal((n, p)) + 0.1 * y[:, None] * np.linspace(-1, 1, p), 0, 1)
    return X, y


# ---- sensitivities: exhaustive search over grid neighbours (ALGORITHMS.md sec. 8) ----------------

@pytest.mark.parametrize("M,P", [(2, 1), (3, 1), (3, 2), (4, 2), (4, 3)])
def test_moment_sensitivities_hold_on_grid(M, P):
    V = haar_orthonormal(P, M, np.random.default_rng(M * 10 + P))
    G = _grid(M)
    Z = (G - 0.5) @ V.T
    R = math.sqrt(M) / 2
    same = moment_sensitivities(P, R, class_change=False)
    moved = moment_sensitivities(P, R, class_change=True)
    U = np.array([upper(np.outer(z, z)) for z in Z])
    d_sum = np.abs(Z[:, None, :] - Z[None, :, :]).sum(-1).max()
    d_s2_same = np.abs(U[:, None, :] - U[None, :, :]).sum(-1).max()
    d_s2_move = (np.abs(U).sum(-1)[:, None] + np.abs(U).sum(-1)[None, :]).max()
    d_sum_move = (np.abs(Z).sum(-1)[:, None] + np.abs(Z).sum(-1)[None, :]).max()
    assert d_sum <= same["sums_l1"] + 1e-12 and d_sum_move <= moved["sums_l1"] + 1e-12
    assert d_s2_same <= same["second_moments_upper_l1"] + 1e-12
    assert d_s2_move <= moved["second_moments_upper_l1"] + 1e-12


@pytest.mark.parametrize("M,P", [(2, 1), (3, 2)])
def test_target_moment_sensitivity_holds_on_grid(M, P):
    V = haar_orthonormal(P, M, np.random.default_rng(7))
    G = _grid(M + 1)
    W = np.column_stack([(G[:, :M] - 0.5) @ V.T, G[:, M] - 0.5])
    s = moment_sensitivities(P, math.sqrt(M) / 2, target=True, class_change=False)
    U = np.array([upper(np.outer(w, w)) for w in W])
    assert np.abs(W[:, None] - W[None]).sum(-1).max() <= s["sums_l1"] + 1e-12
    assert np.abs(U[:, None] - U[None]).sum(-1).max() <= s["second_moments_upper_l1"] + 1e-12


def test_paper_gmm_box_constant_is_not_the_bound_we_use():
    # with the paper's normalised box the second-moment constant grows as P^2; ours as P
    assert moment_sensitivities(10, 1.0)["second_moments_upper_l1"] < 10 ** 2


@pytest.mark.parametrize("M", [2, 3, 4])
def test_lap_pca_sensitivity_on_grid_and_tight(M):
    G = _grid(M) - 0.5
    U = np.array([upper(np.outer(u, u)) for u in G])
    worst = np.abs(U[:, None] - U[None]).sum(-1).max()
    assert worst <= lap_pca_sensitivity(M) + 1e-12
    assert worst == pytest.approx(lap_pca_sensitivity(M))  # tight: u = 1/2 replaced by 0


def test_spectrum_sensitivity_random_neighbours():
    rng = np.random.default_rng(0)
    M, P, n = 4, 3, 12
    worst = 0.0
    for _ in range(400):
        X = rng.choice(GRID, size=(n, M))
        X1 = X.copy()
        X1[0] = rng.choice(GRID, size=M)
        for emp in (False, True):
            def spec(A):
                st = SufficientStats.from_matrix(A)
                S = st.covariance * n if emp else (A - 0.5).T @ (A - 0.5)
                return np.sort(np.linalg.eigvalsh(S))[::-1][:P]
            d = np.abs(spec(X) - spec(X1)).sum()
            assert d <= spectrum_sensitivity(P, M, emp, n) + 1e-9
            worst = max(worst, d)
    assert worst > 0


def test_residual_sensitivity():
    M = 3
    V = haar_orthonormal(1, M, np.random.default_rng(1))
    U = _grid(M) - 0.5
    r = (U ** 2).sum(1) - ((U @ V.T) ** 2).sum(1)
    assert r.min() >= -1e-12 and r.max() <= residual_sensitivity(M) + 1e-12


def test_analyze_gauss_constants():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((2000, 2, 5))
    w /= np.linalg.norm(w, axis=-1, keepdims=True)
    d = [np.linalg.norm(upper(np.outer(a, a) - np.outer(b, b))) for a, b in w]
    assert max(d) <= analyze_gauss_l2_sensitivity() + 1e-12


# ---- epsilon = inf reproduces the non-private model -----------------------------------

def test_pca_gmm_eps_inf_is_exact_class_gaussians():
    X, y = _data()
    V = haar_orthonormal(3, X.shape[1], np.random.default_rng(3))
    m = PCAGMM(epsilon=math.inf, n_components=3, pca_source="public", public_components=V,
               output_space="reduced", rng=0).fit(X, y)
    Z = (X - 0.5) @ m.components_.T
    for c in range(3):
        assert np.allclose(m.means_[c], Z[y == c].mean(0))
        assert np.allclose(m.covariances_[c], np.cov(Z[y == c].T, bias=True), atol=1e-10)
    assert np.allclose(m.class_counts_, np.bincount(y))


def test_pca_gmm_eps_inf_laplace_basis_is_exact_pca():
    X, y = _data()
    m = PCAGMM(epsilon=math.inf, n_components=2, rng=0).fit(X, y)
    U = X - 0.5
    w, Vt = np.linalg.eigh(U.T @ U)
    top = Vt[:, ::-1][:, :2]
    assert np.allclose(np.abs(m.components_ @ top), np.eye(2), atol=1e-8)


def test_pca_gauss_eps_inf():
    X, _ = _data()
    m = PCAGauss(epsilon=math.inf, n_components=3, rng=0).fit(X)
    lam = np.sort(np.linalg.eigvalsh((X - 0.5).T @ (X - 0.5)))[::-1][:3] / len(X)
    assert np.allclose(m.spectrum_, lam)
    V = haar_orthonormal(3, X.shape[1], np.random.default_rng(3))
    g = PCAGauss(epsilon=math.inf, n_components=3, pca_source="public", public_components=V, rng=0).fit(X)
    Z = (X - 0.5) @ g.components_.T
    assert np.allclose(g.mean_, Z.mean(0)) and np.allclose(g.covariance_, np.cov(Z.T, bias=True), atol=1e-10)


def test_pca_gauss_supervised_eps_inf():
    X, _ = _data()
    t = X[:, 0] * 0.5 + 0.2
    V = haar_orthonormal(2, X.shape[1], np.random.default_rng(3))
    m = PCAGaussSupervised(epsilon=math.inf, n_components=2, pca_source="public", public_components=V,
                           rng=0).fit(X, t)
    W = np.column_stack([(X - 0.5) @ m.components_.T, t - 0.5])
    assert np.allclose(m.mean_, W.mean(0)) and np.allclose(m.covariance_, np.cov(W.T, bias=True), atol=1e-10)
    Xs, ts = m.sample(50)
    assert Xs.shape == (50, X.shape[1]) and ts.shape == (50,) and (0 <= ts).all() and (ts <= 1).all()


# ---- streaming and behaviour -----------------------------------------------------------

def test_fit_stats_equals_fit():
    X, y = _data()
    a = PCAGMM(epsilon=1.0, n_components=3, rng=5).fit(X, y)
    st = SufficientStats.from_matrix(X[:700], y[:700], 3).merge(SufficientStats.from_matrix(X[700:], y[700:], 3))
    b = PCAGMM(epsilon=1.0, n_components=3, n_classes=3, rng=5).fit_stats(st)
    assert np.allclose(a.means_, b.means_) and np.allclose(a.covariances_, b.covariances_)
    assert np.allclose(a.residual_var_, b.residual_var_)


def test_budget_split_sums_to_epsilon_and_cost():
    X, y = _data()
    for src, delta in (("laplace", None), ("analyze-gauss", 1e-5), ("split", None)):
        m = PCAGMM(epsilon=2.0, n_components=2, pca_source=src, delta=delta, rng=0).fit(X, y)
        assert m.privacy_cost_.epsilon == 2.0
        total = sum(v for k, v in m.budget_split_.items() if "model records" not in k)
        assert total == pytest.approx(2.0)
        assert (m.privacy_cost_.delta > 0) == (src == "analyze-gauss")
        assert m.guarantee == ("(epsilon,delta)-DP" if src == "analyze-gauss" else "epsilon-DP")


def test_sampling_shapes_labels_and_reproducibility():
    X, y = _data()
    a = PCAGMM(epsilon=1.0, n_components=3, rng=4).fit(X, y)
    b = PCAGMM(epsilon=1.0, n_components=3, rng=4).fit(X, y)
    Xa, ya = a.sample(999)
    Xb, yb = b.sample(999)
    assert Xa.shape == (999, X.shape[1]) and np.array_equal(Xa, Xb) and np.array_equal(ya, yb)
    assert set(np.unique(ya)) <= {0, 1, 2}
    r = PCAGMM(epsilon=1.0, n_components=3, output_space="reduced", rng=4).fit(X, y)
    assert r.output_columns_ == ["pc1", "pc2", "pc3"] and r.sample(10)[0].shape == (10, 3)
    assert r.get_params()["epsilon"] == 1.0 and r.get_params()["output_space"] == "reduced"


def test_covariances_are_symmetric_psd():
    X, y = _data(n=200)
    m = PCAGMM(epsilon=0.05, n_components=4, rng=0).fit(X, y)
    for S in m.covariances_:
        assert np.array_equal(S, S.T) and np.linalg.eigvalsh(S).min() > 0


def test_clip_radius_reduces_noise_and_counts_clips():
    X, y = _data()
    a = PCAGMM(epsilon=1.0, n_components=3, rng=0).fit(X, y)
    b = PCAGMM(epsilon=1.0, n_components=3, clip_radius=0.3, rng=0).fit(X, y)
    assert b.noise_scales_["second_moments"] < a.noise_scales_["second_moments"] / 10
    assert b.n_clipped_ >= 0


def test_errors():
    X, y = _data(n=100)
    with pytest.raises(ParameterError, match="delta"):
        PCAGMM(pca_source="analyze-gauss", rng=0).fit(X, y)
    with pytest.raises(ParameterError, match="reduced"):
        PCAGauss(pca_source="same-data", output_space="original", rng=0).fit(X)
    with pytest.raises(ParameterError, match="pca_source"):
        PCAGMM(pca_source="same-data", rng=0).fit(X, y)
    with pytest.raises(ParameterError, match="split"):
        PCAGMM(pca_source="split", n_classes=3, rng=0).fit_stats(SufficientStats.from_matrix(X, y, 3))
    with pytest.raises(ParameterError, match="public"):
        PCAGMM(pca_source="public", rng=0).fit(X, y)
    with pytest.raises(InputDataError):
        PCAGMM(n_classes=2, rng=0).fit(X, y)
    with pytest.raises(InputDataError):
        load_public_components(np.ones((3, 5)), 8)


def test_registered():
    for name in ("pca-gauss", "pca-gauss-supervised", "pca-gmm"):
        cls = get_mechanism(name)
        assert cls.guarantee == "epsilon-DP" and "R1" in cls.relation


def test_release_api_original_columns_and_target(tmp_path, monkeypatch):
    from privrelease.release import release
    from privrelease.release import release_file
    from privrelease.schema import Schema

    rng = np.random.default_rng(0)
    n = 600
    df = pd.DataFrame({"a": rng.uniform(0, 10, n), "b": rng.uniform(-1, 1, n), "c": rng.choice(list("xyz"), n),
                       "lab": rng.choice(["p", "q"], n), "t": rng.uniform(0, 5, n)})
    cols = {"a": {"type": "numeric", "lower": 0, "upper": 10}, "b": {"type": "numeric", "lower": -1, "upper": 1},
            "c": {"type": "categorical", "categories": ["x", "y", "z"]}}
    s_lab = Schema.from_dict({"columns": {**cols, "lab": {"type": "categorical", "categories": ["p", "q"],
                                                           "role": "label"}}})
    s_t = Schema.from_dict({"columns": {**cols, "t": {"type": "numeric", "lower": 0, "upper": 5, "role": "target"}}})
    r = release(df, s_lab, mechanism="pca-gmm", epsilon=1.0, rng=0, n_components=2)
    assert list(r.data.columns) == ["a", "b", "c", "lab"] and r.certificate.extra["n_classes"] == 2
    r = release(df, s_lab.select(["a", "b", "c"]), mechanism="pca-gauss", epsilon=1.0, rng=0, n_components=2)
    assert list(r.data.columns) == ["pc1", "pc2"]
    r = release(df, s_t, mechanism="pca-gauss-supervised", epsilon=1.0, rng=0, n_components=2)
    assert list(r.data.columns) == ["a", "b", "c", "t"] and r.data["t"].between(0, 5).all()
    path = tmp_path / "d.parquet"
    df.to_parquet(path)
    cert = release_file(path, s_lab, tmp_path / "o.csv", mechanism="pca-gmm", epsilon=1.0, rng=0, chunk_rows=100,
                        n_components=2)
    out = pd.read_csv(tmp_path / "o.csv")
    assert len(out) == n and cert.mechanism == "pca-gmm" and set(out["lab"]) <= {"p", "q"}
    # synthetic output written in chunks of chunk_rows (memory independent of n_synthetic), Parquet too
    calls, orig = [], PCAGMM.sample
    monkeypatch.setattr(PCAGMM, "sample", lambda self, k: (calls.append(k), orig(self, k))[1])
    cert = release_file(path, s_lab, tmp_path / "o.parquet", mechanism="pca-gmm", epsilon=1.0, rng=0,
                        chunk_rows=100, n_components=2, n_synthetic=1050)
    out = pd.read_parquet(tmp_path / "o.parquet")
    assert len(out) == 1050 == cert.n_output_records and list(out.columns) == ["a", "b", "c", "lab"]
    assert 0.3 < (out["lab"] == "p").mean() < 0.7 and calls == [100] * 10 + [50]


def test_public_table_in_schema_columns(tmp_path):
    """A public file in the schema's own columns drives pca_source='public' (encoded like the data)."""
    from privrelease import release
    from privrelease.datasets import load_example

    df, schema = load_example("adult")
    df = df.head(3000)
    pub = tmp_path / "public.csv"
    df.head(300).to_csv(pub, index=False)
    kw = dict(mechanism="pca-gmm", epsilon=1.0, rng=0, n_components=3, pca_source="public")
    a = release(df.iloc[300:], schema, public_data=str(pub), **kw)
    b = release(df.iloc[300:], schema, public_data=df.head(300), **kw)
    assert list(a.data.columns) == schema.names
    pd.testing.assert_frame_equal(a.data, b.data)
    assert a.certificate.budget_split and "basis" not in a.certificate.budget_split
    with pytest.raises(InputDataError):
        release(df.iloc[300:], schema, public_data=str(tmp_path / "absent.csv"), **kw)
    with pytest.raises(InputDataError):
        release(df.iloc[300:], schema, public_data=df.head(300).drop(columns=["age"]), **kw)


# ---- defect: the same-class second-moment sensitivity P R^2 was too small at P = 2 -------

def _upper_l1_change(a, b):
    return float(np.abs(upper(np.outer(a, a) - np.outer(b, b))).sum())


def _worst_upper_l1(P, R, target_bound, restarts, rng):
    """Largest ``||upper(w w^T - w' w'^T)||_1`` found by Nelder-Mead from random starts."""
    from scipy.optimize import minimize

    d = P + (1 if target_bound > 0 else 0)

    def member(x):
        z = x[:P] * min(1.0, R / max(float(np.linalg.norm(x[:P])), 1e-300))
        return np.append(z, np.clip(x[P], -target_bound, target_bound)) if target_bound > 0 else z

    best = 0.0
    for _ in range(restarts):
        res = minimize(lambda x: -_upper_l1_change(member(x[:d]), member(x[d:])), rng.standard_normal(2 * d) * R,
                       method="Nelder-Mead", options={"maxiter": 200 * (P + 1)})
        best = max(best, -res.fun)
    return best


def test_second_moment_sensitivity_orthogonal_witness_p2():
    """Defect 4 (pca-gauss P = 2): orthogonal records of norm R move upper(sum z z^T) by sqrt(5) R^2 in L1.

    The bound used before, P R^2 = 2 R^2, was below this witness; the stated
    sensitivity must cover it for pca-gauss, pca-gauss-supervised and pca-gmm.
    """
    R, s = 1.7, 0.5 * math.atan2(1.0, 2.0)  # 2 |cos 2s| + |sin 2s| is maximal (sqrt 5) at tan 2s = 1/2
    a = R * np.array([math.cos(s), math.sin(s)])
    b = R * np.array([-math.sin(s), math.cos(s)])
    witness = _upper_l1_change(a, b)
    assert witness == pytest.approx(math.sqrt(5) * R**2)
    for target in (False, True):
        for class_change in (False, True):
            sens = moment_sensitivities(2, R, target=target, class_change=class_change)["second_moments_upper_l1"]
            assert sens >= witness - 1e-12


@pytest.mark.parametrize("P", [1, 2, 3, pytest.param(4, marks=[pytest.mark.slow, pytest.mark.ci_slice]),
                               pytest.param(5, marks=pytest.mark.slow), pytest.param(6, marks=pytest.mark.slow)])
def test_second_moment_sensitivity_bounds_optimised_worst_cases(P):
    """Defect 4: for every P the stated same-class bound covers the worst case found by optimisation
    (without and with the target coordinate of pca-gauss-supervised, whose old bound failed at P = 2,
    R = 3), and it is not loose by more than 40%."""
    rng = np.random.default_rng(P)
    for R, target in [(1.0, False), (3.0, True), (0.5, True)]:
        found = _worst_upper_l1(P, R, 0.5 if target else 0.0, restarts=6, rng=rng)
        bound = moment_sensitivities(P, R, target=target, class_change=False)["second_moments_upper_l1"]
        assert found <= bound + 1e-9, (P, R, target, found, bound)
        assert bound <= 1.4 * found, (P, R, target, found, bound)
    # class change: flat vectors in two class blocks attain (P + 1) R^2
    R = 1.3
    flat = np.full(P, R / math.sqrt(P))
    two_blocks = 2 * (float(np.abs(upper(np.outer(flat, flat))).sum()))
    assert two_blocks == pytest.approx(moment_sensitivities(P, R)["second_moments_upper_l1"])
