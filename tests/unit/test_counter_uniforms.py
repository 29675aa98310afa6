"""Counter-based uniforms: the same value for a record however the input is cut, well spread, keyed."""

import numpy as np
from scipy import stats

from privrelease.noise.counter import counter_uniforms_at


def counter_uniforms(key, stream, start, count):
    return counter_uniforms_at(key, stream, np.arange(start, start + count))


def test_a_record_gets_its_value_whatever_the_chunking():
    whole = counter_uniforms(123, 4, 0, 10_000)
    parts = np.concatenate([counter_uniforms(123, 4, s, 1_000) for s in range(0, 10_000, 1_000)])
    assert np.array_equal(whole, parts)
    picked = np.array([7, 4_096, 9_999, 0])
    assert np.array_equal(counter_uniforms_at(123, 4, picked), whole[picked])


def test_values_are_uniform_and_depend_on_key_and_stream():
    u = counter_uniforms(2**62 + 5, 0, 0, 200_000)
    assert u.min() >= 0.0 and u.max() < 1.0
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 0.01  # neighbouring records are not related
    other_key, other_stream = counter_uniforms(2**62 + 6, 0, 0, 1_000), counter_uniforms(2**62 + 5, 1, 0, 1_000)
    assert abs(np.corrcoef(u[:1_000], other_key)[0, 1]) < 0.1 and not np.array_equal(u[:1_000], other_stream)
