"""How many threads the linear algebra of a release uses."""

from __future__ import annotations

import contextlib


@contextlib.contextmanager
def release_threads():
    """BLAS single-threaded for the duration of a release (fit, sample, decode).

    A release's products are of n records by a few hundred encoded columns, taken chunk by chunk.
    Measured on 2 cores (``benchmarks/bench_release_threads.py``: the default on Adult, Diabetes
    130-US, musk2, gas_drift and HAPT), one BLAS thread took 9-40 % less CPU than OpenBLAS's
    default of one thread per core, whose threads spin while they wait; wall time was within 7 %
    either way on an idle machine, and lower with one thread when the other core was busy. Dask
    workers are separate processes and keep their own settings. The previous limits are restored
    on exit.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield
