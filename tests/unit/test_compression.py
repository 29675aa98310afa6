"""Unit tests of the Zhou-Ligett-Wasserman compression mechanism (no epsilon; distributional privacy)."""

import math
import tracemalloc

import numpy as np
import pytest

from privrelease.errors import InputDataError, ParameterError
from privrelease.mechanisms import get_mechanism
from privrelease.mechanisms.compression.bounds import C_PAPER, compressed_covariance, min_rows, normalized_covariance, pca_utility_bound, projector_distance, truncation_threshold
from privrelease.mechanisms.compression.mechanism import Compression


def _data(n=2000, p=5, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.normal(size=(p, p))
    return rng.normal(size=(n, p)) @ A + 0.3


def test_registered_without_epsilon():
    cls = get_mechanism("compression")
    assert cls is Compression
    assert cls.guarantee == "distributional"
    assert "NOT differential privacy" in cls.info()["explanation"]
    with pytest.raises(TypeError):
        Compression(epsilon=1.0)


def test_shape_normalisation_and_no_row_correspondence():
    X = _data()
    mech = Compression(m=300, rng=0).fit(X)
    Xt, y = mech.sample()
    assert Xt.shape == (300, X.shape[1]) and y is None
    # columns normalised to squared norm n: Sigma_X has a unit diagonal
    assert np.allclose(np.diag(mech.sigma_x_), 1.0)
    assert np.allclose(mech.sigma_x_, normalized_covariance(X))
    # the compressed covariance estimates Sigma_X
    assert np.max(np.abs(compressed_covariance(Xt) - mech.sigma_x_)) < 0.4
    assert mech.draws_ == 1 and mech.rejected_draws_ == 0 and mech.passes_ == 1
    with pytest.raises(ParameterError):
        mech.sample(10)


def test_same_seed_same_output_and_chunking_invariance():
    X = _data(n=3001)
    a = Compression(m=100, rng=5).fit(X).compressed_
    b = Compression(m=100, rng=5).fit_stream([X[:17], X[17:1500], X[1500:2999], X[2999:]]).compressed_
    c = Compression(m=100, rng=6).fit(X).compressed_
    assert np.allclose(a, b, atol=1e-12)
    assert not np.allclose(a, c)


def test_streaming_matches_explicit_phi():
    """Phi X with the explicit Phi (rebuilt from the same block generators) equals the streamed product."""
    from privrelease.mechanisms.compression.mechanism import _block_generator

    X = _data(n=500, p=3)
    mech = Compression(m=40, block_rows=64, rng=3).fit(X)
    entropy = [int(v) for v in np.random.default_rng(3).integers(0, 2**63, size=4)]
    Zt = np.vstack([_block_generator(entropy, 0, k).standard_normal((min(64, 500 - 64 * k), 40))
                    for k in range(math.ceil(500 / 64))])
    Phi = Zt.T / math.sqrt(500)
    Y = X * (math.sqrt(500) / np.linalg.norm(X, axis=0))
    assert np.allclose(Phi @ Y, mech.compressed_, atol=1e-10)


def test_center_option():
    X = _data()
    mech = Compression(m=200, center=True, rng=1).fit(X)
    Xc = X - X.mean(axis=0)
    assert np.allclose(mech.sigma_x_, normalized_covariance(Xc))
    assert np.allclose(mech.sigma_x_, normalized_covariance(X, center=True))


def test_default_m_is_lemma_iv4():
    X = _data(n=5000, p=4)
    mech = Compression(rng=0).fit(X)
    assert mech.m_ == min_rows(5000, 4) == math.ceil(2 * (2.5 + 7.7) * math.log(2 * 5000 * 4))
    assert mech.passes_ == 2  # n must be counted before m is known


def test_tau_formula():
    assert math.isclose(truncation_threshold(100, 5, 50, 0.1), C_PAPER * math.sqrt(math.log(1000) / 50) + 0.1)
    assert math.isclose(C_PAPER, math.sqrt(2) * 10.2)


def test_rejected_draws_are_redrawn_and_counted():
    X = _data(n=400, p=3, seed=2)
    sigma = normalized_covariance(X)
    ref = sigma.copy()
    ref[0, 1] = ref[1, 0] = sigma[0, 1] + 0.12
    m = 60
    # a narrow box around a shifted reference: many draws are rejected
    C = 0.13 / math.sqrt(math.log(2 * 400 * 3) / m)
    draws = []
    for seed in range(40):
        mech = Compression(m=m, reference=ref, C=C, delta_max=0.0, rng=seed).fit(X)
        S = compressed_covariance(mech.compressed_)
        assert np.max(np.abs(S - ref)) <= mech.tau_ + 1e-12
        assert mech.rejected_draws_ == mech.draws_ - 1
        assert mech.passes_ == mech.draws_  # one candidate per read by default
        draws.append(mech.draws_)
    assert max(draws) > 1  # rejections happened and were redrawn
    assert mech.reference_source_.startswith("declared")


def test_draws_per_pass_releases_the_same_draw():
    """Several candidates per read give the same release as one per read (first accepted in draw order)."""
    X = _data(n=400, p=3, seed=2)
    ref = normalized_covariance(X)
    ref[0, 1] = ref[1, 0] = ref[0, 1] + 0.12
    C = 0.13 / math.sqrt(math.log(2 * 400 * 3) / 60)
    for seed in range(10):
        a = Compression(m=60, reference=ref, C=C, delta_max=0.0, rng=seed).fit(X)
        b = Compression(m=60, reference=ref, C=C, delta_max=0.0, draws_per_pass=4, rng=seed).fit(X)
        assert a.draws_ == b.draws_
        assert np.allclose(a.compressed_, b.compressed_)
        assert b.passes_ == math.ceil(a.draws_ / 4)


def test_gives_up_after_max_draws():
    X = _data(n=400, p=3)
    far = np.eye(3) * 20  # tau is about 5.6 here
    with pytest.raises(InputDataError, match="rejected"):
        Compression(m=50, reference=far, max_draws=3, rng=0).fit(X)


def test_one_shot_iterator_cannot_redraw():
    X = _data(n=400, p=3)
    with pytest.raises(InputDataError, match="read only once"):
        Compression(m=None, rng=0).fit_stream(iter([X[:200], X[200:]]))


def test_parameter_errors():
    X = _data(n=100, p=3)
    with pytest.raises(ParameterError):
        Compression(m=100, rng=0).fit(X)  # m must be < n
    with pytest.raises(ParameterError):
        Compression(m=10, C=-1, rng=0).fit(X)
    with pytest.raises(ParameterError):
        Compression(m=10, reference=np.eye(2), rng=0).fit(X)
    with pytest.raises(InputDataError):
        Compression(m=2, rng=0).fit(X[:3])  # n <= p


def test_reference_from_file(tmp_path):
    X = _data(n=400, p=3)
    path = tmp_path / "ref.npy"
    np.save(path, normalized_covariance(X))
    mech = Compression(m=50, reference=str(path), rng=0).fit(X)
    assert mech.reference_source_.startswith("declared")


def test_memory_does_not_grow_with_n():
    p, m = 10, 100

    def peak(n):
        def chunks():
            rng = np.random.default_rng(0)
            for start in range(0, n, 5000):
                yield rng.random((min(5000, n - start), p))

        tracemalloc.start()
        Compression(m=m, block_rows=500, rng=0).fit_stream(chunks)
        _, pk = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return pk

    small, large = peak(10_000), peak(100_000)
    assert large < 1.3 * small, (small, large)


def test_pca_utility_bound_helpers():
    A = np.diag([5.0, 3.0, 1.0, 0.5])
    B = A + 0.01 * np.ones((4, 4))
    r = pca_utility_bound(A, B, 2)
    assert r["applies"] and r["distance"] <= r["bound"]
    assert math.isclose(r["delta_D"], 1.0)
    assert projector_distance(A, A, 1) == 0.0
