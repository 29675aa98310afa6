"""Statistical tests of the noise samplers (privrelease.noise.samplers).

Goodness of fit of the Laplace and Gaussian noise against the stated scale (KS),
of the secure discrete Laplace and discrete Gaussian pmfs against their exact pmfs
(chi-square), the grid invariance of the secure outputs (the property that closes
the floating-point attack), and symmetry of the noise helpers.

SecureSource draws from OS entropy and cannot be seeded, so its tests use small
p-value thresholds (1e-4); SeededSource tests are deterministic.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from privrelease.noise import SecureSource, SeededSource, make_source
from privrelease.noise.samplers import _GRID_BITS

P_MIN = 1e-4  # rejection threshold of every distribution test
N = 40_000


@pytest.fixture(autouse=True)
def fixed_entropy(monkeypatch):
    """The secure source's OS entropy replaced by a seeded stream for each test: the tests check its
    samplers' distributions, and with fresh entropy each run every test at P_MIN would fail once in
    1 / P_MIN runs (one did, at p = 3.4e-5). The samplers' code is the same; only its bits are fixed."""
    import privrelease.noise.samplers as samplers

    gen = np.random.default_rng(20261127)
    monkeypatch.setattr(samplers.os, "urandom", lambda n: gen.bytes(int(n)))


def sources():
    return [pytest.param(lambda: SeededSource(np.random.default_rng(12)), id="seeded"),
            pytest.param(SecureSource, id="secure")]


def secure_grid(sensitivity, spread):
    """The grid SecureSource uses for small values: 2^floor(log2(sensitivity / (spread 2^20)))."""
    return 2.0 ** math.floor(math.log2(sensitivity / (spread * 2.0**_GRID_BITS)))


# ---- continuous fits at the stated scale -----------------------------------------

@pytest.mark.parametrize("make", sources())
@pytest.mark.parametrize("sens, eps, coords", [(1.0, 1.0, 1), (3.0, 0.5, 3), (134.0, 0.1, 10)])
def test_add_laplace_matches_stated_scale(make, sens, eps, coords):
    src = make()
    value = np.full(N, 0.25)
    noisy, scale = src.add_laplace(value, sens, eps, coords)
    assert scale >= sens / eps  # never less noise than the caller's calibration
    assert scale <= (sens / eps) * (1 + 2.0**-19)  # the grid inflation is tiny
    noise = noisy - value
    assert stats.kstest(noise, "laplace", args=(0.0, scale)).pvalue > P_MIN
    # power: a 20% smaller scale must be rejected
    assert stats.kstest(noise, "laplace", args=(0.0, 0.8 * scale)).pvalue < 1e-6


@pytest.mark.parametrize("make", sources())
@pytest.mark.parametrize("sens, mult, coords", [(1.0, 1.0, 1), (2.5, 3.0, 4)])
def test_add_gaussian_matches_stated_std(make, sens, mult, coords):
    src = make()
    value = np.full(N, -0.7)
    noisy, std = src.add_gaussian(value, sens, mult, coords)
    assert std >= mult * sens and std <= mult * sens * (1 + 2.0**-19)
    noise = noisy - value
    assert stats.kstest(noise, "norm", args=(0.0, std)).pvalue > P_MIN
    assert stats.kstest(noise, "norm", args=(0.0, 0.8 * std)).pvalue < 1e-6


def test_zero_noise_cases_return_copies():
    for src in (SecureSource(), SeededSource(np.random.default_rng(0))):
        v = np.arange(3.0)
        out, scale = src.add_laplace(v, 1.0, math.inf, 1)
        assert scale == 0.0 and np.array_equal(out, v) and out is not v
        out, std = src.add_gaussian(v, 1.0, 0.0, 1)
        assert std == 0.0 and np.array_equal(out, v)


# ---- exact pmfs of the secure discrete samplers -------------------------------------

def discrete_laplace_cdf(k, lam):
    """P(K <= k) for P(K = k) proportional to exp(-lam |k|)."""
    q = math.exp(-lam)
    k = np.asarray(k, dtype=np.float64)
    return np.where(k < 0, q ** np.abs(k) / (1 + q), 1 - q ** (k + 1) / (1 + q))


