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

from ...errors import InputDataError, ParameterError
from ...linalg import top_eigenvectors
from ..base import DataIndependentFit, RowAlignedMechanism
from ..constraints import ARRAY_OR_FILE, COMMON, Options, POSITIVE_INT, PUBLIC_ARRAY
from ..pca_gauss.basis import CENTRE, load_public_components


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

    _parameter_constraints: ClassVar[dict] = {
        **COMMON,
        "n_components": POSITIVE_INT,
        "output_space": [Options("original", "reduced")],
    }

    name: ClassVar[str] = "compressive"
    summary: ClassVar[str] = "Li et al. 2011 as in PCA-Gauss: Bernoulli random projection of each record + Laplace"

    def __init__(self, epsilon=1.0, *, n_components=10, output_space="original", domain=None, rng=None):
        self.epsilon = epsilon
        self.n_components = n_components
        self.output_space = output_space
        self.domain = domain
        self.rng = rng

    def _fit_domain(self, eps, dom):
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

    _parameter_constraints: ClassVar[dict] = {
        **COMMON,
        "n_components": POSITIVE_INT,
        "public_components": ARRAY_OR_FILE,
        "public_data": PUBLIC_ARRAY,
        "public_labels": PUBLIC_ARRAY,
        "method": [Options("pca", "lda")],
        "output_space": [Options("original", "reduced")],
    }

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


