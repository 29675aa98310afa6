"""Noise sources: floating-point-safe by default, seeded numpy for experiments.

Two sources implement one interface (:class:`RandomSource`):

* :class:`SecureSource` (``rng=None``, the default for real releases). Random bits
  come from the operating system (``os.urandom``). Additive noise is **grid-snapped
  discrete noise**: the query value is rounded to a data-independent grid
  ``gamma * Z`` (``gamma`` a power of two far below the noise scale), integer noise
  from a discrete Laplace or discrete Gaussian distribution is added, and the result
  is multiplied back by ``gamma``. Every output lies on the same grid whatever the
  input, which closes the attack of Mironov (CCS 2012) on textbook floating-point
  Laplace noise (whose set of reachable outputs depends on the input). Rounding moves
  each coordinate by at most ``gamma / 2``; the caller's sensitivity is inflated by
  ``coords * gamma`` (L1) or ``sqrt(coords) * gamma`` (L2) before calibration, so the
  guarantee is stated for the rounded query (as OpenDP does).
  ``gamma`` is a function of public quantities only (:func:`grid_step`): the
  sensitivity, the number of coordinates and a public bound on ``|value|`` that the
  mechanism declares with :meth:`RandomSource.value_bound` (derived from the domain
  and the public n, never from the data). ``|value| / gamma`` must stay below ``2^50``
  (exactly representable with room for the noise); a value beyond the declared
  grid's range is refused (:class:`~privrelease.errors.InputDataError`), never met
  by widening the grid from the data, which would reveal ``log2 max |value|``
  through the output lattice and the noise scale.
* :class:`SeededSource` (``rng=int`` or a ``numpy.random.Generator``): numpy's
  continuous Laplace and normal samplers. Fast and reproducible; certificates label
  it "seeded (not for real releases)".

Discrete Laplace sampling (SecureSource). ``P(K = k) = c q^|k|`` with ``q = exp(-lam)``,
``c = (1 - q) / (1 + q)`` and ``lam = gamma / scale``, sampled exactly as sign and
magnitude: ``K = 0`` with probability ``c`` (tested as ``U* < c``, so the tiny
probability ``c`` keeps full relative precision); otherwise ``|K| = 1 + G`` with a
uniform random sign, where ``G`` is geometric, ``P(G >= k) = exp(-lam k)`` (indeed
``P(K = k | K != 0) = (1 - q) q^(|k| - 1) / 2``). Because ``lam`` is tiny, ``G`` is
split exactly (memorylessness) as ``G = L H + R`` with ``L = 2^j`` chosen so that
``lam L`` is about ``2^-8``:

* ``H = floor(E / (lam L))`` with ``E = -ln U*`` and ``U*`` a uniform variate with
  full relative precision (exponent from the count of leading zero bits, 52 random
  mantissa bits, as in Mironov's ``U*``; the mantissa is taken from the bits below
  the leading one of the same 64-bit word when at least 52 remain, which are uniform
  and independent of the count), so ``E`` has relative error ~``2^-52`` over its
  whole range and ``H`` (at most ~ 11,000) has boundary errors ~``1e-12``;
* ``R`` on ``{0, ..., L-1}`` with ``P(R = r) ~ exp(-lam r)`` by rejection: ``r``
  uniform from random bits (exact), accepted with probability ``exp(-lam r)`` (>=
  0.996), computed with relative error ~``2^-52`` (a 53-bit uniform compared with it
  lazily: 16 bits first, the remaining 37 only on a tie, which has probability 2^-16).

The sampled probabilities therefore match the exact discrete Laplace to a relative
error of order ``1e-12``, except that ``U*`` is cut at ``2^-1022`` (mass below
``1e-300``). This is the documented numerical residual of the guarantee; OpenDP's
exact samplers avoid even that but run at ~50 microseconds per sample, too slow for
million-row releases. Discrete Gaussian noise uses the rejection sampler of Canonne,
Kamath and Steinke (NeurIPS 2020, Alg. 3) on top of the discrete Laplace sampler.
The statistical tests in ``tests/statistical`` check both probability mass functions.
"""

from __future__ import annotations

import contextlib
import math
import os
from abc import ABC, abstractmethod

import numpy as np

from ..errors import InputDataError, ParameterError
from .exact_choice import exponential_choice

