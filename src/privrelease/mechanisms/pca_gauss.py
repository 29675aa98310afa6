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

import math
from typing import ClassVar

import numpy as np

from ..engine.stats import SufficientStats
from ..errors import InputDataError, ParameterError
from ..dp.rounding import largest_remainder
from ..dp.sensitivities import gram_upper_l1
from ..linalg import mirror, psd_repair, psd_sqrt, sorted_eigh, top_eigenvectors, upper
from .base import R1, R1_LABEL, Capabilities, SyntheticMechanism
from .pca_basis import (
    PCA_SOURCES,
    PCABasis,
    analyze_gauss_basis,
    centred_second_moment,
    laplace_basis,
    public_basis,
    public_centre,
    split_rows,
)
from ..dp.costs import PrivacyCost, check_delta

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
        if src in ("laplace", "analyze-gauss"):
            self._check_fraction(self.pca_share, "pca_share")
        if src == "split":
            self._check_fraction(self.split_fraction, "split_fraction")
        if src != "analyze-gauss" and self.delta not in (None, 0, 0.0):
            raise ParameterError(f"delta is only used with pca_source='analyze-gauss' (pca_source={src!r} is "
                                 f"pure epsilon-DP); leave it unset")
        if src == "analyze-gauss":
            if self.delta is None:
                raise ParameterError("pca_source='analyze-gauss' is (epsilon, delta)-DP: give delta (e.g. 1e-5)")
            check_delta(self.delta)
            if self.delta == 0:
                raise ParameterError("pca_source='analyze-gauss' needs delta > 0")
        if self.output_space not in OUTPUT_SPACES:
            raise ParameterError(f"output_space must be one of {OUTPUT_SPACES}, got {self.output_space!r}")
        if self.clip_radius is not None and not (isinstance(self.clip_radius, (int, float)) and self.clip_radius > 0):
            raise ParameterError(f"clip_radius must be a positive number or None, got {self.clip_radius!r}")
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
        Where the basis comes from (see :mod:`privrelease.mechanisms.pca_basis`).
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


# ---- Algorithm 1 --------------------------------------------------------------------

