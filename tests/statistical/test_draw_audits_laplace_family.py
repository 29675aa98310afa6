"""Per-statistic privacy audits of the Laplace-noise mechanisms, with halved-noise mutants.

One case per noised statistic: laplace, jiang-pca, jiang-lda, jiang-public, compressive,
modips, pca-gauss (every basis source and the model's moments), pca-gauss-supervised and
pca-gmm. Each pair moves the statistic's query by its L1 sensitivity given the earlier
releases (replayed from a reference run), so the Laplace log-likelihood ratio reaches
the statistic's epsilon; its budget share is 0.85 so that its loss is 0.85 of the claim, and
the mutant with half the noise scale reaches 1.7 times the claim.
Row-aligned releases are audited on the target record's row (the noise of the other rows is
independent of the change). See the module docstring of :mod:`draw_audit_cases`.

Pairs (encoded rows, numeric columns in [0, 1]; ``u = x - 1/2`` for the PCA-Gauss family,
``R = sqrt(M)/2``; V1 = (1, 1)/sqrt(2) a public basis):

* laplace: a row 0 -> 0.85 in every column (L1 change 0.85 p: mechanisms that spend the whole
  budget on one statistic are audited on pairs that realise 85% of its sensitivity, so a
  correct mechanism's loss stays clearly below the claim);
* jiang-pca moments: the same move changes every entry of ``(sum x, upper(sum x x^T))`` by 1;
  projection: on data whose top component is near (1, 1)/sqrt(2), x = 0 -> 1 (``sqrt(k p)``);
* jiang-lda: counts (the record changes class, 1), class sums (x = 1 changes class, 2L),
  pooled second moment (x = 0 -> 1, 1);
* jiang-public / compressive: x = 0 -> 0.85 along the public direction (85% of the projection
  sensitivity);
* modips: counts (class change, 2), sums (u = -1/2 -> 1/2), second moments (u = 1/2 changes class);
* pca-gauss: same-data spectrum (u = 0 -> (a, a): top eigenvalue 0 -> 0.85 M/4); LapPCA basis
  (the same move: ``upper(u u^T)`` gains M(M+1)/8); Analyze Gauss basis (M = 4, w = (1,1,1,1)/2 ->
  (1,-1,1,-1)/2, orthogonal unit rows: the upper-triangle change is 1, the most encoded rows
  allow, of the unit-ball sensitivity sqrt(2); a halved mutant is then only sqrt(2) under-noised
  on the worst pair, so the case catches the 0.4x-noise mutant, with the basis's share at 0.99 and
  epsilon 2, see docs/audits.md); with a public basis: sums
  (z = -R -> R), second moment (z = 0 -> R), residual (u orthogonal to V1: 0 -> R^2);
* pca-gauss-supervised: sums ((z, t) = (-R, -1/2) -> (R, 1/2)), second moment of (z, t)
  ((0, 0) -> (R, 1/2)), residual;
* pca-gmm: LapPCA basis, counts (class change), sums (z = -R -> R), second moments (z = R
  changes class), residual.
"""

from __future__ import annotations

import math

import numpy as np

from draw_audit_cases import DrawCase, case_tests
from privrelease.mechanisms import JiangPCA, LaplaceIdentity
from privrelease.mechanisms import baselines as B
from privrelease.mechanisms.jiang.lda import JiangLDA
from privrelease.mechanisms.pca_gauss.gmm import PCAGMM
from privrelease.mechanisms.pca_gauss.unsupervised import PCAGauss
from privrelease.mechanisms.pca_gauss.supervised import PCAGaussSupervised
from privrelease.schema.encoding import EncodedDomain

EPS = 1.0
MAIN = 0.85  # the audited statistic's share of the budget: its loss is 0.85 eps, its halved mutant's 1.7 eps
V1 = np.ones((1, 2)) / math.sqrt(2)
HALF = np.full((6, 2), 0.5)


def rows(first, rest):
    return np.vstack([np.atleast_2d(first), rest])


def labelled(first, label, rest=HALF, labels=(0, 0, 1, 1, 1)):
    X = rows(first, rest[: len(labels)])
    return X, np.r_[label, labels].astype(int)


# ---- row-aligned identity and projections -------------------------------------------------

def laplace_fit(X, s):
    m = LaplaceIdentity(EPS, rng=s).fit(X)
    m.transform(X)
    return m


def jiang_moments_fit(X, s):
    return JiangPCA(EPS, n_components=X.shape[1], moment_share=MAIN, rng=s).fit(X)


_CORR = np.zeros((2000, 2))
_CORR[1::2] = 1.0  # strongly correlated: the top component is near (1, 1)/sqrt(2)


def jiang_projection_fit(X, s):
    m = JiangPCA(EPS, n_components=1, moment_share=1 - MAIN, rng=s).fit(X)
    m.transform(X)
    return m


