"""Laplace identity-query release: the baseline of Jiang et al. 2013, sec. 4."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ...schema.encoding import EncodedDomain
from ..base import DataIndependentFit, RowAlignedMechanism
from ..constraints import COMMON


def identity_sensitivity(domain: EncodedDomain) -> float:
    """L1 sensitivity of one encoded row under replacement: ``p1 + 2 p2``.

    A numeric entry moves by at most 1 (it lies in [0, 1]); a categorical variable
    that changes level moves two dummies from 0 to 1 and 1 to 0 (docs/derivations.md, "Encoded rows").
    """
    return float(domain.max_l1_diff)


class LaplaceIdentity(DataIndependentFit, RowAlignedMechanism):
    """Add Laplace noise to every encoded entry of every record (identity query).

    Parameters
    ----------
    epsilon : float in (0, inf]
        Privacy budget; ``inf`` releases the data unchanged (for tests only).
    domain : EncodedDomain or None
        Public structure of the encoded matrix; None means all columns numeric in [0, 1].
    rng : None, int or numpy.random.Generator
        None draws floating-point-safe noise from OS entropy (real releases);
        an int or Generator uses seeded numpy noise (experiments only).

    Notes
    -----
    Guarantee: epsilon-DP under the bounded relation R1 (one record replaced, n public).

    Each released row depends on one record only, so the release is the parallel
    composition of n per-record Laplace mechanisms. For one record the query is the
    identity ``x -> x`` on the encoded row; between two encoded rows
    ``||x - x'||_1 <= p1 + 2 p2`` (numeric entries in [0, 1]; a categorical change
    flips two dummies), so ``Lap((p1 + 2 p2) / epsilon)`` on each entry gives
    epsilon-DP (Dwork, McSherry, Nissim, Smith 2006). Decoding (clip, rescale, argmax)
    is post-processing.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.full((4, 2), 0.5)
    >>> LaplaceIdentity(epsilon=float("inf")).fit(X).transform(X).tolist() == X.tolist()
    True
    """

    _parameter_constraints: ClassVar[dict] = COMMON

    name: ClassVar[str] = "laplace"
    summary: ClassVar[str] = "Laplace noise on every encoded entry (identity query; Jiang et al. sec. 4 baseline)"

    def __init__(self, epsilon=1.0, *, domain=None, rng=None):
        self.epsilon = epsilon
        self.domain = domain
        self.rng = rng

    def _fit_domain(self, eps, dom):
        self.domain_ = dom
        self.sensitivities_ = {"identity_l1": identity_sensitivity(dom)}
        self.budget_split_ = {"identity (each record, parallel)": eps}
        with self.source_.value_bound(1.0):  # encoded entries lie in [0, 1]
            scale = self.source_.laplace_noise_scale(self.sensitivities_["identity_l1"], eps, dom.p)
        self.noise_scales_ = {"identity": scale}
        self._set_cost(eps)
        return self

    def transform(self, X):
        X = np.asarray(X, dtype=np.float64)
        with self.source_.value_bound(1.0):  # encoded entries lie in [0, 1]
            out, _ = self.source_.add_laplace(X, self.sensitivities_["identity_l1"], self.privacy_cost_.epsilon,
                                              coords=X.shape[1])
        return out
