"""Neighbouring pairs on which each noised statistic of `gauss-copula` (the default) moves by its
whole sensitivity, at the default budget split, and the GDP audits of them.

Data: ``N = 11`` records over binary categorical columns (one-hot blocks of two, so the audits
do not depend on how numeric columns are cut into cells), ``a = 000``, ``b = 111``,
``b1 = 100``; an optional binary label. The copula keeps categorical blocks one-hot, so the
mixture's latent rows are the encoded rows and its clipping happens around its DP centre ``c``.
Each audit captures the statistic's query on both datasets given the same earlier releases
(:func:`privrelease.audit.audit_draws`); where the worst case needs particular earlier releases
(the centre, the radius, the basis, the class sums), the reference run's outputs are set to them:
each statistic is private given *any* earlier releases (adaptive composition), so the audit may
choose them.

* histograms (``marginals_std``, sensitivity ``sqrt(2 d)``): ``a -> b`` moves two cells of each of
  the d = 3 columns (and, with a separate label histogram, ``(a, 0) -> (b, 1)`` moves two of its
  cells too: d = 4);
  with columns of 2 and 5 levels (their weights, ``histogram_weights``, differ): the weighted counts move by
  ``sqrt(2 (w_1^2 + w_2^2))`` = ``sqrt(2 d)``;
* centre (``sqrt(p1 + 2 p2)`` = sqrt 6): ``a -> b``;
* radius (``r_dom(c)^2``): ``a -> b`` with ``c = a``: the term ``||x - c||^2`` moves 0 -> 6 = r_dom(a)^2;
* sums (``2 R``): ``a -> b`` with ``c = (a + b) / 2``: ``z = R u -> -R u``;
* basis (``sqrt 2 R^2``): ``a -> b1`` with ``c = 001010`` (as encoded): ``z = R e0 -> R e1``;
* moments (global centring, ``sqrt 2 R^2``): as the basis, the basis set to the identity;
* residual (``R^2``), ``n_components = 1``: ``a -> b1`` with ``c = a``: ``z = 0 -> R (e1 - e0) / sqrt 2``,
  orthogonal to the one basis direction (set to e2);
* counts (``sqrt 2``, labelled): the record ``a`` changes class;
* within-radius (``4 R^2``, labelled, class centring): ``a -> b`` in class 0 with
  ``c = (a + b) / 2`` and class 0's released mean at ``t(a)``: the term ``||t - m_0||^2`` moves
  0 -> 4 R^2.

The claim of each audited part is ``mu = sqrt(2 rho_part)`` with ``rho_part`` from the real code's
``budget_split_`` (taken before any mutant is applied): a release of total zCDP rho of Gaussian
noise is ``sqrt(2 rho)``-GDP. The total's claim is ``sqrt(2 rho)`` with rho calibrated from
(epsilon, delta) by the same function the mechanism uses.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import pytest

import privrelease.mechanisms.gauss_mixture.gauss_copula as gc
from privrelease.audit import AsRealRelease, DrawsAudit, audit_draws, draw_index
from privrelease.dp.calibration import accounting_mode, calibrate_rho
from privrelease.linalg import upper
from privrelease.schema.encoding import EncodedDomain

EPS, DELTA, N, COLS = 1.0, 1e-2, 11, 3
#: The mixture's parts are audited at a larger total epsilon (same default split), so that the smallest
#: part (the radius, 0.45 % of rho) has a mu the audit resolves with a few hundred thousand trials.
MIX_EPS = 4.0
CI_TRIALS, FULL_TRIALS = 400_000, 2_000_000
#: Confidence parameter of the real mechanism's audits (the mutants use 0.05).
REAL_ALPHA = 1e-3


def domain(cols: int = COLS) -> EncodedDomain:
    return EncodedDomain(p=2 * cols, numeric=(), blocks=tuple((2 * j, 2 * j + 2) for j in range(cols)))


def enc(bits) -> np.ndarray:
    """One encoded row of binary categorical columns (level 0 -> (1, 0), level 1 -> (0, 1))."""
    x = np.zeros(2 * len(bits))
    for j, v in enumerate(bits):
        x[2 * j + int(v)] = 1.0
    return x


A, B, B1 = enc((0, 0, 0)), enc((1, 1, 1)), enc((1, 0, 0))


def table(target, label=None, n=N, other=A):
    """``n - 1`` records ``other`` and the target first; labels alternate 1, 0, ... for the others."""
    X = np.vstack([target, np.tile(other, (n - 1, 1))])
    if label is None:
        return X, None
    return X, np.r_[label, np.arange(n - 1) % 2].astype(int)


def copula_fit(eps=EPS, delta=DELTA, cols=COLS, passes=None, real_release=False, **kw) -> Callable[[Any, Any], Any]:
    """``fit(data, source)``: the default gauss-copula on binary columns (``n_classes`` declared).

    ``passes(data)``: a pass executor for the table (for example on a Dask cluster); None fits in
    memory. ``fit.on(passes)`` is the same fit on another executor. ``real_release``: the source
    declares itself secure (:class:`~privrelease.audit.AsRealRelease`), so the mechanism calibrates
    as a release with ``rng=None`` does, with seeded noise.
    """
    def fit(D, source):
        X, y = D
        source = AsRealRelease(source) if real_release else source
        # the mixture's statistics (the graphical model's rounds: test_audit_gauss_copula_model.py), at
        # the split the audits were designed and documented at (docs/audits.md); "auto" would give
        # these 11-record tables 0.3, a budget share only (the same code paths)
        params = dict(n_classes=1 if y is None else 2, domain=domain(cols), rng=source, marginal_share=0.55,
                      dependence="mixture")
        params.update(kw)
        m = gc.GaussCopula(eps, delta, **params)
        return m.fit(X, y) if passes is None else m.fit_executor(passes(D))

    fit.on = lambda make: copula_fit(eps, delta, cols, make, real_release, **kw)
    return fit


# ---- earlier releases set where the worst case needs them ----------------------------------------
def set_release(draws, ref, name: str, value) -> None:
    """Set the recorded output of the draw ``name`` (a key of the fitted ``noise_scales_``)."""
    i = draw_index(draws, ref.noise_scales_, name)
    draws[i].output = np.asarray(value, dtype=np.float64).reshape(draws[i].shape)


def prefix(centre=None, radius=None, basis=None, class_sums=None, counts=None, within_radius=None, n=N):
    """``edit_reference(draws, ref)`` that sets the mixture's centre, radius, basis (columns in order
    of importance), class sums (C x p, of the clipped rows), counts and within-class radius."""
    def edit(draws, ref):
        if within_radius is not None:
            set_release(draws, ref, "mixture_within_radius_std", [n * within_radius**2])
        if centre is not None:
            set_release(draws, ref, "mixture_centre_std", n * np.asarray(centre))
        if radius is not None:
            set_release(draws, ref, "mixture_radius_std", [n * radius**2])  # R = sqrt(T / n), radius_factor 1
        if counts is not None:
            set_release(draws, ref, "mixture_counts_std", counts)
        if class_sums is not None:
            set_release(draws, ref, "mixture_sums_std", class_sums)
        if basis is not None:
            V = np.asarray(basis, dtype=np.float64)
            lam = np.arange(V.shape[1], 0, -1, dtype=np.float64)
            set_release(draws, ref, "mixture_basis_std", upper((V * lam) @ V.T))

    return edit


def identity_with_first(*first, p=2 * COLS) -> np.ndarray:
    """An orthonormal p x p basis whose first columns are ``first`` (orthonormal), then the rest."""
    M = np.column_stack(list(first) + [np.eye(p)[:, j] for j in range(p)])
    Q, _ = np.linalg.qr(M)
    Q = Q[:, :p] * np.sign(np.sum(Q[:, :p] * M[:, :p], axis=0))
    return Q


HALF = np.full(2 * COLS, 0.5)
C_BASIS = enc((0, 0, 0)) - np.eye(2 * COLS)[0]  # 001010: a - c = e0, b1 - c = e1


# ---- the audited cases ---------------------------------------------------------------------------
@dataclass
class CopulaCase:
    """One audit: ``parts`` (keys of ``noise_scales_``; None: every draw, against the whole claim)."""

    id: str
    fit: Callable[[Any, Any], Any]
    d0: Any
    d1: Any
    pair: str
    parts: tuple | None = None
    edit: Callable | None = None
    extra: dict = field(default_factory=dict)

    def claim(self) -> float:
        """The claimed mu: ``sqrt(2 rho)`` of the audited parts, from the code as it is when called."""
        if self.parts is None:
            return math.sqrt(2.0 * calibrate_rho(EPS, DELTA, accounting_mode("auto", secure=False)))
        m = self.fit(self.d0, 0)
        rho = sum(m.budget_split_["rho_" + k[:-len("_std")]] for k in self.parts)
        return math.sqrt(2.0 * rho)

    def run(self, trials: int, seed: int = 0, alpha: float = 0.05) -> DrawsAudit:
        return audit_draws(self.fit, self.d0, self.d1, trials=trials, seed=seed, alpha=alpha, only=self.parts,
                           edit_reference=self.edit, **self.extra)

    def param(self):
        return pytest.param(self, id=self.id)


#: Two categorical columns of 2 and 5 levels: the histograms' weights (``histogram_weights``) differ, so the
#: release's noise is unequal across them (std sigma / w_j) while the weighted vector moves by sqrt(2 d).
UNEQUAL = EncodedDomain(p=7, numeric=(), blocks=((0, 2), (2, 7)))
A_U, B_U = np.eye(7)[0] + np.eye(7)[2], np.eye(7)[1] + np.eye(7)[6]
LAB = copula_fit(by_label=False)
MIX, MIX_LAB = copula_fit(MIX_EPS), copula_fit(MIX_EPS, by_label=False)
CASES = [
    CopulaCase("marginals (3 columns)", copula_fit(), table(A), table(B), "a -> b: two cells of each of 3 columns",
               ("marginals_std",)),
    CopulaCase("marginals (per class)", copula_fit(by_label=True), table(A, 0), table(B, 1),
               "(a, 0) -> (b, 1): class x column cells of 3 columns", ("marginals_std",)),
    CopulaCase("marginals (+ label histogram)", LAB, table(A, 0), table(B, 1),
               "(a, 0) -> (b, 1): 3 columns and the label histogram (d = 4)", ("marginals_std",)),
    CopulaCase("marginals (unequal levels)", copula_fit(domain=UNEQUAL), table(A_U, other=A_U), table(B_U, other=A_U),
               "(0, 0) -> (1, 4): two cells of a 2-level and of a 5-level column, weighted", ("marginals_std",)),
    CopulaCase("mixture centre", MIX, table(A), table(B), "a -> b", ("mixture_centre_std",)),
    CopulaCase("mixture radius", MIX, table(A), table(B), "a -> b, c = a: 0 -> r_dom^2",
               ("mixture_radius_std",), prefix(centre=A)),
    CopulaCase("mixture sums", MIX, table(A), table(B), "a -> b, c = (a + b) / 2: z = Ru -> -Ru",
               ("mixture_sums_std",), prefix(centre=HALF, radius=1.0)),
    CopulaCase("mixture basis", MIX, table(A), table(B1), "a -> b1, c = 001010: z = R e0 -> R e1",
               ("mixture_basis_std",), prefix(centre=C_BASIS, radius=1.0)),
    CopulaCase("mixture moments", MIX, table(A), table(B1), "as basis, basis = identity",
               ("mixture_moments_std",), prefix(centre=C_BASIS, radius=1.0, basis=np.eye(2 * COLS))),
    CopulaCase("mixture residual", copula_fit(MIX_EPS, n_components=1), table(A), table(B1),
               "a -> b1, c = a, basis e2: z = 0 -> R (e1 - e0)/sqrt2 off the basis", ("mixture_residual_std",),
               prefix(centre=A, radius=1.0, basis=np.eye(2 * COLS)[:, [2]])),
    CopulaCase("mixture counts", MIX_LAB, table(A, 0), table(A, 1), "the record a changes class",
               ("mixture_counts_std",)),
]


def _within_case() -> CopulaCase:
    """Class 0's released mean at t(a) (and class 1's at -t(a), so the mean contrast is the first
    basis direction u); the record moves a -> b in class 0: t = R u -> -R u."""
    R = 1.0
    u = (A - HALF) / np.linalg.norm(A - HALF)
    k = np.array([6.0, 5.0])
    sums = np.vstack([k[0] * R * u, -k[1] * R * u])
    return CopulaCase("mixture within-radius", MIX_LAB, table(A, 0), table(B, 0),
                      "(a, 0) -> (b, 0), c = (a + b)/2, m_0 = t(a): 0 -> 4 R^2", ("mixture_within_radius_std",),
                      prefix(centre=HALF, radius=R, counts=k, class_sums=sums, basis=identity_with_first(u)))


def _class_moments_case() -> CopulaCase:
    """Third pass (class centring): class means at +-s v (v the first basis direction, s small), the
    record at t = R u (u the second) changes class: each class's ``w w^T`` moves by about ``R_w^2``."""
    R, s, Rw = 1.0, 0.01, 0.5
    u = (A - HALF) / np.linalg.norm(A - HALF)
    v = np.r_[1.0, 1.0, 0.0, 0.0, 0.0, 0.0] / math.sqrt(2.0)  # orthogonal to u
    k = np.array([6.0, 5.0])
    return CopulaCase("mixture moments (class centring)", MIX_LAB, table(A, 0), table(A, 1),
                      "a changes class, class means +-s v, t = R u, R_w = R / 2: sqrt 2 R_w^2",
                      ("mixture_moments_std",),
                      prefix(centre=HALF, radius=R, counts=k, class_sums=np.vstack([k[0] * s * v, -k[1] * s * v]),
                             basis=identity_with_first(v, u), within_radius=Rw))