class PCAGauss(_PCAGaussBase):
    __doc__ = """PCA-Gauss Algorithm 1 (unsupervised): a DP Gaussian model of PCA-reduced records.

    Parameters
    ----------
    epsilon : float in (0, inf]
        Total budget (basis + model). ``inf``: no noise (exact PCA and moments).
    centre : "public" or "empirical", default "public"
        For ``pca_source="same-data"`` only: centre at the public midpoint or at the empirical mean.
""" + _COMMON_DOC.format(sources="'same-data', 'laplace', 'analyze-gauss', 'public', 'split'",
                         default="same-data") + """
    Notes
    -----
    Guarantee: epsilon-DP under R1 (bounded, n public); (epsilon, delta)-DP with
    ``pca_source="analyze-gauss"`` (the certificate then says so).

    ``pca_source="same-data"`` (the paper's Algorithm 1, corrected, ALGORITHMS.md 3.3).
    With ``V`` the eigenvectors of ``S = sum u u^T`` on the same data, ``V^T S V / N`` is
    exactly diagonal, so only the top-P eigenvalues carry information. They get
    ``Lap(Delta / eps)`` with ``Delta = min(P, 2) M / 4`` (public centre) or
    ``min(P, 2) M (N-1)/N`` (empirical centre), both in the scale of ``S`` (see
    :func:`spectrum_sensitivity`; the paper's constant ignores the empirical centring, E9,
    and noises zero entries, E10). Samples ``N(0, diag(lambda^) / N)`` in the reduced space,
    columns ``pc1..pcP``; the basis is not released, so no map back (E10 caveat: the
    synthetic data carry no directions).

    Independent basis. ``z = V(x - c)`` (optionally clipped); release ``sum z +
    Lap(2 sqrt(P) R / eps_mu)`` and ``upper(sum z z^T) + Lap(P R^2 / eps_Sigma)``
    (:func:`moment_sensitivities`), ``mu = S1/N``, ``Sigma = PSD(S2/N - mu mu^T)``;
    with output in the original space, also the residual variance (:func:`residual_sensitivity`).
    Default shares of the model budget: mean 0.1, covariance 0.85, residual 0.05.
    Sequential composition with the basis cost (parallel for ``split``).
    Cost ``O(N M^2 + M^3 + N_syn P^2)``.
    """

    name: ClassVar[str] = "pca-gauss"
    relation: ClassVar[str] = R1
    summary: ClassVar[str] = ("PCA-Gauss Alg. 1: DP Gaussian on PCA-reduced data; by default (same-data spectrum) "
                              "columns pc1..pcP, NOT the schema's; an independent LapPCA/AG-PCA/public/split "
                              "basis gives the schema's columns")
    columns: ClassVar[str] = ("pc1..pcP, the reduced space, NOT the schema's columns, with the default "
                              "pca_source=same-data (no basis is released, so nothing maps back); the schema's "
                              "columns with --param pca_source=laplace (or analyze-gauss, public, split)")
    default_shares: ClassVar[dict] = {"mean": 0.10, "covariance": 0.85, "residual": 0.05}

    def __init__(self, epsilon=1.0, *, n_components=5, pca_source="same-data", pca_share=0.2, delta=None,
                 public_components=None, public_data=None, split_fraction=0.1, clip_radius=None,
                 output_space="auto", centre="public", model_shares=None, domain=None, rng=None):
        self.epsilon = epsilon
        self.n_components = n_components
        self.pca_source = pca_source
        self.pca_share = pca_share
        self.delta = delta
        self.public_components = public_components
        self.public_data = public_data
        self.split_fraction = split_fraction
        self.clip_radius = clip_radius
        self.output_space = output_space
        self.centre = centre
        self.model_shares = model_shares
        self.domain = domain
        self.rng = rng

    def fit(self, X, y=None):
        eps, X, _, dom = self._check_common(X)
        return self._fit(eps, dom, X, SufficientStats.from_matrix(X))

    def fit_stats(self, stats: SufficientStats, p=None):
        eps, _, _, dom = self._check_common(None, p=stats.p)
        return self._fit(eps, dom, None, stats)

    def _fit(self, eps, dom, X, stats):
        k = self._validate(dom.p)
        if self.centre not in ("public", "empirical"):
            raise ParameterError(f"centre must be 'public' or 'empirical', got {self.centre!r}")
        if stats.n < 2:
            raise InputDataError("pca-gauss needs at least 2 records")
        self.output_space_ = self._out_space()
        self.domain_ = dom
        self._declare_value_bound(stats.n, dom.p)
        self.sensitivities_, self.noise_scales_, self.budget_split_ = {}, {}, {}
        self.residual_var_ = 0.0
        self.n_ = stats.n
        self.guarantee = "(epsilon,delta)-DP" if self.pca_source == "analyze-gauss" and self.is_private \
            else type(self).guarantee
        if self.pca_source == "same-data":
            self._fit_same_data(eps, dom, X, stats, k)
            self._set_cost(eps)
            return self
        basis, eps_model, mask = self._basis(X, stats, eps, k, dom)
        self.sensitivities_.update(basis.sensitivities)
        self.noise_scales_.update(basis.noise_scales)
        if basis.cost.epsilon > 0 and self.pca_source != "split":
            self.budget_split_["basis"] = basis.cost.epsilon
        R = self._radius(dom.p)
        self.radius_ = R
        if X is not None:
            Xm = X if mask is None else X[mask]
            zs = SufficientStats.from_matrix(self._project(basis, Xm))
            base_stats = stats if mask is None else SufficientStats.from_matrix(Xm)
        else:
            if self.clip_radius is not None:
                raise ParameterError("clip_radius needs the records (fit), not merged statistics (fit_stats)")
            zs = self._reduced_stats(stats, basis)
            base_stats = stats
        shares = self._shares(self.output_space_ == "original")
        e = {k_: eps_model * v for k_, v in shares.items()}
        sens = moment_sensitivities(k, R, class_change=False)
        self.sensitivities_.update({"sums_l1": sens["sums_l1"],
                                    "second_moments_upper_l1": sens["second_moments_upper_l1"]})
        self.budget_split_.update(e)
        n = zs.n
        if math.isinf(eps):
            self.mean_, self.covariance_ = zs.mean, psd_repair(zs.covariance)
        else:
            self.mean_, self.covariance_ = self._noisy_gaussian(zs, sens, e["mean"], e["covariance"], n, "")
        if self.output_space_ == "original":
            self.residual_var_ = self._exact_residual(base_stats, basis) if math.isinf(eps) else \
                self._residual(base_stats, basis, e["residual"])
        self._finish_common(basis, k)
        if self.pca_source == "split":
            self.budget_split_ = {"basis (set-aside records, parallel)": eps, **{f"{k_} (model records)": v
                                                                                for k_, v in e.items()}}
        cost = PrivacyCost(eps, float(self.delta) if self.pca_source == "analyze-gauss" and self.is_private else 0.0)
        self.privacy_cost_ = cost
        return self

    @staticmethod
    def _exact_residual(stats, basis):
        S = centred_second_moment(stats, basis.centre)
        p, k = basis.components.shape[1], basis.n_components
        r = float(np.trace(S) - np.trace(basis.components @ S @ basis.components.T))
        return max(r, 0.0) / (stats.n * max(p - k, 1))

    def _fit_same_data(self, eps, dom, X, stats, k):
        n = stats.n
        emp = self.centre == "empirical"
        S = stats.covariance * n if emp else centred_second_moment(stats, public_centre(dom.p))
        lam, _ = sorted_eigh(S, k)
        sens = spectrum_sensitivity(k, dom.p, emp, n)
        self.sensitivities_, self.noise_scales_ = {"spectrum_l1": sens}, {}
        noisy = self._laplace("spectrum", lam, sens, eps, coords=k)
        self.budget_split_ = {"spectrum": eps}
        self.released_ = {"spectrum_sum_scale": noisy}
        self.spectrum_ = np.maximum(noisy / n, 0.0)
        self.mean_ = np.zeros(k)
        self.covariance_ = np.diag(np.maximum(self.spectrum_, 1e-12))
        self.radius_ = math.sqrt(dom.p) / 2.0
        self.basis_ = None
        self.output_columns_ = [f"pc{i + 1}" for i in range(k)]

    def sample(self, n: int):
        gen = self.source_.generator
        Z = self._sample_reduced(self.mean_, self.covariance_, int(n), gen)
        if self.pca_source == "same-data":
            return Z, None
        return self._to_output(Z, gen), None


