"""Privacy audits of the PCA-Gauss family on worst-case neighbours, with halved-noise mutants.

Each neighbour pair realises the sensitivity derivation exactly (see the docstrings of
``moment_sensitivities``, ``spectrum_sensitivity``, ``lap_pca_sensitivity``), so the
claimed epsilon is attained by the far-side event: the real mechanism must stay below
its claim, and a mutant with half the noise scale must be refuted (the runs' source scales
every noise draw of the audited call: ``pca_audit_helpers.halve_noise``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from pca_audit_helpers import audit, far_side_event, halve_noise, source
from privrelease.dp.calibration import analytic_gaussian_multiplier
from privrelease.engine import SufficientStats
from privrelease.linalg import upper
from privrelease.mechanisms.pca_gauss import basis as pca_basis
from privrelease.mechanisms.pca_gauss.gmm import PCAGMM
from privrelease.mechanisms.pca_gauss.unsupervised import PCAGauss
from privrelease.mechanisms.pca_gauss.supervised import PCAGaussSupervised
from privrelease.noise import make_source

pytestmark = pytest.mark.slow  # about 2 minutes in all: run with -m slow

EPS = 1.0
TRIALS = 3000
V1 = np.ones((1, 2)) / math.sqrt(2)  # public basis, P = 1, M = 2: z = (x1 + x2 - 1) / sqrt(2), |z| <= R


def _check(run, d0, d1, event, monkeypatch, trials=TRIALS, delta=0.0, eps=EPS):
    real = audit(run, d0, d1, event, trials=trials, seed=1, delta=delta)
    assert real.epsilon_lower <= eps, f"real mechanism refuted: {real.epsilon_lower}"
    halve_noise(monkeypatch)
    mut = audit(run, d0, d1, event, trials=trials, seed=2, delta=delta)
    assert mut.epsilon_lower > eps, f"halved-noise mutant not caught: {mut.epsilon_lower}"
    return real, mut


# ---- pca-gmm ------------------------------------------------------------------------

def _gmm(shares):
    def run(data, rng):
        X, y = data
        m = PCAGMM(epsilon=EPS, n_components=1, pca_source="public", public_components=V1, output_space="reduced",
                   n_classes=2, model_shares=shares, rng=source(rng)).fit(X, y)
        return run.key(m.released_)
    return run


BASE_X = np.array([[0.5, 0.5]] * 6)
BASE_Y = np.array([0, 0, 0, 1, 1, 1])


def test_pca_gmm_counts(monkeypatch):
    run = _gmm({"counts": 1e6, "mean": 1.0, "covariance": 1.0})
    run.key = lambda r: r["counts"]
    d0 = (BASE_X, BASE_Y)
    d1 = (BASE_X, np.array([1, 0, 0, 1, 1, 1]))  # one record changes class: counts (3,3) -> (2,4)
    _check(run, d0, d1, far_side_event([3, 3], [2, 4]), monkeypatch)


def test_pca_gmm_sums(monkeypatch):
    run = _gmm({"counts": 1.0, "mean": 1e6, "covariance": 1.0})
    run.key = lambda r: r["sums"]
    R = 0.5 * math.sqrt(2)
    X0 = BASE_X.copy(); X0[0] = 0.0   # z = -R
    X1 = BASE_X.copy(); X1[0] = 1.0   # z = +R: the class-0 sum moves by 2R = 2 sqrt(P) R
    _check(run, (X0, BASE_Y), (X1, BASE_Y), far_side_event([-R, 0], [R, 0]), monkeypatch)


def test_pca_gmm_second_moments_class_change(monkeypatch):
    run = _gmm({"counts": 1.0, "mean": 1.0, "covariance": 1e6})
    run.key = lambda r: r["second_moment_upper"]
    X = BASE_X.copy(); X[0] = 1.0     # z^2 = R^2 = 1/2
    y1 = BASE_Y.copy(); y1[0] = 1     # moves class: class 0 loses R^2, class 1 gains R^2 = (P + 1) R^2
    _check(run, (X, BASE_Y), (X, y1), far_side_event([0.5, 0.0], [0.0, 0.5]), monkeypatch)


# ---- pca-gauss ----------------------------------------------------------------------

def test_pca_gauss_same_data_spectrum(monkeypatch):
    def run(X, rng):
        return PCAGauss(epsilon=EPS, n_components=1, pca_source="same-data", rng=source(rng)).fit(X).released_[
            "spectrum_sum_scale"]

    X0 = BASE_X.copy()
    X1 = BASE_X.copy(); X1[0] = 1.0   # top eigenvalue of sum u u^T: 0 -> ||u||^2 = M/4 = min(P,2) M/4
    _check(run, X0, X1, far_side_event([0.0], [0.5]), monkeypatch)


def test_pca_gauss_independent_basis_second_moment(monkeypatch):
    def run(X, rng):
        return PCAGauss(epsilon=EPS, n_components=1, pca_source="public", public_components=V1,
                        output_space="reduced", model_shares={"mean": 1.0, "covariance": 1e6},
                        rng=source(rng)).fit(X).released_["second_moment_upper"]

    X1 = BASE_X.copy(); X1[0] = 1.0   # z: 0 -> R, sum z^2 moves by R^2 = P R^2
    _check(run, BASE_X, X1, far_side_event([0.0], [0.5]), monkeypatch)


def test_pca_gauss_second_moment_p2_orthogonal_witness(monkeypatch):
    """Defect 4 (P = 2): with a public basis rotating the domain's corners to ``R (cos s, sin s)`` and
    ``R (-sin s, cos s)``, ``tan 2s = 1/2``, replacing one record by the other moves the upper triangle
    of ``sum z z^T`` by ``sqrt(5) R^2`` in L1, above the old bound ``2 R^2``. With the corrected
    sensitivity the far-side event's loss is exactly epsilon (the bound is attained); the
    halved-noise mutant is caught."""
    s = 0.5 * math.atan2(1.0, 2.0)
    th = s - math.pi / 4  # the corner (1/2, 1/2) sits at 45 degrees: rotate it to angle s
    V2 = np.array([[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]])

    def run(X, rng):
        return PCAGauss(epsilon=EPS, n_components=2, pca_source="public", public_components=V2,
                        output_space="reduced", model_shares={"mean": 1.0, "covariance": 1e6},
                        rng=source(rng)).fit(X).released_["second_moment_upper"]

    X0 = BASE_X.copy(); X0[0] = [1.0, 1.0]  # z = R (cos s, sin s)
    X1 = BASE_X.copy(); X1[0] = [0.0, 1.0]  # z = R (-sin s, cos s): orthogonal, same norm
    a, b = V2 @ (X0[0] - 0.5), V2 @ (X1[0] - 0.5)
    v0, v1 = upper(np.outer(a, a)), upper(np.outer(b, b))
    assert np.abs(v0 - v1).sum() == pytest.approx(math.sqrt(5) * 0.5)
    _check(run, X0, X1, far_side_event(v0, v1), monkeypatch)


# ---- pca-gauss-supervised ----------------------------------------------------------------

def test_pca_gauss_supervised_sums(monkeypatch):
    def run(data, rng):
        X, t = data
        return PCAGaussSupervised(epsilon=EPS, n_components=1, pca_source="public", public_components=V1,
                                  output_space="reduced", model_shares={"mean": 1e6, "covariance": 1.0},
                                  rng=source(rng)).fit(X, t).released_["sums"]

    R = 0.5 * math.sqrt(2)
    t = np.full(6, 0.5)
    X0 = BASE_X.copy(); X0[0] = 0.0; t0 = t.copy(); t0[0] = 0.0
    X1 = BASE_X.copy(); X1[0] = 1.0; t1 = t.copy(); t1[0] = 1.0  # (z, t): (-R, -1/2) -> (R, 1/2): 2R + 1
    _check(run, (X0, t0), (X1, t1), far_side_event([-R, -0.5], [R, 0.5]), monkeypatch)


# ---- basis sources ------------------------------------------------------------------------

def test_lap_pca_basis(monkeypatch):
    def run(X, rng):
        return pca_basis.laplace_basis(SufficientStats.from_matrix(X), 1, EPS, make_source(source(rng))).released[
            "second_moment_upper"]

    X1 = BASE_X.copy(); X1[0] = 1.0   # u = (1/2, 1/2): upper(u u^T) = (1/4, 1/4, 1/4), L1 = M(M+1)/8
    _check(run, BASE_X, X1, far_side_event([0, 0, 0], [0.25, 0.25, 0.25]), monkeypatch, trials=4000)


def test_analyze_gauss_basis(monkeypatch):
    """Unit-ball worst case (contains the box): w = e1 replaced by w = e2; shift sqrt(2) in L2."""
    p = 2
    r = math.sqrt(p) / 2  # x = c + r w has w on the unit sphere

    def stats_with(w):
        X = np.vstack([np.full((3, p), 0.5), 0.5 + r * np.asarray(w, float)])
        return SufficientStats.from_matrix(X)

    s0, s1 = stats_with([1.0, 0.0]), stats_with([0.0, 1.0])
    # statistic: released upper(A) projected on the shift direction (A_11 - A_00) / sqrt(2)
    def run(st, rng):
        g = pca_basis.analyze_gauss_basis(st, 1, EPS, 1e-5, make_source(source(rng))).released["gram_upper"]
        return (g[2] - g[0]) / math.sqrt(2)

    sigma = pca_basis.analyze_gauss_l2_sensitivity() * analytic_gaussian_multiplier(EPS, 1e-5)
    thr = -1 / math.sqrt(2) * 1.0 - 2.5 * sigma / 2  # far tail on d0's side, tuned for the mutant's std
    event = lambda s: np.asarray(s).ravel() <= thr  # noqa: E731
    real = audit(run, s0, s1, event, trials=40000, seed=3, delta=1e-5)
    assert real.epsilon_lower <= EPS
    halve_noise(monkeypatch)
    mut = audit(run, s0, s1, event, trials=40000, seed=4, delta=1e-5)
    assert mut.epsilon_lower > EPS, mut.epsilon_lower
