"""MMD perturbation of projected records and the jupa-mmd mechanism built on it (see :mod:`privrelease.mechanisms.projections.jupa`)."""

from __future__ import annotations

from numbers import Real

from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator

from ...errors import InputDataError, ParameterError
from ...noise import make_source
from ..base import RowAlignedMechanism
from ..constraints import BOOL, DOMAIN, Instance, Interval, Options, POSITIVE_INT, PUBLIC_ARRAY, SEED
from .jupa import PROJECTIONS, _as_matrix, make_projection


# ---------------------------------------------------------------------------------------------
# MMD fine-grained perturbation (sec. IV-C; ALGORITHMS.md 5.3)

UPDATE_RULES = ("literal", "gradient")


def _sq_dists(A, B):
    d = (A * A).sum(1)[:, None] + (B * B).sum(1)[None, :] - 2.0 * A @ B.T
    return np.maximum(d, 0.0)


def _rbf(A, B, sigma):
    """RBF kernel matrix; values below exp(-80) are set to 0 (avoids slow subnormal arithmetic)."""
    arg = _sq_dists(A, B) / (2.0 * sigma * sigma)
    K = np.exp(-np.minimum(arg, 80.0))
    K[arg >= 80.0] = 0.0
    return K


class MMDPerturbation(BaseEstimator):
    """Kernel-MMD label changing of projected records towards a random privacy class.

    ``fit(Zpub, y_privacy)`` takes the *projected* public records with their privacy
    labels, splits them per class into ground-truth ``G`` and verification ``V`` halves
    (stratified 50/50 [A]) and chooses the RBF width ``sigma`` by two-fold cross-validation
    of the MMD label function (eq 10) on the two halves, unless ``sigma`` is given.
    ``perturb(Xhat)`` returns the released records ``Z`` and what happened to each.

    Parameters
    ----------
    sigma : float or None (None: chosen by cross-validation from ``sigma_grid`` x median distance)
    lam : lambda of eq 12 (paper 0.001)
    alpha : learning rate of eq 14 (paper 0.1)
    max_iter : iteration cap T_max (the paper gives none; E18) [A: 1000]
    update : "literal" (default): theta persists, ``theta <- theta - alpha g``, ``z <- z + theta``
        (eqs 11, 14 read literally, momentum-like); "gradient": plain gradient descent on the
        total displacement, ``theta <- theta - alpha g``, ``z = xhat + theta``.
    rng : None (secure OS entropy for the owner's secret targets), int or Generator (experiments)

    Notes
    -----
    Gradient (eq 13, without the factor 2 of eq 12, absorbed in alpha):
    ``g = (1/n_s) sum_{G_s} k(g, z)(g - z)/sigma^2 - (1/n_t) sum_{G_t} k(g, z)(g - z)/sigma^2 + lambda theta``.
    All records are updated together (one kernel matrix per iteration); a record stops
    when its label equals its target or at ``max_iter``.
    """

    def __init__(self, sigma=None, lam=1e-3, alpha=0.1, max_iter=1000, update="literal", split=0.5,
                 sigma_grid=(0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0), rng=None):
        self.sigma = sigma
        self.lam = lam
        self.alpha = alpha
        self.max_iter = max_iter
        self.update = update
        self.split = split
        self.sigma_grid = sigma_grid
        self.rng = rng

    # -- fitting ------------------------------------------------------------------------------
    def fit(self, Z, y_privacy):
        Z = _as_matrix(Z)
        y = np.asarray(y_privacy)
        if y.ndim != 1 or y.shape[0] != Z.shape[0]:
            raise InputDataError("y_privacy must be a 1-d array with one label per record")
        if self.update not in UPDATE_RULES:
            raise ParameterError(f"update must be one of {UPDATE_RULES}, got {self.update!r}")
        if isinstance(self.max_iter, bool) or not isinstance(self.max_iter, (int, np.integer)) or self.max_iter < 1:
            raise ParameterError(f"max_iter must be an integer >= 1, got {self.max_iter!r}")
        for nm in ("lam", "alpha"):
            v = getattr(self, nm)
            if not isinstance(v, (int, float, np.floating)) or not np.isfinite(v) or v < 0:
                raise ParameterError(f"{nm} must be a finite number >= 0, got {v!r}")
        if not 0 < float(self.split) < 1:
            raise ParameterError(f"split must be in (0, 1), got {self.split!r}")
        self.classes_, codes = np.unique(y, return_inverse=True)
        codes = codes.ravel()
        L = self.classes_.size
        if L < 2:
            raise InputDataError("the privacy label needs at least two classes")
        self.source_ = make_source(self.rng)
        gen = self.source_.generator
        # stratified split into ground truth G and verification V (each class needs >= 1 in both)
        is_g = np.zeros(Z.shape[0], dtype=bool)
        perm = gen.permutation(Z.shape[0])
        for c in range(L):  # loop over classes, not records
            idx = perm[codes[perm] == c]
            if idx.size < 2:
                raise InputDataError(f"privacy class {self.classes_[c]!r} has fewer than 2 public records")
            n_g = min(max(1, int(round(idx.size * float(self.split)))), idx.size - 1)
            is_g[idx[:n_g]] = True
        self.G_, self.g_codes_ = Z[is_g], codes[is_g]
        self.V_, self.v_codes_ = Z[~is_g], codes[~is_g]
        if self.sigma is None:
            med = float(np.sqrt(np.median(_sq_dists(Z[perm[:500]], Z[perm[:500]]))))
            med = med if med > 0 else 1.0
            grid = [med * float(f) for f in self.sigma_grid]
            scores = []
            for s in grid:
                a1 = np.mean(self._label_with(self.G_, self.V_, self.v_codes_, s, L) == self.g_codes_)
                a2 = np.mean(self._label_with(self.V_, self.G_, self.g_codes_, s, L) == self.v_codes_)
                scores.append((a1 + a2) / 2)
            self.sigma_scores_ = dict(zip(grid, scores))
            self.sigma_ = grid[int(np.argmax(scores))]
        else:
            if not float(self.sigma) > 0:
                raise ParameterError(f"sigma must be > 0, got {self.sigma!r}")
            self.sigma_ = float(self.sigma)
        self._prepare_label(L)
        return self

    @staticmethod
    def _label_with(Q, R, r_codes, sigma, L, self_term=None):
        """MMD label (eq 10) of the rows of Q with reference set R."""
        K = _rbf(Q, R, sigma)
        onehot = np.zeros((R.shape[0], L))
        onehot[np.arange(R.shape[0]), r_codes] = 1.0
        counts = onehot.sum(0)
        if self_term is None:
            KR = _rbf(R, R, sigma)
            self_term = np.einsum("il,ij,jl->l", onehot, KR, onehot) / counts ** 2
        cross = (K @ onehot) / counts
        return np.argmin(self_term[None, :] - 2 * cross, axis=1)

    def _prepare_label(self, L):
        s = self.sigma_
        onehot = np.zeros((self.V_.shape[0], L))
        onehot[np.arange(self.V_.shape[0]), self.v_codes_] = 1.0
        self._v_onehot = onehot
        self._v_counts = onehot.sum(0)
        KV = _rbf(self.V_, self.V_, s)
        self._v_self = np.einsum("il,ij,jl->l", onehot, KV, onehot) / self._v_counts ** 2
        g_onehot = np.zeros((self.G_.shape[0], L))
        g_onehot[np.arange(self.G_.shape[0]), self.g_codes_] = 1.0
        self._g_onehot = g_onehot
        self._g_counts = g_onehot.sum(0)

    # -- using --------------------------------------------------------------------------------
    def label_codes(self, Z) -> np.ndarray:
        """Privacy class codes (indices into ``classes_``) given by the MMD label function (eq 10)."""
        Z = np.asarray(Z, dtype=np.float64)
        K = _rbf(Z, self.V_, self.sigma_)
        return np.argmin(self._v_self[None, :] - 2 * (K @ self._v_onehot) / self._v_counts, axis=1)

    def label(self, Z) -> np.ndarray:
        return self.classes_[self.label_codes(Z)]

    def perturb(self, Xhat, targets=None):
        """Perturb projected records towards random (or given) target classes.

        Returns ``(Z, info)``; ``info`` holds ``source`` and ``target`` (class labels),
        ``iterations`` (0 when released unchanged) and ``flipped`` (label reached the target).
        """
        Xhat = np.asarray(Xhat, dtype=np.float64)
        if Xhat.ndim != 2 or Xhat.shape[1] != self.G_.shape[1]:
            raise InputDataError(f"records must have {self.G_.shape[1]} columns, got shape {Xhat.shape}")
        n, L = Xhat.shape[0], self.classes_.size
        if targets is None:
            t = self.source_.generator.integers(0, L, size=n)
        else:
            lookup = {c: i for i, c in enumerate(self.classes_.tolist())}
            try:
                t = np.array([lookup[v] for v in np.asarray(targets).tolist()], dtype=np.int64)
            except KeyError as exc:
                raise InputDataError(f"unknown target class {exc.args[0]!r}") from None
        s = self.label_codes(Xhat)
        Z = Xhat.copy()
        theta = np.zeros_like(Z)
        iters = np.zeros(n, dtype=np.int64)
        active = np.flatnonzero(s != t)
        sig2 = self.sigma_ ** 2
        w_s = self._g_onehot / self._g_counts  # (n_G, L): 1/n_l on the record's class column
        for it in range(1, int(self.max_iter) + 1):
            if active.size == 0:
                break
            za = Z[active]
            K = _rbf(za, self.G_, self.sigma_)  # (a, n_G)
            W = K * (w_s[:, s[active]].T - w_s[:, t[active]].T)  # +1/n_s on G_s, -1/n_t on G_t
            g = (W @ self.G_ - W.sum(1)[:, None] * za) / sig2 + self.lam * theta[active]
            theta[active] -= self.alpha * g
            if self.update == "literal":
                Z[active] = za + theta[active]
            else:
                Z[active] = Xhat[active] + theta[active]
            iters[active] = it
            done = self.label_codes(Z[active]) == t[active]
            active = active[~done]
        flipped = self.label_codes(Z) == t
        info = {"source": self.classes_[s], "target": self.classes_[t], "iterations": iters, "flipped": flipped}
        return Z, info