# ---- Algorithm 2 --------------------------------------------------------------------

class PCAGaussSupervised(_PCAGaussBase):
    __doc__ = """PCA-Gauss Algorithm 2 (regression): joint Gaussian of projected features and the target.

    Parameters
    ----------
    epsilon : float in (0, inf]
""" + _COMMON_DOC.format(sources="'laplace', 'analyze-gauss', 'public', 'split'", default="laplace") + """
    Notes
    -----
    Guarantee: epsilon-DP under R1 (one record, target included, replaced; n public);
    (epsilon, delta)-DP with ``pca_source="analyze-gauss"``.

    ``fit(X, y)`` takes the encoded features X and the encoded target ``y in [0, 1]``
    (the schema's ``role: target`` column). ``w = (V (x - c), y - 1/2)``; the basis is
    independent of the model (public, or DP and paid from the budget: with a same-data
    basis every projected record changes when one record changes, Prop. 4). Release
    ``sum w + Lap(Delta_1 / eps_mu)`` and ``upper(sum w w^T) + Lap(Delta_2 / eps_Sigma)``
    with ``Delta_1 = 2 sqrt(P) R + 1`` and ``Delta_2 = P R^2 + sqrt(P) R + 1/4``
    (:func:`moment_sensitivities`, target variant). The paper's ``(P^2 + 4P + 1) a^2 / N``
    holds for uncentred box data but its centred use is wrong (E9); ours is derived for
    the domain actually used. Samples ``(z, t) ~ N(mu, PSD(Sigma))``; the target is
    returned as ``y`` (encoded, clipped to [0, 1]). Default shares: mean 0.1, covariance
    0.85, residual 0.05.
    """

    name: ClassVar[str] = "pca-gauss-supervised"
    relation: ClassVar[str] = "bounded (R1): one record replaced, its target included; n public"
    capabilities: ClassVar[Capabilities] = Capabilities(passes="memory", samples_in_chunks=True, needs_target=True,
                                                        estimates_covariance=True)
    contract_release: ClassVar[bool] = False  # needs a 'role: target' column (tested in tests/unit/test_pca_gauss.py)
    summary: ClassVar[str] = "PCA-Gauss Alg. 2: DP joint Gaussian of (independent-PCA features, target)"
    columns: ClassVar[str] = "the schema's columns (pc1..pcP and the target with --param output_space=reduced)"
    default_shares: ClassVar[dict] = {"mean": 0.10, "covariance": 0.85, "residual": 0.05}

    def __init__(self, epsilon=1.0, *, n_components=5, pca_source="laplace", pca_share=0.2, delta=None,
                 public_components=None, public_data=None, split_fraction=0.1, clip_radius=None,
                 output_space="original", model_shares=None, domain=None, rng=None):
        self.epsilon = epsilon
        self.n_components = n_components
        self.pca_source = pca_source
        self.pca_share = pca_share
        self.delta = delta
        self.public_components = public_components
        self.public_data = public_data
        self.split_fraction = split_fraction
        self.clip_radius = clip_radius
        self.output_space = output_space
        self.model_shares = model_shares
        self.domain = domain
        self.rng = rng

    def fit(self, X, y=None):
        eps, X, _, dom = self._check_common(X)
        if y is None:
            raise InputDataError("pca-gauss-supervised needs a target y (a 'role: target' column in the schema)")
        y = np.asarray(y, dtype=np.float64).ravel()
        if y.shape[0] != X.shape[0]:
            raise InputDataError("X and y have different numbers of records")
        if not np.all(np.isfinite(y)) or y.min() < -1e-12 or y.max() > 1 + 1e-12:
            raise InputDataError("the target must be encoded into [0, 1]")
        k = self._validate(dom.p)
        self.output_space_ = self._out_space()
        self.domain_ = dom
        self._declare_value_bound(X.shape[0], dom.p)
        self.sensitivities_, self.noise_scales_, self.budget_split_ = {}, {}, {}
        self.guarantee = "(epsilon,delta)-DP" if self.pca_source == "analyze-gauss" and self.is_private \
            else type(self).guarantee
        stats = SufficientStats.from_matrix(X)
        basis, eps_model, mask = self._basis(X, stats, eps, k, dom)
        self.sensitivities_.update(basis.sensitivities)
        self.noise_scales_.update(basis.noise_scales)
        if basis.cost.epsilon > 0 and self.pca_source != "split":
            self.budget_split_["basis"] = basis.cost.epsilon
        Xm, ym = (X, y) if mask is None else (X[mask], y[mask])
        R = self._radius(dom.p)
        self.radius_ = R
        W = np.column_stack([self._project(basis, Xm), ym - 0.5])
        ws = SufficientStats.from_matrix(W)
        shares = self._shares(self.output_space_ == "original")
        e = {k_: eps_model * v for k_, v in shares.items()}
        sens = moment_sensitivities(k, R, target=True, class_change=False)
        self.sensitivities_.update({"sums_l1": sens["sums_l1"],
                                    "second_moments_upper_l1": sens["second_moments_upper_l1"]})
        self.budget_split_.update(e)
        if math.isinf(eps):
            self.mean_, self.covariance_ = ws.mean, psd_repair(ws.covariance)
            self.residual_var_ = PCAGauss._exact_residual(SufficientStats.from_matrix(Xm), basis) \
                if self.output_space_ == "original" else 0.0
        else:
            self.mean_, self.covariance_ = self._noisy_gaussian(ws, sens, e["mean"], e["covariance"], ws.n, "")
            self.residual_var_ = self._residual(SufficientStats.from_matrix(Xm), basis, e["residual"]) \
                if self.output_space_ == "original" else 0.0
        self._finish_common(basis, k)
        if self.pca_source == "split":
            self.budget_split_ = {"basis (set-aside records, parallel)": eps, **{f"{k_} (model records)": v
                                                                                for k_, v in e.items()}}
        self.privacy_cost_ = PrivacyCost(eps, float(self.delta) if self.pca_source == "analyze-gauss"
                                         and self.is_private else 0.0)
        return self

    def sample(self, n: int):
        gen = self.source_.generator
        W = self._sample_reduced(self.mean_, self.covariance_, int(n), gen)
        Z, t = W[:, :-1], np.clip(W[:, -1] + 0.5, 0.0, 1.0)
        return self._to_output(Z, gen), t