_GRID_BITS = 20  # gamma <= sensitivity / (coords * 2^20): inflation at most 2^-20 relative
_MAX_GRID_UNITS = 2.0**50  # |value| / gamma must stay exactly representable
_BLOCK = 1 << 18  # noise is drawn in blocks of this many values (bounds temporary memory)
_MASK52 = np.uint64((1 << 52) - 1)
_LOW32 = np.uint64(0xFFFFFFFF)
# leading zeros of a 12-bit value t within 12 bits (12 for t = 0)
_LZ12 = np.array([12] + [11 - (t.bit_length() - 1) for t in range(1, 4096)], dtype=np.int64)


def grid_step(sensitivity: float, spread: float, value_bound: float | None = None) -> float:
    """The secure source's grid ``gamma`` (a power of two) from public quantities only.

    ``gamma = 2^floor(log2(sensitivity / (spread 2^20)))`` keeps the sensitivity
    inflation below ``2^-20`` relative (``spread`` is ``coords`` for L1, ``sqrt(coords)``
    for L2). With a public bound M on ``|value|`` the grid is widened to
    ``2^ceil(log2(M / 2^50))`` when needed, so every value within M is an exact multiple
    count below ``2^50``.

    >>> grid_step(1.0, 1.0) == 2.0**-20, grid_step(1.0, 1.0, value_bound=2.0**40) == 2.0**-10
    (True, True)
    """
    if not (sensitivity > 0) or not math.isfinite(sensitivity):
        raise ParameterError(f"sensitivity must be finite and > 0, got {sensitivity}")
    gamma = 2.0 ** math.floor(math.log2(sensitivity / (spread * 2.0**_GRID_BITS)))
    if value_bound is not None and value_bound / gamma > _MAX_GRID_UNITS:
        gamma = 2.0 ** math.ceil(math.log2(value_bound / _MAX_GRID_UNITS))
    return gamma


def _accept_lazy(high16: np.ndarray, p: np.ndarray, words) -> np.ndarray:
    """``u < p`` for a uniform 53-bit ``u = (high16 * 2^37 + low37) / 2^53``, drawing ``low37`` only on ties.

    ``p`` in [1/2, 1] has a 53-bit mantissa, so ``p 2^53`` is an exact integer and the
    result equals comparing a full 53-bit uniform with ``p``.
    """
    P = (p * 2.0**53).astype(np.uint64)
    P_hi, P_lo = P >> np.uint64(37), P & np.uint64((1 << 37) - 1)
    accept = high16 < P_hi
    tie = np.flatnonzero(high16 == P_hi)
    if tie.size:
        accept[tie] = (words(tie.size) >> np.uint64(27)) < P_lo[tie]
    return accept


def _leading_zeros64(w: np.ndarray) -> np.ndarray:
    """Count of leading zero bits of each uint64 (64 for 0), exact via two 32-bit halves."""
    _, e_hi = np.frexp((w >> np.uint64(32)).astype(np.float64))  # exact: < 2^32; frexp(0) -> 0
    _, e_lo = np.frexp((w & _LOW32).astype(np.float64))
    return np.where(e_hi > 0, 32 - e_hi, 64 - e_lo).astype(np.int64)