def jiang_public_fit(X, s):
    m = B.JiangPublic(EPS, n_components=1, public_components=V1, output_space="reduced", rng=s).fit(X)
    m.transform(X)
    return m


def compressive_fit(X, s):
    m = B.Compressive(EPS, n_components=1, output_space="reduced", rng=s).fit(X)
    m.transform(X)
    return m


# ---- labelled / moment mechanisms -----------------------------------------------------------

LDA_DOM = EncodedDomain.numeric_box(1)
_LDA_REST = np.array([[0.5], [0.2], [0.9]])


def lda_fit(shares):
    def fit(D, s):
        return JiangLDA(EPS, budget_shares=shares, domain=LDA_DOM, rng=s).fit(*D)
    return fit


def lda_data(x, label):
    return rows([x], _LDA_REST), np.array([label, 0, 1, 1])


def modips_fit(shares):
    def fit(D, s):
        return B.MODIPS(EPS, shares=shares, n_classes=2, rng=s).fit(*D)
    return fit


def pca_gauss_fit(eps=EPS, **kw):
    def fit(X, s):
        return PCAGauss(epsilon=eps, n_components=1, rng=s, **kw).fit(X)
    return fit


def supervised_fit(**kw):
    def fit(D, s):
        return PCAGaussSupervised(epsilon=EPS, n_components=1, pca_source="public", public_components=V1,
                                  rng=s, **kw).fit(*D)
    return fit


def gmm_fit(**kw):
    def fit(D, s):
        params = dict(n_components=1, pca_source="public", public_components=V1, n_classes=2)
        params.update(kw)
        return PCAGMM(epsilon=EPS, rng=s, **params).fit(*D)
    return fit


def shares(main, names=("counts", "mean", "covariance", "residual")):
    """Model shares giving ``main`` the share MAIN of the model's budget, the rest equal shares."""
    rest = (1 - MAIN) / (len(names) - 1)
    return {k: (MAIN if k == main else rest) for k in names}


_T = np.full(6, 0.5)
_SPEC = np.full(2, 0.5 + math.sqrt(MAIN / 4))  # ||u||^2 = 0.85 M/4 (the whole budget goes to the spectrum)
_AG_REST = np.full((5, 4), 0.5)