# ---- Algorithm 3 --------------------------------------------------------------------

class PCAGMM(_PCAGaussBase):
    __doc__ = """PCA-Gauss Algorithm 3, corrected: a DP Gaussian mixture (one Gaussian per class).

    Parameters
    ----------
    epsilon : float in (0, inf]
    n_classes : int or None
        Size of the public label set (codes 0..C-1). None: ``max(y) + 1`` (noted in the
        certificate, since it is read from the data).
""" + _COMMON_DOC.format(sources="'laplace', 'analyze-gauss', 'public', 'split'", default="laplace") + """
    Notes
    -----
    Guarantee: epsilon-DP under R1 with the label inside the record (a replacement may
    move a record between classes); (epsilon, delta)-DP with ``pca_source="analyze-gauss"``.

    The paper's Algorithm 3 is not DP (E13): the private class size ``N_c`` sits in the
    noise scale (T7), ``N_c`` records are synthesized per class, and class-centring adds
    the factor of T4; its parallel composition over classes needs add/remove neighbours
    (E8). Corrected version (ALGORITHMS.md 3.5), with ``z = V (x - c)``:

    1. In one pass over the data: per class, ``n_c``, ``sum z`` and ``sum z z^T``
       (:class:`~privrelease.engine.SufficientStats`; ``fit_stats`` does it from merged
       statistics of ``x`` for the streaming path).
    2. ``n_c + Lap(2 / eps_N)``, ``sum z + Lap(2 sqrt(P) R / eps_mu)``,
       ``upper(sum z z^T) + Lap((P + 1) R^2 / eps_Sigma)`` for every class; these L1
       bounds hold for the concatenation over classes, a record moving class included
       (:func:`moment_sensitivities`); every scale is data-independent.
    3. ``n^_c = max(1, noisy count)``, ``mu_c = S1^_c / n^_c``,
       ``Sigma_c = PSD(S2^_c / n^_c - mu_c mu_c^T)``; ``round(N_syn n^_c / sum n^)`` samples
       per class (largest remainder), labelled ``c``.

    Default shares of the model budget: counts 0.05, means 0.10, covariances 0.80,
    residual 0.05 (residual only for output in the original space; otherwise the
    others are renormalised). Sequential with the basis cost (parallel for ``split``).
    Cost ``O(N M^2 + M^3 + C P^3 + N_syn P^2)`` (``O(N M P)`` with a given basis in memory).
    """

    name: ClassVar[str] = "pca-gmm"
    relation: ClassVar[str] = R1_LABEL
    supervised: ClassVar[bool] = True
    summary: ClassVar[str] = ("PCA-Gauss Alg. 3 corrected: DP Gaussian mixture per class on independent-PCA "
                              "features (noisy counts, sums, second moments)")
    columns: ClassVar[str] = "the schema's columns (pc1..pcP and the label with --param output_space=reduced)"
    default_shares: ClassVar[dict] = {"counts": 0.05, "mean": 0.10, "covariance": 0.80, "residual": 0.05}

    def __init__(self, epsilon=1.0, *, n_components=5, pca_source="laplace", pca_share=0.2, delta=None,
                 public_components=None, public_data=None, split_fraction=0.1, clip_radius=None,
                 output_space="original", n_classes=None, model_shares=None, domain=None, rng=None):
        self.epsilon = epsilon
        self.n_components = n_components
        self.pca_source = pca_source
        self.pca_share = pca_share
        self.delta = delta
        self.public_components = public_components
        self.public_data = public_data
        self.split_fraction = split_fraction
        self.clip_radius = clip_radius
        self.output_space = output_space
        self.n_classes = n_classes
        self.model_shares = model_shares
        self.domain = domain
        self.rng = rng

    def _labels(self, y, n):
        y = np.asarray(y)
        if y.shape[0] != n:
            raise InputDataError("X and y have different numbers of records")
        if not np.issubdtype(y.dtype, np.integer):
            if not np.all(np.isfinite(y.astype(float))) or np.any(y.astype(float) != np.round(y.astype(float))):
                raise InputDataError("pca-gmm needs integer class codes 0..C-1 as y")
            y = y.astype(np.int64)
        if y.size and y.min() < 0:
            raise InputDataError("class codes must be >= 0")
        return y

    def _n_classes(self, observed_max):
        if self.n_classes is None:
            self.notes_ = ["label set size read from the data (max code + 1): declare n_classes (the public "
                           "label set) to avoid it"]
            return int(observed_max) + 1
        C = self._check_int(self.n_classes, "n_classes", 1)
        if observed_max >= C:
            raise InputDataError(f"a class code {observed_max} is >= n_classes = {C}")
        return C

    def fit(self, X, y=None):
        eps, X, y, dom = self._check_common(X, y)
        y = self._labels(y, X.shape[0])
        self.notes_ = []
        C = self._n_classes(int(y.max(initial=0)))
        stats = SufficientStats.from_matrix(X, y, C)
        return self._fit(eps, dom, X, y, stats, C)

    def fit_stats(self, stats: SufficientStats, p=None):
        # labels live inside the per-class statistics
        eps, _, _, dom = self._check_common(None, y=np.zeros(0, dtype=np.int64), p=stats.p)
        self.notes_ = []
        if not stats.classes:
            raise InputDataError("pca-gmm needs per-class statistics (a label column)")
        C = self._n_classes(max(stats.classes))
        return self._fit(eps, dom, None, None, stats, C)

    def _fit(self, eps, dom, X, y, stats, C):
        k = self._validate(dom.p)
        self.output_space_ = self._out_space()
        self.domain_ = dom
        self._declare_value_bound(stats.n, dom.p)
        self.sensitivities_, self.noise_scales_, self.budget_split_ = {}, {}, {}
        self.n_ = stats.n
        self.classes_ = np.arange(C)
        self.guarantee = "(epsilon,delta)-DP" if self.pca_source == "analyze-gauss" and self.is_private \
            else type(self).guarantee
        basis, eps_model, mask = self._basis(X, stats, eps, k, dom)
        self.sensitivities_.update(basis.sensitivities)
        self.noise_scales_.update(basis.noise_scales)
        if basis.cost.epsilon > 0 and self.pca_source != "split":
            self.budget_split_["basis"] = basis.cost.epsilon
        R = self._radius(dom.p)
        self.radius_ = R
        if X is not None:
            Xm, ym = (X, y) if mask is None else (X[mask], y[mask])
            zs = SufficientStats.from_matrix(self._project(basis, Xm), ym, C)
            base_stats = stats if mask is None else SufficientStats.from_matrix(Xm)
        else:
            if self.clip_radius is not None:
                raise ParameterError("clip_radius needs the records (fit), not merged statistics (fit_stats)")
            zs = self._reduced_stats(stats, basis)
            base_stats = stats
        shares = self._shares(self.output_space_ == "original")
        e = {k_: eps_model * v for k_, v in shares.items()}
        sens = moment_sensitivities(k, R)
        self.sensitivities_.update(sens)
        self.budget_split_.update(e)
        empty = SufficientStats(p=k)
        per = [zs.classes.get(c, empty) for c in range(C)]
        counts = np.array([s.n for s in per], dtype=np.float64)
        if math.isinf(eps):
            n_hat = np.maximum(counts, 1.0)
            self.means_ = np.array([s.s1 / h for s, h in zip(per, n_hat)])
            self.covariances_ = np.array([psd_repair(s.s2 / h - np.outer(m, m))
                                          for s, h, m in zip(per, n_hat, self.means_)])
        else:
            noisy_counts = self._laplace("counts", counts, sens["counts_l1"], e["counts"], coords=C)
            n_hat = np.maximum(noisy_counts, 1.0)
            # all class sums in one Laplace release, all class second moments in another
            S1 = np.concatenate([s.s1 for s in per])
            U = np.concatenate([upper(s.s2) for s in per])
            S1n = self._laplace("sums", S1, sens["sums_l1"], e["mean"], coords=k)
            Un = self._laplace("second_moments", U, sens["second_moments_upper_l1"], e["covariance"],
                               coords=k * (k + 1) // 2)
            self.released_ = {"counts": noisy_counts, "sums": S1n, "second_moment_upper": Un}
            m = k * (k + 1) // 2
            self.means_ = S1n.reshape(C, k) / n_hat[:, None]
            self.covariances_ = np.array([
                psd_repair(mirror(Un[c * m:(c + 1) * m], k) / n_hat[c] - np.outer(self.means_[c], self.means_[c]))
                for c in range(C)])
        self.class_counts_ = n_hat
        self.weights_ = n_hat / n_hat.sum()
        if self.output_space_ == "original":
            self.residual_var_ = PCAGauss._exact_residual(base_stats, basis) if math.isinf(eps) else \
                self._residual(base_stats, basis, e["residual"])
        else:
            self.residual_var_ = 0.0
        self._finish_common(basis, k)
        if self.pca_source == "split":
            self.budget_split_ = {"basis (set-aside records, parallel)": eps, **{f"{k_} (model records)": v
                                                                                for k_, v in e.items()}}
        self.privacy_cost_ = PrivacyCost(eps, float(self.delta) if self.pca_source == "analyze-gauss"
                                         and self.is_private else 0.0)
        return self

    def sample(self, n: int):
        gen = self.source_.generator
        m = largest_remainder(self.weights_, int(n))
        Zs, ys = [], []
        for c, mc in enumerate(m):
            Zs.append(self._sample_reduced(self.means_[c], self.covariances_[c], int(mc), gen))
            ys.append(np.full(int(mc), c, dtype=np.int64))
        Z, y = np.vstack(Zs), np.concatenate(ys)
        perm = gen.permutation(Z.shape[0])
        return self._to_output(Z[perm], gen), y[perm]

    def certificate_extra(self) -> dict:
        d = super().certificate_extra()
        d["n_classes"] = int(len(self.classes_))
        d["class_counts"] = "noisy (released): " + ", ".join(f"{v:.1f}" for v in self.class_counts_)
        return d


def gaussian_sample(gen: np.random.Generator, mean: np.ndarray, cov: np.ndarray, m: int) -> np.ndarray:
    """``m`` draws from ``N(mean, cov)`` via :func:`~privrelease.linalg.psd_sqrt` (robust for badly scaled PSD input).

    Post-processing only. Negative eigenvalues (rounding) are set to zero.
    """
    return mean + gen.standard_normal((int(m), mean.shape[0])) @ psd_sqrt(cov).T