class RandomSource(ABC):
    """Where a mechanism's randomness comes from."""

    secure: bool
    description: str

    @property
    @abstractmethod
    def generator(self) -> np.random.Generator:
        """A numpy Generator for post-processing randomness (sampling from released models)."""

    @abstractmethod
    def laplace(self, scale: float, size) -> np.ndarray:
        """Continuous-valued Laplace(0, scale) draws (for audits and post-processing only)."""

    @abstractmethod
    def add_laplace(self, value: np.ndarray, l1_sensitivity: float, epsilon: float, coords: int):
        """Return ``(value + noise, scale)`` for an ``epsilon``-DP Laplace release."""

    @abstractmethod
    def add_gaussian(self, value: np.ndarray, l2_sensitivity: float, noise_multiplier: float, coords: int):
        """Return ``(value + noise, std)`` with ``std = noise_multiplier * l2_sensitivity'``."""

    @abstractmethod
    def uniform(self, size) -> np.ndarray:
        """Uniform [0, 1) draws (53-bit resolution)."""

    def laplace_noise_scale(self, l1_sensitivity: float, epsilon: float, coords: int) -> float:
        """The scale :meth:`add_laplace` will use, computed without drawing (calibration apart from sampling)."""
        return _laplace_scale(l1_sensitivity, epsilon)

    def gaussian_noise_std(self, l2_sensitivity: float, noise_multiplier: float, coords: int) -> float:
        """The standard deviation :meth:`add_gaussian` will use, computed without drawing."""
        return float(noise_multiplier) * float(l2_sensitivity)

    def set_value_bound(self, bound: float | None) -> None:
        """Declare a public bound on ``|value|`` for the following draws (``None`` removes it).

        The bound must follow from public facts only (the schema's domain, the public n,
        a declared radius). The secure source builds its grid from it (:func:`grid_step`);
        the seeded source ignores it.
        """
        if bound is not None:
            bound = float(bound)
            if not (bound > 0) or not math.isfinite(bound):
                raise ParameterError(f"a public value bound must be a finite number > 0, got {bound}")
        self._value_bound = bound

    @contextlib.contextmanager
    def value_bound(self, bound: float):
        """:meth:`set_value_bound` for the draws inside a ``with`` block (the previous bound is restored)."""
        previous = getattr(self, "_value_bound", None)
        self.set_value_bound(bound)
        try:
            yield self
        finally:
            self._value_bound = previous

    def words(self, n: int) -> np.ndarray:
        """``n`` independent uniform 64-bit words (uint64): the raw bits of exact samplers (selections).

        Both sources implement it; a source written only to wrap additive noise need not."""
        raise NotImplementedError(f"{type(self).__name__} draws no random words (no selection from it)")

    def exponential_choice(self, scores, rate: float, base=None) -> np.ndarray:
        """Per row of ``scores`` (rows x candidates), index k drawn with probability exactly proportional
        to ``base_k exp(rate scores_k)`` (the exponential mechanism's distribution; see
        :mod:`privrelease.noise.exact_choice`): every candidate of positive weight is possible."""
        return exponential_choice(scores, rate, base, self.words)


class SeededSource(RandomSource):
    """numpy's samplers on a seeded Generator: reproducible, *not* for real releases."""

    secure = False
    description = "seeded (not for real releases)"

    def __init__(self, rng: np.random.Generator):
        self._rng = rng

    @property
    def generator(self) -> np.random.Generator:
        return self._rng

    def laplace(self, scale, size):
        return self._rng.laplace(0.0, scale, size)

    def add_laplace(self, value, l1_sensitivity, epsilon, coords):
        scale = self.laplace_noise_scale(l1_sensitivity, epsilon, coords)
        value = np.asarray(value, dtype=np.float64)
        if scale == 0:
            return value.copy(), 0.0
        return value + self._rng.laplace(0.0, scale, value.shape), scale

    def add_gaussian(self, value, l2_sensitivity, noise_multiplier, coords):
        value = np.asarray(value, dtype=np.float64)
        std = self.gaussian_noise_std(l2_sensitivity, noise_multiplier, coords)
        if std == 0:
            return value.copy(), 0.0
        return value + self._rng.normal(0.0, std, value.shape), std

    def uniform(self, size):
        return self._rng.random(size)

    def words(self, n):
        return self._rng.integers(0, 2**64 - 1, size=int(n), dtype=np.uint64, endpoint=True)


