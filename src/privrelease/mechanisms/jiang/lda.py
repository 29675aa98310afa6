"""Jiang et al. 2013, sec. 3.2: LDA-based private data publishing with a greedy L1 sampler.

The mechanism releases noisy class counts, noisy class sums and a noisy pooled second
moment of the encoded records, then synthesises labelled records whose statistics
approximately match the released ones (greedy L1 sampler, pure post-processing).

Two variants:

* corrected (default): epsilon-DP under R1 with the label inside the record
  (ALGORITHMS.md 2.2; errata E1, E2, E8);
* ``paper_faithful=True``: the paper's statistics (true class sizes as divisors and as
  output sizes, the paper's mixed-data sensitivity). It is **not differentially
  private** (erratum E1) and exists only to reproduce the published figures.
"""

from __future__ import annotations

from numbers import Integral

from typing import ClassVar

import numpy as np

from ...dp.rounding import largest_remainder
from ...dp.sensitivities import second_moment_l1
from ...engine.stats import SufficientStats
from ...errors import InputDataError, ParameterError
from ...linalg import mirror, upper
from ...schema.encoding import EncodedDomain
from ..base import R1_LABEL, SyntheticMechanism
from ..constraints import BOOL, COMMON, Instance, Interval

DEFAULT_SHARES = (0.1, 0.3, 0.6)
NOT_DP = "none (paper-faithful variant: NOT differentially private, erratum E1)"


# ---- calibration ----------------------------------------------------------------

def lda_sensitivities(domain: EncodedDomain, n_classes: int) -> dict:
    """L1 sensitivities of the corrected statistics under R1 with the label in the record (docs/derivations.md).

    Returns ``{"counts": 1 (two classes) or 2, "class_sums": 2 L, "second_moment": Delta2}``
    with ``L = p1 + p2`` (max ||x||_1 of an encoded row) and
    ``Delta2 = p1 (p1 + 1) / 2 + 2 p1 p2 + p2 (p2 + 1)``.

    Derivation (a record (x, c) is replaced by (x', c'), n fixed):

    * counts: with two classes only n_1 is released (n_2 = n - n_1^ is post-processing)
      and it moves by at most 1. With K >= 3 classes the first K - 1 counts are released;
      a class move changes two of them by 1 each: L1 change 2.
    * class sums ``(S1_1, ..., S1_K)`` concatenated: if c = c', ``S1_c`` moves by
      ``x' - x`` with ``||x' - x||_1 <= p1 + 2 p2 <= 2 L``; if c != c', ``S1_c`` loses x
      and ``S1_c'`` gains x', at most ``||x||_1 + ||x'||_1 <= 2 L``. Hence 2 L, not the
      paper's per-class ``p / n_c`` with private ``n_c`` (E1, E8).
    * ``upper(sum_i x_i x_i^T)`` (pooled over classes, so the label does not enter):
      numeric x numeric entries at most 1 each, ``p1 (p1 + 1) / 2``; numeric x dummy: a
      product leaves and one enters per (numeric, categorical) pair, ``2 p1 p2``; dummy x
      dummy: 2 per diagonal block and 2 per pair of distinct variables,
      ``p2 (p2 + 1)`` (ALGORITHMS.md 2.1, E2: the paper counts the numeric x dummy block once).
    """
    p1, p2 = domain.p1, domain.p2
    L = p1 + p2
    return {
        "counts": 1.0 if n_classes == 2 else 2.0,
        "class_sums": float(2 * L),
        "second_moment": second_moment_l1(domain),
    }


def paper_lda_sensitivity(domain: EncodedDomain) -> float:
    """The paper's single noise numerator (sec. 3.2): ``2 (p1 + p2) + [(p1+p2+1)(p1+p2) + p2(p2+1)] / 2``.

    For numeric-only data this is ``2 p + p (p + 1) / 2``. Kept for the paper-faithful
    variant only; it is too small for mixed data (E2) and is used with private class
    sizes (E1), so no privacy guarantee follows from it.
    """
    p1, p2 = domain.p1, domain.p2
    q = p1 + p2
    return float(2 * q + ((q + 1) * q + p2 * (p2 + 1)) / 2)


# ---- the greedy sampler ------------------------------------------------------------