CASES = [
    DrawCase("laplace", "identity", laplace_fit, rows(np.zeros(3), np.linspace(.2, .8, 3)),
             rows(np.full(3, MAIN), np.linspace(.2, .8, 3)), "row 0 -> 0.85 in all p=3 columns", EPS),
    DrawCase("jiang-pca", "moments", jiang_moments_fit, rows(np.zeros(2), np.full((9, 2), .4)),
             rows(np.ones(2), np.full((9, 2), .4)), "row 0 -> 1, p=2: all 5 moment entries +1", EPS),
    DrawCase("jiang-pca", "projection", jiang_projection_fit, rows([0.0, 0.0], _CORR), rows([1.0, 1.0], _CORR),
             "x=0 -> 1 along u~(1,1)/sqrt2 (correlated data)", EPS, draw=1),  # fit: moments; transform: projection
    DrawCase("jiang-lda", "counts", lda_fit((MAIN, 0.075, 0.075)), lda_data(1.0, 0), lda_data(1.0, 1),
             "x=1 changes class", EPS),
    DrawCase("jiang-lda", "class_sums", lda_fit((0.075, MAIN, 0.075)), lda_data(1.0, 0), lda_data(1.0, 1),
             "x=1 changes class (sums -1/+1)", EPS),
    DrawCase("jiang-lda", "second_moment", lda_fit((0.075, 0.075, MAIN)), lda_data(0.0, 0), lda_data(1.0, 0),
             "x=0 -> 1, same class", EPS),
    DrawCase("jiang-public", "projection", jiang_public_fit, rows([0.0, 0.0], HALF[:1]),
             rows([MAIN, MAIN], HALF[:1]), "x=0 -> 0.85 along the public V1", EPS, draw=0),
    DrawCase("compressive", "projection", compressive_fit, np.array([[0.0], [0.5]]), np.array([[MAIN], [0.5]]),
             "x=0 -> 0.85, p=1 (|r|=1)", EPS, draw=0),
    DrawCase("modips", "counts", modips_fit(shares("counts", ("counts", "mean", "covariance"))),
             labelled([0.5, 0.5], 0), labelled([0.5, 0.5], 1), "u=0 changes class", EPS),
    DrawCase("modips", "sums", modips_fit(shares("mean", ("counts", "mean", "covariance"))),
             labelled([0.0, 0.0], 0), labelled([1.0, 1.0], 0), "u=-1/2 -> +1/2, same class", EPS),
    DrawCase("modips", "second_moments", modips_fit(shares("covariance", ("counts", "mean", "covariance"))),
             labelled([1.0, 1.0], 0), labelled([1.0, 1.0], 1), "u=(1/2,1/2) changes class", EPS),
    DrawCase("pca-gauss", "spectrum", pca_gauss_fit(pca_source="same-data"), HALF, rows(_SPEC, HALF[1:]),
             "u=0 -> (a,a), 2a^2 = 0.85 M/4: top eigenvalue 0 -> 0.85 M/4", EPS),
    DrawCase("pca-gauss", "lap_pca", pca_gauss_fit(pca_source="laplace", pca_share=MAIN, output_space="reduced"),
             HALF, rows([1.0, 1.0], HALF[1:]), "u=0 -> (1/2,1/2): upper(uu^T) +M(M+1)/8", EPS),
    DrawCase("pca-gauss", "analyze_gauss_std",
             pca_gauss_fit(2 * EPS, pca_source="analyze-gauss", pca_share=0.99, delta=1e-5, output_space="reduced"),
             rows([1, 1, 1, 1], _AG_REST), rows([1, 0, 1, 0], _AG_REST),
             "M=4: w=(1,1,1,1)/2 -> (1,-1,1,-1)/2 (shift 1 of sqrt2)", 2 * EPS, delta=1e-5, mutant_factor=0.4),
    DrawCase("pca-gauss", "sums", pca_gauss_fit(pca_source="public", public_components=V1, output_space="reduced",
                                                model_shares=shares("mean", ("mean", "covariance"))),
             rows([0.0, 0.0], HALF[1:]), rows([1.0, 1.0], HALF[1:]), "z=-R -> +R (public V1)", EPS),
    DrawCase("pca-gauss", "second_moments",
             pca_gauss_fit(pca_source="public", public_components=V1, output_space="reduced",
                           model_shares=shares("covariance", ("mean", "covariance"))),
             HALF, rows([1.0, 1.0], HALF[1:]), "z=0 -> R (public V1, P=1)", EPS),
    DrawCase("pca-gauss", "residual",
             pca_gauss_fit(pca_source="public", public_components=V1, output_space="original",
                           model_shares=shares("residual", ("mean", "covariance", "residual"))),
             HALF, rows([1.0, 0.0], HALF[1:]), "u=0 -> (1/2,-1/2), orthogonal to V1", EPS),
    DrawCase("pca-gauss-supervised", "sums", supervised_fit(output_space="reduced",
                                                            model_shares=shares("mean", ("mean", "covariance"))),
             (rows([0.0, 0.0], HALF[1:]), np.r_[0.0, _T[1:]]), (rows([1.0, 1.0], HALF[1:]), np.r_[1.0, _T[1:]]),
             "(z,t)=(-R,-1/2) -> (R,1/2)", EPS),
    DrawCase("pca-gauss-supervised", "second_moments",
             supervised_fit(output_space="reduced", model_shares=shares("covariance", ("mean", "covariance"))),
             (HALF, _T), (rows([1.0, 1.0], HALF[1:]), np.r_[1.0, _T[1:]]), "(z,t)=(0,0) -> (R,1/2)", EPS),
    DrawCase("pca-gauss-supervised", "residual",
             supervised_fit(output_space="original", model_shares=shares("residual", ("mean", "covariance", "residual"))),
             (HALF, _T), (rows([1.0, 0.0], HALF[1:]), _T), "u=0 -> (1/2,-1/2), orthogonal to V1", EPS),
    DrawCase("pca-gmm", "lap_pca", gmm_fit(pca_source="laplace", pca_share=MAIN, public_components=None,
                                           output_space="reduced"),
             labelled([0.5, 0.5], 0), labelled([1.0, 1.0], 0), "u=0 -> (1/2,1/2): upper(uu^T) +M(M+1)/8", EPS),
    DrawCase("pca-gmm", "counts", gmm_fit(output_space="reduced", model_shares=shares("counts", ("counts", "mean",
                                                                                               "covariance"))),
             labelled([0.5, 0.5], 0), labelled([0.5, 0.5], 1), "z=0 changes class", EPS),
    DrawCase("pca-gmm", "sums", gmm_fit(output_space="reduced", model_shares=shares("mean", ("counts", "mean",
                                                                                           "covariance"))),
             labelled([0.0, 0.0], 0), labelled([1.0, 1.0], 0), "z=-R -> +R, same class", EPS),
    DrawCase("pca-gmm", "second_moments",
             gmm_fit(output_space="reduced", model_shares=shares("covariance", ("counts", "mean", "covariance"))),
             labelled([1.0, 1.0], 0), labelled([1.0, 1.0], 1), "z=R changes class", EPS),
    DrawCase("pca-gmm", "residual", gmm_fit(output_space="original", model_shares=shares("residual")),
             labelled([0.5, 0.5], 0), labelled([1.0, 0.0], 0), "u=0 -> (1/2,-1/2), orthogonal to V1", EPS),
]


test_ci_slice, test_full = case_tests(CASES)
