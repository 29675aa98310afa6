"""Baselines of the PCA-Gauss experiments (Chanyaswad et al., ALGORITHMS.md 3.10).

* ``compressive`` - Li et al. 2011 as used in 002: Bernoulli random projection of the
  identity query plus Laplace noise (row-aligned).
* ``jiang-public`` - Jiang et al.'s identity release in public components (PubPCA / PubLDA).
* ``modips`` - Liu 2016, Gaussian instantiation with a posterior draw (per class with labels).
* ``blocki-jl`` - Blocki et al. 2012 JL transform of the data matrix + Gaussian model.
* ``blr`` - Blum-Ligett-Roth exponential mechanism over a data-independent candidate pool.

Domain for every sensitivity: encoded rows ``x in [0, 1]^M`` (the paper's [-a, a] box with
``a = 1/2`` after subtracting the public centre ``c = 0.5``); one-hot blocks use the
encoder's ``max_l1_diff = p1 + 2 p2`` / ``max_l2_diff``.
Labels (classification) for row-aligned baselines: :func:`randomized_response`.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from ..engine.stats import SufficientStats
from ..errors import InputDataError, ParameterError
from ..dp.rounding import largest_remainder
from ..dp.selection import exponential_mechanism
from ..dp.sensitivities import box_second_moment_l1
from ..linalg import mirror, psd_repair, top_eigenvectors, upper
from .base import R1, R1_LABEL, DataIndependentFit, RowAlignedMechanism, SyntheticMechanism
from .pca_basis import CENTRE, load_public_components
from .pca_gauss import gaussian_sample
from ..dp.costs import PrivacyCost, check_delta


def randomized_response(y, n_classes: int, epsilon: float, source) -> np.ndarray:
    """k-ary randomized response: keep the label w.p. ``e^eps / (e^eps + k - 1)``, else a uniform other one.

    epsilon-DP per record (the ratio of output probabilities is at most ``e^eps``);
    records are handled independently, so the whole vector is epsilon-DP under R1.
    Uses ``source.uniform`` for the coin flips.
    """
    y = np.asarray(y, dtype=np.int64)
    k = int(n_classes)
    if math.isinf(epsilon) or k < 2:
        return y.copy()
    keep = math.exp(epsilon) / (math.exp(epsilon) + k - 1)
    u = source.uniform(y.shape[0])
    other = np.floor(source.uniform(y.shape[0]) * (k - 1)).astype(np.int64)
    other = np.minimum(other, k - 2)
    other = other + (other >= y)  # uniform over the k - 1 other labels
    return np.where(u < keep, y, other)


# ---- row-aligned projections ---------------------------------------------------------

class _ProjectedIdentity(DataIndependentFit, RowAlignedMechanism):
    """``Y = (X - c) W^T + Lap(Delta / eps)``, W public; map back with the pseudo-inverse."""

    def _finish(self, eps, dom, W, sens):
        self.components_ = W
        self.domain_ = dom
        self.sensitivities_ = {"projected_row_l1": sens}
        self.budget_split_ = {"projected rows (each record, parallel)": eps}
        # public bound of a projected value: |w . (x - c)| <= ||w|| sqrt(p) / 2
        self.projection_bound_ = float(np.linalg.norm(W, axis=1).max(initial=0.0)) * math.sqrt(dom.p) / 2.0 or 1.0
        with self.source_.value_bound(self.projection_bound_):
            scale = self.source_.laplace_noise_scale(sens, eps, W.shape[0])
        self.noise_scales_ = {"projected_rows": scale}
        self._set_cost(eps)
        self.output_columns_ = [f"r{i + 1}" for i in range(W.shape[0])] if self.output_space == "reduced" else None

    def transform(self, X):
        X = np.asarray(X, dtype=np.float64)
        Y = (X - CENTRE) @ self.components_.T
        with self.source_.value_bound(self.projection_bound_):
            Y, _ = self.source_.add_laplace(Y, self.sensitivities_["projected_row_l1"], self.privacy_cost_.epsilon,
                                            coords=Y.shape[1])
        if self.output_space == "reduced":
            return Y
        return Y @ np.linalg.pinv(self.components_).T + CENTRE

    def _check_space(self):
        if self.output_space not in ("original", "reduced"):
            raise ParameterError(f"output_space must be 'original' or 'reduced', got {self.output_space!r}")


def compressive_sensitivity(domain, k: int) -> float:
    """``||R (x - x')||_1 <= sum_i ||r_i||_inf ||x - x'||_1 = sqrt(k) (p1 + 2 p2)`` for ``R in {+-1/sqrt(k)}``.

    The 002 adaptation's ``2 a M sqrt(P)`` with ``a = 1/2`` (valid; R is public).
    """
    return math.sqrt(k) * domain.max_l1_diff


class Compressive(_ProjectedIdentity):
    """Li et al. 2011 compressive mechanism as used by PCA-Gauss: Bernoulli projection of each record.

    Parameters
    ----------
    epsilon : float in (0, inf]
    n_components : int, default 10
        k, the number of projected coordinates.
    output_space : "original" (default; least-squares map back, ``R^+``) or "reduced".
    domain, rng

    Notes
    -----
    Guarantee: epsilon-DP under R1 (each released row depends on one record; parallel
    composition over records). ``R in {+1/sqrt(k), -1/sqrt(k)}^{k x M}`` is drawn from the
    post-processing generator, independent of the data, and is public (``components_``).
    Sensitivity: :func:`compressive_sensitivity`. The original mechanism (a sparse
    count vector decoded by L1 minimisation, add/remove neighbours) does not apply to
    record-level release; this is the adaptation of 002 (ALGORITHMS.md 3.10.1, [A]).
    Cost ``O(N M k)``.
    """

    name: ClassVar[str] = "compressive"
    summary: ClassVar[str] = "Li et al. 2011 as in PCA-Gauss: Bernoulli random projection of each record + Laplace"

    def __init__(self, epsilon=1.0, *, n_components=10, output_space="original", domain=None, rng=None):
        self.epsilon = epsilon
        self.n_components = n_components
        self.output_space = output_space
        self.domain = domain
        self.rng = rng

    def _fit_domain(self, eps, dom):
        self._check_space()
        k = self._check_int(self.n_components, "n_components", 1)
        W = np.where(self.source_.generator.random((k, dom.p)) < 0.5, -1.0, 1.0) / math.sqrt(k)
        self._finish(eps, dom, W, compressive_sensitivity(dom, k))
        return self


def projection_l1_sensitivity(domain, k: int) -> float:
    """``||V (x - x')||_1 <= sqrt(k) ||x - x'||_2 <= sqrt(k (p1 + 2 p2))`` for orthonormal rows (T6)."""
    return math.sqrt(k) * domain.max_l2_diff


class JiangPublic(_ProjectedIdentity):
    """Jiang et al.'s identity release in public components (PubPCA / PubLDA baselines of 002).

    Parameters
    ----------
    epsilon : float in (0, inf]
    n_components : int, default 10 (PubLDA: at most C - 1)
    public_components : (k, M) array or .npy/.csv path, or None
    public_data : encoded public records (used when public_components is None)
    public_labels : class codes of the public records (PubLDA)
    method : "pca" (default) or "lda"
    output_space : "original" or "reduced"
    domain, rng

    Notes
    -----
    Guarantee: epsilon-DP under R1. ``V`` (orthonormal rows) comes from public input only.
    Each row ``V (x - c) + Lap(sqrt(k) sqrt(p1 + 2 p2) / eps)`` (T6); rows are released
    independently (parallel composition). LDA directions are orthonormalised (QR).
    """

    name: ClassVar[str] = "jiang-public"
    contract_release: ClassVar[bool] = False  # needs public components of the table's encoded width
    summary: ClassVar[str] = "Jiang et al. identity query in public PCA/LDA components (PubPCA/PubLDA) + Laplace"

    def __init__(self, epsilon=1.0, *, n_components=10, public_components=None, public_data=None,
                 public_labels=None, method="pca", output_space="original", domain=None, rng=None):
        self.epsilon = epsilon
        self.n_components = n_components
        self.public_components = public_components
        self.public_data = public_data
        self.public_labels = public_labels
        self.method = method
        self.output_space = output_space
        self.domain = domain
        self.rng = rng

    def _fit_domain(self, eps, dom):
        self._check_space()
        k = self._check_int(self.n_components, "n_components", 1, dom.p)
        if self.public_components is not None:
            W = load_public_components(self.public_components, dom.p)[:k]
        elif self.public_data is not None:
            Xp = np.asarray(self.public_data, dtype=np.float64)
            if Xp.ndim != 2 or Xp.shape[1] != dom.p:
                raise InputDataError(f"public_data must have {dom.p} columns")
            if self.method == "lda":
                if self.public_labels is None:
                    raise ParameterError("method='lda' needs public_labels")
                from sklearn.discriminant_analysis import LinearDiscriminantAnalysis

                lda = LinearDiscriminantAnalysis(solver="eigen", shrinkage="auto").fit(Xp, self.public_labels)
                W = load_public_components(lda.scalings_[:, :k].T, dom.p)
            elif self.method == "pca":
                U = Xp - Xp.mean(0)
                W = top_eigenvectors(U.T @ U, k).T.copy()
            else:
                raise ParameterError(f"method must be 'pca' or 'lda', got {self.method!r}")
        else:
            raise ParameterError("jiang-public needs public_components or public_data")
        k = W.shape[0]
        self._finish(eps, dom, W, projection_l1_sensitivity(dom, k))
        return self


# ---- MODIPS ----------------------------------------------------------------------------

def modips_sensitivities(domain, class_change: bool) -> dict:
    """L1 sensitivities of sums of ``u = x - c`` and of ``upper(sum u u^T)`` (R1).

    Sums: ``||u - u'||_1 <= p1 + 2 p2`` (a class move: ``||u||_1 + ||u'||_1 <= M``, M = p1 + ... width;
    we use ``max(p1 + 2 p2, M)``). Second moments: entries of ``u u^T`` lie in [-1/4, 1/4];
    within a class T1 with ``a = 1/2`` gives ``M (M + 1) / 8``; a class move removes one
    upper triangle and adds another, each of L1 norm at most ``M (M + 1) / 8``: ``M (M + 1) / 4``.
    """
    M = domain.p
    return {"counts_l1": 2.0,
            "sums_l1": float(max(domain.max_l1_diff, M if class_change else 0)),
            "second_moments_upper_l1": (2.0 if class_change else 1.0) * box_second_moment_l1(M, CENTRE)}


class MODIPS(SyntheticMechanism):
    """MODIPS (Liu 2016), Gaussian instantiation: noisy moments, a posterior draw, synthetic records.

    Parameters
    ----------
    epsilon : float in (0, inf]
    shares : dict or None, relative shares of counts / mean / covariance (default 0.05 / 0.15 / 0.80;
        counts only with labels)
    n_classes : int or None (public label-set size; with ``fit(X, y)``)
    domain, rng

    Notes
    -----
    Guarantee: epsilon-DP under R1 (R1 with the label in the record when ``y`` is given).
    Per class (or once without labels): ``sum u + Lap(Delta_s / eps_mu)``,
    ``upper(sum u u^T) + Lap(Delta_S / eps_Sigma)`` (:func:`modips_sensitivities`), noisy
    counts with ``Lap(2 / eps_N)``; ``C^ = PSD(S~/n^ - mu mu^T)``; then (post-processing)
    ``Sigma* ~ InvWishart(n^ - 1, n^ C^)``, ``mu* ~ N(mu~, Sigma*/n^)`` and records from
    ``N(mu*, Sigma*)`` (ALGORITHMS.md 3.10.4). Cost ``O(N M^2 + C M^3)``.
    """

    name: ClassVar[str] = "modips"
    relation: ClassVar[str] = R1
    summary: ClassVar[str] = "MODIPS (Liu 2016): DP Gaussian (per class) in the original space with a posterior draw"

    def __init__(self, epsilon=1.0, *, shares=None, n_classes=None, domain=None, rng=None):
        self.epsilon = epsilon
        self.shares = shares
        self.n_classes = n_classes
        self.domain = domain
        self.rng = rng

    def fit(self, X, y=None):
        eps, X, _, dom = self._check_common(X)
        if y is not None:
            y = np.asarray(y).astype(np.int64)
            C = int(self.n_classes) if self.n_classes is not None else int(y.max()) + 1
            st = SufficientStats.from_matrix(X - CENTRE, y, C)
        else:
            C = None
            st = SufficientStats.from_matrix(X - CENTRE)
        return self._fit(eps, dom, st, C)

    def _fit(self, eps, dom, st, C):
        sh = {"counts": 0.05, "mean": 0.15, "covariance": 0.80}
        if self.shares is not None:
            sh.update(self.shares)
        labelled = C is not None
        if not labelled:
            sh.pop("counts")
        tot = sum(sh.values())
        e = {k: eps * v / tot for k, v in sh.items()}
        sens = modips_sensitivities(dom, labelled)
        self.sensitivities_, self.budget_split_, self.noise_scales_ = dict(sens), e, {}
        if not labelled:
            sens = dict(sens, sums_l1=float(dom.max_l1_diff))
            self.sensitivities_ = {k: v for k, v in sens.items() if k != "counts_l1"}
        per = [st.classes.get(c, SufficientStats(p=dom.p)) for c in range(C)] if labelled else [st]
        counts = np.array([s.n for s in per], dtype=float)
        p = dom.p
        self.source_.set_value_bound(float(st.n))  # counts, sums of |x - c| <= 1/2 and of products <= 1/4
        if labelled and math.isfinite(eps):
            counts = self._laplace("counts", counts, 2.0, e["counts"], coords=C)
        n_hat = np.maximum(counts, 2.0)
        S1 = np.concatenate([s.s1 for s in per])
        U = np.concatenate([upper(s.s2) for s in per])
        if math.isfinite(eps):
            S1 = self._laplace("sums", S1, sens["sums_l1"], e["mean"], coords=p)
            U = self._laplace("second_moments", U, sens["second_moments_upper_l1"], e["covariance"],
                              coords=p * (p + 1) // 2)
        m = p * (p + 1) // 2
        self.means_ = S1.reshape(len(per), p) / n_hat[:, None]
        self.covariances_ = np.array([psd_repair(mirror(U[c * m:(c + 1) * m], p) / n_hat[c]
                                                 - np.outer(self.means_[c], self.means_[c]))
                                      for c in range(len(per))])
        self.class_counts_ = n_hat
        self.labelled_ = labelled
        self.posterior_draw_ = math.isfinite(eps)
        self.domain_ = dom
        self._set_cost(eps)
        return self

    def sample(self, n: int):
        from scipy.stats import invwishart

        gen = self.source_.generator
        m = largest_remainder(self.class_counts_ / self.class_counts_.sum(), int(n))
        Xs, ys = [], []
        for c, mc in enumerate(m):
            mu, S, nh = self.means_[c], self.covariances_[c], self.class_counts_[c]
            if self.posterior_draw_ and nh - 1 > S.shape[0] - 1:
                S = psd_repair(invwishart(df=nh - 1, scale=nh * S).rvs(random_state=gen))
                mu = gaussian_sample(gen, mu, S / nh, 1)[0]
            Xs.append(gaussian_sample(gen, mu, S, int(mc)) + CENTRE)
            ys.append(np.full(int(mc), c))
        X, y = np.vstack(Xs), np.concatenate(ys)
        return X, (y if self.labelled_ else None)


# ---- Blocki et al. JL ---------------------------------------------------------------------

def blocki_w(r: int, epsilon: float, delta: float) -> float:
    """``w = 16 sqrt(r ln(2/delta)) / eps * ln(16 r / delta)`` (Blocki et al. 2012, Alg. 1; RECALLED).

    This constant is recalled from the cited paper (ALGORITHMS.md 3.10.5 [R]) and could not
    be verified against its full text here; later versions revised the constants. The
    release is therefore labelled "(epsilon,delta)-DP as claimed by Blocki et al., constant
    not re-verified" in the certificate.
    """
    return 16.0 * math.sqrt(r * math.log(2.0 / delta)) / epsilon * math.log(16.0 * r / delta)


class BlockiJL(SyntheticMechanism):
    """Blocki et al. 2012 JL transform + Gaussian model (the adaptation of PCA-Gauss, 3.10.5).

    Parameters
    ----------
    epsilon : float in (0, inf)
    delta : float in (0, 1), default 1e-5
    n_projections : int, default 1000
        r, the number of projected rows.
    n_classes : int or None
        Per-class model with ``fit(X, y)``; classes composed in parallel over the class
        partition, which needs R1 neighbours that keep the label (see Notes).
    domain, rng

    Notes
    -----
    Guarantee: (epsilon, delta)-DP as claimed by Blocki et al. for neighbouring matrices
    whose rows differ by a vector of L2 norm at most 1, WITH THE RECALLED CONSTANT of
    :func:`blocki_w` (not re-verified). Rows are scaled to ``A = (X - c) / sqrt(p1 + 2 p2)``
    so a replacement changes one row by L2 norm <= 1. ``A' = [A; w I]``, ``R = G A'`` with
    ``G`` i.i.d. N(0, 1) (computed as ``G1 A + w G2``), ``Sigma = (R^T R / r - w^2 I) * s^2 / N``
    (``s`` the scale), PSD repair, Gaussian samples. With labels the per-class models use
    disjoint records; a replacement that changes a record's class touches two classes, so
    the label variant is stated for neighbours with the same label (ALGORITHMS.md E8) and
    the noisy class counts use a separate ``Lap(2/eps_N)`` with 5% of epsilon.
    """

    name: ClassVar[str] = "blocki-jl"
    guarantee: ClassVar[str] = "(epsilon,delta)-DP"
    relation: ClassVar[str] = "rows differing by L2 norm <= 1 after public scaling (one record replaced, n public)"
    uses_delta: ClassVar[bool] = True
    summary: ClassVar[str] = "Blocki et al. 2012 JL transform of the data matrix + Gaussian model (recalled constant)"

    def __init__(self, epsilon=1.0, *, delta=1e-5, n_projections=1000, n_classes=None, domain=None, rng=None):
        self.epsilon = epsilon
        self.delta = delta
        self.n_projections = n_projections
        self.n_classes = n_classes
        self.domain = domain
        self.rng = rng

    def fit(self, X, y=None):
        eps, X, _, dom = self._check_common(X)
        if math.isinf(eps):
            raise ParameterError("blocki-jl needs a finite epsilon (its w depends on it)")
        delta = check_delta(self.delta)
        if delta == 0:
            raise ParameterError("blocki-jl needs delta > 0")
        r = self._check_int(self.n_projections, "n_projections", 1)
        s = dom.max_l2_diff
        gen = self.source_.generator
        groups = [(None, X)]
        e_model = eps
        self.budget_split_, self.noise_scales_ = {}, {}
        if y is not None:
            y = np.asarray(y).astype(np.int64)
            C = int(self.n_classes) if self.n_classes is not None else int(y.max()) + 1
            counts = np.bincount(y, minlength=C).astype(float)
            self.source_.set_value_bound(float(X.shape[0]))  # counts are within [0, n]
            counts = self._laplace("counts", counts, 2.0, 0.05 * eps, coords=C)
            self.class_counts_ = np.maximum(counts, 1.0)
            e_model = 0.95 * eps
            self.budget_split_["counts"] = 0.05 * eps
            groups = [(c, X[y == c]) for c in range(C)]
        w = blocki_w(r, e_model, delta)
        self.budget_split_["jl"] = e_model
        self.w_ = w
        self.means_, self.covariances_ = [], []
        for c, Xc in groups:
            A = (Xc - CENTRE) / s
            nA = max(A.shape[0], 1)
            Rm = gen.standard_normal((r, A.shape[0])) @ A + w * gen.standard_normal((r, dom.p))
            Sig = (Rm.T @ Rm / r - w ** 2 * np.eye(dom.p)) * s ** 2 / nA
            self.covariances_.append(psd_repair(Sig))
            self.means_.append(np.zeros(dom.p))
        self.labelled_ = y is not None
        if not self.labelled_:
            self.class_counts_ = np.array([1.0])
        self.sensitivities_ = {"row_l2_after_scaling": 1.0, "scale": s}
        self.noise_scales_["w"] = w
        self.domain_ = dom
        self.privacy_cost_ = PrivacyCost(eps, delta)
        return self

    def certificate_extra(self) -> dict:
        return {"w_constant": "recalled from Blocki et al. 2012 Alg. 1, not re-verified",
                "model": "zero-mean Gaussian around the public centre 0.5 (as in the 002 adaptation)"}

    def sample(self, n: int):
        gen = self.source_.generator
        m = largest_remainder(self.class_counts_ / self.class_counts_.sum(), int(n))
        Xs = [gaussian_sample(gen, self.means_[c], self.covariances_[c], int(mc)) + CENTRE
              for c, mc in enumerate(m)]
        ys = np.concatenate([np.full(int(mc), c) for c, mc in enumerate(m)])
        return np.vstack(Xs), (ys if self.labelled_ else None)


# ---- BLR ------------------------------------------------------------------------------

def blr_utility_sensitivity(n: int) -> float:
    """``u(D, D^) = -max_q |q(D) - q(D^)|`` with fractional counts: one replaced record moves every
    ``q(D)`` by at most ``1/n``, hence ``u`` by at most ``1/n`` (R1)."""
    return 1.0 / n


class BLR(SyntheticMechanism):
    """Blum-Ligett-Roth exponential mechanism over a data-independent pool of candidate data sets.

    Parameters
    ----------
    epsilon : float in (0, inf]
    n_candidates : int, default 200 (K)
    candidate_size : int, default 1000 (m records per candidate)
    n_queries : int, default 200 (random halfspace counting queries)
    n_classes : int or None (labelled candidates and class-conditional queries with ``fit(X, y)``)
    domain, rng

    Notes
    -----
    Guarantee: epsilon-DP under R1 (label included when given). The pool (K candidates of m
    records uniform on [0, 1]^M, labels uniform) and the queries
    ``q(x) = [w . (x - c) >= t]`` (``w`` uniform on the sphere, ``t`` uniform on
    ``[-sqrt(M)/2, sqrt(M)/2]``; with labels ``[... and label = c_q]``) are drawn before
    the data are read, from the post-processing generator. Utility ``u = -max_q |q(D) -
    q(D^)|`` with fractional counts has sensitivity ``1/N`` (one record changes each
    fraction by at most 1/N). The candidate is selected by the Gumbel-max form of the
    exponential mechanism, ``argmax eps u / (2 Delta_u) + Gumbel`` (``source.gumbel``).
    Output: the selected candidate, resampled with replacement to the requested size.
    """

    name: ClassVar[str] = "blr"
    relation: ClassVar[str] = R1_LABEL
    summary: ClassVar[str] = "Blum-Ligett-Roth exponential mechanism over a data-independent candidate pool"

    def __init__(self, epsilon=1.0, *, n_candidates=200, candidate_size=1000, n_queries=200, n_classes=None,
                 domain=None, rng=None):
        self.epsilon = epsilon
        self.n_candidates = n_candidates
        self.candidate_size = candidate_size
        self.n_queries = n_queries
        self.n_classes = n_classes
        self.domain = domain
        self.rng = rng

    def _answers(self, X, y, Wq, t, cq):
        H = ((X - CENTRE) @ Wq.T >= t)
        if y is not None:
            H &= (np.asarray(y)[:, None] == cq[None, :])
        return H.mean(axis=0)

    def fit(self, X, y=None):
        eps, X, _, dom = self._check_common(X)
        K = self._check_int(self.n_candidates, "n_candidates", 1)
        m = self._check_int(self.candidate_size, "candidate_size", 1)
        Q = self._check_int(self.n_queries, "n_queries", 1)
        gen = self.source_.generator
        p = dom.p
        C = None
        if y is not None:
            y = np.asarray(y).astype(np.int64)
            C = int(self.n_classes) if self.n_classes is not None else int(y.max()) + 1
        Wq = gen.standard_normal((Q, p))
        Wq /= np.linalg.norm(Wq, axis=1, keepdims=True)
        t = (gen.random(Q) - 0.5) * math.sqrt(p)
        cq = gen.integers(0, C, Q) if C else None
        pool = gen.random((K, m, p))
        pool_y = gen.integers(0, C, (K, m)) if C else None
        true = self._answers(X, y, Wq, t, cq)
        scores = np.array([-np.max(np.abs(self._answers(pool[k], None if C is None else pool_y[k], Wq, t, cq)
                                          - true)) for k in range(K)])
        du = blr_utility_sensitivity(X.shape[0])
        k_sel = exponential_mechanism(scores, eps, du, self.source_)
        self.selected_ = k_sel
        self.scores_ = scores
        self.chosen_ = pool[k_sel]
        self.chosen_y_ = None if C is None else pool_y[k_sel]
        self.sensitivities_ = {"utility": du}
        self.budget_split_ = {"selection": eps}
        self.noise_scales_ = {"gumbel_scale_in_utility_units": 2 * du / eps if math.isfinite(eps) else 0.0}
        self.domain_ = dom
        self._set_cost(eps)
        return self

    def sample(self, n: int):
        idx = self.source_.generator.integers(0, self.chosen_.shape[0], int(n))
        return self.chosen_[idx], (None if self.chosen_y_ is None else self.chosen_y_[idx])