def greedy_l1_sample(class_means: np.ndarray, second_moment: np.ndarray, class_sizes, domain: EncodedDomain):
    """Synthesise labelled records whose statistics approximately match the given ones.

    Parameters
    ----------
    class_means : (K, p) released class means mu_c
    second_moment : (p, p) released pooled second moment E2 (symmetric)
    class_sizes : length-K integer numbers of records to emit per class
    domain : the encoded domain (numeric columns in [0, 1], one-hot blocks)

    Returns
    -------
    X : (m, p) records in the encoded domain, y : (m,) integer labels

    Notes
    -----
    Greedy minimisation of ``F = sum_c ||sum_{y in c} y - n_c mu_c||_1 +
    ||upper(sum_j y_j y_j^T) - n upper(E2)||_1`` (Jiang et al. sec. 3.2; ALGORITHMS.md 2.2),
    one record per iteration with the targets scaled to the running size
    (``T_c = (t_c + 1) mu_c``, ``T_Q = t E2``). At step t the class with the largest
    deficit ``n_c t / m - t_c`` is chosen. Features are filled categorical blocks first,
    then numeric columns; the terms of F that contain a numeric value z are
    ``|r_c,f - z| + |R_ff - mu_c,f z| + sum_{g != f} |R_fg - w_g z|`` (r, R the residuals
    of the targets, w_g the value already chosen for g in this record, else the class
    mean clipped to [0, 1]). This is ``sum_i |alpha_i| |z - beta_i / alpha_i|``, convex
    and piecewise linear, so its minimum over [0, 1] is the weighted median of the
    breakpoints (weights |alpha_i|) clipped to [0, 1]: the same point as evaluating F at
    every breakpoint and at 0 and 1, as the paper describes, in O(p log p) instead of
    O(p^2). A categorical block tries each of its K one-hot settings with the same terms.
    Ties go to the first candidate, so the sampler is deterministic; it reads only the
    released statistics (post-processing).
    """
    means = np.asarray(class_means, dtype=np.float64)
    E2 = np.asarray(second_moment, dtype=np.float64)
    sizes = np.asarray(class_sizes, dtype=np.int64)
    K, p = means.shape
    m = int(sizes.sum())
    X = np.zeros((m, p))
    y = np.zeros(m, dtype=np.int64)
    if m == 0:
        return X, y
    placeholders = np.clip(means, 0.0, 1.0)
    starts = np.array([a for a, _ in domain.blocks], dtype=np.int64)
    ends = np.array([b for _, b in domain.blocks], dtype=np.int64)
    numeric = np.array(domain.numeric, dtype=np.int64)
    kernel = _compiled_kernel()
    if kernel is None:
        _greedy_numpy(means, placeholders, E2, sizes, starts, ends, numeric, X, y)
    else:
        kernel(means, placeholders, E2, sizes, starts, ends, numeric, X, y)
    return X, y


def _greedy_numpy(means, placeholders, E2, sizes, starts, ends, numeric, X, y):
    """The sampler loop vectorised over features with numpy (used when numba is unavailable).

    Same algorithm and the same floating-point order of operations as :func:`_greedy_kernel`
    (every sum is accumulated term by term in the kernel's order), so both emit the same
    records. The loop over records stays: each record's choices depend on the residuals
    left by the previous ones. Several times slower than the compiled loop.
    """
    K, p = means.shape
    m = X.shape[0]
    r = np.zeros((K, p))
    R = np.zeros((p, p))
    absR = np.empty((p, p))
    done = np.zeros(K, dtype=np.int64)
    blocks = [(int(a0), int(a1)) for a0, a1 in zip(starts, ends)]
    numeric = [int(f) for f in numeric]
    terms = {k: np.empty((p + 1, k)) for k in {a1 - a0 for a0, a1 in blocks}}
    alpha = np.empty(p + 1)
    bp = np.empty(p + 1)
    alpha[p] = 1.0
    for t in range(1, m + 1):
        c = int(np.where(done < sizes, sizes * (t / m) - done, -np.inf).argmax())
        rc = r[c]
        rc += means[c]
        R += E2
        np.abs(R, out=absR)
        w = placeholders[c].copy()
        Rd = np.diagonal(R)
        base = np.abs(rc - 1.0) - np.abs(rc) + np.abs(Rd - 1.0) - np.abs(Rd)
        for a0, a1 in blocks:
            # cost of each one-hot setting; columns with w = 0 add exactly 0. The block's rows
            # of R are laid out as columns, so a sum over axis 0 adds the terms one after
            # another, as the kernel does
            w[a0:a1] = 0.0
            tb = terms[a1 - a0]
            tb[0] = base[a0:a1]
            body = tb[1:]
            np.subtract(R[a0:a1].T, w[:, None], out=body)
            np.abs(body, out=body)
            body -= absR[a0:a1].T
            w[a0 + int(tb.sum(axis=0).argmin())] = 1.0
        for f in numeric:
            # weighted median of the breakpoints; zero weights never decide the median
            av = w.copy()
            av[f] = placeholders[c, f]
            np.abs(av, out=alpha[:p])
            bp[:p] = 0.0
            np.divide(R[f], av, out=bp[:p], where=av != 0.0)
            bp[p] = rc[f]
            order = bp.argsort(kind="stable")
            hit = (alpha[order].cumsum() >= 0.5 * alpha.cumsum()[-1]).argmax()
            w[f] = min(max(bp[order[hit]], 0.0), 1.0)
        X[t - 1] = w
        rc -= w
        R -= np.outer(w, w)
        y[t - 1] = c
        done[c] += 1


