"""Distributional-privacy calculator for the Zhou-Ligett-Wasserman compression (seed 001).

Two tools, both for the mechanism :class:`privrelease.mechanisms.compression.mechanism.Compression`:

* :func:`theorem_iv6_alpha` evaluates the paper's bound (Theorem IV.6) on alpha for
  given ``n, p, m`` and the assumptions it rests on (``Delta_max``, ``||Delta||_F``,
  the smallest eigenvalues of the private and reference covariances, ``||Sigma_1||_2``),
  dropping the ``o(1)`` term as the paper does, and reports which of the paper's
  conditions hold (Lemma IV.4's ``m``, Theorem III.2's ``Delta_max``, Theorem III.5's
  ``p^2 = O(sqrt(n/m) / log n)``).
* :func:`audit_pair` computes the exact privacy loss of the mechanism for a concrete
  pair of datasets (ALGORITHMS.md section 4): given X, the untruncated release has
  density ``f_i(Xt) = prod_rows N(0, Sigma_i)``, so with ``S = Xt^T Xt / m``

      ln f_1(Xt) / f_2(Xt) = (m/2) [ln det Sigma_2 - ln det Sigma_1 - tr((Sigma_1^-1 - Sigma_2^-1) S)],

  and on the acceptance set ``|S - Sigma_ref| <= tau`` (entrywise)

      |ln f_1 / f_2| <= (m/2) |ln det Sigma_2 - ln det Sigma_1 - tr(Gamma Sigma_ref)| + (m/2) ||Gamma||_1 tau,

  ``Gamma = Sigma_1^-1 - Sigma_2^-1`` (``||.||_1`` entrywise). The renormalisation of
  eq. (14) adds ``|ln((1 - P_2[E]) / (1 - P_1[E]))|``, at most ``-ln(1 - 1/n^2)`` when
  Lemma IV.4's ``m`` holds (each truncated mass is at most ``1/n^2``); otherwise it is
  estimated by Monte Carlo.

Neither is differential privacy. The pair audit is the loss of *that* pair, not a
worst case over neighbours; the theorem bound holds only inside the assumed class S_n
and only asymptotically (o(1) terms and the constants C1, C2 are the paper's).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

import numpy as np

from ..errors import InputDataError, ParameterError
from ..mechanisms.compression.bounds import C_PAPER, default_delta_max, min_rows, normalized_covariance, truncation_threshold

__all__ = ["theorem_iv6_alpha", "log_likelihood_ratio", "audit_pair", "PairAudit", "example_iii6_pair"]


def _pos(x, name, allow_zero=False):
    if isinstance(x, bool) or not isinstance(x, (int, float, np.integer, np.floating)) or not math.isfinite(x) \
            or x < 0 or (x == 0 and not allow_zero):
        raise ParameterError(f"{name} must be a finite number {'>=' if allow_zero else '>'} 0, got {x!r}")
    return float(x)


def theorem_iv6_alpha(n, p, m, *, delta_max=None, delta_fro=None, lambda_min=1.0, lambda_min_ref=1.0,
                      ref_norm=1.0, C=C_PAPER) -> dict:
    """Theorem IV.6's bound on alpha (the ``o(1)`` term dropped) and the paper's conditions.

    ``alpha <= m p ||Delta||_F Psi / (2 lambda_min(Sigma_i) lambda_min(Sigma_1))`` with
    ``Psi = tau + 2 ||Delta||_F ||Sigma_1||_2^2 / (p lambda_min(Sigma_i) lambda_min(Sigma_1))``
    and ``tau = C sqrt(ln(2np)/m) + Delta_max``.

    Parameters
    ----------
    n, p, m : records, columns, released rows
    delta_max : Delta_max of eq. (5); None -> ``sqrt(ln(max(p, 2)) / n)`` (Lemma IV.5's
        order with constant 1, our assumption)
    delta_fro : ``||Sigma_1 - Sigma_i||_F``; None -> the worst case of eq. (7), ``p Delta_max``
    lambda_min, lambda_min_ref : smallest eigenvalues of Sigma_i and of the reference
        Sigma_1 (Assumption 1; default 1, i.e. uncorrelated normalised columns)
    ref_norm : ``||Sigma_1||_2`` (default 1)
    C : constant of eq. (12)
    """
    n, p, m = int(n), int(p), int(m)
    if n < 2 or p < 1 or m < 1:
        raise ParameterError(f"need n >= 2, p >= 1, m >= 1; got n={n}, p={p}, m={m}")
    assumed = []
    if delta_max is None:
        delta_max = default_delta_max(n, p)
        assumed.append(f"Delta_max = sqrt(ln(max(p,2))/n) = {delta_max:.4g} (Lemma IV.5 order, constant 1)")
    delta_max = _pos(delta_max, "delta_max", allow_zero=True)
    if delta_fro is None:
        delta_fro = p * delta_max
        assumed.append("||Delta||_F = p Delta_max (worst case of eq. 7)")
    delta_fro = _pos(delta_fro, "delta_fro", allow_zero=True)
    lam_i, lam_1 = _pos(lambda_min, "lambda_min"), _pos(lambda_min_ref, "lambda_min_ref")
    rn = _pos(ref_norm, "ref_norm")
    C = _pos(C, "C")
    tau = truncation_threshold(n, p, m, delta_max, C)
    psi = tau + 2 * delta_fro * rn**2 / (p * lam_i * lam_1)
    alpha = m * p * delta_fro * psi / (2 * lam_i * lam_1)
    return {
        "alpha_bound": alpha,
        "psi": psi,
        "tau": tau,
        "inputs": {"n": n, "p": p, "m": m, "delta_max": delta_max, "delta_fro": delta_fro, "lambda_min": lam_i,
                   "lambda_min_ref": lam_1, "ref_norm": rn, "C": C},
        "assumed": assumed,
        "conditions": _paper_conditions(n, p, m, delta_max, delta_fro, lam_1),
        "caveat": "Theorem IV.6 drops an o(1) term and uses the paper's constants C1 ~ 2.5, C2 ~ 7.7; it covers only "
                  "pairs inside the assumed class S_n (Assumption 1, Delta_max) and is distributional privacy, "
                  "not differential privacy. The renormalisation adds O(1/n^2).",
    }


def _paper_conditions(n, p, m, delta_max, delta_fro, lam_1) -> dict:
    """Which of the paper's conditions hold for these sizes (Lemma IV.4, Theorems III.2, III.5, Lemma III.3)."""
    lnn = math.log(n)
    l2np = math.log(2 * n * p)
    m_min = min_rows(n, p)
    thm_iii2_limit = 1.0 / (p**2 * math.sqrt(m * l2np))
    return {
        "lemma_IV4_min_m": m_min,
        "lemma_IV4_holds": m >= m_min,
        "pca_utility_m_order_p2_ln2np": p**2 * l2np,
        "thm_III2_delta_max_scale_1_over_p2_sqrt_m_ln2np": thm_iii2_limit,
        "thm_III2_ratio_delta_max_to_scale": delta_max / thm_iii2_limit,
        "thm_III5_ratio_p2_log_n_over_sqrt_n_over_m": p**2 * lnn / math.sqrt(n / m),
        "p_over_n_to_1_6_over_sqrt_ln2np": p / (n ** (1 / 6) / math.sqrt(l2np)),
        "lemma_III3_needs_delta_2_below_lambda_min_ref": delta_fro < lam_1,
    }