CASES += [_within_case(), _class_moments_case()]
BY_ID = {c.id: c for c in CASES}


# ---- the whole release: every draw at once, on the worst pair found ----------------------------
#: The centre found by ``benchmarks/bench_tight_audit.py`` (search over c in [0, 1]^6 of the
#: realised share of the mixture's rho for a -> b; rounded): a - c and b - c are at 94 degrees.
C_TOTAL = np.array([0.0, 0.117, 0.0, 1.0, 0.0, 1.0])


def total_prefix(c=C_TOTAL):
    """Centre c, radius ``min(||a - c||, ||b - c||)`` (both rows on the clip sphere) and a basis whose
    first two columns make 45 degrees with the bisector of ``z(a)`` and ``z(b)`` (the moments' upper
    triangles then differ by ``sqrt 2 R^2 sin(angle)``, the most a rotation allows)."""
    d0, d1 = A - c, B - c
    R = float(min(np.linalg.norm(d0), np.linalg.norm(d1)))
    u0, u1 = d0 / np.linalg.norm(d0), d1 / np.linalg.norm(d1)
    ub, up = (u0 + u1) / np.linalg.norm(u0 + u1), (u1 - u0) / np.linalg.norm(u1 - u0)
    V = identity_with_first((ub - up) / math.sqrt(2.0), (ub + up) / math.sqrt(2.0))
    return prefix(centre=c, radius=R, basis=V)


CASES.append(CopulaCase("total", copula_fit(), table(A), table(B),
                        "11 x 000 -> 10 x 000 + 111; centre, radius and basis at the worst values found",
                        None, total_prefix()))
BY_ID["total"] = CASES[-1]


if __name__ == "__main__":  # pragma: no cover - prints the rows of docs/audits.md
    import sys

    trials = int(sys.argv[1]) if len(sys.argv) > 1 else CI_TRIALS
    seed = 1 if trials == CI_TRIALS else 2  # the seeds of test_ci_slice and test_full
    for c in CASES:
        r = c.run(trials, seed, alpha=REAL_ALPHA)
        print(f"| {c.id} | {c.pair} | {trials:,} | {c.claim():.4f} | {r.mu_exact:.4f} | {r.mu.mu_lower:.4f} |")