class SecureSource(RandomSource):
    """OS entropy and grid-snapped discrete noise: the default for real releases."""

    secure = True
    description = "secure (OS entropy, grid-snapped discrete noise)"

    def __init__(self):
        self._gen = None

    @property
    def generator(self) -> np.random.Generator:
        # Post-processing randomness: a PCG64 stream keyed with 256 fresh bits of OS entropy.
        if self._gen is None:
            self._gen = np.random.default_rng(int.from_bytes(os.urandom(32), "little"))
        return self._gen

    # -- raw bits ---------------------------------------------------------
    @staticmethod
    def _words(n: int) -> np.ndarray:
        return np.frombuffer(os.urandom(8 * int(n)), dtype=np.uint64)

    def words(self, n):
        return self._words(n)

    def uniform(self, size):
        n = int(np.prod(size)) if np.ndim(size) else int(size)
        u = (self._words(n) >> np.uint64(11)).astype(np.float64) * 2.0**-53
        return u.reshape(size)

    def _uniform_star(self, n: int) -> np.ndarray:
        """Uniform on (0, 1] with full relative precision (Mironov's U*).

        ``U* = 2^-(Z+1) (1 + M)``: ``Z`` counts leading zero bits of a random bit
        stream (64 per word), ``M`` has 52 uniform bits, taken from the bits below the
        leading one when at least 52 of them remain in that word (else a fresh word).
        The common case (a one among the top 12 bits of the first word, probability
        ``1 - 2^-12``) is handled by a table look-up; the rest by :meth:`_uniform_star_loop`.
        """
        w = self._words(n)
        z = _LZ12[(w >> np.uint64(52)).astype(np.intp)]  # leading zeros among the top 12 bits (12: none set)
        shift = (11 - np.minimum(z, 11)).astype(np.uint64)
        mant = ((w >> shift) & _MASK52).astype(np.float64) * 2.0**-52
        exponent = z.copy()
        rare = np.flatnonzero(z >= 12)
        if rare.size:
            exponent[rare], mant[rare] = self._uniform_star_loop(w[rare])
        # U* in [2^-(z+1), 2^-z): 2^-(z+1) * (1 + mantissa)
        return np.ldexp(1.0 + mant, -(exponent + 1).astype(np.int32))

    def _uniform_star_loop(self, first: np.ndarray):
        """(exponent, mantissa) of U* continuing from already drawn first words (general case)."""
        m = first.size
        exponent = np.zeros(m, dtype=np.int64)
        mant = np.empty(m, dtype=np.float64)
        todo = np.arange(m)
        w = first
        while todo.size:
            z = _leading_zeros64(w)  # 64 when the word is 0
            exponent[todo] += z
            hit = z < 64
            wh, zh, idx = w[hit], z[hit], todo[hit]
            below = 63 - zh  # random bits below the leading one
            enough = below >= 52
            shift = (below[enough] - 52).astype(np.uint64)
            mant[idx[enough]] = ((wh[enough] >> shift) & _MASK52).astype(np.float64) * 2.0**-52
            short = idx[~enough]
            if short.size:
                mant[short] = (self._words(short.size) >> np.uint64(12)).astype(np.float64) * 2.0**-52
            todo = todo[~hit]
            if todo.size and exponent[todo].max() > 1000:  # probability 2^-1000: treat as the smallest value
                mant[todo] = (self._words(todo.size) >> np.uint64(12)).astype(np.float64) * 2.0**-52
                todo = todo[:0]
            w = self._words(todo.size)
        return exponent, mant

    def _geometric(self, lam: float, n: int) -> np.ndarray:
        """``G >= 0`` with ``P(G >= k) = exp(-lam k)``, exactly split as ``L H + R``."""
        j = max(0, int(math.floor(math.log2(2.0**-8 / lam)))) if lam < 2.0**-8 else 0
        L = 2**j
        block = lam * L
        E = -np.log(self._uniform_star(n))
        H = np.floor(E / block)
        if L == 1:
            return H
        R = np.empty(n, dtype=np.float64)
        todo = np.arange(n)
        while todo.size:
            if j <= 48:
                # One word: r from the top j bits; the 53-bit acceptance uniform compared lazily,
                # 16 bits from the same word and, on a tie (probability 2^-16), 37 fresh bits.
                w = self._words(todo.size)
                r = (w >> np.uint64(64 - j)).astype(np.float64)
                accept = _accept_lazy((w >> np.uint64(48 - j)) & np.uint64(0xFFFF), np.exp(-lam * r), self._words)
            else:
                r = (self._words(todo.size) >> np.uint64(64 - j)).astype(np.float64)
                accept = self.uniform(todo.size) < np.exp(-lam * r)
            R[todo[accept]] = r[accept]
            todo = todo[~accept]
        return H * L + R

    def _discrete_laplace(self, lam: float, n: int) -> np.ndarray:
        """Integer ``K`` with ``P(K = k) = c exp(-lam |k|)``: zero w.p. ``c``, else sign * (1 + G)."""
        c = -math.expm1(-lam) / (1.0 + math.exp(-lam))  # P(K = 0) = tanh(lam / 2)
        out = np.zeros(n, dtype=np.float64)
        for start in range(0, n, _BLOCK):  # i.i.d. draws in blocks: bounded temporaries, cache-friendly
            m = min(_BLOCK, n - start)
            nonzero = np.flatnonzero(self._uniform_star(m) >= c)
            if nonzero.size:
                signs = np.unpackbits(np.frombuffer(os.urandom((nonzero.size + 7) // 8), dtype=np.uint8))
                magnitude = 1.0 + self._geometric(lam, nonzero.size)
                out[start + nonzero] = np.where(signs[:nonzero.size] == 1, magnitude, -magnitude)
        return out

    def _discrete_gaussian(self, sigma: float, n: int) -> np.ndarray:
        """Canonne-Kamath-Steinke Alg. 3: integer Y with P(Y=y) ~ exp(-y^2 / (2 sigma^2))."""
        t = math.floor(sigma) + 1
        out = np.empty(n, dtype=np.float64)
        todo = np.arange(n)
        while todo.size:
            y = self._discrete_laplace(1.0 / t, todo.size)
            c = np.exp(-((np.abs(y) - sigma**2 / t) ** 2) / (2 * sigma**2))
            accept = self.uniform(todo.size) < c
            out[todo[accept]] = y[accept]
            todo = todo[~accept]
        return out

    def _public_grid(self, sensitivity: float, spread: float) -> float:
        return grid_step(sensitivity, spread, getattr(self, "_value_bound", None))

    def _grid(self, value: np.ndarray, sensitivity: float, spread: float) -> float:
        """The public grid; a value outside its range is refused, never used to widen it."""
        gamma = self._public_grid(sensitivity, spread)
        if float(np.max(np.abs(value), initial=0.0)) / gamma > _MAX_GRID_UNITS:
            declared = getattr(self, "_value_bound", None) is not None
            raise InputDataError(
                f"a noised statistic exceeds the range of the secure noise grid ({_MAX_GRID_UNITS * gamma:.6g}); "
                + ("the mechanism's public bound on it is wrong" if declared else
                   "the mechanism declared no public bound on it"))
        return gamma

    def laplace_noise_scale(self, l1_sensitivity, epsilon, coords):
        if _laplace_scale(l1_sensitivity, epsilon) == 0:
            return 0.0
        spread = max(int(coords), 1)
        return _laplace_scale(l1_sensitivity + spread * self._public_grid(l1_sensitivity, spread), epsilon)

    def gaussian_noise_std(self, l2_sensitivity, noise_multiplier, coords):
        if noise_multiplier == 0:
            return 0.0
        spread = math.sqrt(max(int(coords), 1))
        return float(noise_multiplier) * (l2_sensitivity + spread * self._public_grid(l2_sensitivity, spread))

    def laplace(self, scale, size):
        n = int(np.prod(size)) if np.ndim(size) else int(size)
        gamma = 2.0 ** math.floor(math.log2(scale) - _GRID_BITS)
        return (self._discrete_laplace(gamma / scale, n) * gamma).reshape(size)

    def add_laplace(self, value, l1_sensitivity, epsilon, coords):
        value = np.asarray(value, dtype=np.float64)
        scale = self.laplace_noise_scale(l1_sensitivity, epsilon, coords)
        if scale == 0:
            return value.copy(), 0.0
        gamma = self._grid(value, l1_sensitivity, max(int(coords), 1))
        k = np.round(value / gamma)
        noise = self._discrete_laplace(gamma / scale, value.size).reshape(value.shape)
        return (k + noise) * gamma, scale

    def add_gaussian(self, value, l2_sensitivity, noise_multiplier, coords):
        value = np.asarray(value, dtype=np.float64)
        std = self.gaussian_noise_std(l2_sensitivity, noise_multiplier, coords)
        if std == 0:
            return value.copy(), 0.0
        gamma = self._grid(value, l2_sensitivity, math.sqrt(max(int(coords), 1)))
        k = np.round(value / gamma)
        noise = self._discrete_gaussian(std / gamma, value.size).reshape(value.shape)
        return (k + noise) * gamma, std


def _laplace_scale(l1_sensitivity: float, epsilon: float) -> float:
    """Laplace mechanism: scale = Delta_1 / epsilon gives epsilon-DP (Dwork et al. 2006)."""
    if not (l1_sensitivity >= 0) or not math.isfinite(l1_sensitivity):
        raise ParameterError(f"sensitivity must be finite and >= 0, got {l1_sensitivity}")
    if epsilon == math.inf or l1_sensitivity == 0:
        return 0.0
    if not (epsilon > 0):
        raise ParameterError(f"epsilon must be > 0, got {epsilon}")
    return float(l1_sensitivity) / float(epsilon)


def make_source(rng=None) -> RandomSource:
    """``None`` -> :class:`SecureSource`; an int seed or a Generator -> :class:`SeededSource`."""
    if rng is None:
        return SecureSource()
    if isinstance(rng, RandomSource):
        return rng
    if isinstance(rng, np.random.Generator):
        return SeededSource(rng)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return SeededSource(np.random.default_rng(int(rng)))
    raise ParameterError(
        f"rng must be None (secure noise for real releases), an int seed or a numpy Generator; got {type(rng).__name__}"
    )