def _logdet(S):
    sign, ld = np.linalg.slogdet(S)
    return ld if sign > 0 else -math.inf


def log_likelihood_ratio(S, sigma1, sigma2, m):
    """Exact ``ln f_1(Xt) / f_2(Xt)`` of the untruncated release as a function of ``S = Xt^T Xt / m``.

    ``S`` may be one ``p x p`` matrix or a stack ``(k, p, p)``; returns a float or an array.
    """
    S = np.asarray(S, dtype=np.float64)
    G = np.linalg.inv(sigma1) - np.linalg.inv(sigma2)
    c = _logdet(sigma2) - _logdet(sigma1)
    tr = np.einsum("jk,...kj->...", G, S)
    return 0.5 * m * (c - tr)


@dataclass
class PairAudit:
    """Privacy loss of the compression on one concrete pair of datasets (see :func:`audit_pair`)."""

    n: int
    p: int
    m: int
    tau: float
    reference: str
    loss_bound_on_acceptance_set: float  # sup over the acceptance box of |ln f1/f2|, without renormalisation
    renormalisation_term: float  # |ln((1 - P2[E]) / (1 - P1[E]))| (bound or estimate)
    renormalisation_how: str
    total_bound: float
    centre_term: float  # (m/2)|ln det S2 - ln det S1 - tr(Gamma Sigma_ref)|
    box_term: float  # (m/2) ||Gamma||_1 tau
    kl_per_release: float  # E_1[ln f1/f2] = m KL(N(0,S1) || N(0,S2))
    delta_fro: float
    delta_maxabs: float
    lambda_min_1: float
    lambda_min_2: float
    theorem_iv6: dict
    monte_carlo: dict = field(default_factory=dict)
    note: str = ("exact loss of this pair only (not a worst case over neighbours); distributional privacy, "
                 "not differential privacy")

    def to_dict(self) -> dict:
        return asdict(self)