def _greedy_kernel(means, placeholders, E2, sizes, starts, ends, numeric, X, y):  # pragma: no cover - compiled
    """The sampler loop in scalar form, compiled by numba (see :func:`_greedy_numpy` for the fallback)."""
    K, p = means.shape
    m = X.shape[0]
    # residuals of the targets: r_c = T_c - A_c (class sums), R = T_Q - A_Q (second moment,
    # symmetric: each unordered pair is one term of F, seen from both of its features)
    r = np.zeros((K, p))
    R = np.zeros((p, p))
    done = np.zeros(K, dtype=np.int64)
    w = np.zeros(p)
    alpha = np.zeros(p + 1)
    bp = np.zeros(p + 1)
    for t in range(1, m + 1):
        c = 0
        best = -np.inf
        for j in range(K):
            if done[j] < sizes[j]:
                d = sizes[j] * (t / m) - done[j]
                if d > best:
                    best = d
                    c = j
        for f in range(p):
            r[c, f] += means[c, f]
            w[f] = placeholders[c, f]
            for g in range(p):
                R[f, g] += E2[f, g]
        # categorical blocks first
        for b in range(starts.shape[0]):
            a0 = starts[b]
            a1 = ends[b]
            for f in range(a0, a1):
                w[f] = 0.0
            kbest = a0
            cbest = np.inf
            for f in range(a0, a1):
                cost = abs(r[c, f] - 1.0) - abs(r[c, f]) + abs(R[f, f] - 1.0) - abs(R[f, f])
                for g in range(p):
                    if w[g] != 0.0:
                        cost += abs(R[f, g] - w[g]) - abs(R[f, g])
                if cost < cbest:
                    cbest = cost
                    kbest = f
            w[kbest] = 1.0
        # numeric columns: weighted median of the breakpoints, clipped to [0, 1]
        for i in range(numeric.shape[0]):
            f = numeric[i]
            q = 0
            total = 0.0
            for g in range(p):
                av = placeholders[c, f] if g == f else w[g]
                if av != 0.0:
                    alpha[q] = abs(av)
                    bp[q] = R[f, g] / av
                    total += abs(av)
                    q += 1
            alpha[q] = 1.0
            bp[q] = r[c, f]
            total += 1.0
            q += 1
            order = np.argsort(bp[:q])
            acc = 0.0
            z = bp[order[q - 1]]
            for j in range(q):
                acc += alpha[order[j]]
                if acc >= 0.5 * total:
                    z = bp[order[j]]
                    break
            w[f] = min(max(z, 0.0), 1.0)
        for f in range(p):
            X[t - 1, f] = w[f]
            r[c, f] -= w[f]
            for g in range(p):
                R[f, g] -= w[f] * w[g]
        y[t - 1] = c
        done[c] += 1


_KERNEL = []


def _njit_cached(numba, func):
    """``numba.njit`` with the compiled code cached on disk, so only the first run after installation
    compiles (measured on the Adult example: 4.3 s, then 2.1 s per release).

    numba keeps the cache beside the source when that folder is writable, else in the user's cache
    folder (``~/.cache/numba``), or in ``$NUMBA_CACHE_DIR`` when set. When none of them can be
    written, numba refuses ``cache=True`` outright; the kernel is then compiled in memory for
    each process rather than failing the release.
    """
    try:
        return numba.njit(cache=True, nogil=True)(func)
    except RuntimeError:  # "cannot cache function ...: no locator available"
        return numba.njit(cache=False, nogil=True)(func)


def _compiled_kernel():
    """The numba-compiled sampler loop (cached on disk), or None to use the numpy loop.

    None when numba is not installed or when its JIT is disabled (``NUMBA_DISABLE_JIT=1``,
    numba's own switch; it would otherwise run the scalar loop as plain Python).
    """
    if not _KERNEL:
        try:
            import numba
        except ImportError:  # numba is a declared dependency, but the package works without it
            _KERNEL.append(None)
        else:
            _KERNEL.append(None if numba.config.DISABLE_JIT else _njit_cached(numba, _greedy_kernel))
    return _KERNEL[0]