# ---------------------------------------------------------------------------------------------
# the owner-side mechanism


class JUPAMMDPerturbation(RowAlignedMechanism):
    """Owner-side release: public projection (JUPA or a special case) then MMD label changing.

    Parameters
    ----------
    public_X : encoded public records (M columns, same encoding as the owner's records)
    public_utility, public_privacy : their utility and privacy labels
    projection : "jupa" (default), "ruca", "dca", "mdr", "pca", "random-projection", "full-dimensional"
    projection_params : dict of projection parameters (e.g. ``{"rho1": 100}``)
    fine : apply the MMD fine-grained step (default True)
    lam, alpha, max_iter, update, sigma : MMD parameters (see :class:`MMDPerturbation`)
    rng : None (OS entropy: real use), int or Generator (experiments)

    Notes
    -----
    Guarantee: **none (empirical)**. No neighbouring relation applies: each record is
    transformed by a deterministic public projection followed by a label-changing walk
    whose only secret is the random target class. The paper's Theorem 1 does not hold
    against an attacker who knows the mechanism (ALGORITHMS.md E17); the measured attack
    accuracies (paper's attacker and mechanism-aware attacker) are what this release can
    report, see :func:`privrelease.audit.inference_attack.evaluate`. Nothing about the
    owner's records is used to fit: the projection and the kernel width come from public
    data; the owner's records are only transformed. Everything in ``public_*`` is public.
    """

    _parameter_constraints: ClassVar[dict] = {
        "public_X": PUBLIC_ARRAY,
        "public_utility": PUBLIC_ARRAY,
        "public_privacy": PUBLIC_ARRAY,
        "projection": [Options(*PROJECTIONS)],
        "projection_params": [None, Instance(dict, what="a dict of projection parameters")],
        "fine": [BOOL],
        "lam": [Interval(Real, 0, None, closed="left")],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "max_iter": POSITIVE_INT,
        "update": [Options(*UPDATE_RULES)],
        "sigma": [None, Interval(Real, 0, None, closed="neither")],
        "domain": DOMAIN,
        "rng": SEED,
    }

    name: ClassVar[str] = "jupa-mmd"
    guarantee: ClassVar[str] = "none (empirical)"
    relation: ClassVar[str] = "none: owner-side per-record perturbation learned from public data (no formal guarantee, E17)"
    summary: ClassVar[str] = ("Zhuang-Chang owner-side perturbation: JUPA projection + MMD label changing; "
                              "measured attack accuracy only")
    contract_release: ClassVar[bool] = False  # owner-side: run by `privrelease perturb`, not `release`
    columns: ClassVar[str] = "z1..zK, the projected coordinates: NOT the schema's columns"

    def __init__(self, public_X=None, public_utility=None, public_privacy=None, *, projection="jupa",
                 projection_params=None, fine=True, lam=1e-3, alpha=0.1, max_iter=1000, update="literal",
                 sigma=None, domain=None, rng=None):
        self.public_X = public_X
        self.public_utility = public_utility
        self.public_privacy = public_privacy
        self.projection = projection
        self.projection_params = projection_params
        self.fine = fine
        self.lam = lam
        self.alpha = alpha
        self.max_iter = max_iter
        self.update = update
        self.sigma = sigma
        self.domain = domain
        self.rng = rng

    def fit(self, X=None, y=None):
        """Learn the projection and the MMD reference sets from the public data (``X`` is not used)."""
        if self.public_X is None or self.public_utility is None or self.public_privacy is None:
            raise InputDataError("jupa-mmd needs public data: public_X, public_utility and public_privacy")
        P = _as_matrix(self.public_X)
        self.source_ = make_source(self.rng)
        params = dict(self.projection_params or {})
        if self.projection == "random-projection":
            params.setdefault("rng", self.source_.generator)
        self.projection_ = make_projection(self.projection, **params).fit(P, self.public_utility, self.public_privacy)
        yp = np.asarray(self.public_privacy)
        yp = yp if yp.ndim == 1 else yp[:, 0]
        if self.fine:
            self.mmd_ = MMDPerturbation(sigma=self.sigma, lam=self.lam, alpha=self.alpha, max_iter=self.max_iter,
                                        update=self.update, rng=self.source_.generator)
            self.mmd_.fit(self.projection_.transform(P), yp)
        self.output_columns_ = [f"z{i + 1}" for i in range(self.projection_.components_.shape[1])]
        self.sensitivities_, self.noise_scales_, self.budget_split_ = {}, {}, {}
        self.notes_ = ["no formal privacy guarantee (ALGORITHMS.md E17): report measured attack accuracies"]
        return self

    def transform(self, X):
        Xhat = self.projection_.transform(X)
        if not self.fine:
            self.last_info_ = None
            return Xhat
        Z, info = self.mmd_.perturb(Xhat)
        self.last_info_ = info
        return Z

    def certificate_extra(self) -> dict:
        d = {"projection": self.projection, "n_components": int(self.projection_.components_.shape[1])}
        if self.fine:
            d["sigma"] = self.mmd_.sigma_
        return d

    def private_diagnostics(self) -> dict:
        """The share of records whose label the last perturbation changed: an exact fact of the
        owner's records, kept out of the certificate."""
        if self.fine and getattr(self, "last_info_", None) is not None:
            return {"flipped_fraction": float(np.mean(self.last_info_["flipped"]))}
        return {}