def chi_square_binned(sample, edges, cdf):
    """Chi-square p-value of integer ``sample`` over bins (edges[i], edges[i+1]] plus both tails."""
    cuts = np.concatenate([[-np.inf], edges, [np.inf]])
    probs = np.diff(np.concatenate([[0.0], cdf(edges), [1.0]]))
    counts = np.histogram(sample, bins=cuts + 0.5)[0]  # integer k falls in (e_i, e_{i+1}]
    expected = probs * sample.size
    assert expected.min() >= 5, "bins too fine for a chi-square test"
    return stats.chisquare(counts, expected).pvalue


@pytest.mark.parametrize("lam", [0.3, 1e-4])
def test_discrete_laplace_pmf(lam):
    """lam = 0.3 uses the direct geometric path; lam = 1e-4 the L H + R split (L = 32)."""
    k = SecureSource()._discrete_laplace(lam, 200_000)
    assert np.array_equal(k, np.round(k))
    if lam > 0.1:
        edges = np.arange(-15, 15) + 0.0  # single integers in the body, pooled tails
    else:
        edges = np.round(stats.laplace.ppf(np.linspace(0.01, 0.99, 60), scale=1 / lam))
    cdf = lambda e: discrete_laplace_cdf(e, lam)  # noqa: E731
    assert chi_square_binned(k, edges, cdf) > P_MIN
    # power: the pmf with a 5% different lam is rejected
    wrong = lambda e: discrete_laplace_cdf(e, lam * 1.05)  # noqa: E731
    assert chi_square_binned(k, edges, wrong) < 1e-6


def test_geometric_residues_of_the_split_sampler():
    """G mod L must follow P(r) ~ exp(-lam r) (the rejection step); L = 32 for lam = 1e-4."""
    lam, L = 1e-4, 32
    g = SecureSource()._geometric(lam, 200_000)
    assert g.min() >= 0
    r = (g % L).astype(int)
    w = np.exp(-lam * np.arange(L))
    counts = np.bincount(r, minlength=L)
    assert stats.chisquare(counts, w / w.sum() * g.size).pvalue > P_MIN
    # tail: P(G >= k) = exp(-lam k) at a few k
    for k in (1000, 10_000, 30_000):
        p = math.exp(-lam * k)
        assert stats.binomtest(int((g >= k).sum()), g.size, p).pvalue > P_MIN


def test_discrete_gaussian_pmf():
    sigma = 3.0
    y = SecureSource()._discrete_gaussian(sigma, 100_000)
    ks = np.arange(-40, 41)
    pmf = np.exp(-ks.astype(float) ** 2 / (2 * sigma**2))
    pmf /= pmf.sum()
    cdf = lambda e: np.interp(e, ks, np.cumsum(pmf))  # noqa: E731
    edges = np.arange(-8, 8) + 0.0
    assert chi_square_binned(y, edges, cdf) > P_MIN


# ---- grid invariance (floating-point safety) ------------------------------------------

@pytest.mark.parametrize("value", [0.0, 0.123456789, 0.987654321, 1 / 3, 12345.678])
def test_secure_outputs_lie_on_a_data_independent_grid(value):
    src = SecureSource()
    sens, eps, coords = 3.0, 0.7, 3
    gamma = secure_grid(sens, coords)
    out, scale = src.add_laplace(np.full(5000, value), sens, eps, coords)
    units = out / gamma
    assert np.array_equal(units, np.round(units)), "Laplace outputs off the grid"
    assert scale == pytest.approx((sens + coords * gamma) / eps, rel=0, abs=1e-15)
    out, std = src.add_gaussian(np.full(5000, value), sens, 2.0, coords)
    g2 = secure_grid(sens, math.sqrt(coords))
    units = out / g2
    assert np.array_equal(units, np.round(units)), "Gaussian outputs off the grid"


def test_seeded_outputs_are_not_grid_snapped():
    """Contrast: numpy's continuous Laplace reaches off-grid values (why it is not for real releases)."""
    out, _ = SeededSource(np.random.default_rng(0)).add_laplace(np.full(1000, 0.1), 3.0, 0.7, 3)
    units = out / secure_grid(3.0, 3)
    assert not np.array_equal(units, np.round(units))


# ---- symmetry and helpers ------------------------------------------------------------------

