"""Counter-based uniforms: a value per (key, stream, record index), the same wherever it is computed.

A mechanism that needs per-record randomness in a map that runs on chunks (locally) or on
partitions (Dask workers) cannot draw it from a generator advanced chunk by chunk: the
draws would depend on how the input is cut. :func:`counter_uniforms_at` instead hashes the
record's global index with a key (drawn once per release from the mechanism's random
source) and a stream number (e.g. the column), so record ``i`` gets the same value on every
engine and in every pass.

The hash is SplitMix64's finaliser (Steele, Lea and Flood, OOPSLA 2014; the seeding
function of numpy's SeedSequence family of generators) applied to
``key + GOLDEN * (index + 1) + MIX * stream`` modulo ``2^64``; the top 53 bits give a
uniform double in ``[0, 1)``. These values are not noise of a privacy guarantee (the
guarantee holds for any value of them: see the mechanisms that use them); they need to be
well spread and independent of the data, which they are: they depend only on the key and
the record's position.
"""

from __future__ import annotations

import numpy as np

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX = np.uint64(0xD1B54A32D192ED03)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _splitmix64(x: np.ndarray) -> np.ndarray:
    x = (x ^ (x >> np.uint64(30))) * _M1
    x = (x ^ (x >> np.uint64(27))) * _M2
    return x ^ (x >> np.uint64(31))


def counter_uniforms_at(key: int, stream: int, index) -> np.ndarray:
    """Uniforms in ``[0, 1)`` of the records at global positions ``index`` for ``(key, stream)``."""
    with np.errstate(over="ignore"):
        idx = np.asarray(index, dtype=np.uint64) + np.uint64(1)
        base = np.uint64(int(key) % 2**64) + _MIX * np.uint64(int(stream) % 2**64)
        x = _splitmix64(base + _GOLDEN * idx)
    return (x >> np.uint64(11)).astype(np.float64) * (1.0 / 2**53)