# ---- the mechanism -------------------------------------------------------------------

class JiangLDA(SyntheticMechanism):
    """LDA-based private data publishing: noisy class statistics, greedy L1 synthesis.

    Parameters
    ----------
    epsilon : float in (0, inf]
        Total budget; ``inf`` synthesises from the exact statistics (no privacy).
    budget_shares : (float, float, float), default (0.1, 0.3, 0.6)
        Shares of epsilon for the class counts, the class sums and the pooled second
        moment (must sum to 1; our choice, ALGORITHMS.md 2.2 [A]).
    paper_faithful : bool, default False
        Reproduce the paper's version instead (true class sizes; one noise scale
        ``s_L / epsilon`` from the paper's sensitivity). **Not differentially private**
        (erratum E1): the certificate says so.
    domain : EncodedDomain or None
        Public structure of the encoded feature matrix (the label is separate).
    n_classes : int or None
        Number of label classes (public; from the schema). None: ``max(y) + 1`` (at least 2).
    rng : None, int or numpy.random.Generator

    Attributes
    ----------
    class_counts_ : (K,) released class sizes (noisy, integer, sum n) used by the sampler
    class_sums_ : (K, p) noisy class sums
    class_means_ : (K, p) class_sums_ / class_counts_
    second_moment_ : (p, p) noisy pooled second moment divided by n (symmetric)
    sensitivities_, noise_scales_, budget_split_, privacy_cost_, notes_

    Notes
    -----
    Guarantee (corrected variant): epsilon-DP under R1 with the label inside the record:
    datasets of the same public size n, one record (features and label) replaced, so a
    replacement may move a record between classes. n, the attribute ranges, the category
    levels and the label set are public; the class sizes are not.

    Released statistics (ALGORITHMS.md 2.2, corrected; derivations in
    :func:`lda_sensitivities`):

    1. counts: ``n_1 + Lap(1 / eps_n)`` (two classes; K >= 3: the first K - 1 counts with
       ``Lap(2 / eps_n)``), then post-processed to integers >= 1 summing to n;
    2. ``S1_c + Lap(2 L / eps_1)`` for every class c (L = p1 + p2);
    3. ``upper(S2) + Lap(Delta2 / eps_2)`` pooled over classes, mirrored;
       ``E2 = S2~ / n`` with the public n.

    ``mu_c = S1~_c / n_c^`` uses only released values. Composition: ``eps_n + eps_1 +
    eps_2 = epsilon`` (sequential). The sampler (:func:`greedy_l1_sample`) reads only the
    released statistics: post-processing.

    The paper's version (``paper_faithful=True``) divides noisy sums by the true class
    sizes, which are private and enter the effective noise scale (T7: unbounded privacy
    loss), and emits exactly n_c records per class, disclosing them; its mixed-data
    sensitivity is also too small (E2). It has no privacy guarantee.
    """

    _parameter_constraints: ClassVar[dict] = {
        **COMMON,
        "budget_shares": [Instance(tuple, list, np.ndarray, what="a sequence of three shares")],
        "paper_faithful": [BOOL],
        "n_classes": [None, Interval(Integral, 2, None, closed="left")],
    }

    name: ClassVar[str] = "jiang-lda"
    relation: ClassVar[str] = R1_LABEL
    supervised: ClassVar[bool] = True
    summary: ClassVar[str] = ("Jiang et al. 2013 DP-LDA (corrected): noisy class counts/sums and pooled second "
                              "moment, greedy L1 synthesis of labelled records")

    def __init__(self, epsilon=1.0, *, budget_shares=DEFAULT_SHARES, paper_faithful=False, domain=None,
                 n_classes=None, rng=None):
        self.epsilon = epsilon
        self.budget_shares = budget_shares
        self.paper_faithful = paper_faithful
        self.domain = domain
        self.n_classes = n_classes
        self.rng = rng

    # -- helpers -----------------------------------------------------------------
    def _shares(self):
        try:
            shares = tuple(float(s) for s in self.budget_shares)
        except (TypeError, ValueError):
            raise ParameterError(f"budget_shares must be three numbers, got {self.budget_shares!r}") from None
        if len(shares) != 3 or any(not (s > 0) for s in shares) or abs(sum(shares) - 1) > 1e-9:
            raise ParameterError(f"budget_shares must be three positive numbers summing to 1, got {self.budget_shares!r}")
        return shares

    def _classes(self, y):
        if self.n_classes is not None:
            K = self._check_int(self.n_classes, "n_classes", 2)
        else:
            K = max(2, int(np.max(y)) + 1 if y.size else 2)
        return K

    # -- fit -----------------------------------------------------------------------
    def fit(self, X, y=None):
        eps, X, y, dom = self._check_common(X, y)
        y = np.asarray(y)
        if y.ndim != 1 or (y.size and (not np.all(np.equal(np.mod(y, 1), 0)) or y.min() < 0)):
            raise InputDataError("y must be a 1-d array of integer class codes 0..K-1")
        y = y.astype(np.int64)
        K = self._classes(y)
        if y.size and y.max() >= K:
            raise InputDataError(f"y has class code {int(y.max())} but n_classes is {K}")
        n = X.shape[0]
        if n < K:
            raise InputDataError(f"jiang-lda needs at least as many records ({n}) as classes ({K})")
        stats = SufficientStats.from_matrix(X, y, K)
        p = dom.p
        S1 = np.stack([stats.classes[c].s1 for c in range(K)])
        counts = np.array([stats.classes[c].n for c in range(K)], dtype=np.float64)
        self.domain_ = dom
        self.n_ = n
        self.n_classes_ = K
        self.notes_ = []
        if "guarantee" in self.__dict__:
            del self.__dict__["guarantee"]
        # public bound for the secure grid: counts, sums and products of [0, 1] entries are within [0, n]
        self.source_.set_value_bound(float(n))
        if self.paper_faithful:
            s = paper_lda_sensitivity(dom)
            self.noise_scales_ = {}
            S1n = self._laplace("class_sums", S1, s, eps, coords=S1.size)
            U = self._laplace("second_moment", upper(stats.s2), s, eps, coords=p * (p + 1) // 2)
            n_hat = counts.astype(np.int64)
            self.sensitivities_ = {"paper_single_numerator": s}
            self.budget_split_ = {"paper: all statistics, one scale": eps}
            self.guarantee = NOT_DP
            self.notes_ = [
                "paper-faithful DP-LDA (Jiang et al. 2013 sec. 3.2) is NOT differentially private (erratum E1): "
                "the private class sizes divide the noisy sums and the sampler emits exactly n_c records per class",
                "the paper's mixed-data sensitivity is too small (erratum E2)",
            ]
        else:
            e_n, e_1, e_2 = (eps * s for s in self._shares())
            sens = lda_sensitivities(dom, K)
            # 1. class counts (K - 1 released; the last is n minus their sum)
            self.noise_scales_ = {}
            c_noisy = self._laplace("counts", counts[:-1], sens["counts"], e_n, coords=K - 1)
            c_all = np.append(c_noisy, n - c_noisy.sum())
            n_hat = largest_remainder(np.round(np.clip(c_all, 1.0, None)), n, minimum=1)
            # 2. class sums, 3. pooled second moment
            S1n = self._laplace("class_sums", S1, sens["class_sums"], e_1, coords=S1.size)
            U = self._laplace("second_moment", upper(stats.s2), sens["second_moment"], e_2, coords=p * (p + 1) // 2)
            self.sensitivities_ = sens
            self.budget_split_ = {"counts": e_n, "class_sums": e_1, "second_moment": e_2}
        self.class_counts_ = np.asarray(n_hat, dtype=np.int64)
        self.class_sums_ = S1n
        self.class_means_ = S1n / np.maximum(self.class_counts_, 1)[:, None]
        self.second_moment_ = mirror(U, p) / n
        self._set_cost(eps)
        return self

    # -- sampling --------------------------------------------------------------------
    def sample(self, n: int | None = None):
        """Synthesise ``n`` labelled records (default: the released size ``n_``).

        Class sizes: the released counts (scaled to ``n`` by largest remainders).
        Returns ``(X, y)`` with X in the encoded domain and integer labels y.
        """
        if not hasattr(self, "class_means_"):
            raise ParameterError("call fit before sample")
        m = self.n_ if n is None else self._check_int(n, "n", 1)
        sizes = self.class_counts_ if m == self.n_ else largest_remainder(self.class_counts_, m)
        return greedy_l1_sample(self.class_means_, self.second_moment_, sizes, self.domain_)

    def certificate_extra(self) -> dict:
        extra = {"n_classes": int(getattr(self, "n_classes_", 0)), "n_treated_as_public": True,
                 "differentially_private": bool(not self.paper_faithful)}
        if self.paper_faithful:
            extra["warning"] = NOT_DP
        return extra