def audit_pair(X1, X2, m, *, reference=None, delta_max=None, C=C_PAPER, center=False, mc_draws=0, seed=0,
               sigmas=None) -> PairAudit:
    """Privacy loss of the compression between datasets ``X1`` and ``X2`` (same n and p).

    Parameters
    ----------
    X1, X2 : (n, p) arrays (raw: the mechanism's column normalisation is applied here)
    m : released rows
    reference : the reference covariance; None -> ``Sigma_1`` (X1 is the reference
        database, as in Theorem IV.6)
    delta_max : Delta_max used in tau; None -> the mechanism's default
    C, center : as in the mechanism
    mc_draws : if > 0, draw that many releases under X1 (rows i.i.d. N(0, Sigma_1),
        the exact law of ``Phi X1`` before truncation), apply the truncation test and
        report the empirical log-likelihood ratios (max over accepted draws, mean) and
        the acceptance rates under X1 and X2
    sigmas : optionally ``(Sigma_1, Sigma_2)`` directly instead of X1, X2 (then give
        ``n`` through X1 = n as an int)
    """
    S1, S2, n = _pair_covariances(X1, X2, sigmas, center)
    p = S1.shape[0]
    m = int(m)
    if delta_max is None:
        delta_max = default_delta_max(n, p)
    tau = truncation_threshold(n, p, m, float(delta_max), C) if math.isfinite(C) else math.inf
    ref = S1 if reference is None else np.asarray(reference, dtype=np.float64)
    lam1 = float(np.linalg.eigvalsh(S1)[0])
    lam2 = float(np.linalg.eigvalsh(S2)[0])
    D = S1 - S2
    singular = lam1 <= 1e-12 or lam2 <= 1e-12
    centre, box, kl = (math.inf,) * 3 if singular else _loss_terms(S1, S2, ref, m, tau)
    renorm, how, mc = _renormalisation(S1, S2, ref, n, m, tau, 0 if singular else mc_draws, seed)
    bound = centre + box
    if singular:
        thm = {"alpha_bound": math.inf, "note": "a covariance is singular: Assumption 1 fails"}
    else:
        thm = theorem_iv6_alpha(n, p, m, delta_max=float(np.max(np.abs(D))),
                                delta_fro=float(np.linalg.norm(D, "fro")), lambda_min=lam2, lambda_min_ref=lam1,
                                ref_norm=float(np.linalg.eigvalsh(S1)[-1]), C=C if math.isfinite(C) else C_PAPER)
    return PairAudit(
        n=n, p=p, m=m, tau=tau, reference="Sigma_1 (X1 is the reference)" if reference is None else "declared",
        loss_bound_on_acceptance_set=bound, renormalisation_term=renorm, renormalisation_how=how,
        total_bound=bound + renorm if not math.isnan(renorm) else math.nan,
        centre_term=centre, box_term=box, kl_per_release=kl, delta_fro=float(np.linalg.norm(D, "fro")),
        delta_maxabs=float(np.max(np.abs(D))), lambda_min_1=lam1, lambda_min_2=lam2, theorem_iv6=thm,
        monte_carlo=mc,
    )


def _pair_covariances(X1, X2, sigmas, center):
    """``(Sigma_1, Sigma_2, n)``: the normalised covariances of the two datasets, or the ones given."""
    if sigmas is not None:
        S1, S2 = (np.asarray(s, dtype=np.float64) for s in sigmas)
        return S1, S2, int(X1)
    X1, X2 = np.asarray(X1, dtype=np.float64), np.asarray(X2, dtype=np.float64)
    if X1.shape != X2.shape or X1.ndim != 2:
        raise InputDataError(f"X1 and X2 must be matrices of the same shape, got {X1.shape} and {X2.shape}")
    return normalized_covariance(X1, center), normalized_covariance(X2, center), X1.shape[0]


def _loss_terms(S1, S2, ref, m, tau):
    """Centre and box terms of the loss on the acceptance set, and ``m KL(N(0,S1) || N(0,S2))``."""
    p = S1.shape[0]
    G = np.linalg.inv(S1) - np.linalg.inv(S2)
    ld1, ld2 = _logdet(S1), _logdet(S2)
    centre = 0.5 * m * abs(ld2 - ld1 - float(np.sum(G * ref)))
    box = 0.5 * m * float(np.abs(G).sum()) * tau
    # KL(N(0,S1) || N(0,S2)) = (tr(S2^-1 S1) - p + ln det S2 - ln det S1) / 2
    kl = m * 0.5 * (float(np.trace(np.linalg.solve(S2, S1))) - p + ld2 - ld1)
    return centre, box, kl


