"""How many threads the linear algebra of a release uses."""

from __future__ import annotations

import contextlib


@contextlib.contextmanager
def release_threads():
    """BLAS single-threaded for the duration of a release (fit, sample, decode).

    A release's products are of n records by a few hundred encoded columns, taken chunk by chunk;
    measured on 2 cores (``benchmarks``-style timing of the default on Adult, Diabetes 130-US,
    musk2, gas_drift and HAPT), one BLAS thread was never slower in wall time and took 10-45 % less
    CPU than OpenBLAS's default of one thread per core, whose threads spin while they wait. Dask
    workers are separate processes and keep their own settings. The previous limits are restored
    on exit.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield
