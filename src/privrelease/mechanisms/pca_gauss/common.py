"""PCA-Gauss (Chanyaswad, Liu, Mittal, arXiv:1709.00054): DP Gaussian models on PCA-reduced data.

Three registered mechanisms (ALGORITHMS.md 3.3-3.5, errata E8-E13):

* ``pca-gauss`` - Algorithm 1 (unsupervised). With ``pca_source="same-data"`` (the
  paper's algorithm) only the noisy top-P spectrum is released and the synthetic data
  live in the reduced space (columns ``pc1..pcP``). With an independent basis
  (``laplace``, ``analyze-gauss``, ``public``, ``split``) a full Gaussian
  ``N(mu, Sigma)`` is fitted to the projected records and can be mapped back to the
  schema's columns.
* ``pca-gauss-supervised`` - Algorithm 2 (regression): the target is its own column of
  the Gaussian, the basis is independent of the model's data.
* ``pca-gmm`` - Algorithm 3, corrected: noisy class counts, class sums and class second
  moments (no private N_c in any noise scale, no class-centring), one Gaussian per class.

Domain (all three). The paper scales data to [-a, a]; our encoder gives ``x in [0, 1]^M``
(one-hot blocks included). Records are projected around the public centre
``c = 0.5 * 1``: ``z = V (x - c)``, where ``V`` (``P x M``, orthonormal rows) is the
basis. Since ``u = x - c in [-1/2, 1/2]^M``, ``||z||_2 <= ||u||_2 <= sqrt(M) / 2 =: R``
and ``||z - z'||_2 <= ||x - x'||_2 <= sqrt(M) = 2R``. With ``clip_radius = r`` each
projected record is scaled to norm at most ``r`` (a per-record public map), and ``R = r``.
Every sensitivity below is in these terms; in particular we never use the paper's
per-coordinate box on the projected features, whose second-moment bound grows as
``P^2`` where the L2-based bound grows as ``P``.
"""

from __future__ import annotations

from numbers import Real

import math
from typing import ClassVar

import numpy as np

from ...engine.stats import SufficientStats
from ...errors import ParameterError
from ...dp.sensitivities import gram_upper_l1
from ...linalg import mirror, psd_repair, psd_sqrt, top_eigenvectors, upper
from ..base import Capabilities, SyntheticMechanism
from ..constraints import ARRAY_OR_FILE, COMMON, FRACTION, Interval, Options, POSITIVE_INT, PUBLIC_ARRAY, SHARES
from .basis import (
    PCA_SOURCES,
    PCABasis,
    analyze_gauss_basis,
    centred_second_moment,
    laplace_basis,
    public_basis,
    public_centre,
    split_rows,
)
from ...dp.costs import PrivacyCost, check_delta

OUTPUT_SPACES = ("original", "reduced", "auto")


# ---- calibration (one place; derivations in the docstrings) -----------------------

def moment_sensitivities(P: int, R: float, target: bool = False, class_change: bool = True) -> dict:
    """L1 sensitivities under R1 of per-record sums, for projected records with ``||z||_2 <= R``.

    The vectors summed are ``w = z`` (P coordinates) or ``w = (z, t)`` with a target
    ``t in [-1/2, 1/2]``; ``class_change`` says whether a replacement may move the record
    between classes (per-class statistics with the label in the record, E8).

    * sum of ``w``: ``||w - w'||_1 <= sqrt(P) ||z - z'||_2 + |t - t'| <= 2 sqrt(P) R (+ 1)``;
      a record moving class changes two class sums by ``||w||_1 + ||w'||_1``, the same bound.
    * upper triangle with diagonal of ``sum w w^T``:
      :func:`~privrelease.dp.sensitivities.gram_upper_l1` (derivation there). Same class
      ``sqrt(P (P + 3) / 2) R^2`` for ``P >= 2`` and ``R^2`` for ``P = 1`` (target: the
      smaller of ``c_P R^2 + sqrt(P) R + 1/4`` and two other valid bounds); class change
      ``(P + 1) R^2`` (target: ``(sqrt(P) R + 1/2)^2 + R^2 + 1/4``). The earlier same-class
      value ``P R^2`` is exceeded at ``P = 2`` (``sqrt(5) R^2`` is attained).
    * class counts (vector): 2 (one class loses the record, another gains it).

    Compare the paper's box constants (Thm 6 via the authors' code: ``2Pa`` and
    ``P^2 a^2`` per class with the private ``N_c`` in the scale: not DP, E13).
    """
    sums = 2 * math.sqrt(P) * R + (1.0 if target else 0.0)
    second = gram_upper_l1(P, R, 0.5 if target else 0.0, class_change=class_change)
    return {"counts_l1": 2.0, "sums_l1": sums, "second_moments_upper_l1": second}


def spectrum_sensitivity(P: int, p: int, empirical_centre: bool, n: int) -> float:
    """L1 sensitivity of the top-P eigenvalues of ``sum u u^T`` (Algorithm 1, corrected; E9, E10).

    Public centre: ``E = u' u'^T - u u^T`` with ``||u||^2 <= M/4``; Weyl gives each
    eigenvalue a change ``<= ||E||_2 <= M/4`` and Lidskii-Mirsky the sum of changes
    ``<= ||E||_* <= M/2``; so ``min(P, 2) M / 4`` (T5). Empirical centre: ``n C`` changes by
    ``((n-1)/n)(v v^T - v' v'^T)`` with ``v = x - mean of the others``, ``||v||^2 <= M``
    (T4), giving ``min(P, 2) M (n - 1) / n``. The paper's ``P a^2 / N`` on all ``P x P``
    entries wastes noise on structurally zero entries (E10).
    """
    if empirical_centre:
        return min(P, 2) * p * (n - 1) / n
    return min(P, 2) * p / 4.0


def residual_sensitivity(p: int) -> float:
    """``r_i = ||u_i||^2 - ||V u_i||^2 in [0, M/4]``: L1 sensitivity ``M / 4`` of ``sum_i r_i``."""
    return p / 4.0


# ---- shared machinery -------------------------------------------------------------