def _renormalisation(S1, S2, ref, n, m, tau, mc_draws, seed):
    """The eq. (14) term with how it was obtained, and the Monte Carlo summary (empty when ``mc_draws`` is 0)."""
    if m >= min_rows(n, S1.shape[0]):
        renorm, how = -math.log1p(-1.0 / n**2), "Lemma IV.4 bound: both truncated masses <= 1/n^2"
    else:
        renorm, how = math.nan, "not bounded: m below Lemma IV.4's requirement (see monte_carlo)"
    mc = {}
    if mc_draws:
        mc = _monte_carlo(S1, S2, ref, m, tau, int(mc_draws), seed)
        if math.isnan(renorm):
            a1, a2 = mc["acceptance_rate_1"], mc["acceptance_rate_2"]
            renorm = abs(math.log(a2 / a1)) if a1 > 0 and a2 > 0 else math.inf
            how = f"Monte Carlo estimate from {mc_draws} draws per dataset"
    return renorm, how, mc


def _sample_S(sigma, m, k, rng):
    """``k`` draws of ``S = Xt^T Xt / m`` with rows of Xt i.i.d. N(0, sigma) (the law of Phi X given X).

    ``m S`` is Wishart(m, sigma); for large ``m p`` it is drawn by the Bartlett
    decomposition (scipy), O(p^2) per draw instead of O(m p^2); otherwise the rows are
    drawn directly.
    """
    p = sigma.shape[0]
    if m >= p and m * p > 4096:
        from scipy.stats import wishart

        W = wishart.rvs(df=m, scale=sigma, size=k, random_state=rng)
        return np.asarray(W, dtype=np.float64).reshape(k, p, p) / m
    L = np.linalg.cholesky(sigma + 1e-15 * np.eye(p))
    Z = rng.standard_normal((k, m, p)) @ L.T
    return np.einsum("kij,kil->kjl", Z, Z) / m


def _monte_carlo(S1, S2, ref, m, tau, k, seed):
    rng = np.random.default_rng(seed)
    out1, out2 = [], []
    acc1 = acc2 = 0
    batch = max(1, min(k, 2_000_000 // max(1, m * S1.shape[0])))
    done = 0
    while done < k:
        b = min(batch, k - done)
        Sa = _sample_S(S1, m, b, rng)
        Sb = _sample_S(S2, m, b, rng)
        ok_a = np.max(np.abs(Sa - ref), axis=(1, 2)) <= tau
        ok_b = np.max(np.abs(Sb - ref), axis=(1, 2)) <= tau
        out1.append(log_likelihood_ratio(Sa[ok_a], S1, S2, m))
        out2.append(log_likelihood_ratio(Sb[ok_b], S1, S2, m))
        acc1 += int(ok_a.sum())
        acc2 += int(ok_b.sum())
        done += b
    l1 = np.concatenate(out1) if out1 else np.array([])
    l2 = np.concatenate(out2) if out2 else np.array([])
    both = np.concatenate([l1, l2])
    return {
        "draws_per_dataset": k,
        "acceptance_rate_1": acc1 / k,
        "acceptance_rate_2": acc2 / k,
        "max_abs_log_ratio": float(np.max(np.abs(both))) if both.size else math.nan,
        "mean_log_ratio_under_1": float(np.mean(l1)) if l1.size else math.nan,
        "mean_log_ratio_under_2": float(np.mean(l2)) if l2.size else math.nan,
        "quantile_99_abs_log_ratio": float(np.quantile(np.abs(both), 0.99)) if both.size else math.nan,
    }


def example_iii6_pair(n, p, tau_flip, seed=0):
    """Example III.6: ``X1`` uniform on ``{-1, 1}^(n x p)``; ``X2`` flips the signs of ``ceil(tau p)`` bits of one row.

    Columns of a ``{-1, 1}`` matrix already have squared norm n, so the mechanism's
    normalisation leaves both unchanged.
    """
    if not (0 <= tau_flip < 1):
        raise ParameterError(f"tau must be in [0, 1), got {tau_flip}")
    rng = np.random.default_rng(seed)
    X1 = rng.choice(np.array([-1.0, 1.0]), size=(n, p))
    X2 = X1.copy()
    k = max(1, int(math.ceil(tau_flip * p))) if tau_flip > 0 else 0
    cols = rng.choice(p, size=k, replace=False)
    X2[0, cols] *= -1
    return X1, X2
