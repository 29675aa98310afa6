"""Zhou, Ligett, Wasserman 2009: release of a random Gaussian compression ``Phi X`` (seed 001).

The release is ``Xt = Phi X`` with ``Phi`` an ``m x n`` matrix of i.i.d. N(0, 1/n)
entries, after the columns of ``X`` have been scaled to squared norm ``n`` (eq. 4),
and only if ``Xt^T Xt / m`` lies within ``tau`` of a reference covariance in every
entry (eq. 12); otherwise ``Phi`` is redrawn (Procedures IV.1-IV.2). Its guarantee is
**(alpha, delta)-distributional privacy** on a class of databases, NOT differential
privacy (ALGORITHMS.md section 4, errata E5-E7). See :class:`Compression`.

This module also holds the formulas the analyst and the auditor share:
:func:`normalized_covariance` (the covariance ``Sigma_X`` whose Gaussian the rows of
the release follow), :func:`truncation_threshold` (``tau``), :func:`min_rows`
(Lemma IV.4's ``m``), and the PCA helpers :func:`compressed_covariance`,
:func:`top_subspace`, :func:`projector_distance` and :func:`pca_utility_bound`
(Proposition III.4). The privacy calculator is :mod:`privrelease.evaluation.distributional`.
"""

from __future__ import annotations

from numbers import Integral, Real

import math
from pathlib import Path
from typing import ClassVar

import numpy as np

from ...errors import InputDataError, ParameterError
from ...noise import make_source
from ..base import Capabilities, SyntheticMechanism
from ..constraints import ARRAY_OR_FILE, BOOL, DOMAIN, Interval, POSITIVE_INT, SEED
from .bounds import (
    C_PAPER,
    DISTRIBUTIONAL_EXPLANATION,
    min_rows,
    truncation_threshold,
    default_delta_max,
    _sigma_from_moments,
)


# ---- the mechanism ---------------------------------------------------------------------

