"""Per-statistic privacy audits of `gauss-pca` (the default release), with halved-noise mutants.

Every Gaussian release of the mechanism gets its own neighbouring pair (R1: one record,
label included, replaced) on which that release's query moves by its sensitivity, given
the earlier releases (which the audit fixes by replaying a reference run: by adaptive
composition each release is private given any earlier ones). The budget split gives the
audited part the whole budget but a small centre share, so the part alone spends almost
the claimed epsilon; its halved-noise mutant then spends about twice as much.

Data: two numeric columns, two classes of 1000 records at (0.5, 0.5) (or at (0.8, 0.5) and
(0.2, 0.5) for the within-class statistics); the first record is the one replaced. With the
public clip radius R = 0.2 a record at distance >= R from the centre is clipped onto the
R-sphere, so the pairs reach the sensitivities of the docstring:

* counts: the record (at the centre) changes class: counts move by (-1, +1), ``sqrt(2)``;
* sums: (0.2, 0.5) -> (0.8, 0.5) in one class: ``z = -R e1 -> +R e1``, ``2 R``;
* basis: (0.8, 0.5) -> (0.5, 0.8): orthogonal ``z`` of norm R, ``sqrt(2) R^2``;
* moments (global centring, public basis e1): (0.8, 0.5) changes class, ``t = R``: each
  class's moment moves by ``R^2``, ``sqrt(2) R^2``;
* moments (class centring, third pass): the record at the centre (``|t - m_c| = R >= R_w``)
  changes class: ``sqrt(2) R_w^2``;
* within_radius: (0.8, 0.5) -> (0.2, 0.5) in class 0 whose mean is +R: the term
  ``|t - m_0|^2`` moves from 0 to ``4 R^2``;
* residual (public basis e1): (0.5, 0.5) -> (0.5, 0.8): ``||z||^2 - t^2`` moves by ``R^2``;
* radius (``clip_radius="auto"``): (0.5, 0.5) -> (1, 1): ``||x - c||^2`` moves by ``r_dom^2``
  up to the centre's noise;
* centre: one column, the record moves from 0 to 1 (the largest change of ``sum x``).
"""

from __future__ import annotations

import numpy as np

import privrelease.mechanisms.gauss_mixture.gauss_pca as gp
from draw_audit_cases import DrawCase, case_tests
from pca_audit_helpers import AUDITED_ACCOUNTING

EPS, DELTA, R, N = 2.0, 1e-5, 0.2, 2000
E1 = np.array([[1.0], [0.0]])


def data(target, label, cls0=(0.5, 0.5), cls1=(0.5, 0.5)):
    n0 = N // 2 - 1
    X = np.vstack([[target], np.tile(cls0, (n0, 1)), np.tile(cls1, (N // 2, 1))])
    y = np.r_[label, np.zeros(n0, int), np.ones(N // 2, int)]
    return X, y


def fitter(part, extra_split=None, **kw):
    split = {k: 1e-6 for k in gp.PARTS}
    split.update(centre=0.02, **(extra_split or {}))
    split[part] = 1.0
    params = dict(n_components=1, n_classes=2, clip_radius=R)
    params.update(kw)

    def fit(D, source):
        return gp.GaussPCA(accounting=AUDITED_ACCOUNTING, epsilon=EPS, delta=DELTA, budget_split=split, rng=source, **params).fit(*D)

    return fit


def centre_fit(D, source):
    split = {k: 1e-6 for k in gp.PARTS}
    split["centre"] = 1.0
    return gp.GaussPCA(accounting=AUDITED_ACCOUNTING, epsilon=EPS, delta=DELTA, n_components=1, clip_radius="schema", budget_split=split,
                       rng=source).fit(D)


_ONE = np.full((99, 1), 0.5)
SPREAD = dict(cls0=(0.8, 0.5), cls1=(0.2, 0.5))

CASES = [
    DrawCase("gauss-pca", "centre_std", centre_fit, np.vstack([[1.0], _ONE]), np.vstack([[0.0], _ONE]),
             "1 column, n=100: x=1 -> x=0", EPS, DELTA),
    DrawCase("gauss-pca", "radius_std", fitter("radius", clip_radius="auto"), data((0.5, 0.5), 0),
             data((1.0, 1.0), 0), "x=(.5,.5) -> (1,1), same class", EPS, DELTA),
    DrawCase("gauss-pca", "counts_std", fitter("counts"), data((0.5, 0.5), 0), data((0.5, 0.5), 1),
             "record at the centre changes class", EPS, DELTA),
    DrawCase("gauss-pca", "sums_std", fitter("sums"), data((0.2, 0.5), 0), data((0.8, 0.5), 0),
             "z=-R e1 -> +R e1, same class", EPS, DELTA),
    DrawCase("gauss-pca", "basis_std", fitter("basis"), data((0.8, 0.5), 0), data((0.5, 0.8), 0),
             "z=R e1 -> R e2 (orthogonal), same class", EPS, DELTA),
    DrawCase("gauss-pca", "moments_std", fitter("moments", basis=E1, centring="global"), data((0.8, 0.5), 0),
             data((0.8, 0.5), 1), "t=R changes class (global centring, public basis)", EPS, DELTA),
    DrawCase("gauss-pca", "within_radius_std",
             fitter("within_radius", dict(sums=0.1, counts=0.1), basis=E1, centring="class"),
             data((0.8, 0.5), 0, **SPREAD), data((0.2, 0.5), 0, **SPREAD),
             "class 0 at +R: t=+R -> -R (term 0 -> 4R^2)", EPS, DELTA),
    DrawCase("gauss-pca", "moments_std (class centring)",
             fitter("moments", dict(sums=0.1, counts=0.1, within_radius=0.05), basis=E1, centring="class"),
             data((0.5, 0.5), 0, **SPREAD), data((0.5, 0.5), 1, **SPREAD),
             "|t - m_c| = R >= R_w, changes class (third pass)", EPS, DELTA, draw="moments_std"),
    DrawCase("gauss-pca", "residual_std", fitter("residual", basis=E1, centring="global"), data((0.5, 0.5), 0),
             data((0.5, 0.8), 0), "z=0 -> R e2 off the public basis e1", EPS, DELTA),
]


def test_every_gaussian_release_is_audited():
    """The cases cover every noise scale the mechanism reports in these configurations."""
    reported = set().union(*(c.fit(c.d0, 0).noise_scales_ for c in CASES))
    assert reported == {c.draw or c.statistic for c in CASES}


test_ci_slice, test_full = case_tests(CASES)