class _PCAGaussBase(SyntheticMechanism):
    """Basis acquisition, projection, noisy moments and sampling shared by the family."""

    _parameter_constraints: ClassVar[dict] = {
        **COMMON,
        "n_components": POSITIVE_INT,
        "pca_source": [Options("same-data", *PCA_SOURCES)],
        "pca_share": FRACTION,
        "delta": [None, Interval(Real, 0, 1, closed="left")],
        "public_components": ARRAY_OR_FILE,
        "public_data": PUBLIC_ARRAY,
        "split_fraction": FRACTION,
        "clip_radius": [None, Interval(Real, 0, None, closed="neither")],
        "output_space": [Options(*OUTPUT_SPACES)],
        "model_shares": SHARES,
    }

    uses_delta: ClassVar[bool] = False  # delta only with pca_source="analyze-gauss"
    # i.i.d. draws from the fitted model: release_file samples in chunks
    capabilities: ClassVar[Capabilities] = Capabilities(passes="statistics", samples_in_chunks=True,
                                                        estimates_covariance=True)
    default_shares: ClassVar[dict] = {}
    model_kind: ClassVar[str] = "gaussian"

    # -- parameters ---------------------------------------------------------
    def _validate(self, p: int):
        k = self._check_int(self.n_components, "n_components", 1, p)
        src = self.pca_source
        allowed = PCA_SOURCES + (("same-data",) if self.name == "pca-gauss" else ())
        if src not in allowed:
            raise ParameterError(f"pca_source must be one of {allowed}, got {src!r}")
        if src != "analyze-gauss" and self.delta not in (None, 0, 0.0):
            raise ParameterError(f"delta is only used with pca_source='analyze-gauss' (pca_source={src!r} is "
                                 f"pure epsilon-DP); leave it unset")
        if src == "analyze-gauss":
            if self.delta is None:
                raise ParameterError("pca_source='analyze-gauss' is (epsilon, delta)-DP: give delta (e.g. 1e-5)")
            check_delta(self.delta)
            if self.delta == 0:
                raise ParameterError("pca_source='analyze-gauss' needs delta > 0")
        return k

    def _out_space(self) -> str:
        if self.output_space == "auto":
            return "reduced" if self.pca_source == "same-data" else "original"
        if self.output_space == "original" and self.pca_source == "same-data":
            raise ParameterError("pca_source='same-data' releases no basis, so output_space must be 'reduced' "
                                 "(use a DP or public basis to release in the schema's columns)")
        return self.output_space

    def _shares(self, original: bool) -> dict:
        shares = dict(self.default_shares)
        user = getattr(self, "model_shares", None)
        if user is not None:
            if not isinstance(user, dict) or set(user) - set(shares) or not all(
                    isinstance(v, (int, float)) and v > 0 for v in user.values()):
                raise ParameterError(f"model_shares must map some of {sorted(shares)} to positive numbers, got {user!r}")
            shares.update(user)
        if not original:
            shares.pop("residual", None)
        tot = sum(shares.values())
        return {k: v / tot for k, v in shares.items()}

    # -- the basis ----------------------------------------------------------
    def _basis(self, X, stats, eps, k, dom):
        """Returns (basis, epsilon left for the model, row mask of the model's records or None)."""
        src = self.pca_source
        p = dom.p
        if src == "public":
            return public_basis(k, p, components=self.public_components, public_data=self.public_data), eps, None
        if src == "split":
            if X is None:
                raise ParameterError("pca_source='split' needs the records (fit), not merged statistics (fit_stats)")
            mask = split_rows(X.shape[0], self.split_fraction, self.source_)
            b = laplace_basis(SufficientStats.from_matrix(X[mask]), k, eps, self.source_, self.noise_scales_)
            b.source = "split"
            b.notes.append(f"LapPCA on {int(mask.sum())} set-aside records with the full epsilon; the model uses "
                           f"the other {int((~mask).sum())}: parallel composition over a data-independent partition")
            return b, eps, ~mask
        if math.isinf(eps):

            c = public_centre(p)
            V = top_eigenvectors(centred_second_moment(stats, c), k).T.copy()
            return PCABasis(V, c, src + " (epsilon=inf: exact PCA)"), eps, None
        eps_pca = eps * self.pca_share
        if src == "laplace":
            b = laplace_basis(stats, k, eps_pca, self.source_, self.noise_scales_)
        else:
            b = analyze_gauss_basis(stats, k, eps_pca, float(self.delta), self.source_, self.noise_scales_)
        return b, eps - eps_pca, None

    def release_passes(self) -> str:
        """One pass over merged statistics unless the parameters need the records (a split basis,
        a clip radius) or the class has no ``fit_stats``."""
        if self.pca_source == "split" or self.clip_radius is not None:
            return "memory"
        return self.capabilities.passes

    def _radius(self, p: int) -> float:
        return float(self.clip_radius) if self.clip_radius is not None else math.sqrt(p) / 2.0

    def _declare_value_bound(self, n: int, p: int) -> None:
        """Public bound on every noised value, for the secure grid: ``n max(1, p, (R + 1/2)^2)``.

        Per record: counts 1; centred coordinates and targets ``|u_j| <= 1/2``, entries of
        ``u u^T`` at most 1/4 and its trace ``p / 4``; with empirical centring the
        eigenvalues of ``n C`` are at most ``n p``; projected ``|z_j| <= R``, entries of
        ``(z, t)(z, t)^T`` at most ``(R + 1/2)^2``; unit rows for Analyze Gauss.
        """
        self.source_.set_value_bound(float(n) * max(1.0, float(p), (self._radius(p) + 0.5) ** 2))

    def _project(self, basis: PCABasis, X):
        Z = basis.project(X)
        if self.clip_radius is not None:
            norms = np.linalg.norm(Z, axis=1)
            f = np.minimum(1.0, float(self.clip_radius) / np.maximum(norms, 1e-300))
            self.n_clipped_ = int((f < 1).sum())
            Z = Z * f[:, None]
        return Z

    @staticmethod
    def _reduced_stats(stats: SufficientStats, basis: PCABasis) -> SufficientStats:
        """Statistics of ``z = V (x - c)`` from those of ``x`` (no pass over the data)."""
        V, c = basis.components, basis.centre

        def red(s):
            out = SufficientStats(p=V.shape[0], n=s.n, s1=V @ (s.s1 - s.n * c),
                                  s2=V @ centred_second_moment(s, c) @ V.T)
            return out

        out = red(stats)
        out.classes = {k: red(v) for k, v in stats.classes.items()}
        return out

    def _residual(self, stats, basis, eps_res):
        """DP residual variance per coordinate outside the basis (probabilistic-PCA map back)."""
        p, k = basis.components.shape[1], basis.n_components
        S = centred_second_moment(stats, basis.centre)
        r = float(np.trace(S) - np.trace(basis.components @ S @ basis.components.T))
        self.sensitivities_["residual_l1"] = residual_sensitivity(p)
        noisy = self._laplace("residual", np.array([r]), residual_sensitivity(p), eps_res, coords=1)
        self.released_residual_ = float(noisy[0])
        return max(float(noisy[0]), 0.0) / (stats.n * max(p - k, 1))

    # -- noisy Gaussian moments -----------------------------------------------
    def _noisy_gaussian(self, s: SufficientStats, sens: dict, eps_mu: float, eps_sigma: float,
                        n_hat: float, key: str):
        k = s.p
        s1 = self._laplace(f"sums{key}", s.s1, sens["sums_l1"], eps_mu, coords=k)
        u = self._laplace(f"second_moments{key}", upper(s.s2), sens["second_moments_upper_l1"], eps_sigma,
                          coords=k * (k + 1) // 2)
        self.released_ = {"sums": s1, "second_moment_upper": u}
        mu = s1 / n_hat
        S = mirror(u, k) / n_hat - np.outer(mu, mu)
        return mu, psd_repair(S)

    # -- sampling -------------------------------------------------------------
    def _sample_reduced(self, mu, cov, m, gen):
        if m == 0:
            return np.zeros((0, mu.shape[0]))
        return gaussian_sample(gen, mu, cov, m)

    def _to_output(self, Z, gen):
        if self.output_space_ == "reduced":
            return Z
        basis = self.basis_
        X = basis.back(Z)
        if self.residual_var_ > 0:
            G = gen.standard_normal(X.shape) * math.sqrt(self.residual_var_)
            G -= (G @ basis.components.T) @ basis.components
            X += G
        return X

    def _finish_cost(self, eps: float, e: dict) -> None:
        """The budget split (a split basis costs epsilon on its own records, in parallel) and the cost."""
        if self.pca_source == "split":
            self.budget_split_ = {"basis (set-aside records, parallel)": eps, **{f"{k_} (model records)": v
                                                                                for k_, v in e.items()}}
        self.privacy_cost_ = PrivacyCost(eps, float(self.delta) if self.pca_source == "analyze-gauss"
                                         and self.is_private else 0.0)

    def _finish_common(self, basis, k):
        self.basis_ = basis
        self.components_ = basis.components
        self.centre_ = basis.centre
        if self.output_space_ == "reduced":
            self.output_columns_ = [f"pc{i + 1}" for i in range(k)]
        else:
            self.output_columns_ = None

    def private_diagnostics(self) -> dict:
        """The exact number of projected records clipped to the radius (changes with one record)."""
        n = getattr(self, "n_clipped_", None)
        return {} if n is None else {"projected_records_clipped": int(n)}

    def certificate_extra(self) -> dict:
        d = {
            "n_components": int(self.n_components),
            "pca_source": self.pca_source,
            "output_space": self.output_space_,
            "domain": "encoded [0, 1]^M, projected around the public centre 0.5 (paper: [-a, a])",
            "radius_R": self.radius_,
            "n_treated_as_public": True,
        }
        if self.output_space_ == "reduced":
            d["output_columns"] = "reduced space pc1..pcP (PCA coordinates around the public centre), not the "\
                                  "schema's columns"
        if getattr(self, "basis_", None) is not None:
            d["basis_notes"] = list(self.basis_.notes)
        return d


_COMMON_DOC = """
    n_components : int, default 5
        P, the reduced dimension.
    pca_source : {{{sources}}}, default {default!r}
        Where the basis comes from (see :mod:`privrelease.mechanisms.pca_gauss.basis`).
    pca_share : float in (0, 1), default 0.2
        Share of epsilon spent on the basis for ``laplace`` / ``analyze-gauss`` (ignored otherwise).
    delta : float or None
        Needed (and only used) with ``pca_source="analyze-gauss"``, which makes the
        release (epsilon, delta)-DP (erratum E15).
    public_components, public_data : optional public input for ``pca_source="public"``:
        a ``(P, M)`` array or a ``.npy``/``.csv`` path, or an encoded matrix of public records.
    split_fraction : float in (0, 1), default 0.1
        Share of records set aside for LapPCA with ``pca_source="split"`` (parallel composition).
    clip_radius : float or None, default None
        If given, each projected record is scaled to L2 norm <= clip_radius and the
        sensitivities use it; None uses the bound sqrt(M)/2 implied by the domain.
    output_space : "original", "reduced" or "auto"
        "original" maps samples back with the basis and the public centre (plus a DP
        residual variance outside the basis) and decodes through the schema; "reduced"
        releases the P coordinates (columns pc1..pcP).
    model_shares : dict or None
        Relative shares of the model budget (defaults in the class's ``default_shares``).
    domain, rng : see :class:`~privrelease.mechanisms.base.Mechanism`.
"""


def gaussian_sample(gen: np.random.Generator, mean: np.ndarray, cov: np.ndarray, m: int) -> np.ndarray:
    """``m`` draws from ``N(mean, cov)`` via :func:`~privrelease.linalg.psd_sqrt` (robust for badly scaled PSD input).

    Post-processing only. Negative eigenvalues (rounding) are set to zero.
    """
    return mean + gen.standard_normal((int(m), mean.shape[0])) @ psd_sqrt(cov).T