def _block_generator(entropy, draw: int, block: int) -> np.random.Generator:
    """The generator of the standard normals of rows [block*B, (block+1)*B) of Phi^T in draw ``draw``."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=(draw, block))))


def _as_chunk_source(data):
    """Normalise the input of :meth:`Compression.fit_stream` to (callable giving a fresh iterator, re-readable)."""
    if callable(data):
        return data, True
    if isinstance(data, np.ndarray):
        return (lambda: iter([data])), True
    if isinstance(data, (list, tuple)):
        return (lambda: iter(data)), True
    it = iter(data)
    return (lambda: it), False


class Compression(SyntheticMechanism):
    """Random Gaussian compression ``Phi X`` with truncation (Zhou, Ligett, Wasserman 2009).

    Releases ``m`` rows, each a random Gaussian combination of all ``n`` records, so no
    released row corresponds to an input row. Distributional privacy, NOT differential
    privacy: there is no epsilon (read :data:`DISTRIBUTIONAL_EXPLANATION`).

    Parameters
    ----------
    m : int or None
        Number of released rows, ``1 <= m < n``. None: the smallest value allowed by
        Lemma IV.4, ``ceil(2 (C1 + C2) ln(2 n p))`` (about ``20.4 ln(2np)``). PCA
        utility needs ``m`` of order ``p^2 ln(2np)`` (Theorem V.1).
    reference : None, array (p x p), or path to a ``.npy`` / ``.csv`` file
        The reference covariance ``Sigma_1`` of eq. (12), a public or declared matrix
        on the scale of ``Sigma_X`` (unit diagonal after normalisation). None uses
        ``Sigma_X`` of the private data itself, as the paper's analysis does (it takes
        one database of the class as the reference); that makes the acceptance region
        data-dependent (E6) and the certificate says so.
    delta_max : float or None
        ``Delta_max`` of eq. (5), the declared maximum entrywise distance between the
        covariances of databases in the protected class. None:
        ``sqrt(ln(max(p, 2)) / n)`` (Lemma IV.5's order with constant 1, our choice).
    C : float, default ``sqrt(2)(2.5 + 7.7)`` ~ 14.4
        Constant of eq. (12); ``tau = C sqrt(ln(2np)/m) + Delta_max``. ``inf`` disables
        the truncation (experiments only: then no privacy claim at all).
    center : bool, default False
        Centre the columns at their empirical means before scaling (the paper does not
        centre; centring is data-dependent like the scaling).
    max_draws : int, default 100
        Give up (an error, nothing released) after this many rejected draws.
    draws_per_pass : int, default 1
        Candidate ``Phi`` drawn per read of the data (see Notes, "Streaming").
    block_rows : int or None
        Rows of ``Phi^T`` generated at a time (None: ``max(1, 2**21 // m)``, at most
        16 MiB per block).
    domain : EncodedDomain or None
        Accepted for the release workflow; only its width is used.
    rng : None, int or numpy.random.Generator
        None: ``Phi`` from a generator keyed with OS entropy (real releases);
        int/Generator: reproducible (experiments).

    Attributes
    ----------
    compressed_ : (m, p) the released table ``Xt``
    n_, p_, m_ : sizes
    tau_ : half-width of the acceptance box
    draws_ : number of ``Phi`` drawn (1 + rejected_draws_)
    rejected_draws_ : draws discarded by the truncation test (never released)
    passes_ : reads of the input
    max_deviation_ : ``max |Xt^T Xt / m - Sigma_ref|`` of the released table
    reference_source_ : "private data (Sigma_X)" or "declared"
    output_columns_ : names of the released columns (the encoded columns, normalised)
    notes_ : plain-words caveats copied into the certificate
    privacy_cost_ : None (distributional privacy has no epsilon and no composition rule)

    Notes
    -----
    Guarantee: (alpha, delta)-distributional privacy (Definition II.4, Theorem IV.6) on
    a class S_n of databases whose normalised covariances lie within ``Delta_max`` of
    each other entrywise and satisfy Assumption 1. It is not epsilon-DP for any
    epsilon (E5): two Gaussians with different covariances have an unbounded
    likelihood ratio, and the truncation only bounds it on the acceptance set, for
    pairs inside S_n; alpha is asymptotic (o(1) terms, constants C1, C2). There is no
    sensitivity: nothing is calibrated to a worst-case neighbour. The exact privacy
    loss of a concrete pair of datasets is given by
    :func:`privrelease.evaluation.distributional.audit_pair` (ALGORITHMS.md section 4).

    Data-dependent steps, which the analysis treats as given (E6, E7): (1) the column
    scaling to squared norm ``n`` uses the private column norms, so every released
    entry depends on every record through the scaling; the norms are not released;
    (2) with ``reference=None`` the acceptance region is centred on the private
    ``Sigma_X``; (3) an error after ``max_draws`` rejections discloses that the data
    are far from the reference. ``n`` is treated as public.

    Given X (normalised), before truncation the rows of ``Xt`` are i.i.d.
    ``N(0, Sigma_X)``, ``Sigma_X = X^T X / n``: row i of ``Phi X`` is
    ``sum_r Phi_ir x_r``, a Gaussian vector with covariance ``(1/n) sum_r x_r x_r^T``,
    independent across i. The truncation keeps the first draw with
    ``max_jk |(Xt^T Xt/m)_jk - Sigma_ref(j,k)| <= tau``; rejected draws are discarded
    unseen and a fresh ``Phi`` is drawn, so the output has the density of eq. (14).

    Streaming. ``Phi`` is never stored: its transpose is generated in blocks of
    ``block_rows`` rows, each from its own generator keyed by (entropy, draw, block), as
    the records stream in, and ``Z_b^T X_b`` is accumulated into an ``m x p``
    accumulator (``Z`` standard normal, ``Phi = Z^T / sqrt(n)``). The column scaling and
    the centring commute with ``Phi``: ``Phi (X - 1 mu^T) D = (Z^T X - (Z^T 1) mu^T) D /
    sqrt(n)`` with ``D = diag(sqrt(n) / ||x_j - mu_j||)``, so the column norms, the mean
    and the compression are accumulated in the same pass and the scaling is applied at
    the end: one read of the data per pass, not two (with ``m=None`` the default
    ``m`` depends on ``n``, so a first read counts the records). Each pass computes
    ``draws_per_pass`` candidates (default 1: the expected number of draws is below
    ``1 / (1 - 1/n^2)`` when the reference is the data's own, so a second read is rare
    while each extra candidate costs a full ``m n p`` product); the first accepted
    candidate in draw order is released, later candidates of the same pass are
    discarded unseen, and if none is accepted the data are read again. Memory is
    ``O(m p + p^2)`` for the accumulators plus one ``block_rows x m`` block of ``Phi``
    and one input chunk: it does not grow with ``n``. Because the blocks are keyed by
    absolute row index, the release does not depend on how the input is chunked. Cost
    ``O(m n p)`` per draw (and ``m n`` normal draws).
    """

    _parameter_constraints: ClassVar[dict] = {
        "m": [None, Interval(Integral, 1, None, closed="left")],
        "reference": ARRAY_OR_FILE,
        "delta_max": [None, Interval(Real, 0, None, closed="left")],
        "C": [Interval(Real, 0, None, closed="right")],
        "center": [BOOL],
        "max_draws": POSITIVE_INT,
        "draws_per_pass": POSITIVE_INT,
        "block_rows": [None, Interval(Integral, 1, None, closed="left")],
        "domain": DOMAIN,
        "rng": SEED,
    }

    name: ClassVar[str] = "compression"
    guarantee: ClassVar[str] = "distributional"
    relation: ClassVar[str] = (
        "distributional: any two datasets of n records (differing in any number of rows) inside a class whose "
        "normalised covariances are within Delta_max of each other entrywise; not a DP neighbouring relation"
    )
    output_kind: ClassVar[str] = "compressed"
    columns: ClassVar[str] = ("the encoded columns (numeric scaled to [0, 1], one dummy per category), m rows of "
                              "mixtures: NOT the schema's columns, not decoded")
    # columns: the encoded (normalised) columns, not decoded; m is a parameter (--n-synthetic does not apply)
    capabilities: ClassVar[Capabilities] = Capabilities(passes="stream", fixed_output_rows=True,
                                                        output_space="encoded", estimates_covariance=True)
    summary: ClassVar[str] = (
        "Zhou-Ligett-Wasserman: m random Gaussian mixtures of all records (m x p, no row is a person), "
        "truncated; distributional privacy, NOT differential privacy, no epsilon"
    )

    def __init__(self, *, m=None, reference=None, delta_max=None, C=C_PAPER, center=False, max_draws=100,
                 draws_per_pass=1, block_rows=None, domain=None, rng=None):
        self.m = m
        self.reference = reference
        self.delta_max = delta_max
        self.C = C
        self.center = center
        self.max_draws = max_draws
        self.draws_per_pass = draws_per_pass
        self.block_rows = block_rows
        self.domain = domain
        self.rng = rng

    #: What each ``--param key=value`` means (shown by ``privrelease mechanisms``).
    PARAMETERS: ClassVar[dict] = {
        "m": "number of released rows (each a random Gaussian mixture of all records), 1 <= m < n; default "
             "ceil(20.4 ln(2np)) (Lemma IV.4); PCA utility needs m of order p^2 ln(2np)",
        "reference": "path to a .npy/.csv p x p reference covariance (public or declared); default: the private "
                     "data's own normalised covariance (data-dependent)",
        "delta_max": "declared maximum entrywise distance between covariances of the protected class; default "
                     "sqrt(ln p / n)",
        "C": "constant of the truncation box tau = C sqrt(ln(2np)/m) + delta_max; default 14.4 (the paper's)",
        "center": "true: centre the columns at their (private) means before scaling; default false",
        "max_draws": "give up (nothing released) after this many rejected draws of Phi; default 100",
        "draws_per_pass": "candidate Phi per read of the data; default 1",
    }

    @classmethod
    def info(cls) -> dict:
        d = super().info()
        d["explanation"] = DISTRIBUTIONAL_EXPLANATION
        return d

    @property
    def is_private(self) -> bool:
        # No epsilon, yet a (distributional) privacy claim: the certificate must not say "no noise".
        return math.isfinite(float(self.C))

    # -- fitting ------------------------------------------------------------------------
    def fit(self, X, y=None):
        """Compress an in-memory matrix ``X`` (n x p); see :meth:`fit_stream`."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise InputDataError(f"X must be a 2-d matrix, got shape {X.shape}")
        return self.fit_stream(X)

    def fit_stream(self, chunks, y=None):
        """Compress a streamed input.

        ``chunks`` is a matrix, a list of row blocks, a callable returning a fresh
        iterator of row blocks (each pass calls it once: files are re-read only when a
        draw is rejected), or a one-shot iterator (then a rejection that needs a second
        read raises an error).
        """
        make_iter, rereadable = _as_chunk_source(chunks)
        C = self._check_C()
        max_draws, per_pass = int(self.max_draws), int(self.draws_per_pass)
        self.source_ = make_source(self.rng)
        entropy = [int(v) for v in self.source_.generator.integers(0, 2**63, size=4)]
        m = None if self.m is None else self._check_int(self.m, "m", 1)
        fixed = B = None  # (n, p, m, scale, mu, sigma, ref, tau) once the first pass has run
        draw = passes = 0
        accepted = None
        while accepted is None:
            tau = None if fixed is None else fixed[-1]
            if draw >= max_draws:
                raise InputDataError(
                    f"compression: {draw} draws of Phi were all rejected by the truncation test (tau = {tau:.4g}); "
                    f"the data are far from the reference covariance. Nothing was released.")
            if passes >= 1 and not rereadable:
                raise InputDataError("compression: a draw was rejected (or m=None needs n first) and the input can "
                                     "be read only once; pass a list of chunks or a callable returning a fresh "
                                     "iterator")
            k = 0 if m is None else min(per_pass, max_draws - draw)
            if m is not None and B is None:
                B = self._resolve_block(m)
            stats, accs, zsums, n_seen = self._pass(make_iter(), entropy, draw, k, m, B, fixed is None,
                                                    None if fixed is None else fixed[1])
            passes += 1
            if fixed is None:
                fixed = self._first_pass(stats, m, C)
                m = fixed[2]
            elif n_seen != fixed[0]:
                raise InputDataError(f"compression: the input changed between reads ({fixed[0]} then {n_seen} records)")
            for acc, zsum in zip(accs, zsums):
                draw += 1
                accepted = self._test_draw(acc, zsum, fixed)
                if accepted is not None:
                    break
        self._set_fitted(fixed, accepted, draw, passes)
        return self

    def _first_pass(self, stats, m, C):
        """After the first pass: sizes checked, m resolved, the public scaling, the reference
        covariance and the truncation threshold; returns ``(n, p, m, scale, mu, sigma, ref, tau)``."""
        n, p = stats["n"], stats["p"]
        self._check_sizes(n, p)
        if m is None:
            m = self._resolve_m(n, p)
        elif m >= n:
            raise ParameterError(f"m must be < n = {n} (compression reduces the number of rows), got {m}")
        scale, mu, sigma = self._scaling(stats)
        ref, self.reference_source_ = self._reference(sigma, p)
        dmax = self._resolve_delta_max(n, p)
        tau = truncation_threshold(n, p, m, dmax, C) if math.isfinite(C) else math.inf
        self.tau_, self.delta_max_ = tau, dmax
        return n, p, m, scale, mu, sigma, ref, tau

    def _test_draw(self, acc, zsum, fixed):
        """The truncation test of one draw: ``(compressed rows, deviation)`` if accepted, else None."""
        n, _, m, scale, mu, _, ref, tau = fixed
        Xt = self._finish(acc, zsum, mu, scale, n)
        dev = float(np.max(np.abs(Xt.T @ Xt / m - ref)))
        return (Xt, dev) if dev <= tau else None

    def _set_fitted(self, fixed, accepted, draws: int, passes: int):
        n, p, m, scale, _, sigma, _, _ = fixed
        self.compressed_, self.max_deviation_ = accepted
        self.n_, self.p_, self.m_ = n, p, m
        self.draws_ = draws
        self.rejected_draws_ = draws - 1
        self.passes_ = passes
        self.zero_columns_ = int(np.sum(scale == 0))
        self.sigma_x_ = sigma  # private: for audits and tests only, never released
        self.output_columns_ = [f"x{j}" for j in range(p)]
        self.noise_scales_ = {"phi_entry_std": 1.0 / math.sqrt(n)}
        self.privacy_cost_ = None  # no (epsilon, delta) cost exists: nothing to add to a DP budget ledger
        self.notes_ = self._notes(n, p, m)

    def _pass(self, it, entropy, draw0, k, m, B, first, p):
        """One read of the input: moments (first read) and ``k`` candidate compressions ``Z^T X``.

        Returns ``(moments or None, accumulators, column sums of Z, records seen)``.
        """
        n = 0
        s1 = s2 = None
        accs = zsums = None
        gens = [None] * k  # (block, generator, rows generated) of the open block, per candidate
        for X in it:
            X = self._check_chunk(X, p)
            if p is None:
                p = X.shape[1]
            if first:
                if s1 is None:
                    s1, s2 = np.zeros(p), np.zeros((p, p))
                s1 += X.sum(axis=0)
                s2 += X.T @ X
            if k and accs is None:
                accs = [np.zeros((m, p)) for _ in range(k)]
                zsums = [np.zeros(m) for _ in range(k)]
            a, b = n, n + X.shape[0]
            if k and b > a:
                for blk in range(a // B, (b - 1) // B + 1):
                    r0, r1 = max(a, blk * B) - blk * B, min(b, (blk + 1) * B) - blk * B
                    Xb = X[blk * B + r0 - a: blk * B + r1 - a]
                    for c in range(k):
                        g = gens[c]
                        if g is None or g[0] != blk or g[2] > r0:
                            g = (blk, _block_generator(entropy, draw0 + c, blk), 0)
                        gen, pos = g[1], g[2]
                        if pos < r0:
                            gen.standard_normal((r0 - pos, m))
                        Z = gen.standard_normal((r1 - r0, m))
                        gens[c] = (blk, gen, r1)
                        accs[c] += Z.T @ Xb
                        zsums[c] += Z.sum(axis=0)
            n = b
            X = Xb = None  # release the chunk before the next one is produced (peak = one chunk, not two)
        if n == 0:
            raise InputDataError("compression: the input has no records")
        stats = {"n": n, "p": p, "s1": s1, "s2": s2} if first else None
        return stats, accs or [], zsums or [], n

    def _check_chunk(self, X, p):
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2:
            raise InputDataError(f"every chunk must be a 2-d matrix, got shape {X.shape}")
        if p is not None and X.shape[1] != p:
            raise InputDataError(f"chunk has {X.shape[1]} columns, expected {p}")
        if not np.all(np.isfinite(X)):
            raise InputDataError("X contains NaN or infinite values")
        return X

    def _finish(self, acc, zsum, mu, scale, n):
        raw = acc - np.outer(zsum, mu) if self.center else acc
        return raw * (scale / math.sqrt(n))[None, :]

    def _scaling(self, st):
        n, s1, s2 = st["n"], st["s1"], st["s2"]
        mu = s1 / n if self.center else np.zeros_like(s1)
        sq = np.diag(s2) - n * mu**2
        norms = np.sqrt(np.clip(sq, 0.0, None))
        # a column is treated as zero when its norm is negligible against the data's scale
        tiny = norms <= 1e-12 * max(1.0, float(np.sqrt(np.max(np.diag(s2)))))
        scale = np.where(tiny, 0.0, math.sqrt(n) / np.where(tiny, 1.0, norms))
        sigma = _sigma_from_moments(n, s1, s2, self.center)
        sigma[tiny, :] = 0.0
        sigma[:, tiny] = 0.0
        return scale, mu, sigma

    # -- parameter resolution ---------------------------------------------------------
    def _check_C(self):
        C = self.C
        if isinstance(C, bool) or not isinstance(C, (int, float, np.floating)) or not (C > 0):
            raise ParameterError(f"C must be a number > 0 (inf disables truncation), got {C!r}")
        return float(C)

    def _check_sizes(self, n, p):
        if n <= p:
            raise InputDataError(f"compression needs more records than columns (p < n), got n = {n}, p = {p}")

    def _resolve_m(self, n, p):
        if self.m is None:
            m = min_rows(n, p)
            if m >= n:
                raise InputDataError(f"compression: Lemma IV.4 needs m >= {m} released rows but there are only "
                                     f"n = {n} records (m must be < n)")
            return m
        return self._check_int(self.m, "m", 1, n - 1)

    def _resolve_block(self, m):
        if self.block_rows is None:
            return max(1, 2**21 // m)
        return self._check_int(self.block_rows, "block_rows", 1)

    def _resolve_delta_max(self, n, p):
        if self.delta_max is None:
            return default_delta_max(n, p)
        d = self.delta_max
        if isinstance(d, bool) or not isinstance(d, (int, float, np.floating)) or not (d >= 0) or math.isinf(d):
            raise ParameterError(f"delta_max must be a finite number >= 0, got {d!r}")
        return float(d)

    def _reference(self, sigma, p):
        ref = self.reference
        if ref is None:
            return sigma, "private data (Sigma_X): data-dependent acceptance region (E6)"
        if isinstance(ref, (str, Path)):
            path = Path(ref)
            if not path.exists():
                raise ParameterError(f"reference file {path} does not exist")
            ref = np.load(path) if path.suffix == ".npy" else np.loadtxt(path, delimiter=",", ndmin=2)
        ref = np.asarray(ref, dtype=np.float64)
        if ref.shape != (p, p):
            raise ParameterError(f"reference must be a {p} x {p} matrix, got shape {ref.shape}")
        if not np.all(np.isfinite(ref)) or not np.allclose(ref, ref.T, atol=1e-10):
            raise ParameterError("reference must be a finite symmetric matrix")
        return ref, "declared (public)"

    def _notes(self, n, p, m):
        notes = [
            "distributional privacy, NOT differential privacy: no epsilon; see 'explanation'",
            "columns scaled to squared norm n using the private column norms (data-dependent, E7; norms not released)",
            "released rows are random mixtures of all records: no released row corresponds to an input row",
            "released columns are the encoded columns after normalisation, not decoded to the schema's units",
        ]
        if self.center:
            notes.append("columns centred at their private empirical means before scaling (data-dependent)")
        if self.reference is None:
            notes.append("reference covariance = the private data's own Sigma_X (no reference declared): the "
                         "acceptance region is data-dependent (E6)")
        if self.delta_max is None:
            notes.append(f"Delta_max not declared: used sqrt(ln(max(p,2))/n) = {self.delta_max_:.4g} (Lemma IV.5 "
                         f"order, constant 1: an assumption)")
        if not math.isfinite(float(self.C)):
            notes.append("C = inf: truncation disabled, NO privacy claim (experiments only)")
        if m < min_rows(n, p):
            notes.append(f"m = {m} < 2(C1+C2) ln(2np) = {min_rows(n, p)}: Lemma IV.4's bound on the truncated "
                         f"mass does not apply")
        if self.zero_columns_:
            notes.append(f"{self.zero_columns_} column(s) have zero norm and are released as zeros")
        return notes

    # -- output ---------------------------------------------------------------------------
    def sample(self, n=None):
        """The released table ``(Xt, None)``; ``n`` must be None or ``m`` (the size is fixed at fit)."""
        if not hasattr(self, "compressed_"):
            raise ParameterError("compression: call fit (or fit_stream) before sample")
        if n is not None and n != self.m_:
            raise ParameterError(f"compression releases exactly m = {self.m_} rows (set it with m=...)")
        return self.compressed_.copy(), None

    def certificate_extra(self) -> dict:
        return {
            "explanation": DISTRIBUTIONAL_EXPLANATION,
            "m": self.m_,
            "n": self.n_,
            "p": self.p_,
            "phi": "fresh m x n matrix of i.i.d. N(0, 1/n) entries per draw, generated in blocks, never stored",
            "reference_covariance": self.reference_source_,
            "delta_max": self.delta_max_,
            "C": float(self.C),
            "tau": self.tau_,
            "draws": self.draws_,
            "rejected_draws": self.rejected_draws_,
            "passes_over_input": self.passes_,
            "released_max_deviation_from_reference": self.max_deviation_,
            "lemma_IV4_min_m": min_rows(self.n_, self.p_),
            "n_treated_as_public": True,
            "audit": "privrelease distributional-privacy --n N --p P --m M (Theorem IV.6 bound); "
                     "privrelease.evaluation.distributional.audit_pair(X1, X2, m=...) for a concrete pair",
        }