@pytest.mark.parametrize("make", sources())
def test_noise_is_symmetric_about_zero(make):
    src = make()
    noise = src.laplace(2.0, N)
    assert stats.kstest(noise, "laplace", args=(0.0, 2.0)).pvalue > P_MIN
    assert stats.ks_2samp(noise, -noise).pvalue > P_MIN
    nonzero = noise[noise != 0]
    assert stats.binomtest(int((nonzero > 0).sum()), nonzero.size, 0.5).pvalue > P_MIN
    noisy, _ = src.add_gaussian(np.zeros(N), 1.0, 1.5, 1)
    assert stats.ks_2samp(noisy, -noisy).pvalue > P_MIN


@pytest.mark.parametrize("make", sources())
def test_uniform_and_selection_helpers(make):
    src = make()
    u = src.uniform(N)
    assert u.shape == (N,) and u.min() >= 0 and u.max() < 1
    assert stats.kstest(u, "uniform").pvalue > P_MIN
    assert src.uniform((10, 3)).shape == (10, 3)
    w = src.words(N)
    assert w.dtype == np.uint64 and stats.kstest((w >> np.uint64(11)) * 2.0**-53, "uniform").pvalue > P_MIN
    k = src.exponential_choice(np.tile([0.0, -1.0, -3.0], (N, 1)), 0.5)
    p = np.exp([0.0, -0.5, -1.5])
    assert stats.chisquare(np.bincount(k, minlength=3), p / p.sum() * N).pvalue > P_MIN


def test_uniform_star_has_full_relative_precision():
    u = SecureSource()._uniform_star(N)
    assert u.min() > 0 and u.max() <= 1
    assert stats.kstest(u, "uniform").pvalue > P_MIN
    # -ln U* is Exp(1) including the far tail resolved by the leading-zero count
    assert stats.kstest(-np.log(u), "expon").pvalue > P_MIN


def test_make_source_dispatch():
    assert make_source(None).secure is True
    assert make_source(3).secure is False
    assert isinstance(make_source(np.random.default_rng(1)), SeededSource)


def test_leading_zero_count_is_exact():
    from privrelease.noise.samplers import _leading_zeros64

    vals = [0, 1, 2, 3, 2**31, 2**32 - 1, 2**32, 2**52, 2**63, 2**64 - 1]
    rnd = SeededSource(np.random.default_rng(3)).generator.integers(0, 2**63, 1000, dtype=np.uint64)
    w = np.concatenate([np.array(vals, dtype=np.uint64), rnd >> (rnd % np.uint64(64))])
    expected = [64 - int(x).bit_length() for x in w.tolist()]
    assert _leading_zeros64(w).tolist() == expected


class _SmallFirstWords(SecureSource):
    """First word of every U* has its top 12 bits zero: forces the rare (looping) path."""

    def __init__(self):
        super().__init__()
        self.calls = 0

    def _words(self, n):
        self.calls += 1
        w = super()._words(n)
        return w >> np.uint64(12) if self.calls == 1 else w


def test_uniform_star_rare_path_is_conditionally_uniform():
    """Given a first word with no one among its top 12 bits, U* is uniform on (0, 2^-12]."""
    u = _SmallFirstWords()._uniform_star(N)
    assert u.max() <= 2.0**-12
    assert stats.kstest(u * 2.0**12, "uniform").pvalue > P_MIN
    assert stats.kstest(-np.log(u * 2.0**12), "expon").pvalue > P_MIN


def test_lazy_acceptance_equals_full_53_bit_comparison():
    from privrelease.noise.samplers import _accept_lazy

    rng = np.random.default_rng(5)
    n = 20_000
    u53 = rng.integers(0, 2**53, n, dtype=np.uint64)
    p = rng.uniform(0.5, 1.0, n)
    p[:10] = 1.0
    # force ties on the top 16 bits for half of the draws
    P = (p * 2.0**53).astype(np.uint64)
    half = np.arange(n) % 2 == 0
    u53[half] = (P[half] & ~np.uint64((1 << 37) - 1)) | (u53[half] & np.uint64((1 << 37) - 1))
    high16, low37 = u53 >> np.uint64(37), u53 & np.uint64((1 << 37) - 1)
    feed = {}

    def words(m):  # supplies the low 37 bits of exactly the tied draws, in order, in the top bits
        tied = np.flatnonzero(high16 == (P >> np.uint64(37)))
        assert m == tied.size
        feed["used"] = m
        return low37[tied] << np.uint64(27)

    got = _accept_lazy(high16.copy(), p, words)
    want = u53.astype(np.float64) * 2.0**-53 < p  # exact: u53 < 2^53 is representable
    assert feed["used"] >= n // 2
    assert np.array_equal(got, want)
